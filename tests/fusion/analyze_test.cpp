// analyze(): each flavor of DESIGN.md section 5 becomes the fusion program the kernel
// generator and the recipe read. Graphs are built through the public Graph API.
#include "fusion/analyze.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/graph.h"

namespace fusedgemm {
// gtest printers, found by argument-dependent lookup, so that failures name the enumerator.
void PrintTo(Role role, std::ostream* os) {
  *os << to_string(role);
}
void PrintTo(DataType type, std::ostream* os) {
  *os << to_string(type);
}
namespace fusion {
void PrintTo(Major major, std::ostream* os) {
  *os << to_string(major);
}
void PrintTo(Broadcast broadcast, std::ostream* os) {
  *os << to_string(broadcast);
}
void PrintTo(EpilogueOp op, std::ostream* os) {
  switch (op) {
    case EpilogueOp::kAccumulator: *os << "accumulator"; return;
    case EpilogueOp::kAuxLoad: *os << "aux load"; return;
    case EpilogueOp::kPointwise: *os << "pointwise"; return;
  }
}
namespace {

using Dimv = std::vector<std::int64_t>;

constexpr DataType kBf16 = DataType::kBFloat16;
constexpr DataType kFp32 = DataType::kFloat32;
constexpr DataType kFp8 = DataType::kFp8E4M3;

Tensor input(Graph& g, const std::string& name, Dimv dims, DataType type, Dimv strides = {}) {
  TensorAttributes attributes;
  attributes.set_name(name).set_dim(std::move(dims)).set_data_type(type);
  if (!strides.empty()) attributes.set_stride(std::move(strides));
  return g.tensor(attributes);
}

// B [b, K, N] K-major: K is the unit-stride axis.
Dimv b_k_major(std::int64_t k, std::int64_t n) {
  return {k * n, 1, k};
}

void store(const Tensor& t, const std::string& name, DataType type) {
  t->set_name(name).set_data_type(type).set_output(true);
}

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

// Every epilogue node reads only earlier nodes (the DAG is in topological order).
void expect_topological(const FusionProgram& program) {
  for (std::size_t i = 0; i < program.epilogue.size(); ++i) {
    for (int in : program.epilogue[i].inputs) {
      EXPECT_GE(in, 0) << "node " << i;
      EXPECT_LT(in, static_cast<int>(i)) << "node " << i << " reads a later node";
    }
  }
}

// Validates and analyzes; fails the test on an error or a decline.
std::optional<FusionProgram> analyze_ok(Graph& g) {
  if (Status s = g.validate(); !s) {
    ADD_FAILURE() << "validate: " << s.message();
    return std::nullopt;
  }
  auto analysis = analyze(g);
  if (!analysis) {
    ADD_FAILURE() << "analyze: " << analysis.status().message();
    return std::nullopt;
  }
  if (analysis->decline) {
    ADD_FAILURE() << "declined: " << analysis->decline->message;
    return std::nullopt;
  }
  expect_topological(analysis->program);
  return std::move(analysis->program);
}

std::vector<std::string> buffer_names(const FusionProgram& program) {
  std::vector<std::string> names;
  for (const auto& b : program.buffers) names.push_back(b.name);
  return names;
}

int buffer_named(const FusionProgram& program, const std::string& name) {
  for (std::size_t i = 0; i < program.buffers.size(); ++i) {
    if (program.buffers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

TEST(Analyze, PlainGemm) {
  Graph g;
  g.set_name("plain");
  auto a = input(g, "A", {1, 128, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 256}, kBf16, b_k_major(64, 256));
  auto d = g.matmul(a, b, MatmulAttributes().set_name("mm"));
  store(d, "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->graph_name, "plain");
  EXPECT_EQ(p->problem, (ProblemShape{1, 128, 256, 64}));
  ASSERT_EQ(buffer_names(*p), (std::vector<std::string>{"A", "B", "D"}));
  EXPECT_EQ(p->buffers[0].uid, *a->uid());
  EXPECT_EQ(p->buffers[0].data_type, kBf16);
  EXPECT_EQ(p->buffers[0].layout, (Layout{{1, 128, 64}, {128 * 64, 64, 1}}));
  EXPECT_EQ(p->buffers[1].layout, (Layout{{1, 64, 256}, {64 * 256, 1, 64}}));
  EXPECT_EQ(p->buffers[2].uid, *d->uid());

  ASSERT_EQ(p->operands.size(), 2u);
  EXPECT_EQ(p->operands[0].buffer, 0);
  EXPECT_EQ(p->operands[0].role, Role::kA);
  EXPECT_EQ(p->operands[0].major, Major::kK);
  EXPECT_FALSE(p->operands[0].batch_broadcast);
  EXPECT_FALSE(p->operands[0].block_scale);
  EXPECT_EQ(p->operands[1].buffer, 1);
  EXPECT_EQ(p->operands[1].role, Role::kB);
  EXPECT_EQ(p->operands[1].major, Major::kK);

  ASSERT_EQ(p->gemms.size(), 1u);
  EXPECT_EQ(p->gemms[0].name, "mm");
  EXPECT_EQ(p->gemms[0].a, 0);
  EXPECT_EQ(p->gemms[0].b, 1);

  ASSERT_EQ(p->epilogue.size(), 1u);
  EXPECT_EQ(p->epilogue[0].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[0].gemm, 0);
  EXPECT_EQ(p->epilogue[0].name, "D");
  EXPECT_EQ(p->epilogue[0].round_to, kBf16);  // the stored value is the bf16 output

  ASSERT_EQ(p->outputs.size(), 1u);
  EXPECT_EQ(p->outputs[0].buffer, 2);
  EXPECT_EQ(p->outputs[0].value, 0);
  EXPECT_EQ(p->outputs[0].major, Major::kN);
  EXPECT_TRUE(p->aux.empty());
  EXPECT_TRUE(p->taps.empty());
  EXPECT_TRUE(p->quantized_outputs.empty());
  EXPECT_EQ(p->role_of(0), Role::kA);
  EXPECT_EQ(p->role_of(1), Role::kB);
  EXPECT_EQ(p->role_of(2), Role::kOutput);
}

TEST(Analyze, PointwiseChainRoundsAtDeclaredIntermediate) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16, b_k_major(64, 128));
  auto acc = g.matmul(a, b);
  auto relu =
      g.pointwise(acc, op(PointwiseMode::kRelu).set_relu_lower_clip_slope(0.25f).set_name("relu"));
  relu->set_name("relu_bf16").set_data_type(kBf16);  // declared intermediate, not an output
  auto gelu = g.pointwise(relu, op(PointwiseMode::kGeluTanh));
  auto d = g.pointwise(gelu, acc, op(PointwiseMode::kAdd));  // fan-out of acc, fan-in here
  store(d, "D", DataType::kFloat16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->epilogue.size(), 4u);
  EXPECT_EQ(p->epilogue[0].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[0].round_to, kFp32);  // an undeclared intermediate stays fp32
  EXPECT_EQ(p->epilogue[1].op, EpilogueOp::kPointwise);
  EXPECT_EQ(p->epilogue[1].pointwise.mode, PointwiseMode::kRelu);
  EXPECT_EQ(p->epilogue[1].pointwise.relu_lower_clip_slope, 0.25f);
  EXPECT_EQ(p->epilogue[1].inputs, (std::vector<int>{0}));
  EXPECT_EQ(p->epilogue[1].name, "relu_bf16");
  EXPECT_EQ(p->epilogue[1].round_to, kBf16);
  EXPECT_EQ(p->epilogue[2].pointwise.mode, PointwiseMode::kGeluTanh);
  EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{1}));
  EXPECT_EQ(p->epilogue[2].round_to, kFp32);
  EXPECT_EQ(p->epilogue[3].pointwise.mode, PointwiseMode::kAdd);
  EXPECT_EQ(p->epilogue[3].inputs, (std::vector<int>{2, 0}));
  EXPECT_EQ(p->epilogue[3].round_to, DataType::kFloat16);
  ASSERT_EQ(p->outputs.size(), 1u);
  EXPECT_EQ(p->outputs[0].value, 3);
  // The intermediate is inside the kernel: it is no buffer.
  EXPECT_EQ(buffer_named(*p, "relu_bf16"), -1);
}

struct AuxCase {
  Dimv dims;
  Broadcast broadcast;
  bool batch_broadcast;
};

TEST(Analyze, AuxBroadcastModes) {
  // Problem [batch 2, M 64, N 128].
  const std::vector<AuxCase> cases = {
      {{1, 1, 1}, Broadcast::kScalar, true},   {{2, 1, 1}, Broadcast::kScalar, false},
      {{1, 64, 1}, Broadcast::kRow, true},     {{2, 64, 1}, Broadcast::kRow, false},
      {{1, 1, 128}, Broadcast::kColumn, true}, {{2, 1, 128}, Broadcast::kColumn, false},
      {{1, 64, 128}, Broadcast::kFull, true},  {{2, 64, 128}, Broadcast::kFull, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("aux dims [{}]", fmt::join(c.dims, ", ")));
    Graph g;
    auto a = input(g, "A", {2, 64, 64}, kBf16);
    auto b = input(g, "B", {2, 64, 128}, kBf16);
    auto bias = input(g, "bias", c.dims, kBf16);
    auto d = g.pointwise(g.matmul(a, b), bias, op(PointwiseMode::kAdd));
    store(d, "D", kBf16);

    auto p = analyze_ok(g);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->aux.size(), 1u);
    EXPECT_EQ(p->aux[0].buffer, buffer_named(*p, "bias"));
    EXPECT_EQ(p->aux[0].broadcast, c.broadcast);
    EXPECT_EQ(p->aux[0].batch_broadcast, c.batch_broadcast);
    EXPECT_EQ(p->role_of(p->aux[0].buffer), Role::kAux);
    ASSERT_EQ(p->epilogue.size(), 3u);
    EXPECT_EQ(p->epilogue[1].op, EpilogueOp::kAuxLoad);
    EXPECT_EQ(p->epilogue[1].aux, 0);
    EXPECT_EQ(p->epilogue[1].round_to, kFp32);  // a load widens exactly; nothing to round
    EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{0, 1}));
  }
}

