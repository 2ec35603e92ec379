// The operations a graph is made of and their attributes (chained setters, cuDNN style).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusedgemm/data_type.h"

namespace fusedgemm {

// Pointwise ops run on fp32 values (the accumulator and loaded aux), docs/SEMANTICS.md.
enum class PointwiseMode : std::uint8_t {
  // unary
  kIdentity,  // a cast when its output declares a data type
  kRelu,      // max(x, lower_clip) below with slope, clipped above; see PointwiseAttributes
  kGeluErf,   // x * 0.5 * (1 + erf(x / sqrt(2)))
  kGeluTanh,  // x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  kSilu,      // x * sigmoid(beta * x); swish with beta, silu at beta 1
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kAbs,
  kNeg,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kSquare,
  // binary
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPow,
  kCmpGt,  // 1 where in0 > in1, else 0
  kCmpGe,
  kCmpLt,
  kCmpLe,
  kCmpEq,
  kCmpNe,
  // ternary
  kSelect,  // in2 != 0 ? in0 : in1
};

int arity(PointwiseMode mode);
std::string_view to_string(PointwiseMode mode);
std::optional<PointwiseMode> pointwise_mode_from_string(std::string_view name);
std::vector<PointwiseMode> all_pointwise_modes();

// Reduced axes come from the output's dims: extent 1 where the input's is larger.
enum class ReductionMode : std::uint8_t {
  kAdd,
  kMax,
  kMin,
  kAmax,  // max of |x|
  kAvg,   // sum / count
  kMul,
  kNorm1,  // sum of |x|
  kNorm2,  // sqrt of sum of x^2
};

std::string_view to_string(ReductionMode mode);
std::optional<ReductionMode> reduction_mode_from_string(std::string_view name);
std::vector<ReductionMode> all_reduction_modes();

struct MatmulAttributes {
  std::string name;
  MatmulAttributes& set_name(std::string n) {
    name = std::move(n);
    return *this;
  }
};

struct PointwiseAttributes {
  std::string name;
  PointwiseMode mode = PointwiseMode::kIdentity;
  // relu: y = x > lower_clip ? min(x, upper_clip) : lower_clip + slope * (x - lower_clip)
  std::optional<float> relu_lower_clip_slope;
  std::optional<float> relu_lower_clip;
  std::optional<float> relu_upper_clip;
  std::optional<float> swish_beta;  // silu: y = x * sigmoid(beta * x), beta 1 when unset

  PointwiseAttributes& set_name(std::string n) {
    name = std::move(n);
    return *this;
  }
  PointwiseAttributes& set_mode(PointwiseMode m) {
    mode = m;
    return *this;
  }
  PointwiseAttributes& set_relu_lower_clip_slope(float v) {
    relu_lower_clip_slope = v;
    return *this;
  }
  PointwiseAttributes& set_relu_lower_clip(float v) {
    relu_lower_clip = v;
    return *this;
  }
  PointwiseAttributes& set_relu_upper_clip(float v) {
    relu_upper_clip = v;
    return *this;
  }
  PointwiseAttributes& set_swish_beta(float v) {
    swish_beta = v;
    return *this;
  }
};

struct ReductionAttributes {
  std::string name;
  ReductionMode mode = ReductionMode::kAdd;

  ReductionAttributes& set_name(std::string n) {
    name = std::move(n);
    return *this;
  }
  ReductionAttributes& set_mode(ReductionMode m) {
    mode = m;
    return *this;
  }
};

// One scale per block of [1, block_rows, block_cols] elements of the quantized tensor:
// {1, 128} for activations (per row, 128 along K), {128, 128} for weights.
struct BlockScaleDequantizeAttributes {
  std::string name;
  std::int64_t block_rows = 1;
  std::int64_t block_cols = 128;

  BlockScaleDequantizeAttributes& set_name(std::string n) {
    name = std::move(n);
    return *this;
  }
  BlockScaleDequantizeAttributes& set_block_size(std::int64_t rows, std::int64_t cols) {
    block_rows = rows;
    block_cols = cols;
    return *this;
  }
};

struct BlockScaleQuantizeAttributes {
  std::string name;
  std::int64_t block_rows = 1;
  std::int64_t block_cols = 128;

  BlockScaleQuantizeAttributes& set_name(std::string n) {
    name = std::move(n);
    return *this;
  }
  BlockScaleQuantizeAttributes& set_block_size(std::int64_t rows, std::int64_t cols) {
    block_rows = rows;
    block_cols = cols;
    return *this;
  }
};

}  // namespace fusedgemm
