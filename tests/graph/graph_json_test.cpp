// graph_json: a graph written, read back and written again is the same text and analyzes
// to the same fusion program; bad input is refused with a message naming the JSON path,
// the tensor or node, and the value.
#include "fusedgemm/graph_json.h"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "example_files.h"
#include "fusion/analyze.h"
#include "fusion/print.h"

using namespace fusedgemm;

namespace {

// The fusion program text of a graph after validate, or the decline, or the error.
std::string program_text(Graph& graph) {
  if (Status s = graph.validate(); !s) return "invalid: " + s.message();
  auto analysis = fusion::analyze(graph);
  if (!analysis) return "analyze failed: " + analysis.status().message();
  if (analysis->decline) return "declined: " + analysis->decline->message;
  return fusion::to_string(analysis->program);
}

// Writes `graph`, reads the text back and checks that nothing was lost: the second write
// is byte-identical and both graphs analyze to the same program. Returns the text.
std::string expect_lossless(Graph& graph) {
  const std::string text = graph_to_json(graph);
  auto reloaded = graph_from_json(text);
  EXPECT_TRUE(reloaded) << reloaded.status().message() << "\n" << text;
  if (!reloaded) return text;
  EXPECT_EQ(graph_to_json(reloaded.value()), text);
  EXPECT_EQ(program_text(reloaded.value()), program_text(graph));
  return text;
}

class GraphJsonExample : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(GraphJsonExample, RoundTripsLosslessly) {
  auto graph = load_graph(GetParam().string());
  ASSERT_TRUE(graph) << graph.status().message();
  const std::string text = expect_lossless(graph.value());
  // expect_lossless validated the graph: what validate inferred (dims, strides, data types,
  // uids) stays out of the text, so the validated graph writes the same text.
  ASSERT_TRUE(graph->is_validated());
  EXPECT_EQ(graph_to_json(graph.value()), text);
}

INSTANTIATE_TEST_SUITE_P(Examples, GraphJsonExample,
                         ::testing::ValuesIn(fusedgemm_test::example_files()),
                         [](const auto& info) { return fusedgemm_test::example_name(info.param); });

TEST(GraphJson, ExamplesFolderIsNotEmpty) {
  EXPECT_GE(fusedgemm_test::example_files().size(), 13u);
}

TensorAttributes bf16(std::string name, std::vector<std::int64_t> dims) {
  return TensorAttributes()
      .set_name(std::move(name))
      .set_dim(std::move(dims))
      .set_data_type(DataType::kBFloat16);
}

bool same_bits(std::optional<float> a, std::optional<float> b) {
  return a.has_value() == b.has_value() &&
         (!a || std::bit_cast<std::uint32_t>(*a) == std::bit_cast<std::uint32_t>(*b));
}

// Every pointwise mode, every attribute (including values JSON cannot spell as numbers),
// every reduction mode and both block-scale nodes; builder-made tensors stay unnamed.
Graph every_op_graph() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Graph g;
  g.set_name("every \"op\"");
  auto a = g.tensor(bf16("A", {1, 64, 32}));
  auto b = g.tensor(bf16("B", {1, 32, 64}).set_stride({2048, 1, 32}).set_uid(40));
  auto x = g.tensor(
      TensorAttributes().set_name("x").set_dim({1, 1, 64}).set_data_type(DataType::kFloat32));
  auto mask = g.tensor(bf16("mask", {1, 64, 64}));
  auto acc = g.matmul(a, b);
  for (PointwiseMode mode : all_pointwise_modes()) {
    auto attributes = PointwiseAttributes().set_mode(mode);
    if (mode == PointwiseMode::kRelu) {
      attributes.set_relu_lower_clip_slope(0.01f).set_relu_lower_clip(-0.5f).set_relu_upper_clip(
          kInf);
    }
    if (mode == PointwiseMode::kSilu) attributes.set_swish_beta(1.702f);
    if (mode == PointwiseMode::kGeluTanh) {  // attributes a mode ignores travel all the same
      attributes.set_swish_beta(std::numeric_limits<float>::quiet_NaN())
          .set_relu_lower_clip(-0.0f)
          .set_relu_upper_clip(-kInf)
          .set_relu_lower_clip_slope(std::numeric_limits<float>::max());
    }
    Tensor out = arity(mode) == 1   ? g.pointwise(acc, attributes)
                 : arity(mode) == 2 ? g.pointwise(acc, x, attributes)
                                    : g.pointwise(acc, x, mask, attributes);
    out->set_output(true).set_data_type(DataType::kFloat32);
  }
  for (ReductionMode mode : all_reduction_modes()) {
    g.reduction(acc, ReductionAttributes().set_mode(mode))->set_dim({1, 64, 1}).set_output(true);
  }
  auto aq = g.tensor(
      TensorAttributes().set_name("Aq").set_dim({1, 64, 32}).set_data_type(DataType::kFp8E4M3));
  auto sa = g.tensor(
      TensorAttributes().set_name("sa").set_dim({1, 64, 1}).set_data_type(DataType::kFloat32));
  auto deq =
      g.block_scale_dequantize(aq, sa, BlockScaleDequantizeAttributes().set_block_size(1, 32));
  g.matmul(deq, b, MatmulAttributes().set_name("scaled_gemm"))
      ->set_output(true)
      .set_data_type(DataType::kBFloat16);
  auto [y, scale] =
      g.block_scale_quantize(acc, BlockScaleQuantizeAttributes().set_block_size(1, 16));
  y->set_output(true).set_data_type(DataType::kFp8E5M2);
  scale->set_output(true);
  return g;
}

