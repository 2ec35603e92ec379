// On the GPU (docs/PERF.md): the host cost of Plan::execute per flavor next to a raw
// cuLaunchKernelEx of the same kernel with the same, already encoded arguments, in one
// process: 256x256x128 bf16, bursts of 64 calls from a drained stream, raw and execute bursts
// alternating. A single burst moves by tenths of a microsecond with the host and with the
// GPU clock ramping from idle, so each flavor first runs half a second of bursts (not
// recorded), then 101 pairs; the table gives the minimum of each side and the median of the
// pairs' ratios (execute / raw), the figure a run-to-run comparison should quote. Device
// throughput is bench/device_throughput.cpp's.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "reference/graph_reference.h"
#include "reference/resize.h"
#include "runtime/cuda_device.h"
#include "runtime/plan_state.h"

namespace {

using namespace fusedgemm;
using Clock = std::chrono::steady_clock;

#define CHECK_CUDA(x)                                                     \
  do {                                                                    \
    if (auto e = (x); e != cudaSuccess) {                                 \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(2);                                                       \
    }                                                                     \
  } while (0)

struct Prepared {
  Graph graph;
  Plan plan;
  BoundPack bound;
  Workspace workspace;
};

void* device_alloc(std::size_t bytes, bool random_bf16 = false) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 256)));
  if (random_bf16) {
    std::vector<std::uint16_t> host(bytes / 2);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (auto& h : host) {
      const float f = dist(rng);
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      h = static_cast<std::uint16_t>(bits >> 16);
    }
    CHECK_CUDA(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice));
  } else {
    CHECK_CUDA(cudaMemset(p, 0x3c, bytes));  // never zeros
  }
  return p;
}

std::optional<Prepared> prepare(const std::string& path, const std::shared_ptr<Device>& device,
                                std::int64_t m, std::int64_t n, std::int64_t k) {
  auto graph = load_graph(path);
  if (!graph || !graph->validate()) return std::nullopt;
  if (!reference::resize_graph(graph.value(), {1, m, n, k, {}, {}})) return std::nullopt;
  auto plan = build(graph.value(), BuildOptions{device});
  if (!plan) {
    std::printf("  %s: not built: %s\n", path.c_str(), plan.status().message().c_str());
    return std::nullopt;
  }
  VariantPack pack;
  for (const auto& t : graph->tensors()) {
    if (!plan->slot_of(*t->uid())) continue;
    pack.set(*t->uid(), device_alloc(reference::storage_bytes(t->data_type(), t->layout()),
                                     t->data_type() == DataType::kBFloat16));
  }
  auto bound = plan->bind(pack);
  if (!bound) return std::nullopt;
  auto workspace_bytes = plan->workspace_bytes(bound.value());
  if (!workspace_bytes) return std::nullopt;
  Workspace ws{workspace_bytes.value() ? device_alloc(workspace_bytes.value()) : nullptr,
               workspace_bytes.value()};
  return Prepared{graph.value(), plan.value(), bound.value(), ws};
}

constexpr int kBurst = 64;
constexpr int kPairs = 101;
constexpr double kWarmUpSeconds = 0.5;

// Host microseconds per call of one burst of kBurst calls from a drained stream.
template <class Call>
double burst_us(cudaStream_t stream, Call call) {
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const auto t0 = Clock::now();
  for (int i = 0; i < kBurst; ++i) call();
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / kBurst;
}

struct HostCost {
  double min_a_us;
  double min_b_us;
  double median_ratio;  // of b / a over adjacent pairs
};

