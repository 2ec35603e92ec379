// On the GPU (docs/PERF.md): (1) the host cost of Plan::execute per flavor next to a raw
// cuLaunchKernelEx of the same kernel with the same, already encoded arguments, in one
// process: 256x256x128 bf16, bursts of 64 calls from a drained stream, minimum over 25
// bursts of each, interleaved; (2) device throughput of the plain bf16 GEMM against cuBLASLt at
// 4096^3 and 8192^3, interleaved (ours, cuBLASLt, ours, ...) because the power cap moves the clock,
// inputs random and rotated past the 60 MB L2, median of event-timed repetitions.
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
constexpr int kBursts = 25;

// Host microseconds per call of one burst of kBurst calls from a drained stream.
template <class Call>
double burst_us(cudaStream_t stream, Call call) {
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const auto t0 = Clock::now();
  for (int i = 0; i < kBurst; ++i) call();
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / kBurst;
}

// The minimum over kBursts bursts of each, the bursts interleaved (a, b, a, b, ...) so that a
// drifting clock or a busy moment of the host weighs on both alike.
template <class A, class B>
std::pair<double, double> min_burst_us(cudaStream_t stream, A a, B b) {
  double best_a = 1e30;
  double best_b = 1e30;
  for (int i = 0; i < kBursts; ++i) {
    best_a = std::min(best_a, burst_us(stream, a));
    best_b = std::min(best_b, burst_us(stream, b));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return {best_a, best_b};
}

void host_cost(const std::shared_ptr<Device>& device) {
  std::printf("\n## Host cost per call, 256x256x128 bf16, burst %d, min of %d bursts\n\n", kBurst,
              kBursts);
  std::printf("| flavor | execute (us) | raw cuLaunchKernelEx (us) | ratio |\n|---|---|---|---|\n");
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(FUSEDGEMM_EXAMPLES_DIR)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
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
    void* params[] = {&args};
    const auto [base, ours] = min_burst_us(
        stream, [&] { cuLaunchKernelEx(&config, function, params, nullptr); },
        [&] { (void)p->plan.execute(p->bound, p->workspace, stream); });
    std::printf("| %s | %.2f | %.2f | %.2fx |\n", file.stem().c_str(), ours, base, ours / base);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

// cuBLASLt D = A @ B for A [M, K] K-major and B [K, N] K-major, D [M, N] row-major: in
// cuBLASLt's column-major terms D^T (N x M) = B^T (N x K, stored K x N: op T) x A^T (K x M).
struct Lt {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulAlgo_t algo;
  void* workspace;
  std::size_t workspace_bytes = 64 << 20;
};

Lt make_lt(int m, int n, int k) {
  Lt lt{};
  cublasLtCreate(&lt.handle);
  cublasLtMatmulDescCreate(&lt.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
  cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn));
  cublasLtMatrixLayoutCreate(&lt.a, CUDA_R_16BF, k, n, k);  // B stored K x N col-major
  cublasLtMatrixLayoutCreate(&lt.b, CUDA_R_16BF, k, m, k);  // A stored K x M col-major
  cublasLtMatrixLayoutCreate(&lt.d, CUDA_R_16BF, n, m, n);  // D^T
  lt.workspace = device_alloc(lt.workspace_bytes);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &lt.workspace_bytes, sizeof(lt.workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt.handle, lt.desc, lt.a, lt.b, lt.d, lt.d, pref, 1, &result,
                                 &found);
  lt.algo = result.algo;
  return lt;
}

void throughput(const std::shared_ptr<Device>& device) {
  std::printf("\n## bf16 GEMM TFLOP/s, plain.json (A, B K-major), vs cuBLASLt, interleaved\n\n");
  std::printf("| M=N=K | fusedgemm TFLOP/s | cuBLASLt TFLOP/s | ratio |\n|---|---|---|---|\n");
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  for (const int s : {4096, 8192}) {
    constexpr int kSets = 3;  // 3 x (A + B) = 3 x 64 MB at 4096: past the 60 MB L2
    std::vector<Prepared> sets;
    for (int i = 0; i < kSets; ++i) {
      auto p = prepare(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/plain.json", device, s, s, s);
      if (!p) return;
      sets.push_back(std::move(*p));
    }
    Lt lt = make_lt(s, s, s);
    const float one = 1.f, zero = 0.f;
    auto run_ours = [&](int i) { (void)sets[i].plan.execute(sets[i].bound, {}, stream); };
    auto run_lt = [&](int i) {
      const auto& st = runtime::PlanAccess::state(sets[i].plan);
      const void* a = sets[i].bound[st.recipe.roles[0].slot].data;
      const void* b = sets[i].bound[st.recipe.roles[1].slot].data;
      void* d = sets[i].bound[st.recipe.roles[2].slot].data;
      cublasLtMatmul(lt.handle, lt.desc, &one, b, lt.a, a, lt.b, &zero, d, lt.d, d, lt.d, &lt.algo,
                     lt.workspace, lt.workspace_bytes, stream);
    };
    for (int w = 0; w < 10; ++w) {
      run_ours(w % kSets);
      run_lt(w % kSets);
    }
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ours, theirs;
    for (int r = 0; r < 30; ++r) {
      for (int which = 0; which < 2; ++which) {
        cudaEventRecord(e0, stream);
        if (which == 0)
          run_ours(r % kSets);
        else
          run_lt(r % kSets);
        cudaEventRecord(e1, stream);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        (which == 0 ? ours : theirs).push_back(ms);
      }
    }
    auto median = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double flop = 2.0 * s * s * static_cast<double>(s);
    const double t_ours = flop / (median(ours) * 1e-3) / 1e12;
    const double t_lt = flop / (median(theirs) * 1e-3) / 1e12;
    std::printf("| %d | %.0f | %.0f | %.2fx |\n", s, t_ours, t_lt, t_ours / t_lt);
  }
}

}  // namespace

int main() {
  auto device = make_cuda_device(0);
  if (!device) {
    std::printf("no CUDA device: %s\n", device.status().message().c_str());
    return 0;
  }
  host_cost(device.value());
  throughput(device.value());
  return 0;
}
