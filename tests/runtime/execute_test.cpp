// Every flavor of DESIGN.md section 5 through the public Plan::execute on the host device:
// a legal call leaves every deferral counter at 0, every output and tap matches the fp64
// reference, and no byte outside the elements (padding, guards) is written.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "runtime/host_device.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

constexpr Major kK = Major::kK;
constexpr Major kM = Major::kM;
constexpr Major kN = Major::kN;

struct ExecuteShape {
  FlavorShape shape;
  bool views = false;  // views in declared order, else bare addresses
};

// bf16 flavors. A contiguous extent must be a multiple of 8 (16 bytes), so ragged M goes
// with K-major A and ragged N with K-major B.
const std::vector<ExecuteShape>& bf16_shapes() {
  static const std::vector<ExecuteShape> kShapes = {
      {{.batch = 1, .m = 72, .n = 100, .k = 64}},
      {{.batch = 3,
        .m = 64,
        .n = 40,
        .k = 96,
        .a_major = kM,
        .b_major = kN,
        .out_major = kM,
        .output_pad = 8,
        .tap_pad = 3},
       true},
      {{.batch = 3,
        .m = 72,
        .n = 100,
        .k = 32,
        .out_major = kM,
        .a_batch_one = true,
        .output_pad = 16}},
      {{.batch = 2,
        .m = 48,
        .n = 56,
        .k = 40,
        .a_major = kM,
        .b_batch_one = true,
        .aux_batch_one = true,
        .operand_pad = 8,
        .tap_pad = 1},
       true},
      {{.batch = 2, .m = 100, .n = 24, .k = 16, .b_major = kN, .out_major = kM, .tap_pad = 2}},
  };
  return kShapes;
}

// Block-scaled fp8: K-major only; K and N multiples of 128 or ragged (a partial last scale
// block: 272 = 2 * 128 + 16, 144 = 128 + 16), M down to 1.
const std::vector<ExecuteShape>& block_scaled_shapes() {
  static const std::vector<ExecuteShape> kShapes = {
      {{.batch = 1, .m = 72, .n = 128, .k = 128}},
      {{.batch = 1, .m = 40, .n = 144, .k = 272}},
      {{.batch = 3, .m = 1, .n = 144, .k = 272, .a_batch_one = true}, true},
      {{.batch = 2, .m = 40, .n = 256, .k = 256, .a_batch_one = true, .output_pad = 8}, true},
      {{.batch = 3,
        .m = 16,
        .n = 128,
        .k = 384,
        .out_major = kM,
        .b_batch_one = true,
        .operand_pad = 16}},
  };
  return kShapes;
}

// Quantized fp8 values: N-major, any N; 208 and 200 leave a ragged last block, an fp4 N of
// 45 odd rows that start mid-byte (nibbles stored through atomics).
const std::vector<ExecuteShape>& quantized_shapes() {
  static const std::vector<ExecuteShape> kShapes = {
      {{.batch = 1, .m = 72, .n = 128, .k = 64}},
      {{.batch = 2, .m = 24, .n = 200, .k = 32}},
      {{.batch = 1,
        .m = 16,
        .n = 45,
        .k = 32,
        .quantized_type = DataType::kFp4E2M1,
        .quantize_block = 32,
        .quantized_scale_type = DataType::kE8M0},
       true},
      {{.batch = 2, .m = 40, .n = 208, .k = 32, .b_batch_one = true, .output_pad = 16}, true},
      {{.batch = 3, .m = 64, .n = 96, .k = 40, .a_major = kM, .b_major = kN}},
      // MXFP4-like: fp4 values in 1x32 blocks with power-of-two (e8m0) scales.
      {{.batch = 2,
        .m = 16,
        .n = 64,
        .k = 32,
        .quantized_type = DataType::kFp4E2M1,
        .quantize_block = 32,
        .quantized_scale_type = DataType::kE8M0,
        .output_pad = 32},
       true},
      {{.batch = 1,
        .m = 24,
        .n = 48,
        .k = 16,
        .quantized_type = DataType::kFp8E5M2,
        .quantize_block = 16}},
  };
  return kShapes;
}

