// The fp64 evaluator: every node of a validated graph, in topological order, on dense
// arrays in declared [b, rows, cols] order.
#include "reference/graph_reference.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "runtime/numeric.h"

namespace fusedgemm::reference {
namespace {

using Values = std::vector<double>;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Dims dims_of(const TensorAttributes& t) {
  return {t.dims()[0], t.dims()[1], t.dims()[2]};
}

std::int64_t count_of(const Dims& d) {
  return d[0] * d[1] * d[2];
}

// Index of [b, r, c] of a result into an input that broadcasts to it (extent 1 reads 0).
std::int64_t broadcast_index(const Dims& in, std::int64_t b, std::int64_t r, std::int64_t c) {
  return dense_index(in, in[0] == 1 ? 0 : b, in[1] == 1 ? 0 : r, in[2] == 1 ? 0 : c);
}

// max and min as every evaluator computes them (docs/SEMANTICS.md): C's fmax and fmin, a
// NaN operand giving the other one, as the host device's std::fmax and the kernels' fmaxf
// do. The oracle hides no NaN by it: compare() checks NaN positions exactly.
double max_of(double a, double b) {
  return std::fmax(a, b);
}
double min_of(double a, double b) {
  return std::fmin(a, b);
}

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

double pointwise(const PointwiseAttributes& p, double x, double y, double z) {
  switch (p.mode) {
    case PointwiseMode::kIdentity: return x;
    case PointwiseMode::kRelu: {
      const double lower = p.relu_lower_clip.value_or(0.0f);
      const double slope = p.relu_lower_clip_slope.value_or(0.0f);
      const double upper = p.relu_upper_clip ? double{*p.relu_upper_clip} : kInf;
      return x > lower ? std::min(x, upper) : lower + slope * (x - lower);
    }
    case PointwiseMode::kGeluErf: return x * 0.5 * (1 + std::erf(x / std::numbers::sqrt2));
    case PointwiseMode::kGeluTanh: {
      const double k = std::sqrt(2 / std::numbers::pi);
      return x * 0.5 * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case PointwiseMode::kSilu: return x * sigmoid(p.swish_beta.value_or(1.0f) * x);
    case PointwiseMode::kSigmoid: return sigmoid(x);
    case PointwiseMode::kTanh: return std::tanh(x);
    case PointwiseMode::kExp: return std::exp(x);
    case PointwiseMode::kLog: return std::log(x);
    case PointwiseMode::kAbs: return std::fabs(x);
    case PointwiseMode::kNeg: return -x;
    case PointwiseMode::kSqrt: return std::sqrt(x);
    case PointwiseMode::kRsqrt: return 1 / std::sqrt(x);
    case PointwiseMode::kReciprocal: return 1 / x;
    case PointwiseMode::kSquare: return x * x;
    case PointwiseMode::kAdd: return x + y;
    case PointwiseMode::kSub: return x - y;
    case PointwiseMode::kMul: return x * y;
    case PointwiseMode::kDiv: return x / y;
    case PointwiseMode::kMax: return max_of(x, y);
    case PointwiseMode::kMin: return min_of(x, y);
    case PointwiseMode::kPow: return std::pow(x, y);
    case PointwiseMode::kCmpGt: return x > y ? 1 : 0;
    case PointwiseMode::kCmpGe: return x >= y ? 1 : 0;
    case PointwiseMode::kCmpLt: return x < y ? 1 : 0;
    case PointwiseMode::kCmpLe: return x <= y ? 1 : 0;
    case PointwiseMode::kCmpEq: return x == y ? 1 : 0;
    case PointwiseMode::kCmpNe: return x != y ? 1 : 0;
    case PointwiseMode::kSelect: return z != 0 ? x : y;
  }
  return kNan;
}

double reduction_identity(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kMax: return -kInf;
    case ReductionMode::kMin: return kInf;
    case ReductionMode::kMul: return 1;
    default: return 0;  // add, amax, avg, norm1, norm2
  }
}

double reduction_step(ReductionMode mode, double acc, double x) {
  switch (mode) {
    case ReductionMode::kAdd:
    case ReductionMode::kAvg: return acc + x;
    case ReductionMode::kMax: return max_of(acc, x);
    case ReductionMode::kMin: return min_of(acc, x);
    case ReductionMode::kAmax: return max_of(acc, std::fabs(x));
    case ReductionMode::kMul: return acc * x;
    case ReductionMode::kNorm1: return acc + std::fabs(x);
    case ReductionMode::kNorm2: return acc + x * x;
  }
  return kNan;
}

// Running values flow in the topological order validate left the nodes in.
class Evaluator {
 public:
  explicit Evaluator(const Graph& graph) : graph_(graph) {}

