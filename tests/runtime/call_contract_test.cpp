// Regression tests for the call-contract holes of issue 10: calls that the rules once called
// legal and that computed wrong answers, or that the rules refused on every call of a
// fused plan. Each runs through the public Plan::execute on the host device against the
// fp64 reference, outputs poisoned before the call.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fusedgemm/plan.h"
#include "support/build_options.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

// Hole 1: B given in kernel order (b, N, K) with its block scales in kernel order too. At
// N = 192, K = 256 both orders of B_scale have extents [1, 2, 2], so only B can say which
// order the scales are in.
TEST(CallContract, BlockScalesOfBAreReadInTheOrderOfB) {
  auto s = setup(Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 256},
                 {.batch = 1, .m = 16, .n = 192, .k = 256});
  ASSERT_TRUE(s) << s.status().message();
  const VariantPack pack = pack_with(s->call,
                                     {{"B", view(s->call, "B", {1, 192, 256}, {49152, 256, 1})},
                                      {"B_scale", view(s->call, "B_scale", {1, 2, 2}, {4, 1, 2})}},
                                     /*views=*/true);
  s->call.prepare();
  const Status status = s->plan.execute(pack, workspace_of(s->plan, pack), nullptr);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(s->call.matches_reference(s->call_graph.graph));
  EXPECT_TRUE(s->call.outside_untouched());
  EXPECT_EQ(total_deferrals(s->plan), 0u);
}

