// Taps on the GPU need no seed, no zeroed workspace and give the same bits every run: each
// tap flavor (every reduction mode into rows, columns, a scalar and a per-batch scalar; the
// taps-only two-GEMM graph) and the tap examples, at shapes of many tiles, run twice with
// the workspace refilled with random garbage in between. Both runs must match the fp64
// reference, write nothing outside the elements, and agree bit for bit. Suites named *Gpu*
// carry the ctest label `gpu` and skip without a device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "reference/resize.h"
#include "runtime/cuda_device.h"
#include "support/call_harness.h"
#include "support/device_call.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {
namespace {

// The payload bytes of every tap, in call order.
std::vector<std::vector<std::uint8_t>> tap_bytes(const CallBuffers& call,
                                                 const std::vector<Tensor>& taps) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const Tensor& t : taps) {
    const auto& buffer = *call[t->name()].buffer;
    out.emplace_back(buffer.data(), buffer.data() + buffer.size());
  }
  return out;
}

class TapGpu : public OnGpu<> {
 protected:
  // Runs `graph` twice through `plan` on garbage workspaces; checks both runs and their
  // agreement. `taps` are the graph's tap tensors.
  void run_twice(const std::string& label, const Plan& plan, const Graph& graph,
                 const std::vector<Tensor>& taps, std::uint64_t seed) {
    SCOPED_TRACE(label);
    auto call = CallBuffers::make(graph, seed);
    ASSERT_TRUE(call) << call.status().message();
    DeviceCall device_call(device_, call.value());
    ASSERT_TRUE(device_call.status()) << device_call.status().message();
    const VariantPack pack = device_call.pack();
    auto bound = plan.bind(pack);
    ASSERT_TRUE(bound) << bound.status().message();
    const auto bytes = plan.workspace_bytes(bound.value());
    ASSERT_TRUE(bytes) << bytes.status().message();
    EXPECT_GT(bytes.value(), 0u) << "a plan with taps needs a workspace";
    std::mt19937_64 rng(seed);

    std::vector<std::vector<std::uint8_t>> first;
    for (int run = 0; run < 2; ++run) {
      SCOPED_TRACE(fmt::format("run {}", run + 1));
      call->prepare();
      ASSERT_TRUE(device_call.upload());
      const auto ws = device_call.workspace(bytes.value(), &rng);
      ASSERT_TRUE(ws) << ws.status().message();
      const Status s = plan.execute(bound.value(), ws.value(), nullptr);
      ASSERT_TRUE(s) << s.message();
      ASSERT_TRUE(device_call.download());
      EXPECT_TRUE(call->matches_reference(graph));
      EXPECT_TRUE(call->outside_untouched());
      auto now = tap_bytes(call.value(), taps);
      if (run == 0) {
        first = std::move(now);
        continue;
      }
      ASSERT_EQ(now.size(), first.size());
      for (std::size_t t = 0; t < now.size(); ++t) {
        EXPECT_TRUE(now[t] == first[t]) << "tap '" << taps[t]->name() << "' differs between runs";
      }
    }
    EXPECT_EQ(total_deferrals(plan), 0u);
  }
};

// Every tap flavor, so every reduction mode into rows, columns and scalars, at shapes of
// several tiles with ragged edges, batch 1, 2 and 3. The scalar taps of taps_full reduce
// every point, and its mul tap stays inside fp32's range only up to ~21600 points
// (flavor_graphs.cpp), so its shapes are smaller; the examples below reduce larger grids.
TEST_F(TapGpu, EveryFlavorAndModeIsReproducibleOnGarbageWorkspaces) {
  const std::vector<FlavorShape> large = {
      {.batch = 1, .m = 200, .n = 300, .k = 64},
      {.batch = 3, .m = 700, .n = 900, .k = 32},
      {.batch = 2, .m = 2, .n = 520, .k = 64},
  };
  const std::vector<FlavorShape> small = {
      {.batch = 1, .m = 130, .n = 150, .k = 64},
      {.batch = 3, .m = 60, .n = 100, .k = 64},
      {.batch = 2, .m = 2, .n = 520, .k = 64},
  };
  std::uint64_t seed = 40;
  int ran = 0;
  for (Flavor flavor :
       {Flavor::kTapsRow, Flavor::kTapsColumn, Flavor::kTapsFull, Flavor::kTapsOnlyMultiGemm}) {
    for (const FlavorShape& shape : flavor == Flavor::kTapsFull ? small : large) {
      const std::string label = fmt::format("{}: {}", to_string(flavor), to_string(shape));
      auto fg = make_flavor_graph(flavor, shape);
      ASSERT_TRUE(fg) << label << ": " << fg.status().message();
      auto plan = build(fg->graph, BuildOptions{device_});
      ASSERT_TRUE(plan) << label << ": " << plan.status().message();
      run_twice(label, plan.value(), fg->graph, fg->taps, seed++);
      ++ran;
    }
  }
  EXPECT_EQ(ran, 12);
}

