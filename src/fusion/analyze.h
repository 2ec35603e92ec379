// analyze(): a valid graph becomes a fusion program, or a decline when the program cannot
// express the graph's structure (a chained GEMM, an op before the mainloop, ...).
#pragma once

#include <optional>

#include "fusedgemm/decline.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"

namespace fusedgemm::fusion {

struct Analysis {
  FusionProgram program;           // meaningful only without a decline
  std::optional<Decline> decline;  // the structure the fused kernel cannot express
};

// Fails with kInvalidArgument when the graph has not passed validate().
Result<Analysis> analyze(const Graph& graph);

}  // namespace fusedgemm::fusion
