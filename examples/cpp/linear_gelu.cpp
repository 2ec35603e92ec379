// y = gelu(x @ w^T + b) with fusedgemm's public API: build the graph, build a plan, execute it
// on random bf16 inputs and check it against a double-precision loop. It runs on the host
// device, so it runs anywhere; on a GPU, build with make_cuda_device() and pass device
// memory (the plan and the call are otherwise the same).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "fusedgemm/device.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/plan.h"
#include "fusedgemm/version.h"

using namespace fusedgemm;

namespace {

// bf16 is the upper half of an fp32, rounded to nearest even.
std::uint16_t to_bf16(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16(std::uint16_t code) {
  const std::uint32_t bits = std::uint32_t{code} << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

int main() {
  constexpr std::int64_t M = 96, N = 160, K = 64;
  Graph graph;
  graph.set_name("linear_gelu");
  auto x = graph.tensor(TensorAttributes()
                            .set_name("X")
                            .set_dim({1, M, K})
                            .set_stride({M * K, K, 1})
                            .set_data_type(DataType::kBFloat16));
  // nn.Linear's weight [N, K] is B = w^T, K-major.
  auto w = graph.tensor(TensorAttributes()
                            .set_name("W")
                            .set_dim({1, K, N})
                            .set_stride({K * N, 1, K})
                            .set_data_type(DataType::kBFloat16));
  auto b = graph.tensor(
      TensorAttributes().set_name("bias").set_dim({1, 1, N}).set_stride({N, N, 1}).set_data_type(
          DataType::kBFloat16));
  auto sum =
      graph.pointwise(graph.matmul(x, w), b, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  auto y = graph.pointwise(sum, PointwiseAttributes().set_mode(PointwiseMode::kGeluErf));
  y->set_output(true).set_name("Y").set_data_type(DataType::kFloat32);

  Result<Plan> plan = build(graph, BuildOptions(make_host_device()));
  if (!plan) {
    std::fprintf(stderr, "build: %s\n", plan.status().message().c_str());
    return 1;
  }

  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::uint16_t> xs(M * K), ws(N * K), bs(N);
  for (auto* v : {&xs, &ws, &bs}) {
    for (auto& e : *v) e = to_bf16(uniform(rng));
  }
  std::vector<float> ys(M * N, std::nanf(""));  // poisoned: every element must be written

  VariantPack pack;
  pack.set(x, xs.data()).set(w, ws.data()).set(b, bs.data()).set(y, ys.data());
  if (const Status s = plan->execute(pack, {}, nullptr); !s) {
    std::fprintf(stderr, "execute: %s\n", s.message().c_str());
    return 1;
  }

  double err = 0.0, norm = 0.0;
  for (std::int64_t m = 0; m < M; ++m) {
    for (std::int64_t n = 0; n < N; ++n) {
      double acc = from_bf16(bs[n]);
      for (std::int64_t k = 0; k < K; ++k) {
        acc += double{from_bf16(xs[m * K + k])} * from_bf16(ws[n * K + k]);
      }
      const double ref = 0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0)));
      const double got = ys[m * N + n];
      err += (got - ref) * (got - ref);
      norm += ref * ref;
    }
  }
  const double rel = std::sqrt(err / norm);
  std::printf("fusedgemm %s: %s\n  %lldx%lldx%lld, relative error %.2e against fp64\n",
              version().data(), plan->describe().c_str(), static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(K), rel);
  return std::isfinite(rel) && rel < 1e-3 ? 0 : 1;
}