TEST(Analyze, AuxReadTwiceIsLoadedOnce) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16);
  auto scale = input(g, "scale", {1, 1, 1}, kFp32);
  auto x = g.pointwise(g.matmul(a, b), scale, op(PointwiseMode::kMul));
  auto d = g.pointwise(x, scale, op(PointwiseMode::kAdd));
  store(d, "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->aux.size(), 1u);
  ASSERT_EQ(p->epilogue.size(), 4u);
  EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(p->epilogue[3].inputs, (std::vector<int>{2, 1}));
}

TEST(Analyze, DenseOutputsKeepTheirMajors) {
  constexpr std::int64_t kM = 64, kN = 128;
  Graph g;
  auto a = input(g, "A", {1, kM, 64}, kBf16);
  auto b = input(g, "B", {1, 64, kN}, kBf16);
  auto acc = g.matmul(a, b);
  auto d0 = g.pointwise(acc, op(PointwiseMode::kIdentity));
  store(d0, "D_n_major", kBf16);
  auto d1 = g.pointwise(acc, op(PointwiseMode::kRelu));
  store(d1, "D_m_major", kFp32);
  d1->set_stride({kM * kN, 1, kM});
  auto d2 = g.pointwise(d1, op(PointwiseMode::kNeg));
  store(d2, "D_fp8", kFp8);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->outputs.size(), 3u);
  const int n_major = buffer_named(*p, "D_n_major");
  const int m_major = buffer_named(*p, "D_m_major");
  EXPECT_EQ(p->outputs[0].buffer, n_major);
  EXPECT_EQ(p->outputs[0].value, 1);
  EXPECT_EQ(p->outputs[0].major, Major::kN);
  EXPECT_EQ(p->outputs[1].buffer, m_major);
  EXPECT_EQ(p->outputs[1].value, 2);
  EXPECT_EQ(p->outputs[1].major, Major::kM);
  EXPECT_EQ(p->buffers[m_major].data_type, kFp32);
  EXPECT_EQ(p->buffers[m_major].layout.stride, (Dims{kM * kN, 1, kM}));
  // A stored value can feed further nodes, and each output rounds to its own type.
  EXPECT_EQ(p->epilogue[3].inputs, (std::vector<int>{2}));
  EXPECT_EQ(p->outputs[2].value, 3);
  EXPECT_EQ(p->buffers[p->outputs[2].buffer].data_type, kFp8);
  EXPECT_EQ(p->epilogue[3].round_to, kFp8);
}

