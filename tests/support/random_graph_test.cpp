// The random-graph sweep: for seeds 0..299 the generated graph validates, one seed gives one
// graph, the seeds together cover every pointwise mode, broadcast mode and tap mode and both
// fused and declined graphs, and each graph (seeds 0..299, and 0..9999 in a long test) either
// builds and matches the fp64 reference on the host device on both engines (leaving padding
// and guards untouched) or is declined by the rule the generator broke
// (support/random_graph_sweep.h). A failure prints the seed and the graph's summary.
#include "support/random_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fusedgemm/device.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "support/random_graph_sweep.h"

namespace fusedgemm::test {
namespace {

constexpr std::uint64_t kSeeds = 300;

std::string seed_line(const RandomGraph& rg) {
  return fmt::format("seed {}: {}", rg.seed, rg.summary);
}

TEST(RandomGraph, ValidatesAndIsDeterministic) {
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    auto first = make_random_graph(seed);
    ASSERT_TRUE(first) << "seed " << seed << ": " << first.status().message();
    SCOPED_TRACE(seed_line(first.value()));
    EXPECT_TRUE(first->graph.is_validated());
    EXPECT_EQ(first->seed, seed);
    EXPECT_TRUE(first->expected_decline.empty() || is_rule(first->expected_decline));
    auto second = make_random_graph(seed);
    ASSERT_TRUE(second) << second.status().message();
    EXPECT_EQ(first->summary, second->summary);
    EXPECT_EQ(graph_to_json(first->graph), graph_to_json(second->graph));
  }
}

TEST(RandomGraph, WithoutDeclinesEveryGraphFuses) {
  RandomGraphOptions options;
  options.allow_declines = false;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    auto rg = make_random_graph(seed, options);
    ASSERT_TRUE(rg) << "seed " << seed << ": " << rg.status().message();
    EXPECT_EQ(rg->expected_decline, "") << seed_line(rg.value());
  }
}

// What the sweep exercises, counted over the graphs themselves (not the generator's notes).
struct Coverage {
  std::map<PointwiseMode, int> pointwise;
  std::map<std::string, int> broadcast;  // "row/b", "column/1", ...
  std::map<ReductionMode, int> tap_modes;
  std::map<std::string, int> tap_shapes;  // "[b,M,1]", ...
  std::map<std::string, int> declines;
  std::map<std::size_t, int> gemms;
  int fusable = 0;
  int rounding_points = 0;
  int shared_operand = 0;

  void add(const RandomGraph& rg) {
    const Graph& g = rg.graph;
    std::set<const TensorAttributes*> produced;
    std::map<const TensorAttributes*, int> consumers;
    std::size_t matmuls = 0;
    for (const Node& node : g.nodes()) {
      for (const auto& t : node.outputs) produced.insert(t.get());
      for (const auto& t : node.inputs) ++consumers[t.get()];
      if (node.kind == NodeKind::kMatmul) ++matmuls;
    }
    ++gemms[matmuls];
    const Node* first_matmul = nullptr;
    for (const Node& node : g.nodes()) {
      if (node.kind == NodeKind::kMatmul) {
        if (!first_matmul) first_matmul = &node;
        if (consumers[node.inputs[0].get()] > 1 || consumers[node.inputs[1].get()] > 1) {
          ++shared_operand;
        }
      }
    }
    const auto& problem = first_matmul->outputs[0]->dims();
    for (const Node& node : g.nodes()) {
      if (node.kind == NodeKind::kPointwise) {
        ++pointwise[std::get<PointwiseAttributes>(node.attributes).mode];
        const auto& out = node.outputs[0];
        if (!out->is_output() && out->data_type() != DataType::kFloat32) ++rounding_points;
        for (const auto& in : node.inputs) {
          if (produced.contains(in.get())) continue;
          const auto& d = in->dims();
          const char* mode =
              d[1] == 1 ? (d[2] == 1 ? "scalar" : "column") : (d[2] == 1 ? "row" : "full");
          const bool batch_one = d[0] == 1 && problem[0] > 1;
          ++broadcast[fmt::format("{}/{}", mode, batch_one ? "1" : "b")];
        }
      }
      if (node.kind == NodeKind::kReduction && node.outputs[0]->is_output()) {
        ++tap_modes[std::get<ReductionAttributes>(node.attributes).mode];
        const auto& d = node.outputs[0]->dims();
        ++tap_shapes[fmt::format("[{},{},{}]", d[0] == 1 ? "1" : "b", d[1] == 1 ? "1" : "M",
                                 d[2] == 1 ? "1" : "N")];
      }
    }
    if (rg.expected_decline.empty()) {
      ++fusable;
    } else {
      ++declines[rg.expected_decline];
    }
  }
};