// Bursts of a and b alternating (a, b, a, b, ...), so that a drifting clock or a busy moment
// of the host weighs on both alike: kWarmUpSeconds unrecorded, then kPairs pairs.
template <class A, class B>
HostCost host_cost_of(cudaStream_t stream, A a, B b) {
  const auto warm_until = Clock::now() + std::chrono::duration<double>(kWarmUpSeconds);
  while (Clock::now() < warm_until) {
    (void)burst_us(stream, a);
    (void)burst_us(stream, b);
  }
  HostCost cost{1e30, 1e30, 0};
  std::vector<double> ratios;
  for (int i = 0; i < kPairs; ++i) {
    const double ta = burst_us(stream, a);
    const double tb = burst_us(stream, b);
    cost.min_a_us = std::min(cost.min_a_us, ta);
    cost.min_b_us = std::min(cost.min_b_us, tb);
    ratios.push_back(tb / ta);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::nth_element(ratios.begin(), ratios.begin() + kPairs / 2, ratios.end());
  cost.median_ratio = ratios[kPairs / 2];
  return cost;
}

void host_cost(const std::shared_ptr<Device>& device) {
  std::printf(
      "\n## Host cost per call, 256x256x128 bf16, burst %d, %d alternating pairs after %.1f s\n\n",
      kBurst, kPairs, kWarmUpSeconds);
  std::printf(
      "| flavor | execute, min (us) | raw cuLaunchKernelEx, min (us) | ratio of minima | median "
      "ratio of pairs |\n|---|---|---|---|---|\n");
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::filesystem::path dir = FUSEDGEMM_EXAMPLES_DIR;
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  if (error) {
    std::printf("host cost: cannot list the example graphs in %s: %s\n", dir.c_str(),
                error.message().c_str());
    CHECK_CUDA(cudaStreamDestroy(stream));
    return;
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto p = prepare(file.string(), device, 256, 256, 128);
    // The raw launch below stands for the fused kernel; a fallback plan has several.
    if (!p || p->plan.engine() != Engine::kFused) continue;
    const Status first = p->plan.execute(p->bound, p->workspace, stream);
    if (!first) {
      std::printf("| %s | refused: %s | | |\n", file.stem().c_str(), first.message().c_str());
      continue;
    }
    // The raw launch reuses execute's own arguments, TMA descriptors already encoded.
    const auto& state = runtime::PlanAccess::state(p->plan);
    const auto& call = runtime::PlanAccess::call(p->bound);
    kernels::KernelArgs args = call.args;
    for (int i = 0; i < args.buffer_count; ++i) {
      args.buffers[i].data = p->bound[state.recipe.roles[i].slot].data;
    }
    args.workspace = p->workspace.data;
    if (!state.device->launch(*state.kernel, call.launch, args, stream)) continue;
    auto function = static_cast<CUfunction>(runtime::cuda_test::function_of(*state.kernel));
    CUlaunchConfig config{};
    config.gridDimX = call.launch.grid[0];
    config.gridDimY = call.launch.grid[1];
    config.gridDimZ = call.launch.grid[2];
    config.blockDimX = call.launch.block[0];
    config.blockDimY = call.launch.block[1];
    config.blockDimZ = call.launch.block[2];
    config.sharedMemBytes = call.launch.shared_bytes;
    config.hStream = stream;
    CUlaunchAttribute cluster{};
    if (call.launch.cluster[0] > 1) {
      cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      cluster.value.clusterDim.x = call.launch.cluster[0];
      cluster.value.clusterDim.y = 1;
      cluster.value.clusterDim.z = 1;
      config.attrs = &cluster;
      config.numAttrs = 1;
    }
    void* params[] = {&args};
    const HostCost cost = host_cost_of(
        stream, [&] { cuLaunchKernelEx(&config, function, params, nullptr); },
        [&] { (void)p->plan.execute(p->bound, p->workspace, stream); });
    std::printf("| %s | %.2f | %.2f | %.2fx | %.2fx |\n", file.stem().c_str(), cost.min_b_us,
                cost.min_a_us, cost.min_b_us / cost.min_a_us, cost.median_ratio);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

}  // namespace

int main() {
  auto device = make_cuda_device(0);
  if (!device) {
    std::printf("no CUDA device: %s\n", device.status().message().c_str());
    return 0;
  }
  host_cost(device.value());
  return 0;
}
