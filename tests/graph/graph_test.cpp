// The graph builder: handles, nodes, ports, lookups, and what invalidates a validated graph.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusedgemm/graph.h"

using namespace fusedgemm;

namespace {

Tensor input(Graph& g, const std::string& name, std::vector<std::int64_t> dims,
             DataType type = DataType::kBFloat16) {
  return g.tensor(TensorAttributes().set_name(name).set_dim(std::move(dims)).set_data_type(type));
}

}  // namespace

TEST(GraphBuilder, TensorCopiesTheAttributes) {
  Graph g;
  TensorAttributes attrs;
  attrs.set_name("A").set_dim({1, 64, 32}).set_data_type(DataType::kFp8E4M3).set_uid(9);
  auto a = g.tensor(attrs);
  attrs.set_name("changed").set_dim({1, 1, 1});
  EXPECT_EQ(a->name(), "A");
  EXPECT_EQ(a->dims(), (std::vector<std::int64_t>{1, 64, 32}));
  EXPECT_EQ(a->data_type(), DataType::kFp8E4M3);
  EXPECT_EQ(a->uid(), 9);
  EXPECT_FALSE(a->uid_assigned());
  ASSERT_EQ(g.tensors().size(), 1u);
  EXPECT_EQ(g.tensors()[0], a);
}

TEST(GraphBuilder, MatmulRecordsANodeWithItsPorts) {
  Graph g;
  auto a = input(g, "A", {1, 64, 32});
  auto b = input(g, "B", {1, 32, 48});
  auto c = g.matmul(a, b, MatmulAttributes().set_name("mm"));
  ASSERT_EQ(g.nodes().size(), 1u);
  const Node& n = g.nodes()[0];
  EXPECT_EQ(n.kind, NodeKind::kMatmul);
  EXPECT_EQ(n.name, "mm");
  EXPECT_EQ(n.inputs, (std::vector<Tensor>{a, b}));
  EXPECT_EQ(n.outputs, (std::vector<Tensor>{c}));
  EXPECT_TRUE(std::holds_alternative<MatmulAttributes>(n.attributes));
  EXPECT_NE(c, a);
  EXPECT_EQ(g.tensors(), (std::vector<Tensor>{a, b, c}));
}

TEST(GraphBuilder, PointwiseOverloadsKeepInputOrder) {
  Graph g;
  auto x = input(g, "x", {1, 4, 4});
  auto y = input(g, "y", {1, 4, 4});
  auto z = input(g, "z", {1, 4, 4});
  g.pointwise(x, PointwiseAttributes().set_mode(PointwiseMode::kRelu).set_relu_lower_clip(0.5f));
  g.pointwise(y, x, PointwiseAttributes().set_mode(PointwiseMode::kSub));
  g.pointwise(z, y, x, PointwiseAttributes().set_mode(PointwiseMode::kSelect).set_name("sel"));
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0].inputs, (std::vector<Tensor>{x}));
  EXPECT_EQ(g.nodes()[1].inputs, (std::vector<Tensor>{y, x}));
  EXPECT_EQ(g.nodes()[2].inputs, (std::vector<Tensor>{z, y, x}));
  EXPECT_EQ(g.nodes()[2].name, "sel");
  const auto& relu = std::get<PointwiseAttributes>(g.nodes()[0].attributes);
  EXPECT_EQ(relu.mode, PointwiseMode::kRelu);
  EXPECT_EQ(relu.relu_lower_clip, 0.5f);
}

TEST(GraphBuilder, BlockScaleQuantizeReturnsValuesThenScales) {
  Graph g;
  auto x = input(g, "x", {1, 64, 256}, DataType::kFloat32);
  auto [y, scale] = g.block_scale_quantize(x, BlockScaleQuantizeAttributes().set_block_size(1, 32));
  ASSERT_EQ(g.nodes().size(), 1u);
  const Node& n = g.nodes()[0];
  EXPECT_EQ(n.kind, NodeKind::kBlockScaleQuantize);
  EXPECT_EQ(n.outputs, (std::vector<Tensor>{y, scale}));
  EXPECT_NE(y, scale);
  EXPECT_EQ(std::get<BlockScaleQuantizeAttributes>(n.attributes).block_cols, 32);
}

