#include "reference/graph_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "runtime/numeric.h"

using namespace fusedgemm;
using reference::HostTensor;
using reference::HostTensors;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

Tensor leaf(Graph& g, std::string name, Dims dims, DataType type) {
  return g.tensor(TensorAttributes()
                      .set_name(std::move(name))
                      .set_dim({dims[0], dims[1], dims[2]})
                      .set_data_type(type));
}

// A host tensor for `t` holding f(b, r, c), encoded to t's type.
HostTensor filled(const Tensor& t, const std::function<double(int, int, int)>& f) {
  HostTensor host = reference::make_host_tensor(*t).value();
  const Dims& s = host.layout.shape;
  for (int b = 0; b < s[0]; ++b) {
    for (int r = 0; r < s[1]; ++r) {
      for (int c = 0; c < s[2]; ++c) host.set(b, r, c, f(b, r, c));
    }
  }
  return host;
}

std::vector<double> values_of(const reference::Evaluation& e, const Tensor& t) {
  auto v = e.values(*t->uid());
  EXPECT_TRUE(v.is_ok()) << v.status().message();
  return v.is_ok() ? std::vector<double>(v->begin(), v->end()) : std::vector<double>{};
}

std::vector<double> rounded_of(const reference::Evaluation& e, const Tensor& t) {
  auto v = e.rounded(*t->uid());
  EXPECT_TRUE(v.is_ok()) << v.status().message();
  return v.is_ok() ? std::vector<double>(v->begin(), v->end()) : std::vector<double>{};
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

reference::Evaluation evaluate_or_fail(const Graph& g, const HostTensors& inputs) {
  auto result = reference::evaluate(g, inputs);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  return result.is_ok() ? std::move(result).value() : reference::Evaluation({});
}

// out[b, m, n] = sum_k A[b, m, k] * B[b, k, n] with batch-1 operands broadcast, written
// out by hand against the host tensors themselves.
std::vector<double> hand_matmul(const HostTensor& a, const HostTensor& b) {
  const Dims& as = a.layout.shape;
  const Dims& bs = b.layout.shape;
  const std::int64_t batch = std::max(as[0], bs[0]);
  std::vector<double> out;
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t m = 0; m < as[1]; ++m) {
      for (std::int64_t n = 0; n < bs[2]; ++n) {
        double acc = 0;
        for (std::int64_t k = 0; k < as[2]; ++k) {
          acc += a.at(as[0] == 1 ? 0 : i, m, k) * b.at(bs[0] == 1 ? 0 : i, k, n);
        }
        out.push_back(acc);
      }
    }
  }
  return out;
}

struct BatchCase {
  std::int64_t a_batch;
  std::int64_t b_batch;
};

}  // namespace

TEST(GraphReference, MatmulMatchesHandLoopsWithBatchBroadcast) {
  for (const BatchCase& bc : {BatchCase{1, 1}, BatchCase{2, 2}, BatchCase{2, 1}, BatchCase{1, 3}}) {
    Graph g;
    auto a = leaf(g, "A", {bc.a_batch, 3, 5}, DataType::kBFloat16);
    // B K-major, so the reference must read through strides.
    auto b = g.tensor(TensorAttributes()
                          .set_name("B")
                          .set_dim({bc.b_batch, 5, 4})
                          .set_stride({20, 1, 5})
                          .set_data_type(DataType::kBFloat16));
    auto c = g.matmul(a, b);
    c->set_output(true).set_data_type(DataType::kFloat32).set_name("C");
    ASSERT_TRUE(g.validate());
    auto inputs = reference::make_random_inputs(g, 11);
    ASSERT_TRUE(inputs);
    auto result = evaluate_or_fail(g, inputs.value());
    const auto expected = hand_matmul(inputs->at(*a->uid()), inputs->at(*b->uid()));
    // bf16 products and short sums are exact in fp64, so the order of summation is moot.
    EXPECT_EQ(values_of(result, c), expected) << bc.a_batch << " x " << bc.b_batch;
    EXPECT_EQ(result.outputs()[0].dims, (Dims{std::max(bc.a_batch, bc.b_batch), 3, 4}));
  }
}