TEST(GraphJson, EveryModeAndAttributeRoundTrips) {
  Graph g = every_op_graph();
  const std::string text = expect_lossless(g);
  // A graph the fused engine takes, so the programs compared above are whole.
  EXPECT_TRUE(program_text(g).starts_with("fusion program")) << program_text(g);
  for (PointwiseMode mode : all_pointwise_modes()) {
    EXPECT_NE(text.find(fmt::format("\"mode\": \"{}\"", to_string(mode))), std::string::npos)
        << to_string(mode);
  }
  for (ReductionMode mode : all_reduction_modes()) {
    EXPECT_NE(text.find(fmt::format("\"mode\": \"{}\"", to_string(mode))), std::string::npos)
        << to_string(mode);
  }
  // Shortest fp32 spellings, and the non-finite values as strings.
  for (std::string_view spelled :
       {"\"relu_lower_clip_slope\": 0.01", "\"relu_lower_clip\": -0.5",
        "\"relu_upper_clip\": \"inf\"", "\"swish_beta\": 1.702", "\"swish_beta\": \"nan\"",
        "\"relu_upper_clip\": \"-inf\"", "\"relu_lower_clip\": -0.0", "\"block_size\": [1, 32]",
        "\"block_size\": [1, 16]", "\"uid\": 40", "\"name\": \"every \\\"op\\\"\""}) {
    EXPECT_NE(text.find(spelled), std::string::npos) << spelled << "\n" << text;
  }

  // Node by node, the attributes read back bit for bit (expect_lossless validated `g`,
  // which named its nodes; validating the reloaded graph names them alike).
  auto read = graph_from_json(text);
  ASSERT_TRUE(read) << read.status().message();
  Graph& reloaded = read.value();
  ASSERT_TRUE(reloaded.validate());
  ASSERT_EQ(reloaded.nodes().size(), g.nodes().size());
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& want = g.nodes()[i];
    const Node& got = reloaded.nodes()[i];
    SCOPED_TRACE(fmt::format("node {} '{}'", i, want.name));
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.name, want.name);
    ASSERT_EQ(got.attributes.index(), want.attributes.index());
    if (const auto* w = std::get_if<PointwiseAttributes>(&want.attributes)) {
      const auto& r = std::get<PointwiseAttributes>(got.attributes);
      EXPECT_EQ(r.mode, w->mode);
      EXPECT_TRUE(same_bits(r.relu_lower_clip_slope, w->relu_lower_clip_slope));
      EXPECT_TRUE(same_bits(r.relu_lower_clip, w->relu_lower_clip));
      EXPECT_TRUE(same_bits(r.relu_upper_clip, w->relu_upper_clip));
      EXPECT_TRUE(same_bits(r.swish_beta, w->swish_beta));
    } else if (const auto* wr = std::get_if<ReductionAttributes>(&want.attributes)) {
      EXPECT_EQ(std::get<ReductionAttributes>(got.attributes).mode, wr->mode);
    } else if (const auto* wd = std::get_if<BlockScaleDequantizeAttributes>(&want.attributes)) {
      const auto& r = std::get<BlockScaleDequantizeAttributes>(got.attributes);
      EXPECT_EQ(std::pair(r.block_rows, r.block_cols), std::pair(wd->block_rows, wd->block_cols));
    } else if (const auto* wq = std::get_if<BlockScaleQuantizeAttributes>(&want.attributes)) {
      const auto& r = std::get<BlockScaleQuantizeAttributes>(got.attributes);
      EXPECT_EQ(std::pair(r.block_rows, r.block_cols), std::pair(wq->block_rows, wq->block_cols));
    }
  }
}