const std::vector<ExecuteShape>& shapes_for(Flavor flavor) {
  if (flavor == Flavor::kBlockScaled) return block_scaled_shapes();
  if (flavor == Flavor::kQuantized) return quantized_shapes();
  return bf16_shapes();
}

std::string case_name(Flavor flavor, const ExecuteShape& s) {
  return fmt::format("{}: {}{}", to_string(flavor), to_string(s.shape),
                     s.views ? ", views" : ", addresses");
}

void expect_legal_call_matches_reference(Flavor flavor, const ExecuteShape& s, std::uint64_t seed) {
  SCOPED_TRACE(case_name(flavor, s));
  auto fg = make_flavor_graph(flavor, s.shape);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, seed);
  ASSERT_TRUE(call) << call.status().message();

  const VariantPack pack = call->pack(s.views);
  EXPECT_TRUE(plan->explain(pack, workspace_of(plan.value(), pack)).legal())
      << plan->explain(pack, workspace_of(plan.value(), pack)).message;
  const Status status = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(call->matches_reference(fg->graph));
  EXPECT_TRUE(call->outside_untouched());

  // Again through a bound pack, poisoned afresh: the taps start afresh, not summed on.
  auto bound = plan->bind(pack);
  ASSERT_TRUE(bound) << bound.status().message();
  call->prepare();
  const Status again =
      plan->execute(bound.value(), workspace_of(plan.value(), bound.value()), nullptr);
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(call->matches_reference(fg->graph));
  EXPECT_TRUE(call->outside_untouched());

  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

TEST(Execute, EveryFlavorMatchesTheReferenceAndWritesOnlyItsElements) {
  std::uint64_t seed = 1;
  for (Flavor flavor : all_flavors()) {
    for (const ExecuteShape& s : shapes_for(flavor)) {
      expect_legal_call_matches_reference(flavor, s, seed++);
    }
  }
}

// The host device sums from operand panels decoded once where they fit its panel budget,
// and reads the operands per product past it (runtime/host_device.h): both give the same
// bytes, and match the fp64 reference.
void expect_panels_match_per_product(Flavor flavor, const ExecuteShape& s, std::uint64_t seed) {
  SCOPED_TRACE(case_name(flavor, s));
  auto fg = make_flavor_graph(flavor, s.shape);
  ASSERT_TRUE(fg) << fg.status().message();
  auto call = CallBuffers::make(fg->graph, seed);
  ASSERT_TRUE(call) << call.status().message();
  const VariantPack pack = call->pack(s.views);
  std::vector<std::vector<std::uint8_t>> written[2];
  int path = 0;
  for (const std::uint64_t panel_bytes : {runtime::HostDevice::kMaxPanelBytes, std::uint64_t{0}}) {
    auto plan = build(fg->graph, BuildOptions{std::make_shared<runtime::HostDevice>(panel_bytes)});
    ASSERT_TRUE(plan) << plan.status().message();
    call->prepare();
    const Status status = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
    ASSERT_TRUE(status) << status.message();
    for (const auto& t : call->tensors()) {
      if (t.written) {
        written[path].emplace_back(t.buffer->data(), t.buffer->data() + t.buffer->size());
      }
    }
    ++path;
  }
  EXPECT_FALSE(written[0].empty());
  EXPECT_TRUE(written[0] == written[1]);
  EXPECT_TRUE(call->matches_reference(fg->graph));
}

// Every flavor (block-scaled operands included) and shape.
TEST(Execute, HostPanelsAndPerProductReadsGiveTheSameBytes) {
  std::uint64_t seed = 900;
  for (Flavor flavor : all_flavors()) {
    for (const ExecuteShape& s : shapes_for(flavor))
      expect_panels_match_per_product(flavor, s, seed++);
  }
}

