// The subcommands of the `fusedgemm` tool. Each returns the process exit code: 0 on
// success, 1 when the command ran and found a failure, 2 when it could not run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusedgemm::tool {

// `path` itself, or every *.json file in it (sorted) when it is a folder.
std::vector<std::string> graph_files(const std::string& path);

int validate_command(const std::string& path);
int analyze_command(const std::string& path);

struct RunOptions {
  std::string path;  // a graph file, or a folder whose *.json files all run
  std::optional<std::int64_t> m, n, k, batch;
  std::uint64_t seed = 1;
  std::string engine;  // "fused" or "fallback" forces one; empty: fused unless declined
};
int run_command(const RunOptions& options);

// Exit codes: 0 when every graph compiled without spills (the fused kernel, or for a graph
// the support gate declines its fallback step kernels); a graph of a type the generator does
// not emit yet (kUnavailable) prints "not compiled: <reason>" and does not fail. 1 when a kernel
// spills or NVRTC refuses a generated kernel; 2 on errors (unreadable graph, no NVRTC).
struct CompileCommandOptions {
  std::string path;  // a graph file, or a folder whose *.json files all compile
  std::string arch = "sm_90a";
  // The multiprocessor count the tile choice plans for: the local GPU's when 0 and there is
  // one (a cache warmed for another device count may hold another tile's kernel).
  int sm_count = 0;
  // The problem the kernel is chosen for (each graph resized to it first); the declared one
  // where unset.
  std::optional<std::int64_t> m, n, k, batch;
};
int compile_command(const CompileCommandOptions& options);

int explain_rules_command();
int explain_command(const std::string& graph_path, const std::string& call_path);

}  // namespace fusedgemm::tool