struct TapAxesCase {
  const char* name;
  Dimv dims;
  bool reduce_batch, reduce_m, reduce_n;
};

TEST(Analyze, TapModesAndAxes) {
  // Problem [batch 2, M 64, N 128]; the only output is the tap.
  const std::vector<TapAxesCase> axes = {
      {"row", {2, 64, 1}, false, false, true},
      {"column", {2, 1, 128}, false, true, false},
      {"full", {1, 1, 1}, true, true, true},
      {"row over batch", {1, 64, 1}, true, false, true},
  };
  for (ReductionMode mode : all_reduction_modes()) {
    for (const auto& axis : axes) {
      SCOPED_TRACE(fmt::format("{} {}", to_string(mode), axis.name));
      Graph g;
      auto a = input(g, "A", {2, 64, 64}, kBf16);
      auto b = input(g, "B", {1, 64, 128}, kBf16);
      auto acc = g.matmul(a, b);
      auto r = g.reduction(acc, ReductionAttributes().set_mode(mode));
      r->set_dim(axis.dims).set_name("T").set_output(true);

      auto p = analyze_ok(g);
      ASSERT_TRUE(p);
      EXPECT_TRUE(p->outputs.empty());
      ASSERT_EQ(p->taps.size(), 1u);
      const Tap& tap = p->taps[0];
      EXPECT_EQ(tap.buffer, buffer_named(*p, "T"));
      EXPECT_EQ(p->role_of(tap.buffer), Role::kTap);
      EXPECT_EQ(p->buffers[tap.buffer].data_type, kFp32);
      EXPECT_EQ(tap.value, 0);
      EXPECT_EQ(tap.mode, mode);
      EXPECT_EQ(tap.reduce_batch, axis.reduce_batch);
      EXPECT_EQ(tap.reduce_m, axis.reduce_m);
      EXPECT_EQ(tap.reduce_n, axis.reduce_n);
    }
  }
}

