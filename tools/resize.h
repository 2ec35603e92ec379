// `fusedgemm run --m/--n/--k/--batch`: re-declares a graph's buffers for another problem
// size, keeping every buffer's role, broadcast axes and axis order (its major).
#pragma once

#include <cstdint>
#include <optional>

#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"

namespace fusedgemm::tool {

struct ProblemOverride {
  std::optional<std::int64_t> batch, m, n, k;
  bool any() const { return batch || m || n || k; }
};

// @pre graph validated and analyzable without decline.
Status resize_graph(Graph& graph, const ProblemOverride& size);

}  // namespace fusedgemm::tool
