// Re-declares a graph's buffers for another problem size, keeping every buffer's role,
// broadcast axes and axis order (its major) unless a major is overridden: how
// `fusedgemm run --m/--n/--k/--batch` and the shape-and-major test matrices reuse one graph.
#pragma once

#include <cstdint>
#include <optional>

#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"

namespace fusedgemm::reference {

struct ProblemOverride {
  std::optional<std::int64_t> batch, m, n, k;
  // Every A (B) operand made K-major (true) or M-major (N-major) (false).
  std::optional<bool> a_k_major, b_k_major;
  bool any() const { return batch || m || n || k || a_k_major || b_k_major; }
};

// @pre graph validated and analyzable without decline.
Status resize_graph(Graph& graph, const ProblemOverride& size);

}  // namespace fusedgemm::reference