TEST(Analyze, TapOfAStoredValue) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16);
  auto d = g.pointwise(g.matmul(a, b), op(PointwiseMode::kSilu).set_swish_beta(1.5f));
  store(d, "D", kBf16);
  auto r = g.reduction(d, ReductionAttributes().set_mode(ReductionMode::kAmax));
  r->set_dim({1, 64, 1}).set_name("row_amax").set_output(true);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->outputs.size(), 1u);
  ASSERT_EQ(p->taps.size(), 1u);
  EXPECT_EQ(p->outputs[0].value, 1);
  EXPECT_EQ(p->taps[0].value, 1);  // the tap reads the same value the output stores
  EXPECT_EQ(p->epilogue[1].pointwise.swish_beta, 1.5f);
}

TEST(Analyze, GatedMlpSharesOneAOperand) {
  Graph g;
  auto a = input(g, "A", {1, 128, 64}, kBf16);
  auto b0 = input(g, "B0", {1, 64, 256}, kBf16, b_k_major(64, 256));
  auto b1 = input(g, "B1", {1, 64, 256}, kBf16, b_k_major(64, 256));
  auto c0 = g.matmul(a, b0, MatmulAttributes().set_name("gate"));
  auto c1 = g.matmul(a, b1, MatmulAttributes().set_name("up"));
  auto s = g.pointwise(c0, op(PointwiseMode::kSilu));
  auto d = g.pointwise(s, c1, op(PointwiseMode::kMul));
  store(d, "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(buffer_names(*p), (std::vector<std::string>{"A", "B0", "B1", "D"}));
  ASSERT_EQ(p->operands.size(), 3u);
  ASSERT_EQ(p->gemms.size(), 2u);
  EXPECT_EQ(p->gemms[0].name, "gate");
  EXPECT_EQ(p->gemms[1].name, "up");
  EXPECT_EQ(p->gemms[0].a, p->gemms[1].a);  // A is read once
  EXPECT_NE(p->gemms[0].b, p->gemms[1].b);
  EXPECT_EQ(p->operands[p->gemms[0].b].buffer, 1);
  EXPECT_EQ(p->operands[p->gemms[1].b].buffer, 2);
  ASSERT_EQ(p->epilogue.size(), 4u);
  EXPECT_EQ(p->epilogue[0].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[0].gemm, 0);
  EXPECT_EQ(p->epilogue[1].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[1].gemm, 1);
  EXPECT_EQ(p->epilogue[2].pointwise.mode, PointwiseMode::kSilu);
  EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{0}));
  EXPECT_EQ(p->epilogue[3].pointwise.mode, PointwiseMode::kMul);
  EXPECT_EQ(p->epilogue[3].inputs, (std::vector<int>{2, 1}));
}

TEST(Analyze, AccumulatorsLeadTheEpilogue) {
  // Inserted as matmul, pointwise, matmul: the mainloop computes both accumulators before
  // the epilogue reads either, and the program says so.
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto c0 = g.matmul(a, input(g, "B0", {1, 64, 128}, kBf16));
  auto s = g.pointwise(c0, op(PointwiseMode::kSigmoid));
  auto c1 = g.matmul(a, input(g, "B1", {1, 64, 128}, kBf16));
  store(g.pointwise(s, c1, op(PointwiseMode::kMul)), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->epilogue.size(), 4u);
  EXPECT_EQ(p->epilogue[0].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[1].op, EpilogueOp::kAccumulator);
  EXPECT_EQ(p->epilogue[2].pointwise.mode, PointwiseMode::kSigmoid);
  EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{0}));
  EXPECT_EQ(p->epilogue[3].inputs, (std::vector<int>{2, 1}));
}

