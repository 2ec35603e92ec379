// resize_graph under hostile problem sizes (issue 10): `fusedgemm run --m 2^63-1` wrapped the
// dense strides into [-128, 128, 1]; a size whose spans overflow is an error naming the tensor.
#include "reference/resize.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include "fusedgemm/graph_json.h"

using namespace fusedgemm;

namespace {

reference::ProblemOverride size(std::optional<std::int64_t> m, std::optional<std::int64_t> k) {
  reference::ProblemOverride p;
  p.m = m;
  p.k = k;
  return p;
}

Graph example(const std::string& name) {
  auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/" + name);
  EXPECT_TRUE(graph) << graph.status().message();
  EXPECT_TRUE(graph->validate());
  return std::move(graph).value();
}

}  // namespace

TEST(ResizeGraph, RefusesAProblemWhoseSpansOverflow) {
  for (const std::int64_t m : {std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max()}) {
    Graph g = example("block_scaled_fp8.json");
    const Status s = reference::resize_graph(g, size(m, {}));
    ASSERT_FALSE(s) << m;
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(s.message().starts_with("resize_span: tensor 'Aq': dims [1, " + std::to_string(m) +
                                        ", 512]"))
        << s.message();
    EXPECT_NE(s.message().find("legal: "), std::string::npos);
  }
}

TEST(ResizeGraph, RefusesAnExtentBelowOne) {
  Graph g = example("plain.json");
  const Status s = reference::resize_graph(g, size({}, 0));
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("resize_extent: batch 1, M 256, N 256, K 0")) << s.message();
}

TEST(ResizeGraph, KeepsEveryStrideNonNegativeAtAHugeSize) {
  Graph g = example("block_scaled_fp8.json");
  const Status s = reference::resize_graph(g, size(std::int64_t{1} << 36, {}));
  ASSERT_TRUE(s) << s.message();
  for (const auto& t : g.tensors()) {
    for (std::int64_t stride : t->strides()) EXPECT_GE(stride, 0) << t->name();
  }
}