TEST(GraphBuilder, BlockScaleDequantizeTakesValuesThenScales) {
  Graph g;
  auto x = input(g, "x", {1, 64, 256}, DataType::kFp8E4M3);
  auto s = input(g, "s", {1, 64, 2}, DataType::kFloat32);
  auto out = g.block_scale_dequantize(x, s, BlockScaleDequantizeAttributes().set_name("dq"));
  const Node& n = g.nodes()[0];
  EXPECT_EQ(n.kind, NodeKind::kBlockScaleDequantize);
  EXPECT_EQ(n.inputs, (std::vector<Tensor>{x, s}));
  EXPECT_EQ(n.outputs, (std::vector<Tensor>{out}));
  EXPECT_EQ(n.name, "dq");
}

TEST(GraphBuilder, PortNames) {
  struct Case {
    NodeKind kind;
    std::vector<std::string> inputs, outputs;
  };
  const std::vector<Case> cases = {
      {NodeKind::kMatmul, {"A", "B"}, {"OUT"}},
      {NodeKind::kPointwise, {"IN_0", "IN_1", "IN_2"}, {"OUT"}},
      {NodeKind::kReduction, {"IN"}, {"OUT"}},
      {NodeKind::kBlockScaleDequantize, {"X", "SCALE"}, {"OUT"}},
      {NodeKind::kBlockScaleQuantize, {"X"}, {"Y", "SCALE"}},
  };
  for (const auto& c : cases) {
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      EXPECT_EQ(input_port_name(c.kind, i), c.inputs[i]) << to_string(c.kind);
    }
    for (std::size_t i = 0; i < c.outputs.size(); ++i) {
      EXPECT_EQ(output_port_name(c.kind, i), c.outputs[i]) << to_string(c.kind);
    }
  }
}

TEST(GraphBuilder, NodeKindToString) {
  EXPECT_EQ(to_string(NodeKind::kMatmul), "matmul");
  EXPECT_EQ(to_string(NodeKind::kPointwise), "pointwise");
  EXPECT_EQ(to_string(NodeKind::kReduction), "reduction");
  EXPECT_EQ(to_string(NodeKind::kBlockScaleDequantize), "block_scale_dequantize");
  EXPECT_EQ(to_string(NodeKind::kBlockScaleQuantize), "block_scale_quantize");
}

TEST(GraphBuilder, AddNodeRemembersEachTensorOnce) {
  Graph g;
  auto a = std::make_shared<TensorAttributes>();
  auto b = std::make_shared<TensorAttributes>();
  auto c = std::make_shared<TensorAttributes>();
  g.add_node({NodeKind::kMatmul, "mm", {a, a}, {b}, MatmulAttributes()});
  g.add_node({NodeKind::kPointwise, "p", {b, nullptr}, {c}, PointwiseAttributes()});
  EXPECT_EQ(g.tensors(), (std::vector<Tensor>{a, b, c}));
  EXPECT_EQ(g.nodes().size(), 2u);
}

TEST(GraphBuilder, AnyChangeClearsValidated) {
  Graph g;
  auto a = input(g, "A", {1, 64, 32});
  auto b = input(g, "B", {1, 32, 48});
  auto c = g.matmul(a, b);
  c->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate());
  EXPECT_TRUE(g.is_validated());
  auto bias = input(g, "bias", {1, 1, 48});
  EXPECT_FALSE(g.is_validated());
  ASSERT_TRUE(g.validate());
  g.pointwise(c, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  EXPECT_FALSE(g.is_validated());
}