TEST(Analyze, PrologueIsDeclinedBeforeItsInputsAreTakenForAux) {
  // relu(A) feeds the matmul. Walked as an epilogue node first, A [1, 64, 64] would be an
  // aux load that does not broadcast to [1, 64, 128]: the decline must be the prologue.
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto pro = g.pointwise(a, op(PointwiseMode::kRelu));
  store(g.matmul(pro, input(g, "B", {1, 64, 128}, kBf16)), "D", kBf16);
  ASSERT_TRUE(g.validate());
  auto analysis = analyze(g);
  ASSERT_TRUE(analysis);
  ASSERT_TRUE(analysis->decline);
  EXPECT_EQ(analysis->decline->rule, "prologue_op") << analysis->decline->message;
  EXPECT_TRUE(analysis->program.aux.empty());
}

TEST(Analyze, MatmulOfASquareTensorWithItselfIsOneBufferInTwoRoles) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  store(g.matmul(a, a), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(buffer_names(*p), (std::vector<std::string>{"A", "D"}));
  ASSERT_EQ(p->operands.size(), 2u);
  EXPECT_EQ(p->operands[0].buffer, 0);
  EXPECT_EQ(p->operands[0].role, Role::kA);
  EXPECT_EQ(p->operands[0].major, Major::kK);
  EXPECT_EQ(p->operands[1].buffer, 0);
  EXPECT_EQ(p->operands[1].role, Role::kB);
  EXPECT_EQ(p->operands[1].major, Major::kN);  // row-major [K, N] is N-major for B
  EXPECT_EQ(p->gemms[0].a, 0);
  EXPECT_EQ(p->gemms[0].b, 1);
}

TEST(Analyze, SumOfTwoProducts) {
  Graph g;
  auto a0 = input(g, "A0", {1, 64, 64}, kBf16);
  auto b0 = input(g, "B0", {1, 64, 128}, kBf16);
  auto a1 = input(g, "A1", {1, 64, 64}, kBf16, {64 * 64, 1, 64});  // M-major
  auto b1 = input(g, "B1", {1, 64, 128}, kBf16, b_k_major(64, 128));
  auto c0 = g.matmul(a0, b0);  // named: argument evaluation order is unspecified
  auto c1 = g.matmul(a1, b1);
  auto d = g.pointwise(c0, c1, op(PointwiseMode::kAdd));
  store(d, "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->operands.size(), 4u);
  ASSERT_EQ(p->gemms.size(), 2u);
  EXPECT_EQ(p->gemms[0].a, 0);
  EXPECT_EQ(p->gemms[0].b, 1);
  EXPECT_EQ(p->gemms[1].a, 2);
  EXPECT_EQ(p->gemms[1].b, 3);
  EXPECT_EQ(p->operands[1].major, Major::kN);
  EXPECT_EQ(p->operands[2].major, Major::kM);
  EXPECT_EQ(p->operands[3].major, Major::kK);
  ASSERT_EQ(p->epilogue.size(), 3u);
  EXPECT_EQ(p->epilogue[2].inputs, (std::vector<int>{0, 1}));
}

TEST(Analyze, MultiGemmWhoseOnlyOutputsAreTaps) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b0 = input(g, "B0", {1, 64, 128}, kBf16);
  auto b1 = input(g, "B1", {1, 64, 128}, kBf16);
  auto c0 = g.matmul(a, b0);
  auto c1 = g.matmul(a, b1);
  auto prod = g.pointwise(c0, c1, op(PointwiseMode::kMul));
  auto row_sum = g.reduction(prod, ReductionAttributes().set_mode(ReductionMode::kAdd));
  row_sum->set_dim({1, 64, 1}).set_name("row_sum").set_output(true);
  auto col_max = g.reduction(c1, ReductionAttributes().set_mode(ReductionMode::kMax));
  col_max->set_dim({1, 1, 128}).set_name("col_max").set_output(true);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->gemms.size(), 2u);
  EXPECT_TRUE(p->outputs.empty());
  ASSERT_EQ(p->taps.size(), 2u);
  EXPECT_EQ(p->buffers[p->taps[0].buffer].name, "row_sum");
  EXPECT_EQ(p->taps[0].value, 2);
  EXPECT_TRUE(p->taps[0].reduce_n);
  EXPECT_FALSE(p->taps[0].reduce_m);
  EXPECT_EQ(p->buffers[p->taps[1].buffer].name, "col_max");
  EXPECT_EQ(p->taps[1].value, 1);
  EXPECT_EQ(p->taps[1].mode, ReductionMode::kMax);
  EXPECT_TRUE(p->taps[1].reduce_m);
  EXPECT_FALSE(p->taps[1].reduce_n);
}

