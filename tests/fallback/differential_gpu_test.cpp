// The fused engine against the fallback engine on the GPU: for every flavor over a grid of
// shapes (M, N, K of 1, ragged edges, N == K, batch 1 and 3, both majors), each engine's
// outputs match the fp64 reference and the two agree with each other within the stored
// type's tolerance; a shape the fused engine refuses or declines runs on the fallback alone.
// The host tests' random-graph sweep runs here over 1000 seeds, each graph on both engines.
// The declined example runs on the fallback engine. Suites named *Gpu* carry the ctest label
// `gpu` and skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "reference/compare.h"
#include "runtime/device.h"
#include "support/build_options.h"
#include "support/call_harness.h"
#include "support/device_call.h"
#include "support/flavor_graphs.h"
#include "support/random_graph.h"
#include "support/random_graph_sweep.h"

namespace fusedgemm::test {
namespace {

constexpr Major kM = Major::kM;
constexpr Major kN = Major::kN;

// What one engine wrote: the host copies of every written tensor, after the call.
struct EngineRun {
  bool ran = false;
  std::vector<reference::HostTensor> written;
};

// Builds `graph` on `engine`, executes it once on inputs from `seed`, and checks the outputs
// against the reference and the guards. A fused engine that declines the graph, or refuses
// the call by a layout rule (a contiguous extent TMA cannot read), does not run.
EngineRun run_engine(const std::shared_ptr<Device>& device, const Graph& graph_in, Engine engine,
                     std::uint64_t seed) {
  SCOPED_TRACE(std::string(to_string(engine)));
  EngineRun run;
  Graph graph = graph_in;
  auto plan = build(graph, on_engine(device, engine));
  if (!plan && engine == Engine::kFused && plan.status().code() == ErrorCode::kDeclined) {
    return run;
  }
  EXPECT_TRUE(plan) << plan.status().message();
  if (!plan) return run;
  auto call = CallBuffers::make(graph, seed);
  EXPECT_TRUE(call) << call.status().message();
  if (!call) return run;
  call->prepare();
  DeviceCall device_call(device, call.value());
  EXPECT_TRUE(device_call.upload());
  const VariantPack pack = device_call.pack(&plan.value());
  auto bound = plan->bind(pack);
  EXPECT_TRUE(bound) << bound.status().message();
  if (!bound) return run;
  auto bytes = plan->workspace_bytes(bound.value());
  EXPECT_TRUE(bytes) << bytes.status().message();
  if (!bytes) return run;
  auto workspace = device_call.workspace(bytes.value());
  EXPECT_TRUE(workspace) << workspace.status().message();
  if (!workspace) return run;
  const Status executed = plan->execute(bound.value(), workspace.value(), nullptr);
  if (!executed && engine == Engine::kFused && executed.code() == ErrorCode::kIllegalCall) {
    const std::string rule = executed.message().substr(0, executed.message().find(':'));
    EXPECT_TRUE(rule == "contiguous_extent" || rule == "major" || rule == "stride_alignment")
        << executed.message();
    return run;
  }
  EXPECT_TRUE(executed) << executed.message();
  if (!executed) return run;
  EXPECT_TRUE(device_call.download());
  EXPECT_TRUE(call->matches_reference(graph));
  EXPECT_TRUE(call->outside_untouched());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
  for (const CallTensor& t : call->tensors()) {
    if (!t.written) continue;
    reference::HostTensor host{t.type, t.layout, {}};
    host.bytes.assign(t.buffer->data(), t.buffer->data() + t.buffer->size());
    run.written.push_back(std::move(host));
  }
  run.ran = true;
  return run;
}

// The fallback's values as the expectation the fused output is compared with.
reference::OutputValues as_expected(const reference::HostTensor& t) {
  reference::OutputValues out{0, t.type, t.layout.shape, {}, {}, {}};
  for (std::int64_t b = 0; b < t.layout.shape[0]; ++b) {
    for (std::int64_t r = 0; r < t.layout.shape[1]; ++r) {
      for (std::int64_t c = 0; c < t.layout.shape[2]; ++c) out.values.push_back(t.at(b, r, c));
    }
  }
  out.rounded = out.values;
  return out;
}

// Whether written tensor i of two runs of one seed differs by more than its type's
// tolerance, measured as compare() measures an output: ||fused - fallback|| over the norm of
// the fp64 reference (absolute where the reference is 0). Not over the fallback's norm: where
// the true value is 0 (seed 956: (aux - acc) - aux + acc), both engines store fp32 rounding
// residue, each within tolerance of the reference, and residues agree with nothing.
std::string engines_disagree(const SweepRun& fused, const SweepRun& fallback, std::size_t i) {
  const reference::HostTensor& f = fused.written[i];
  const reference::HostTensor& g = fallback.written[i];
  const auto want =
      std::find_if(fused.expected.begin(), fused.expected.end(),
                   [&](const reference::OutputValues& v) { return v.uid == fused.uids[i]; });
  if (want == fused.expected.end()) return "no reference output";
  double diff2 = 0.0;
  double ref2 = 0.0;
  std::size_t e = 0;
  for (std::int64_t b = 0; b < want->dims[0]; ++b) {
    for (std::int64_t r = 0; r < want->dims[1]; ++r) {
      for (std::int64_t c = 0; c < want->dims[2]; ++c, ++e) {
        const double d = f.at(b, r, c) - g.at(b, r, c);
        if (!std::isfinite(d) && f.at(b, r, c) != g.at(b, r, c)) return "a non-finite mismatch";
        if (std::isfinite(d)) diff2 += d * d;
        if (std::isfinite(want->rounded[e])) ref2 += want->rounded[e] * want->rounded[e];
      }
    }
  }
  const double relative = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const double tolerance = reference::compare(f, *want).tolerance;
  if (relative <= tolerance) return "";
  return fmt::format("fused vs fallback {:.1e} of the reference's norm (tol {:.1e})", relative,
                     tolerance);
}

class DifferentialGpu : public OnGpu<> {
 protected:
  // Returns whether both engines ran (and agreed).
  bool compare_engines(const Graph& graph, std::uint64_t seed) {
    const EngineRun fused = run_engine(device_, graph, Engine::kFused, seed);
    const EngineRun fallback = run_engine(device_, graph, Engine::kFallback, seed);
    EXPECT_TRUE(fallback.ran) << "the fallback engine must run every valid graph";
    if (!fused.ran || !fallback.ran) return false;
    EXPECT_EQ(fused.written.size(), fallback.written.size());
    for (std::size_t i = 0; i < fused.written.size() && i < fallback.written.size(); ++i) {
      const auto cmp = reference::compare(fused.written[i], as_expected(fallback.written[i]));
      EXPECT_TRUE(cmp.passed()) << "written tensor " << i << ": fused vs fallback "
                                << cmp.summary();
    }
    return true;
  }
};

TEST_F(DifferentialGpu, EveryFlavorFusedAgreesWithFallback) {
  const std::vector<FlavorShape> shapes = {
      {.batch = 1, .m = 200, .n = 144, .k = 272},
      {.batch = 3, .m = 72, .n = 96, .k = 96, .a_major = kM, .b_major = kN, .out_major = kM},
      {.batch = 3, .m = 64, .n = 40, .k = 40, .a_batch_one = true, .aux_batch_one = true},
      {.batch = 1, .m = 1, .n = 256, .k = 128},
      {.batch = 2, .m = 128, .n = 1, .k = 64, .b_batch_one = true},
      {.batch = 1, .m = 16, .n = 32, .k = 1},
  };
  int both = 0;
  for (const Flavor flavor : all_flavors()) {
    for (const FlavorShape& shape : shapes) {
      auto fg = make_flavor_graph(flavor, shape);
      if (!fg) continue;  // a combination the flavor does not have
      SCOPED_TRACE(fmt::format("{} {}", to_string(flavor), to_string(shape)));
      both += compare_engines(fg->graph, 21) ? 1 : 0;
    }
  }
  EXPECT_GT(both, static_cast<int>(all_flavors().size()));
}

// Builds the graph of every seed in [0, seeds) on compile-only devices of `sm_count`
// multiprocessors, one per hardware thread, so that every kernel a GPU of that many SMs
// will build is compiled into the kernel cache in parallel (the key holds no driver) and the
// sweep's own builds then hit it. Nothing is checked here: the sweep builds again. The
// forced fallback build compiles its step kernels and then fails on the compile-only device
// (no cuBLASLt handle without a GPU), which is all it is here for, as in gpu_pack.sh's warm.
void warm_kernel_cache(int sm_count, std::uint64_t seeds) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::uint64_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      const std::shared_ptr<Device> device = make_compile_only_device(sm_count);
      for (std::uint64_t seed = next++; seed < seeds; seed = next++) {
        auto rg = make_random_graph(seed);
        if (!rg) continue;
        (void)build(rg->graph, BuildOptions(device));
        BuildOptions forced(device);
        forced.engine = Engine::kFallback;
        (void)build(rg->graph, forced);
      }
    });
  }
  for (std::thread& t : pool) t.join();
}