// The shapes above are too small for the panel path's threads (it splits the rows of a
// launch past 2^22 flops over the cores); these pass that, with M, N and K off the 4 x 4
// accumulator block and the 64-wide tiles (203 and 250 rows split over two or more threads
// end off the block): batch 3 and a broadcast batch, both majors of each operand, one GEMM
// and two, and row taps.
TEST(Execute, HostThreadedPanelsAtRaggedShapesGiveTheSameBytes) {
  const std::vector<ExecuteShape> shapes = {
      {{.batch = 3, .m = 203, .n = 100, .k = 104}},
      {{.batch = 3,
        .m = 152,
        .n = 216,
        .k = 75,
        .a_major = kM,
        .b_major = kN,
        .out_major = kM,
        .a_batch_one = true}},
      {{.batch = 2,
        .m = 250,
        .n = 120,
        .k = 88,
        .b_major = kN,
        .b_batch_one = true,
        .operand_pad = 8},
       true},
  };
  std::uint64_t seed = 1900;
  for (Flavor flavor : {Flavor::kPlain, Flavor::kGatedMlp, Flavor::kTapsRow}) {
    for (const ExecuteShape& s : shapes) expect_panels_match_per_product(flavor, s, seed++);
  }
}

// fp16, fp8 and fp4 operands (8- and 4-bit ones K-major, fp4's K a multiple of 32) under
// the plain, aux, tap and multi-GEMM epilogues.
TEST(Execute, OtherOperandTypesMatchTheReference) {
  struct Row {
    Flavor flavor;
    ExecuteShape shape;
  };
  const std::vector<Row> rows = {
      {Flavor::kPlain,
       {{.batch = 2,
         .m = 40,
         .n = 48,
         .k = 56,
         .a_major = kM,
         .b_major = kN,
         .operand_type = DataType::kFloat16}}},
      {Flavor::kAuxColumn,
       {{.batch = 1, .m = 72, .n = 100, .k = 64, .operand_type = DataType::kFp8E4M3}, true}},
      {Flavor::kTapsRow,
       {{.batch = 3,
         .m = 24,
         .n = 40,
         .k = 32,
         .out_major = kM,
         .operand_type = DataType::kFp8E5M2,
         .tap_pad = 1}}},
      {Flavor::kGatedMlp,
       {{.batch = 2, .m = 40, .n = 24, .k = 64, .operand_type = DataType::kFp4E2M1}, true}},
      {Flavor::kPlain,
       {{.batch = 1,
         .m = 33,
         .n = 17,
         .k = 96,
         .out_major = kM,
         .operand_type = DataType::kFp4E2M1,
         .operand_pad = 32}}},
  };
  std::uint64_t seed = 300;
  for (const Row& row : rows) expect_legal_call_matches_reference(row.flavor, row.shape, seed++);
}

// Both majors of each operand and of the output, at batch 1 and 3, for the plain flavor.
TEST(Execute, EveryMajorCombinationMatchesTheReference) {
  std::uint64_t seed = 100;
  for (std::int64_t batch : {1, 3}) {
    for (Major a : {kK, kM}) {
      for (Major b : {kK, kN}) {
        for (Major out : {kN, kM}) {
          const FlavorShape shape{.batch = batch,
                                  .m = 40,
                                  .n = 48,
                                  .k = 56,
                                  .a_major = a,
                                  .b_major = b,
                                  .out_major = out,
                                  .output_pad = 8};
          expect_legal_call_matches_reference(Flavor::kPlain, {shape, batch == 3}, seed++);
        }
      }
    }
  }
}

TEST(Execute, ExplainOfALegalCallSaysLegal) {
  auto fg = make_flavor_graph(Flavor::kTapsRow, {.batch = 2, .m = 32, .n = 40, .k = 16});
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 5);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  const Verdict verdict = plan->explain(call->pack(), workspace_of(plan.value(), call->pack()));
  EXPECT_TRUE(verdict.legal());
  EXPECT_EQ(verdict.rule, "");
  EXPECT_EQ(verdict.message, "legal");
  // explain seeds nothing, launches nothing and counts nothing.
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

// An input declared with batch 1 may come as PyTorch's expand of it to the call's batch
// (batch stride 0): the call is legal and reads batch 0 for every batch, as the bare batch-1
// view does. An expand to another batch is refused by the batch rule.
TEST(Execute, ABatchOfStrideZeroIsTheBroadcastOfOne) {
  const FlavorShape shape{
      .batch = 3, .m = 40, .n = 56, .k = 24, .b_batch_one = true, .aux_batch_one = true};
  auto s = setup(Flavor::kAuxColumn, shape, shape, 11);
  ASSERT_TRUE(s) << s.status().message();
  auto expanded = [&](std::int64_t batch) {
    return pack_with(s->call,
                     {{"B", view(s->call, "B", {batch, 24, 56}, {0, 1, 24})},
                      {"aux", view(s->call, "aux", {batch, 1, 56}, {0, 56, 1})}},
                     /*views=*/true);
  };
  expect_computed(s.value(), expanded(3));
  expect_refused(s.value(), expanded(2), "batch", "B", "B", "or 3 of stride 0");
}

