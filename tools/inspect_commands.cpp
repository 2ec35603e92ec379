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

int report(const Status& status) {
  std::fprintf(stderr, "error (%s):\n%s\n", std::string(to_string(status.code())).c_str(),
               status.message().c_str());
  return status.code() == ErrorCode::kIllegalCall ? kExitFailed : kExitCannotRun;
}

int no_graph_files(const std::string& path) {
  std::fprintf(stderr, "error (invalid argument):\n'%s': a folder with no *.json graph files\n",
               path.c_str());
  return kExitCannotRun;
}

int worst_exit(int a, int b) {
  return a > b ? a : b;
}

namespace {

int validate_one(const std::string& path) {
  auto graph = load_graph(path);
  if (!graph) return report(graph.status());
  const Status status = graph->validate();
  if (!status) {
    std::printf("%s", to_string(graph.value()).c_str());
    return report(status);
  }
  std::printf("%s%s: valid\n", to_string(graph.value()).c_str(), path.c_str());
  return kExitOk;
}

int analyze_one(const std::string& path) {
  auto graph = load_graph(path);
  if (!graph) return report(graph.status());
  if (Status s = graph->validate(); !s) return report(s);
  auto analysis = fusion::analyze(graph.value());
  if (!analysis) return report(analysis.status());
  std::optional<Decline> decline = analysis->decline;
  if (!decline) {
    std::printf("%s", fusion::to_string(analysis->program).c_str());
    decline = recipe::check_support(analysis->program);
  }
  if (!decline) {
    std::printf("support: the fused engine supports this graph\n");
    return kExitOk;
  }
  std::printf("support: declined by rule %s\n  %s\n", decline->rule.c_str(),
              decline->message.c_str());
  // build() takes a declined graph to the fallback engine, which has limits of its own
  // (fallback_buffer_count): a graph neither engine takes is a failed check.
  auto steps = fallback::plan_program(graph.value());
  const Status fallback = steps ? fallback::make_recipe(steps.value()).status() : steps.status();
  if (!fallback) {
    std::printf("fallback engine: cannot run this graph either\n  %s\n",
                fallback.message().c_str());
    return kExitFailed;
  }
  std::printf("fallback engine: runs this graph unfused\n");
  return kExitOk;
}

// Each graph of `path` (a file, or a folder's *.json files) through `one`, with a blank line
// between graphs of a folder; the worst exit code of them.
template <typename One>
int each_graph(const std::string& path, One one) {
  const std::vector<std::string> paths = graph_files(path);
  if (paths.empty()) return no_graph_files(path);
  int code = kExitOk;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (paths.size() > 1) std::printf("%s== %s\n", i == 0 ? "" : "\n", paths[i].c_str());
    std::fflush(stdout);
    code = worst_exit(code, one(paths[i]));
  }
  return code;
}

}  // namespace

int validate_command(const std::string& path) {
  return each_graph(path, validate_one);
}

int analyze_command(const std::string& path) {
  return each_graph(path, analyze_one);
}

int explain_rules_command() {
  const auto table = recipe::rule_table();
  std::printf("%-4s %-24s %-10s %s\n", "#", "rule", "scope", "legal");
  for (std::size_t i = 0; i < table.size(); ++i) {
    std::printf("%-4zu %-24s %-10s %s\n", i, std::string(table[i].id).c_str(),
                std::string(to_string(table[i].scope)).c_str(),
                std::string(table[i].legal).c_str());
  }
  return 0;
}

}  // namespace fusedgemm::tool
