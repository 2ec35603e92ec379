// The call file reader (tools/call_json.h): as strict as the graph reader (issue 10: 70
// invalid call files were accepted, "shapes" silently became a bare address and 16.9 was
// truncated to 16), every refusal naming the path and the field.
#include "call_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"

using namespace fusedgemm;
using fusedgemm::tool::call_from_json;

namespace {

struct Refusal {
  std::string name;
  std::string text;
  std::vector<std::string> message_has;
};

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> kTable = {
      {"NotJsonWithLineAndColumn",
       "{\"buffers\": {\n  \"A\": {,}}}",
       {"call_json: not JSON: ", "line 2, column 9", "(at buffers.A)"}},
      {"TopLevelNotObject", "[]", {"call_json: top level: [] is an array; legal: an object"}},
      {"UnknownTopLevelKey",
       R"({"buffer": {}})",
       {"call_json: top level: unknown key 'buffer'; legal: one of buffers, workspace_bytes"}},
      {"DuplicateTopLevelKey",
       R"({"buffers": {}, "buffers": {}})",
       {"call_json: buffers: key 'buffers' appears twice in one object"}},
      {"BuffersNotObject", R"({"buffers": []})", {"call_json: buffers: [] is an array"}},
      {"BufferNotObject",
       R"({"buffers": {"A": 3}})",
       {"call_json: buffers.A: tensor 'A': 3 is a number; legal: an object (a buffer)"}},
      {"UnknownBufferKey",
       R"({"buffers": {"A": {"shapes": [1, 64, 128]}}})",
       {"call_json: buffers.A: tensor 'A': unknown key 'shapes'",
        "legal: one of shape, stride, data_type, offset_bytes, null"}},
      {"DuplicateBufferKey",
       R"({"buffers": {"A": {"offset_bytes": 16, "offset_bytes": 0}}})",
       {"call_json: buffers.A.offset_bytes: key 'offset_bytes' appears twice"}},
      {"DuplicateTensor",
       R"({"buffers": {"A": {}, "A": {}}})",
       {"call_json: buffers.A: key 'A' appears twice"}},
      {"OffsetAFraction",
       R"({"buffers": {"A": {"offset_bytes": 16.9}}})",
       {"call_json: buffers.A.offset_bytes: tensor 'A': 16.9 is a number, not an integer"}},
      {"OffsetNegative",
       R"({"buffers": {"A": {"offset_bytes": -16}}})",
       {"call_json: buffers.A.offset_bytes: tensor 'A': -16 is out of range",
        "legal: an integer in [0, 4294967296)"}},
      {"OffsetAString",
       R"({"buffers": {"A": {"offset_bytes": "16"}}})",
       {"call_json: buffers.A.offset_bytes: tensor 'A': \"16\" is a string, not an integer"}},
      {"ShapeHoldsAFraction",
       R"({"buffers": {"A": {"shape": [1, 64.5, 128], "stride": [8192, 128, 1]}}})",
       {"call_json: buffers.A.shape[1]: tensor 'A': 64.5 is a number, not an integer"}},
      {"ShapeWithoutStride",
       R"({"buffers": {"A": {"shape": [1, 64, 128]}}})",
       {"call_json: buffers.A.stride: tensor 'A': missing while \"shape\" is given"}},
      {"StrideWithoutShape",
       R"({"buffers": {"A": {"stride": [8192, 128, 1]}}})",
       {"call_json: buffers.A.shape: tensor 'A': missing while \"stride\" is given"}},
      {"StrideNotArray",
       R"({"buffers": {"A": {"shape": [1, 64, 128], "stride": 1}}})",
       {"call_json: buffers.A.stride: tensor 'A': 1 is a number"}},
      {"DataTypeNotString",
       R"({"buffers": {"A": {"shape": [1], "stride": [1], "data_type": 3}}})",
       {"call_json: buffers.A.data_type: tensor 'A': 3 is a number"}},
      {"UnknownDataType",
       R"({"buffers": {"A": {"shape": [1], "stride": [1], "data_type": "bf61"}}})",
       {"call_json: buffers.A.data_type: tensor 'A': unknown data type 'bf61'"}},
      {"DataTypeWithoutView",
       R"({"buffers": {"A": {"data_type": "bf16"}}})",
       {"call_json: buffers.A.data_type: tensor 'A': given without a view"}},
      {"NullNotBoolean",
       R"({"buffers": {"A": {"null": 1}}})",
       {"call_json: buffers.A.null: tensor 'A': 1 is a number; legal: true or false"}},
      {"WorkspaceAFraction",
       R"({"workspace_bytes": 1.5})",
       {"call_json: workspace_bytes: 1.5 is a number, not an integer"}},
      {"WorkspaceNegative",
       R"({"workspace_bytes": -1})",
       {"call_json: workspace_bytes: -1; legal: a non-negative integer"}},
      {"NumberPastDoubleRange",
       R"({"buffers": {"A": {"offset_bytes": 1e999}}})",
       {"call_json: buffers.A.offset_bytes: number overflow parsing '1e999'"}},
      {"NestedPastTheDepthLimit",
       "{\"buffers\": " + std::string(200000, '['),
       {"call_json: buffers[0]", "nested 65 deep; legal: at most 64"}},
  };
  return kTable;
}

class CallJsonRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(CallJsonRefusal, NamesThePathAndTheField) {
  const Refusal& refusal = GetParam();
  auto call = call_from_json(refusal.text);
  ASSERT_FALSE(call) << refusal.text;
  EXPECT_EQ(call.status().code(), ErrorCode::kInvalidArgument);
  for (const auto& part : refusal.message_has) {
    EXPECT_NE(call.status().message().find(part), std::string::npos)
        << "message: " << call.status().message() << "\nmissing: " << part;
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, CallJsonRefusal, ::testing::ValuesIn(refusals()),
                         [](const auto& info) { return info.param.name; });

// What a call file says reaches the plan's rules unchanged: the view, the data type, the
// offset (through the alignment rule) and the workspace.
TEST(CallJson, ReadsViewsOffsetsAndTheWorkspace) {
  auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/plain.json");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto legal = call_from_json(
      R"({"buffers": {"A": {"shape": [1, 64, 128], "stride": [8192, 128, 1], "data_type": "bf16"},
                      "B": {}, "D": {"shape": [1, 64, 256], "stride": [16384, 256, 1]}},
          "workspace_bytes": 0})");
  ASSERT_TRUE(legal) << legal.status().message();
  EXPECT_EQ(legal->workspace_bytes, 0u);
  EXPECT_TRUE(plan->explain(legal->pack).legal()) << plan->explain(legal->pack).message;

  auto misaligned = call_from_json(R"({"buffers": {"A": {}, "B": {}, "D": {"offset_bytes": 2}}})");
  ASSERT_TRUE(misaligned) << misaligned.status().message();
  const Verdict v = plan->explain(misaligned->pack);
  EXPECT_EQ(v.rule, "alignment");
  EXPECT_NE(v.message.find("'D'"), std::string::npos) << v.message;

  auto typed = call_from_json(
      R"({"buffers": {"A": {"shape": [1, 256, 128], "stride": [32768, 128, 1], "data_type": "fp16"},
                      "B": {}, "D": {}}, "workspace_bytes": 4096})");
  ASSERT_TRUE(typed) << typed.status().message();
  EXPECT_EQ(typed->workspace_bytes, 4096u);
  EXPECT_EQ(plan->explain(typed->pack).rule, "data_type");
}

}  // namespace