TEST(GraphReference, AuxBroadcastsInEveryMode) {
  const std::vector<Dims> modes = {{1, 1, 1}, {2, 4, 1}, {2, 1, 3}, {2, 4, 3}, {1, 1, 3}};
  for (const Dims& aux_dims : modes) {
    Graph g;
    auto x = leaf(g, "x", {2, 4, 3}, DataType::kFloat32);
    auto aux = leaf(g, "aux", aux_dims, DataType::kFloat32);
    auto d = g.pointwise(x, aux, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
    d->set_output(true).set_data_type(DataType::kFloat32);
    ASSERT_TRUE(g.validate());
    HostTensors inputs;
    inputs[*x->uid()] = filled(x, [](int b, int r, int c) { return 100 * b + 10 * r + c; });
    inputs[*aux->uid()] =
        filled(aux, [](int b, int r, int c) { return 1000 * (b + 1) + 0.5 * r + 0.25 * c; });
    auto result = evaluate_or_fail(g, inputs);
    const auto got = values_of(result, d);
    ASSERT_EQ(got.size(), 24u);
    for (int b = 0; b < 2; ++b) {
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 3; ++c) {
          const double aux_value = inputs[*aux->uid()].at(
              aux_dims[0] == 1 ? 0 : b, aux_dims[1] == 1 ? 0 : r, aux_dims[2] == 1 ? 0 : c);
          EXPECT_EQ(got[(b * 4 + r) * 3 + c], 100 * b + 10 * r + c + aux_value)
              << to_string(aux_dims) << " at " << b << "," << r << "," << c;
        }
      }
    }
  }
}

namespace {

struct PointwiseCase {
  std::string label;
  PointwiseAttributes attrs;
  std::function<double(double, double, double)> expected;
};

std::vector<PointwiseCase> pointwise_cases() {
  using M = PointwiseMode;
  auto mode = [](M m) { return PointwiseAttributes().set_mode(m); };
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double k = std::sqrt(2 / std::numbers::pi);
  return {
      {"identity", mode(M::kIdentity), [](double x, double, double) { return x; }},
      {"relu", mode(M::kRelu), [](double x, double, double) { return x > 0 ? x : 0.0; }},
      {"relu_slope_clips",
       mode(M::kRelu).set_relu_lower_clip(-1).set_relu_lower_clip_slope(0.125f).set_relu_upper_clip(
           1),
       [](double x, double, double) { return x > -1 ? std::min(x, 1.0) : -1 + 0.125 * (x + 1); }},
      {"gelu_erf", mode(M::kGeluErf),
       [](double x, double, double) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_tanh", mode(M::kGeluTanh),
       [k](double x, double, double) {
         return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * std::pow(x, 3))));
       }},
      {"silu", mode(M::kSilu), [sigmoid](double x, double, double) { return x * sigmoid(x); }},
      {"swish_beta_2", mode(M::kSilu).set_swish_beta(2),
       [sigmoid](double x, double, double) { return x * sigmoid(2 * x); }},
      {"sigmoid", mode(M::kSigmoid), [sigmoid](double x, double, double) { return sigmoid(x); }},
      {"tanh", mode(M::kTanh), [](double x, double, double) { return std::tanh(x); }},
      {"exp", mode(M::kExp), [](double x, double, double) { return std::exp(x); }},
      {"log", mode(M::kLog), [](double x, double, double) { return std::log(x); }},
      {"abs", mode(M::kAbs), [](double x, double, double) { return std::fabs(x); }},
      {"neg", mode(M::kNeg), [](double x, double, double) { return -x; }},
      {"sqrt", mode(M::kSqrt), [](double x, double, double) { return std::sqrt(x); }},
      {"rsqrt", mode(M::kRsqrt), [](double x, double, double) { return 1 / std::sqrt(x); }},
      {"reciprocal", mode(M::kReciprocal), [](double x, double, double) { return 1 / x; }},
      {"square", mode(M::kSquare), [](double x, double, double) { return x * x; }},
      {"add", mode(M::kAdd), [](double x, double y, double) { return x + y; }},
      {"sub", mode(M::kSub), [](double x, double y, double) { return x - y; }},
      {"mul", mode(M::kMul), [](double x, double y, double) { return x * y; }},
      {"div", mode(M::kDiv), [](double x, double y, double) { return x / y; }},
      {"max", mode(M::kMax), [](double x, double y, double) { return std::max(x, y); }},
      {"min", mode(M::kMin), [](double x, double y, double) { return std::min(x, y); }},
      {"pow", mode(M::kPow), [](double x, double y, double) { return std::pow(x, y); }},
      {"cmp_gt", mode(M::kCmpGt), [](double x, double y, double) { return x > y ? 1.0 : 0.0; }},
      {"cmp_ge", mode(M::kCmpGe), [](double x, double y, double) { return x >= y ? 1.0 : 0.0; }},
      {"cmp_lt", mode(M::kCmpLt), [](double x, double y, double) { return x < y ? 1.0 : 0.0; }},
      {"cmp_le", mode(M::kCmpLe), [](double x, double y, double) { return x <= y ? 1.0 : 0.0; }},
      {"cmp_eq", mode(M::kCmpEq), [](double x, double y, double) { return x == y ? 1.0 : 0.0; }},
      {"cmp_ne", mode(M::kCmpNe), [](double x, double y, double) { return x != y ? 1.0 : 0.0; }},
      {"select", mode(M::kSelect), [](double x, double y, double z) { return z != 0 ? x : y; }},
  };
}

}  // namespace

