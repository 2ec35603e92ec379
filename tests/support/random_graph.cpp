#include "support/random_graph.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "fusion/analyze.h"
#include "recipe/limits.h"
#include "recipe/rules.h"
#include "support/random_graph_generator.h"

namespace fusedgemm::test {
namespace random_graph_detail {
namespace {

// The most factors a generated product tap multiplies (Generator::choose_taps).
constexpr std::int64_t kMaxProductFactors = 2048;

constexpr Break kBreaks[] = {
    Break::kChainedGemm,         Break::kPrologueOp,      Break::kOperandMajor,
    Break::kTapConsumed,         Break::kAuxShape,        Break::kStoreShape,
    Break::kDequantizePlacement, Break::kOutputMajor,     Break::kGemmShapeMismatch,
    Break::kGemmCount,           Break::kOperandDataType, Break::kLayoutGroupMajor,
    Break::kOperandMajor8bit,    Break::kBlockScaleShape, Break::kContiguousExtent,
    Break::kStrideAlignment,     Break::kAuxDataType,     Break::kOutputDataType,
};

// Where rule `id` stands in the table (the first refusal in table order is the one named).
std::ptrdiff_t table_index(std::string_view id) {
  const auto& table = recipe::rule_table();
  return std::find_if(table.begin(), table.end(), [&](const auto& r) { return r.id == id; }) -
         table.begin();
}

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

}  // namespace

// Strides of [b, rows, cols] with `contiguous` (1 or 2) at unit stride, the other axis
// padded by `pad` elements and the batch by `batch_pad`.
Dimv strides_of(const Dimv& d, int contiguous, std::int64_t pad, std::int64_t batch_pad) {
  if (contiguous == 2) return {d[1] * (d[2] + pad) + batch_pad, d[2] + pad, 1};
  return {d[2] * (d[1] + pad) + batch_pad, 1, d[1] + pad};
}

std::string dims_text(const Dimv& d) {
  return fmt::format("[{},{},{}]", d[0], d[1], d[2]);
}

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

Generator::Generator(std::uint64_t seed, const RandomGraphOptions& options)
    : rng_(seed), options_(options) {
  result_.seed = seed;
  result_.graph.set_name(fmt::format("random_{}", seed));
}

Result<RandomGraph> Generator::run() {
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
  FG_TRY(g().validate());
  // Past the pointwise operations one fused epilogue takes (the live ones, as analyze keeps
  // them), epilogue_ops declines the graph unless the break's rule comes first in the table.
  FG_ASSIGN_OR_RETURN(const fusion::Analysis analysis, fusion::analyze(g()));
  const auto& epilogue = analysis.program.epilogue;
  const auto pointwise = std::count_if(epilogue.begin(), epilogue.end(), [](const auto& node) {
    return node.op == fusion::EpilogueOp::kPointwise;
  });
  if (!analysis.decline && pointwise > recipe::kMaxEpilogueOps &&
      (result_.expected_decline.empty() ||
       table_index(result_.expected_decline) > table_index("epilogue_ops"))) {
    result_.expected_decline = "epilogue_ops";
    parts_.push_back(fmt::format("{} pointwise ops", pointwise));
  }
  result_.summary = fmt::format("{}", fmt::join(parts_, " | "));
  if (!result_.expected_decline.empty()) {
    result_.summary += fmt::format(" | declines {}", result_.expected_decline);
  }
  return std::move(result_);
}

void Generator::choose_problem() {
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

Tensor Generator::operand_a(bool k_major, std::int64_t k) {
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

Tensor Generator::operand_b(std::int64_t k) {
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
Tensor Generator::dequantize(const Tensor& x, std::int64_t rows, std::int64_t cols) {
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

int Generator::add_accumulator(const Tensor& a, const Tensor& b, std::int64_t k) {
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

void Generator::make_gemms() {
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
      const bool k_major = (brk_ == Break::kLayoutGroupMajor && i == 1) ? !a_k_major_ : a_k_major_;
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

void Generator::mark_output(int id, DataType type, int contiguous, std::int64_t pad,
                            std::int64_t batch_pad, Dimv strides) {
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
void Generator::late_break() {
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
      parts_.push_back(fmt::format("T_consumed=max({}){}", at(v).tensor->name(), dims_text(dims)));
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

void Generator::choose_outputs() {
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

// exp(tanh(v) / 2^k), as k square roots of exp(tanh(v)), with 2^k >= elements / 4: a
// product of `elements` such factors lies in [e^-4, e^4], and v's errors reach it at most 4x.
// A product of n factors sums their relative errors: with 2^k >= n / 40 (the bound that only
// kept the product in fp32's range) a 64-row product of an fp8 GEMM's values read 1.1e-3
// against fp32's 1e-3 on both engines (seed 401, H200).
int Generator::near_one(int v, std::int64_t elements) {
  int x = exp_of(tanh_of(v));
  for (std::int64_t reach = 4; reach < elements; reach *= 2) {
    x = monotone(PointwiseMode::kSqrt, x, [](double z) { return std::sqrt(z); });
  }
  return x;
}

void Generator::choose_taps() {
  const std::int64_t count = rng_.percent(40) ? 0 : rng_.between(1, 3);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto fulls = ids_where([&](const Value& v, int) { return !v.input && v.dims == full(); });
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
    const std::int64_t reduced =
        (dims[0] == 1 ? batch_ : 1) * (dims[1] == 1 ? m_ : 1) * (dims[2] == 1 ? n_ : 1);
    // Each fp32 factor near 1 is off by up to half an ulp (6e-8), and a product of n of them
    // by n times that, in one direction where the factors are alike: past kMaxProductFactors
    // that nears fp32's 1e-3 tolerance whatever the engine does (seed 7447: 20,880 factors,
    // 1.1e-3 on the host device). A longer reduction adds instead.
    if (mode == ReductionMode::kMul && reduced > kMaxProductFactors) mode = ReductionMode::kAdd;
    if (mode == ReductionMode::kMul) v = near_one(v, reduced);
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
void Generator::keep_live() {
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

}  // namespace random_graph_detail

Result<RandomGraph> make_random_graph(std::uint64_t seed, const RandomGraphOptions& options) {
  return random_graph_detail::Generator(seed, options).run();
}

}  // namespace fusedgemm::test
