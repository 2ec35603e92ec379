// explain GRAPH [CALL]: a plan's recipe, or the verdict on one call described in JSON
// (docs/call-json.md). Nothing is launched and no address is dereferenced, so calls are
// described by shapes, strides and address offsets alone.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "call_json.h"
#include "commands.h"
#include "fusedgemm/context.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::tool {

namespace {

// A Context although the host device compiles nothing: a bad FUSEDGEMM_* value fails every
// command alike (docs/ENVIRONMENT.md).
Result<Plan> host_plan(const std::string& graph_path) {
  FG_ASSIGN_OR_RETURN(std::shared_ptr<Context> context, Context::create());
  FG_ASSIGN_OR_RETURN(Graph graph, load_graph(graph_path));
  return build(graph, BuildOptions{make_host_device(), std::move(context)});
}

int describe_one(Output& out, const std::string& graph_path) {
  auto plan = host_plan(graph_path);
  if (!plan) return out.error(plan.status());
  const std::string description = plan->describe();
  out.text("{}", description);
  out.at()["engine"] = std::string(to_string(plan->engine()));
  out.at()["recipe"] = description;
  return kExitOk;
}

}  // namespace

int explain_command(Output& out, const std::string& graph_path, const std::string& call_path) {
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(graph_path, ec);
  if (call_path.empty()) {
    const std::vector<std::string> paths = graph_files(graph_path);
    if (paths.empty()) return no_graph_files(out, graph_path);
    int code = kExitOk;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (folder) out.text("{}== {}\n", i == 0 ? "" : "\n", paths[i]);
      out.begin_graph(paths[i]);
      std::fflush(stdout);
      code = worst_exit(code, describe_one(out, paths[i]));
    }
    return code;
  }
  if (folder) {
    return out.error(ErrorCode::kInvalidArgument,
                     fmt::format("explain: '{}' is a folder; a call is explained against one "
                                 "graph file",
                                 graph_path),
                     kExitCannotRun);
  }
  out.begin_graph(graph_path);
  out.at()["call"] = call_path;
  auto plan = host_plan(graph_path);
  if (!plan) return out.error(plan.status());
  auto call = load_call(call_path);
  if (!call) return out.error(call.status());
  // A workspace of the size the call names, at an address nobody reads.
  const Workspace workspace{
      call->workspace_bytes ? reinterpret_cast<void*>(kFakeBase - kFakeSpacing) : nullptr,
      call->workspace_bytes};
  const Verdict verdict = plan->explain(call->pack, workspace);
  out.at()["legal"] = verdict.legal();
  if (verdict.legal()) {
    out.text("legal: the call passes every rule\n");
    return kExitOk;
  }
  out.at()["rule"] = verdict.rule;
  out.at()["message"] = verdict.message;
  out.text("refused by rule {}\n  {}\n", verdict.rule, verdict.message);
  return kExitFailed;
}

}  // namespace fusedgemm::tool
