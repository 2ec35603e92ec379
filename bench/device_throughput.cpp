// Device throughput on the GPU (docs/PERF.md): fusedgemm's fused kernel against cuBLASLt, in
// one process, interleaved (ours, theirs, ours, ...) because the 700 W cap moves the clock.
// Each measurement is a batch of back-to-back launches timed by events around the batch,
// the inputs rotating over enough random sets (never zeros) to pass the 60 MB L2; the figure
// is the median over rounds. cuBLASLt runs the fastest of its top 8 heuristic algorithms,
// each timed the same way first (each row names it: id, tile, stages, cluster, ...). Cases:
//   plain bf16: squares 1024-16384 and the LLM sweep of DESIGN.md section 9
//   bias + GELU(tanh) vs cuBLASLt's GELU_BIAS epilogue
//   gated MLP silu(A@B0) * (A@B1) vs two cuBLASLt GEMMs and an elementwise kernel
//   GEMM + row-amax tap vs a cuBLASLt GEMM and a row-reduction kernel
//   (both fused flavors at K = 8192 and at K = 1024, where the unfused traffic matters)
//   fp8 e4m3 per-tensor scales vs cuBLASLt fp8 (fast accumulation, as wgmma accumulates)
//   (--case only) 6 residual adds of full bf16 aux vs a cuBLASLt GEMM and a 7-input add kernel
//   kernel variants at 2048^3, 4096^3, 8192^3, 8192 x 8192 x 1024 and 4096 x 11008 x 4096
//   (tiles, clusters, staging buffers and borrowing, PDL; bf16 and fp8), and K from 128 to
//   2048 at 8192^2 ("K sweep")
//   beside the cost model's pick; a full run ends with the headline cases again, "(again)", for the
//   spread
// A run starts with five seconds of 8192^3 (not recorded), so the first rows meet a warm chip.
// Usage: device_throughput [CSV path] [--quick] [--only TEXT] [--warm-up SECONDS]
//        [--separated] [--compile-only SM_COUNT] [--case KIND:MxNxK[:TILE]]...
// --only runs the cases whose label contains TEXT, or any of TEXT's '|'-separated parts;
// --warm-up sets the warm-up's seconds (0: none, so a profiler's first launches are the
// cases'); --separated follows every timed call with an empty kernel, so that neither
// library's launch overlaps the one before (what back to back gains over alone);
// --compile-only builds every plan on the compile-only device (no GPU needed) to warm
// FUSEDGEMM_CACHE_DIR and prints each case's kernel configuration; --case (repeatable) runs
// only the cases it names, after the warm-up: KIND one of bf16, bias+gelu_tanh, gated_mlp,
// gemm+row_amax, fp8_e4m3, residual_add (1 full bf16 aux added; cuBLASLt adds it as C),
// residual_adds6 (6 full bf16 aux added), and TILE the cost model's pick
// where left out, else RxC (consumers sharing an R x C tile) or ppRxC (ping-pong), on a 2x1 cluster
// unless cMxN follows (1x1, 1x2, 2x1), then rS for a ring of S stages, sB for B staging buffers a
// stored output, aB for B buffers a TMA-loaded aux (a0: read from global memory) and nb for no
// staging borrowed from the ring
// (e.g. pp128x128c1x2r6s1, 128x256c2x1nb, 128x128c2x1a2): a pick checked at any shape, the model's
// and each tile the model weighs.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cublaslt_gemm.h"
#include "fusedgemm/context.h"
#include "fusedgemm/device.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/plan.h"
#include "jit/context.h"
#include "recipe/kernel_config.h"
#include "runtime/plan_state.h"

namespace {

using namespace fusedgemm;
using bench::Lt;
using bench::lt_matmul;
using bench::make_lt;

#define CHECK(x, what)                                                       \
  do {                                                                       \
    if (!(x)) {                                                              \
      std::fprintf(stderr, "%s failed (%s:%d)\n", what, __FILE__, __LINE__); \
      std::exit(2);                                                          \
    }                                                                        \
  } while (0)
#define CHECK_CUDA(x) CHECK((x) == cudaSuccess, #x)
#define CHECK_CU(x) CHECK((x) == CUDA_SUCCESS, #x)

// --- helper kernels, compiled by NVRTC through a fusedgemm Context ------------------------

constexpr const char* kHelperSource = R"(
__device__ unsigned hash(unsigned long long i, unsigned seed) {
  unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27;
  return static_cast<unsigned>(x >> 32);
}
__device__ unsigned short to_bf16(float f) {
  const unsigned bits = __float_as_uint(f);
  return static_cast<unsigned short>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
__device__ float from_bf16(unsigned short h) { return __uint_as_float(unsigned(h) << 16); }
// Uniform in [-1, 1).
extern "C" __global__ void fill_bf16(unsigned short* p, unsigned long long n, unsigned seed) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull)
    p[i] = to_bf16(hash(i, seed) * (2.0f / 4294967296.0f) - 1.0f);
}
// e4m3 of exponent -3..2, random sign and mantissa: finite, never zero.
extern "C" __global__ void fill_e4m3(unsigned char* p, unsigned long long n, unsigned seed) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) {
    const unsigned r = hash(i, seed);
    p[i] = static_cast<unsigned char>((r & 0x80u) | ((((r >> 8) % 6u) + 4u) << 3) | ((r >> 16) & 7u));
  }
}
extern "C" __global__ void fill_f32(float* p, unsigned long long n, unsigned seed, float lo,
                                    float hi) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull)
    p[i] = lo + (hi - lo) * (hash(i, seed) * (1.0f / 4294967296.0f));
}
// h = silu(g) * u, bf16, 8 elements per thread (n a multiple of 8).
extern "C" __global__ void silu_mul_bf16(const uint4* g, const uint4* u, uint4* h,
                                         unsigned long long n8) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n8; i += gridDim.x * 256ull) {
    const uint4 a = g[i], b = u[i];
    const unsigned* pa = &a.x; const unsigned* pb = &b.x;
    uint4 out; unsigned* po = &out.x;
    for (int j = 0; j < 4; ++j) {
      const float g0 = from_bf16(pa[j] & 0xFFFFu), g1 = from_bf16(pa[j] >> 16);
      const float u0 = from_bf16(pb[j] & 0xFFFFu), u1 = from_bf16(pb[j] >> 16);
      const float h0 = g0 / (1.0f + __expf(-g0)) * u0, h1 = g1 / (1.0f + __expf(-g1)) * u1;
      po[j] = unsigned(to_bf16(h0)) | (unsigned(to_bf16(h1)) << 16);
    }
    h[i] = out;
  }
}
// out = g + x0 + ... + x5 in fp32, bf16 (n a multiple of 8): the unfused residual adds.
extern "C" __global__ void add6_bf16(const uint4* g, const uint4* x0, const uint4* x1,
                                     const uint4* x2, const uint4* x3, const uint4* x4,
                                     const uint4* x5, uint4* out, unsigned long long n8) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n8; i += gridDim.x * 256ull) {
    const uint4 v[7] = {g[i], x0[i], x1[i], x2[i], x3[i], x4[i], x5[i]};
    uint4 o; unsigned* po = &o.x;
    for (int j = 0; j < 4; ++j) {
      float lo = 0.0f, hi = 0.0f;
      for (int t = 0; t < 7; ++t) {
        const unsigned w = (&v[t].x)[j];
        lo += from_bf16(w & 0xFFFFu);
        hi += from_bf16(w >> 16);
      }
      po[j] = unsigned(to_bf16(lo)) | (unsigned(to_bf16(hi)) << 16);
    }
    out[i] = o;
  }
}
// Nothing: launched after each call under --separated, so no call overlaps the one before.
extern "C" __global__ void gap() {}
// out[r] = max |d[r, :]| over a bf16 row-major [m, n] (n a multiple of 8): a block per row.
extern "C" __global__ void row_amax_bf16(const uint4* d, float* out, long long n8) {
  const uint4* row = d + blockIdx.x * n8;
  float m = 0.0f;
  for (long long i = threadIdx.x; i < n8; i += blockDim.x) {
    const uint4 v = row[i];
    const unsigned* pv = &v.x;
    for (int j = 0; j < 4; ++j)
      m = fmaxf(m, fmaxf(fabsf(from_bf16(pv[j] & 0xFFFFu)), fabsf(from_bf16(pv[j] >> 16))));
  }
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  __shared__ float warp_max[32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, warp_max[w]);
    out[blockIdx.x] = fmaxf(m, warp_max[0]);
  }
}
)";