TEST(Analyze, BlockScaledFp8OperandsCarryTheirScales) {
  Graph g;
  auto a = input(g, "A", {1, 128, 256}, kFp8);
  auto sa = input(g, "A_scale", {1, 128, 2}, kFp32);
  auto b = input(g, "B", {1, 256, 256}, kFp8, b_k_major(256, 256));
  auto sb = input(g, "B_scale", {1, 2, 2}, kFp32);
  auto da =
      g.block_scale_dequantize(a, sa, BlockScaleDequantizeAttributes().set_block_size(1, 128));
  auto db =
      g.block_scale_dequantize(b, sb, BlockScaleDequantizeAttributes().set_block_size(128, 128));
  store(g.matmul(da, db), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  // The operands are the quantized buffers; the dequantized tensors are no buffers.
  EXPECT_EQ(buffer_names(*p), (std::vector<std::string>{"A", "A_scale", "B", "B_scale", "D"}));
  ASSERT_EQ(p->operands.size(), 2u);
  const Operand& op_a = p->operands[0];
  EXPECT_EQ(op_a.buffer, buffer_named(*p, "A"));
  EXPECT_EQ(p->buffers[op_a.buffer].data_type, kFp8);
  ASSERT_TRUE(op_a.block_scale);
  EXPECT_EQ(op_a.block_scale->scale_buffer, buffer_named(*p, "A_scale"));
  EXPECT_EQ(op_a.block_scale->scale_type, kFp32);
  EXPECT_EQ(op_a.block_scale->block_rows, 1);
  EXPECT_EQ(op_a.block_scale->block_cols, 128);
  const Operand& op_b = p->operands[1];
  EXPECT_EQ(op_b.buffer, buffer_named(*p, "B"));
  EXPECT_EQ(op_b.major, Major::kK);
  ASSERT_TRUE(op_b.block_scale);
  EXPECT_EQ(op_b.block_scale->scale_buffer, buffer_named(*p, "B_scale"));
  EXPECT_EQ(op_b.block_scale->block_rows, 128);
  EXPECT_EQ(op_b.block_scale->block_cols, 128);
  EXPECT_EQ(p->role_of(buffer_named(*p, "A_scale")), Role::kScale);
  EXPECT_EQ(p->role_of(buffer_named(*p, "B_scale")), Role::kScale);
  EXPECT_EQ(p->problem, (ProblemShape{1, 128, 256, 256}));
}

TEST(Analyze, DequantizedOperandSharedByTwoGemmsIsOneOperand) {
  Graph g;
  auto a = input(g, "A", {1, 128, 128}, kFp8);
  auto sa = input(g, "A_scale", {1, 128, 1}, kFp32);
  auto da =
      g.block_scale_dequantize(a, sa, BlockScaleDequantizeAttributes().set_block_size(1, 128));
  auto b0 = input(g, "B0", {1, 128, 128}, kFp8, b_k_major(128, 128));
  auto b1 = input(g, "B1", {1, 128, 128}, kFp8, b_k_major(128, 128));
  auto sb = input(g, "B_scale", {1, 1, 1}, kFp32);
  auto block = BlockScaleDequantizeAttributes().set_block_size(128, 128);
  auto c0 = g.matmul(da, g.block_scale_dequantize(b0, sb, block));
  auto c1 = g.matmul(da, g.block_scale_dequantize(b1, sb, block));
  store(g.pointwise(c0, c1, op(PointwiseMode::kMul)), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->gemms.size(), 2u);
  EXPECT_EQ(p->gemms[0].a, p->gemms[1].a);
  EXPECT_EQ(p->operands.size(), 3u);
}

TEST(Analyze, SameDataScaledByOtherBlocksIsAnotherOperand) {
  // A [1, 128, 128] with one scale per row: blocks 1x128 and 1x256 both give scale dims
  // [1, 128, 1], so the two dequantizes share the scale buffer but not the scaling.
  Graph g;
  auto a = input(g, "A", {1, 128, 128}, kFp8);
  auto sa = input(g, "A_scale", {1, 128, 1}, kFp32);
  auto a128 =
      g.block_scale_dequantize(a, sa, BlockScaleDequantizeAttributes().set_block_size(1, 128));
  auto a256 =
      g.block_scale_dequantize(a, sa, BlockScaleDequantizeAttributes().set_block_size(1, 256));
  auto b0 = input(g, "B0", {1, 128, 128}, kFp8, b_k_major(128, 128));
  auto b1 = input(g, "B1", {1, 128, 128}, kFp8, b_k_major(128, 128));
  auto sb = input(g, "B_scale", {1, 1, 1}, kFp32);
  auto block = BlockScaleDequantizeAttributes().set_block_size(128, 128);
  auto c0 = g.matmul(a128, g.block_scale_dequantize(b0, sb, block));
  auto c1 = g.matmul(a256, g.block_scale_dequantize(b1, sb, block));
  store(g.pointwise(c0, c1, op(PointwiseMode::kAdd)), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->gemms.size(), 2u);
  const Operand& a0 = p->operands[p->gemms[0].a];
  const Operand& a1 = p->operands[p->gemms[1].a];
  EXPECT_NE(p->gemms[0].a, p->gemms[1].a);
  EXPECT_EQ(a0.buffer, a1.buffer);
  ASSERT_TRUE(a0.block_scale && a1.block_scale);
  EXPECT_EQ(a0.block_scale->block_cols, 128);
  EXPECT_EQ(a1.block_scale->block_cols, 256);
}

TEST(Analyze, BlockScaleQuantizeOutput) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 256}, kBf16);
  auto acc = g.matmul(a, b);
  auto [y, scale] =
      g.block_scale_quantize(acc, BlockScaleQuantizeAttributes().set_block_size(1, 128));
  store(y, "Y", kFp8);
  scale->set_name("Y_scale").set_output(true);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->outputs.empty());  // Y and its scales are stored by the quantized output only
  ASSERT_EQ(p->quantized_outputs.size(), 1u);
  const QuantizedOutput& q = p->quantized_outputs[0];
  EXPECT_EQ(q.buffer, buffer_named(*p, "Y"));
  EXPECT_EQ(q.scale_buffer, buffer_named(*p, "Y_scale"));
  EXPECT_EQ(q.value, 0);
  EXPECT_EQ(q.block_rows, 1);
  EXPECT_EQ(q.block_cols, 128);
  EXPECT_EQ(q.major, Major::kN);
  EXPECT_EQ(p->buffers[q.buffer].data_type, kFp8);
  EXPECT_EQ(p->buffers[q.scale_buffer].data_type, kFp32);
  EXPECT_EQ(p->buffers[q.scale_buffer].layout.shape, (Dims{1, 64, 2}));
  EXPECT_EQ(p->role_of(q.buffer), Role::kOutput);
  EXPECT_EQ(p->role_of(q.scale_buffer), Role::kScale);
}