  Status load_inputs(const HostTensors& inputs) {
    std::set<const TensorAttributes*> produced;
    std::set<const TensorAttributes*> consumed;
    for (const Node& node : graph_.nodes()) {
      for (const Tensor& t : node.outputs) produced.insert(t.get());
      for (const Tensor& t : node.inputs) consumed.insert(t.get());
    }
    for (const Tensor& t : graph_.tensors()) {
      if (produced.contains(t.get()) || !consumed.contains(t.get())) continue;
      FG_TRY(load_input(*t, inputs));
    }
    return Status::ok();
  }

  // Each running value is dropped after its last reader, so a chain of n nodes holds two
  // at a time rather than n (a 10,000-node chain took 5 GB when every one was kept).
  void run() {
    std::unordered_map<const TensorAttributes*, int> readers;
    for (const Node& node : graph_.nodes()) {
      for (const Tensor& t : node.inputs) ++readers[t.get()];
    }
    for (const Node& node : graph_.nodes()) {
      switch (node.kind) {
        case NodeKind::kMatmul: matmul(node); break;
        case NodeKind::kPointwise: pointwise_node(node); break;
        case NodeKind::kReduction: reduction(node); break;
        case NodeKind::kBlockScaleDequantize: dequantize(node); break;
        case NodeKind::kBlockScaleQuantize: quantize(node); break;
      }
      for (const Tensor& t : node.inputs) {
        if (--readers[t.get()] == 0) values_.erase(t.get());
      }
    }
  }

  std::vector<OutputValues> outputs() {
    std::vector<OutputValues> result;
    for (const Tensor& t : graph_.tensors()) {
      auto it = exact_.find(t.get());
      if (!t->is_output() || it == exact_.end()) continue;
      OutputValues out{*t->uid(), t->data_type(), dims_of(*t), std::move(it->second), {}, {}};
      if (auto effects = effects_.find(t.get()); effects != effects_.end()) {
        out.order_effects = std::move(effects->second);
      }
      out.rounded.reserve(out.values.size());
      for (double v : out.values) out.rounded.push_back(numeric::round_to_double(out.type, v));
      result.push_back(std::move(out));
    }
    return result;
  }

 private:
  Status load_input(const TensorAttributes& t, const HostTensors& inputs) {
    const std::int64_t uid = *t.uid();
    auto it = inputs.find(uid);
    FG_CHECK(it != inputs.end(), ErrorCode::kNotFound,
             fmt::format("reference_input_missing: tensor '{}' (uid {}): no host tensor given; "
                         "legal: one HostTensor per graph input, keyed by uid",
                         t.name(), uid));
    const HostTensor& host = it->second;
    FG_CHECK(host.type == t.data_type(), ErrorCode::kInvalidArgument,
             fmt::format("reference_input_type: tensor '{}' (uid {}): host tensor holds {}; "
                         "legal: the declared {}",
                         t.name(), uid, to_string(host.type), to_string(t.data_type())));
    const Dims dims = dims_of(t);
    FG_CHECK(host.layout.shape == dims, ErrorCode::kInvalidArgument,
             fmt::format("reference_input_shape: tensor '{}' (uid {}): host tensor has shape {}; "
                         "legal: the declared {}",
                         t.name(), uid, to_string(host.layout.shape), to_string(dims)));
    const std::int64_t need = storage_bytes(host.type, host.layout);
    FG_CHECK(static_cast<std::int64_t>(host.bytes.size()) >= need, ErrorCode::kInvalidArgument,
             fmt::format("reference_input_bytes: tensor '{}' (uid {}): {} bytes for layout {}; "
                         "legal: at least {} bytes",
                         t.name(), uid, host.bytes.size(), to_string(host.layout), need));
    Values v(static_cast<std::size_t>(count_of(dims)));
    for (std::int64_t b = 0; b < dims[0]; ++b) {
      for (std::int64_t r = 0; r < dims[1]; ++r) {
        for (std::int64_t c = 0; c < dims[2]; ++c) v[dense_index(dims, b, r, c)] = host.at(b, r, c);
      }
    }
    values_[&t] = std::move(v);
    return Status::ok();
  }

