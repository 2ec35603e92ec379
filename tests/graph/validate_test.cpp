// Graph::validate: every bad-graph class is refused with its check id, the tensor's name and
// the numbers; every flavor of DESIGN.md section 5 is accepted with the inferred facts.
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusedgemm/graph.h"

using namespace fusedgemm;

namespace {

// The GEMM most tests start from: A [2, 64, 32] @ B [2, 32, 48] -> C [2, 64, 48].
constexpr std::int64_t kBatch = 2;
constexpr std::int64_t kM = 64;
constexpr std::int64_t kK = 32;
constexpr std::int64_t kN = 48;

using Dimv = std::vector<std::int64_t>;

Tensor input(Graph& g, const std::string& name, Dimv dims, DataType type = DataType::kBFloat16,
             Dimv strides = {}) {
  TensorAttributes t;
  t.set_name(name).set_dim(std::move(dims)).set_data_type(type);
  if (!strides.empty()) t.set_stride(std::move(strides));
  return g.tensor(t);
}

// A bare handle for Graph::add_node, the way a reader of a serialized graph makes one.
Tensor loose(const std::string& name) {
  auto t = std::make_shared<TensorAttributes>();
  t->set_name(name);
  return t;
}

struct Gemm {
  Tensor a, b, c;
};

Gemm gemm(Graph& g, DataType type = DataType::kBFloat16) {
  Gemm m;
  m.a = input(g, "A", {kBatch, kM, kK}, type);
  m.b = input(g, "B", {kBatch, kK, kN}, type, {kK * kN, 1, kK});
  m.c = g.matmul(m.a, m.b, MatmulAttributes().set_name("gemm"));
  return m;
}

PointwiseAttributes pw(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

std::vector<std::string> lines_of(const Status& s) {
  std::vector<std::string> lines;
  std::istringstream in(s.message());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The status is kInvalidGraph and one of its lines starts with `head`, has the house
// shape's "; legal: " and contains every fragment.
testing::AssertionResult refused_with(const Status& s, const std::string& head,
                                      const std::vector<std::string>& fragments) {
  if (s.code() != ErrorCode::kInvalidGraph) {
    return testing::AssertionFailure() << "code " << to_string(s.code()) << ": " << s.message();
  }
  for (const auto& line : lines_of(s)) {
    if (!line.starts_with(head)) continue;
    if (line.find("; legal: ") == std::string::npos) {
      return testing::AssertionFailure() << "no '; legal: ' in: " << line;
    }
    for (const auto& f : fragments) {
      if (line.find(f) == std::string::npos) {
        return testing::AssertionFailure() << "'" << f << "' missing from: " << line;
      }
    }
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "no line starts with '" << head << "' in:\n" << s.message();
}

testing::AssertionResult refused(const Status& s, const std::string& check,
                                 const std::string& tensor,
                                 const std::vector<std::string>& fragments) {
  return refused_with(s, check + ": tensor '" + tensor + "': ", fragments);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Refusals: one test per bad-graph class.

TEST(GraphValidate, RefusesRankTwoDims) {
  Graph g;
  auto a = input(g, "A", {kM, kK});
  auto b = input(g, "B", {kBatch, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_rank", "A", {"dims [64, 32]", "rank 2"}));
  EXPECT_FALSE(g.is_validated());
}

// Issue 10: strides this large passed validate and then wrapped byte counts downstream
// (a heap overflow in `fusedgemm run`); a span past any address space is refused here.
TEST(GraphValidate, RefusesASpanPastTheAddressSpace) {
  struct Case {
    Dimv strides;
    std::string seen;
  };
  const std::vector<Case> cases = {
      {{1, 1, 9078122083518480}, "spans 1152921504606847216 elements"},
      {{1, std::numeric_limits<std::int64_t>::max(), 1}, "spans more than 2^63 elements"},
      {{1, 1, std::numeric_limits<std::int64_t>::max()}, "spans more than 2^63 elements"}};
  for (const auto& c : cases) {
    Graph g;
    auto a = input(g, "A", {1, 256, 128}, DataType::kBFloat16, c.strides);
    auto b = input(g, "B", {1, 128, kN});
    g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
    EXPECT_TRUE(refused(g.validate(), "tensor_span", "A", {c.seen, "at most 281474976710656"}));
  }
  // A span below the limit is a layout validate accepts.
  Graph g;
  auto a = input(g, "A", {1, kM, kK}, DataType::kBFloat16, {1, std::int64_t{1} << 32, 1});
  auto b = input(g, "B", {1, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(g.validate()) << g.validate().message();
}

// Issue 10: the size limits are rules with names, checked before any per-node work.
TEST(GraphValidate, RefusesMoreNodesThanTheLimit) {
  Graph g;
  auto t = g.tensor(
      TensorAttributes().set_name("A").set_dim({1, 1, 1}).set_data_type(DataType::kFloat32));
  for (std::size_t i = 0; i <= kMaxGraphNodes; ++i) {
    g.add_node(
        {NodeKind::kPointwise, "", {t}, {t}, PointwiseAttributes().set_mode(PointwiseMode::kAbs)});
  }
  const Status s = g.validate();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(),
            "graph_node_count: the graph has 1048577 nodes; legal: at most 1048576 (2^20)");
}

TEST(GraphValidate, RefusesStridesOfAnotherRank) {
  Graph g;
  auto a = input(g, "A", {kBatch, kM, kK}, DataType::kBFloat16, {kM * kK, kK, 1, 1});
  auto b = input(g, "B", {kBatch, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_rank", "A", {"strides [2048, 32, 1, 1]", "rank 4"}));
}

TEST(GraphValidate, RefusesRankOfReductionOutput) {
  Graph g;
  auto m = gemm(g);
  g.reduction(m.c, ReductionAttributes())->set_dim({kBatch, kM}).set_output(true).set_name("t");
  EXPECT_TRUE(refused(g.validate(), "tensor_rank", "t", {"dims [2, 64]", "rank 2"}));
}

TEST(GraphValidate, RefusesKMismatch) {
  Graph g;
  auto a = input(g, "A", {1, kM, kK});
  auto b = input(g, "B", {1, 24, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "matmul_k_mismatch", "B",
                      {"K = 24", "dims [1, 24, 48]", "'A' has K = 32"}));
}

TEST(GraphValidate, RefusesOperandBatchNeitherOneNorB) {
  Graph g;
  auto a = input(g, "A", {2, kM, kK});
  auto b = input(g, "B", {3, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "batch_mismatch", "B", {"batch 3", "'A' has batch 2"}));
}

TEST(GraphValidate, RefusesAuxBatchNeitherOneNorB) {
  Graph g;
  auto m = gemm(g);
  auto aux = input(g, "residual", {3, kM, kN});
  g.pointwise(m.c, aux, pw(PointwiseMode::kAdd))
      ->set_output(true)
      .set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "pointwise_broadcast", "residual",
                      {"dims [3, 64, 48]", "to [2, 64, 48]", "axis 0: 3 vs 2"}));
}

// Table: an aux that fits no broadcast mode is the tensor named, whichever port it is on
// and whether it is smaller or larger than the GEMM result.
TEST(GraphValidate, RefusesNonBroadcastableAux) {
  struct Case {
    Dimv aux;
    bool aux_first;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{1, 1, 24}, false, "axis 2: 24 vs 48"},       {{1, 1, 96}, false, "axis 2: 96 vs 48"},
      {{1, 1, 96}, true, "axis 2: 96 vs 48"},        {{kBatch, 63, 1}, false, "axis 1: 63 vs 64"},
      {{kBatch, kN, kM}, false, "axis 1: 48 vs 64"},
  };
  for (const auto& c : cases) {
    Graph g;
    auto m = gemm(g);
    auto bias = input(g, "bias", c.aux);
    auto d = c.aux_first ? g.pointwise(bias, m.c, pw(PointwiseMode::kSub))
                         : g.pointwise(m.c, bias, pw(PointwiseMode::kSub));
    d->set_output(true).set_data_type(DataType::kBFloat16);
    const Status s = g.validate();
    EXPECT_TRUE(refused(s, "pointwise_broadcast", "bias", {c.fragment}));
    EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
  }
}

TEST(GraphValidate, RefusesReductionThatReducesNothing) {
  Graph g;
  auto m = gemm(g);
  g.reduction(m.c, ReductionAttributes().set_mode(ReductionMode::kMax))
      ->set_dim({kBatch, kM, kN})
      .set_output(true)
      .set_name("tap");
  EXPECT_TRUE(refused(g.validate(), "reduction_reduces_nothing", "tap",
                      {"dims [2, 64, 48]", "input dims [2, 64, 48]"}));
}

// A column tap at M = 1 reduces its axis of one row: the graph of a decode-size call (what
// `fusedgemm run --m 1` and the reference build) validates.
TEST(GraphValidate, AReductionMayReduceAnAxisOfExtentOne) {
  Graph g;
  auto a = input(g, "A", {kBatch, 1, kK}, DataType::kBFloat16);
  auto b = input(g, "B", {kBatch, kK, kN}, DataType::kBFloat16, {kK * kN, 1, kK});
  g.reduction(g.matmul(a, b), ReductionAttributes().set_mode(ReductionMode::kMax))
      ->set_dim({kBatch, 1, kN})
      .set_output(true)
      .set_name("tap");
  EXPECT_TRUE(g.validate());
}

TEST(GraphValidate, RefusesReductionDimsNeitherOneNorInput) {
  Graph g;
  auto m = gemm(g);
  g.reduction(m.c, ReductionAttributes())
      ->set_dim({kBatch, kM, 7})
      .set_output(true)
      .set_name("tap");
  EXPECT_TRUE(refused(g.validate(), "reduction_dims", "tap",
                      {"dims [2, 64, 7]", "axis 2: 7", "or 48 (kept)"}));
}

TEST(GraphValidate, RefusesReductionDimsMissing) {
  Graph g;
  auto m = gemm(g);
  g.reduction(m.c, ReductionAttributes())->set_output(true).set_name("tap");
  EXPECT_TRUE(refused(g.validate(), "reduction_dims_missing", "tap", {"[2, 64, 48]"}));
}

TEST(GraphValidate, RefusesGraphInputMarkedOutput) {
  Graph g;
  auto m = gemm(g);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  m.a->set_output(true);
  EXPECT_TRUE(refused(g.validate(), "output_not_computed", "A", {"0 producers"}));
}

TEST(GraphValidate, RefusesUnusedInputMarkedOutput) {
  Graph g;
  auto m = gemm(g);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  input(g, "stray", {1, 1, 1})->set_output(true);
  const Status s = g.validate();
  EXPECT_TRUE(refused(s, "output_not_computed", "stray", {"0 producers"}));
  EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
}

TEST(GraphValidate, RefusesCycle) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  auto y = loose("y");
  g.add_node({NodeKind::kPointwise, "add", {m.c, y}, {x}, pw(PointwiseMode::kAdd)});
  g.add_node({NodeKind::kPointwise, "relu", {x}, {y}, pw(PointwiseMode::kRelu)});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "graph_cycle", "y",
                      {"node 'add' reads it", "2 node(s)", "'add' -> 'relu' -> 'add'"}));
}

// The first unordered node only reads the cycle; the message still names a node on it.
TEST(GraphValidate, RefusesCycleNamingANodeOnIt) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  auto y = loose("y");
  auto z = loose("z");
  auto w = loose("w");
  g.add_node({NodeKind::kPointwise, "downstream", {w}, {z}, pw(PointwiseMode::kExp)});
  g.add_node({NodeKind::kPointwise, "p", {m.c, y}, {x}, pw(PointwiseMode::kMul)});
  g.add_node({NodeKind::kPointwise, "q", {x}, {w}, pw(PointwiseMode::kNeg)});
  g.add_node({NodeKind::kPointwise, "r", {w}, {y}, pw(PointwiseMode::kAbs)});
  z->set_output(true).set_data_type(DataType::kBFloat16);
  const Status s = g.validate();
  EXPECT_TRUE(refused(s, "graph_cycle", "x",
                      {"node 'q' reads it", "3 node(s)", "'q' -> 'r' -> 'p' -> 'q'"}));
  EXPECT_EQ(s.message().find("downstream"), std::string::npos) << s.message();
}

TEST(GraphValidate, RefusesNodeReadingItsOwnResult) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  g.add_node({NodeKind::kPointwise, "self", {m.c, x}, {x}, pw(PointwiseMode::kMax)});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "graph_cycle", "x", {"1 node(s)", "'self' -> 'self'"}));
}