// A scalar aux may come as a rank-0 view (a 0-dim tensor): one element, computed as the
// declared [1, 1, 1]. Rank 0 is for aux views only.
TEST(Execute, AScalarAuxTakesAViewOfRankZero) {
  const FlavorShape shape{.batch = 1, .m = 40, .n = 56, .k = 24};
  auto s = setup(Flavor::kAuxScalar, shape, shape, 13);
  ASSERT_TRUE(s) << s.status().message();
  auto rank0 = [&](const char* name) {
    return pack_with(s->call, {{name, view(s->call, name, {}, {})}}, /*views=*/false);
  };
  expect_computed(s.value(), rank0("aux"));
  expect_refused(s.value(), rank0("A"), "view_rank", "A", "A", "view of rank 0; legal: rank 3");
}

// Read-only memory is for inputs: every input marked read-only is read as before (outputs
// so marked are refused: the illegal-call table's read_only case).
TEST(Execute, ReadOnlyInputsAreRead) {
  const FlavorShape shape{.batch = 2, .m = 40, .n = 56, .k = 24};
  auto s = setup(Flavor::kAuxColumn, shape, shape, 17);
  ASSERT_TRUE(s) << s.status().message();
  Changes read_only;
  for (const auto& t : s->call.tensors()) {
    if (t.written) continue;
    BufferView v = BufferView::address(t.buffer->data());
    v.read_only = true;
    read_only.emplace_back(t.name, v);
  }
  expect_computed(s.value(), pack_with(s->call, read_only, /*views=*/false));
}

// A plan is immutable and its deferral counters are atomic: four threads executing one plan
// on their own buffers all get the reference's answer.
TEST(Execute, OnePlanFromFourThreadsAtOnce) {
  const FlavorShape shape{.batch = 2, .m = 48, .n = 40, .k = 32, .tap_pad = 1};
  auto fg = make_flavor_graph(Flavor::kTapsRow, shape);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  constexpr int kThreads = 4;
  constexpr int kCalls = 6;
  std::vector<CallBuffers> calls;
  for (int i = 0; i < kThreads; ++i) {
    auto call = CallBuffers::make(fg->graph, 1000 + i);
    ASSERT_TRUE(call) << call.status().message();
    calls.push_back(std::move(call).value());
  }
  // Results are judged on the main thread; each thread records what it saw.
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  const Plan& shared = plan.value();
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const VariantPack pack = calls[i].pack();
      for (int call = 0; call < kCalls; ++call) {
        calls[i].prepare();
        if (Status s = shared.execute(pack, workspace_of(shared, pack), nullptr); !s) {
          failures[i].push_back(s.message());
          continue;
        }
        if (auto r = calls[i].matches_reference(fg->graph); !r) {
          failures[i].push_back(r.message());
        }
        if (auto r = calls[i].outside_untouched(); !r) failures[i].push_back(r.message());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_TRUE(failures[i].empty()) << "thread " << i << ": " << failures[i].front();
  }
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

}  // namespace
}  // namespace fusedgemm::test

