// The epilogue DAG of a random graph: pointwise values over the accumulators and aux
// inputs, each with a rough range and its origins, so that every op reads values it is
// defined and well conditioned on (random_graph.h says which guards keep them so).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernels/kernel_args.h"
#include "support/random_graph_generator.h"

namespace fusedgemm::test::random_graph_detail {
namespace {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

}  // namespace

int Generator::add_value(const Tensor& t, Dimv dims, const std::vector<int>& inputs) {
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
int Generator::emit(PointwiseAttributes attrs, const std::vector<int>& inputs, double lo, double hi,
                    std::string label) {
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
  parts_.push_back(fmt::format("{}={}{}({})", name, to_string(mode), label, fmt::join(names, ",")));
  return id;
}

bool Generator::exact_op(const PointwiseAttributes& a) {
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

int Generator::monotone(PointwiseMode mode, int v, double (*f)(double)) {
  return emit(op(mode), {v}, f(at(v).lo), f(at(v).hi));
}

int Generator::tanh_of(int v) {
  return monotone(PointwiseMode::kTanh, v, [](double x) { return std::tanh(x); });
}

int Generator::abs_of(int v) {
  const Value& x = at(v);
  const double lo = x.lo >= 0 ? x.lo : x.hi <= 0 ? -x.hi : 0.0;
  return emit(op(PointwiseMode::kAbs), {v}, lo, x.magnitude());
}

int Generator::exp_of(int v) {
  if (at(v).hi > kMaxExpInput || at(v).lo < -30.0) v = tanh_of(v);
  return monotone(PointwiseMode::kExp, v, [](double x) { return std::exp(x); });
}

// A value >= kMinPositive computed from `v`: exp(tanh(v)) lies in [0.37, 2.72].
int Generator::positive(int v) {
  if (at(v).lo >= kMinPositive) return v;
  const int e = exp_of(tanh_of(v));
  if (rng_.percent(50)) return e;
  const int a = abs_of(squash(v, 30.0));
  // |s| + exp(tanh(v)), s being v or tanh(v), is at least 1 for every v: it is 1 at v = 0
  // and grows away from 0 on either side (for v < 0, -s + exp(tanh v) has the derivative
  // exp(tanh v) sech^2 v - 1, or (exp(tanh v) - 1) sech^2 v, both < 0), not merely the sum
  // of its terms' least values (0 + 0.37), because both terms read the same v. The bound
  // lets choose_taps see that a log of it is >= 0, so that its min (next to 0, where fp32's
  // absolute error of log near 1 is a large relative one) becomes an amax.
  return emit(op(PointwiseMode::kAdd), {a, e}, std::max(1.0, at(a).lo + at(e).lo),
              at(a).hi + at(e).hi);
}

// Two values may meet in a node unless they share an origin through different rounding
// points: their difference would be a rounding error, which fp32 and fp64 round apart.
bool Generator::compatible(int u, int w) {
  const auto& a = at(u).roots;
  const auto& b = at(w).roots;
  const bool shared = std::any_of(a.begin(), a.end(), [&](int r) { return b.contains(r); });
  return !shared || at(u).rounds == at(w).rounds;
}

int Generator::new_aux(DataType type, bool random_type) {
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

std::vector<int> Generator::ids_where(const std::function<bool(const Value&, int)>& pred) {
  std::vector<int> ids;
  for (int i = 0; i < static_cast<int>(values_.size()); ++i) {
    if (pred(at(i), i)) ids.push_back(i);
  }
  return ids;
}

int Generator::pick_id(const std::vector<int>& ids) {
  return ids[static_cast<std::size_t>(rng_.between(0, static_cast<std::int64_t>(ids.size()) - 1))];
}

// The input of the next op: the latest full value (a chain) or any full one (fan-out).
int Generator::primary() {
  const auto ids = ids_where([&](const Value& v, int) { return !v.input && v.dims == full(); });
  return rng_.percent(60) ? ids.back() : pick_id(ids);
}

// Kernel parameters taken so far: operands, aux inputs, outputs and taps (scales only
// come with declines). A fused plan has at most kernels::kMaxKernelBuffers of them.
std::int64_t Generator::buffers_used() {
  const auto aux = ids_where([](const Value& x, int) { return x.input; });
  return static_cast<std::int64_t>(a_list_.size() + b_list_.size() + aux.size() + outputs_.size() +
                                   taps_.size());
}

bool Generator::crowded() {
  return options_.fit_kernel_buffers &&
         buffers_used() >= kernels::kMaxKernelBuffers - kReservedBuffers;
}

// A second input for `v`: an earlier value (fan-in) or an aux input, old or new. Once
// the aux inputs would crowd out the outputs and taps, an old one is taken where it can.
int Generator::partner(int v) {
  if (crowded() || rng_.percent(45)) {
    const auto ids =
        ids_where([&](const Value& x, int w) { return w != v && !x.tap && compatible(v, w); });
    if (!ids.empty()) return pick_id(ids);
  }
  if (crowded() || rng_.percent(35)) {
    const auto ids = ids_where([&](const Value& x, int w) { return x.input && compatible(v, w); });
    if (!ids.empty()) return pick_id(ids);
  }
  return new_aux();
}

int Generator::relu(int v) {
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

int Generator::unary(int v) {
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

int Generator::arithmetic(PointwiseMode mode, int u, int w) {
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

int Generator::binary(int v) {
  const auto mode =
      rng_.pick({PointwiseMode::kAdd, PointwiseMode::kSub, PointwiseMode::kMul, PointwiseMode::kDiv,
                 PointwiseMode::kMax, PointwiseMode::kMin, PointwiseMode::kPow});
  return arithmetic(mode, v, partner(v));
}

// An exact value other than `avoid`: an old one, or a new aux input.
int Generator::exact_value(int avoid) {
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
int Generator::compare() {
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

int Generator::select(int v) {
  const auto conds = ids_where([](const Value& x, int) { return x.discrete; });
  const int cond = !conds.empty() && rng_.percent(60) ? pick_id(conds) : compare();
  const int w = partner(v);
  return emit(op(PointwiseMode::kSelect), {v, w, cond}, std::min(at(v).lo, at(w).lo),
              std::max(at(v).hi, at(w).hi));
}

void Generator::declare(int id, DataType type) {
  Value& v = at(id);
  v.tensor->set_data_type(type);
  v.declared = true;
  if (type != kFp32) v.rounds.insert(id);
  parts_.back() += fmt::format(":{}", to_string(type));
}

// Sometimes the new value is declared bf16 or fp16: a rounding point.
void Generator::maybe_round(int id) {
  if (at(id).declared || at(id).magnitude() > kMaxMagnitude || !rng_.percent(15)) return;
  declare(id, rng_.pick({kBf16, kFp16}));
}

void Generator::random_op() {
  const int v = primary();
  const std::int64_t r = rng_.between(0, 99);
  const int id = r < 45 ? unary(v) : r < 75 ? binary(v) : r < 88 ? compare() : select(v);
  maybe_round(id);
}

// Several accumulators first meet in one value (sum, difference, gated product, ...).
void Generator::combine_accumulators() {
  if (accs_.size() < 2) return;
  int current = accs_[0];
  for (std::size_t i = 1; i < accs_.size(); ++i) {
    const auto mode = rng_.pick({PointwiseMode::kAdd, PointwiseMode::kSub, PointwiseMode::kMul,
                                 PointwiseMode::kMax, PointwiseMode::kMin, PointwiseMode::kSilu});
    if (mode == PointwiseMode::kSilu) {  // gated: silu(current) * acc_i
      const int s =
          emit(op(mode), {current}, std::max(at(current).lo, -0.3), std::max(at(current).hi, 0.0));
      current = arithmetic(PointwiseMode::kMul, s, accs_[i]);
    } else {
      current = arithmetic(mode, current, accs_[i]);
    }
  }
  maybe_round(current);
}

}  // namespace fusedgemm::test::random_graph_detail
