// The fallback engine on the host device, through the public build and execute: a declined
// graph runs on it, either engine can be forced, every flavor forced onto it matches the
// fp64 reference without writing outside its elements, and its calls answer to the same
// rule table (extents fixed to the declaration, its own workspace size).
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "support/build_options.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

constexpr Major kM = Major::kM;
constexpr Major kN = Major::kN;

BuildOptions fallback_on_host() {
  BuildOptions options{make_host_device()};
  options.engine = Engine::kFallback;
  return options;
}

// A host workspace of the plan's size.
struct HostWorkspace {
  explicit HostWorkspace(const Plan& plan) : words((plan.workspace_bytes() + 3) / 4) {}
  Workspace get() { return {words.data(), words.size() * 4}; }
  std::vector<float> words;
};

Result<Graph> load_example(const std::string& name) {
  return load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/" + name + ".json");
}

TEST(FallbackEngine, RunsTheGraphTheFusedEngineDeclines) {
  auto graph = load_example("fallback_only");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFallback);
  ASSERT_TRUE(plan->declined().has_value());
  EXPECT_EQ(plan->declined()->rule, "chained_gemm");
  EXPECT_NE(plan->describe().find("matmul"), std::string::npos) << plan->describe();

  auto call = CallBuffers::make(graph.value(), 3);
  ASSERT_TRUE(call) << call.status().message();
  call->prepare();
  HostWorkspace ws(plan.value());
  ASSERT_TRUE(plan->execute(call->pack(), ws.get(), nullptr));
  EXPECT_TRUE(call->matches_reference(graph.value()));
  EXPECT_TRUE(call->outside_untouched());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