struct Helpers {
  CUmodule module = nullptr;
  CUfunction fill_bf16, fill_e4m3, fill_f32, silu_mul, row_amax, add6, gap;

  explicit Helpers(Context& context) {
    auto compiled = context.compile({"bench_helpers.cu", kHelperSource, {}}, {});
    CHECK(compiled.is_ok(), compiled.status().message().c_str());
    CHECK_CU(cuModuleLoadData(&module, compiled->kernel->cubin.data()));
    CHECK_CU(cuModuleGetFunction(&fill_bf16, module, "fill_bf16"));
    CHECK_CU(cuModuleGetFunction(&fill_e4m3, module, "fill_e4m3"));
    CHECK_CU(cuModuleGetFunction(&fill_f32, module, "fill_f32"));
    CHECK_CU(cuModuleGetFunction(&silu_mul, module, "silu_mul_bf16"));
    CHECK_CU(cuModuleGetFunction(&row_amax, module, "row_amax_bf16"));
    CHECK_CU(cuModuleGetFunction(&add6, module, "add6_bf16"));
    CHECK_CU(cuModuleGetFunction(&gap, module, "gap"));
  }
  static void launch(CUfunction f, unsigned grid, unsigned block, void** params,
                     cudaStream_t stream) {
    CHECK_CU(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, params, nullptr));
  }
};

std::uint32_t g_seed = 1;

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 256)));
  return p;
}

// Random contents of `type` over `elements`, on the device.
void* random_buffer(const Helpers& h, DataType type, std::size_t elements) {
  void* p = device_alloc(elements * std::max(1, bits_of(type) / 8));
  unsigned long long n = elements;
  unsigned seed = g_seed++;
  if (type == DataType::kBFloat16) {
    void* params[] = {&p, &n, &seed};
    Helpers::launch(h.fill_bf16, 4096, 256, params, nullptr);
  } else if (type == DataType::kFp8E4M3) {
    void* params[] = {&p, &n, &seed};
    Helpers::launch(h.fill_e4m3, 4096, 256, params, nullptr);
  } else {
    float lo = 0.5f, hi = 1.5f;
    void* params[] = {&p, &n, &seed, &lo, &hi};
    Helpers::launch(h.fill_f32, 4096, 256, params, nullptr);
  }
  return p;
}

// --- the fused graphs --------------------------------------------------------------------

enum class Kind { kPlain, kBiasGelu, kGatedMlp, kRowAmax, kFp8, kResidualAdd, kResidualAdds };

// The residual graphs' full bf16 aux inputs: one (cuBLASLt adds it as its C matrix), or six
// (a heavy epilogue; cuBLASLt's GEMM and an add kernel).
int aux_inputs(Kind kind) {
  return kind == Kind::kResidualAdds ? 6 : kind == Kind::kResidualAdd ? 1 : 0;
}
std::string aux_name(int i) {
  return fmt::format("X{}", i);
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kPlain: return "bf16";
    case Kind::kBiasGelu: return "bias+gelu_tanh";
    case Kind::kGatedMlp: return "gated_mlp";
    case Kind::kRowAmax: return "gemm+row_amax";
    case Kind::kFp8: return "fp8_e4m3";
    case Kind::kResidualAdd: return "residual_add";
    case Kind::kResidualAdds: return "residual_adds6";
  }
  return "?";
}

Tensor input(Graph& g, const std::string& name, std::vector<std::int64_t> dims,
             std::vector<std::int64_t> strides, DataType type) {
  return g.tensor(TensorAttributes()
                      .set_name(name)
                      .set_dim(std::move(dims))
                      .set_stride(std::move(strides))
                      .set_data_type(type));
}