  const Values& in(const Tensor& t) const { return values_.at(t.get()); }

  // A declared data type rounds the running value; fp32 (or an inferred type) does not.
  static bool rounds(DataType type) {
    return type != DataType::kFloat32 && type != DataType::kNotSet;
  }

  // Records a node's result: outputs keep the value before rounding, later nodes see the
  // value after it. An fp32 value keeps fp64's precision but not its range: past fp32's it
  // is inf of its sign, as the engines' fp32 arithmetic makes it (docs/SEMANTICS.md), so a
  // later op that brings it back into range (exp(x) / exp(x), a quantize scale) sees inf.
  void set(const Tensor& t, Values v) {
    if (!rounds(t->data_type())) {
      // Round to nearest takes fp32 to inf from FLT_MAX + half its ulp on.
      constexpr double kInfFrom = 0x1.ffffffp+127;
      for (double& x : v) {
        if (std::abs(x) >= kInfFrom) x = std::copysign(std::numeric_limits<double>::infinity(), x);
      }
    }
    if (t->is_output()) exact_[t.get()] = v;
    if (rounds(t->data_type())) {
      for (double& x : v) x = numeric::round_to_double(t->data_type(), x);
    }
    values_[t.get()] = std::move(v);
  }

  void matmul(const Node& node) {
    const Dims a = dims_of(*node.inputs[0]);
    const Dims bd = dims_of(*node.inputs[1]);
    const Dims out_dims = dims_of(*node.outputs[0]);
    const Values& av = in(node.inputs[0]);
    const Values& bv = in(node.inputs[1]);
    Values out(static_cast<std::size_t>(count_of(out_dims)), 0.0);
    // Row by row of B: each element still sums its products in K order from 0, as a dot
    // product would, but B and the output are read along their rows, not down B's columns
    // (a cache line per product at thousands of columns).
    for (std::int64_t b = 0; b < out_dims[0]; ++b) {
      const std::int64_t ba = a[0] == 1 ? 0 : b;
      const std::int64_t bb = bd[0] == 1 ? 0 : b;
      for (std::int64_t m = 0; m < out_dims[1]; ++m) {
        double* row = out.data() + dense_index(out_dims, b, m, 0);
        for (std::int64_t k = 0; k < a[2]; ++k) {
          const double x = av[dense_index(a, ba, m, k)];
          const double* b_row = bv.data() + dense_index(bd, bb, k, 0);
          for (std::int64_t n = 0; n < out_dims[2]; ++n) row[n] += x * b_row[n];
        }
      }
    }
    set(node.outputs[0], std::move(out));
  }