TEST(GraphValidate, RefusesTwoProducersOfOneTensor) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  g.add_node({NodeKind::kPointwise, "first", {m.c}, {x}, pw(PointwiseMode::kRelu)});
  g.add_node({NodeKind::kPointwise, "second", {m.c}, {x}, pw(PointwiseMode::kTanh)});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_two_producers", "x",
                      {"node 'first' and node 'second'", "2 producers"}));
}

// An unnamed tensor with two producers is named after the first before it is reported.
TEST(GraphValidate, RefusesTwoProducersOfUnnamedTensor) {
  Graph g;
  auto m = gemm(g);
  auto x = std::make_shared<TensorAttributes>();
  g.add_node({NodeKind::kPointwise, "first", {m.c}, {x}, pw(PointwiseMode::kRelu)});
  g.add_node({NodeKind::kPointwise, "second", {m.c}, {x}, pw(PointwiseMode::kTanh)});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_two_producers", "first::OUT", {"2 producers"}));
}

TEST(GraphValidate, RefusesDuplicateUid) {
  Graph g;
  auto m = gemm(g);
  m.a->set_uid(7);
  m.b->set_uid(7);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_duplicate_uid", "B", {"uid 7", "tensor 'A'"}));
}

TEST(GraphValidate, RefusesDuplicateName) {
  Graph g;
  auto m = gemm(g);
  m.a->set_uid(11);
  m.b->set_name("A").set_uid(12);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_duplicate_name", "A", {"uid 11", "uid 12"}));
}