// An unvalidated graph's unnamed tensors are written under the names validate() would
// give them, so the reloaded graph's buffers carry the same names.
TEST(GraphJson, UnnamedTensorsGetTheNamesValidateGives) {
  Graph g;
  auto a = g.tensor(TensorAttributes().set_dim({1, 64, 32}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(bf16("B", {1, 32, 64}));
  g.matmul(a, b)->set_output(true).set_data_type(DataType::kBFloat16);
  const std::string text = graph_to_json(g);
  EXPECT_NE(text.find("{\"name\": \"matmul_0::A\", \"dims\": [1, 64, 32]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"inputs\": [\"matmul_0::A\", \"B\"], \"outputs\": [\"matmul_0::OUT\"]"),
            std::string::npos)
      << text;
  // Nodes stay unnamed, since validate names them by position.
  EXPECT_EQ(text.find("\"name\": \"matmul_0\""), std::string::npos) << text;
  EXPECT_FALSE(g.is_validated()) << "writing must not validate the caller's graph";
  EXPECT_TRUE(a->name().empty());
  expect_lossless(g);
}

TEST(GraphJson, InferredFieldsAreNotWritten) {
  Graph g;
  auto acc = g.matmul(g.tensor(bf16("A", {1, 64, 32})), g.tensor(bf16("B", {1, 32, 64})));
  acc->set_name("D").set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate());
  ASSERT_EQ(acc->dims(), (std::vector<std::int64_t>{1, 64, 64}));
  const std::string text = graph_to_json(g);
  EXPECT_NE(text.find("{\"name\": \"D\", \"data_type\": \"bf16\", \"output\": true}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("\"uid\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"strides\""), std::string::npos) << text;
}

// Nodes refer to tensors by name and all tensors are made first, so a graph that is
// structurally wrong still loads and validate() reports it with names.
TEST(GraphJson, SecondProducerLoadsAndValidateReportsIt) {
  auto g = graph_from_json(R"({"fusedgemm_graph": 1, "tensors": [
      {"name": "A", "dims": [1, 64, 32], "data_type": "bf16"},
      {"name": "B", "dims": [1, 32, 64], "data_type": "bf16"},
      {"name": "D", "data_type": "bf16", "output": true}],
    "nodes": [
      {"kind": "matmul", "name": "first", "inputs": ["A", "B"], "outputs": ["D"]},
      {"kind": "matmul", "name": "second", "inputs": ["A", "B"], "outputs": ["D"]}]})");
  ASSERT_TRUE(g) << g.status().message();
  const Status s = g->validate();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("tensor_two_producers: tensor 'D'"), std::string::npos) << s.message();
}

