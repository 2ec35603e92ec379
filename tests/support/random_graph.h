// Seeded random VALID graphs for differential sweeps: 1 to 3 matmuls of one ragged problem
// shape, an epilogue DAG of pointwise ops over the accumulators and aux inputs of every
// broadcast mode, dense outputs and reduction taps. About one graph in five (with
// allow_declines) breaks exactly one structure or build rule of the rule table
// (src/recipe/rules.cpp) and names it in expected_decline; every other graph is one the
// fused engine must build, run on the host device and match against the fp64 reference.
//
//   auto rg = make_random_graph(/*seed=*/17);   // validated
//   SCOPED_TRACE(fmt::format("seed {}: {}", rg->seed, rg->summary));
//   auto plan = fusedgemm::build(rg->graph, BuildOptions(make_host_device()));
//
// Every draw is a raw std::mt19937_64 word (no std distributions), so a seed gives the
// same graph on every standard library. Values stay O(1): exp reads a bounded value, log,
// sqrt, rsqrt, reciprocal, div and pow read positive ones (exp(tanh(x)) and the like),
// mul taps reduce factors near 1, and comparisons read exact values (aux inputs and their
// neg, abs, max, min, relu): fp32 and fp64 take the same branch everywhere. A min (max) tap
// of computed values whose range (as the generator bounds it) is nearly >= 0 (<= 0) becomes
// an amax: such a min sits next to 0, where fp32's absolute error is a large relative one.
#pragma once

#include <cstdint>
#include <string>

#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"

namespace fusedgemm::test {

struct RandomGraphOptions {
  std::int64_t max_dim = 96;   // M, N and K lie in [1, max_dim] (16-byte aligned ones lower)
  std::int64_t max_batch = 3;  // the problem's batch lies in [1, max_batch]
  int max_gemms = 3;           // 1..max_gemms matmuls (a gemm_count decline makes 5)
  int max_pointwise = 10;      // random epilogue ops (guards such as exp(tanh(x)) add more)
  bool allow_declines = true;  // about one graph in five breaks one structure or build rule
  // Draw few enough aux inputs that operands, aux, outputs and taps fit the kernel's
  // parameter limit (kernels::kMaxKernelBuffers); false lets a sweep reach the gate's
  // kernel_buffer_count decline.
  bool fit_kernel_buffers = true;
};

struct RandomGraph {
  Graph graph;  // validated
  std::uint64_t seed = 0;
  // One line: problem, operands, matmuls, epilogue nodes, outputs, taps, the broken rule.
  std::string summary;
  // The id of the rule the fused engine must decline the graph by; empty when it must fuse.
  std::string expected_decline;
};

// A validate failure comes back as its Status (a generator bug).
Result<RandomGraph> make_random_graph(std::uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace fusedgemm::test