// A [1, m, k] K-major, B [1, k, n] K-major, outputs [1, m, n] N-major bf16.
Graph make_graph(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k) {
  Graph g;
  g.set_name(kind_name(kind));
  const DataType op = kind == Kind::kFp8 ? DataType::kFp8E4M3 : DataType::kBFloat16;
  auto a = input(g, "A", {1, m, k}, {m * k, k, 1}, op);
  auto b = input(g, "B", {1, k, n}, {k * n, 1, k}, op);
  Tensor d = g.matmul(a, b);
  switch (kind) {
    case Kind::kPlain:
    case Kind::kRowAmax: break;
    case Kind::kBiasGelu: {
      auto bias = input(g, "bias", {1, 1, n}, {n, n, 1}, DataType::kBFloat16);
      auto biased = g.pointwise(d, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
      d = g.pointwise(biased, PointwiseAttributes().set_mode(PointwiseMode::kGeluTanh));
      break;
    }
    case Kind::kGatedMlp: {
      auto b1 = input(g, "B1", {1, k, n}, {k * n, 1, k}, op);
      auto up = g.matmul(a, b1);
      auto act = g.pointwise(d, PointwiseAttributes().set_mode(PointwiseMode::kSilu));
      d = g.pointwise(act, up, PointwiseAttributes().set_mode(PointwiseMode::kMul));
      break;
    }
    case Kind::kFp8: {
      auto sa = input(g, "scale_a", {1, 1, 1}, {1, 1, 1}, DataType::kFloat32);
      auto sb = input(g, "scale_b", {1, 1, 1}, {1, 1, 1}, DataType::kFloat32);
      d = g.pointwise(g.pointwise(d, sa, PointwiseAttributes().set_mode(PointwiseMode::kMul)), sb,
                      PointwiseAttributes().set_mode(PointwiseMode::kMul));
      break;
    }
    case Kind::kResidualAdd:
    case Kind::kResidualAdds:
      for (int i = 0; i < aux_inputs(kind); ++i) {
        auto x = input(g, aux_name(i), {1, m, n}, {m * n, n, 1}, DataType::kBFloat16);
        d = g.pointwise(d, x, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
      }
      break;
  }
  d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
  d->set_dim({1, m, n}).set_stride({m * n, n, 1});
  if (kind == Kind::kRowAmax) {
    auto amax = g.reduction(d, ReductionAttributes().set_mode(ReductionMode::kAmax));
    amax->set_name("T").set_dim({1, m, 1}).set_stride({m, 1, 1}).set_output(true);
    amax->set_data_type(DataType::kFloat32);
  }
  return g;
}

// --- timing --------------------------------------------------------------------------------

constexpr int kRounds = 9;

// Milliseconds per call of `batch` back-to-back calls (call i gets i), events around them.
double batch_ms(cudaStream_t stream, int batch, const std::function<void(int)>& call) {
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventRecord(e0, stream));
  for (int i = 0; i < batch; ++i) call(i);
  CHECK_CUDA(cudaEventRecord(e1, stream));
  CHECK_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return ms / batch;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median ms per call of each, measured in interleaved batches sized to ~2 ms.
std::pair<double, double> compare(cudaStream_t stream, const std::function<void(int)>& ours,
                                  const std::function<void(int)>& theirs) {
  const double probe = std::max(batch_ms(stream, 3, ours), batch_ms(stream, 3, theirs));
  const int batch = std::clamp(static_cast<int>(std::ceil(2.0 / std::max(probe, 1e-4))), 4, 200);
  std::vector<double> a, b;
  for (int r = 0; r < kRounds; ++r) {
    a.push_back(batch_ms(stream, batch, ours));
    b.push_back(batch_ms(stream, batch, theirs));
  }
  return {median(a), median(b)};
}

// The fastest of cuBLASLt's heuristic algorithms for `call(algo, i)`.
void pick_fastest(Lt& lt, cudaStream_t stream,
                  const std::function<void(const cublasLtMatmulAlgo_t&, int)>& call) {
  double best = 1e30;
  for (const auto& algo : lt.algos) {
    batch_ms(stream, 2, [&](int i) { call(algo, i); });
    const double ms = batch_ms(stream, 5, [&](int i) { call(algo, i); });
    if (ms < best) {
      best = ms;
      lt.algo = algo;
    }
  }
}

// What cuBLASLt's algorithm is: its id, tile (in cuBLASLt's column-major terms: rows of D^T,
// i.e. our N, by our M; cublasLtMatmulTile_t), stages (cublasLtMatmulStages_t), cluster
// (cublasLtClusterShape_t), split-K count and CTA swizzle, as the enums' numbers.
std::string describe_algo(const cublasLtMatmulAlgo_t& algo) {
  // cuBLASLt checks the buffer's size against the attribute's: 4 bytes, or 2 where noted.
  const auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attribute, std::size_t bytes) {
    std::uint32_t value = 0;  // little-endian: a 2-byte attribute lands in the low half
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, bytes, &written) !=
        CUBLAS_STATUS_SUCCESS) {
      return std::string("?");
    }
    return std::to_string(value);
  };
  return "algo " + get(CUBLASLT_ALGO_CONFIG_ID, 4) + " tile " +
         get(CUBLASLT_ALGO_CONFIG_TILE_ID, 4) + " stages " +
         get(CUBLASLT_ALGO_CONFIG_STAGES_ID, 4) + " cluster " +
         get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2) + " inner " +
         get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2) + " splitk " +
         get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4) + " swizzle " +
         get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4) + " option " +
         get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4);
}

// --- one case ------------------------------------------------------------------------------

struct Row {
  std::string name;
  std::int64_t m, n, k;
  double ours_tflops, theirs_tflops;
  std::string ours_config, theirs;
};

struct Bench {
  std::shared_ptr<Device> device;
  std::shared_ptr<Context> context;
  std::unique_ptr<Helpers> helpers;
  cudaStream_t stream = nullptr;
  bool compile_only = false;
  std::string only;
  std::vector<Row> rows;
  // > 0: run() keeps the case going this long and records nothing (the chip's warm-up).
  double warm_up_seconds = 0;
  // Each timed call followed by an empty kernel (--separated): a call's grid then starts only
  // once the one before has finished, whatever launch attributes either library sets.
  bool separated = false;

  std::optional<Plan> plan_of(Graph& g, const KernelTuning& tuning) {
    BuildOptions options{device, context};
    options.tuning = tuning;
    options.engine = Engine::kFused;
    auto plan = build(g, options);
    if (!plan) {
      std::printf("  %s: not built: %s\n", g.name().c_str(), plan.status().message().c_str());
      return std::nullopt;
    }
    return plan.value();
  }

  // Whether --only names this case: any of its '|'-separated texts in the case's label.
  bool selected(const std::string& label) const {
    if (only.empty()) return true;
    for (std::size_t from = 0; from <= only.size();) {
      const std::size_t bar = std::min(only.find('|', from), only.size());
      const std::string text = only.substr(from, bar - from);
      if (!text.empty() && label.find(text) != std::string::npos) return true;
      from = bar + 1;
    }
    return false;
  }