TEST(GraphJson, DescriptionIsReadAndNotWritten) {
  auto g = graph_from_json(R"({"fusedgemm_graph": 1, "name": "n", "description": "why",
                               "tensors": [], "nodes": []})");
  ASSERT_TRUE(g) << g.status().message();
  EXPECT_EQ(g->name(), "n");
  EXPECT_EQ(graph_to_json(g.value()),
            "{\n  \"fusedgemm_graph\": 1,\n  \"name\": \"n\",\n  \"tensors\": [],\n  \"nodes\": "
            "[]\n}\n");
}

// --- refusals ---------------------------------------------------------------------------

constexpr std::string_view kA = R"({"name": "A", "dims": [1, 64, 32], "data_type": "bf16"})";
constexpr std::string_view kB = R"({"name": "B", "dims": [1, 32, 64], "data_type": "bf16"})";
constexpr std::string_view kD = R"({"name": "D", "data_type": "bf16", "output": true})";
constexpr std::string_view kE = R"({"name": "E", "data_type": "fp32", "output": true})";
constexpr std::string_view kMatmul =
    R"({"kind": "matmul", "name": "gemm", "inputs": ["A", "B"], "outputs": ["D"]})";

std::string document(std::string_view tensors, std::string_view nodes) {
  return fmt::format(R"({{"fusedgemm_graph": 1, "tensors": [{}], "nodes": [{}]}})", tensors, nodes);
}
std::string abd(std::string_view extra_tensor, std::string_view nodes) {
  return document(fmt::format("{}, {}, {}{}", kA, kB, kD, extra_tensor), nodes);
}
// The matmul, then node 'n' of `kind` reading D into E with `attributes` (", key: value").
std::string with_node(std::string_view kind, std::string_view attributes) {
  return abd(
      fmt::format(", {}", kE),
      fmt::format(R"({}, {{"kind": "{}", "name": "n", "inputs": ["D"], "outputs": ["E"]{}}})",
                  kMatmul, kind, attributes));
}

