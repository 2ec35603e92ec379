#include "support/random_graph.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "kernels/kernel_args.h"

namespace fusedgemm::test {
namespace {

using Dimv = std::vector<std::int64_t>;

constexpr DataType kFp32 = DataType::kFloat32;
constexpr DataType kBf16 = DataType::kBFloat16;
constexpr DataType kFp16 = DataType::kFloat16;
constexpr DataType kFp8 = DataType::kFp8E4M3;

// The largest magnitude a value may reach, so fp16 roundings and outputs stay finite and a
// product of two values stays far inside fp32's range.
constexpr double kMaxMagnitude = 1000.0;
// What a divisor, a log, rsqrt or reciprocal input and a pow base are at least.
constexpr double kMinPositive = 0.25;
// exp reads values no larger than this (after a tanh when needed).
constexpr double kMaxExpInput = 3.0;
// Kernel parameters kept free for outputs and taps while aux inputs are drawn: up to three
// dense outputs, three taps and the output keep_live may add.
constexpr std::int64_t kReservedBuffers = 7;

// The one rule a declined graph breaks; each is checked against rules.cpp and analyze.cpp
// so that validate passes and the rule is the first the engine meets.
enum class Break : std::uint8_t {
  kNone,
  kChainedGemm,          // (A @ B) @ C, with N == K so that both matmuls share one shape
  kPrologueOp,           // unary(A) @ B
  kOperandMajor,         // A with stride 2 on both M and K
  kTapConsumed,          // a row or column tap read by a later pointwise node
  kAuxShape,             // batch-1 problem, an aux of batch 2 or 3
  kStoreShape,           // a dense output of a scalar aux value
  kDequantizePlacement,  // block-scaled fp8 operands, the dequantized A stored
  kOutputMajor,          // an output with stride 2 on both M and N
  kGemmShapeMismatch,    // one more matmul with another K
  kGemmCount,            // five matmuls
  kOperandDataType,      // bf16 x fp16, fp16 x bf16 or fp8 x fp16
  kLayoutGroupMajor,     // A of matmul 0 K-major, A of matmul 1 M-major
  kOperandMajor8bit,     // fp8 A M-major or fp8 B N-major
  kBlockScaleShape,      // fp8 A block-scaled 1x128, B unscaled
  kContiguousExtent,     // a contiguous extent off the 16-byte granule
  kStrideAlignment,      // an operand pitch off the 16-byte granule
  kAuxDataType,          // an int8 aux
  kOutputDataType,       // an int32 dense output
};

constexpr Break kBreaks[] = {
    Break::kChainedGemm,         Break::kPrologueOp,      Break::kOperandMajor,
    Break::kTapConsumed,         Break::kAuxShape,        Break::kStoreShape,
    Break::kDequantizePlacement, Break::kOutputMajor,     Break::kGemmShapeMismatch,
    Break::kGemmCount,           Break::kOperandDataType, Break::kLayoutGroupMajor,
    Break::kOperandMajor8bit,    Break::kBlockScaleShape, Break::kContiguousExtent,
    Break::kStrideAlignment,     Break::kAuxDataType,     Break::kOutputDataType,
};

std::string_view rule_of(Break b) {
  switch (b) {
    case Break::kNone: return "";
    case Break::kChainedGemm: return "chained_gemm";
    case Break::kPrologueOp: return "prologue_op";
    case Break::kOperandMajor: return "operand_major";
    case Break::kTapConsumed: return "tap_consumed";
    case Break::kAuxShape: return "aux_shape";
    case Break::kStoreShape: return "store_shape";
    case Break::kDequantizePlacement: return "dequantize_placement";
    case Break::kOutputMajor: return "output_major";
    case Break::kGemmShapeMismatch: return "gemm_shape_mismatch";
    case Break::kGemmCount: return "gemm_count";
    case Break::kOperandDataType: return "operand_data_type";
    case Break::kLayoutGroupMajor: return "layout_group_major";
    case Break::kOperandMajor8bit: return "operand_major_8bit";
    case Break::kBlockScaleShape: return "block_scale_shape";
    case Break::kContiguousExtent: return "tma_contiguous_extent";
    case Break::kStrideAlignment: return "tma_stride_alignment";
    case Break::kAuxDataType: return "aux_data_type";
    case Break::kOutputDataType: return "output_data_type";
  }
  return "";
}

// Raw mt19937_64 words only: std distributions differ between standard libraries.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi] (the modulo bias is far below anything a sweep can see).
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(engine_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool percent(int p) { return between(0, 99) < p; }
  template <class T>
  T pick(std::initializer_list<T> items) {
    return items.begin()[between(0, static_cast<std::int64_t>(items.size()) - 1)];
  }

 private:
  std::mt19937_64 engine_;
};

// Strides of [b, rows, cols] with `contiguous` (1 or 2) at unit stride, the other axis
// padded by `pad` elements and the batch by `batch_pad`.
Dimv strides_of(const Dimv& d, int contiguous, std::int64_t pad, std::int64_t batch_pad) {
  if (contiguous == 2) return {d[1] * (d[2] + pad) + batch_pad, d[2] + pad, 1};
  return {d[2] * (d[1] + pad) + batch_pad, 1, d[1] + pad};
}

std::string dims_text(const Dimv& d) {
  return fmt::format("[{},{},{}]", d[0], d[1], d[2]);
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// One epilogue value (or a caller input among them) with what keeps the graph sane: a rough
// range, and the origins that decide whether two values may meet in one node.
struct Value {
  Tensor tensor;
  Dimv dims;
  double lo = 0.0;
  double hi = 0.0;
  std::set<int> roots;      // accumulators and aux inputs it is computed from (value ids)
  std::set<int> rounds;     // declared rounding points on its paths (value ids)
  std::set<int> ancestors;  // every value it is computed from, itself included
  bool input = false;       // an aux the caller provides
  bool tap = false;         // a reduction output, read by no later node
  bool accumulator = false;
  bool discrete = false;  // a comparison: 0 or 1
  // The same number in fp32 and fp64: an aux input, or computed from exact values by neg,
  // abs, max, min, select, a relu without slope, a cast or a comparison.
  bool exact = false;
  bool declared = false;  // its data type is declared
  int uses = 0;
  double magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

class Generator {
 public:
  Generator(std::uint64_t seed, const RandomGraphOptions& options) : rng_(seed), options_(options) {
    result_.seed = seed;
    result_.graph.set_name(fmt::format("random_{}", seed));
  }

  Result<RandomGraph> run() {
    if (options_.allow_declines && rng_.percent(20)) {
      brk_ = kBreaks[rng_.between(0, static_cast<std::int64_t>(std::size(kBreaks)) - 1)];
    }
    choose_problem();
    make_gemms();
    combine_accumulators();
    const std::int64_t ops = rng_.between(0, options_.max_pointwise);
    for (std::int64_t i = 0; i < ops; ++i) random_op();
    late_break();
    choose_outputs();
    choose_taps();
    keep_live();
    result_.expected_decline = std::string(rule_of(brk_));
    result_.summary = fmt::format("{}", fmt::join(parts_, " | "));
    if (brk_ != Break::kNone) result_.summary += fmt::format(" | declines {}", rule_of(brk_));
    FG_TRY(g().validate());
    return std::move(result_);
  }

 private:
  Graph& g() { return result_.graph; }
  Value& at(int id) { return values_[static_cast<std::size_t>(id)]; }
  Dimv full() const { return {batch_, m_, n_}; }
  static std::int64_t modulus_of(DataType t) { return is_fp8(t) ? 16 : 8; }

  // --- problem and operands -------------------------------------------------------------

  void choose_problem() {
    const std::int64_t r = rng_.between(0, 99);
    a_type_ = b_type_ = r < 45 ? kBf16 : r < 85 ? kFp16 : kFp8;
    if (brk_ == Break::kOperandMajor8bit || brk_ == Break::kBlockScaleShape ||
        brk_ == Break::kDequantizePlacement) {
      a_type_ = b_type_ = kFp8;
    }
    if (brk_ == Break::kLayoutGroupMajor && a_type_ == kFp8) a_type_ = b_type_ = kBf16;
    if (brk_ == Break::kOperandDataType) {
      const std::int64_t pair = rng_.between(0, 2);
      a_type_ = pair == 0 ? kBf16 : pair == 1 ? kFp16 : kFp8;
      b_type_ = pair == 0 ? kFp16 : pair == 1 ? kBf16 : kFp16;
    }
    mod_ = std::max(modulus_of(a_type_), modulus_of(b_type_));
    // 8-bit operands are K-major only (wgmma transposes 16-bit types only).
    a_k_major_ = is_fp8(a_type_) || !rng_.percent(35);
    b_k_major_ = is_fp8(b_type_) || !rng_.percent(35);
    if (brk_ == Break::kOperandMajor8bit) (rng_.percent(50) ? a_k_major_ : b_k_major_) = false;
    batch_ = brk_ == Break::kAuxShape ? 1 : rng_.between(1, options_.max_batch);
    const auto ragged = [&] {
      return rng_.percent(25) ? rng_.between(1, 8) : rng_.between(1, options_.max_dim);
    };
    const auto aligned = [&] {
      return mod_ * rng_.between(1, std::max<std::int64_t>(1, options_.max_dim / mod_));
    };
    k_ = (a_k_major_ || b_k_major_) ? aligned() : ragged();
    m_ = a_k_major_ ? ragged() : aligned();
    n_ = b_k_major_ ? ragged() : aligned();
    if (brk_ == Break::kChainedGemm) n_ = k_ = aligned();
    if (brk_ == Break::kLayoutGroupMajor) m_ = k_ = aligned();
    if (brk_ == Break::kContiguousExtent) {
      // One extent read contiguously by TMA loses its alignment (it stays >= 2, so the
      // operand keeps its major).
      std::vector<std::int64_t*> candidates;
      if (a_k_major_ || b_k_major_) candidates.push_back(&k_);
      if (!a_k_major_) candidates.push_back(&m_);
      if (!b_k_major_) candidates.push_back(&n_);
      std::int64_t& d = *candidates[static_cast<std::size_t>(
          rng_.between(0, static_cast<std::int64_t>(candidates.size()) - 1))];
      d -= rng_.between(1, mod_ - 2);
    }
    if (brk_ == Break::kStrideAlignment || brk_ == Break::kStoreShape)
      m_ = std::max<std::int64_t>(m_, 2);
    if (brk_ == Break::kStrideAlignment) k_ = std::max<std::int64_t>(k_, 2);
    if (brk_ == Break::kOutputMajor) n_ = std::max<std::int64_t>(n_, 2);
    if (brk_ == Break::kOperandMajor) k_ = std::max<std::int64_t>(k_, 2);
    const auto pad = [&] { return rng_.percent(30) ? mod_ * rng_.between(1, 2) : 0; };
    a_pad_ = pad();
    a_batch_pad_ = pad();
    b_pad_ = pad();
    b_batch_pad_ = pad();
    if (brk_ == Break::kStrideAlignment)
      a_pad_ = mod_ * rng_.between(0, 1) + rng_.between(1, mod_ - 1);
    a_batch_one_ = batch_ > 1 && rng_.percent(25);
    // Not both: the problem's batch is the larger operand batch.
    b_batch_one_ = batch_ > 1 && !a_batch_one_ && rng_.percent(25);
    parts_.push_back(fmt::format("b{} M{} N{} K{}", batch_, m_, n_, k_));
  }

  Tensor operand_a(bool k_major, std::int64_t k) {
    const Dimv dims{a_batch_one_ ? 1 : batch_, m_, k};
    Dimv strides = strides_of(dims, k_major ? 2 : 1, a_pad_, a_batch_pad_);
    if (brk_ == Break::kOperandMajor && a_list_.empty()) {
      for (auto& s : strides) s *= 2;
    }
    const std::string name = fmt::format("A{}", a_list_.size());
    parts_.push_back(fmt::format("{}{}{} {}-major pad {}/{}", name, dims_text(dims),
                                 to_string(a_type_), k_major ? "K" : "M", a_pad_, a_batch_pad_));
    if (brk_ == Break::kOperandMajor && a_list_.empty()) parts_.back() += " stride x2";
    auto t = g().tensor(TensorAttributes()
                            .set_name(name)
                            .set_dim(dims)
                            .set_stride(std::move(strides))
                            .set_data_type(a_type_));
    a_list_.push_back(t);
    return t;
  }

  Tensor operand_b(std::int64_t k) {
    const Dimv dims{b_batch_one_ ? 1 : batch_, k, n_};
    const std::string name = fmt::format("B{}", b_list_.size());
    parts_.push_back(fmt::format("{}{}{} {}-major pad {}/{}", name, dims_text(dims),
                                 to_string(b_type_), b_k_major_ ? "K" : "N", b_pad_, b_batch_pad_));
    auto t = g().tensor(TensorAttributes()
                            .set_name(name)
                            .set_dim(dims)
                            .set_stride(strides_of(dims, b_k_major_ ? 1 : 2, b_pad_, b_batch_pad_))
                            .set_data_type(b_type_));
    b_list_.push_back(t);
    return t;
  }

  // An fp32 block-scale input of `x` and the dequantize node reading both.
  Tensor dequantize(const Tensor& x, std::int64_t rows, std::int64_t cols) {
    const auto& d = x->dims();
    const Dimv dims{d[0], (d[1] + rows - 1) / rows, (d[2] + cols - 1) / cols};
    auto scale = g().tensor(
        TensorAttributes().set_name(x->name() + "_scale").set_dim(dims).set_data_type(kFp32));
    auto out = g().block_scale_dequantize(x, scale,
                                          BlockScaleDequantizeAttributes()
                                              .set_name(fmt::format("n{}", node_count_++))
                                              .set_block_size(rows, cols));
    out->set_name(x->name() + "_dequantized");
    parts_.push_back(fmt::format("{}=dequantize({},{}x{})", out->name(), x->name(), rows, cols));
    return out;
  }

  int add_accumulator(const Tensor& a, const Tensor& b, std::int64_t k) {
    const std::string name = fmt::format("acc{}", accs_.size());
    auto acc = g().matmul(a, b, MatmulAttributes().set_name(fmt::format("mm{}", accs_.size())));
    acc->set_name(name);
    parts_.push_back(fmt::format("{}={}@{}", name, a->name(), b->name()));
    const int id = add_value(acc, full(), {});
    // |acc| stays within five standard deviations of a sum of K products of U(-1, 1).
    const double bound = 5.0 * std::sqrt(static_cast<double>(k)) / 3.0 + 0.5;
    at(id).lo = -bound;
    at(id).hi = bound;
    at(id).accumulator = true;
    at(id).roots = {id};
    accs_.push_back(id);
    return id;
  }

  void make_gemms() {
    std::int64_t gemms = rng_.between(0, 99) < 55 ? 1 : rng_.percent(65) ? 2 : 3;
    gemms = std::min<std::int64_t>(gemms, options_.max_gemms);
    if (brk_ == Break::kGemmCount) gemms = 5;
    if (brk_ == Break::kLayoutGroupMajor) gemms = std::max<std::int64_t>(gemms, 2);
    std::set<std::pair<const void*, const void*>> pairs;
    for (std::int64_t i = 0; i < gemms; ++i) {
      Tensor a;
      if (i > 0 && brk_ != Break::kLayoutGroupMajor && rng_.percent(50)) {
        a = a_list_[static_cast<std::size_t>(
            rng_.between(0, static_cast<std::int64_t>(a_list_.size()) - 1))];
      } else {
        const bool k_major =
            (brk_ == Break::kLayoutGroupMajor && i == 1) ? !a_k_major_ : a_k_major_;
        a = operand_a(k_major, k_);
      }
      Tensor b;
      if (i > 0 && rng_.percent(15)) {
        b = b_list_[static_cast<std::size_t>(
            rng_.between(0, static_cast<std::int64_t>(b_list_.size()) - 1))];
      }
      // The same (A, B) twice would give two equal accumulators that look independent.
      if (!b || pairs.contains({a.get(), b.get()})) b = operand_b(k_);
      pairs.insert({a.get(), b.get()});
      Tensor a_in = a;
      Tensor b_in = b;
      if (i == 0 && brk_ == Break::kPrologueOp) {
        const PointwiseMode mode = rng_.pick(
            {PointwiseMode::kRelu, PointwiseMode::kAbs, PointwiseMode::kNeg, PointwiseMode::kTanh});
        a_in = g().pointwise(a, op(mode).set_name(fmt::format("n{}", node_count_++)));
        a_in->set_name("A0_prologue");
        parts_.push_back(fmt::format("A0_prologue={}(A0)", to_string(mode)));
      }
      if (i == 0 && (brk_ == Break::kBlockScaleShape || brk_ == Break::kDequantizePlacement)) {
        a_in = dequantize(a, 1, 128);
        if (brk_ == Break::kDequantizePlacement) {
          b_in = dequantize(b, 128, 128);
          a_in->set_output(true);
        }
      }
      add_accumulator(a_in, b_in, k_);
    }
    if (brk_ == Break::kGemmShapeMismatch) {
      const std::int64_t k2 = k_ + mod_;
      add_accumulator(operand_a(a_k_major_, k2), operand_b(k2), k2);
    }
  }

  // --- values ---------------------------------------------------------------------------

  int add_value(const Tensor& t, Dimv dims, const std::vector<int>& inputs) {
    Value v;
    v.tensor = t;
    v.dims = std::move(dims);
    const int id = static_cast<int>(values_.size());
    v.ancestors.insert(id);
    for (int in : inputs) {
      const Value& u = at(in);
      v.roots.insert(u.roots.begin(), u.roots.end());
      v.rounds.insert(u.rounds.begin(), u.rounds.end());
      v.ancestors.insert(u.ancestors.begin(), u.ancestors.end());
    }
    for (int in : inputs) ++at(in).uses;
    values_.push_back(std::move(v));
    return id;
  }

  // A pointwise node over `inputs` whose result lies in [lo, hi].
  int emit(PointwiseAttributes attrs, const std::vector<int>& inputs, double lo, double hi,
           std::string label = {}) {
    attrs.set_name(fmt::format("n{}", node_count_++));
    const PointwiseMode mode = attrs.mode;
    Tensor t;
    if (inputs.size() == 1) t = g().pointwise(at(inputs[0]).tensor, attrs);
    if (inputs.size() == 2) t = g().pointwise(at(inputs[0]).tensor, at(inputs[1]).tensor, attrs);
    if (inputs.size() == 3) {
      t = g().pointwise(at(inputs[0]).tensor, at(inputs[1]).tensor, at(inputs[2]).tensor, attrs);
    }
    const std::string name = fmt::format("v{}", values_.size());
    t->set_name(name);
    Dimv dims{1, 1, 1};
    std::vector<std::string> names;
    for (int in : inputs) {
      for (std::size_t i = 0; i < 3; ++i) dims[i] = std::max(dims[i], at(in).dims[i]);
      names.push_back(at(in).tensor->name());
    }
    const int id = add_value(t, dims, inputs);
    at(id).lo = lo;
    at(id).hi = hi;
    at(id).exact = exact_op(attrs) &&
                   std::all_of(inputs.begin(), inputs.end(), [&](int in) { return at(in).exact; });
    parts_.push_back(
        fmt::format("{}={}{}({})", name, to_string(mode), label, fmt::join(names, ",")));
    return id;
  }

  static bool exact_op(const PointwiseAttributes& a) {
    switch (a.mode) {
      case PointwiseMode::kIdentity:
      case PointwiseMode::kNeg:
      case PointwiseMode::kAbs:
      case PointwiseMode::kMax:
      case PointwiseMode::kMin:
      case PointwiseMode::kSelect: return true;
      case PointwiseMode::kRelu: return a.relu_lower_clip_slope.value_or(0.0f) == 0.0f;
      default: return arity(a.mode) == 2 && a.mode >= PointwiseMode::kCmpGt;
    }
  }

  int monotone(PointwiseMode mode, int v, double (*f)(double)) {
    return emit(op(mode), {v}, f(at(v).lo), f(at(v).hi));
  }

  int tanh_of(int v) {
    return monotone(PointwiseMode::kTanh, v, [](double x) { return std::tanh(x); });
  }

  int squash(int v, double limit) { return at(v).magnitude() > limit ? tanh_of(v) : v; }

  int abs_of(int v) {
    const Value& x = at(v);
    const double lo = x.lo >= 0 ? x.lo : x.hi <= 0 ? -x.hi : 0.0;
    return emit(op(PointwiseMode::kAbs), {v}, lo, x.magnitude());
  }

  int exp_of(int v) {
    if (at(v).hi > kMaxExpInput || at(v).lo < -30.0) v = tanh_of(v);
    return monotone(PointwiseMode::kExp, v, [](double x) { return std::exp(x); });
  }

  // A value >= kMinPositive computed from `v`: exp(tanh(v)) lies in [0.37, 2.72].
  int positive(int v) {
    if (at(v).lo >= kMinPositive) return v;
    const int e = exp_of(tanh_of(v));
    if (rng_.percent(50)) return e;
    const int a = abs_of(squash(v, 30.0));
    return emit(op(PointwiseMode::kAdd), {a, e}, at(a).lo + at(e).lo, at(a).hi + at(e).hi);
  }

  // Two values may meet in a node unless they share an origin through different rounding
  // points: their difference would be a rounding error, which fp32 and fp64 round apart.
  bool compatible(int u, int w) {
    const auto& a = at(u).roots;
    const auto& b = at(w).roots;
    const bool shared = std::any_of(a.begin(), a.end(), [&](int r) { return b.contains(r); });
    return !shared || at(u).rounds == at(w).rounds;
  }

  int new_aux(DataType type = kFp32, bool random_type = true) {
    const std::int64_t mode = rng_.between(0, 3);  // scalar, row, column, full
    const bool rows = mode == 1 || mode == 3;
    const bool cols = mode == 2 || mode == 3;
    const Dimv dims{batch_ > 1 && rng_.percent(50) ? 1 : batch_, rows ? m_ : 1, cols ? n_ : 1};
    if (random_type) type = rng_.pick({kFp32, kBf16, kFp16});
    const int contiguous = dims[1] > 1 && rng_.percent(25) ? 1 : 2;
    const std::int64_t pad = rng_.percent(30) ? rng_.between(1, 6) : 0;
    const std::int64_t batch_pad = rng_.percent(30) ? rng_.between(1, 6) : 0;
    const std::string name = fmt::format("aux{}", aux_count_++);
    auto t = g().tensor(TensorAttributes()
                            .set_name(name)
                            .set_dim(dims)
                            .set_stride(strides_of(dims, contiguous, pad, batch_pad))
                            .set_data_type(type));
    static constexpr std::string_view kModes[] = {"scalar", "row", "column", "full"};
    parts_.push_back(
        fmt::format("{}{}{} {}{}", name, dims_text(dims), to_string(type), kModes[mode],
                    contiguous == 1 ? " M-major" : "",
                    pad || batch_pad ? fmt::format(" pad {}/{}", pad, batch_pad) : std::string()));
    const int id = add_value(t, dims, {});
    at(id).lo = -1.0;
    at(id).hi = 1.0;
    at(id).input = true;
    at(id).exact = true;
    at(id).roots = {id};
    return id;
  }

  std::vector<int> ids_where(const std::function<bool(const Value&, int)>& pred) {
    std::vector<int> ids;
    for (int i = 0; i < static_cast<int>(values_.size()); ++i) {
      if (pred(at(i), i)) ids.push_back(i);
    }
    return ids;
  }

  int pick_id(const std::vector<int>& ids) {
    return ids[static_cast<std::size_t>(
        rng_.between(0, static_cast<std::int64_t>(ids.size()) - 1))];
  }

  // The input of the next op: the latest full value (a chain) or any full one (fan-out).
  int primary() {
    const auto ids = ids_where([&](const Value& v, int) { return !v.input && v.dims == full(); });
    return rng_.percent(60) ? ids.back() : pick_id(ids);
  }

  // Kernel parameters taken so far: operands, aux inputs, outputs and taps (scales only
  // come with declines). A fused plan has at most kernels::kMaxKernelBuffers of them.
  std::int64_t buffers_used() {
    const auto aux = ids_where([](const Value& x, int) { return x.input; });
    return static_cast<std::int64_t>(a_list_.size() + b_list_.size() + aux.size() +
                                     outputs_.size() + taps_.size());
  }

  bool crowded() {
    return options_.fit_kernel_buffers &&
           buffers_used() >= kernels::kMaxKernelBuffers - kReservedBuffers;
  }

  // A second input for `v`: an earlier value (fan-in) or an aux input, old or new. Once
  // the aux inputs would crowd out the outputs and taps, an old one is taken where it can.
  int partner(int v) {
    if (crowded() || rng_.percent(45)) {
      const auto ids =
          ids_where([&](const Value& x, int w) { return w != v && !x.tap && compatible(v, w); });
      if (!ids.empty()) return pick_id(ids);
    }
    if (crowded() || rng_.percent(35)) {
      const auto ids =
          ids_where([&](const Value& x, int w) { return x.input && compatible(v, w); });
      if (!ids.empty()) return pick_id(ids);
    }
    return new_aux();
  }

  // --- ops ------------------------------------------------------------------------------

  int relu(int v) {
    auto attrs = op(PointwiseMode::kRelu);
    double lower = 0.0;
    double slope = 0.0;
    double upper = std::numeric_limits<double>::infinity();
    std::vector<std::string> params;
    if (rng_.percent(40)) {
      const float s = rng_.pick({0.01f, 0.1f, 0.25f});
      attrs.set_relu_lower_clip_slope(s);
      slope = s;
      params.push_back(fmt::format("slope {}", s));
    }
    if (rng_.percent(30)) {
      const float l = rng_.pick({-0.5f, 0.25f, 1.0f});
      attrs.set_relu_lower_clip(l);
      lower = l;
      params.push_back(fmt::format("lower {}", l));
    }
    // An upper clip above the lower one keeps relu continuous.
    if (rng_.percent(30)) {
      const float u = static_cast<float>(lower) + rng_.pick({0.5f, 2.0f, 6.0f});
      attrs.set_relu_upper_clip(u);
      upper = u;
      params.push_back(fmt::format("upper {}", u));
    }
    const auto f = [&](double x) {
      return x > lower ? std::min(x, upper) : lower + slope * (x - lower);
    };
    return emit(attrs, {v}, f(at(v).lo), f(at(v).hi),
                params.empty() ? std::string() : fmt::format("[{}]", fmt::join(params, " ")));
  }

  int unary(int v) {
    const Value& x = at(v);
    const double lo = x.lo;
    const double hi = x.hi;
    const auto mode =
        static_cast<PointwiseMode>(rng_.between(0, static_cast<int>(PointwiseMode::kSquare)));
    switch (mode) {
      case PointwiseMode::kIdentity: {
        // A cast: the declared type rounds the running value (fp32 does not).
        const DataType type = rng_.pick({kBf16, kFp16, kFp32});
        const int id = emit(op(mode), {v}, lo, hi);
        declare(id, type);
        return id;
      }
      case PointwiseMode::kRelu: return relu(v);
      case PointwiseMode::kGeluErf:
      case PointwiseMode::kGeluTanh:
        return emit(op(mode), {v}, lo < 0 ? std::max(lo, -0.2) : 0.0, std::max(hi, 0.0));
      case PointwiseMode::kSilu: {
        // silu(x) = x * sigmoid(beta x) >= max(x, -0.28 / beta) below 0.
        auto attrs = op(mode);
        std::string label;
        if (rng_.percent(50)) {
          const float beta = rng_.pick({0.5f, 1.702f});
          attrs.set_swish_beta(beta);
          label = fmt::format("[beta {}]", beta);
        }
        return emit(attrs, {v}, lo < 0 ? std::max(lo, -0.6) : 0.0, std::max(hi, 0.0), label);
      }
      case PointwiseMode::kSigmoid: return monotone(mode, v, sigmoid);
      case PointwiseMode::kTanh: return tanh_of(v);
      case PointwiseMode::kExp: return exp_of(v);
      case PointwiseMode::kLog:
        return monotone(mode, positive(v), [](double y) { return std::log(y); });
      case PointwiseMode::kAbs: return abs_of(v);
      case PointwiseMode::kNeg: return emit(op(mode), {v}, -hi, -lo);
      case PointwiseMode::kSqrt: {
        const int y = lo >= 0 ? v : abs_of(v);
        return monotone(mode, y, [](double z) { return std::sqrt(z); });
      }
      case PointwiseMode::kRsqrt: {
        const int y = positive(v);
        return emit(op(mode), {y}, 1.0 / std::sqrt(at(y).hi), 1.0 / std::sqrt(at(y).lo));
      }
      case PointwiseMode::kReciprocal: {
        const int y = positive(v);
        return emit(op(mode), {y}, 1.0 / at(y).hi, 1.0 / at(y).lo);
      }
      default: {  // kSquare
        const int y = squash(v, 10.0);
        const Value& z = at(y);
        const double low = z.lo >= 0 ? z.lo * z.lo : z.hi <= 0 ? z.hi * z.hi : 0.0;
        return emit(op(PointwiseMode::kSquare), {y}, low, z.magnitude() * z.magnitude());
      }
    }
  }

  // [lo, hi] of f over the corners of two ranges (f monotone in each argument).
  template <class F>
  std::pair<double, double> corners(int u, int w, F f) {
    const double c[4] = {f(at(u).lo, at(w).lo), f(at(u).lo, at(w).hi), f(at(u).hi, at(w).lo),
                         f(at(u).hi, at(w).hi)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }

  int arithmetic(PointwiseMode mode, int u, int w) {
    switch (mode) {
      case PointwiseMode::kAdd:
      case PointwiseMode::kSub: {
        if (at(u).magnitude() + at(w).magnitude() > kMaxMagnitude) {
          u = squash(u, 100.0);
          w = squash(w, 100.0);
        }
        if (rng_.percent(50)) std::swap(u, w);
        const bool add = mode == PointwiseMode::kAdd;
        return emit(op(mode), {u, w}, add ? at(u).lo + at(w).lo : at(u).lo - at(w).hi,
                    add ? at(u).hi + at(w).hi : at(u).hi - at(w).lo);
      }
      case PointwiseMode::kMul: {
        if (at(u).magnitude() * at(w).magnitude() > kMaxMagnitude) {
          u = squash(u, 30.0);
          w = squash(w, 30.0);
        }
        if (rng_.percent(50)) std::swap(u, w);
        const auto [lo, hi] = corners(u, w, [](double x, double y) { return x * y; });
        return emit(op(mode), {u, w}, lo, hi);
      }
      case PointwiseMode::kDiv: {
        const int x = squash(u, 250.0);
        const int y = positive(w);
        const auto [lo, hi] = corners(x, y, [](double p, double q) { return p / q; });
        return emit(op(mode), {x, y}, lo, hi);
      }
      case PointwiseMode::kMax:
      case PointwiseMode::kMin: {
        if (rng_.percent(50)) std::swap(u, w);
        const bool max = mode == PointwiseMode::kMax;
        const double lo = max ? std::max(at(u).lo, at(w).lo) : std::min(at(u).lo, at(w).lo);
        const double hi = max ? std::max(at(u).hi, at(w).hi) : std::min(at(u).hi, at(w).hi);
        return emit(op(mode), {u, w}, lo, hi);
      }
      default: {  // kPow: a positive base to an exponent in [-1, 1]
        const int base = positive(squash(u, 10.0));
        const int e = (at(w).lo >= -1.0 && at(w).hi <= 1.0) ? w : tanh_of(w);
        const auto [lo, hi] = corners(base, e, [](double x, double y) { return std::pow(x, y); });
        return emit(op(PointwiseMode::kPow), {base, e}, lo, hi);
      }
    }
  }

  int binary(int v) {
    const auto mode = rng_.pick({PointwiseMode::kAdd, PointwiseMode::kSub, PointwiseMode::kMul,
                                 PointwiseMode::kDiv, PointwiseMode::kMax, PointwiseMode::kMin,
                                 PointwiseMode::kPow});
    return arithmetic(mode, v, partner(v));
  }

  // An exact value other than `avoid`: an old one, or a new aux input.
  int exact_value(int avoid) {
    const auto ids =
        ids_where([&](const Value& x, int id) { return x.exact && !x.tap && id != avoid; });
    if (!ids.empty() && (crowded() || rng_.percent(60))) return pick_id(ids);
    return new_aux();
  }

  // 0 or 1 from two exact values. A comparison of computed values would flip wherever
  // fp32 and fp64 land on either side of a tie (one flip in a stored mask of thousands of
  // elements breaks fp32's tolerance), so masks come from aux inputs and are then applied
  // to the accumulators by mul and select. eq and ne compare relu of both, which are equal
  // exactly where both are <= 0.
  int compare() {
    const auto mode =
        rng_.pick({PointwiseMode::kCmpGt, PointwiseMode::kCmpGe, PointwiseMode::kCmpLt,
                   PointwiseMode::kCmpLe, PointwiseMode::kCmpEq, PointwiseMode::kCmpNe});
    int u = exact_value(-1);
    int w = exact_value(u);
    if (mode == PointwiseMode::kCmpEq || mode == PointwiseMode::kCmpNe) {
      u = emit(op(PointwiseMode::kRelu), {u}, std::max(at(u).lo, 0.0), std::max(at(u).hi, 0.0));
      w = emit(op(PointwiseMode::kRelu), {w}, std::max(at(w).lo, 0.0), std::max(at(w).hi, 0.0));
    }
    const int id = emit(op(mode), {u, w}, 0.0, 1.0);
    at(id).discrete = true;
    return id;
  }

  int select(int v) {
    const auto conds = ids_where([](const Value& x, int) { return x.discrete; });
    const int cond = !conds.empty() && rng_.percent(60) ? pick_id(conds) : compare();
    const int w = partner(v);
    return emit(op(PointwiseMode::kSelect), {v, w, cond}, std::min(at(v).lo, at(w).lo),
                std::max(at(v).hi, at(w).hi));
  }

  void declare(int id, DataType type) {
    Value& v = at(id);
    v.tensor->set_data_type(type);
    v.declared = true;
    if (type != kFp32) v.rounds.insert(id);
    parts_.back() += fmt::format(":{}", to_string(type));
  }

  // Sometimes the new value is declared bf16 or fp16: a rounding point.
  void maybe_round(int id) {
    if (at(id).declared || at(id).magnitude() > kMaxMagnitude || !rng_.percent(15)) return;
    declare(id, rng_.pick({kBf16, kFp16}));
  }

  void random_op() {
    const int v = primary();
    const std::int64_t r = rng_.between(0, 99);
    const int id = r < 45 ? unary(v) : r < 75 ? binary(v) : r < 88 ? compare() : select(v);
    maybe_round(id);
  }

  // Several accumulators first meet in one value (sum, difference, gated product, ...).
  void combine_accumulators() {
    if (accs_.size() < 2) return;
    int current = accs_[0];
    for (std::size_t i = 1; i < accs_.size(); ++i) {
      const auto mode = rng_.pick({PointwiseMode::kAdd, PointwiseMode::kSub, PointwiseMode::kMul,
                                   PointwiseMode::kMax, PointwiseMode::kMin, PointwiseMode::kSilu});
      if (mode == PointwiseMode::kSilu) {  // gated: silu(current) * acc_i
        const int s = emit(op(mode), {current}, std::max(at(current).lo, -0.3),
                           std::max(at(current).hi, 0.0));
        current = arithmetic(PointwiseMode::kMul, s, accs_[i]);
      } else {
        current = arithmetic(mode, current, accs_[i]);
      }
    }
    maybe_round(current);
  }

  // --- breaks, outputs, taps ------------------------------------------------------------

  void mark_output(int id, DataType type, int contiguous, std::int64_t pad, std::int64_t batch_pad,
                   Dimv strides = {}) {
    Value& v = at(id);
    if (strides.empty()) strides = strides_of(v.dims, contiguous, pad, batch_pad);
    v.tensor->set_output(true).set_data_type(type).set_dim(v.dims).set_stride(strides);
    if (type != kFp32 && is_float(type)) v.rounds.insert(id);
    v.declared = true;
    outputs_.push_back(id);
    parts_.push_back(fmt::format("out {}:{} {}-major {}", v.tensor->name(), to_string(type),
                                 contiguous == 2 ? "N" : "M",
                                 fmt::format("[{}]", fmt::join(strides, ","))));
  }

  // The breaks made after the epilogue: each adds a node (and an output keeping it live).
  void late_break() {
    const auto fulls = ids_where([&](const Value& v, int) { return !v.input && v.dims == full(); });
    switch (brk_) {
      case Break::kChainedGemm: {
        auto c = g().tensor(TensorAttributes()
                                .set_name("C0")
                                .set_dim({b_batch_one_ ? 1 : batch_, n_, n_})
                                .set_data_type(b_type_));
        parts_.push_back(fmt::format("C0[{},{},{}]", b_batch_one_ ? 1 : batch_, n_, n_));
        must_live_.push_back(add_accumulator(at(pick_id(accs_)).tensor, c, n_));
        break;
      }
      case Break::kTapConsumed: {
        const int v = pick_id(fulls);
        const Dimv dims = n_ > 1 ? Dimv{batch_, m_, 1} : Dimv{batch_, 1, n_};
        auto t = g().reduction(at(v).tensor, ReductionAttributes()
                                                 .set_name(fmt::format("n{}", node_count_++))
                                                 .set_mode(ReductionMode::kMax));
        t->set_name("T_consumed").set_dim(dims).set_data_type(kFp32).set_output(rng_.percent(50));
        parts_.push_back(
            fmt::format("T_consumed=max({}){}", at(v).tensor->name(), dims_text(dims)));
        const int tap = add_value(t, dims, {v});
        mark_output(emit(op(PointwiseMode::kSub), {v, tap}, -1, 1), kFp32, 2, 0, 0);
        break;
      }
      case Break::kAuxShape: {
        const int big = add_value(g().tensor(TensorAttributes()
                                                 .set_name("aux_batch")
                                                 .set_dim({rng_.between(2, 3), m_, n_})
                                                 .set_data_type(kBf16)),
                                  {}, {});
        at(big).dims = at(big).tensor->dims();
        at(big).input = true;
        parts_.push_back(fmt::format("aux_batch{}", dims_text(at(big).dims)));
        mark_output(emit(op(PointwiseMode::kAdd), {pick_id(fulls), big}, -1, 1), kBf16, 2, 0, 0);
        break;
      }
      case Break::kStoreShape: {
        const int scalar = add_value(
            g().tensor(
                TensorAttributes().set_name("aux_scalar").set_dim({1, 1, 1}).set_data_type(kFp32)),
            {1, 1, 1}, {});
        at(scalar).input = true;
        mark_output(tanh_of(scalar), kFp32, 2, 0, 0);
        break;
      }
      case Break::kAuxDataType: {
        const int aux = new_aux(DataType::kInt8, false);
        mark_output(emit(op(PointwiseMode::kMul), {pick_id(fulls), aux}, -1, 1), kFp32, 2, 0, 0);
        break;
      }
      default: break;
    }
  }

  void choose_outputs() {
    std::int64_t count = rng_.between(0, 9) == 0 ? 0 : rng_.between(1, 3);
    if (brk_ == Break::kOutputMajor || brk_ == Break::kOutputDataType)
      count = std::max<std::int64_t>(count, 1);
    // Sinks first (latest first), so that little of the DAG is dead; then any full value.
    auto candidates = ids_where([&](const Value& v, int id) {
      return !v.input && v.dims == full() && !v.tensor->is_output() && v.uses == 0 &&
             std::find(must_live_.begin(), must_live_.end(), id) == must_live_.end();
    });
    std::reverse(candidates.begin(), candidates.end());
    auto others = ids_where([&](const Value& v, int) {
      return !v.input && v.dims == full() && !v.tensor->is_output() && v.uses > 0;
    });
    std::vector<int> order = candidates;
    while (!others.empty()) {
      const auto i =
          static_cast<std::size_t>(rng_.between(0, static_cast<std::int64_t>(others.size()) - 1));
      order.push_back(others[i]);
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (std::size_t i = 0; i < order.size() && static_cast<std::int64_t>(i) < count; ++i) {
      const int id = order[i];
      const Value& v = at(id);
      // A declared type is kept; a value read further is stored as fp32, so storing it adds
      // no rounding point its readers did not see while the DAG was drawn.
      DataType type = v.declared   ? v.tensor->data_type()
                      : v.uses > 0 ? kFp32
                                   : rng_.pick({kFp32, kBf16, kFp16});
      if (i == 0 && brk_ == Break::kOutputDataType) type = DataType::kInt32;
      int contiguous = rng_.percent(60) ? 2 : 1;
      if (m_ == 1) contiguous = 2;
      if (n_ == 1) contiguous = 1;
      const std::int64_t pad = rng_.percent(40) ? rng_.between(1, 9) : 0;
      const std::int64_t batch_pad = rng_.percent(30) ? rng_.between(1, 9) : 0;
      Dimv strides;
      if (i == 0 && brk_ == Break::kOutputMajor) {
        strides = strides_of(v.dims, 2, 0, 0);
        for (auto& s : strides) s *= 2;
      }
      mark_output(id, type, contiguous, pad, batch_pad, strides);
    }
  }

  // exp(tanh(v) / 2^k), as k square roots of exp(tanh(v)), with 2^k >= elements / 40: a
  // product of `elements` such factors lies in [e^-40, e^40], inside fp32's range whatever
  // the distribution of v.
  int near_one(int v, std::int64_t elements) {
    int x = exp_of(tanh_of(v));
    for (std::int64_t reach = 40; reach < elements; reach *= 2) {
      x = monotone(PointwiseMode::kSqrt, x, [](double z) { return std::sqrt(z); });
    }
    return x;
  }

  void choose_taps() {
    const std::int64_t count = rng_.percent(40) ? 0 : rng_.between(1, 3);
    for (std::int64_t i = 0; i < count; ++i) {
      const auto fulls =
          ids_where([&](const Value& v, int) { return !v.input && v.dims == full(); });
      int v = pick_id(fulls);
      auto mode =
          static_cast<ReductionMode>(rng_.between(0, static_cast<int>(ReductionMode::kNorm2)));
      // The min (max) of values that are >= 0 (<= 0) sits where fp32 keeps no relative
      // accuracy (gelu's tail, 1 + tanh(-8)); amax reads the largest magnitudes instead.
      const Value& x = at(v);
      if (!x.exact && ((mode == ReductionMode::kMin && x.lo > -0.1) ||
                       (mode == ReductionMode::kMax && x.hi < 0.1))) {
        mode = ReductionMode::kAmax;
      }
      std::vector<Dimv> shapes;
      if (n_ > 1) shapes.push_back({batch_, m_, 1});
      if (m_ > 1) shapes.push_back({batch_, 1, n_});
      if (batch_ * m_ * n_ > 1) shapes.push_back({1, 1, 1});
      if (m_ * n_ > 1) shapes.push_back({batch_, 1, 1});
      if (shapes.empty()) return;  // a 1x1x1 problem has nothing to reduce
      const Dimv dims = shapes[static_cast<std::size_t>(
          rng_.between(0, static_cast<std::int64_t>(shapes.size()) - 1))];
      if (mode == ReductionMode::kMul) {
        v = near_one(
            v, (dims[0] == 1 ? batch_ : 1) * (dims[1] == 1 ? m_ : 1) * (dims[2] == 1 ? n_ : 1));
      }
      const std::int64_t pad = rng_.percent(30) ? rng_.between(1, 3) : 0;
      const std::string name = fmt::format("T{}", tap_count_++);
      auto t = g().reduction(
          at(v).tensor,
          ReductionAttributes().set_name(fmt::format("n{}", node_count_++)).set_mode(mode));
      const Dimv strides = strides_of(dims, 2, pad, pad);
      t->set_name(name).set_dim(dims).set_stride(strides).set_data_type(kFp32).set_output(true);
      const int id = add_value(t, dims, {v});
      at(id).tap = true;
      taps_.push_back(id);
      parts_.push_back(fmt::format("tap {}={}({}){}:[{}]", name, to_string(mode),
                                   at(v).tensor->name(), dims_text(dims), fmt::join(strides, ",")));
    }
  }

  // Every value a break hangs on reaches an output (a dead node declines nothing), and a
  // fusable graph stores something computed from an accumulator (else no_matmul).
  void keep_live() {
    std::set<int> live;
    for (int id : outputs_) live.insert(at(id).ancestors.begin(), at(id).ancestors.end());
    for (int id : taps_) live.insert(at(id).ancestors.begin(), at(id).ancestors.end());
    std::vector<int> needed = must_live_;
    if (brk_ != Break::kNone) needed.insert(needed.end(), accs_.begin(), accs_.end());
    const bool any_acc =
        std::any_of(accs_.begin(), accs_.end(), [&](int a) { return live.contains(a); });
    if (!any_acc) {
      needed.push_back(ids_where([&](const Value& v, int) {
                         return !v.input && v.dims == full() && !v.roots.empty() &&
                                std::any_of(accs_.begin(), accs_.end(),
                                            [&](int a) { return v.roots.contains(a); });
                       }).back());
    }
    for (int id : needed) {
      if (live.contains(id)) continue;
      if (!at(id).tensor->is_output()) mark_output(id, kFp32, n_ == 1 ? 1 : 2, 0, 0);
      live.insert(at(id).ancestors.begin(), at(id).ancestors.end());
    }
  }

  Rng rng_;
  RandomGraphOptions options_;
  RandomGraph result_;
  Break brk_ = Break::kNone;
  std::int64_t batch_ = 1, m_ = 1, n_ = 1, k_ = 1;
  DataType a_type_ = kBf16, b_type_ = kBf16;
  std::int64_t mod_ = 8;
  bool a_k_major_ = true, b_k_major_ = true;
  bool a_batch_one_ = false, b_batch_one_ = false;
  std::int64_t a_pad_ = 0, a_batch_pad_ = 0, b_pad_ = 0, b_batch_pad_ = 0;
  std::vector<Tensor> a_list_, b_list_;
  std::vector<Value> values_;
  std::vector<int> accs_, outputs_, taps_, must_live_;
  std::vector<std::string> parts_;
  int node_count_ = 0, aux_count_ = 0, tap_count_ = 0;
};

}  // namespace

Result<RandomGraph> make_random_graph(std::uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).run();
}

}  // namespace fusedgemm::test