TEST(GraphBuilder, FindsTensorsByUidAndName) {
  Graph g;
  auto a = input(g, "A", {1, 64, 32});
  a->set_uid(100);
  auto b = input(g, "B", {1, 32, 48});
  auto c = g.matmul(a, b);
  c->set_output(true).set_data_type(DataType::kBFloat16);

  auto by_uid = g.find_tensor(std::int64_t{100});
  ASSERT_TRUE(by_uid);
  EXPECT_EQ(by_uid.value(), a);
  // Before validate an unnamed tensor has no name to be found by.
  auto empty = g.find_tensor(std::string_view{});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.status().code(), ErrorCode::kNotFound);

  ASSERT_TRUE(g.validate());
  auto by_name = g.find_tensor(std::string_view{"matmul_0::OUT"});
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name.value(), c);
  ASSERT_TRUE(c->uid().has_value());
  auto by_assigned = g.find_tensor(*c->uid());
  ASSERT_TRUE(by_assigned);
  EXPECT_EQ(by_assigned.value(), c);

  auto missing = g.find_tensor(std::string_view{"nope"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'nope'"), std::string::npos);
  auto missing_uid = g.find_tensor(std::int64_t{12345});
  ASSERT_FALSE(missing_uid);
  EXPECT_NE(missing_uid.status().message().find("12345"), std::string::npos);
}

// A copy of a validated tensor handed to Graph::tensor is an input the caller declares in
// full: its dims stay, and the uid validate chose for the original is not carried over.
TEST(GraphBuilder, TensorFromAValidatedCopyIsDeclared) {
  Graph g;
  auto a = input(g, "A", {1, 64, 32});
  auto b = input(g, "B", {1, 32, 48});
  auto c = g.matmul(a, b);
  c->set_output(true).set_data_type(DataType::kBFloat16).set_name("C");
  ASSERT_TRUE(g.validate());
  ASSERT_TRUE(c->uid_assigned());

  Graph h;
  auto x = h.tensor(*c);
  EXPECT_FALSE(x->uid().has_value());
  x->set_output(false).set_name("X");
  auto w = input(h, "W", {1, 48, 16});
  auto y = h.matmul(x, w);
  y->set_output(true).set_data_type(DataType::kBFloat16);
  const Status s = h.validate();
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(x->dims(), (std::vector<std::int64_t>{1, 64, 48}));
  EXPECT_EQ(y->dims(), (std::vector<std::int64_t>{1, 64, 16}));
}

TEST(GraphBuilder, LayoutReadsDeclaredDimsAndStrides) {
  Graph g;
  auto b = g.tensor(TensorAttributes()
                        .set_name("B")
                        .set_dim({2, 32, 48})
                        .set_stride({1536, 1, 32})
                        .set_data_type(DataType::kBFloat16));
  EXPECT_EQ(b->layout(), (Layout{{2, 32, 48}, {1536, 1, 32}}));
}

// A copy holds its own tensors: validating it fills in the copy's uids and dims and leaves
// the original's as they were (the two shared every tensor object, so building copies on
// several threads at once raced and made plans with other tensors' uids).
TEST(GraphBuilder, CopyHoldsItsOwnTensors) {
  Graph g;
  auto a = input(g, "A", {1, 64, 32});
  auto b = input(g, "B", {1, 32, 48});
  b->set_uid(7);
  auto c = g.matmul(a, b);
  c->set_output(true).set_data_type(DataType::kBFloat16).set_name("C");
  g.set_name("original");

  Graph copy = g;
  ASSERT_EQ(copy.tensors().size(), g.tensors().size());
  for (std::size_t i = 0; i < g.tensors().size(); ++i) {
    EXPECT_NE(copy.tensors()[i], g.tensors()[i]);
    EXPECT_EQ(copy.tensors()[i]->name(), g.tensors()[i]->name());
  }
  ASSERT_EQ(copy.nodes().size(), 1u);
  EXPECT_EQ(copy.nodes()[0].inputs[0], copy.tensors()[0]);
  EXPECT_EQ(copy.nodes()[0].inputs[1], copy.tensors()[1]);
  EXPECT_EQ(copy.nodes()[0].outputs[0], copy.tensors()[2]);
  EXPECT_EQ(copy.name(), "original");

  ASSERT_TRUE(copy.validate());
  EXPECT_FALSE(a->uid().has_value());
  EXPECT_TRUE(c->dims().empty());
  EXPECT_FALSE(g.is_validated());
  // The same uids as the original once it is validated too: a pack keyed by the original's
  // handles names the copy's roles.
  ASSERT_TRUE(g.validate());
  for (std::size_t i = 0; i < g.tensors().size(); ++i) {
    EXPECT_EQ(copy.tensors()[i]->uid(), g.tensors()[i]->uid());
  }
  EXPECT_EQ(copy.find_tensor(std::int64_t{7}).value(), copy.tensors()[1]);

  // Assignment too, and a validated graph's copy is validated.
  Graph assigned;
  assigned = g;
  EXPECT_TRUE(assigned.is_validated());
  EXPECT_NE(assigned.tensors()[2], c);
  EXPECT_EQ(assigned.tensors()[2]->dims(), (std::vector<std::int64_t>{1, 64, 48}));
}
