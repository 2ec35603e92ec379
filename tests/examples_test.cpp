// Every graph under examples/ validates and analyzes to the fusion program its flavor
// (DESIGN.md section 5) calls for; fallback_only.json is declined with its rule.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "example_files.h"
#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "fusion/print.h"
#include "recipe/support_gate.h"

using namespace fusedgemm;
using fusion::FusionProgram;

namespace {

using Facts = std::vector<std::string>;

// What an example's fusion program must say, one readable line per item, in program order.
struct Expected {
  std::string file = {};
  fusion::ProblemShape problem = {};
  Facts gemms = {};      // "<A operand> @ <B operand>", indices into `operands`
  Facts operands = {};   // "<role> '<tensor>' <type> <major>[ batch-broadcast][ scaled by ...]"
  Facts aux = {};        // "'<tensor>' <broadcast>[ batch-broadcast]"
  Facts outputs = {};    // "'<tensor>' <type> <major>"
  Facts taps = {};       // "'<tensor>' <type> <mode> over <reduced axes>"
  Facts quantized = {};  // "'<values>' + '<scales>' <type> <rows>x<cols> <major>"
  Facts rounded = {};    // epilogue values rounded below fp32: "'<tensor>' <type>"
};

const std::vector<Expected>& expectations() {
  static const std::vector<Expected> kTable = {
      {.file = "plain.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 K-major"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'D' bf16"}},
      {.file = "epilogue.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 N-major"},
       .aux = {"'alpha' scalar"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'scaled' bf16", "'D' bf16"}},
      {.file = "aux_bias.json",
       .problem = {1, 256, 512, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 K-major"},
       .aux = {"'row_scale' row", "'alpha' scalar", "'bias' column", "'residual' full"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'D' bf16"}},
      {.file = "multi_output.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 K-major"},
       .aux = {"'bias' column"},
       .outputs = {"'pre_act' bf16 N-major", "'post_act' fp32 M-major"},
       .rounded = {"'pre_act' bf16"}},
      {.file = "taps.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 K-major"},
       .aux = {"'bias' column"},
       .outputs = {"'Y' bf16 N-major"},
       .taps = {"'row_sum' fp32 add over N", "'row_mean' fp32 avg over N",
                "'col_amax' fp32 amax over M", "'col_norm2' fp32 norm2 over M",
                "'max' fp32 max over M, N"},
       .rounded = {"'Y' bf16"}},
      {.file = "gated_mlp.json",
       .problem = {1, 256, 512, 128},
       // One A operand read once and shared by both GEMMs.
       .gemms = {"0 @ 1", "0 @ 2"},
       .operands = {"A 'X' bf16 K-major", "B 'W_gate' bf16 K-major", "B 'W_up' bf16 K-major"},
       .outputs = {"'H' bf16 N-major"},
       .rounded = {"'H' bf16"}},
      {.file = "dual_gemm.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1", "2 @ 3"},
       .operands = {"A 'A0' bf16 K-major", "B 'B0' bf16 N-major", "A 'A1' bf16 K-major",
                    "B 'B1' bf16 N-major"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'D' bf16"}},
      {.file = "taps_only.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1", "0 @ 2"},
       .operands = {"A 'X' bf16 K-major", "B 'W_ref' bf16 K-major", "B 'W_new' bf16 K-major"},
       .taps = {"'row_err_norm2' fp32 norm2 over N", "'err_amax' fp32 amax over M, N",
                "'col_err_norm1' fp32 norm1 over M"}},
      {.file = "block_scaled_fp8.json",
       .problem = {1, 256, 512, 512},
       .gemms = {"0 @ 1"},
       .operands = {"A 'Aq' fp8_e4m3 K-major scaled by 'sa' fp32 1x128",
                    "B 'Bq' fp8_e4m3 K-major scaled by 'sb' fp32 128x128"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'D' bf16"}},
      {.file = "fp8_per_tensor.json",
       .problem = {1, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' fp8_e4m3 K-major", "B 'B' fp8_e5m2 K-major"},
       .aux = {"'scale_a' scalar", "'scale_b' scalar"},
       .outputs = {"'D' bf16 N-major"},
       .rounded = {"'D' bf16"}},
      {.file = "quantized_output.json",
       .problem = {1, 256, 512, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 K-major", "B 'B' bf16 K-major"},
       .quantized = {"'y' + 'y_scale' fp8_e4m3 1x128 N-major"}},
      {.file = "batched.json",
       .problem = {3, 256, 256, 128},
       .gemms = {"0 @ 1"},
       .operands = {"A 'A' bf16 M-major", "B 'B' bf16 K-major batch-broadcast"},
       .aux = {"'bias' column batch-broadcast"},
       .outputs = {"'D' bf16 N-major"},
       .taps = {"'amax' fp32 amax over batch, M, N"},
       .rounded = {"'D' bf16"}},
  };
  return kTable;
}

const std::string& name_of(const FusionProgram& p, int buffer) {
  return p.buffers[buffer].name;
}
std::string_view type_of(const FusionProgram& p, int buffer) {
  return to_string(p.buffers[buffer].data_type);
}

Facts gemm_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& g : p.gemms) facts.push_back(fmt::format("{} @ {}", g.a, g.b));
  return facts;
}

Facts operand_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& op : p.operands) {
    std::string fact = fmt::format("{} '{}' {} {}", to_string(op.role), name_of(p, op.buffer),
                                   type_of(p, op.buffer), to_string(op.major));
    if (op.batch_broadcast) fact += " batch-broadcast";
    if (const auto& s = op.block_scale) {
      fact += fmt::format(" scaled by '{}' {} {}x{}", name_of(p, s->scale_buffer),
                          to_string(s->scale_type), s->block_rows, s->block_cols);
    }
    facts.push_back(fact);
  }
  return facts;
}

Facts aux_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& a : p.aux) {
    facts.push_back(fmt::format("'{}' {}{}", name_of(p, a.buffer), to_string(a.broadcast),
                                a.batch_broadcast ? " batch-broadcast" : ""));
  }
  return facts;
}

Facts output_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& o : p.outputs) {
    facts.push_back(
        fmt::format("'{}' {} {}", name_of(p, o.buffer), type_of(p, o.buffer), to_string(o.major)));
  }
  return facts;
}