TEST(Analyze, BatchedWithBroadcastB) {
  Graph g;
  auto a = input(g, "A", {3, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16, b_k_major(64, 128));
  store(g.matmul(a, b), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->problem, (ProblemShape{3, 64, 128, 64}));
  ASSERT_EQ(p->operands.size(), 2u);
  EXPECT_FALSE(p->operands[0].batch_broadcast);
  EXPECT_TRUE(p->operands[1].batch_broadcast);
  EXPECT_EQ(p->buffers[p->outputs[0].buffer].layout.shape, (Dims{3, 64, 128}));
}

struct MajorCase {
  const char* name;
  Dimv a_dims, a_strides, b_dims, b_strides;
  Major a_major, b_major;
};

TEST(Analyze, OperandMajors) {
  const std::vector<MajorCase> cases = {
      {"A K-major, B K-major",
       {1, 64, 32},
       {2048, 32, 1},
       {1, 32, 128},
       {4096, 1, 32},
       Major::kK,
       Major::kK},
      {"A M-major, B K-major",
       {1, 64, 32},
       {2048, 1, 64},
       {1, 32, 128},
       {4096, 1, 32},
       Major::kM,
       Major::kK},
      {"A K-major, B N-major",
       {1, 64, 32},
       {2048, 32, 1},
       {1, 32, 128},
       {4096, 128, 1},
       Major::kK,
       Major::kN},
      {"A M-major, B N-major",
       {1, 64, 32},
       {2048, 1, 64},
       {1, 32, 128},
       {4096, 128, 1},
       Major::kM,
       Major::kN},
      // Degenerate extents: an axis of extent 1 never decides the major.
      {"M 1: A M-major strides read K-major",
       {1, 1, 32},
       {32, 1, 1},
       {1, 32, 128},
       {4096, 1, 32},
       Major::kK,
       Major::kK},
      {"K 1: A K-major strides read M-major",
       {1, 64, 1},
       {64, 1, 1},
       {1, 1, 128},
       {128, 128, 1},
       Major::kM,
       Major::kN},
      {"K 1: B K-major strides read N-major",
       {1, 64, 1},
       {64, 1, 64},
       {1, 1, 128},
       {128, 1, 1},
       Major::kM,
       Major::kN},
      {"N 1: B N-major strides read K-major",
       {1, 64, 32},
       {2048, 32, 1},
       {1, 32, 1},
       {32, 1, 1},
       Major::kK,
       Major::kK},
      {"M 1 and K 1: A reads K-major",
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 128},
       {128, 128, 1},
       Major::kK,
       Major::kN},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    auto a = input(g, "A", c.a_dims, kBf16, c.a_strides);
    auto b = input(g, "B", c.b_dims, kBf16, c.b_strides);
    store(g.matmul(a, b), "D", kBf16);
    auto p = analyze_ok(g);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->operands.size(), 2u);
    EXPECT_EQ(p->operands[0].major, c.a_major);
    EXPECT_EQ(p->operands[1].major, c.b_major);
  }
}

