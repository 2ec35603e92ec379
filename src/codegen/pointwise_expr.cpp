#include "codegen/pointwise_expr.h"

#include <limits>

#include <fmt/format.h>

#include "codegen/emit.h"

namespace fusedgemm::codegen {
namespace {

// Pairs a device expression with its formula; the formula spells the op as the graph does.
PointwiseText call(std::string_view fn, std::span<const std::string> args, std::string_view op,
                   std::span<const std::string> names) {
  return {fmt::format("{}({})", fn, fmt::join(args, ", ")),
          fmt::format("{}({})", op, fmt::join(names, ", "))};
}

PointwiseText compare(std::string_view less_or_eq, std::span<const std::string> in,
                      std::span<const std::string> names, std::string_view op) {
  return {
      fmt::format("({} {} {} ? {} : {})", in[0], less_or_eq, in[1], emit_f32(1.0f), emit_f32(0.0f)),
      fmt::format("{}({}, {})", op, names[0], names[1])};
}

}  // namespace

PointwiseText pointwise_text(const PointwiseAttributes& pw, std::span<const std::string> in,
                             std::span<const std::string> names) {
  const std::string op(to_string(pw.mode));
  switch (pw.mode) {
    case PointwiseMode::kIdentity: return {in[0], fmt::format("{}({})", op, names[0])};
    case PointwiseMode::kRelu: {
      const float lower = pw.relu_lower_clip.value_or(0.0f);
      const float upper = pw.relu_upper_clip.value_or(std::numeric_limits<float>::infinity());
      const float slope = pw.relu_lower_clip_slope.value_or(0.0f);
      return {fmt::format("fk::relu({}, {}, {}, {})", in[0], emit_f32(lower), emit_f32(upper),
                          emit_f32(slope)),
              fmt::format("relu({}, lower clip {}, upper clip {}, slope {})", names[0],
                          emit_f32(lower), emit_f32(upper), emit_f32(slope))};
    }
    case PointwiseMode::kGeluErf: return call("fk::gelu_erf", in, op, names);
    case PointwiseMode::kGeluTanh: return call("fk::gelu_tanh", in, op, names);
    case PointwiseMode::kSilu: {
      const float beta = pw.swish_beta.value_or(1.0f);
      return {fmt::format("fk::silu({}, {})", in[0], emit_f32(beta)),
              fmt::format("silu({}, beta {})", names[0], emit_f32(beta))};
    }
    case PointwiseMode::kSigmoid: return call("fk::sigmoid", in, op, names);
    case PointwiseMode::kTanh: return call("tanhf", in, op, names);
    case PointwiseMode::kExp: return call("expf", in, op, names);
    case PointwiseMode::kLog: return call("logf", in, op, names);
    case PointwiseMode::kAbs: return call("fabsf", in, op, names);
    case PointwiseMode::kNeg: return {fmt::format("(-{})", in[0]), fmt::format("-{}", names[0])};
    case PointwiseMode::kSqrt: return call("__fsqrt_rn", in, op, names);
    case PointwiseMode::kRsqrt: return call("fk::rsqrt_rn", in, op, names);
    case PointwiseMode::kReciprocal: return call("__frcp_rn", in, op, names);
    case PointwiseMode::kSquare:
      return {fmt::format("__fmul_rn({0}, {0})", in[0]), fmt::format("{0} * {0}", names[0])};
    case PointwiseMode::kAdd: return call("__fadd_rn", in, op, names);
    case PointwiseMode::kSub: return call("__fsub_rn", in, op, names);
    case PointwiseMode::kMul: return call("__fmul_rn", in, op, names);
    case PointwiseMode::kDiv: return call("__fdiv_rn", in, op, names);
    case PointwiseMode::kMax: return call("fmaxf", in, op, names);
    case PointwiseMode::kMin: return call("fminf", in, op, names);
    case PointwiseMode::kPow: return call("powf", in, op, names);
    case PointwiseMode::kCmpGt: return compare(">", in, names, op);
    case PointwiseMode::kCmpGe: return compare(">=", in, names, op);
    case PointwiseMode::kCmpLt: return compare("<", in, names, op);
    case PointwiseMode::kCmpLe: return compare("<=", in, names, op);
    case PointwiseMode::kCmpEq: return compare("==", in, names, op);
    case PointwiseMode::kCmpNe: return compare("!=", in, names, op);
    case PointwiseMode::kSelect:
      return {fmt::format("({} != {} ? {} : {})", in[2], emit_f32(0.0f), in[0], in[1]),
              fmt::format("select({} != 0 ? {} : {})", names[2], names[0], names[1])};
  }
  return {in[0], op};
}

}  // namespace fusedgemm::codegen
