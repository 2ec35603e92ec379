// reference::compare (issue 10): NaN and inf positions compare exactly and the reference is
// taken after its rounding, so a correct NaN, a correct overflow to inf and a saturating
// store pass, while a NaN or inf in the wrong place fails.
#include "reference/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "fusedgemm/plan.h"
#include "fusedgemm/variant_pack.h"
#include "runtime/numeric.h"
#include "support/build_options.h"
#include "support/flavor_graphs.h"

using namespace fusedgemm;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A [1, 1, n] output of `type`: what the plan stored (`stored`, encoded as a store would)
// and the reference's exact values.
struct Case {
  DataType type;
  std::vector<double> stored;
  std::vector<double> exact;
};

reference::Comparison judge(const Case& c, std::vector<std::uint8_t> order_effects = {}) {
  const auto n = static_cast<std::int64_t>(c.exact.size());
  reference::HostTensor got;
  got.type = c.type;
  got.layout = Layout::row_major({1, 1, n});
  got.bytes.assign(static_cast<std::size_t>(reference::storage_bytes(c.type, got.layout)), 0);
  for (std::int64_t i = 0; i < n; ++i) got.set(0, 0, i, c.stored[static_cast<std::size_t>(i)]);
  reference::OutputValues want{1, c.type, {1, 1, n}, c.exact, {}, std::move(order_effects)};
  for (double v : c.exact) want.rounded.push_back(numeric::round_to_double(c.type, v));
  return reference::compare(got, want);
}

}  // namespace

TEST(Compare, NanAndInfWhereTheReferenceHasThemPass) {
  // relu with lower clip inf (inf + 0 * -inf), pow of a negative base with a fractional
  // exponent, a mul reduction overflowing: NaN and inf are the right answers there.
  const auto c = judge({DataType::kFloat32, {kNan, 2.0, kInf, -kInf}, {kNan, 2.0, kInf, -kInf}});
  EXPECT_TRUE(c.passed()) << c.summary();
  EXPECT_EQ(c.nonfinite_mismatches, 0);
  EXPECT_EQ(c.relative_error, 0.0);
}

TEST(Compare, SaturatingStoresPass) {
  // fp8 e4m3 and fp4 e2m1 stores saturate to +-max finite (448, 6); e8m0 to 2^127.
  EXPECT_TRUE(judge({DataType::kFp8E4M3, {1e6, -1e6, 1.0}, {1e6, -1e6, 1.0}}).passed());
  EXPECT_TRUE(judge({DataType::kFp4E2M1, {100.0, -7.0, 1.0}, {100.0, -7.0, 1.0}}).passed());
  EXPECT_TRUE(judge({DataType::kE8M0, {1e300, 1.0}, {1e300, 1.0}}).passed());
}

TEST(Compare, NonFiniteInTheWrongPlaceFails) {
  const std::vector<Case> cases = {
      {DataType::kFloat32, {kNan, 2.0}, {1.0, 2.0}},    // NaN where the reference is finite
      {DataType::kFloat32, {1.0, 2.0}, {kNan, 2.0}},    // finite where the reference is NaN
      {DataType::kFloat32, {kInf, 2.0}, {-kInf, 2.0}},  // inf of the other sign
      {DataType::kFloat32, {kInf, 2.0}, {kNan, 2.0}},   // inf for NaN
      {DataType::kBFloat16, {kInf, 2.0}, {1.0, 2.0}}};  // inf where the reference is finite
  for (const auto& c : cases) {
    const auto r = judge(c);
    EXPECT_FALSE(r.passed()) << r.summary();
    EXPECT_EQ(r.nonfinite_mismatches, 1) << r.summary();
  }
}

TEST(Compare, FiniteErrorBeyondTheToleranceFails) {
  const auto r = judge({DataType::kBFloat16, {1.0, 2.5}, {1.0, 2.0}});
  EXPECT_FALSE(r.passed());
  EXPECT_GT(r.relative_error, 0.2);
  EXPECT_EQ(r.nonfinite_mismatches, 0);
  EXPECT_TRUE(judge({DataType::kBFloat16, {1.0, 2.0}, {1.0, 2.001}}).passed());
}

