// validate, analyze and explain: commands that look at a graph or a call, running nothing.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "commands.h"
#include "fallback/fallback_recipe.h"
#include "fallback/program.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/graph_print.h"
#include "fusion/analyze.h"
#include "fusion/print.h"
#include "recipe/kernel_config.h"
#include "recipe/rules.h"
#include "recipe/support_gate.h"

namespace fusedgemm::tool {

std::vector<std::string> graph_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

int no_graph_files(Output& out, const std::string& path) {
  return out.error(ErrorCode::kInvalidArgument,
                   fmt::format("'{}': a folder with no *.json graph files", path), kExitCannotRun);
}

int worst_exit(int a, int b) {
  return a > b ? a : b;
}

namespace {

int validate_one(Output& out, const std::string& path) {
  auto graph = load_graph(path);
  if (!graph) return out.error(graph.status());
  const Status status = graph->validate();
  out.text("{}", to_string(graph.value()));
  out.at()["valid"] = status.is_ok();
  if (!status) return out.error(status);
  out.text("{}: valid\n", path);
  return kExitOk;
}

int analyze_one(Output& out, const std::string& path) {
  auto graph = load_graph(path);
  if (!graph) return out.error(graph.status());
  if (Status s = graph->validate(); !s) return out.error(s);
  auto analysis = fusion::analyze(graph.value());
  if (!analysis) return out.error(analysis.status());
  std::optional<Decline> decline = analysis->decline;
  if (!decline) {
    out.text("{}", fusion::to_string(analysis->program));
    decline = recipe::check_support(analysis->program);
  }
  if (!decline) {
    // As build() does: no kernel shape fitting the program is a decline too (kernel_config,
    // three block-scaled GEMMs). Whether one fits does not depend on the multiprocessors.
    auto config = recipe::choose_kernel_config(analysis->program, 0, {});
    if (!config && config.status().code() != ErrorCode::kUnavailable) {
      return out.error(config.status());
    }
    if (!config) decline = recipe::decline_of(config.status().message());
  }
  out.at()["fused"] = !decline.has_value();
  if (!decline) {
    out.text("support: the fused engine supports this graph\n");
    return kExitOk;
  }
  out.at()["declined"] = {{"rule", decline->rule}, {"message", decline->message}};
  out.text("support: declined by rule {}\n  {}\n", decline->rule, decline->message);
  // build() takes a declined graph to the fallback engine, which has limits of its own
  // (fallback_buffer_count): a graph neither engine takes is a failed check.
  auto steps = fallback::plan_program(graph.value());
  const Status fallback = steps ? fallback::make_recipe(steps.value()).status() : steps.status();
  out.at()["fallback"] = fallback.is_ok();
  if (!fallback) {
    out.at()["fallback_refusal"] = fallback.message();
    out.text("fallback engine: cannot run this graph either\n  {}\n", fallback.message());
    return kExitFailed;
  }
  out.text("fallback engine: runs this graph unfused\n");
  return kExitOk;
}

// Each graph of `path` (a file, or a folder's *.json files) through `one`, with a blank line
// between graphs of a folder; the worst exit code of them.
template <typename One>
int each_graph(Output& out, const std::string& path, One one) {
  const std::vector<std::string> paths = graph_files(path);
  if (paths.empty()) return no_graph_files(out, path);
  int code = kExitOk;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (paths.size() > 1) out.text("{}== {}\n", i == 0 ? "" : "\n", paths[i]);
    out.begin_graph(paths[i]);
    std::fflush(stdout);
    code = worst_exit(code, one(out, paths[i]));
  }
  return code;
}

}  // namespace

int validate_command(Output& out, const std::string& path) {
  return each_graph(out, path, validate_one);
}

int analyze_command(Output& out, const std::string& path) {
  return each_graph(out, path, analyze_one);
}

int explain_rules_command(Output& out) {
  const auto table = recipe::rule_table();
  out.text("{:<4} {:<24} {:<10} {}\n", "#", "rule", "scope", "legal");
  auto& rules = out.top()["rules"] = nlohmann::json::array();
  for (std::size_t i = 0; i < table.size(); ++i) {
    out.text("{:<4} {:<24} {:<10} {}\n", i, table[i].id, to_string(table[i].scope), table[i].legal);
    rules.push_back({{"id", std::string(table[i].id)},
                     {"scope", std::string(to_string(table[i].scope))},
                     {"legal", std::string(table[i].legal)}});
  }
  return kExitOk;
}

}  // namespace fusedgemm::tool