// The tap examples as written and resized to 3 x 1040 x 1000: their [1, 1, 1] taps
// (batched.json's amax reduces the batch too) then fold 3 x 9 x 8 = 216 CTAs, more than one
// per finishing thread.
TEST_F(TapGpu, TapExamplesAreReproducibleOnGarbageWorkspaces) {
  std::uint64_t seed = 70;
  for (const char* example : {"taps", "taps_only", "batched"}) {
    for (const bool resized : {false, true}) {
      const std::string label = fmt::format("{}{}", example, resized ? " 3x1040x1000x64" : "");
      auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/" + example + ".json");
      ASSERT_TRUE(graph) << label << ": " << graph.status().message();
      ASSERT_TRUE(graph->validate());
      if (resized) {
        const reference::ProblemOverride size{3, 1040, 1000, 64, true, true};
        const Status s = reference::resize_graph(graph.value(), size);
        ASSERT_TRUE(s) << label << ": " << s.message();
      }
      auto plan = build(graph.value(), BuildOptions{device_});
      ASSERT_TRUE(plan) << label << ": " << plan.status().message();
      std::vector<Tensor> taps;
      for (const Tensor& t : graph->tensors()) {
        const auto& d = t->dims();
        if (t->is_output() && t->data_type() == DataType::kFloat32 && (d[1] == 1 || d[2] == 1)) {
          taps.push_back(t);
        }
      }
      ASSERT_FALSE(taps.empty()) << label;
      run_twice(label, plan.value(), graph.value(), taps, seed++);
    }
  }
}

// Two plans of one graph take turns on one workspace: each starts its epochs at its own
// random value, so neither mistakes the other's counters for its own.
TEST_F(TapGpu, TwoPlansShareOneWorkspace) {
  auto fg = make_flavor_graph(Flavor::kTapsFull, {.batch = 2, .m = 300, .n = 260, .k = 64});
  ASSERT_TRUE(fg) << fg.status().message();
  auto one = build(fg->graph, BuildOptions{device_});
  auto two = build(fg->graph, BuildOptions{device_});
  ASSERT_TRUE(one && two);
  auto call = CallBuffers::make(fg->graph, 90);
  ASSERT_TRUE(call) << call.status().message();
  DeviceCall device_call(device_, call.value());
  ASSERT_TRUE(device_call.status()) << device_call.status().message();
  const VariantPack pack = device_call.pack();
  auto bound_one = one->bind(pack);
  auto bound_two = two->bind(pack);
  ASSERT_TRUE(bound_one && bound_two);
  const auto bytes = one->workspace_bytes(bound_one.value());
  ASSERT_TRUE(bytes) << bytes.status().message();
  ASSERT_EQ(bytes.value(), two->workspace_bytes(bound_two.value()).value());
  std::mt19937_64 rng(91);
  const auto ws = device_call.workspace(bytes.value(), &rng);
  ASSERT_TRUE(ws) << ws.status().message();
  std::vector<std::vector<std::uint8_t>> first;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    call->prepare();
    ASSERT_TRUE(device_call.upload());
    const Plan& plan = round % 2 == 0 ? one.value() : two.value();
    const Status s =
        plan.execute(round % 2 == 0 ? bound_one.value() : bound_two.value(), ws.value(), nullptr);
    ASSERT_TRUE(s) << s.message();
    ASSERT_TRUE(device_call.download());
    EXPECT_TRUE(call->matches_reference(fg->graph));
    auto now = tap_bytes(call.value(), fg->taps);
    if (round == 0) first = now;
    EXPECT_TRUE(now == first) << "taps differ from round 0";
  }
}

}  // namespace
}  // namespace fusedgemm::test
