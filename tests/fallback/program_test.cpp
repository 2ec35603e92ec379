// The fallback program of a graph: its steps in order, where each value lives, the
// workspace it needs, and step kernels that NVRTC compiles for sm_90a without spills.
#include "fallback/program.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fallback/step_source.h"
#include "fusedgemm/graph_json.h"
#include "jit/nvrtc_compiler.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::fallback {
namespace {

Result<Graph> fallback_only() {
  auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/fallback_only.json");
  if (graph) FG_TRY(graph->validate());
  return graph;
}

std::vector<StepKind> kinds(const Program& p) {
  std::vector<StepKind> out;
  for (const Step& s : p.steps) out.push_back(s.kind);
  return out;
}

TEST(FallbackProgram, ChainedGemmConvertsOperandsOnceRoundsAndStoresLast) {
  auto graph = fallback_only();
  ASSERT_TRUE(graph) << graph.status().message();
  auto program = plan_program(graph.value());
  ASSERT_TRUE(program) << program.status().message();
  using K = StepKind;
  // A and B converted to fp32, (A@B) -> T, C converted, T@C -> D, D rounded to bf16, stored.
  EXPECT_EQ(kinds(program.value()),
            (std::vector<K>{K::kPointwise, K::kPointwise, K::kMatmul, K::kPointwise, K::kMatmul,
                            K::kPointwise, K::kStore}))
      << to_string(program.value());
  // Caller buffers: A, B, C read, D written; every computed value in the workspace.
  ASSERT_EQ(program->buffers.size(), 4u);
  EXPECT_TRUE(program->buffers[3].written);
  EXPECT_EQ(program->buffers[0].role, Role::kA);
  EXPECT_EQ(program->buffers[2].role, Role::kB);
  int in_workspace = 0;
  for (const Value& v : program->values) {
    if (!v.in_workspace()) continue;
    ++in_workspace;
    EXPECT_EQ(v.offset % kValueAlignment, 0) << v.name;
  }
  // Three fp32 copies, T and D, each 256 x 256 fp32.
  EXPECT_EQ(in_workspace, 5);
  EXPECT_EQ(program->workspace_bytes, 5u * 256 * 256 * 4);
}

TEST(FallbackProgram, RefusesAGraphThatIsNotValidated) {
  Graph graph;
  auto program = plan_program(graph);
  ASSERT_FALSE(program);
  EXPECT_EQ(program.status().code(), ErrorCode::kInvalidGraph);
}

// CI compiles every generated kernel: the step kernels of every flavor and of the
// declined example, for sm_90a, with no spills and no stack.
TEST(FallbackStepSource, EveryFlavorCompilesWithoutSpills) {
  std::vector<Graph> graphs;
  for (const test::Flavor flavor : test::all_flavors()) {
    auto fg = test::make_flavor_graph(flavor, {.batch = 2, .m = 40, .n = 24, .k = 32});
    ASSERT_TRUE(fg) << fg.status().message();
    graphs.push_back(std::move(fg->graph));
  }
  auto chained = fallback_only();
  ASSERT_TRUE(chained);
  graphs.push_back(std::move(chained.value()));
  for (const Graph& graph : graphs) {
    SCOPED_TRACE(graph.name());
    auto program = plan_program(graph);
    ASSERT_TRUE(program) << program.status().message();
    auto source = generate_step_source(program.value());
    ASSERT_TRUE(source) << source.status().message();
    ASSERT_EQ(source->entries.size(), program->steps.size());
    auto compiled = jit::compile(source->source, jit::CompileOptions{});
    ASSERT_TRUE(compiled) << compiled.status().message();
    for (std::size_t i = 0; i < program->steps.size(); ++i) {
      if (source->entries[i].empty()) {
        EXPECT_EQ(program->steps[i].kind, StepKind::kMatmul);
        continue;
      }
      const auto* f = compiled->resources.find(source->entries[i]);
      ASSERT_NE(f, nullptr) << source->entries[i] << " not in the ptxas report";
    }
    EXPECT_FALSE(compiled->resources.spills()) << compiled->log;
  }
}

}  // namespace
}  // namespace fusedgemm::fallback