struct OutputMajorCase {
  const char* name;
  Dimv dims, strides;
  Major major;
};

TEST(Analyze, OutputMajorsWithDegenerateExtents) {
  const std::vector<OutputMajorCase> cases = {
      {"N-major", {1, 64, 128}, {8192, 128, 1}, Major::kN},
      {"M-major", {1, 64, 128}, {8192, 1, 64}, Major::kM},
      {"M 1 with M-major strides reads N-major", {1, 1, 128}, {128, 1, 1}, Major::kN},
      {"N 1 with N-major strides reads M-major", {1, 64, 1}, {64, 1, 1}, Major::kM},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    auto a = input(g, "A", {1, c.dims[1], 64}, kBf16);
    auto b = input(g, "B", {1, 64, c.dims[2]}, kBf16);
    auto d = g.matmul(a, b);
    store(d, "D", kBf16);
    d->set_stride(c.strides);
    auto p = analyze_ok(g);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->outputs.size(), 1u);
    EXPECT_EQ(p->outputs[0].major, c.major);
  }
}

TEST(Analyze, PrunesNodesThatReachNoOutput) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16);
  auto d = g.matmul(a, b);
  store(d, "D", kBf16);
  // Dead: a matmul of another shape (a live one would be gemm_shape_mismatch), a pointwise
  // reading an aux the problem cannot broadcast (a live one would be aux_shape), and a
  // reduction that is not an output (a live one would be tap_consumed).
  auto b_dead = input(g, "B_dead", {1, 64, 32}, kBf16);
  auto dead_acc = g.matmul(a, b_dead);
  auto wide = input(g, "wide", {4, 64, 32}, kBf16);
  auto dead_pw = g.pointwise(dead_acc, wide, op(PointwiseMode::kAdd));
  auto dead_r = g.reduction(dead_pw, ReductionAttributes());
  dead_r->set_dim({1, 64, 1});
  auto dead_tap = g.reduction(d, ReductionAttributes());
  dead_tap->set_dim({1, 1, 128});

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(buffer_names(*p), (std::vector<std::string>{"A", "B", "D"}));
  EXPECT_EQ(p->gemms.size(), 1u);
  EXPECT_EQ(p->operands.size(), 2u);
  EXPECT_EQ(p->epilogue.size(), 1u);
  EXPECT_TRUE(p->aux.empty());
  EXPECT_TRUE(p->taps.empty());
  EXPECT_EQ(p->problem, (ProblemShape{1, 64, 128, 64}));
}

TEST(Analyze, KeepsANonOutputIntermediateThatFeedsAnOutput) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16);
  auto bias = input(g, "bias", {1, 1, 128}, kBf16);
  auto x = g.pointwise(g.matmul(a, b), bias, op(PointwiseMode::kAdd));
  auto y = g.pointwise(x, op(PointwiseMode::kRelu));
  store(g.pointwise(y, op(PointwiseMode::kSquare)), "D", kBf16);

  auto p = analyze_ok(g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->epilogue.size(), 5u);
  EXPECT_EQ(p->aux.size(), 1u);
}

TEST(Analyze, RefusesAGraphThatWasNotValidated) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, kBf16);
  auto b = input(g, "B", {1, 64, 128}, kBf16);
  store(g.matmul(a, b), "D", kBf16);
  auto before = analyze(g);
  ASSERT_FALSE(before);
  EXPECT_EQ(before.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(before.status().message().find("validate"), std::string::npos);

  ASSERT_TRUE(g.validate());
  EXPECT_TRUE(analyze(g));
  // A node added after validate() makes the graph unvalidated again.
  g.pointwise(a, op(PointwiseMode::kRelu));
  auto after = analyze(g);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace fusion
}  // namespace fusedgemm