TEST(GraphReference, EveryPointwiseModeMatchesStdMath) {
  const std::vector<double> xs = {-2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 3.0};
  const std::vector<double> ys = {0.5, -1.0, -0.5, 0.0, 0.5, 3.0, -2.0, 2.0};
  const std::vector<double> zs = {0.0, 1.0, 0.0, -2.0, 0.0, 0.5, 1.0, 0.0};
  const auto cases = pointwise_cases();
  std::set<PointwiseMode> covered;
  for (const PointwiseCase& pc : cases) {
    Graph g;
    const Dims dims = {1, 1, static_cast<std::int64_t>(xs.size())};
    std::vector<Tensor> ins = {leaf(g, "x", dims, DataType::kFloat32),
                               leaf(g, "y", dims, DataType::kFloat32),
                               leaf(g, "z", dims, DataType::kFloat32)};
    const int n = arity(pc.attrs.mode);
    Tensor out = n == 1   ? g.pointwise(ins[0], pc.attrs)
                 : n == 2 ? g.pointwise(ins[0], ins[1], pc.attrs)
                          : g.pointwise(ins[0], ins[1], ins[2], pc.attrs);
    out->set_output(true).set_data_type(DataType::kFloat32);
    ASSERT_TRUE(g.validate()) << pc.label;
    HostTensors inputs;
    for (int i = 0; i < n; ++i) {
      const auto& src = i == 0 ? xs : i == 1 ? ys : zs;
      inputs[*ins[i]->uid()] = filled(ins[i], [&](int, int, int c) { return src[c]; });
    }
    auto result = evaluate_or_fail(g, inputs);
    const auto got = values_of(result, out);
    ASSERT_EQ(got.size(), xs.size()) << pc.label;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double want = pc.expected(xs[i], ys[i], zs[i]);
      EXPECT_TRUE(same(got[i], want) || std::fabs(got[i] - want) <= 4e-15 * std::fabs(want))
          << pc.label << " at x=" << xs[i] << " y=" << ys[i] << ": " << got[i] << " vs " << want;
    }
    covered.insert(pc.attrs.mode);
  }
  EXPECT_EQ(covered.size(), all_pointwise_modes().size());
}