  void pointwise_node(const Node& node) {
    const auto& attrs = std::get<PointwiseAttributes>(node.attributes);
    const Dims out_dims = dims_of(*node.outputs[0]);
    std::array<const Values*, 3> operand{};
    std::array<Dims, 3> operand_dims{};
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      operand[i] = &in(node.inputs[i]);
      operand_dims[i] = dims_of(*node.inputs[i]);
    }
    auto read = [&](std::size_t i, std::int64_t b, std::int64_t r, std::int64_t c) {
      return operand[i] ? (*operand[i])[broadcast_index(operand_dims[i], b, r, c)] : 0.0;
    };
    Values out(static_cast<std::size_t>(count_of(out_dims)));
    for (std::int64_t b = 0; b < out_dims[0]; ++b) {
      for (std::int64_t r = 0; r < out_dims[1]; ++r) {
        for (std::int64_t c = 0; c < out_dims[2]; ++c) {
          out[dense_index(out_dims, b, r, c)] =
              pointwise(attrs, read(0, b, r, c), read(1, b, r, c), read(2, b, r, c));
        }
      }
    }
    set(node.outputs[0], std::move(out));
  }

  void reduction(const Node& node) {
    const ReductionMode mode = std::get<ReductionAttributes>(node.attributes).mode;
    const Dims in_dims = dims_of(*node.inputs[0]);
    const Dims out_dims = dims_of(*node.outputs[0]);
    const Values& x = in(node.inputs[0]);
    Values out(static_cast<std::size_t>(count_of(out_dims)), reduction_identity(mode));
    for (std::int64_t b = 0; b < in_dims[0]; ++b) {
      for (std::int64_t r = 0; r < in_dims[1]; ++r) {
        for (std::int64_t c = 0; c < in_dims[2]; ++c) {
          double& acc = out[broadcast_index(out_dims, b, r, c)];
          acc = reduction_step(mode, acc, x[dense_index(in_dims, b, r, c)]);
        }
      }
    }
    const auto reduced_count = static_cast<double>(count_of(in_dims) / count_of(out_dims));
    for (double& v : out) {
      if (mode == ReductionMode::kAvg) v /= reduced_count;
      if (mode == ReductionMode::kNorm2) v = std::sqrt(v);
    }
    if (mode == ReductionMode::kMul && node.outputs[0]->data_type() != DataType::kInt32 &&
        node.outputs[0]->is_output()) {
      effects_[node.outputs[0].get()] = product_order_effects(in_dims, out_dims, x);
    }
    set(node.outputs[0], std::move(out));
  }

  // A product's partials, in whatever order an evaluator combines the factors, stay within
  // the product of the factors above 1 in magnitude and the product of those below: fp32
  // may overflow part-way where the first reaches 2^128, and lose its normal precision (or
  // reach zero) where the second falls below 2^-126.
  static std::vector<std::uint8_t> product_order_effects(const Dims& in_dims, const Dims& out_dims,
                                                         const Values& x) {
    constexpr double kOverflowLog2 = 128;
    constexpr double kUnderflowLog2 = -126;
    const auto count = static_cast<std::size_t>(count_of(out_dims));
    std::vector<double> above(count, 0.0);  // log2 of the product of the factors above 1
    std::vector<double> below(count, 0.0);  // log2 of the product of the factors below 1
    std::vector<std::uint8_t> effects(count, 0);
    for (std::int64_t b = 0; b < in_dims[0]; ++b) {
      for (std::int64_t r = 0; r < in_dims[1]; ++r) {
        for (std::int64_t c = 0; c < in_dims[2]; ++c) {
          const double v = x[dense_index(in_dims, b, r, c)];
          const auto o = static_cast<std::size_t>(broadcast_index(out_dims, b, r, c));
          const double bits = std::log2(std::fabs(v));  // -inf for 0, NaN for NaN
          if (bits > 0) above[o] += bits;
          if (bits < 0) below[o] += bits;
          if (std::signbit(v)) effects[o] ^= kNegative;
        }
      }
    }
    for (std::size_t o = 0; o < count; ++o) {
      if (above[o] >= kOverflowLog2) effects[o] |= kMayOverflow;
      if (below[o] < kUnderflowLog2) effects[o] |= kMayUnderflow;
      if ((effects[o] & (kMayOverflow | kMayUnderflow)) == 0) effects[o] = 0;
    }
    return effects;
  }

