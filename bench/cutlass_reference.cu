// CUTLASS's own sm90 fp8 kernels against cuBLASLt at one shape, in one process: a reference
// for what a CUTLASS-structured warp-specialized mainloop reaches where our kernel is compared
// with cuBLASLt (docs/PERF.md, run 45). Not part of the CMake build: CUTLASS's headers come
// from PyPI's nvidia-cutlass, and scripts/cutlass_reference.sh builds and runs it.
//
// D[m, n] bf16 row-major = A[m, k] (K-major) x B[n, k]^T (K-major), fp8 e4m3, fp32 fast
// accumulation (no periodic promotion, as wgmma accumulates and as device_throughput asks
// cuBLASLt for). Inputs random, 8 sets rotated past L2; batches of 20 launches timed by events,
// the configuration's and cuBLASLt's heuristic first algorithm alternating; the first output
// is compared with cuBLASLt's.
//
//   cutlass_reference pp128x128c1x2|co128x256c2x1|co128x256c1x2 M N K [ROUNDS]
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cublaslt_gemm.h"
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

using namespace cute;

#define CK(x)                                                                \
  do {                                                                       \
    auto e_ = (x);                                                           \
    if (e_ != 0) {                                                           \
      std::printf("%s:%d %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

template <class Tile, class Cluster, class MainSched, class EpiSched>
struct Cfg {
  using EA = cutlass::float_e4m3_t;
  using ED = cutlass::bfloat16_t;
  using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void,
      cutlass::layout::RowMajor, 8, ED, cutlass::layout::RowMajor, 8, EpiSched>::CollectiveOp;
  using Main = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, EA, cutlass::layout::RowMajor, 16, EA,
      cutlass::layout::ColumnMajor, 16, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epi::SharedStorage))>,
      MainSched>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Main, Epi>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

using PingPong128x128c1x2 = Cfg<Shape<_128, _128, _128>, Shape<_1, _2, _1>,
                                cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum,
                                cutlass::epilogue::TmaWarpSpecialized>;
using Coop128x256c2x1 = Cfg<Shape<_128, _256, _128>, Shape<_2, _1, _1>,
                            cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                            cutlass::epilogue::TmaWarpSpecializedCooperative>;
using Coop128x256c1x2 = Cfg<Shape<_128, _256, _128>, Shape<_1, _2, _1>,
                            cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum,
                            cutlass::epilogue::TmaWarpSpecializedCooperative>;

__global__ void fill_fp8(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ (seed * 0x9E3779B9u);
    h ^= h >> 15;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    const float v = (static_cast<float>(h & 0xFFFF) / 65535.f - 0.5f) * 4.f;
    p[i] = __nv_fp8_e4m3(v);
  }
}

struct Set {
  void *a, *b, *d;
};

// cuBLASLt's D = A B^T on set `s` with algorithm `algo` of its heuristic, scales 1.
void lt_run(const fusedgemm::bench::Lt& lt, const float* one, int algo, const Set& s,
            cudaStream_t st) {
  fusedgemm::bench::lt_matmul(lt, lt.algos[algo], s.a, s.b, s.d, st, nullptr, one, one);
}

template <class C>
struct Runner {
  using Gemm = typename C::Gemm;
  std::vector<Gemm> gemms;
  std::vector<void*> workspaces;
  Runner(const std::vector<Set>& sets, int m, int n, int k) : gemms(sets.size()) {
    using SA = typename Gemm::GemmKernel::StrideA;
    using SB = typename Gemm::GemmKernel::StrideB;
    using SC = typename Gemm::GemmKernel::StrideC;
    using SD = typename Gemm::GemmKernel::StrideD;
    for (size_t i = 0; i < sets.size(); ++i) {
      typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {m, n, k, 1},
                                    {static_cast<const cutlass::float_e4m3_t*>(sets[i].a),
                                     cutlass::make_cute_packed_stride(SA{}, {m, k, 1}),
                                     static_cast<const cutlass::float_e4m3_t*>(sets[i].b),
                                     cutlass::make_cute_packed_stride(SB{}, {n, k, 1})},
                                    {{},
                                     nullptr,
                                     cutlass::make_cute_packed_stride(SC{}, {m, n, 1}),
                                     static_cast<cutlass::bfloat16_t*>(sets[i].d),
                                     cutlass::make_cute_packed_stride(SD{}, {m, n, 1})}};
      args.epilogue.thread.alpha = 1.f;
      args.epilogue.thread.beta = 0.f;
      CK(static_cast<int>(gemms[i].can_implement(args)));
      void* ws = nullptr;
      const size_t bytes = Gemm::get_workspace_size(args);
      if (bytes) CK(cudaMalloc(&ws, bytes));
      workspaces.push_back(ws);
      CK(static_cast<int>(gemms[i].initialize(args, ws)));
    }
  }
  void run(int i, cudaStream_t st) { CK(static_cast<int>(gemms[i % gemms.size()].run(st))); }
};