// The random-graph sweep of the host tests (support/random_graph_sweep.h) on the GPU: for
// every seed the graph builds fused (or declined by the rule the generator broke, or by a
// kernel_* rule of the GPU's generator), a fused one runs on both engines, each call matches
// the fp64 reference with poisoned outputs, untouched guards and a garbage workspace, and
// the fused outputs agree with the fallback's within the stored type's tolerance.
// FUSEDGEMM_SWEEP_SEEDS sets how many seeds run (default 1000, seeds 0 to 999).
//
// Cost: every graph is a distinct fused kernel and a distinct fallback program, about 2
// cubins a seed; NVRTC takes ~0.3-1.5 s a kernel on the GPU machine and ~1 s on the 2-core
// build machine (2026-12-03: 20 seeds, 38 cubins, 40 s on one thread). One after the other
// that is 15-25 minutes per 1000 seeds, so they are compiled first on every core
// (warm_kernel_cache): ~1000 x 2 x 1 s / 16 cores, 2-3 minutes on a cold cache there, and
// nothing on a cache warmed beforehand (scripts/gpu_pack.sh runs the *Gpu* suites on the
// compile-only device: 1000 seeds ~20 min on 2 cores); then the sweep loads, executes and
// evaluates fp64. Fewer seeds for a quick look: FUSEDGEMM_SWEEP_SEEDS=40.
//
// Seed 401 failed on both engines until 2026-12-04 (a mul tap over 64 rows of
// sqrt(exp(tanh(fp8 GEMM sum))) at 1.1e-3 against fp32's 1e-3): a product of n factors sums
// their relative errors, so the generator now takes a product tap's factors to a root deep
// enough to bound that sum (random_graph.cpp, near_one).
TEST_F(DifferentialGpu, RandomGraphSweep) {
  const char* env = std::getenv("FUSEDGEMM_SWEEP_SEEDS");
  const std::uint64_t seeds = env != nullptr ? std::strtoull(env, nullptr, 10) : 1000;
  warm_kernel_cache(device_->multiprocessor_count(), seeds);
  const std::shared_ptr<Device> device = device_;
  // One call on the device: the call's allocations mirrored there (guards included), the
  // host pack moved onto them, a garbage workspace of the bound call's size, and everything
  // written copied back over the host buffers.
  const SweepCallRunner on_gpu = [device](const Plan& plan, CallBuffers& call,
                                          const VariantPack& pack) -> Status {
    DeviceCall device_call(device, call);
    FG_TRY(device_call.upload());
    FG_ASSIGN_OR_RETURN(BoundPack bound, plan.bind(device_call.on_device(pack)));
    FG_ASSIGN_OR_RETURN(std::uint64_t bytes, plan.workspace_bytes(bound));
    std::mt19937_64 garbage(bytes);
    FG_ASSIGN_OR_RETURN(Workspace workspace, device_call.workspace(bytes, &garbage));
    FG_TRY(plan.execute(bound, workspace, nullptr));
    return device_call.download();
  };
  const auto start = std::chrono::steady_clock::now();
  SweepTally tally;
  std::uint64_t agreed = 0;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::vector<SweepRun> runs;
    sweep_seed(device_, seed, on_gpu, tally, &runs);
    if (runs.size() != 2 || runs[0].engine != Engine::kFused) continue;
    ASSERT_EQ(runs[0].written.size(), runs[1].written.size());
    bool same = true;
    for (std::size_t i = 0; i < runs[0].written.size(); ++i) {
      const std::string disagreement = engines_disagree(runs[0], runs[1], i);
      EXPECT_EQ(disagreement, "") << "written tensor " << i;
      same = same && disagreement.empty();
    }
    agreed += same ? 1 : 0;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s; %llu fused graphs agreed with the fallback; %.1f s\n", tally.summary().c_str(),
              static_cast<unsigned long long>(agreed), seconds);
  EXPECT_EQ(tally.graphs, seeds);
  EXPECT_GT(tally.fused, 0u);
}

// fp4 operands pass the support gate but the GPU generator does not emit them yet: on a GPU
// the plan is declined by the generator's rule and runs on the fallback engine.
TEST_F(DifferentialGpu, Fp4OperandsRunOnTheFallbackEngine) {
  auto fg = make_flavor_graph(
      Flavor::kPlain, {.batch = 2, .m = 64, .n = 48, .k = 64, .operand_type = DataType::kFp4E2M1});
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{device_});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFallback);
  ASSERT_TRUE(plan->declined().has_value());
  EXPECT_EQ(plan->declined()->rule, "kernel_operand_type") << plan->declined()->message;
  EXPECT_TRUE(run_engine(device_, fg->graph, Engine::kFallback, 6).ran);
}

TEST_F(DifferentialGpu, TheDeclinedExampleRunsOnTheFallbackEngine) {
  auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/fallback_only.json");
  ASSERT_TRUE(graph) << graph.status().message();
  ASSERT_TRUE(graph->validate());
  auto plan = build(graph.value(), BuildOptions{device_});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFallback);
  EXPECT_TRUE(run_engine(device_, graph.value(), Engine::kFallback, 4).ran);
}

}  // namespace
}  // namespace fusedgemm::test