  void run(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k, const std::string& label = "",
           const KernelTuning& tuning = {}) {
    const std::string name = label.empty() ? kind_name(kind) : label;
    if (warm_up_seconds == 0 && !selected(name + " " + std::to_string(m) + "x" + std::to_string(n) +
                                          "x" + std::to_string(k))) {
      return;
    }
    Graph g = make_graph(kind, m, n, k);
    auto plan = plan_of(g, tuning);
    if (!plan) return;
    std::string config = recipe::describe(runtime::PlanAccess::state(*plan).recipe.config);
    if (compile_only) {  // what the case would run, its kernel now in the cache
      std::printf("  %s %lldx%lldx%lld: %s\n", name.c_str(), static_cast<long long>(m),
                  static_cast<long long>(n), static_cast<long long>(k), config.c_str());
      return;
    }
    const bool fp8 = kind == Kind::kFp8;
    const DataType op = fp8 ? DataType::kFp8E4M3 : DataType::kBFloat16;
    const std::size_t op_bytes = fp8 ? 1 : 2;
    const std::size_t set_bytes = (m * k + k * n * (kind == Kind::kGatedMlp ? 2 : 1)) * op_bytes +
                                  aux_inputs(kind) * m * n * 2;
    const int sets = static_cast<int>(
        std::clamp<std::size_t>((200u << 20) / std::max<std::size_t>(set_bytes, 1) + 1, 2, 16));
    struct Set {
      void *a, *b, *b1, *bias, *d, *d0, *d1, *tap, *scale_a, *scale_b;
      std::vector<void*> aux;  // the residual graphs' X0 ..
      BoundPack bound;
    };
    std::vector<Set> s(sets);
    for (auto& x : s) {
      x.a = random_buffer(*helpers, op, m * k);
      x.b = random_buffer(*helpers, op, k * n);
      x.b1 = kind == Kind::kGatedMlp ? random_buffer(*helpers, op, k * n) : nullptr;
      x.bias = random_buffer(*helpers, DataType::kBFloat16, n);
      x.d = device_alloc(m * n * 2);
      const bool unfused_product = kind == Kind::kGatedMlp || kind == Kind::kResidualAdds;
      x.d0 = unfused_product ? device_alloc(m * n * 2) : nullptr;
      x.d1 = kind == Kind::kGatedMlp ? device_alloc(m * n * 2) : nullptr;
      x.tap = device_alloc(m * 4);
      x.scale_a = random_buffer(*helpers, DataType::kFloat32, 1);
      x.scale_b = random_buffer(*helpers, DataType::kFloat32, 1);
      VariantPack pack;
      pack.set("A", x.a).set("B", x.b).set("D", x.d);
      if (kind == Kind::kBiasGelu) pack.set("bias", x.bias);
      if (kind == Kind::kGatedMlp) pack.set("B1", x.b1);
      if (kind == Kind::kRowAmax) pack.set("T", x.tap);
      if (kind == Kind::kFp8) pack.set("scale_a", x.scale_a).set("scale_b", x.scale_b);
      for (int i = 0; i < aux_inputs(kind); ++i) {
        x.aux.push_back(random_buffer(*helpers, DataType::kBFloat16, m * n));
        pack.set(aux_name(i), x.aux.back());
      }
      auto bound = plan->bind(pack);
      CHECK(bound.is_ok(), bound.status().message().c_str());
      x.bound = bound.value();
    }
    // Split K where the call's tiles leave the device mostly idle (the workspace holds it).
    const int splits = runtime::PlanAccess::call(s[0].bound).layout.workspace.split.splits;
    if (splits > 1) config += ", K split " + std::to_string(splits) + " ways";
    const std::uint64_t ws_bytes = plan->workspace_bytes(s[0].bound).value();
    const Workspace ws{ws_bytes ? device_alloc(ws_bytes) : nullptr, ws_bytes};
    const auto gap = [&] {
      if (separated) Helpers::launch(helpers->gap, 1, 32, nullptr, stream);
    };
    const auto ours = [&](int i) {
      const Status st = plan->execute(s[i % sets].bound, ws, stream);
      CHECK(st.is_ok(), st.message().c_str());
      gap();
    };
    Lt lt = make_lt(m, n, k, fp8, kind == Kind::kBiasGelu);
    const auto release = [&] {
      CHECK_CUDA(cudaDeviceSynchronize());
      for (auto& x : s) {
        for (void* p : {x.a, x.b, x.b1, x.bias, x.d, x.d0, x.d1, x.tap, x.scale_a, x.scale_b}) {
          if (p != nullptr) cudaFree(p);
        }
        for (void* p : x.aux) cudaFree(p);
      }
      if (ws.data != nullptr) cudaFree(ws.data);
      cudaFree(lt.workspace);
      cublasLtDestroy(lt.handle);
    };
    std::string theirs_text = "cuBLASLt";
    std::function<void(const cublasLtMatmulAlgo_t&, int)> lt_call;
    switch (kind) {
      case Kind::kPlain:
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          lt_matmul(lt, algo, s[i % sets].a, s[i % sets].b, s[i % sets].d, stream);
        };
        break;
      case Kind::kBiasGelu:
        theirs_text = "cuBLASLt GELU_BIAS epilogue";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          lt_matmul(lt, algo, s[i % sets].a, s[i % sets].b, s[i % sets].d, stream,
                    s[i % sets].bias);
        };
        break;
      case Kind::kFp8:
        theirs_text = "cuBLASLt fp8 (fast accumulation)";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          lt_matmul(lt, algo, s[i % sets].a, s[i % sets].b, s[i % sets].d, stream, nullptr,
                    static_cast<const float*>(s[i % sets].scale_a),
                    static_cast<const float*>(s[i % sets].scale_b));
        };
        break;
      case Kind::kGatedMlp:
        theirs_text = "2 cuBLASLt GEMMs + silu*mul kernel";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          Set& x = s[i % sets];
          lt_matmul(lt, algo, x.a, x.b, x.d0, stream);
          lt_matmul(lt, algo, x.a, x.b1, x.d1, stream);
          unsigned long long n8 = static_cast<unsigned long long>(m * n / 8);
          void* params[] = {&x.d0, &x.d1, &x.d, &n8};
          Helpers::launch(helpers->silu_mul, 132 * 8, 256, params, stream);
        };
        break;
      case Kind::kRowAmax:
        theirs_text = "cuBLASLt GEMM + row-amax kernel";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          Set& x = s[i % sets];
          lt_matmul(lt, algo, x.a, x.b, x.d, stream);
          long long n8 = n / 8;
          void* params[] = {&x.d, &x.tap, &n8};
          Helpers::launch(helpers->row_amax, static_cast<unsigned>(m), 256, params, stream);
        };
        break;
      case Kind::kResidualAdd:
        theirs_text = "cuBLASLt with X as C (beta 1)";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          Set& x = s[i % sets];
          lt_matmul(lt, algo, x.a, x.b, x.d, stream, nullptr, nullptr, nullptr, x.aux[0]);
        };
        break;
      case Kind::kResidualAdds:
        theirs_text = "cuBLASLt GEMM + a 6-input add kernel";
        lt_call = [&](const cublasLtMatmulAlgo_t& algo, int i) {
          Set& x = s[i % sets];
          lt_matmul(lt, algo, x.a, x.b, x.d0, stream);
          unsigned long long n8 = static_cast<unsigned long long>(m * n / 8);
          void* params[] = {&x.d0,     &x.aux[0], &x.aux[1], &x.aux[2], &x.aux[3],
                            &x.aux[4], &x.aux[5], &x.d,      &n8};
          Helpers::launch(helpers->add6, 132 * 8, 256, params, stream);
        };
        break;
    }
    pick_fastest(lt, stream, lt_call);
    theirs_text += " (" + describe_algo(lt.algo) + ")";
    const auto theirs = [&](int i) {
      lt_call(lt.algo, i);
      gap();
    };
    const auto warm_until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(warm_up_seconds);
    while (std::chrono::steady_clock::now() < warm_until) (void)compare(stream, ours, theirs);
    const auto [ours_ms, theirs_ms] = compare(stream, ours, theirs);
    const double flop = 2.0 * m * n * k * (kind == Kind::kGatedMlp ? 2 : 1);
    Row row{name, m, n, k, flop / (ours_ms * 1e9), flop / (theirs_ms * 1e9), config, theirs_text};
    if (warm_up_seconds > 0) return release();
    std::printf("| %s | %lld | %lld | %lld | %.0f | %.0f | %.2fx | %s | %s |\n", row.name.c_str(),
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                row.ours_tflops, row.theirs_tflops, row.ours_tflops / row.theirs_tflops,
                config.c_str(), theirs_text.c_str());
    std::fflush(stdout);
    rows.push_back(row);
    release();
  }
};

