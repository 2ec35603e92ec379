// The host device's speed (issue 12: the embedded default of the main job on a machine
// without a GPU): Plan::execute of D = A @ B, and of gelu(A @ B + bias), in bf16 at a square
// size, on random inputs; D = A @ B forced onto the fallback engine too (its host runner). Target:
// >= 2 GFLOP/s at 1024^3 on the 2-core build machine (docs/PERF.md, "The host device's speed").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fusedgemm/device.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/plan.h"
#include "runtime/host_device.h"

namespace {

using namespace fusedgemm;

// `panel_bytes` 0: the per-product reads (runtime/host_device.h), the speed before panels.
void execute(benchmark::State& state, bool bias_gelu, Engine engine = Engine::kFused,
             std::uint64_t panel_bytes = runtime::HostDevice::kMaxPanelBytes) {
  const std::int64_t s = state.range(0);
  Graph graph;
  auto a = graph.tensor(TensorAttributes()
                            .set_name("A")
                            .set_dim({1, s, s})
                            .set_stride({s * s, s, 1})
                            .set_data_type(DataType::kBFloat16));
  auto b = graph.tensor(TensorAttributes()
                            .set_name("B")
                            .set_dim({1, s, s})
                            .set_stride({s * s, 1, s})
                            .set_data_type(DataType::kBFloat16));
  auto bias = graph.tensor(
      TensorAttributes().set_name("bias").set_dim({1, 1, s}).set_stride({s, s, 1}).set_data_type(
          DataType::kBFloat16));
  auto d = graph.matmul(a, b);
  if (bias_gelu) {
    d = graph.pointwise(
        graph.pointwise(d, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd)),
        PointwiseAttributes().set_mode(PointwiseMode::kGeluTanh));
  }
  d->set_output(true).set_name("D").set_data_type(DataType::kBFloat16);
  BuildOptions options(std::make_shared<runtime::HostDevice>(panel_bytes));
  options.engine = engine;
  auto plan = build(graph, options);
  if (!plan) {
    state.SkipWithError(plan.status().message().c_str());
    return;
  }
  // Random bf16 codes of values in [-1, 1): an exponent of 126 or less and any mantissa.
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> exponent(110, 126), mantissa(0, 127), sign(0, 1);
  const auto fill = [&](std::vector<std::uint16_t>& v) {
    for (auto& e : v) {
      e = static_cast<std::uint16_t>(sign(rng) << 15 | exponent(rng) << 7 | mantissa(rng));
    }
  };
  std::vector<std::uint16_t> as(s * s), bs(s * s), biases(s), ds(s * s);
  fill(as);
  fill(bs);
  fill(biases);
  VariantPack pack;
  pack.set(a, as.data()).set(b, bs.data()).set(d, ds.data());
  if (bias_gelu) pack.set(bias, biases.data());
  // The fallback's intermediate values live in the workspace; the fused plain needs none.
  std::vector<std::uint32_t> words((plan->workspace_bytes() + 3) / 4);
  const Workspace workspace{words.data(), words.size() * 4};
  for (auto _ : state) {
    const Status status = plan->execute(pack, workspace, nullptr);
    if (!status) {
      state.SkipWithError(status.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(ds.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * s * s * s * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void Plain(benchmark::State& state) {
  execute(state, false);
}
void BiasGelu(benchmark::State& state) {
  execute(state, true);
}
void PlainFallback(benchmark::State& state) {
  execute(state, false, Engine::kFallback);
}

void PlainPerProduct(benchmark::State& state) {
  execute(state, false, Engine::kFused, 0);
}

BENCHMARK(Plain)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(PlainPerProduct)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BiasGelu)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(PlainFallback)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