  void dequantize(const Node& node) {
    const auto& attrs = std::get<BlockScaleDequantizeAttributes>(node.attributes);
    const Dims dims = dims_of(*node.inputs[0]);
    const Dims scale_dims = dims_of(*node.inputs[1]);
    const Values& x = in(node.inputs[0]);
    const Values& scale = in(node.inputs[1]);
    Values out(x.size());
    for (std::int64_t b = 0; b < dims[0]; ++b) {
      for (std::int64_t r = 0; r < dims[1]; ++r) {
        for (std::int64_t c = 0; c < dims[2]; ++c) {
          const std::int64_t i = dense_index(dims, b, r, c);
          out[i] =
              x[i] * scale[dense_index(scale_dims, b, r / attrs.block_rows, c / attrs.block_cols)];
        }
      }
    }
    set(node.outputs[0], std::move(out));
  }

  void quantize(const Node& node) {
    const auto& attrs = std::get<BlockScaleQuantizeAttributes>(node.attributes);
    const Tensor& y_tensor = node.outputs[0];
    const Tensor& scale_tensor = node.outputs[1];
    const Dims dims = dims_of(*node.inputs[0]);
    const Dims scale_dims = dims_of(*scale_tensor);
    const Values& x = in(node.inputs[0]);
    const double y_max = numeric::max_finite(y_tensor->data_type());
    Values y(x.size());
    Values scale_exact(static_cast<std::size_t>(count_of(scale_dims)));
    Values scale_stored(scale_exact.size());
    for (std::int64_t b = 0; b < scale_dims[0]; ++b) {
      for (std::int64_t i = 0; i < scale_dims[1]; ++i) {
        for (std::int64_t j = 0; j < scale_dims[2]; ++j) {
          const std::int64_t r0 = i * attrs.block_rows;
          const std::int64_t c0 = j * attrs.block_cols;
          const std::int64_t r1 = std::min(r0 + attrs.block_rows, dims[1]);
          const std::int64_t c1 = std::min(c0 + attrs.block_cols, dims[2]);
          double amax = 0;
          for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
              amax = max_of(amax, std::fabs(x[dense_index(dims, b, r, c)]));
            }
          }
          const std::int64_t s = dense_index(scale_dims, b, i, j);
          scale_exact[s] = amax == 0 ? 1.0 : amax / y_max;
          // y divides by the scale as stored, so y * stored scale is the dequantized value.
          scale_stored[s] = numeric::round_to_double(scale_tensor->data_type(), scale_exact[s]);
          for (std::int64_t r = r0; r < r1; ++r) {
            for (std::int64_t c = c0; c < c1; ++c) {
              const std::int64_t k = dense_index(dims, b, r, c);
              y[k] = x[k] / scale_stored[s];
            }
          }
        }
      }
    }
    set(y_tensor, std::move(y));
    // Later nodes read the scale as stored, fp32 included, so that they match y.
    if (scale_tensor->is_output()) exact_[scale_tensor.get()] = std::move(scale_exact);
    values_[scale_tensor.get()] = std::move(scale_stored);
  }

  const Graph& graph_;
  std::unordered_map<const TensorAttributes*, Values> values_;  // running, after rounding
  std::unordered_map<const TensorAttributes*, Values> exact_;   // outputs, before rounding
  std::unordered_map<const TensorAttributes*, std::vector<std::uint8_t>> effects_;  // outputs
};

}  // namespace