// Table: ops that have no meaning for a data type.
TEST(GraphValidate, RefusesOpForDataType) {
  struct Case {
    std::string what;
    std::function<void(Graph&)> build;
    std::string check, tensor;
    std::vector<std::string> fragments;
  };
  auto matmul_of = [](DataType ta, DataType tb) {
    return [=](Graph& g) {
      auto a = input(g, "A", {1, kM, kK}, ta);
      auto b = input(g, "B", {1, kK, kN}, tb);
      g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
    };
  };
  auto tap_of = [](DataType operands, ReductionMode mode, DataType tap) {
    return [=](Graph& g) {
      auto m = gemm(g, operands);
      g.reduction(m.c, ReductionAttributes().set_mode(mode))
          ->set_dim({kBatch, kM, 1})
          .set_data_type(tap)
          .set_output(true)
          .set_name("tap");
    };
  };
  const std::vector<Case> cases = {
      {"matmul e8m0",
       matmul_of(DataType::kE8M0, DataType::kBFloat16),
       "matmul_data_type",
       "A",
       {"data type e8m0"}},
      {"matmul int32",
       matmul_of(DataType::kBFloat16, DataType::kInt32),
       "matmul_data_type",
       "B",
       {"data type int32"}},
      {"int8 x bf16",
       matmul_of(DataType::kInt8, DataType::kBFloat16),
       "matmul_data_type",
       "B",
       {"multiplies int8 ('A') by bf16"}},
      {"pointwise e8m0",
       [](Graph& g) {
         auto m = gemm(g);
         auto s = input(g, "s", {kBatch, kM, 1}, DataType::kE8M0);
         g.pointwise(m.c, s, pw(PointwiseMode::kMul))
             ->set_output(true)
             .set_data_type(DataType::kBFloat16);
       },
       "pointwise_data_type",
       "s",
       {"pointwise mul", "data type e8m0"}},
      {"avg into int32",
       tap_of(DataType::kInt8, ReductionMode::kAvg, DataType::kInt32),
       "reduction_data_type",
       "tap",
       {"reduction avg of int32 input", "into data type int32"}},
      {"norm2 into int32",
       tap_of(DataType::kInt8, ReductionMode::kNorm2, DataType::kInt32),
       "reduction_data_type",
       "tap",
       {"reduction norm2", "into data type int32"}},
      {"float add into int32",
       tap_of(DataType::kBFloat16, ReductionMode::kAdd, DataType::kInt32),
       "reduction_data_type",
       "tap",
       {"add of fp32 input", "into data type int32"}},
      {"tap into bf16",
       tap_of(DataType::kBFloat16, ReductionMode::kMax, DataType::kBFloat16),
       "reduction_data_type",
       "tap",
       {"into data type bf16"}},
  };
  for (const auto& c : cases) {
    Graph g;
    c.build(g);
    EXPECT_TRUE(refused(g.validate(), c.check, c.tensor, c.fragments)) << c.what;
  }
}

TEST(GraphValidate, ReportsARepeatedPointwiseInputOnce) {
  Graph g;
  auto m = gemm(g);
  auto s = input(g, "s", {kBatch, kM, 3}, DataType::kE8M0);
  auto sq = g.pointwise(s, s, pw(PointwiseMode::kMul));
  g.pointwise(m.c, sq, pw(PointwiseMode::kAdd))
      ->set_output(true)
      .set_data_type(DataType::kBFloat16);
  const Status st = g.validate();
  EXPECT_TRUE(refused(st, "pointwise_data_type", "s", {"data type e8m0"}));
  EXPECT_EQ(lines_of(st).size(), 1u) << st.message();
}

TEST(GraphValidate, AcceptsIntegerTapsOfIntegerGemm) {
  for (auto mode : {ReductionMode::kAdd, ReductionMode::kMax, ReductionMode::kAmax}) {
    Graph g;
    auto m = gemm(g, DataType::kInt8);
    auto tap = g.reduction(m.c, ReductionAttributes().set_mode(mode));
    tap->set_dim({kBatch, kM, 1}).set_data_type(DataType::kInt32).set_output(true);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    EXPECT_EQ(m.c->data_type(), DataType::kInt32);
  }
}

// Table: layouts where two index tuples reach one element.
TEST(GraphValidate, RefusesAliasingStrides) {
  struct Case {
    Dimv dims, strides;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{1, 4, 4}, {16, 2, 1}, "layout [1, 4, 4]:[16, 2, 1] has axis 1 (extent 4, stride 2)"},
      {{1, 4, 4}, {16, 0, 1}, "axis 1 (extent 4, stride 0)"},
      {{2, 4, 4}, {0, 4, 1}, "axis 0 (extent 2, stride 0)"},
      {{1, 4, 4}, {16, 1, 1}, "axis 2 (extent 4, stride 1)"},
      {{2, 4, 4}, {8, 4, 1}, "axis 0 (extent 2, stride 8)"},
  };
  for (const auto& c : cases) {
    Graph g;
    auto x = input(g, "X", c.dims, DataType::kBFloat16, c.strides);
    auto w = input(g, "W", {c.dims[0], c.dims[2], 8});
    g.matmul(x, w)->set_output(true).set_data_type(DataType::kBFloat16);
    EXPECT_TRUE(refused(g.validate(), "tensor_aliasing", "X", {c.fragment}));
  }
}