struct Refusal {
  std::string name;
  std::string text;
  std::vector<std::string> message_has;  // the path, the tensor or node, the value
};

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> kTable = {
      {"NotJson", R"({"fusedgemm_graph": 1,)", {"graph_json: not JSON: ", "line 1, column 23"}},
      {"TopLevelNotObject", "[1, 2]", {"graph_json: top level: [1,2] is an array", "an object"}},
      {"WrongVersion",
       R"({"fusedgemm_graph": 2, "tensors": [], "nodes": []})",
       {"graph_json: fusedgemm_graph: format version 2 is unknown", "legal: the format version 1"}},
      {"MissingVersion",
       R"({"tensors": [], "nodes": []})",
       {"graph_json: fusedgemm_graph: missing"}},
      {"VersionNotInteger",
       R"({"fusedgemm_graph": "1", "tensors": [], "nodes": []})",
       {"graph_json: fusedgemm_graph: \"1\" is a string, not an integer"}},
      {"UnknownTopLevelKey",
       R"({"fusedgemm_graph": 1, "tensor": [], "nodes": []})",
       {"graph_json: top level: unknown key 'tensor'",
        "legal: one of fusedgemm_graph, name, description, tensors, nodes"}},
      {"MissingTensors",
       R"({"fusedgemm_graph": 1, "nodes": []})",
       {"graph_json: tensors: missing; legal: an array"}},
      {"DescriptionNotString",
       R"({"fusedgemm_graph": 1, "description": 7, "tensors": [], "nodes": []})",
       {"graph_json: description: 7 is a number"}},
      {"DuplicateKey",
       document(R"({"name": "A", "dims": [1], "dims": [2]})", ""),
       {"graph_json: tensors[0].dims: key 'dims' appears twice"}},
      {"DuplicateKeyInANode",
       abd("", R"({"kind": "matmul", "inputs": ["A", "B"], "inputs": ["A", "B"]})"),
       {"graph_json: nodes[0].inputs: key 'inputs' appears twice"}},
      {"NumberPastDoubleRange",
       document(R"({"name": "A", "dims": [1, 1e999, 2]})", ""),
       {"graph_json: tensors[0].dims[1]: number overflow parsing '1e999'",
        "legal: a number within double range"}},
      {"NestedPastTheDepthLimit",
       fmt::format(R"({{"fusedgemm_graph": 1, "description": {}}})", std::string(75000, '[')),
       {"graph_json: description[0][0]", "arrays and objects nested 65 deep; legal: at most 64"}},
      {"SyntaxErrorOnALaterLine",
       "{\"fusedgemm_graph\": 1,\n \"tensors\": [{\"name\": }]}",
       {"graph_json: not JSON: ", "line 2, column 23", "(at tensors[0].name)"}},
      {"UnknownTensorKey",
       document(R"({"name": "A", "dim": [1, 64, 32]})", ""),
       {"graph_json: tensors[0]: unknown key 'dim'",
        "legal: one of name, uid, dims, strides, data_type, output"}},
      {"TensorWithoutName",
       document(R"({"dims": [1, 64, 32]})", ""),
       {"graph_json: tensors[0].name: missing"}},
      {"DuplicateTensorName",
       document(fmt::format("{}, {}", kA, kA), ""),
       {"graph_json: tensors[1].name: 'A' is also the name of tensors[0]"}},
      {"UnknownDataType",
       document(R"({"name": "A", "data_type": "bf61"})", ""),
       {"graph_json: tensors[0].data_type: tensor 'A': unknown data type 'bf61'",
        "legal: one of fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp4_e2m1, e8m0, int8, int32"}},
      {"DataTypeNotSet",
       document(R"({"name": "A", "data_type": "not_set"})", ""),
       {"tensors[0].data_type: tensor 'A': unknown data type 'not_set'"}},
      {"DimsNotAnArray",
       document(R"({"name": "A", "dims": "1x64x32"})", ""),
       {"graph_json: tensors[0].dims: tensor 'A': \"1x64x32\" is a string",
        "legal: an array of integers"}},
      {"DimsHoldAFraction",
       document(R"({"name": "A", "dims": [1, 64.5, 32]})", ""),
       {"graph_json: tensors[0].dims[1]: tensor 'A': 64.5 is a number, not an integer"}},
      {"DimsHoldAString",
       document(R"({"name": "A", "dims": [1, "64", 32]})", ""),
       {"graph_json: tensors[0].dims[1]: tensor 'A': \"64\" is a string, not an integer"}},
      {"StridesHoldNull",
       document(R"({"name": "A", "strides": [null]})", ""),
       {"graph_json: tensors[0].strides[0]: tensor 'A': null is a null"}},
      {"UidOutOfRange",
       document(R"({"name": "A", "uid": 18446744073709551615})", ""),
       {"graph_json: tensors[0].uid: tensor 'A': 18446744073709551615 is out of range"}},
      {"OutputNotBoolean",
       document(R"({"name": "A", "output": 1})", ""),
       {"graph_json: tensors[0].output: tensor 'A': 1 is a number", "legal: true or false"}},
      {"NodeNotObject", abd("", "3"), {"graph_json: nodes[0]: 3 is a number"}},
      {"UnknownNodeKind",
       abd("", R"({"kind": "conv", "inputs": [], "outputs": []})"),
       {"graph_json: nodes[0].kind: unknown node kind 'conv'",
        "legal: one of matmul, pointwise, reduction, block_scale_dequantize, "
        "block_scale_quantize"}},
      {"UnknownNodeKey",
       abd("", R"({"kind": "matmul", "inputs": ["A", "B"], "outputs": ["D"], "input": []})"),
       {"graph_json: nodes[0]: unknown key 'input'"}},
      {"AttributeOfAnotherKind",
       abd("", R"({"kind": "matmul", "inputs": ["A", "B"], "outputs": ["D"], "mode": "add"})"),
       {"graph_json: nodes[0]: unknown key 'mode'", "legal: one of kind, name, inputs, outputs"}},
      {"MissingInputs",
       abd("", R"({"kind": "matmul", "name": "gemm", "outputs": ["D"]})"),
       {"graph_json: nodes[0].inputs: node 'gemm': missing"}},
      {"InputNamesNoTensor",
       abd("", R"({"kind": "matmul", "name": "gemm", "inputs": ["A", "Bx"], "outputs": ["D"]})"),
       {"graph_json: nodes[0].inputs[1]: node 'gemm': no tensor named 'Bx'"}},
      {"UnknownPointwiseMode",
       with_node("pointwise", R"(, "mode": "gleu")"),
       {"graph_json: nodes[1].mode: node 'n': unknown pointwise mode 'gleu'",
        "legal: one of identity, relu, gelu_erf, gelu_tanh, silu"}},
      {"MissingPointwiseMode",
       with_node("pointwise", ""),
       {"graph_json: nodes[1].mode: node 'n': missing; legal: one of identity, relu"}},
      {"UnknownReductionMode",
       with_node("reduction", R"(, "mode": "mean")"),
       {"graph_json: nodes[1].mode: node 'n': unknown reduction mode 'mean'",
        "legal: one of add, max, min, amax, avg, mul, norm1, norm2"}},
      {"FloatOutOfRange",
       with_node("pointwise", R"(, "mode": "silu", "swish_beta": 1e39)"),
       {"graph_json: nodes[1].swish_beta: node 'n': 1e+39 is out of fp32 range"}},
      {"FloatSpelledWrong",
       with_node("pointwise", R"(, "mode": "relu", "relu_upper_clip": "infinity")"),
       {"graph_json: nodes[1].relu_upper_clip: node 'n': \"infinity\" is a string",
        "or \"inf\", \"-inf\", \"nan\""}},
      {"BlockSizeOfThree",
       with_node("block_scale_quantize", R"(, "block_size": [1, 128, 1])"),
       {"graph_json: nodes[1].block_size: node 'n': 3 entries; legal: [rows, cols]"}},
  };
  return kTable;
}

class GraphJsonRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(GraphJsonRefusal, NamesThePathAndTheValue) {
  const Refusal& refusal = GetParam();
  auto g = graph_from_json(refusal.text);
  ASSERT_FALSE(g) << refusal.text;
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidArgument);
  for (const auto& part : refusal.message_has) {
    EXPECT_NE(g.status().message().find(part), std::string::npos)
        << "message: " << g.status().message() << "\nmissing: " << part;
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, GraphJsonRefusal, ::testing::ValuesIn(refusals()),
                         [](const auto& info) { return info.param.name; });

// Issue 10: a 100,000-node chain took 21 s to read (nlohmann's callback parser rescans an
// array at each object's end, and Graph remembered tensors by a linear search). Reading and
// validating is linear now; 10x the nodes may take at most 10x the time, with slack for
// noise, and the larger one is bounded outright.
std::string chain_document(int nodes) {
  std::string tensors = fmt::format("{}, {}, {{\"name\": \"t0\"}}", kA, kB);
  std::string list = R"({"kind": "matmul", "inputs": ["A", "B"], "outputs": ["t0"]})";
  for (int i = 1; i < nodes; ++i) {
    tensors += fmt::format(R"(, {{"name": "t{}"{}}})", i,
                           i + 1 == nodes ? R"(, "data_type": "fp32", "output": true)" : "");
    list += fmt::format(R"(, {{"kind": "pointwise", "inputs": ["t{}"], "outputs": ["t{}"], )"
                        R"("mode": "abs"}})",
                        i - 1, i);
  }
  return document(tensors, list);
}