float max_rel(const Set& x, const Set& y, size_t n) {
  std::vector<uint16_t> a(n), b(n);
  CK(cudaMemcpy(a.data(), x.d, n * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), y.d, n * 2, cudaMemcpyDeviceToHost));
  auto f = [](uint16_t h) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  };
  float worst = 0;
  for (size_t i = 0; i < n; i += 97) {
    const float d = std::fabs(f(a[i]) - f(b[i])) / (std::fabs(f(b[i])) + 1.f);
    worst = std::max(worst, d);
  }
  return worst;
}

template <class C>
void bench(const char* name, int m, int n, int k, int rounds) {
  const size_t sa = size_t(m) * k, sb = size_t(n) * k, sd = size_t(m) * n;
  const int count = 8;
  std::vector<Set> sets(count);
  for (int i = 0; i < count; ++i) {
    CK(cudaMalloc(&sets[i].a, sa));
    CK(cudaMalloc(&sets[i].b, sb));
    CK(cudaMalloc(&sets[i].d, sd * 2));
    fill_fp8<<<1024, 256>>>(static_cast<__nv_fp8_e4m3*>(sets[i].a), sa, 2 * i + 1);
    fill_fp8<<<1024, 256>>>(static_cast<__nv_fp8_e4m3*>(sets[i].b), sb, 2 * i + 2);
  }
  Set ref = sets[0];
  CK(cudaMalloc(&ref.d, sd * 2));
  CK(cudaDeviceSynchronize());
  Runner<C> ours(sets, m, n, k);
  const fusedgemm::bench::Lt lt = fusedgemm::bench::make_lt(m, n, k, true, false);
  float* one = nullptr;  // the per-tensor scales
  const float host_one = 1.f;
  CK(cudaMalloc(&one, sizeof(float)));
  CK(cudaMemcpy(one, &host_one, sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  ours.run(0, st);
  lt_run(lt, one, 0, ref, st);
  CK(cudaStreamSynchronize(st));
  std::printf("%s %dx%dx%d: max rel diff vs cuBLASLt %.3g; cuBLASLt algorithms %zu\n", name, m, n,
              k, max_rel(sets[0], ref, sd), lt.algos.size());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int batch = 20;
  std::vector<float> t_ours, t_lt;
  for (int r = 0; r < rounds; ++r) {
    for (int which = 0; which < 2; ++which) {
      CK(cudaEventRecord(e0, st));
      for (int i = 0; i < batch; ++i) {
        if (which == 0)
          ours.run(i, st);
        else
          lt_run(lt, one, 0, sets[i % count], st);
      }
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      (which == 0 ? t_ours : t_lt).push_back(ms * 1000 / batch);
    }
  }
  std::sort(t_ours.begin(), t_ours.end());
  std::sort(t_lt.begin(), t_lt.end());
  std::printf("%s: CUTLASS median %.1f us, cuBLASLt (first algorithm) median %.1f us, ratio %.3f\n",
              name, t_ours[t_ours.size() / 2], t_lt[t_lt.size() / 2],
              t_lt[t_lt.size() / 2] / t_ours[t_ours.size() / 2]);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::printf(
        "usage: cutlass_reference pp128x128c1x2|co128x256c2x1|co128x256c1x2 M N K [ROUNDS]\n");
    return 2;
  }
  const std::string which = argv[1];
  // M, N and K whole numbers from 16 to 65536 in steps of 16 (TMA's 16-byte rows of fp8 A and
  // B and of bf16 D), ROUNDS from 1 to 1000; anything else is refused.
  const auto number = [](const char* text, long lo, long hi, long step) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && v >= lo && v <= hi && v % step == 0 ? v : -1;
  };
  const long m = number(argv[2], 16, 65536, 16), n = number(argv[3], 16, 65536, 16),
             k = number(argv[4], 16, 65536, 16);
  const long rounds = argc > 5 ? number(argv[5], 1, 1000, 1) : 10;
  if (m < 0 || n < 0 || k < 0 || rounds < 0) {
    std::printf("M, N, K: multiples of 16 from 16 to 65536; ROUNDS: 1 to 1000\n");
    return 2;
  }
  if (which == "pp128x128c1x2") {
    bench<PingPong128x128c1x2>(argv[1], static_cast<int>(m), static_cast<int>(n),
                               static_cast<int>(k), static_cast<int>(rounds));
  } else if (which == "co128x256c2x1") {
    bench<Coop128x256c2x1>(argv[1], static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                           static_cast<int>(rounds));
  } else if (which == "co128x256c1x2") {
    bench<Coop128x256c1x2>(argv[1], static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                           static_cast<int>(rounds));
  } else {
    std::printf("unknown configuration '%s'\n", argv[1]);
    return 2;
  }
  return 0;
}