Facts tap_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& t : p.taps) {
    std::vector<std::string_view> axes;
    if (t.reduce_batch) axes.push_back("batch");
    if (t.reduce_m) axes.push_back("M");
    if (t.reduce_n) axes.push_back("N");
    facts.push_back(fmt::format("'{}' {} {} over {}", name_of(p, t.buffer), type_of(p, t.buffer),
                                to_string(t.mode), fmt::join(axes, ", ")));
  }
  return facts;
}

Facts quantized_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& q : p.quantized_outputs) {
    facts.push_back(fmt::format("'{}' + '{}' {} {}x{} {}", name_of(p, q.buffer),
                                name_of(p, q.scale_buffer), type_of(p, q.buffer), q.block_rows,
                                q.block_cols, to_string(q.major)));
  }
  return facts;
}

Facts rounding_facts(const FusionProgram& p) {
  Facts facts = {};
  for (const auto& node : p.epilogue) {
    if (node.round_to != DataType::kFloat32) {
      facts.push_back(fmt::format("'{}' {}", node.name, to_string(node.round_to)));
    }
  }
  return facts;
}

Result<fusion::Analysis> validate_and_analyze(const std::string& file) {
  FG_ASSIGN_OR_RETURN(Graph graph, load_graph(fmt::format("{}/{}", FUSEDGEMM_EXAMPLES_DIR, file)));
  FG_TRY(graph.validate());
  return fusion::analyze(graph);
}

class ExamplesFacts : public ::testing::TestWithParam<Expected> {};

TEST_P(ExamplesFacts, AnalyzesToTheFlavorsProgram) {
  const Expected& want = GetParam();
  auto analysis = validate_and_analyze(want.file);
  ASSERT_TRUE(analysis) << analysis.status().message();
  ASSERT_FALSE(analysis->decline) << analysis->decline->message;
  const FusionProgram& p = analysis->program;
  SCOPED_TRACE(fusion::to_string(p));
  EXPECT_EQ(p.problem, want.problem);
  EXPECT_EQ(gemm_facts(p), want.gemms);
  EXPECT_EQ(operand_facts(p), want.operands);
  EXPECT_EQ(aux_facts(p), want.aux);
  EXPECT_EQ(output_facts(p), want.outputs);
  EXPECT_EQ(tap_facts(p), want.taps);
  EXPECT_EQ(quantized_facts(p), want.quantized);
  EXPECT_EQ(rounding_facts(p), want.rounded);
  const auto gate = recipe::check_support(p);
  EXPECT_FALSE(gate) << gate->message;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesFacts, ::testing::ValuesIn(expectations()),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           return fusedgemm_test::example_name(info.param.file);
                         });

TEST(Examples, FallbackOnlyIsDeclinedByChainedGemm) {
  auto analysis = validate_and_analyze("fallback_only.json");
  ASSERT_TRUE(analysis) << analysis.status().message();
  ASSERT_TRUE(analysis->decline) << fusion::to_string(analysis->program);
  EXPECT_EQ(analysis->decline->rule, "chained_gemm");
  EXPECT_NE(analysis->decline->message.find("role A 'T'"), std::string::npos)
      << analysis->decline->message;
  EXPECT_NE(analysis->decline->message.find("matmul 'gemm_tc'"), std::string::npos)
      << analysis->decline->message;
}

// A new example file needs a row above (or, if it is declined, a test like the one above).
TEST(Examples, TableCoversEveryExampleFile) {
  for (const auto& file : fusedgemm_test::example_files()) {
    const std::string name = file.filename().string();
    const bool listed = std::any_of(expectations().begin(), expectations().end(),
                                    [&](const Expected& e) { return e.file == name; });
    EXPECT_TRUE(listed || name == "fallback_only.json") << name << " has no expected facts";
  }
}

}  // namespace
