// Degenerate and resized calls: a plan built at one size is called with views of another
// (the call's problem comes from the A and B views), down to M, N or K of 1 and batch 1 or
// 2. Each call is either refused by a named rule, writing nothing, or matches the fp64
// reference of the same flavor at the call's size — never a wrong answer.
#include <gtest/gtest.h>

#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {
namespace {

constexpr Major kK = Major::kK;
constexpr Major kM = Major::kM;
constexpr Major kN = Major::kN;

struct Size {
  std::int64_t batch, m, n, k;
};

struct SizeCase {
  Flavor flavor;
  FlavorShape built;
  Size called;  // the call's buffers: the same flavor and majors at this size, as views
  // The refusing rule, role and tensor; nullptr when the call is legal.
  const char* rule = nullptr;
  const char* role = nullptr;
  const char* tensor = nullptr;
};

constexpr FlavorShape kKK{.batch = 1, .m = 64, .n = 64, .k = 64};
constexpr FlavorShape kMN{
    .batch = 1, .m = 64, .n = 64, .k = 64, .a_major = kM, .b_major = kN, .out_major = kM};
constexpr FlavorShape kBatched{
    .batch = 2, .m = 64, .n = 64, .k = 64, .out_major = kM, .tap_pad = 1};

// Row taps cannot be called at N of 1 nor column taps at M of 1 here: the reference graph
// at that size would reduce nothing, which validate refuses.
const std::vector<SizeCase>& cases() {
  static const std::vector<SizeCase> kCases = {
      // plain, K-major operands, N-major output
      {Flavor::kPlain, kKK, {1, 1, 64, 64}},
      {Flavor::kPlain, kKK, {1, 64, 1, 64}},
      {Flavor::kPlain, kKK, {1, 64, 64, 1}, "contiguous_extent", "A", "A"},
      {Flavor::kPlain, kKK, {2, 1, 1, 64}},
      {Flavor::kPlain, kKK, {1, 72, 40, 64}},
      {Flavor::kPlain, kKK, {2, 72, 40, 32}},
      {Flavor::kPlain, kKK, {1, 1, 1, 8}},
      // plain, M-major A, N-major B, M-major output
      {Flavor::kPlain, kMN, {1, 1, 64, 64}, "contiguous_extent", "A", "A"},
      {Flavor::kPlain, kMN, {1, 64, 1, 64}, "contiguous_extent", "B", "B"},
      {Flavor::kPlain, kMN, {1, 64, 64, 1}},
      {Flavor::kPlain, kMN, {2, 8, 8, 1}},
      // built batched, called at batch 1 and 2
      {Flavor::kPlain, {.batch = 3, .m = 64, .n = 64, .k = 64}, {1, 64, 64, 64}},
      {Flavor::kPlain, {.batch = 3, .m = 64, .n = 64, .k = 64}, {2, 1, 40, 64}},
      // epilogue and aux
      {Flavor::kEpilogue, kKK, {1, 1, 1, 64}},
      {Flavor::kAuxScalar, kKK, {2, 1, 1, 64}},
      {Flavor::kAuxRow, kKK, {1, 1, 64, 64}},
      {Flavor::kAuxRow,
       {.batch = 2, .m = 64, .n = 64, .k = 64, .aux_batch_one = true},
       {2, 1, 8, 16}},
      {Flavor::kAuxColumn, kKK, {1, 64, 1, 64}},
      {Flavor::kAuxFull, kBatched, {1, 1, 64, 64}},
      {Flavor::kAuxFull, kBatched, {2, 64, 1, 64}},
      // several outputs, one of them of the other major
      {Flavor::kMultiOutput, kKK, {1, 1, 64, 64}},
      {Flavor::kMultiOutput, kKK, {2, 64, 1, 16}},
      // taps
      {Flavor::kTapsRow, kBatched, {2, 1, 64, 64}},
      {Flavor::kTapsRow, kBatched, {1, 1, 8, 64}},
      {Flavor::kTapsColumn, kBatched, {2, 64, 1, 64}},
      {Flavor::kTapsColumn, kBatched, {1, 8, 1, 16}},
      {Flavor::kTapsFull, kBatched, {2, 1, 8, 64}},
      {Flavor::kTapsFull, kBatched, {1, 8, 1, 64}},
      // multi-GEMM
      {Flavor::kGatedMlp, kKK, {1, 1, 64, 64}},
      {Flavor::kGatedMlp, kKK, {2, 64, 1, 64}},
      {Flavor::kGatedMlp, kKK, {1, 64, 64, 1}, "contiguous_extent", "A", "A"},
      {Flavor::kTapsOnlyMultiGemm, kKK, {1, 8, 8, 16}},
      // A tap declared with batch 1 reduces the batch: called per batch, it is refused.
      {Flavor::kTapsOnlyMultiGemm, kKK, {2, 8, 8, 16}, "batch", "tap", "R"},
      // block-scaled fp8 and quantized output
      {Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 128}, {1, 1, 128, 128}},
      {Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 128}, {2, 16, 1, 128}},
      {Flavor::kBlockScaled,
       {.batch = 1, .m = 16, .n = 128, .k = 128},
       {1, 16, 128, 1},
       "contiguous_extent",
       "A",
       "A"},
      {Flavor::kQuantized, {.batch = 1, .m = 16, .n = 128, .k = 64}, {1, 1, 128, 64}},
      {Flavor::kQuantized, {.batch = 1, .m = 16, .n = 128, .k = 64}, {2, 16, 16, 64}},
      // Quantized values are stored element by element: N = 1 is one ragged block.
      {Flavor::kQuantized, {.batch = 1, .m = 16, .n = 128, .k = 64}, {1, 16, 1, 64}},
  };
  return kCases;
}

