// Plan::execute under CUDA graph capture (issue 10): for every example graph, the plan built
// on the GPU runs once directly on a stream into poisoned, guarded outputs; the same bound
// call is then captured on that stream (cuStreamBeginCapture in global mode), instantiated
// and replayed several times, with fresh garbage in the workspace and the outputs poisoned
// again before every replay. Each replay leaves every written allocation, guards included,
// byte-identical to the direct run, which itself matches the fp64 reference; the capture
// itself runs nothing. Suites named *Gpu* carry the ctest label `gpu` and skip without a
// device.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "example_files.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "support/call_harness.h"
#include "support/cuda_graph.h"
#include "support/device_call.h"

namespace fusedgemm::test {
namespace {

constexpr int kReplays = 4;

using CudaGraphGpu = OnGpu<::testing::TestWithParam<std::filesystem::path>>;

TEST_P(CudaGraphGpu, ReplaysMatchDirectExecute) {
  auto graph = load_graph(GetParam().string());
  ASSERT_TRUE(graph) << graph.status().message();
  ASSERT_TRUE(graph->validate());
  // The default engine: fallback_only.json captures the fallback's step kernels and
  // cuBLASLt GEMMs, every other example its one fused launch.
  auto plan = build(graph.value(), BuildOptions{device_});
  ASSERT_TRUE(plan) << plan.status().message();
  SCOPED_TRACE(std::string(to_string(plan->engine())));

  auto call = CallBuffers::make(graph.value(), 11);
  ASSERT_TRUE(call) << call.status().message();
  call->prepare();
  DeviceCall device_call(device_, call.value());
  ASSERT_TRUE(device_call.upload());
  auto bound = plan->bind(device_call.pack(&plan.value()));
  ASSERT_TRUE(bound) << bound.status().message();
  auto bytes = plan->workspace_bytes(bound.value());
  ASSERT_TRUE(bytes) << bytes.status().message();
  std::mt19937_64 garbage(23);
  auto workspace = device_call.workspace(bytes.value(), &garbage);
  ASSERT_TRUE(workspace) << workspace.status().message();
  auto stream = CudaGraphStream::create(*device_);
  ASSERT_TRUE(stream) << stream.status().message();
  void* s = stream.value()->stream();

  // Direct: the reference the replays are held to.
  const Status executed = plan->execute(bound.value(), workspace.value(), s);
  ASSERT_TRUE(executed) << executed.message();
  ASSERT_TRUE(stream.value()->synchronize());
  ASSERT_TRUE(device_call.download());
  EXPECT_TRUE(call->matches_reference(graph.value()));
  EXPECT_TRUE(call->outside_untouched());
  const auto direct = written_bytes(call.value());

  // Capture: the same call, recorded and not run (the outputs keep their poison).
  call->prepare();
  ASSERT_TRUE(device_call.upload());
  const auto poisoned = written_bytes(call.value());
  ASSERT_TRUE(stream.value()->begin_capture());
  const Status captured = plan->execute(bound.value(), workspace.value(), s);
  auto nodes = stream.value()->end_capture();  // ends the capture whatever execute said
  ASSERT_TRUE(captured) << captured.message();
  ASSERT_TRUE(nodes) << nodes.status().message();
  EXPECT_GE(nodes.value(), 1u);
  ASSERT_TRUE(device_call.download());
  EXPECT_TRUE(written_bytes(call.value()) == poisoned) << "the capture ran something";

  for (int replay = 0; replay < kReplays; ++replay) {
    SCOPED_TRACE(replay);
    // Garbage in the same workspace (same address, same size), outputs poisoned again.
    auto refilled = device_call.workspace(bytes.value(), &garbage);
    ASSERT_TRUE(refilled) << refilled.status().message();
    ASSERT_EQ(refilled->data, workspace->data);
    call->prepare();
    ASSERT_TRUE(device_call.upload());
    ASSERT_TRUE(stream.value()->replay());
    ASSERT_TRUE(device_call.download());
    EXPECT_TRUE(written_bytes(call.value()) == direct)
        << "replay " << replay << " differs from the direct execute";
  }
  // The direct and the captured execute both passed every rule.
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

INSTANTIATE_TEST_SUITE_P(Examples, CudaGraphGpu,
                         ::testing::ValuesIn(fusedgemm_test::example_files()),
                         [](const auto& info) { return fusedgemm_test::example_name(info.param); });

}  // namespace
}  // namespace fusedgemm::test
