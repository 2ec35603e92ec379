#include "runtime/host_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusedgemm::runtime {
namespace {

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

}  // namespace

float apply(const PointwiseAttributes& pw, const float* in) {
  const float x = in[0];
  switch (pw.mode) {
    case PointwiseMode::kIdentity: return x;
    case PointwiseMode::kRelu: {
      const float lower = pw.relu_lower_clip.value_or(0.0f);
      const float upper = pw.relu_upper_clip.value_or(std::numeric_limits<float>::infinity());
      const float slope = pw.relu_lower_clip_slope.value_or(0.0f);
      return x > lower ? std::min(x, upper) : lower + slope * (x - lower);
    }
    case PointwiseMode::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case PointwiseMode::kGeluTanh: {
      // 0.5 x (1 + tanh(u)) as h + h tanh(x (a + b x^2)), h = x / 2, as the kernel
      // evaluates it (kernels/pointwise.cuh; its tanh is the SFU's, within 2^-11).
      const float half = 0.5f * x;
      return std::fma(
          half, std::tanh(x * std::fma(0.035677408136300125f, x * x, 0.79788456080286536f)), half);
    }
    case PointwiseMode::kSilu: {
      // x sigmoid(beta x) as h + h tanh(beta h), h = x / 2 (kernels/pointwise.cuh).
      const float half = 0.5f * x;
      return std::fma(half, std::tanh(pw.swish_beta.value_or(1.0f) * half), half);
    }
    case PointwiseMode::kSigmoid: return sigmoid(x);
    case PointwiseMode::kTanh: return std::tanh(x);
    case PointwiseMode::kExp: return std::exp(x);
    case PointwiseMode::kLog: return std::log(x);
    case PointwiseMode::kAbs: return std::fabs(x);
    case PointwiseMode::kNeg: return -x;
    case PointwiseMode::kSqrt: return std::sqrt(x);
    case PointwiseMode::kRsqrt: return 1.0f / std::sqrt(x);
    case PointwiseMode::kReciprocal: return 1.0f / x;
    case PointwiseMode::kSquare: return x * x;
    case PointwiseMode::kAdd: return x + in[1];
    case PointwiseMode::kSub: return x - in[1];
    case PointwiseMode::kMul: return x * in[1];
    case PointwiseMode::kDiv: return x / in[1];
    case PointwiseMode::kMax: return std::fmax(x, in[1]);
    case PointwiseMode::kMin: return std::fmin(x, in[1]);
    case PointwiseMode::kPow: return std::pow(x, in[1]);
    case PointwiseMode::kCmpGt: return x > in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kCmpGe: return x >= in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kCmpLt: return x < in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kCmpLe: return x <= in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kCmpEq: return x == in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kCmpNe: return x != in[1] ? 1.0f : 0.0f;
    case PointwiseMode::kSelect: return in[2] != 0.0f ? x : in[1];
  }
  return x;
}

float combine(ReductionMode mode, float acc, float v, float inv_count) {
  switch (mode) {
    case ReductionMode::kAdd: return acc + v;
    case ReductionMode::kMax: return std::fmax(acc, v);
    case ReductionMode::kMin: return std::fmin(acc, v);
    case ReductionMode::kAmax: return std::fmax(acc, std::fabs(v));
    case ReductionMode::kAvg: return acc + v * inv_count;
    case ReductionMode::kMul: return acc * v;
    case ReductionMode::kNorm1: return acc + std::fabs(v);
    case ReductionMode::kNorm2: return acc + v * v;
  }
  return acc;
}

float reduction_identity(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kMax: return -std::numeric_limits<float>::infinity();
    case ReductionMode::kMin: return std::numeric_limits<float>::infinity();
    case ReductionMode::kMul: return 1.0f;
    default: return 0.0f;  // add, avg, amax, norm1, norm2
  }
}

}  // namespace fusedgemm::runtime
