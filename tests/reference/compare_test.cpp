// reference::compare (issue 10): NaN and inf positions compare exactly and the reference is
// taken after its rounding, so a correct NaN, a correct overflow to inf and a saturating
// store pass, while a NaN or inf in the wrong place fails.
#include "reference/compare.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "runtime/numeric.h"

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

reference::Comparison judge(const Case& c) {
  const auto n = static_cast<std::int64_t>(c.exact.size());
  reference::HostTensor got;
  got.type = c.type;
  got.layout = Layout::row_major({1, 1, n});
  got.bytes.assign(static_cast<std::size_t>(reference::storage_bytes(c.type, got.layout)), 0);
  for (std::int64_t i = 0; i < n; ++i) got.set(0, 0, i, c.stored[static_cast<std::size_t>(i)]);
  reference::OutputValues want{1, c.type, {1, 1, n}, c.exact, {}};
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