TEST(RandomGraph, CoversEveryModeAndBothEngines) {
  Coverage c;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    auto rg = make_random_graph(seed);
    ASSERT_TRUE(rg) << "seed " << seed << ": " << rg.status().message();
    c.add(rg.value());
  }
  for (PointwiseMode mode : all_pointwise_modes()) {
    EXPECT_GT(c.pointwise[mode], 0) << "pointwise " << to_string(mode);
  }
  for (const char* mode : {"scalar", "row", "column", "full"}) {
    for (const char* batch : {"1", "b"}) {
      EXPECT_GT((c.broadcast[fmt::format("{}/{}", mode, batch)]), 0) << mode << "/" << batch;
    }
  }
  for (ReductionMode mode : all_reduction_modes()) {
    EXPECT_GT(c.tap_modes[mode], 0) << "tap " << to_string(mode);
  }
  for (const char* shape : {"[b,M,1]", "[b,1,N]", "[1,1,1]", "[b,1,1]"}) {
    EXPECT_GT(c.tap_shapes[shape], 0) << "tap shape " << shape;
  }
  EXPECT_GT(c.fusable, 0);
  EXPECT_GT(c.declines.size(), 10u);
  EXPECT_GT(c.gemms[2] + c.gemms[3], 0);
  EXPECT_GT(c.shared_operand, 0);
  EXPECT_GT(c.rounding_points, 0);
  std::string text = fmt::format("{} fusable, {} declined by {} rules:", c.fusable,
                                 kSeeds - static_cast<std::uint64_t>(c.fusable), c.declines.size());
  for (const auto& [rule, n] : c.declines) text += fmt::format(" {} {}", rule, n);
  text += "\n  pointwise:";
  for (const auto& [mode, n] : c.pointwise) text += fmt::format(" {} {}", to_string(mode), n);
  text += "\n  aux:";
  for (const auto& [mode, n] : c.broadcast) text += fmt::format(" {} {}", mode, n);
  text += "\n  taps:";
  for (const auto& [mode, n] : c.tap_modes) text += fmt::format(" {} {}", to_string(mode), n);
  for (const auto& [shape, n] : c.tap_shapes) text += fmt::format(" {} {}", shape, n);
  text += "\n  matmuls:";
  for (const auto& [count, n] : c.gemms) text += fmt::format(" {}x{}", count, n);
  text += fmt::format(", {} with a shared operand, {} rounding points", c.shared_operand,
                      c.rounding_points);
  std::printf("%s\n", text.c_str());
}

// Every seed in [first, last) on the host device (support/random_graph_sweep.h): the plan
// builds and its call matches the fp64 reference, or the graph is declined by the rule the
// generator broke and runs on the fallback engine; a fusable graph runs on both engines.
void sweep(std::uint64_t first, std::uint64_t last) {
  const auto device = make_host_device();
  const auto start = std::chrono::steady_clock::now();
  SweepTally tally;
  for (std::uint64_t seed = first; seed < last; ++seed) {
    sweep_seed(device, seed, run_on_host, tally);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("seeds [%llu, %llu): %s, in %.2f s\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(last), tally.summary().c_str(), seconds);
}

TEST(RandomGraph, SweepBuildsOrDeclinesAndMatchesReference) {
  sweep(0, kSeeds);
}

// The same sweep over 10^4 seeds (issue 10): 10,000 graphs (8,025 fused, 1,975 declined),
// 18,025 executions, 210 s on one core (2026-12-03, the 2-core build machine, loaded). A
// ctest of its own with the label `long` (tests/CMakeLists.txt); the sanitizer run in
// .ci/run leaves it out. It once failed at seed 5887, on both engines alike: a [1,1,1] min
// tap of log(|acc| + exp(tanh(acc))), whose values are >= 0 and whose min sits next to 0,
// where fp32's absolute error of log near 1 is a relative error of 9.1e-3 against the 1e-3
// tolerance. The generator bounded |acc| + exp(tanh(acc)) below by 0.37 instead of 1, so it
// did not see that the log is >= 0 and that such a min must be an amax (choose_taps); with
// the bound (Generator::positive) the tap is an amax; 71 of the 10^4 graphs changed, 3 of
// them (5544, 5887, 7865) only in a tap's mode, a min or max become amax.
TEST(RandomGraph, TenThousandGraphsMatchTheReference) {
  sweep(0, 10000);
}

}  // namespace
}  // namespace fusedgemm::test