TEST(GraphReference, PointwiseKnownValues) {
  Graph g;
  auto x = leaf(g, "x", {1, 1, 1}, DataType::kFloat32);
  auto nan = leaf(g, "nan", {1, 1, 1}, DataType::kFloat32);
  auto gelu = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kGeluErf));
  auto gelu_tanh = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kGeluTanh));
  auto silu = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kSilu));
  auto max_nan = g.pointwise(x, nan, PointwiseAttributes().set_mode(PointwiseMode::kMax));
  for (const auto& t : {gelu, gelu_tanh, silu, max_nan}) {
    t->set_output(true).set_data_type(DataType::kFloat32);
  }
  ASSERT_TRUE(g.validate());
  HostTensors inputs;
  inputs[*x->uid()] = filled(x, [](int, int, int) { return 1.0; });
  inputs[*nan->uid()] = filled(nan, [](int, int, int) { return kNan; });
  auto result = evaluate_or_fail(g, inputs);
  EXPECT_NEAR(values_of(result, gelu)[0], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(values_of(result, gelu_tanh)[0], 0.8411919906082768, 1e-15);
  EXPECT_NEAR(values_of(result, silu)[0], 0.7310585786300049, 1e-15);
  // fmax, as the host device and the kernels compute it (docs/SEMANTICS.md).
  EXPECT_EQ(values_of(result, max_nan)[0], 1.0);
}

namespace {

// The reduction written out longhand: fold every input element into the output element it
// lands on, then finish avg and norm2.
std::vector<double> hand_reduce(ReductionMode mode, const HostTensor& x, const Dims& out) {
  const Dims& in = x.layout.shape;
  std::vector<std::vector<double>> groups(static_cast<std::size_t>(out[0] * out[1] * out[2]));
  for (std::int64_t b = 0; b < in[0]; ++b) {
    for (std::int64_t r = 0; r < in[1]; ++r) {
      for (std::int64_t c = 0; c < in[2]; ++c) {
        const std::int64_t o = ((out[0] == 1 ? 0 : b) * out[1] + (out[1] == 1 ? 0 : r)) * out[2] +
                               (out[2] == 1 ? 0 : c);
        groups[o].push_back(x.at(b, r, c));
      }
    }
  }
  std::vector<double> result;
  for (const auto& g : groups) {
    double v = 0;
    switch (mode) {
      case ReductionMode::kAdd:
        for (double e : g) v += e;
        break;
      case ReductionMode::kAvg:
        for (double e : g) v += e / g.size();
        break;
      case ReductionMode::kMax: v = *std::max_element(g.begin(), g.end()); break;
      case ReductionMode::kMin: v = *std::min_element(g.begin(), g.end()); break;
      case ReductionMode::kAmax:
        for (double e : g) v = std::max(v, std::fabs(e));
        break;
      case ReductionMode::kMul:
        v = 1;
        for (double e : g) v *= e;
        break;
      case ReductionMode::kNorm1:
        for (double e : g) v += std::fabs(e);
        break;
      case ReductionMode::kNorm2:
        for (double e : g) v += e * e;
        v = std::sqrt(v);
        break;
    }
    result.push_back(v);
  }
  return result;
}

}  // namespace

TEST(GraphReference, EveryReductionModeOnRowsColumnsAndAll) {
  const std::vector<Dims> outs = {{2, 3, 1}, {2, 1, 4}, {1, 1, 1}, {1, 3, 4}};
  for (ReductionMode mode : all_reduction_modes()) {
    for (const Dims& out_dims : outs) {
      Graph g;
      auto x = leaf(g, "x", {2, 3, 4}, DataType::kFloat32);
      auto y = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kIdentity));
      auto tap = g.reduction(y, ReductionAttributes().set_mode(mode));
      tap->set_dim({out_dims[0], out_dims[1], out_dims[2]}).set_output(true);
      ASSERT_TRUE(g.validate()) << g.validate().message();
      HostTensors inputs;
      // Mixed signs, so that max, min, amax and norm1 each pick differently.
      inputs[*x->uid()] = filled(x, [](int b, int r, int c) {
        return (c % 2 == 0 ? 1 : -1) * (0.5 + 0.25 * r + 0.125 * c + b);
      });
      auto result = evaluate_or_fail(g, inputs);
      const auto got = values_of(result, tap);
      const auto want = hand_reduce(mode, inputs[*x->uid()], out_dims);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-12 * std::fabs(want[i]))
            << to_string(mode) << " into " << to_string(out_dims) << " at " << i;
      }
    }
  }
}

