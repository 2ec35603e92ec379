// explain GRAPH [CALL]: a plan's recipe, or the verdict on one call described in JSON
// (docs/call-json.md). Nothing is launched and no address is dereferenced, so calls are
// described by shapes, strides and address offsets alone.
#include <cstdio>
#include <filesystem>

#include "call_json.h"
#include "commands.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::tool {

namespace {

Result<Plan> host_plan(const std::string& graph_path) {
  FG_ASSIGN_OR_RETURN(Graph graph, load_graph(graph_path));
  return build(graph, BuildOptions{make_host_device()});
}

int describe_one(const std::string& graph_path) {
  auto plan = host_plan(graph_path);
  if (!plan) return report(plan.status());
  std::printf("%s", plan->describe().c_str());
  return kExitOk;
}

}  // namespace

int explain_command(const std::string& graph_path, const std::string& call_path) {
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(graph_path, ec);
  if (call_path.empty()) {
    const std::vector<std::string> paths = graph_files(graph_path);
    if (paths.empty()) return no_graph_files(graph_path);
    int code = kExitOk;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (folder) std::printf("%s== %s\n", i == 0 ? "" : "\n", paths[i].c_str());
      std::fflush(stdout);
      code = worst_exit(code, describe_one(paths[i]));
    }
    return code;
  }
  if (folder) {
    std::fprintf(stderr, "explain: '%s' is a folder; a call is explained against one graph file\n",
                 graph_path.c_str());
    return kExitCannotRun;
  }
  auto plan = host_plan(graph_path);
  if (!plan) return report(plan.status());
  auto call = load_call(call_path);
  if (!call) return report(call.status());
  // A workspace of the size the call names, at an address nobody reads.
  const Workspace workspace{
      call->workspace_bytes ? reinterpret_cast<void*>(kFakeBase - kFakeSpacing) : nullptr,
      call->workspace_bytes};
  const Verdict verdict = plan->explain(call->pack, workspace);
  if (verdict.legal()) {
    std::printf("legal: the call passes every rule\n");
    return kExitOk;
  }
  std::printf("refused by rule %s\n  %s\n", verdict.rule.c_str(), verdict.message.c_str());
  return kExitFailed;
}

}  // namespace fusedgemm::tool
