#include "runtime/host_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

using namespace fusedgemm;

namespace {

double gelu_tanh(double x) {
  const double u = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1 + std::tanh(u));
}

double silu(double x, double beta) {
  return x / (1 + std::exp(-beta * x));
}

float apply(const PointwiseAttributes& pw, float x) {
  return runtime::apply(pw, &x);
}

// The points: a random spread over [-30, 30] (past where tanh saturates either way), the
// tiny, zero and the magnitudes where x^2 overflows.
std::vector<float> points() {
  std::mt19937 rng(0x9e11);
  std::uniform_real_distribution<float> spread(-30.0f, 30.0f);
  std::vector<float> xs = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-3f, -1e-3f, 1e20f, -1e20f};
  for (int i = 0; i < 20000; ++i) xs.push_back(spread(rng));
  return xs;
}

}  // namespace

// gelu_tanh and silu are evaluated as h + h * tanh(...), h = x / 2 (the kernel's one-SFU
// form, kernels/pointwise.cuh): the host's fp32 result stays within a few fp32 ulp of |x|
// of the fp64 formula — the rewrite's constants and its saturation are the formula's.
TEST(HostMath, GeluTanhAndSiluHalfPlusHalfTanhIsTheFormula) {
  const auto gelu = PointwiseAttributes().set_mode(PointwiseMode::kGeluTanh);
  const auto silu1 = PointwiseAttributes().set_mode(PointwiseMode::kSilu);
  const auto silu2 = PointwiseAttributes().set_mode(PointwiseMode::kSilu).set_swish_beta(1.7f);
  const double ulp = std::ldexp(1.0, -24);
  for (const float x : points()) {
    const double bound = 8 * ulp * std::fabs(x);
    EXPECT_NEAR(apply(gelu, x), gelu_tanh(x), bound) << "gelu_tanh(" << x << ")";
    EXPECT_NEAR(apply(silu1, x), silu(x, 1.0), bound) << "silu(" << x << ")";
    EXPECT_NEAR(apply(silu2, x), silu(x, 1.7), bound) << "silu beta 1.7 (" << x << ")";
  }
  // The limits: x at +inf, NaN through; -inf gives NaN (-inf + inf), as the fp64
  // reference's -inf * 0 (docs/SEMANTICS.md).
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(apply(gelu, inf), inf);
  EXPECT_EQ(apply(silu1, inf), inf);
  EXPECT_TRUE(std::isnan(apply(gelu, -inf)));
  EXPECT_TRUE(std::isnan(apply(silu1, -inf)));
  EXPECT_TRUE(std::isnan(apply(gelu, std::numeric_limits<float>::quiet_NaN())));
}