KernelTuning tuned(int tile_m, int tile_n, int cluster_m, int cluster_n, bool pdl = false,
                   bool ping_pong = false) {
  KernelTuning t;
  t.tile_m = tile_m;
  t.tile_n = tile_n;
  t.split_n = tile_m == 64 && !ping_pong;  // a 64-row tile's consumers take column halves
  t.ping_pong = ping_pong;
  t.cluster_m = cluster_m;
  t.cluster_n = cluster_n;
  t.dependent_launch = pdl;
  return t;
}

KernelTuning staged(KernelTuning t, int buffers) {
  t.staging_buffers = buffers;
  return t;
}

KernelTuning unborrowed(KernelTuning t) {
  t.borrow_staging = false;
  return t;
}

// One --case: what to run, the tuning (none: the model's pick) and its label.
struct NamedCase {
  Kind kind;
  std::int64_t m, n, k;
  std::optional<KernelTuning> tuning;
  std::string label;
};

// A decimal number of 1 to `max` at the front of `text`, consumed (digits only: no sign,
// space or overflow gets through).
std::optional<long long> take_number(std::string_view& text, long long max) {
  long long value = 0;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    value = value * 10 + (text[digits] - '0');
    if (value > max) return std::nullopt;
    ++digits;
  }
  if (digits == 0 || value < 1) return std::nullopt;
  text.remove_prefix(digits);
  return value;
}

// "AxB" at the front of `text`, each of 1 to `max`, consumed.
std::optional<std::pair<long long, long long>> take_pair(std::string_view& text, long long max) {
  const auto a = take_number(text, max);
  if (!a || text.empty() || text.front() != 'x') return std::nullopt;
  text.remove_prefix(1);
  const auto b = take_number(text, max);
  if (!b) return std::nullopt;
  return std::pair{*a, *b};
}