// A mul reduction marks the products whose fp32 partials may leave the range in some
// combine order (docs/SEMANTICS.md): the factors above 1 reaching 2^128, those below 1
// falling under 2^-126, with the product's sign; a product whose every partial stays in
// range has none, and neither has any other mode.
TEST(GraphReference, AMulReductionMarksProductsWhosePartialsMayLeaveFp32) {
  const double p = std::ldexp(1.0, 64);
  const double q = std::ldexp(1.0, -60);
  const std::vector<std::vector<double>> rows = {
      {p, p, q, q},                  // 2^8: 2^128 part-way
      {-p, p, q, q},                 // -2^8, the same
      {1 / p, 1 / p, 1 / q, 1 / q},  // 2^-8: 2^-128 part-way
      {p, p, 0, 1},                  // 0: inf * 0 part-way
      {-2, 3, 0.5, 0.25},            // in range in every order
  };
  const auto m = static_cast<std::int64_t>(rows.size());
  for (ReductionMode mode : {ReductionMode::kMul, ReductionMode::kAdd}) {
    Graph g;
    auto x = leaf(g, "x", {1, m, 4}, DataType::kFloat32);
    auto y = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kIdentity));
    auto tap = g.reduction(y, ReductionAttributes().set_mode(mode));
    tap->set_dim({1, m, 1}).set_output(true);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    HostTensors inputs;
    inputs[*x->uid()] = filled(x, [&](int, int r, int c) { return rows[r][c]; });
    auto result = evaluate_or_fail(g, inputs);
    ASSERT_EQ(result.outputs().size(), 1u);
    const auto& effects = result.outputs()[0].order_effects;
    if (mode != ReductionMode::kMul) {
      EXPECT_TRUE(effects.empty());
      continue;
    }
    using reference::kMayOverflow, reference::kMayUnderflow, reference::kNegative;
    const std::vector<std::uint8_t> want = {kMayOverflow, kMayOverflow | kNegative, kMayUnderflow,
                                            kMayOverflow | kMayUnderflow, 0};
    EXPECT_EQ(effects, want);
    EXPECT_EQ(values_of(result, tap)[0], 256.0);  // the fp64 product, finite
  }
}

// A declared bf16 on a virtual tensor rounds the running value there: the next node sees
// round_to(bf16, .) of it, and an undeclared (inferred fp32) tensor does not round.
TEST(GraphReference, DeclaredIntermediateTypeRoundsTheRunningValue) {
  for (bool declare : {true, false}) {
    Graph g;
    auto a = leaf(g, "A", {1, 4, 8}, DataType::kFloat32);
    auto b = leaf(g, "B", {1, 8, 4}, DataType::kFloat32);
    auto bias = leaf(g, "bias", {1, 1, 4}, DataType::kFloat32);
    auto c = g.matmul(a, b);
    if (declare) c->set_data_type(DataType::kBFloat16);
    auto d = g.pointwise(c, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
    d->set_output(true).set_data_type(DataType::kBFloat16);
    ASSERT_TRUE(g.validate());
    auto inputs = reference::make_random_inputs(g, 5);
    ASSERT_TRUE(inputs);
    auto result = evaluate_or_fail(g, inputs.value());
    const auto product = hand_matmul(inputs->at(*a->uid()), inputs->at(*b->uid()));
    const auto got = values_of(result, d);
    const auto got_rounded = rounded_of(result, d);
    int changed = 0;
    for (int r = 0; r < 4; ++r) {
      for (int n = 0; n < 4; ++n) {
        const int i = r * 4 + n;
        const double c_value =
            declare ? numeric::round_to_double(DataType::kBFloat16, product[i]) : product[i];
        const double want = c_value + inputs->at(*bias->uid()).at(0, 0, n);
        EXPECT_EQ(got[i], want) << (declare ? "declared" : "inferred") << " at " << i;
        EXPECT_EQ(got_rounded[i], numeric::round_to_double(DataType::kBFloat16, want));
        changed += c_value != product[i];
      }
    }
    // fp32 random products are not bf16 values: the declaration must have mattered.
    if (declare) {
      EXPECT_GT(changed, 8);
    }
  }
}

TEST(GraphReference, Fp32OutputRoundsOnlyInTheRoundedAccessor) {
  Graph g;
  auto x = leaf(g, "x", {1, 1, 1}, DataType::kFloat32);
  auto y = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kReciprocal));
  y->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate());
  HostTensors inputs;
  inputs[*x->uid()] = filled(x, [](int, int, int) { return 3.0; });
  auto result = evaluate_or_fail(g, inputs);
  EXPECT_EQ(values_of(result, y)[0], 1.0 / 3.0);
  EXPECT_EQ(rounded_of(result, y)[0], static_cast<double>(1.0f / 3.0f));
}