TEST(GraphValidate, RefusesAliasingOutputStrides) {
  Graph g;
  auto m = gemm(g);
  m.c->set_stride({kM * kN, 1, 1}).set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_aliasing", "gemm::OUT",
                      {"[2, 64, 48]:[3072, 1, 1]", "stride 1"}));
}

TEST(GraphValidate, RefusesNonPositiveExtents) {
  struct Case {
    Dimv dims;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{1, 0, kK}, "extent 0 on axis 1"},
      {{1, kM, -3}, "extent -3 on axis 2"},
      {{-1, kM, kK}, "extent -1 on axis 0"},
  };
  for (const auto& c : cases) {
    Graph g;
    auto a = input(g, "A", c.dims);
    auto b = input(g, "B", {1, kK, kN});
    g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
    const Status s = g.validate();
    EXPECT_TRUE(refused(s, "tensor_extent", "A", {c.fragment}));
    EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
  }
}

TEST(GraphValidate, RefusesNegativeStride) {
  Graph g;
  auto a = input(g, "A", {1, kM, kK}, DataType::kBFloat16, {kM * kK, kK, -1});
  auto b = input(g, "B", {1, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_stride", "A",
                      {"strides [2048, 32, -1]", "stride -1 on axis 2"}));
}

TEST(GraphValidate, RefusesInputWithoutDataType) {
  Graph g;
  auto a = g.tensor(TensorAttributes().set_name("A").set_dim({1, kM, kK}));
  auto b = input(g, "B", {1, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  const Status s = g.validate();
  EXPECT_TRUE(refused(s, "tensor_data_type_missing", "A", {"input has no data type"}));
  EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
}

TEST(GraphValidate, RefusesInputWithoutDims) {
  Graph g;
  auto a = g.tensor(TensorAttributes().set_name("A").set_data_type(DataType::kBFloat16));
  auto b = input(g, "B", {1, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_dims_missing", "A", {"dims []"}));
}

TEST(GraphValidate, RefusesOutputWithoutDataType) {
  for (bool pointwise : {false, true}) {
    Graph g;
    auto m = gemm(g);
    auto out = pointwise ? g.pointwise(m.c, pw(PointwiseMode::kRelu)) : m.c;
    out->set_output(true).set_name("D");
    EXPECT_TRUE(refused(g.validate(), "tensor_data_type_missing", "D", {"output"}));
  }
}

TEST(GraphValidate, RefusesPointwiseArityMismatch) {
  struct Case {
    PointwiseMode mode;
    std::size_t inputs;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {PointwiseMode::kAdd, 1, "(pointwise add) has 1 inputs and 1 outputs; legal: 2 inputs"},
      {PointwiseMode::kRelu, 2, "(pointwise relu) has 2 inputs and 1 outputs; legal: 1 inputs"},
      {PointwiseMode::kSelect, 2, "(pointwise select) has 2 inputs"},
  };
  for (const auto& c : cases) {
    Graph g;
    auto m = gemm(g);
    auto x = loose("x");
    g.add_node({NodeKind::kPointwise, "p", std::vector<Tensor>(c.inputs, m.c), {x}, pw(c.mode)});
    x->set_output(true).set_data_type(DataType::kBFloat16);
    EXPECT_TRUE(refused(g.validate(), "node_arity", "x", {"node 'p'", c.fragment}));
  }
}

TEST(GraphValidate, RefusesMatmulWithThreeInputs) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  g.add_node({NodeKind::kMatmul, "mm", {m.a, m.b, m.b}, {x}, MatmulAttributes()});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "node_arity", "x", {"has 3 inputs", "legal: 2 inputs"}));
}

TEST(GraphValidate, RefusesNullHandle) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  g.add_node({NodeKind::kPointwise, "p", {m.c, nullptr}, {x}, pw(PointwiseMode::kAdd)});
  x->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "node_null_tensor", "x", {"input 1 (IN_1)"}));
}

TEST(GraphValidate, RefusesAttributesOfAnotherOp) {
  Graph g;
  auto m = gemm(g);
  auto x = loose("x");
  g.add_node({NodeKind::kReduction, "r", {m.c}, {x}, MatmulAttributes()});
  x->set_dim({kBatch, kM, 1}).set_output(true);
  EXPECT_TRUE(refused(g.validate(), "node_attributes", "x", {"reduction node 'r'"}));
}

TEST(GraphValidate, RefusesUnknownPointwiseMode) {
  Graph g;
  auto m = gemm(g);
  g.pointwise(m.c, pw(static_cast<PointwiseMode>(200)))
      ->set_output(true)
      .set_name("x")
      .set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "pointwise_mode", "x", {"mode 200"}));
}

// Block-scaled fp8 operands: 1x128 scales for A [1, 64, 256], 128x128 for B [1, 256, 256].
struct BlockScaled {
  Tensor xa, sa, xb, sb, a, b, c;
};

BlockScaled block_scaled(Graph& g, DataType sa_type = DataType::kFloat32, Dimv sa_dims = {},
                         DataType xa_type = DataType::kFp8E4M3) {
  BlockScaled s;
  s.xa = input(g, "xa", {1, kM, 256}, xa_type);
  s.sa = input(g, "sa", sa_dims.empty() ? Dimv{1, kM, 2} : sa_dims, sa_type);
  s.xb = input(g, "xb", {1, 256, 256}, DataType::kFp8E4M3, {256 * 256, 1, 256});
  s.sb = input(g, "sb", {1, 2, 2}, DataType::kFloat32);
  s.a =
      g.block_scale_dequantize(s.xa, s.sa, BlockScaleDequantizeAttributes().set_block_size(1, 128));
  s.b = g.block_scale_dequantize(s.xb, s.sb,
                                 BlockScaleDequantizeAttributes().set_block_size(128, 128));
  s.c = g.matmul(s.a, s.b);
  s.c->set_output(true).set_data_type(DataType::kBFloat16);
  return s;
}