double seconds_to_read_and_validate(const std::string& text) {
  const auto t0 = std::chrono::steady_clock::now();
  auto g = graph_from_json(text);
  EXPECT_TRUE(g) << g.status().message();
  if (g) {
    EXPECT_TRUE(g->validate()) << g->validate().message();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(GraphJson, ReadsAndValidatesALongChainInLinearTime) {
  const double small = seconds_to_read_and_validate(chain_document(10000));
  const double large = seconds_to_read_and_validate(chain_document(100000));
  // Ten times the nodes in at most 30 times the time (slack for one cold run): linear, as a
  // ratio; no absolute bound, which a sanitized Debug build misses by itself.
  EXPECT_LT(large, 30 * small + 0.5) << small << " s for 10,000 nodes";
}

// --- files ------------------------------------------------------------------------------

std::string temp_path(std::string_view name) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("fusedgemm_graph_json_test_{}_{}", ::getpid(), name))
      .string();
}

TEST(GraphJson, LoadGraphOfMissingFileIsIoNamingThePath) {
  const std::string path = temp_path("does_not_exist.json");
  auto g = load_graph(path);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().code(), ErrorCode::kIo);
  EXPECT_NE(g.status().message().find(fmt::format("load_graph: cannot open '{}'", path)),
            std::string::npos)
      << g.status().message();
}

TEST(GraphJson, LoadGraphOfDirectoryIsIo) {
  auto g = load_graph(FUSEDGEMM_EXAMPLES_DIR);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().code(), ErrorCode::kIo);
  EXPECT_NE(g.status().message().find(FUSEDGEMM_EXAMPLES_DIR), std::string::npos)
      << g.status().message();
  // Not libstdc++'s "basic_filebuf::underflow error" (issue 12).
  EXPECT_NE(g.status().message().find("it is a folder; legal: a graph JSON file"),
            std::string::npos)
      << g.status().message();
}

// Files are read up to 256 MiB: a pipe to its end (a FIFO with no writer at once, as an
// empty file), /dev/zero and a sparse file past the limit refused, nothing read without end.
TEST(GraphJson, LoadGraphReadsPipesAndRefusesPastTheLimit) {
  const std::string fifo = temp_path("fifo.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto empty = load_graph(fifo);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument) << empty.status().message();
  std::filesystem::remove(fifo);
  const std::string huge = temp_path("huge.json");
  std::ofstream(huge) << "{";
  std::filesystem::resize_file(huge, std::uintmax_t{300} << 20);
  for (const auto& [path, why] :
       {std::pair<std::string, std::string>{"/dev/zero", "more than 268435456 bytes"},
        {huge, "314572800 bytes; legal: a graph JSON file of at most 268435456 bytes"}}) {
    auto g = load_graph(path);
    ASSERT_FALSE(g) << path;
    EXPECT_EQ(g.status().code(), ErrorCode::kIo);
    EXPECT_NE(g.status().message().find(fmt::format("load_graph: cannot read '{}': {}", path, why)),
              std::string::npos)
        << g.status().message();
  }
  std::filesystem::remove(huge);
}

TEST(GraphJson, LoadGraphOfBadContentNamesFileAndField) {
  const std::string path = temp_path("bad.json");
  std::ofstream(path) << R"({"fusedgemm_graph": 3, "tensors": [], "nodes": []})";
  auto g = load_graph(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find(fmt::format(
                "load_graph: '{}': graph_json: fusedgemm_graph: format version 3", path)),
            std::string::npos)
      << g.status().message();
}

TEST(GraphJson, SaveGraphThenLoadGraphGivesTheSameText) {
  Graph g = every_op_graph();
  const std::string path = temp_path("saved.json");
  ASSERT_TRUE(save_graph(g, path));
  auto loaded = load_graph(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded) << loaded.status().message();
  EXPECT_EQ(graph_to_json(loaded.value()), graph_to_json(g));
}

TEST(GraphJson, SaveGraphIntoMissingFolderIsIoNamingThePath) {
  const std::string path = temp_path("no_such_folder") + "/graph.json";
  const Status s = save_graph(every_op_graph(), path);
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find(fmt::format("save_graph: cannot write '{}'", path)), std::string::npos)
      << s.message();
}

}  // namespace