// An fp32 value keeps fp64's precision but not its range (docs/SEMANTICS.md: overflow in
// fp32 is inf of the sign): exp(x) / exp(x) is 1 where exp(x) fits fp32 and NaN (inf / inf)
// where it does not, as the engines compute it; an fp32 output past the range is inf, one
// below FLT_MAX + half an ulp rounds to FLT_MAX and stays finite.
TEST(GraphReference, Fp32ValuesPastTheRangeAreInfinite) {
  Graph g;
  auto x = leaf(g, "x", {1, 1, 6}, DataType::kFloat32);
  auto s = leaf(g, "s", {1, 1, 6}, DataType::kFloat32);
  auto e = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kExp));
  auto ratio = g.pointwise(e, e, PointwiseAttributes().set_mode(PointwiseMode::kDiv));
  ratio->set_output(true).set_data_type(DataType::kFloat32);
  auto big = g.pointwise(s, s, PointwiseAttributes().set_mode(PointwiseMode::kMul));
  big->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate());
  // exp(88) < FLT_MAX < exp(89); sqrt(FLT_MAX) ~ 1.8e19.
  const std::vector<double> xs = {1.0, 88.0, 89.0, 100.0, -100.0, 0.5};
  const double root = std::sqrt(static_cast<double>(std::numeric_limits<float>::max()));
  const std::vector<double> ss = {1e19, root, 2e19, -2e19, 3.0, -1e30};
  HostTensors inputs;
  inputs[*x->uid()] = filled(x, [&](int, int, int c) { return xs[c]; });
  inputs[*s->uid()] = filled(s, [&](int, int, int c) { return ss[c]; });
  auto result = evaluate_or_fail(g, inputs);
  const auto got_ratio = values_of(result, ratio);
  const auto got_big = values_of(result, big);
  ASSERT_EQ(got_ratio.size(), 6u);
  ASSERT_EQ(got_big.size(), 6u);
  const double inf = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 6; ++c) {
    const bool overflows = std::exp(xs[c]) > std::numeric_limits<float>::max();
    EXPECT_TRUE(same(got_ratio[c], overflows ? kNan : 1.0)) << "exp(" << xs[c] << ")";
    // The host tensor holds s as an fp32 value: square that.
    const double held = inputs.at(*s->uid()).at(0, 0, c);
    const double square = held * held;
    const double want = square >= 0x1.ffffffp+127 ? inf : square;
    EXPECT_TRUE(same(got_big[c], want)) << held << " squared: " << got_big[c];
  }
  EXPECT_EQ(got_big[2], inf);  // 4e38 > FLT_MAX
  EXPECT_TRUE(std::isfinite(got_big[1]));
}