Status check_reference_limits(const Graph& graph) {
  std::int64_t multiply_adds = 0;
  std::int64_t held = 0;
  for (const Tensor& t : graph.tensors()) {
    if (t->dims().size() != kRank) continue;  // unused by any node, so never evaluated
    const auto count = checked::mul(checked::mul(t->dims()[0], t->dims()[1]), t->dims()[2]);
    FG_CHECK(count && *count <= kMaxReferenceElements, ErrorCode::kInvalidArgument,
             fmt::format("reference_tensor_elements: tensor '{}': dims {} hold {} values; "
                         "legal: at most {} (2^28) values per tensor for the fp64 reference",
                         t->name(), to_string(dims_of(*t)),
                         count ? std::to_string(*count) : std::string("more than 2^63"),
                         kMaxReferenceElements));
    // The reference keeps every tensor's values until the end.
    held += *count;
    FG_CHECK(held <= kMaxReferenceHeldValues, ErrorCode::kInvalidArgument,
             fmt::format("reference_held_values: tensor '{}' brings the graph's tensors to {} "
                         "values; legal: at most {} (2^30, 8 GiB of fp64) together for the fp64 "
                         "reference",
                         t->name(), held, kMaxReferenceHeldValues));
  }
  for (const Node& node : graph.nodes()) {
    if (node.kind != NodeKind::kMatmul) {
      // An elementwise op or a reduction: one operation per value of its largest tensor (a
      // reduction's input, a broadcasting op's output).
      std::int64_t values = 0;
      for (const auto* list : {&node.inputs, &node.outputs}) {
        for (const Tensor& t : *list) {
          const Dims d = dims_of(*t);
          values = std::max(values, d[0] * d[1] * d[2]);  // each within 2^28 (above)
        }
      }
      const auto work = checked::add(values, multiply_adds);
      FG_CHECK(work && *work <= kMaxReferenceMultiplyAdds, ErrorCode::kInvalidArgument,
               fmt::format("reference_multiply_adds: node '{}': its {} values bring the graph "
                           "to {} operations (multiply-adds and elementwise); legal: at most {} "
                           "(2^36) for the fp64 reference",
                           node.name, values,
                           work ? std::to_string(*work) : std::string("more than 2^63"),
                           kMaxReferenceMultiplyAdds));
      multiply_adds = *work;
      continue;
    }
    const Dims out = dims_of(*node.outputs[0]);
    const auto product =
        checked::mul(checked::mul(checked::mul(out[0], out[1]), out[2]), node.inputs[0]->dims()[2]);
    const auto work = product ? checked::add(*product, multiply_adds) : std::nullopt;
    FG_CHECK(work && *work <= kMaxReferenceMultiplyAdds, ErrorCode::kInvalidArgument,
             fmt::format("reference_multiply_adds: node '{}': output dims {} and K = {} bring "
                         "the graph to {} multiply-adds; legal: at most {} (2^36) for the fp64 "
                         "reference",
                         node.name, to_string(out), node.inputs[0]->dims()[2],
                         work ? std::to_string(*work) : std::string("more than 2^63"),
                         kMaxReferenceMultiplyAdds));
    multiply_adds = *work;
  }
  return Status::ok();
}

Result<const OutputValues*> Evaluation::find(std::int64_t uid) const {
  for (const OutputValues& out : outputs_) {
    if (out.uid == uid) return &out;
  }
  return Status(ErrorCode::kNotFound,
                fmt::format("reference_output_missing: uid {}: not an output of the evaluated "
                            "graph; legal: the uid of a tensor marked set_output(true)",
                            uid));
}

Result<std::span<const double>> Evaluation::values(std::int64_t uid) const {
  FG_ASSIGN_OR_RETURN(const OutputValues* out, find(uid));
  return std::span<const double>(out->values);
}

Result<std::span<const double>> Evaluation::rounded(std::int64_t uid) const {
  FG_ASSIGN_OR_RETURN(const OutputValues* out, find(uid));
  return std::span<const double>(out->rounded);
}

Result<Evaluation> evaluate(const Graph& graph, const HostTensors& inputs) {
  FG_CHECK(graph.is_validated(), ErrorCode::kInvalidGraph,
           "reference_graph_not_validated: graph '" + graph.name() +
               "': the reference needs inferred dims, types and node order; legal: call "
               "validate() first and succeed");
  FG_TRY(check_reference_limits(graph));
  Evaluator evaluator(graph);
  FG_TRY(evaluator.load_inputs(inputs));
  evaluator.run();
  return Evaluation(evaluator.outputs());
}

}  // namespace fusedgemm::reference