TEST(GraphValidate, RefusesBlockScaleDimsAndTypes) {
  {
    Graph g;
    block_scaled(g, DataType::kFloat32, {1, kM, 3});
    EXPECT_TRUE(refused(g.validate(), "block_scale_dims", "sa",
                        {"has dims [1, 64, 3]", "legal: [1, 64, 2]"}));
  }
  {
    Graph g;
    block_scaled(g, DataType::kBFloat16);
    EXPECT_TRUE(refused(g.validate(), "block_scale_data_type", "sa", {"data type bf16"}));
  }
  {
    Graph g;
    block_scaled(g, DataType::kFloat32, {}, DataType::kBFloat16);
    EXPECT_TRUE(
        refused(g.validate(), "block_scale_data_type", "xa", {"dequantizes data type bf16"}));
  }
  {
    Graph g;
    auto x = input(g, "x", {1, kM, 256}, DataType::kFp8E4M3);
    auto s = input(g, "s", {1, kM, 2}, DataType::kFloat32);
    auto a =
        g.block_scale_dequantize(x, s, BlockScaleDequantizeAttributes().set_block_size(0, 128));
    g.matmul(a, input(g, "B", {1, 256, kN}))->set_output(true).set_data_type(DataType::kBFloat16);
    EXPECT_TRUE(refused(g.validate(), "block_scale_block_size", "x", {"block size 0x128"}));
  }
}

TEST(GraphValidate, RefusesBlockScaleQuantizeTypesAndDims) {
  struct Case {
    DataType y_type;
    Dimv scale_dims;
    DataType scale_type;
    std::string check, tensor, fragment;
  };
  const std::vector<Case> cases = {
      {DataType::kBFloat16,
       {},
       DataType::kNotSet,
       "block_scale_data_type",
       "y",
       "quantizes into data type bf16"},
      {DataType::kNotSet,
       {},
       DataType::kNotSet,
       "tensor_data_type_missing",
       "y",
       "block_scale_quantize 'q'"},
      {DataType::kFp8E4M3,
       {kBatch, kM, 2},
       DataType::kNotSet,
       "block_scale_dims",
       "ys",
       "has dims [2, 64, 2]; legal: [2, 64, 1]"},
      {DataType::kFp8E4M3,
       {},
       DataType::kBFloat16,
       "block_scale_data_type",
       "ys",
       "has data type bf16"},
  };
  for (const auto& c : cases) {
    Graph g;
    auto m = gemm(g);
    auto [y, ys] = g.block_scale_quantize(m.c, BlockScaleQuantizeAttributes().set_name("q"));
    y->set_name("y").set_output(true);
    ys->set_name("ys").set_output(true);
    if (c.y_type != DataType::kNotSet) y->set_data_type(c.y_type);
    if (c.scale_type != DataType::kNotSet) ys->set_data_type(c.scale_type);
    if (!c.scale_dims.empty()) ys->set_dim(c.scale_dims);
    const Status s = g.validate();
    EXPECT_TRUE(refused(s, c.check, c.tensor, {c.fragment}));
    EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
  }
}

TEST(GraphValidate, RefusesGraphWithoutOutput) {
  Graph g;
  g.set_name("no_out");
  gemm(g);
  EXPECT_TRUE(refused_with(g.validate(),
                           "graph_no_output: graph 'no_out' has 0 tensors marked as output", {}));
}

TEST(GraphValidate, RefusesEmptyGraph) {
  Graph g;
  g.set_name("empty");
  input(g, "A", {1, kM, kK})->set_output(true);
  const Status s = g.validate();
  EXPECT_TRUE(refused_with(s, "graph_empty: graph 'empty' has 0 nodes", {}));
  EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
  EXPECT_FALSE(g.is_validated());
}

TEST(GraphValidate, RefusesDeclaredDimsThatDisagreeWithInference) {
  Graph g;
  auto m = gemm(g);
  m.c->set_dim({kBatch, kM, 47}).set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_dims_mismatch", "gemm::OUT",
                      {"declared dims [2, 64, 47]", "computes [2, 64, 48]"}));
}

// ---------------------------------------------------------------------------------------
// How errors are reported.

TEST(GraphValidate, ReportsEveryIndependentErrorOnItsOwnLine) {
  Graph g;
  auto m = gemm(g);
  m.a->set_uid(5);
  m.b->set_uid(5);
  auto bias = input(g, "bias", {1, 1, 24});
  g.pointwise(m.c, bias, pw(PointwiseMode::kAdd))
      ->set_output(true)
      .set_name("D")
      .set_data_type(DataType::kBFloat16);
  g.reduction(m.c, ReductionAttributes())->set_output(true).set_name("tap");
  g.pointwise(m.c, pw(PointwiseMode::kGeluErf))->set_output(true).set_name("E");
  const Status s = g.validate();
  EXPECT_TRUE(refused(s, "tensor_duplicate_uid", "B", {"uid 5"}));
  EXPECT_TRUE(refused(s, "pointwise_broadcast", "bias", {"axis 2: 24 vs 48"}));
  EXPECT_TRUE(refused(s, "reduction_dims_missing", "tap", {}));
  EXPECT_TRUE(refused(s, "tensor_data_type_missing", "E", {}));
  EXPECT_EQ(lines_of(s).size(), 4u) << s.message();
}

// A bad input is reported once; nothing downstream of it is reported again, including a
// tap whose data type would have been inferred and outputs with declared dims.
TEST(GraphValidate, DoesNotCascadeFromABadInput) {
  Graph g;
  auto a = input(g, "A", {kM, kK});  // rank 2
  auto b = input(g, "B", {kBatch, kK, kN});
  auto c = g.matmul(a, b);
  auto bias = input(g, "bias", {1, 1, kN});
  auto d = g.pointwise(g.pointwise(c, bias, pw(PointwiseMode::kAdd)), pw(PointwiseMode::kRelu));
  d->set_output(true).set_dim({kBatch, kM, kN}).set_data_type(DataType::kBFloat16);
  g.reduction(d, ReductionAttributes())->set_dim({kBatch, kM, 1}).set_output(true);
  auto [y, ys] = g.block_scale_quantize(d, BlockScaleQuantizeAttributes());
  y->set_data_type(DataType::kFp8E4M3).set_output(true);
  ys->set_output(true);
  auto c2 = g.matmul(a, b);  // a second reader of the bad input
  c2->set_output(true).set_data_type(DataType::kFloat32);
  const Status s = g.validate();
  EXPECT_TRUE(refused(s, "tensor_rank", "A", {"rank 2"}));
  EXPECT_EQ(lines_of(s).size(), 1u) << s.message();
}