TEST(GraphReference, DequantizeMultipliesByTheBlockScale) {
  Graph g;
  auto x = leaf(g, "x", {1, 4, 6}, DataType::kFp8E4M3);
  auto scale = leaf(g, "scale", {1, 2, 2}, DataType::kFloat32);
  auto out = g.block_scale_dequantize(
      x, scale, BlockScaleDequantizeAttributes().set_block_size(2, 4));  // ragged last column
  out->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  HostTensors inputs;
  inputs[*x->uid()] = filled(x, [](int, int r, int c) { return r - c * 0.5; });
  inputs[*scale->uid()] = filled(scale, [](int, int i, int j) { return 1 + 2 * i + j; });
  auto result = evaluate_or_fail(g, inputs);
  const auto got = values_of(result, out);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) {
      EXPECT_EQ(got[r * 6 + c], (r - c * 0.5) * (1 + 2 * (r / 2) + (c / 4))) << r << "," << c;
    }
  }
}

// quantize then dequantize gives x back within y's precision: e4m3 keeps 3 mantissa bits,
// so a half ulp is 2^-4 of the value (2^-10 of the scale for subnormals).
TEST(GraphReference, QuantizeDequantizeRoundTripsWithinPrecision) {
  for (DataType scale_type : {DataType::kFloat32, DataType::kE8M0}) {
    Graph g;
    auto x = leaf(g, "x", {2, 3, 256}, DataType::kFloat32);
    auto [y, scale] =
        g.block_scale_quantize(x, BlockScaleQuantizeAttributes().set_block_size(1, 128));
    y->set_data_type(DataType::kFp8E4M3).set_output(true).set_name("y");
    scale->set_data_type(scale_type).set_output(true).set_name("scale");
    auto back =
        g.block_scale_dequantize(y, scale, BlockScaleDequantizeAttributes().set_block_size(1, 128));
    back->set_output(true).set_data_type(DataType::kFloat32);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    auto inputs = reference::make_random_inputs(g, 3);
    ASSERT_TRUE(inputs);
    const HostTensor& xh = inputs->at(*x->uid());
    auto result = evaluate_or_fail(g, inputs.value());
    const auto got = values_of(result, back);
    const auto scale_exact = values_of(result, scale);
    const auto scale_stored = rounded_of(result, scale);
    const auto y_stored = rounded_of(result, y);
    for (int b = 0; b < 2; ++b) {
      for (int r = 0; r < 3; ++r) {
        for (int blk = 0; blk < 2; ++blk) {
          double amax = 0;
          for (int c = 0; c < 128; ++c)
            amax = std::max(amax, std::fabs(xh.at(b, r, blk * 128 + c)));
          const int s = (b * 3 + r) * 2 + blk;
          EXPECT_DOUBLE_EQ(scale_exact[s], amax / 448);
          EXPECT_EQ(scale_stored[s], numeric::round_to_double(scale_type, amax / 448));
          for (int c = blk * 128; c < blk * 128 + 128; ++c) {
            const int i = (b * 3 + r) * 256 + c;
            const double want = xh.at(b, r, c);
            EXPECT_EQ(got[i], y_stored[i] * scale_stored[s]);
            // e8m0 may round the scale down, and then y saturates at 448.
            if (std::fabs(want) / scale_stored[s] > 448) continue;
            const double tolerance = std::max(std::fabs(want) / 16, scale_stored[s] / 1024);
            EXPECT_LE(std::fabs(got[i] - want), tolerance) << to_string(scale_type) << " " << i;
          }
        }
      }
    }
  }
}

TEST(GraphReference, RefusesUnvalidatedGraphsAndMissingOrMismatchedInputs) {
  Graph g;
  auto a = leaf(g, "A", {1, 2, 2}, DataType::kBFloat16);
  auto b = leaf(g, "B", {1, 2, 2}, DataType::kBFloat16);
  auto c = g.matmul(a, b);
  c->set_output(true).set_data_type(DataType::kFloat32);
  auto unvalidated = reference::evaluate(g, {});
  ASSERT_FALSE(unvalidated);
  EXPECT_EQ(unvalidated.status().code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(unvalidated.status().message().find("reference_graph_not_validated"),
            std::string::npos);

  ASSERT_TRUE(g.validate());
  HostTensors inputs;
  inputs[*a->uid()] = reference::make_host_tensor(*a).value();
  auto missing = reference::evaluate(g, inputs);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("reference_input_missing: tensor 'B'"),
            std::string::npos)
      << missing.status().message();

  inputs[*b->uid()] = reference::make_host_tensor(*b).value();
  inputs[*b->uid()].type = DataType::kFloat16;
  auto wrong_type = reference::evaluate(g, inputs);
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("fp16"), std::string::npos);

  inputs[*b->uid()] = reference::make_host_tensor(*b).value();
  inputs[*b->uid()].bytes.resize(7);
  auto short_bytes = reference::evaluate(g, inputs);
  ASSERT_FALSE(short_bytes);
  EXPECT_NE(short_bytes.status().message().find("at least 8 bytes"), std::string::npos)
      << short_bytes.status().message();

  inputs[*b->uid()] = reference::make_host_tensor(*b).value();
  auto ok = reference::evaluate(g, inputs);
  ASSERT_TRUE(ok) << ok.status().message();
  EXPECT_EQ(ok->values(*a->uid()).status().code(), ErrorCode::kNotFound);
}