// An aux input of the fallback engine takes a view of rank 1 or 2 as the fused engine's does
// ([N] is a bias of [1, 1, N]): a chained GEMM plus a column bias, computed right from each.
TEST(FallbackEngine, AnAuxViewMayDropLeadingAxes) {
  auto graph = validated_graph(R"({
    "fusedgemm_graph": 1, "name": "chained GEMM + bias",
    "tensors": [
      {"name": "A", "dims": [1, 48, 32], "data_type": "bf16"},
      {"name": "B", "dims": [1, 32, 40], "strides": [1280, 1, 32], "data_type": "bf16"},
      {"name": "C", "dims": [1, 40, 56], "strides": [2240, 1, 40], "data_type": "bf16"},
      {"name": "bias", "dims": [1, 1, 56], "data_type": "bf16"},
      {"name": "T", "data_type": "bf16"}, {"name": "U"},
      {"name": "D", "dims": [1, 48, 56], "data_type": "bf16", "output": true}],
    "nodes": [
      {"kind": "matmul", "name": "ab", "inputs": ["A", "B"], "outputs": ["T"]},
      {"kind": "matmul", "name": "tc", "inputs": ["T", "C"], "outputs": ["U"]},
      {"kind": "pointwise", "name": "add", "inputs": ["U", "bias"], "outputs": ["D"],
       "mode": "add"}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  ASSERT_EQ(plan->engine(), Engine::kFallback);
  auto call = CallBuffers::make(graph.value(), 9);
  ASSERT_TRUE(call) << call.status().message();
  for (const std::vector<std::int64_t>& dims :
       {std::vector<std::int64_t>{56}, std::vector<std::int64_t>{1, 56}}) {
    SCOPED_TRACE(fmt::format("bias view of rank {}", dims.size()));
    call->prepare();
    expect_computed(
        plan.value(), call.value(), graph.value(),
        pack_with(call.value(),
                  {{"bias", view(call.value(), "bias", dims,
                                 std::vector<std::int64_t>(dims.size(), 1), DataType::kBFloat16)}},
                  /*views=*/false));
  }
}

// A declared batch-1 input given as PyTorch's expand to the call's batch (stride 0) is one
// batch on either runner: its reduction over the batch counts each element once (the host
// runner once took the view's extent and summed it twice).
TEST(FallbackEngine, AStrideZeroBatchOfABroadcastInputIsReducedOnce) {
  auto graph = validated_graph(R"({
    "fusedgemm_graph": 1, "name": "residual + its row sums",
    "tensors": [
      {"name": "A", "dims": [2, 16, 32], "data_type": "bf16"},
      {"name": "B", "dims": [2, 32, 16], "strides": [512, 1, 32], "data_type": "bf16"},
      {"name": "R", "dims": [1, 16, 16], "data_type": "fp32"},
      {"name": "acc"},
      {"name": "D", "dims": [2, 16, 16], "data_type": "fp32", "output": true},
      {"name": "T", "dims": [1, 16, 1], "data_type": "fp32", "output": true}],
    "nodes": [
      {"kind": "matmul", "name": "g", "inputs": ["A", "B"], "outputs": ["acc"]},
      {"kind": "pointwise", "name": "add", "inputs": ["acc", "R"], "outputs": ["D"],
       "mode": "add"},
      {"kind": "reduction", "name": "row_sums", "inputs": ["R"], "outputs": ["T"],
       "mode": "add"}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), fallback_on_host());
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(graph.value(), 13);
  ASSERT_TRUE(call) << call.status().message();
  call->prepare();
  expect_computed(plan.value(), call.value(), graph.value(),
                  pack_with(call.value(), {{"R", view(call.value(), "R", {2, 16, 16}, {0, 16, 1})}},
                            /*views=*/false));
}

// An aux read in place of a dense output of its layout is legal on either engine (the
// fallback engine refused it by its roles' kind, with a message that called it legal).
TEST(FallbackEngine, AnAuxMayBeReadInPlaceOfItsOutputOnEitherEngine) {
  auto graph = validated_graph(R"({
    "fusedgemm_graph": 1, "name": "in-place residual",
    "tensors": [
      {"name": "A", "dims": [1, 16, 32], "data_type": "bf16"},
      {"name": "B", "dims": [1, 32, 16], "strides": [512, 1, 32], "data_type": "bf16"},
      {"name": "R", "dims": [1, 16, 16], "data_type": "bf16"},
      {"name": "acc"},
      {"name": "D", "dims": [1, 16, 16], "data_type": "bf16", "output": true}],
    "nodes": [
      {"kind": "matmul", "name": "g", "inputs": ["A", "B"], "outputs": ["acc"]},
      {"kind": "pointwise", "name": "add", "inputs": ["acc", "R"], "outputs": ["D"],
       "mode": "add"}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  for (const Engine engine : {Engine::kFused, Engine::kFallback}) {
    SCOPED_TRACE(std::string(to_string(engine)));
    auto plan = build(graph.value(), on_engine(make_host_device(), engine));
    ASSERT_TRUE(plan) << plan.status().message();
    ASSERT_EQ(plan->engine(), engine);
    auto call = CallBuffers::make(graph.value(), 17);
    ASSERT_TRUE(call) << call.status().message();
    call->prepare();
    // D starts as R's values, and R is read from D.
    CallTensor& r = call.value()["R"];
    CallTensor& d = call.value()["D"];
    ASSERT_EQ(r.buffer->size(), d.buffer->size());
    std::copy_n(r.buffer->data(), r.buffer->size(), d.buffer->data());
    expect_computed(
        plan.value(), call.value(), graph.value(),
        pack_with(call.value(), {{"R", BufferView::address(d.buffer->data())}}, /*views=*/false));
  }
}

// Issue 10: block_scaled_fp8 with the dequantized B declared fp8_e4m3 (or fp4_e2m1) ran on
// the fused engine, which dropped that rounding (rel_err 2.8e-2, 0.2). The fused engine
// declines it (dequantize_rounding), and the fallback engine rounds there, as the
// reference does.
TEST(FallbackEngine, ADeclaredRoundingOnADequantizedOperandIsDeclinedAndHonoured) {
  for (const DataType type : {DataType::kFp8E4M3, DataType::kFp4E2M1}) {
    auto graph = load_example("block_scaled_fp8");
    ASSERT_TRUE(graph) << graph.status().message();
    auto b = graph->find_tensor("B");
    ASSERT_TRUE(b);
    b.value()->set_data_type(type);
    ASSERT_TRUE(graph->validate()) << graph->validate().message();
    auto plan = build(graph.value(), BuildOptions{make_host_device()});
    ASSERT_TRUE(plan) << plan.status().message();
    EXPECT_EQ(plan->engine(), Engine::kFallback) << to_string(type);
    ASSERT_TRUE(plan->declined().has_value());
    EXPECT_EQ(plan->declined()->rule, "dequantize_rounding");
    EXPECT_EQ(plan->declined()->message,
              fmt::format("dequantize_rounding: role B 'B': block_scale_dequantize 'dequant_b' "
                          "declares its result {}, a rounding point inside the mainloop; legal: "
                          "no data type or fp32 on a dequantized operand (the fallback engine "
                          "rounds there)",
                          to_string(type)));

    auto call = CallBuffers::make(graph.value(), 9);
    ASSERT_TRUE(call) << call.status().message();
    call->prepare();
    HostWorkspace ws(plan.value());
    ASSERT_TRUE(plan->execute(call->pack(), ws.get(), nullptr));
    EXPECT_TRUE(call->matches_reference(graph.value())) << to_string(type);
    EXPECT_TRUE(call->outside_untouched());
  }
}

TEST(FallbackEngine, ForcingTheFusedEngineOnADeclinedGraphFailsWithTheRule) {
  auto graph = load_example("fallback_only");
  ASSERT_TRUE(graph);
  BuildOptions options{make_host_device()};
  options.engine = Engine::kFused;
  auto plan = build(graph.value(), options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.status().code(), ErrorCode::kDeclined);
  EXPECT_EQ(plan.status().message().rfind("chained_gemm:", 0), 0u) << plan.status().message();
}

// Three block-scaled GEMMs pass the gate, but no kernel shape holds their accumulators
// (kernel_config): build() runs them on the fallback engine, and forcing the fused engine
// fails kDeclined with that rule, as a gate decline does (it failed kUnavailable).
TEST(FallbackEngine, ForcingTheFusedEngineWhereNoKernelShapeFitsFailsDeclined) {
  auto graph = validated_graph(R"({
    "fusedgemm_graph": 1, "name": "three block-scaled GEMMs",
    "tensors": [
      {"name": "Aq", "dims": [1, 256, 512], "data_type": "fp8_e4m3"},
      {"name": "sa", "dims": [1, 256, 4], "data_type": "fp32"},
      {"name": "Bq0", "dims": [1, 512, 512], "strides": [262144, 1, 512], "data_type": "fp8_e4m3"},
      {"name": "Bq1", "dims": [1, 512, 512], "strides": [262144, 1, 512], "data_type": "fp8_e4m3"},
      {"name": "Bq2", "dims": [1, 512, 512], "strides": [262144, 1, 512], "data_type": "fp8_e4m3"},
      {"name": "sb0", "dims": [1, 4, 4], "data_type": "fp32"},
      {"name": "sb1", "dims": [1, 4, 4], "data_type": "fp32"},
      {"name": "sb2", "dims": [1, 4, 4], "data_type": "fp32"},
      {"name": "A"}, {"name": "B0"}, {"name": "B1"}, {"name": "B2"},
      {"name": "acc0"}, {"name": "acc1"}, {"name": "acc2"}, {"name": "s01"},
      {"name": "D", "dims": [1, 256, 512], "data_type": "bf16", "output": true}],
    "nodes": [
      {"kind": "block_scale_dequantize", "name": "dq_a", "inputs": ["Aq", "sa"],
       "outputs": ["A"], "block_size": [1, 128]},
      {"kind": "block_scale_dequantize", "name": "dq_b0", "inputs": ["Bq0", "sb0"],
       "outputs": ["B0"], "block_size": [128, 128]},
      {"kind": "block_scale_dequantize", "name": "dq_b1", "inputs": ["Bq1", "sb1"],
       "outputs": ["B1"], "block_size": [128, 128]},
      {"kind": "block_scale_dequantize", "name": "dq_b2", "inputs": ["Bq2", "sb2"],
       "outputs": ["B2"], "block_size": [128, 128]},
      {"kind": "matmul", "name": "g0", "inputs": ["A", "B0"], "outputs": ["acc0"]},
      {"kind": "matmul", "name": "g1", "inputs": ["A", "B1"], "outputs": ["acc1"]},
      {"kind": "matmul", "name": "g2", "inputs": ["A", "B2"], "outputs": ["acc2"]},
      {"kind": "pointwise", "name": "add01", "inputs": ["acc0", "acc1"], "outputs": ["s01"],
       "mode": "add"},
      {"kind": "pointwise", "name": "add2", "inputs": ["s01", "acc2"], "outputs": ["D"],
       "mode": "add"}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFallback);
  ASSERT_TRUE(plan->declined());
  EXPECT_EQ(plan->declined()->rule, "kernel_config");
  BuildOptions forced{make_host_device()};
  forced.engine = Engine::kFused;
  auto refused = build(graph.value(), forced);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), ErrorCode::kDeclined) << refused.status().message();
  EXPECT_EQ(refused.status().message().rfind("kernel_config:", 0), 0u)
      << refused.status().message();
}

TEST(FallbackEngine, AFusableGraphUsesTheFusedEngineUnlessForced) {
  auto fused = make_flavor_graph(Flavor::kPlain, {});
  ASSERT_TRUE(fused);
  auto plan = build(fused->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->engine(), Engine::kFused);
  EXPECT_FALSE(plan->declined());
  auto forced = build(fused->graph, fallback_on_host());
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->engine(), Engine::kFallback);
  EXPECT_FALSE(forced->declined()) << "forced, not declined";
}

// Every flavor forced onto the fallback engine, at shapes the fused engine would refuse
// too (contiguous extents that are not 16-byte multiples), both majors, batch broadcast.
// Every flavor forced onto the fallback engine at each shape matches the reference, writes
// only its elements and defers nothing; returns the number of (flavor, shape) pairs that ran.
int expect_every_flavor_matches_reference(const std::vector<FlavorShape>& shapes) {
  int ran = 0;
  for (const Flavor flavor : all_flavors()) {
    for (const FlavorShape& shape : shapes) {
      auto fg = make_flavor_graph(flavor, shape);
      if (!fg) continue;  // a combination the flavor does not have (fp8 M-major, say)
      SCOPED_TRACE(fmt::format("{} {}", to_string(flavor), to_string(shape)));
      auto plan = build(fg->graph, fallback_on_host());
      EXPECT_TRUE(plan) << plan.status().message();
      if (!plan) continue;
      auto call = CallBuffers::make(fg->graph, 11);
      EXPECT_TRUE(call) << call.status().message();
      if (!call) continue;
      call->prepare();
      HostWorkspace ws(plan.value());
      const Status s = plan->execute(call->pack(/*views=*/true), ws.get(), nullptr);
      EXPECT_TRUE(s) << s.message();
      EXPECT_TRUE(call->matches_reference(fg->graph));
      EXPECT_TRUE(call->outside_untouched());
      EXPECT_EQ(total_deferrals(plan.value()), 0u);
      ++ran;
    }
  }
  return ran;
}

TEST(FallbackEngine, EveryFlavorMatchesTheReference) {
  const std::vector<FlavorShape> shapes = {
      {.batch = 1, .m = 33, .n = 20, .k = 24},
      {.batch = 3,
       .m = 16,
       .n = 18,
       .k = 40,
       .a_major = kM,
       .b_major = kN,
       .out_major = kM,
       .a_batch_one = true,
       .output_pad = 3},
      {.batch = 2, .m = 1, .n = 9, .k = 7, .b_batch_one = true, .aux_batch_one = true},
  };
  EXPECT_GE(expect_every_flavor_matches_reference(shapes),
            static_cast<int>(all_flavors().size()) * 2);
}

// The host runner's matmuls split their rows over the cores past 2^22 flops: shapes past
// that with M, N and K off its 4 x 4 block (203 and 250 rows end off it on two or more
// threads), batch 3 and a broadcast batch, both majors of each operand.
TEST(FallbackEngine, EveryFlavorMatchesTheReferenceOnThreadedRaggedShapes) {
  const std::vector<FlavorShape> shapes = {
      {.batch = 3, .m = 203, .n = 101, .k = 104},
      {.batch = 2,
       .m = 250,
       .n = 118,
       .k = 75,
       .a_major = kM,
       .b_major = kN,
       .out_major = kM,
       .b_batch_one = true,
       .output_pad = 3},
  };
  EXPECT_GE(expect_every_flavor_matches_reference(shapes), static_cast<int>(all_flavors().size()));
}

class FallbackRules : public testing::Test {
 protected:
  void SetUp() override {
    auto graph = load_example("fallback_only");
    ASSERT_TRUE(graph);
    graph_ = std::move(graph.value());
    auto plan = build(graph_, BuildOptions{make_host_device()});
    ASSERT_TRUE(plan) << plan.status().message();
    plan_.emplace(std::move(plan.value()));
    auto call = CallBuffers::make(graph_, 5);
    ASSERT_TRUE(call);
    call_.emplace(std::move(call.value()));
    call_->fill_canary();
  }

  // Executes, expects a refusal by `rule` that wrote nothing and counted one deferral.
  void expect_refused(const VariantPack& pack, Workspace ws, const std::string& rule) {
    const Status s = plan_->execute(pack, ws, nullptr);
    ASSERT_EQ(s.code(), ErrorCode::kIllegalCall) << s.message();
    EXPECT_EQ(s.message().rfind(rule + ":", 0), 0u) << s.message();
    EXPECT_EQ(plan_->explain(pack, ws).rule, rule);
    EXPECT_EQ(deferral_map(*plan_)[rule], 1u);
    EXPECT_TRUE(call_->all_canary());
  }

  // The call's buffers by name, with `name` given `view` instead.
  VariantPack pack_with(const std::string& name, BufferView view) {
    VariantPack pack;
    for (const char* t : {"A", "B", "C", "D"}) {
      pack.set(t, t == name ? view : BufferView::address((*call_)[t].buffer->data()));
    }
    return pack;
  }

  Graph graph_;
  std::optional<Plan> plan_;
  std::optional<CallBuffers> call_;
};

TEST_F(FallbackRules, ExtentsAreTheDeclaredOnes) {
  const VariantPack pack = pack_with(
      "A", BufferView::view((*call_)["A"].buffer->data(), {1, 128, 256}, {65536, 256, 1}));
  HostWorkspace ws(*plan_);
  expect_refused(pack, ws.get(), "extent");
  EXPECT_NE(plan_->execute(pack, ws.get(), nullptr).message().find("declared"), std::string::npos);
}

TEST_F(FallbackRules, AShortWorkspaceIsRefused) {
  ASSERT_GT(plan_->workspace_bytes(), 0u);
  HostWorkspace ws(*plan_);
  Workspace short_ws = ws.get();
  short_ws.bytes = plan_->workspace_bytes() - 1;
  expect_refused(call_->pack(), short_ws, "workspace");
}

TEST_F(FallbackRules, AMissingWorkspaceIsRefused) {
  expect_refused(call_->pack(), Workspace{}, "workspace");
  // The fallback engine's own reason, not the fused engine's taps and units.
  const std::string why = plan_->explain(call_->pack(), Workspace{}).message;
  EXPECT_NE(why.find(fmt::format("needed: {} bytes, where the fallback engine keeps",
                                 plan_->workspace_bytes())),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("tap"), std::string::npos) << why;
}

TEST_F(FallbackRules, AnOutputOverlappingAnInputIsRefused) {
  const VariantPack pack = pack_with("D", BufferView::address((*call_)["A"].buffer->data()));
  HostWorkspace ws(*plan_);
  const Status s = plan_->execute(pack, ws.get(), nullptr);
  ASSERT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("buffer_overlap:", 0), 0u) << s.message();
}

TEST_F(FallbackRules, AMissingBufferIsRefused) {
  VariantPack pack;
  for (const char* name : {"A", "B", "D"}) {
    pack.set((*call_)[name].uid, BufferView::address((*call_)[name].buffer->data()));
  }
  HostWorkspace ws(*plan_);
  expect_refused(pack, ws.get(), "buffer_missing");
}

}  // namespace
}  // namespace fusedgemm::test