std::optional<NamedCase> parse_case(const std::string& argument) {
  std::string_view text = argument;
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  NamedCase c{};
  const std::string kind(text.substr(0, colon));
  bool known = false;
  for (const Kind k : {Kind::kPlain, Kind::kBiasGelu, Kind::kGatedMlp, Kind::kRowAmax, Kind::kFp8,
                       Kind::kResidualAdd, Kind::kResidualAdds}) {
    if (kind == kind_name(k)) {
      c.kind = k;
      known = true;
    }
  }
  text.remove_prefix(colon + 1);
  constexpr long long kMaxExtent = 65536;
  const auto mn = take_pair(text, kMaxExtent);
  if (!known || !mn || text.empty() || text.front() != 'x') return std::nullopt;
  text.remove_prefix(1);
  const auto k = take_number(text, kMaxExtent);
  if (!k) return std::nullopt;
  c.m = mn->first;
  c.n = mn->second;
  c.k = *k;
  if (text.empty()) {
    c.label = kind + " case (the model's)";
    return c;
  }
  if (text.front() != ':') return std::nullopt;
  text.remove_prefix(1);
  c.label = kind + " case " + std::string(text);
  const bool ping_pong = text.substr(0, 2) == "pp";
  if (ping_pong) text.remove_prefix(2);
  // Any tile up to 1024 a side: the library says which ones it builds.
  const auto tile = take_pair(text, 1024);
  if (!tile) return std::nullopt;
  c.tuning =
      tuned(static_cast<int>(tile->first), static_cast<int>(tile->second), 2, 1, false, ping_pong);
  if (!text.empty() && text.front() == 'c') {
    text.remove_prefix(1);
    const auto cluster = take_pair(text, 2);
    if (!cluster) return std::nullopt;
    c.tuning->cluster_m = static_cast<int>(cluster->first);
    c.tuning->cluster_n = static_cast<int>(cluster->second);
  }
  if (!text.empty() && text.front() == 'r') {
    text.remove_prefix(1);
    const auto stages = take_number(text, 16);
    if (!stages) return std::nullopt;
    c.tuning->stages = static_cast<int>(*stages);
  }
  if (!text.empty() && text.front() == 's') {
    text.remove_prefix(1);
    const auto buffers = take_number(text, 8);
    if (!buffers) return std::nullopt;
    c.tuning = staged(*c.tuning, static_cast<int>(*buffers));
  }
  if (text.substr(0, 2) == "a0") {  // the aux read from global memory
    text.remove_prefix(2);
    c.tuning->aux_buffers = 0;
  } else if (!text.empty() && text.front() == 'a') {
    text.remove_prefix(1);
    const auto buffers = take_number(text, 4);
    if (!buffers) return std::nullopt;
    c.tuning->aux_buffers = static_cast<int>(*buffers);
  }
  if (text == "nb") {
    c.tuning = unborrowed(*c.tuning);
    text.remove_prefix(2);
  }
  if (!text.empty()) return std::nullopt;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path;
  bool quick = false;
  int compile_only_sms = 0;
  double warm_up = 5;
  std::vector<NamedCase> cases;
  Bench bench;
  // Every usage error exits with 2 and says what the option takes: a missing value is one
  // (it is never read as the CSV path), so is an unknown option or a second path.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--only") {
      CHECK(i + 1 < argc, "--only TEXT: the text of the cases to run");
      bench.only = argv[++i];
    } else if (arg == "--separated") {
      bench.separated = true;
    } else if (arg == "--warm-up") {
      // Seconds of 0 to 600 (a whole number or not).
      constexpr const char* kUsage = "--warm-up SECONDS: a number from 0 to 600";
      CHECK(i + 1 < argc, kUsage);
      const char* text = argv[++i];
      char* end = nullptr;
      warm_up = std::strtod(text, &end);
      CHECK(end != text && *end == '\0' && warm_up >= 0 && warm_up <= 600, kUsage);
    } else if (arg == "--compile-only") {
      constexpr const char* kUsage =
          "--compile-only SM_COUNT: a multiprocessor count from 1 to 1024";
      CHECK(i + 1 < argc, kUsage);
      const char* text = argv[++i];
      char* end = nullptr;
      const long sms = std::strtol(text, &end, 10);
      CHECK(end != text && *end == '\0' && sms >= 1 && sms <= 1024, kUsage);
      compile_only_sms = static_cast<int>(sms);
    } else if (arg == "--case") {
      constexpr const char* kUsage =
          "--case KIND:MxNxK[:TILE]: KIND bf16, bias+gelu_tanh, gated_mlp, gemm+row_amax, "
          "fp8_e4m3, residual_add or residual_adds6; extents 1 to 65536; TILE RxC or ppRxC, then "
          "cMxN for the "
          "cluster (default "
          "2x1), rS for S ring stages, sB for B staging buffers, aB for B buffers a loaded aux (0: "
          "none), "
          "nb for none borrowed (e.g. 128x256, pp64x256, pp128x160s2, pp128x128c1x2r6, "
          "128x256nb, 128x128a2)";
      CHECK(i + 1 < argc, kUsage);
      const auto c = parse_case(argv[++i]);
      CHECK(c.has_value(), kUsage);
      cases.push_back(*c);
    } else {
      CHECK(arg.rfind("--", 0) != 0,
            "unknown option; usage: device_throughput [CSV path] [--quick] [--only TEXT] "
            "[--warm-up SECONDS] [--separated] [--compile-only SM_COUNT] "
            "[--case KIND:MxNxK[:TILE]]...");
      CHECK(csv_path.empty(), "one CSV path at most");
      csv_path = arg;
    }
  }
  auto context = Context::create();
  CHECK(context.is_ok(), context.status().message().c_str());
  bench.context = context.value();
  if (compile_only_sms > 0) {
    bench.device = make_compile_only_device(compile_only_sms);
    bench.compile_only = true;
  } else {
    auto device = make_cuda_device(0);
    if (!device) {
      std::printf("no CUDA device: %s\n", device.status().message().c_str());
      return 0;
    }
    bench.device = device.value();
    CHECK_CUDA(cudaFree(nullptr));  // the runtime's primary context, the one fusedgemm uses
    CHECK_CUDA(cudaStreamCreateWithFlags(&bench.stream, cudaStreamNonBlocking));
    bench.helpers = std::make_unique<Helpers>(*bench.context);
  }
  std::printf(
      "| case | M | N | K | fusedgemm TFLOP/s | cuBLASLt TFLOP/s | ratio | kernel | baseline |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<std::int64_t> squares =
      quick ? std::vector<std::int64_t>{4096, 8192}
            : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  // The headline cases; run again at the end of a full run, because the same kernel pair
  // measures a few hundredths apart as the chip warms under its power cap (METHOD.md: a
  // difference smaller than the spread of two timings of one version is noise).
  const auto headline = [&](const std::string& suffix) {
    const auto run = [&](Kind kind, std::int64_t m, std::int64_t n, std::int64_t k) {
      bench.run(kind, m, n, k, kind_name(kind) + suffix);
    };
    for (const std::int64_t s : squares) run(Kind::kPlain, s, s, s);
    run(Kind::kBiasGelu, 8192, 8192, 8192);
    run(Kind::kBiasGelu, 4096, 11008, 4096);
    run(Kind::kGatedMlp, 8192, 8192, 8192);
    run(Kind::kRowAmax, 8192, 8192, 8192);
    // At K = 1024 the unfused sequence's extra memory traffic (the intermediates written
    // and read again) is a fifth of its time, not a few hundredths: where fusing can pay.
    run(Kind::kGatedMlp, 8192, 8192, 1024);
    run(Kind::kRowAmax, 8192, 8192, 1024);
    run(Kind::kFp8, 8192, 8192, 8192);
    if (!quick) run(Kind::kFp8, 4096, 4096, 4096);
  };
  // The headline, the kernel variants and the LLM shapes: a run without --case.
  const auto run_fixed_lists = [&] {
    // Kernel variants beside the cost model's pick.
    bench.run(Kind::kPlain, 2048, 2048, 2048, "bf16 128x256 cluster 2x1", tuned(128, 256, 2, 1));
    bench.run(Kind::kPlain, 2048, 2048, 2048, "bf16 64x256 ping-pong cluster 2x1",
              tuned(64, 256, 2, 1, false, true));
    for (const std::int64_t s : {4096, 8192}) {
      bench.run(Kind::kPlain, s, s, s, "bf16 128x256 no cluster", tuned(128, 256, 1, 1));
      bench.run(Kind::kPlain, s, s, s, "bf16 128x256 cluster 1x2", tuned(128, 256, 1, 2));
      bench.run(Kind::kPlain, s, s, s, "bf16 128x256 cluster 2x1", tuned(128, 256, 2, 1));
      bench.run(Kind::kPlain, s, s, s, "bf16 256x128 cluster 2x1", tuned(256, 128, 2, 1));
      bench.run(Kind::kPlain, s, s, s, "bf16 128x128 cluster 2x1", tuned(128, 128, 2, 1));
      bench.run(Kind::kPlain, s, s, s, "bf16 128x256 cluster 2x1 PDL", tuned(128, 256, 2, 1, true));
      bench.run(Kind::kPlain, s, s, s, "bf16 128x128 ping-pong cluster 2x1",
                tuned(128, 128, 2, 1, false, true));
      bench.run(Kind::kPlain, s, s, s, "bf16 64x256 ping-pong cluster 2x1",
                tuned(64, 256, 2, 1, false, true));
    }
    for (const auto& [m, n, k] :
         {std::tuple<std::int64_t, std::int64_t, std::int64_t>{8192, 8192, 8192},
          {4096, 11008, 4096}}) {
      bench.run(Kind::kBiasGelu, m, n, k, "bias+gelu_tanh 128x128 ping-pong cluster 2x1",
                tuned(128, 128, 2, 1, false, true));
      bench.run(Kind::kBiasGelu, m, n, k, "bias+gelu_tanh 64x256 ping-pong cluster 2x1",
                tuned(64, 256, 2, 1, false, true));
    }
    // The wide N of an LLM's up projection (43 tiles of 256 columns), where plain and bias +
    // GELU measured 0.90-0.93 of cuBLASLt while 4096^3 measured 0.99: every tile of the model
    // beside its pick.
    for (const Kind kind : {Kind::kPlain, Kind::kBiasGelu}) {
      const std::string name = std::string(kind_name(kind)) + " 4096x11008";
      bench.run(kind, 4096, 11008, 4096, name + " 128x256 cluster 2x1", tuned(128, 256, 2, 1));
      bench.run(kind, 4096, 11008, 4096, name + " 128x256 cluster 1x2", tuned(128, 256, 1, 2));
      bench.run(kind, 4096, 11008, 4096, name + " 256x128 cluster 2x1", tuned(256, 128, 2, 1));
      bench.run(kind, 4096, 11008, 4096, name + " 128x192 cluster 2x1", tuned(128, 192, 2, 1));
      bench.run(kind, 4096, 11008, 4096, name + " 128x256 cluster 2x1 unborrowed",
                unborrowed(tuned(128, 256, 2, 1)));
    }
    // The cost model's pick beside the tiles it weighs against each other, pass after pass in
    // one process (docs/PERF.md runs 26-29): the shared 128x256 tile (borrowing staging),
    // 128x192 with a staging buffer for each of its unit's three sub-tiles (no stage lost,
    // none borrowed), ping-pong 64x256; and where the refit after run 26 moved the pick, the
    // pick before it.
    struct Alternative {
      const char* label;
      KernelTuning tuning;
    };
    const Alternative shared_256{"128x256 cluster 2x1", tuned(128, 256, 2, 1)};
    const Alternative shared_192{"128x192 cluster 2x1 3 staging buffers",
                                 staged(tuned(128, 192, 2, 1), 3)};
    const Alternative ping_pong_256{"ping-pong 64x256 cluster 2x1",
                                    tuned(64, 256, 2, 1, false, true)};
    const Alternative shared_128{"128x128 cluster 2x1", tuned(128, 128, 2, 1)};
    // 160 accumulators a consumer: the model's for plain GEMMs up to K = 4096 since the
    // refit of its shared-memory terms (docs/PERF.md run 39); ping-pong 128x128 is where
    // that refit took bias + GELU and fp8 at short K.
    const Alternative ping_pong_160{"ping-pong 128x160 cluster 2x1",
                                    tuned(128, 160, 2, 1, false, true)};
    const Alternative ping_pong_128x128{"ping-pong 128x128 cluster 2x1",
                                        tuned(128, 128, 2, 1, false, true)};
    struct PickCheck {
      Kind kind;
      std::int64_t m, n, k;
      std::vector<Alternative> others;
    };
    const std::vector<PickCheck> checks = {
        {Kind::kPlain, 16384, 16384, 16384, {shared_256, shared_192, ping_pong_256}},
        {Kind::kPlain, 8192, 8192, 8192, {shared_256, shared_192, ping_pong_256}},
        {Kind::kPlain, 4096, 11008, 4096, {shared_256, shared_192, ping_pong_256, ping_pong_160}},
        {Kind::kPlain, 8192, 8192, 1024, {shared_256, shared_192, ping_pong_256}},
        {Kind::kPlain, 8192, 8192, 512, {shared_256, shared_192, ping_pong_256}},
        {Kind::kBiasGelu, 8192, 8192, 8192, {shared_256, shared_192, ping_pong_256}},
        {Kind::kBiasGelu, 4096, 11008, 4096, {shared_256, shared_192, ping_pong_256}},
        {Kind::kRowAmax,
         8192,
         8192,
         1024,
         {shared_256, shared_192, ping_pong_256, ping_pong_128x128}},
        {Kind::kBiasGelu, 4096, 14336, 4096, {shared_256, ping_pong_256}},
        {Kind::kGatedMlp, 128, 4096, 4096, {{"128x64 cluster 1x2", tuned(128, 64, 1, 2)}}},
        {Kind::kPlain, 128, 11008, 4096, {{"128x128 cluster 1x2", tuned(128, 128, 1, 2)}}},
        {Kind::kPlain, 512, 4096, 4096, {shared_128}},
        {Kind::kFp8, 8192, 8192, 1024, {shared_256}},
        {Kind::kGatedMlp,
         2048,
         11008,
         4096,
         {{"ping-pong 64x128 cluster 2x1", tuned(64, 128, 2, 1, false, true)}}},
    };
    const auto run_checks = [&](const std::vector<PickCheck>& list, const char* what, int passes) {
      for (int pass = 0; pass < passes; ++pass) {
        for (const PickCheck& c : list) {
          const std::string name = std::string(kind_name(c.kind)) + " " + what + " " +
                                   std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                                   std::to_string(c.k);
          bench.run(c.kind, c.m, c.n, c.k, name + " (the model's)");
          for (const Alternative& a : c.others) {
            bench.run(c.kind, c.m, c.n, c.k, name + " " + a.label, a.tuning);
          }
        }
      }
    };
    run_checks(checks, "pick check", 2);
    // The LLM projections at every M of the sweep below, the model's pick beside the tiles it
    // weighs: where another one wins by more than the passes' noise, the model is wrong there.
    std::vector<PickCheck> llm;
    for (const std::int64_t m : {128, 512, 2048, 4096, 8192}) {
      for (const auto& [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096},
                                 {11008, 4096},
                                 {4096, 11008},
                                 {14336, 4096}}) {
        llm.push_back(
            {Kind::kPlain, m, n, k, {shared_256, shared_128, ping_pong_256, ping_pong_160}});
      }
    }
    run_checks(llm, "LLM pick", 1);
    // The issue's other target cases, the model's pick beside one alternative each.
    const Alternative ping_pong_128{"ping-pong 64x128 cluster 2x1",
                                    tuned(64, 128, 2, 1, false, true)};
    run_checks({{Kind::kPlain, 4096, 4096, 4096, {ping_pong_256}},
                {Kind::kPlain, 2048, 2048, 2048, {ping_pong_256}},
                {Kind::kPlain, 1024, 1024, 1024, {shared_128}},
                {Kind::kGatedMlp, 8192, 8192, 8192, {ping_pong_128}},
                {Kind::kGatedMlp, 8192, 8192, 1024, {shared_128}},
                {Kind::kRowAmax, 8192, 8192, 8192, {ping_pong_256}},
                {Kind::kFp8, 8192, 8192, 8192, {ping_pong_256}},
                {Kind::kFp8, 4096, 4096, 4096, {ping_pong_256}}},
               "target pick", 2);
    // The gated MLP on the tiles the model chooses between: consumers sharing 128x128, or
    // ping-pong 64x128 (the silu * mul epilogue behind the other consumer's MMAs).
    for (const std::int64_t k : {1024, 8192}) {
      bench.run(Kind::kGatedMlp, 8192, 8192, k, "gated_mlp 128x128 cluster 2x1",
                tuned(128, 128, 2, 1));
      bench.run(Kind::kGatedMlp, 8192, 8192, k, "gated_mlp 64x128 ping-pong cluster 2x1",
                tuned(64, 128, 2, 1, false, true));
    }
    bench.run(Kind::kPlain, 1024, 1024, 1024, "bf16 64x128 split N cluster 2x1",
              tuned(64, 128, 2, 1));
    bench.run(Kind::kPlain, 1024, 1024, 1024, "bf16 64x128 ping-pong cluster 2x1",
              tuned(64, 128, 2, 1, false, true));
    bench.run(Kind::kRowAmax, 8192, 8192, 1024, "gemm+row_amax ping-pong 64x256 cluster 2x1",
              tuned(64, 256, 2, 1, false, true));
    bench.run(Kind::kRowAmax, 8192, 8192, 1024, "gemm+row_amax ping-pong 64x128 cluster 2x1",
              tuned(64, 128, 2, 1, false, true));
    bench.run(Kind::kRowAmax, 8192, 8192, 1024, "gemm+row_amax ping-pong 128x128 cluster 2x1",
              tuned(128, 128, 2, 1, false, true));
    bench.run(Kind::kRowAmax, 8192, 8192, 1024, "gemm+row_amax 128x128 cluster 2x1",
              tuned(128, 128, 2, 1));
    bench.run(Kind::kRowAmax, 8192, 8192, 1024, "gemm+row_amax 128x256 cluster 2x1",
              tuned(128, 256, 2, 1));
    // The same GEMM without the tap: what the tap costs on each tile, beside cuBLASLt's plain.
    bench.run(Kind::kPlain, 8192, 8192, 1024, "bf16 (no tap) ping-pong 64x256 cluster 2x1",
              tuned(64, 256, 2, 1, false, true));
    bench.run(Kind::kPlain, 8192, 8192, 1024, "bf16 (no tap) 128x256 cluster 2x1",
              tuned(128, 256, 2, 1));
    // The plain GEMM at K = 1024 ran 0.75-0.79 of cuBLASLt on both tiles above (docs/PERF.md
    // run 22) where K = 8192 runs even: the other tiles and clusters beside them.
    for (const auto& [label, tuning] :
         {std::pair<const char*, KernelTuning>{"256x128 cluster 2x1", tuned(256, 128, 2, 1)},
          {"128x192 cluster 2x1", tuned(128, 192, 2, 1)},
          {"128x256 cluster 1x2", tuned(128, 256, 1, 2)},
          {"128x256 no cluster", tuned(128, 256, 1, 1)},
          {"128x128 ping-pong cluster 2x1", tuned(128, 128, 2, 1, false, true)},
          // As many staging buffers as a unit has sub-tiles: no epilogue waits for its own
          // stores (docs/PERF.md run 23), at the cost of ring stages.
          {"128x256 cluster 2x1 4 staging buffers", staged(tuned(128, 256, 2, 1), 4)},
          {"ping-pong 64x256 cluster 2x1 4 staging buffers",
           staged(tuned(64, 256, 2, 1, false, true), 4)},
          {"128x192 cluster 2x1 3 staging buffers", staged(tuned(128, 192, 2, 1), 3)}}) {
      bench.run(Kind::kPlain, 8192, 8192, 1024, std::string("bf16 K=1024 ") + label, tuning);
    }
    // K from 128 to 2048 at 8192 x 8192 (shared 128x256 tiles, with and without staging
    // borrowed from the ring, and ping-pong 64x256): time = a fixed cost per tile + K's steps,
    // for ours and cuBLASLt, so the fixed cost (epilogue, hand-off) reads off.
    for (const std::int64_t k : {128, 256, 512, 1024, 2048}) {
      bench.run(Kind::kPlain, 8192, 8192, k, "bf16 K sweep 128x256 cluster 2x1",
                tuned(128, 256, 2, 1));
      bench.run(Kind::kPlain, 8192, 8192, k, "bf16 K sweep 128x256 cluster 2x1 unborrowed",
                unborrowed(tuned(128, 256, 2, 1)));
      bench.run(Kind::kPlain, 8192, 8192, k, "bf16 K sweep ping-pong 64x256 cluster 2x1",
                tuned(64, 256, 2, 1, false, true));
    }
    for (const std::int64_t s : {4096, 8192}) {
      bench.run(Kind::kFp8, s, s, s, "fp8_e4m3 128x256 cluster 2x1", tuned(128, 256, 2, 1));
      bench.run(Kind::kFp8, s, s, s, "fp8_e4m3 128x256 no cluster", tuned(128, 256, 1, 1));
      bench.run(Kind::kFp8, s, s, s, "fp8_e4m3 128x128 ping-pong cluster 2x1",
                tuned(128, 128, 2, 1, false, true));
      bench.run(Kind::kFp8, s, s, s, "fp8_e4m3 64x256 ping-pong cluster 2x1",
                tuned(64, 256, 2, 1, false, true));
    }
    if (!quick) {
      for (const std::int64_t m : {16, 128, 512, 4096, 8192}) {
        for (const auto& [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096},
                                   {11008, 4096},
                                   {4096, 11008},
                                   {14336, 4096}}) {
          bench.run(Kind::kPlain, m, n, k, "bf16 LLM");
        }
      }
      // Decode-size M beside the cost model's pick: wider or unclustered 64-row tiles give
      // split K other unit counts.
      for (const auto& [n, k] :
           {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {11008, 4096}}) {
        bench.run(Kind::kPlain, 16, n, k, "bf16 decode 64x256 cluster 1x2", tuned(64, 256, 1, 2));
        bench.run(Kind::kPlain, 16, n, k, "bf16 decode 64x256 no cluster", tuned(64, 256, 1, 1));
        bench.run(Kind::kPlain, 16, n, k, "bf16 decode 64x128 no cluster", tuned(64, 128, 1, 1));
        bench.run(Kind::kPlain, 16, n, k, "bf16 decode 64x128 split N cluster 1x2",
                  tuned(64, 128, 1, 2));
        bench.run(Kind::kPlain, 16, n, k, "bf16 decode 64x128 ping-pong cluster 1x2",
                  tuned(64, 128, 1, 2, false, true));
      }
      bench.run(Kind::kPlain, 128, 4096, 4096, "bf16 decode 64x128 split N cluster 2x1",
                tuned(64, 128, 2, 1));
      bench.run(Kind::kPlain, 128, 4096, 4096, "bf16 decode 64x128 ping-pong cluster 2x1",
                tuned(64, 128, 2, 1, false, true));
      headline(" (again)");
    }
  };
  // Five seconds of the largest square first, so the first rows meet the chip as the later
  // ones do: warm, at its power cap (METHOD.md: warm up first).
  if (!bench.compile_only && warm_up > 0) {
    bench.warm_up_seconds = warm_up;
    bench.run(Kind::kPlain, 8192, 8192, 8192);
    bench.warm_up_seconds = 0;
  }
  // --case runs its cases in place of the fixed lists; either way the rows go to the CSV.
  for (const NamedCase& c : cases) {
    bench.run(c.kind, c.m, c.n, c.k, c.label, c.tuning.value_or(KernelTuning{}));
  }
  if (cases.empty()) run_fixed_lists();
  if (!csv_path.empty() && !bench.compile_only) {
    FILE* f = std::fopen(csv_path.c_str(), "w");
    CHECK(f != nullptr, "open the CSV");
    std::fprintf(f, "case,m,n,k,fusedgemm_tflops,baseline_tflops,ratio,kernel,baseline\n");
    for (const Row& r : bench.rows) {
      std::fprintf(f, "%s,%lld,%lld,%lld,%.1f,%.1f,%.3f,\"%s\",%s\n", r.name.c_str(),
                   static_cast<long long>(r.m), static_cast<long long>(r.n),
                   static_cast<long long>(r.k), r.ours_tflops, r.theirs_tflops,
                   r.ours_tflops / r.theirs_tflops, r.ours_config.c_str(), r.theirs.c_str());
    }
    std::fclose(f);
  }
  return 0;
}