// Where a mul reduction's fp32 partials may leave the range in some order, the value that
// order gives passes and stays out of the relative error: inf of the product's sign past
// 2^128, any value of the sign or zero below 2^-126, NaN (inf * 0) where both may happen.
// Anything else is judged as before.
TEST(Compare, WhatSomeCombineOrderGivesPassesWhereTheReferenceMarksIt) {
  using reference::kMayOverflow, reference::kMayUnderflow, reference::kNegative;
  const auto both = static_cast<std::uint8_t>(kMayOverflow | kMayUnderflow);
  struct Marked {
    double stored;
    std::uint8_t effects;
    bool passes;
  };
  const std::vector<Marked> marked = {
      {kInf, kMayOverflow, true},
      {-kInf, kMayOverflow | kNegative, true},
      {-kInf, kMayOverflow, false},  // the wrong sign
      {kInf, 0, false},              // unmarked
      {kInf, kMayUnderflow, false},  // an underflow gives no inf
      {0.0, kMayUnderflow, true},
      {0.75, kMayUnderflow, true},  // precision lost below the normal range
      {-0.75, kMayUnderflow, false},
      {kNan, both, true},
      {kNan, kMayOverflow, false},
      {3.0, kMayOverflow, false},  // finite: judged by the relative error
  };
  for (const Marked& m : marked) {
    SCOPED_TRACE(::testing::Message() << m.stored << " with effects " << int{m.effects});
    const auto c = judge({DataType::kFloat32, {m.stored, 2.0}, {1.0, 2.0}}, {m.effects, 0});
    EXPECT_EQ(c.passed(), m.passes) << c.summary();
    EXPECT_EQ(c.order_dependent, m.passes ? 1 : 0) << c.summary();
    if (m.passes) {
      EXPECT_EQ(c.relative_error, 0.0);  // the element left out of the error
    }
  }
  // The reference's own value always passes, whatever the marks.
  const auto exact = judge({DataType::kFloat32, {1.0, 2.0}, {1.0, 2.0}}, {both, 0});
  EXPECT_TRUE(exact.passed()) << exact.summary();
  EXPECT_EQ(exact.order_dependent, 0);
  EXPECT_NE(judge({DataType::kFloat32, {kInf, 2.0}, {1.0, 2.0}}, {kMayOverflow, 0})
                .summary()
                .find(", 1 order-dependent"),
            std::string::npos);
}

// End to end on the host device, both engines: a row mul tap over GEMM outputs 2^64, 2^64,
// 2^-64, 2^-64, 1, 1, 1, 1 (+-1 each row: an exact product of 1) overflows at an fp32
// evaluator's first combine in every order that pairs neighbours first. The oracle failed
// that inf (`fusedgemm run`'s mul taps at batch 3 failed so); it passes now, counted as
// order-dependent, while D is judged as ever.
TEST(Compare, AMulTapThatOverflowsPartWayPassesOnEitherEngine) {
  auto graph = test::validated_graph(R"({
    "fusedgemm_graph": 1, "name": "row product",
    "tensors": [
      {"name": "A", "dims": [1, 8, 8], "data_type": "bf16"},
      {"name": "B", "dims": [1, 8, 8], "strides": [64, 1, 8], "data_type": "bf16"},
      {"name": "acc"},
      {"name": "D", "dims": [1, 8, 8], "data_type": "fp32", "output": true},
      {"name": "P", "dims": [1, 8, 1], "data_type": "fp32", "output": true}],
    "nodes": [
      {"kind": "matmul", "name": "g", "inputs": ["A", "B"], "outputs": ["acc"]},
      {"kind": "pointwise", "name": "id", "inputs": ["acc"], "outputs": ["D"],
       "mode": "identity"},
      {"kind": "reduction", "name": "prod", "inputs": ["acc"], "outputs": ["P"],
       "mode": "mul"}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  const double p = std::ldexp(1.0, 64);
  const std::vector<double> column = {p, p, 1 / p, 1 / p, 1, 1, 1, 1};
  // acc[m, n] = sum over 8 k of (+-1/8) * column[n]: exactly +-column[n].
  reference::HostTensors inputs;
  auto input = [&](const char* name, auto value) {
    auto t = graph->find_tensor(name);
    reference::HostTensor host = reference::make_host_tensor(*t.value()).value();
    for (std::int64_t i = 0; i < 8; ++i) {
      for (std::int64_t j = 0; j < 8; ++j) host.set(0, i, j, value(i, j));
    }
    auto& held = inputs[*t.value()->uid()] = std::move(host);
    return held.bytes.data();
  };
  std::uint8_t* a = input("A", [](std::int64_t m, std::int64_t) { return m % 2 ? -0.125 : 0.125; });
  std::uint8_t* b = input("B", [&](std::int64_t, std::int64_t n) { return column[n]; });
  const auto expected = reference::evaluate(graph.value(), inputs);
  ASSERT_TRUE(expected) << expected.status().message();
  const std::int64_t d_uid = *graph->find_tensor("D").value()->uid();
  for (const Engine engine : {Engine::kFused, Engine::kFallback}) {
    SCOPED_TRACE(std::string(to_string(engine)));
    auto plan = build(graph.value(), test::on_engine(make_host_device(), engine));
    ASSERT_TRUE(plan) << plan.status().message();
    std::vector<float> d(64, kNan);
    std::vector<float> products(8, kNan);
    VariantPack pack;
    pack.set("A", a).set("B", b).set("D", d.data()).set("P", products.data());
    std::vector<std::uint8_t> workspace(plan->workspace_bytes());
    ASSERT_TRUE(plan->execute(pack, Workspace{workspace.data(), workspace.size()}, nullptr));
    for (const auto& want : expected->outputs()) {
      const std::vector<float>& have = want.uid == d_uid ? d : products;
      reference::HostTensor got;
      got.type = DataType::kFloat32;
      got.layout = Layout::row_major(want.dims);
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(have.data());
      got.bytes.assign(bytes, bytes + have.size() * sizeof(float));
      const auto c = reference::compare(got, want);
      EXPECT_TRUE(c.passed()) << (want.uid == d_uid ? "D: " : "P: ") << c.summary();
      if (want.uid == d_uid) continue;
      // The premise: this engine's fp32 products did overflow, where fp64's are 1.
      for (float v : products) EXPECT_EQ(v, std::numeric_limits<float>::infinity());
      EXPECT_EQ(c.order_dependent, 8) << c.summary();
    }
  }
}