// Issue 10: `fusedgemm run --m 65536 --n 65536` died of std::bad_alloc in the reference.
// The limits are refused before anything is allocated, naming the tensor or the node.
TEST(ReferenceLimits, RefusesATensorOfTooManyValues) {
  Graph g;
  auto a = leaf(g, "A", {1, 65536, 128}, DataType::kBFloat16);
  auto b = leaf(g, "B", {1, 128, 65536}, DataType::kBFloat16);
  g.matmul(a, b)->set_output(true).set_name("D").set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  const std::vector<Status> refusals = {reference::check_reference_limits(g),
                                        reference::make_random_inputs(g, 1).status(),
                                        reference::evaluate(g, {}).status()};
  for (const Status& s : refusals) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(s.message().starts_with(
        "reference_tensor_elements: tensor 'D': dims [1, 65536, 65536] hold 4294967296 values"))
        << s.message();
  }
}

TEST(ReferenceLimits, RefusesTooManyMultiplyAdds) {
  Graph g;
  auto a = leaf(g, "A", {1, 8192, 8192}, DataType::kBFloat16);
  auto b = leaf(g, "B", {1, 8192, 2048}, DataType::kBFloat16);
  auto d = g.matmul(a, b, MatmulAttributes().set_name("gemm"));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  const Status s = reference::check_reference_limits(g);
  EXPECT_TRUE(
      s.message().starts_with("reference_multiply_adds: node 'gemm': output dims [1, "
                              "8192, 2048] and K = 8192 bring the graph to 137438953472"))
      << s.message();
  // Half the N is within the limit.
  Graph half;
  auto a2 = leaf(half, "A", {1, 8192, 8192}, DataType::kBFloat16);
  auto b2 = leaf(half, "B", {1, 8192, 1024}, DataType::kBFloat16);
  half.matmul(a2, b2)->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(half.validate());
  EXPECT_TRUE(reference::check_reference_limits(half));
  // An elementwise op counts one operation per value it reads: a relu after it is past.
  half.pointwise(half.nodes().back().outputs[0],
                 PointwiseAttributes().set_name("relu").set_mode(PointwiseMode::kRelu))
      ->set_output(true)
      .set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(half.validate());
  const Status past = reference::check_reference_limits(half);
  EXPECT_TRUE(past.message().starts_with(
      "reference_multiply_adds: node 'relu': its 8388608 values bring the graph to "
      "68727865344 operations"))
      << past.message();
}

// The reference keeps every tensor's values: a chain of 64 ops on [1, 4096, 4096] holds
// more than 2^30 values together, though each tensor is within its own limit.
TEST(ReferenceLimits, RefusesMoreHeldValuesThanMemory) {
  Graph g;
  Tensor x = leaf(g, "x", {1, 4096, 4096}, DataType::kFloat32);
  for (int i = 0; i < 64; ++i) {
    x = g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kNeg));
  }
  x->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  const Status s = reference::check_reference_limits(g);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(s.message().starts_with("reference_held_values: tensor ")) << s.message();
  EXPECT_NE(s.message().find("legal: at most 1073741824 (2^30, 8 GiB of fp64) together"),
            std::string::npos)
      << s.message();
}