FlavorShape at(const FlavorShape& built, const Size& size) {
  FlavorShape shape = built;
  shape.batch = size.batch;
  shape.m = size.m;
  shape.n = size.n;
  shape.k = size.k;
  return shape;
}

std::string case_name(const SizeCase& c) {
  return fmt::format("{}: built {}, called at batch {} M {} N {} K {}: {}", to_string(c.flavor),
                     to_string(c.built), c.called.batch, c.called.m, c.called.n, c.called.k,
                     c.rule ? c.rule : "legal");
}

void expect_refused_or_correct(const SizeCase& c, std::uint64_t seed) {
  SCOPED_TRACE(case_name(c));
  auto built = make_flavor_graph(c.flavor, c.built);
  ASSERT_TRUE(built) << built.status().message();
  auto plan = build(built->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto called = make_flavor_graph(c.flavor, at(c.built, c.called));
  ASSERT_TRUE(called) << called.status().message();
  auto call = CallBuffers::make(called->graph, seed);
  ASSERT_TRUE(call) << call.status().message();
  const VariantPack pack = call->pack(/*views=*/true);

  if (c.rule == nullptr) {
    const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
    ASSERT_TRUE(s) << s.message();
    EXPECT_TRUE(call->matches_reference(called->graph));
    EXPECT_TRUE(call->outside_untouched());
    EXPECT_EQ(total_deferrals(plan.value()), 0u);
    return;
  }
  call->fill_canary();
  const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall) << s.message();
  const std::string prefix = fmt::format("{}: role {} '{}': ", c.rule, c.role, c.tensor);
  EXPECT_EQ(s.message().rfind(prefix, 0), 0u) << s.message() << "\nwant prefix: " << prefix;
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(deferral_map(plan.value())[c.rule], 1u);
  EXPECT_EQ(total_deferrals(plan.value()), 1u);
}

TEST(DegenerateExtent, EachCallIsRefusedByARuleOrMatchesTheReference) {
  std::uint64_t seed = 500;
  for (const SizeCase& c : cases()) expect_refused_or_correct(c, seed++);
}

}  // namespace
}  // namespace fusedgemm::test
