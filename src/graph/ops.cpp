#include "fusedgemm/ops.h"

#include <array>
#include <utility>

namespace fusedgemm {
namespace {

struct PointwiseInfo {
  PointwiseMode mode;
  std::string_view name;
  int arity;
};

constexpr std::array<PointwiseInfo, 29> kPointwise = {{
    {PointwiseMode::kIdentity, "identity", 1}, {PointwiseMode::kRelu, "relu", 1},
    {PointwiseMode::kGeluErf, "gelu_erf", 1},  {PointwiseMode::kGeluTanh, "gelu_tanh", 1},
    {PointwiseMode::kSilu, "silu", 1},         {PointwiseMode::kSigmoid, "sigmoid", 1},
    {PointwiseMode::kTanh, "tanh", 1},         {PointwiseMode::kExp, "exp", 1},
    {PointwiseMode::kLog, "log", 1},           {PointwiseMode::kAbs, "abs", 1},
    {PointwiseMode::kNeg, "neg", 1},           {PointwiseMode::kSqrt, "sqrt", 1},
    {PointwiseMode::kRsqrt, "rsqrt", 1},       {PointwiseMode::kReciprocal, "reciprocal", 1},
    {PointwiseMode::kSquare, "square", 1},     {PointwiseMode::kAdd, "add", 2},
    {PointwiseMode::kSub, "sub", 2},           {PointwiseMode::kMul, "mul", 2},
    {PointwiseMode::kDiv, "div", 2},           {PointwiseMode::kMax, "max", 2},
    {PointwiseMode::kMin, "min", 2},           {PointwiseMode::kPow, "pow", 2},
    {PointwiseMode::kCmpGt, "cmp_gt", 2},      {PointwiseMode::kCmpGe, "cmp_ge", 2},
    {PointwiseMode::kCmpLt, "cmp_lt", 2},      {PointwiseMode::kCmpLe, "cmp_le", 2},
    {PointwiseMode::kCmpEq, "cmp_eq", 2},      {PointwiseMode::kCmpNe, "cmp_ne", 2},
    {PointwiseMode::kSelect, "select", 3},
}};

constexpr std::array<std::pair<ReductionMode, std::string_view>, 8> kReduction = {{
    {ReductionMode::kAdd, "add"},
    {ReductionMode::kMax, "max"},
    {ReductionMode::kMin, "min"},
    {ReductionMode::kAmax, "amax"},
    {ReductionMode::kAvg, "avg"},
    {ReductionMode::kMul, "mul"},
    {ReductionMode::kNorm1, "norm1"},
    {ReductionMode::kNorm2, "norm2"},
}};

const PointwiseInfo* find(PointwiseMode mode) {
  for (const auto& info : kPointwise) {
    if (info.mode == mode) return &info;
  }
  return nullptr;
}

}  // namespace

int arity(PointwiseMode mode) {
  const auto* info = find(mode);
  return info ? info->arity : 0;
}

std::string_view to_string(PointwiseMode mode) {
  const auto* info = find(mode);
  return info ? info->name : "unknown";
}

std::optional<PointwiseMode> pointwise_mode_from_string(std::string_view name) {
  for (const auto& info : kPointwise) {
    if (info.name == name) return info.mode;
  }
  return std::nullopt;
}

std::vector<PointwiseMode> all_pointwise_modes() {
  std::vector<PointwiseMode> modes;
  for (const auto& info : kPointwise) modes.push_back(info.mode);
  return modes;
}

std::string_view to_string(ReductionMode mode) {
  for (const auto& [m, name] : kReduction) {
    if (m == mode) return name;
  }
  return "unknown";
}

std::optional<ReductionMode> reduction_mode_from_string(std::string_view name) {
  for (const auto& [m, n] : kReduction) {
    if (n == name) return m;
  }
  return std::nullopt;
}

std::vector<ReductionMode> all_reduction_modes() {
  std::vector<ReductionMode> modes;
  for (const auto& [m, name] : kReduction) modes.push_back(m);
  return modes;
}

}  // namespace fusedgemm
