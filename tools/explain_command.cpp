// explain GRAPH [CALL]: a plan's recipe, or the verdict on one call described in JSON
// (docs/call-json.md). Nothing is launched and no address is dereferenced, so calls are
// described by shapes, strides and address offsets alone.
#include <cstdio>

#include "call_json.h"
#include "commands.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::tool {

int report(const Status& status);

int explain_command(const std::string& graph_path, const std::string& call_path) {
  auto graph = load_graph(graph_path);
  if (!graph) return report(graph.status());
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  if (!plan) return report(plan.status());
  if (call_path.empty()) {
    std::printf("%s", plan->describe().c_str());
    return 0;
  }
  auto call = load_call(call_path);
  if (!call) return report(call.status());
  // A workspace of the size the call names, at an address nobody reads.
  const Workspace workspace{
      call->workspace_bytes ? reinterpret_cast<void*>(kFakeBase - kFakeSpacing) : nullptr,
      call->workspace_bytes};
  const Verdict verdict = plan->explain(call->pack, workspace);
  if (verdict.legal()) {
    std::printf("legal: the call passes every rule\n");
    return 0;
  }
  std::printf("refused by rule %s\n  %s\n", verdict.rule.c_str(), verdict.message.c_str());
  return 1;
}

}  // namespace fusedgemm::tool