// Hole 2: a zero stride below the batch of a TMA-read operand (every row of A the same) is
// no layout a descriptor can take: refused by name. The GPU read it with the packed stride
// (relative error 7.9e5); the host device now reads through the same descriptor.
TEST(CallContract, ZeroRowStrideOfAnOperandIsRefused) {
  auto s = setup(Flavor::kPlain, {.m = 64, .n = 64, .k = 64}, {.m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  expect_refused(s.value(),
                 pack_with(s->call, {{"A", view(s->call, "A", {1, 64, 64}, {64, 0, 1})}}, true),
                 "stride_alignment", "A", "A", "M stride 0");
}

// Hole 2: PyTorch's expand of a batch-1 weight, B [2, 64, 128]:[0, 1, 64], is a broadcast
// batch: legal, and computed as the graph whose B has batch 1 (the GPU gave NaN).
TEST(CallContract, BroadcastBatchOfStrideZeroIsRead) {
  auto s = setup(Flavor::kPlain, {.batch = 2, .m = 64, .n = 128, .k = 64},
                 {.batch = 2, .m = 64, .n = 128, .k = 64, .b_batch_one = true});
  ASSERT_TRUE(s) << s.status().message();
  expect_computed(s.value(),
                  pack_with(s->call, {{"B", view(s->call, "B", {2, 64, 128}, {0, 1, 64})}}, true));
}

// The same expand of a block-scaled A and of its scales together: the scales' batch of stride
// 0 is one batch, one dense run of 128 scales (scale_layout judged the view's 256 and refused
// it, telling the caller to pass 256 dense scales). Scales not dense within the batch are
// still refused, the message saying that the run counted is one batch's.
TEST(CallContract, BroadcastBatchOfStrideZeroBlockScalesAreRead) {
  const FlavorShape shape{.batch = 2, .m = 64, .n = 128, .k = 256, .a_batch_one = true};
  auto s = setup(Flavor::kBlockScaled, shape, shape);
  ASSERT_TRUE(s) << s.status().message();
  const BufferView a = view(s->call, "A", {2, 64, 256}, {0, 256, 1});
  expect_computed(
      s.value(),
      pack_with(s->call, {{"A", a}, {"A_scale", view(s->call, "A_scale", {2, 64, 2}, {0, 2, 1})}},
                true));
  expect_refused(
      s.value(),
      pack_with(s->call, {{"A", a}, {"A_scale", view(s->call, "A_scale", {2, 64, 2}, {0, 3, 1})}},
                true),
      "scale_layout", "scale", "A_scale",
      "spans 191 elements for 128 scales (one batch: its batch has stride 0)");
}

// Hole 6: K = 2^32 + 64 is past TMA's globalDim and a batch stride of 2^40 elements past its
// globalStrides: refused by a rule before any encode (explain and execute agree). Refused
// calls read nothing, so the views may claim more memory than the buffers have.
TEST(CallContract, TmaLimitsAreRulesCheckedBeforeAnyEncode) {
  auto s = setup(Flavor::kPlain, {.batch = 2, .m = 64, .n = 64, .k = 64},
                 {.batch = 2, .m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  const std::int64_t k = (std::int64_t{1} << 32) + 64;
  expect_refused(s.value(),
                 pack_with(s->call,
                           {{"A", view(s->call, "A", {2, 64, k}, {64 * k, k, 1})},
                            {"B", view(s->call, "B", {2, k, 64}, {64 * k, 1, k})}},
                           true),
                 "tma_limits", "A", "A", "K extent 4294967360");
  expect_refused(
      s.value(),
      pack_with(s->call, {{"A", view(s->call, "A", {2, 64, 64}, {std::int64_t{1} << 40, 64, 1})}},
                true),
      "tma_limits", "A", "A", "batch stride 1099511627776");
  // A stride whose span passes 64-bit offsets is refused before: view_span.
  expect_refused(
      s.value(),
      pack_with(s->call,
                {{"A", view(s->call, "A", {2, 64, 64}, {64 * 64, std::int64_t{1} << 62, 1})}},
                true),
      "view_span", "A", "A", "spans more than 2^63 elements");
}

// Hole 6: N = INT64_MAX overflows nothing (tiles, grid, spans, workspace): refused by the grid
// rule, which names the N limit.
TEST(CallContract, HugeNIsRefusedWithoutOverflow) {
  auto s = setup(Flavor::kTapsRow, {.batch = 1, .m = 64, .n = 64, .k = 64},
                 {.batch = 1, .m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  const std::int64_t n = INT64_MAX;
  const Changes changes = {{"B", view(s->call, "B", {1, 64, n}, {64, 1, 64})},
                           {"D", view(s->call, "D", {1, 64, n}, {n, n, 1})}};
  expect_refused(s.value(), pack_with(s->call, changes, true), "grid_extent", "", "", "N at most");
}

// Hole 3: a non-injective aux view ([4096, 1, 1] reads offsets 0..126) meets D placed 64
// elements past its base: D's writes reach bytes the epilogue reads.
TEST(CallContract, AnAuxThatRevisitsElementsIsCheckedAgainstOutputs) {
  auto s = setup(Flavor::kAuxFull, {.m = 64, .n = 64, .k = 64}, {.m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  const Changes changes = {
      {"aux", view(s->call, "aux", {1, 64, 64}, {4096, 1, 1})},
      {"D", view(s->call, "aux", {1, 64, 64}, {4096, 64, 1}, DataType::kNotSet, 64 * 2)}};
  expect_refused(s.value(), pack_with(s->call, changes, true), "buffer_overlap", "output", "D",
                 "[1, 64, 64]:[4096, 64, 1]");
}

// Hole 3: an aux view with a negative stride reaches below its base, into D.
TEST(CallContract, AnAuxWithANegativeStrideIsCheckedBelowItsBase) {
  auto s = setup(Flavor::kAuxFull, {.m = 64, .n = 64, .k = 64}, {.m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  const Changes changes = {
      {"aux", view(s->call, "aux", {1, 64, 64}, {4096, -1, 64}, DataType::kNotSet, 63 * 2)},
      {"D", view(s->call, "aux", {1, 64, 64}, {4096, 64, 1})}};
  expect_refused(s.value(), pack_with(s->call, changes, true), "buffer_overlap", "output", "D",
                 "[1, 64, 64]:[4096, 64, 1]");
}

// The same aux and D apart is legal and computed right: the rule refuses the overlap only.
TEST(CallContract, AnAuxWithANegativeStrideApartFromOutputsIsRead) {
  auto s = setup(Flavor::kAuxFull, {.m = 64, .n = 64, .k = 64}, {.m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(s) << s.status().message();
  // Row m of the view is row 63 - m of the buffer: the buffer's rows are reversed first, so
  // the view reads the reference's aux.
  auto* rows = reinterpret_cast<std::uint16_t*>(s->call["aux"].buffer->data());
  for (int m = 0; m < 32; ++m) {
    for (int n = 0; n < 64; ++n) std::swap(rows[m * 64 + n], rows[(63 - m) * 64 + n]);
  }
  const VariantPack pack = pack_with(
      s->call,
      {{"aux", view(s->call, "aux", {1, 64, 64}, {4096, -64, 1}, DataType::kNotSet, 63 * 64 * 2)}},
      true);
  expect_computed(s.value(), pack);
}

// A graph with a row aux and a row tap of the same layout: c = acc + aux[b, M, 1],
// D = c, T = sum over N of c.
Result<Setup> aux_and_tap_setup() {
  auto make = [](Graph& g) -> Status {
    auto a = g.tensor(TensorAttributes()
                          .set_name("A")
                          .set_dim({1, 64, 64})
                          .set_stride({4096, 64, 1})
                          .set_data_type(DataType::kBFloat16));
    auto b = g.tensor(TensorAttributes()
                          .set_name("B")
                          .set_dim({1, 64, 64})
                          .set_stride({4096, 1, 64})
                          .set_data_type(DataType::kBFloat16));
    auto aux = g.tensor(TensorAttributes()
                            .set_name("aux")
                            .set_dim({1, 64, 1})
                            .set_stride({64, 1, 1})
                            .set_data_type(DataType::kFloat32));
    auto c = g.pointwise(g.matmul(a, b), aux,
                         PointwiseAttributes().set_name("add").set_mode(PointwiseMode::kAdd));
    c->set_name("D").set_output(true).set_data_type(DataType::kFloat32);
    auto t = g.reduction(c, ReductionAttributes().set_name("sum").set_mode(ReductionMode::kAdd));
    t->set_name("T")
        .set_dim({1, 64, 1})
        .set_stride({64, 1, 1})
        .set_data_type(DataType::kFloat32)
        .set_output(true);
    return g.validate();
  };
  Graph plan_graph;
  FG_TRY(make(plan_graph));
  FG_ASSIGN_OR_RETURN(Plan plan, build(plan_graph, BuildOptions{make_host_device()}));
  FlavorGraph fg;
  FG_TRY(make(fg.graph));
  FG_ASSIGN_OR_RETURN(CallBuffers call, CallBuffers::make(fg.graph, 9));
  return Setup{std::move(plan), std::move(fg), std::move(call)};
}

// Hole 3: an aux that is also a tap's buffer is no in-place read: the tap's elements are
// written after the whole row was reduced (the host device gave T[0] = -3.3e19).
TEST(CallContract, AnAuxSharingATapsBufferIsRefused) {
  auto s = aux_and_tap_setup();
  ASSERT_TRUE(s) << s.status().message();
  const Changes changes = {{"aux", view(s->call, "T", {1, 64, 1}, {64, 1, 1})}};
  expect_refused(s.value(), pack_with(s->call, changes, false), "buffer_overlap", "tap", "T",
                 "[1, 64, 1]:[64, 1, 1]");
}

// Hole 4: the workspace is checked against every buffer of the call, read or written, on
// the fused engine and on the fallback engine (whose values live in the workspace).
TEST(CallContract, AWorkspaceSharingAnyBufferIsRefused) {
  for (const Engine engine : {Engine::kFused, Engine::kFallback}) {
    SCOPED_TRACE(to_string(engine));
    auto fg = make_flavor_graph(Flavor::kTapsRow, {.m = 64, .n = 64, .k = 64});
    ASSERT_TRUE(fg) << fg.status().message();
    auto plan = build(fg->graph, on_engine(make_host_device(), engine));
    ASSERT_TRUE(plan) << plan.status().message();
    auto call = CallBuffers::make(fg->graph, 4);
    ASSERT_TRUE(call) << call.status().message();
    const VariantPack pack = call->pack();
    auto bound = plan->bind(pack);
    ASSERT_TRUE(bound) << bound.status().message();
    const std::uint64_t needed = plan->workspace_bytes(bound.value()).value();
    ASSERT_GT(needed, 0u);
    for (const char* name : {"A", "D"}) {
      SCOPED_TRACE(name);
      // A workspace that starts 16 bytes before the buffer and runs into it.
      auto* buffer = call.value()[name].buffer->data();
      const Workspace at{buffer - 16, needed};
      call->fill_canary();
      const Status status = plan->execute(pack, at, nullptr);
      EXPECT_EQ(status.code(), ErrorCode::kIllegalCall) << status.message();
      // The workspace runs on past the buffer and may meet a later allocation too; the
      // first role it meets (in role order) is named.
      EXPECT_EQ(status.message().rfind("workspace_overlap: role ", 0), 0u) << status.message();
      EXPECT_EQ(plan->explain(pack, at).rule, "workspace_overlap");
      EXPECT_TRUE(call->all_canary());
    }
  }
}

// Hole 5: the B operands of a gated MLP are each read through their own TMA descriptor, so
// they need not share a layout (the layout_group rule had no basis in the kernel and refused
// every bare call of a graph declaring them apart).
TEST(CallContract, OperandsOfOneRoleMayHaveTheirOwnLayouts) {
  auto s = setup(Flavor::kGatedMlp, {.batch = 1, .m = 40, .n = 48, .k = 32, .operand_pad = 8},
                 {.batch = 1, .m = 40, .n = 48, .k = 32, .operand_pad = 8});
  ASSERT_TRUE(s) << s.status().message();
  // B0 read dense (its first 32 x 48 elements re-laid out), B1 padded as declared.
  auto& b0 = s->call["B0"];
  auto* e = reinterpret_cast<std::uint16_t*>(b0.buffer->data());
  for (int n = 0; n < 48; ++n) {
    for (int k = 0; k < 32; ++k) e[n * 32 + k] = e[n * 40 + k];
  }
  expect_computed(
      s.value(),
      pack_with(s->call, {{"B0", view(s->call, "B0", {1, 32, 48}, {32 * 48, 1, 32})}}, true));
}

// Hole 5: a scale declared with padding ([1, 16, 2]:[64, 4, 1]) is no layout the fused
// kernel reads (scale_layout refused every call): the graph is declined by that rule and
// runs on the fallback engine, computed right.
TEST(CallContract, AGraphWhoseDeclaredCallBreaksACallRuleIsDeclined) {
  auto fg = make_flavor_graph(Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 256});
  ASSERT_TRUE(fg) << fg.status().message();
  for (Tensor& t : fg->inputs) {
    if (t->name() == "A_scale") t->set_stride({64, 4, 1});
  }
  ASSERT_TRUE(fg->graph.validate());
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFallback);
  ASSERT_TRUE(plan->declined().has_value());
  EXPECT_EQ(plan->declined()->rule, "scale_layout") << plan->declined()->message;
  auto call = CallBuffers::make(fg->graph, 6);
  ASSERT_TRUE(call) << call.status().message();
  call->prepare();
  const Status status =
      plan->execute(call->pack(), workspace_of(plan.value(), call->pack()), nullptr);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(call->matches_reference(fg->graph));
  EXPECT_TRUE(call->outside_untouched());
}

// Two outputs of one allocation, row by row (an fp32 [M, N] then an fp16 [M, N] in each row
// of 6N bytes, as a fused QKV projection writes its parts): past the exact test's element
// budget (2^24) at M = N = 4096, yet decided exactly, row against row. Shifted 16 bytes
// into the fp32 rows, the same layouts share bytes. explain reads no memory, so the views
// may lie at addresses nothing backs.
TEST(CallContract, OutputsInterleavedInOneAllocationAreApart) {
  auto fg = make_flavor_graph(Flavor::kMultiOutput, {.m = 64, .n = 64, .k = 64});
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  constexpr std::int64_t kM = 4096;
  constexpr std::int64_t kN = 4096;
  constexpr std::int64_t kK = 64;
  auto at = [](int i) { return reinterpret_cast<void*>((std::uintptr_t{1} << 44) * (i + 1)); };
  auto pack_for = [&](std::int64_t d2_offset_bytes) {
    VariantPack pack;
    pack.set("A", BufferView::view(at(0), {1, kM, kK}, {kM * kK, kK, 1}));
    pack.set("B", BufferView::view(at(1), {1, kK, kN}, {kK * kN, 1, kK}));
    pack.set("D0", BufferView::view(at(2), {1, kM, kN}, {kM * 6 * kN / 4, 6 * kN / 4, 1}));
    pack.set("D2", BufferView::view(static_cast<char*>(at(2)) + 4 * kN + d2_offset_bytes,
                                    {1, kM, kN}, {kM * 3 * kN, 3 * kN, 1}));
    pack.set("D1", BufferView::view(at(3), {1, kM, kN}, {kM * kN, 1, kM}));
    pack.set("D3", BufferView::view(at(4), {1, kM, kN}, {kM * kN, kN, 1}));
    pack.set("D4", BufferView::view(at(5), {1, kM, kN}, {kM * kN, 1, kM}));
    return pack;
  };
  const Verdict apart = plan->explain(pack_for(0), {});
  EXPECT_TRUE(apart.legal()) << apart.message;
  const Verdict shared = plan->explain(pack_for(-16), {});
  EXPECT_EQ(shared.rule, "buffer_overlap") << shared.message;
  EXPECT_NE(shared.message.find("shares memory with role output 'D2'"), std::string::npos)
      << shared.message;
}
}  // namespace
}  // namespace fusedgemm::test