TEST(GraphValidate, NamesUnnamedTensorsAfterNodeAndPort) {
  Graph g;
  auto a = g.tensor(TensorAttributes().set_dim({1, kM, kK}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(TensorAttributes().set_dim({1, kK, kN}).set_data_type(DataType::kBFloat16));
  auto bias = g.tensor(TensorAttributes().set_dim({1, 1, kN}).set_data_type(DataType::kBFloat16));
  auto c = g.matmul(a, b);
  auto d = g.pointwise(c, bias, pw(PointwiseMode::kAdd));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  auto [y, ys] = g.block_scale_quantize(d, BlockScaleQuantizeAttributes());
  y->set_output(true).set_data_type(DataType::kFp8E4M3);
  ys->set_output(true);
  auto stray = g.tensor(TensorAttributes().set_dim({1, 1, 1}));
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(a->name(), "matmul_0::A");
  EXPECT_EQ(b->name(), "matmul_0::B");
  EXPECT_EQ(c->name(), "matmul_0::OUT");
  EXPECT_EQ(bias->name(), "pointwise_1::IN_1");
  EXPECT_EQ(d->name(), "pointwise_1::OUT");
  EXPECT_EQ(y->name(), "block_scale_quantize_2::Y");
  EXPECT_EQ(ys->name(), "block_scale_quantize_2::SCALE");
  EXPECT_EQ(stray->name(), "tensor_7");  // its index in creation order
  EXPECT_EQ(g.nodes()[0].name, "matmul_0");
}

TEST(GraphValidate, NamesUnnamedInputInItsMessage) {
  Graph g;
  auto a = g.tensor(TensorAttributes().set_dim({kM, kK}).set_data_type(DataType::kBFloat16));
  auto b = input(g, "B", {1, kK, kN});
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  EXPECT_TRUE(refused(g.validate(), "tensor_rank", "matmul_0::A", {"dims [64, 32]"}));
}

// Names chosen for unnamed nodes and tensors step around the names the caller chose.
TEST(GraphValidate, ChosenNamesAvoidUserNames) {
  Graph g;
  auto m = gemm(g);  // a node named "gemm"
  auto c2 = g.matmul(m.a, m.b, MatmulAttributes().set_name("matmul_2"));
  auto c3 = g.matmul(m.a, m.b);  // index 2: "matmul_2" is taken
  auto taken = input(g, "matmul_2_1::OUT", {1, 1, 1}, DataType::kFloat32);
  auto d = g.pointwise(g.pointwise(m.c, c2, pw(PointwiseMode::kAdd)), c3, pw(PointwiseMode::kAdd));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(c2->name(), "matmul_2::OUT");
  EXPECT_EQ(c3->name(), "matmul_2_1::OUT_1");
  std::set<std::string> names;
  for (const auto& t : g.tensors()) EXPECT_TRUE(names.insert(t->name()).second) << t->name();
  std::set<std::string> node_names;
  for (const auto& n : g.nodes()) EXPECT_TRUE(node_names.insert(n.name).second) << n.name;
  EXPECT_EQ(taken->name(), "matmul_2_1::OUT");
}

TEST(GraphValidate, AssignedUidsAvoidUserUids) {
  for (std::int64_t user :
       {std::int64_t{1}, std::int64_t{40}, std::numeric_limits<std::int64_t>::max()}) {
    Graph g;
    auto m = gemm(g);
    m.b->set_uid(user);
    auto bias = input(g, "bias", {1, 1, kN});
    bias->set_uid(2);
    g.pointwise(m.c, bias, pw(PointwiseMode::kAdd))
        ->set_output(true)
        .set_data_type(DataType::kBFloat16);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    std::set<std::int64_t> uids;
    for (const auto& t : g.tensors()) {
      ASSERT_TRUE(t->uid().has_value()) << t->name();
      EXPECT_TRUE(uids.insert(*t->uid()).second) << t->name() << " uid " << *t->uid();
      EXPECT_EQ(t->uid_assigned(), t != m.b && t != bias) << t->name();
    }
    EXPECT_EQ(*m.b->uid(), user);
    EXPECT_EQ(*bias->uid(), 2);
  }
}

TEST(GraphValidate, SecondValidateIsStable) {
  Graph g;
  auto m = gemm(g);
  auto d = g.pointwise(m.c, pw(PointwiseMode::kSilu));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  g.reduction(d, ReductionAttributes())->set_dim({1, 1, 1}).set_output(true);
  ASSERT_TRUE(g.validate());
  struct Snapshot {
    std::string name;
    std::optional<std::int64_t> uid;
    Dimv dims, strides;
    DataType type;
    bool operator==(const Snapshot&) const = default;
  };
  auto snapshot = [&] {
    std::vector<Snapshot> s;
    for (const auto& t : g.tensors()) {
      s.push_back({t->name(), t->uid(), t->dims(), t->strides(), t->data_type()});
    }
    for (const auto& n : g.nodes()) s.push_back({n.name, std::nullopt, {}, {}, DataType::kNotSet});
    return s;
  };
  const auto first = snapshot();
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_TRUE(g.is_validated());
  EXPECT_TRUE(first == snapshot());
}

TEST(GraphValidate, ReinfersAfterAnInputChanges) {
  Graph g;
  auto m = gemm(g);
  auto d = g.pointwise(m.c, pw(PointwiseMode::kRelu));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate());
  EXPECT_EQ(d->dims(), (Dimv{kBatch, kM, kN}));
  m.a->set_dim({kBatch, 128, kK});
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(m.a->strides(), (Dimv{128 * kK, kK, 1}));
  EXPECT_EQ(m.c->dims(), (Dimv{kBatch, 128, kN}));
  EXPECT_EQ(m.c->strides(), (Dimv{128 * kN, kN, 1}));
  EXPECT_EQ(d->dims(), (Dimv{kBatch, 128, kN}));
  EXPECT_EQ(m.c->data_type(), DataType::kFloat32);
  // A dims error now: the inferred dims of the last run are gone, not reused.
  m.b->set_dim({kBatch, 16, kN});
  EXPECT_TRUE(refused(g.validate(), "matmul_k_mismatch", "B", {"K = 16"}));
  EXPECT_TRUE(m.c->dims().empty());
}

TEST(GraphValidate, KeepsDeclaredDimsThatAgreeWithInference) {
  Graph g;
  auto m = gemm(g);
  m.c->set_dim({kBatch, kM, kN}).set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  m.a->set_dim({kBatch, 128, kK});
  // The output's declaration and A's new dims disagree: the message names both.
  EXPECT_TRUE(refused(g.validate(), "tensor_dims_mismatch", "gemm::OUT",
                      {"declared dims [2, 64, 48]", "computes [2, 128, 48]",
                       "from A 'A' [2, 128, 32], B 'B' [2, 32, 48]"}));
}

TEST(GraphValidate, DefaultsStridesToRowMajorPacked) {
  Graph g;
  auto m = gemm(g);
  auto tap = g.reduction(m.c, ReductionAttributes());
  tap->set_dim({kBatch, 1, kN}).set_output(true);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(m.a->strides(), (Dimv{kM * kK, kK, 1}));
  EXPECT_EQ(m.b->strides(), (Dimv{kK * kN, 1, kK}));  // declared, kept
  EXPECT_EQ(m.c->strides(), (Dimv{kM * kN, kN, 1}));
  EXPECT_EQ(tap->strides(), (Dimv{kN, kN, 1}));
  EXPECT_EQ(m.c->layout(), Layout::row_major({kBatch, kM, kN}));
}

TEST(GraphValidate, OrdersNodesTopologically) {
  Graph g;
  auto a = input(g, "A", {1, kM, kK});
  auto b = input(g, "B", {1, kK, kN});
  auto c = loose("C");
  auto d = loose("D");
  auto e = loose("E");
  g.add_node({NodeKind::kPointwise, "relu", {d}, {e}, pw(PointwiseMode::kRelu)});
  g.add_node({NodeKind::kPointwise, "neg", {c}, {d}, pw(PointwiseMode::kNeg)});
  g.add_node({NodeKind::kMatmul, "mm", {a, b}, {c}, MatmulAttributes()});
  g.add_node({NodeKind::kPointwise, "exp", {c}, {loose("F")}, pw(PointwiseMode::kExp)});
  e->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_EQ(g.nodes()[0].name, "relu");  // insertion order before validate
  ASSERT_TRUE(g.validate()) << g.validate().message();
  std::vector<std::string> order;
  for (const auto& n : g.nodes()) order.push_back(n.name);
  // Stable: among ready nodes, the one inserted first goes first.
  EXPECT_EQ(order, (std::vector<std::string>{"mm", "neg", "relu", "exp"}));
  EXPECT_EQ(e->dims(), (Dimv{1, kM, kN}));
}

// ---------------------------------------------------------------------------------------
// Valid graphs: the flavors of DESIGN.md section 5.

TEST(GraphValidate, AcceptsPlainGemm) {
  Graph g;
  auto m = gemm(g);
  m.c->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_TRUE(g.is_validated());
  EXPECT_EQ(m.c->dims(), (Dimv{kBatch, kM, kN}));
  EXPECT_EQ(m.c->data_type(), DataType::kBFloat16);
}

// Table: every major combination of A, B and the output.
TEST(GraphValidate, AcceptsEveryMajor) {
  const std::vector<Dimv> a_strides = {{kM * kK, kK, 1}, {kM * kK, 1, kM}};
  const std::vector<Dimv> b_strides = {{kK * kN, 1, kK}, {kK * kN, kN, 1}};
  const std::vector<Dimv> c_strides = {{kM * kN, kN, 1}, {kM * kN, 1, kM}};
  for (const auto& sa : a_strides) {
    for (const auto& sb : b_strides) {
      for (const auto& sc : c_strides) {
        Graph g;
        auto a = input(g, "A", {kBatch, kM, kK}, DataType::kBFloat16, sa);
        auto b = input(g, "B", {kBatch, kK, kN}, DataType::kBFloat16, sb);
        auto c = g.matmul(a, b);
        c->set_stride(sc).set_output(true).set_data_type(DataType::kFloat16);
        ASSERT_TRUE(g.validate()) << g.validate().message();
        EXPECT_EQ(c->strides(), sc);
      }
    }
  }
}

TEST(GraphValidate, AcceptsEpilogueChainOfEveryPointwiseMode) {
  for (PointwiseMode mode : all_pointwise_modes()) {
    Graph g;
    auto m = gemm(g);
    auto aux = input(g, "aux", {1, 1, kN});
    std::vector<Tensor> in{m.c, aux, m.c};
    Node node{NodeKind::kPointwise, "op", {}, {loose("D")}, pw(mode)};
    node.inputs.assign(in.begin(), in.begin() + arity(mode));
    auto d = node.outputs[0];
    g.add_node(std::move(node));
    auto e = g.pointwise(d, pw(PointwiseMode::kIdentity));
    e->set_output(true).set_data_type(DataType::kBFloat16);
    ASSERT_TRUE(g.validate()) << to_string(mode) << ": " << g.validate().message();
    EXPECT_EQ(d->dims(), (Dimv{kBatch, kM, kN})) << to_string(mode);
    EXPECT_EQ(d->data_type(), DataType::kFloat32) << to_string(mode);
  }
}

TEST(GraphValidate, AcceptsAuxInEachBroadcastMode) {
  const std::vector<Dimv> modes = {
      {1, 1, 1},  {kBatch, kM, 1}, {kBatch, 1, kN}, {kBatch, kM, kN},
      {1, kM, 1}, {1, 1, kN},      {1, kM, kN},
  };
  for (const auto& dims : modes) {
    Graph g;
    auto m = gemm(g);
    auto aux = input(g, "aux", dims, DataType::kFloat32);
    auto d = g.pointwise(m.c, aux, pw(PointwiseMode::kAdd));
    d->set_output(true).set_data_type(DataType::kBFloat16);
    ASSERT_TRUE(g.validate()) << to_string(Dims{dims[0], dims[1], dims[2]}) << ": "
                              << g.validate().message();
    EXPECT_EQ(d->dims(), (Dimv{kBatch, kM, kN}));
  }
}

TEST(GraphValidate, AcceptsSeveralOutputs) {
  Graph g;
  auto m = gemm(g);
  m.c->set_output(true).set_data_type(DataType::kFloat32);
  auto d = g.pointwise(m.c, input(g, "bias", {1, 1, kN}), pw(PointwiseMode::kAdd));
  d->set_output(true).set_data_type(DataType::kFp8E4M3).set_stride({kM * kN, 1, kM});
  auto e = g.pointwise(d, pw(PointwiseMode::kGeluTanh));
  e->set_output(true).set_data_type(DataType::kInt8);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(m.c->data_type(), DataType::kFloat32);
  EXPECT_EQ(d->data_type(), DataType::kFp8E4M3);
  EXPECT_EQ(e->data_type(), DataType::kInt8);
  EXPECT_EQ(e->dims(), (Dimv{kBatch, kM, kN}));
}

TEST(GraphValidate, AcceptsReductionTapsOfEveryModeAndAxes) {
  const std::vector<Dimv> axes = {
      {kBatch, kM, 1}, {kBatch, 1, kN}, {1, 1, 1}, {1, kM, kN}, {kBatch, 1, 1}, {1, kM, 1},
  };
  for (ReductionMode mode : all_reduction_modes()) {
    for (const auto& dims : axes) {
      Graph g;
      auto m = gemm(g);
      auto tap = g.reduction(m.c, ReductionAttributes().set_mode(mode));
      tap->set_dim(dims).set_output(true);
      ASSERT_TRUE(g.validate()) << to_string(mode) << ": " << g.validate().message();
      EXPECT_EQ(tap->data_type(), DataType::kFloat32);
      EXPECT_EQ(tap->dims(), dims);
    }
  }
}

TEST(GraphValidate, AcceptsGatedMlp) {
  Graph g;
  auto a = input(g, "A", {1, kM, kK});
  auto b0 = input(g, "B0", {1, kK, kN}, DataType::kBFloat16, {kK * kN, 1, kK});
  auto b1 = input(g, "B1", {1, kK, kN}, DataType::kBFloat16, {kK * kN, 1, kK});
  auto gate = g.pointwise(g.matmul(a, b0), pw(PointwiseMode::kSilu));
  auto d = g.pointwise(gate, g.matmul(a, b1), pw(PointwiseMode::kMul));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(d->dims(), (Dimv{1, kM, kN}));
  EXPECT_EQ(g.nodes().size(), 4u);
}

TEST(GraphValidate, AcceptsMultiGemmWhoseOnlyOutputsAreTaps) {
  Graph g;
  auto a0 = input(g, "A0", {1, kM, kK});
  auto a1 = input(g, "A1", {1, kM, kK});
  auto b0 = input(g, "B0", {1, kK, kN});
  auto b1 = input(g, "B1", {1, kK, kN});
  auto sum = g.pointwise(g.matmul(a0, b0), g.matmul(a1, b1), pw(PointwiseMode::kAdd));
  auto row = g.reduction(sum, ReductionAttributes().set_mode(ReductionMode::kAmax));
  row->set_dim({1, kM, 1}).set_output(true);
  auto all = g.reduction(sum, ReductionAttributes().set_mode(ReductionMode::kNorm2));
  all->set_dim({1, 1, 1}).set_output(true);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(sum->dims(), (Dimv{1, kM, kN}));
  EXPECT_EQ(row->data_type(), DataType::kFloat32);
}

TEST(GraphValidate, AcceptsBlockScaledFp8) {
  Graph g;
  auto s = block_scaled(g);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(s.a->dims(), (Dimv{1, kM, 256}));
  EXPECT_EQ(s.b->dims(), (Dimv{1, 256, 256}));
  EXPECT_EQ(s.a->data_type(), DataType::kFloat32);
  EXPECT_EQ(s.c->dims(), (Dimv{1, kM, 256}));
}

TEST(GraphValidate, AcceptsE8M0BlockScalesWithPartialBlocks) {
  Graph g;
  auto x = input(g, "x", {1, kM, 200}, DataType::kFp8E5M2);
  auto sx = input(g, "sx", {1, kM, 2}, DataType::kE8M0);  // ceil(200 / 128)
  auto a = g.block_scale_dequantize(x, sx, BlockScaleDequantizeAttributes());
  g.matmul(a, input(g, "B", {1, 200, kN}, DataType::kFp8E4M3))
      ->set_output(true)
      .set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
}

TEST(GraphValidate, AcceptsBlockScaleQuantizeOutput) {
  for (DataType type : {DataType::kFp8E4M3, DataType::kFp4E2M1}) {
    Graph g;
    auto a = input(g, "A", {kBatch, kM, kK});
    auto b = input(g, "B", {kBatch, kK, 256});
    auto [y, scale] = g.block_scale_quantize(g.matmul(a, b),
                                             BlockScaleQuantizeAttributes().set_block_size(1, 128));
    y->set_data_type(type).set_output(true);
    scale->set_output(true);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    EXPECT_EQ(y->dims(), (Dimv{kBatch, kM, 256}));
    EXPECT_EQ(scale->dims(), (Dimv{kBatch, kM, 2}));
    EXPECT_EQ(scale->data_type(), DataType::kFloat32);
    EXPECT_EQ(scale->strides(), (Dimv{kM * 2, 2, 1}));
  }
}

TEST(GraphValidate, AcceptsBatchedWithOperandBatchOne) {
  for (const auto& [ba, bb] : {std::pair{kBatch, std::int64_t{1}},
                               std::pair{std::int64_t{1}, kBatch}, std::pair{kBatch, kBatch}}) {
    Graph g;
    auto a = input(g, "A", {ba, kM, kK});
    auto b = input(g, "B", {bb, kK, kN});
    auto c = g.matmul(a, b);
    c->set_output(true).set_data_type(DataType::kBFloat16);
    ASSERT_TRUE(g.validate()) << g.validate().message();
    EXPECT_EQ(c->dims(), (Dimv{kBatch, kM, kN}));
  }
}

TEST(GraphValidate, AcceptsOperandSharedByTwoRoles) {
  Graph g;
  auto x = input(g, "X", {1, kK, kK});
  auto c = g.matmul(x, x);
  c->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  EXPECT_EQ(c->dims(), (Dimv{1, kK, kK}));
}

TEST(GraphValidate, AcceptsPaddedAndBroadcastLayouts) {
  Graph g;
  auto a = input(g, "A", {kBatch, kM, kK}, DataType::kBFloat16, {kM * 40, 40, 1});
  auto b = input(g, "B", {1, kK, kN}, DataType::kBFloat16, {0, 1, 40});
  auto bias = input(g, "bias", {1, 1, kN}, DataType::kBFloat16, {0, 0, 1});
  auto d = g.pointwise(g.matmul(a, b), bias, pw(PointwiseMode::kAdd));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();
}

TEST(Validate, RefusesTwoNodesOfOneName) {
  Graph g;
  auto a = g.tensor(
      TensorAttributes().set_name("A").set_dim({1, 8, 8}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(
      TensorAttributes().set_name("B").set_dim({1, 8, 8}).set_data_type(DataType::kBFloat16));
  auto c0 = g.matmul(a, b, MatmulAttributes().set_name("mm"));
  auto c1 = g.matmul(a, b, MatmulAttributes().set_name("mm"));
  auto d = g.pointwise(c0, c1, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  d->set_output(true).set_data_type(DataType::kBFloat16);
  const Status s = g.validate();
  ASSERT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("node_duplicate_name: node 'mm'"), std::string::npos) << s.message();
}