namespace fusedgemm::test {
namespace {

// DESIGN.md section 3: a tap of an integer value is int32. The value is the accumulator
// rounded to int8 (a declared intermediate), reduced per row.
TEST(Execute, IntegerTapsAccumulateInInt32) {
  Graph g;
  auto a = g.tensor(
      TensorAttributes().set_name("A").set_dim({2, 24, 32}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(TensorAttributes()
                        .set_name("B")
                        .set_dim({2, 32, 40})
                        .set_stride({32 * 40, 1, 32})
                        .set_data_type(DataType::kBFloat16));
  auto q = g.pointwise(g.matmul(a, b), PointwiseAttributes().set_mode(PointwiseMode::kIdentity));
  q->set_name("q").set_data_type(DataType::kInt8);
  for (ReductionMode mode : {ReductionMode::kAdd, ReductionMode::kMax, ReductionMode::kMin,
                             ReductionMode::kAmax, ReductionMode::kNorm1}) {
    auto t = g.reduction(q, ReductionAttributes().set_mode(mode));
    t->set_name(fmt::format("T_{}", to_string(mode)))
        .set_dim({2, 24, 1})
        .set_data_type(DataType::kInt32)
        .set_output(true);
  }
  // A product of integers leaves int32 at once, so the mul tap multiplies ones (acc == acc):
  // 1 only when it starts at the integer 1.
  auto ones = g.pointwise(q, q, PointwiseAttributes().set_mode(PointwiseMode::kCmpEq));
  ones->set_name("ones").set_data_type(DataType::kInt8);
  auto product = g.reduction(ones, ReductionAttributes().set_mode(ReductionMode::kMul));
  product->set_name("T_mul").set_dim({2, 24, 1}).set_data_type(DataType::kInt32).set_output(true);
  ASSERT_TRUE(g.validate());
  auto plan = build(g, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(g, 21);
  ASSERT_TRUE(call) << call.status().message();
  const Status s = plan->execute(call->pack(), workspace_of(plan.value(), call->pack()), nullptr);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(call->matches_reference(g));
  EXPECT_TRUE(call->outside_untouched());
}

}  // namespace
}  // namespace fusedgemm::test

namespace fusedgemm::test {
namespace {

// Issue 10: a 20,000-node chain died of std::bad_alloc in `fusedgemm run` (every
// intermediate of the fp64 reference kept at once, 10 GB at 256x256). It builds, runs on
// the fused engine of the host device and matches the reference, which now holds two
// values at a time.
// A long epilogue chain: 32 pointwise ops fuse (kMaxEpilogueOps), 33 run on the fallback
// engine, both right; 20,000 are refused by both engines, each rule named (NVRTC would
// compile either for hours), after validation took the 20,000 nodes without recursion.
Graph chain_of(int ops) {
  Graph g;
  auto a = g.tensor(
      TensorAttributes().set_name("A").set_dim({1, 16, 32}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(TensorAttributes()
                        .set_name("B")
                        .set_dim({1, 32, 16})
                        .set_stride({512, 1, 32})
                        .set_data_type(DataType::kBFloat16));
  Tensor x = g.matmul(a, b);
  for (int i = 0; i < ops; ++i) {
    x = g.pointwise(
        x, PointwiseAttributes().set_mode(i % 2 ? PointwiseMode::kAbs : PointwiseMode::kNeg));
  }
  x->set_output(true).set_name("D").set_data_type(DataType::kFloat32);
  return g;
}

TEST(Execute, LongChainsFuseUpToTheLimitAndRunUnfusedPastIt) {
  for (const auto& [ops, engine] :
       {std::pair{32, Engine::kFused}, std::pair{33, Engine::kFallback}}) {
    SCOPED_TRACE(fmt::format("{} ops", ops));
    Graph g = chain_of(ops);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    auto plan = build(g, BuildOptions{make_host_device()});
    ASSERT_TRUE(plan) << plan.status().message();
    EXPECT_EQ(plan->engine(), engine);
    if (engine == Engine::kFallback) {
      ASSERT_TRUE(plan->declined().has_value());
      EXPECT_EQ(plan->declined()->rule, "epilogue_ops");
    }
    auto call = CallBuffers::make(g, 3);
    ASSERT_TRUE(call) << call.status().message();
    call->prepare();
    std::vector<float> workspace((plan->workspace_bytes() + 3) / 4);
    ASSERT_TRUE(plan->execute(call->pack(), {workspace.data(), workspace.size() * 4}, nullptr));
    EXPECT_TRUE(call->matches_reference(g));
    EXPECT_TRUE(call->outside_untouched());
  }
  Graph huge = chain_of(20000);
  ASSERT_TRUE(huge.validate()) << huge.validate().message();
  auto plan = build(huge, BuildOptions{make_host_device()});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.status().code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(
      plan.status().message().starts_with("fallback_step_count: graph '' plans 20004 steps"))
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("the fused engine declined it too: epilogue_ops: "),
            std::string::npos)
      << plan.status().message();
}

}  // namespace
}  // namespace fusedgemm::test
