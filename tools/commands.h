// The subcommands of the `fusedgemm` tool. Each returns the process exit code, the same
// three for every command (and for the command line itself):
//   0 (kExitOk)        everything passed: valid graphs, every output PASS, a legal call,
//                      every kernel compiled without spills;
//   1 (kExitFailed)    the command ran and a check failed: an output FAIL, a refused call,
//                      a spill, `run --engine fused` on a graph the fused engine declines;
//   2 (kExitCannotRun) it could not run: an unreadable file, an invalid graph, a folder
//                      with no *.json files, bad usage (every CLI11 parse error).
// Over a folder the worst code of its graphs wins (2 over 1 over 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/status.h"
#include "output.h"

namespace fusedgemm::tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitCannotRun = 2;

// `path` itself, or every *.json file in it (sorted) when it is a folder (none: empty).
std::vector<std::string> graph_files(const std::string& path);

// A folder with no graph in it: an error naming it, kExitCannotRun.
int no_graph_files(Output& out, const std::string& path);
int worst_exit(int a, int b);

// Every command writes its findings through `out` (text, or the --json document) and returns
// the exit code; the caller finishes `out` with it.

// validate and analyze take a graph file or a folder. An invalid graph is kExitCannotRun for
// both; analyze's support verdict (fused, or declined to the fallback) is not a failure.
int validate_command(Output& out, const std::string& path);
int analyze_command(Output& out, const std::string& path);

struct RunOptions {
  std::string path;  // a graph file, or a folder whose *.json files all run
  std::optional<std::int64_t> m, n, k, batch;
  std::uint64_t seed = 1;
  std::string engine;     // "fused" or "fallback" forces one; empty: fused unless declined
  int timed_calls = 200;  // on a GPU, after the checked call and 10 warm ones; 0: no timing
};
int run_command(Output& out, const RunOptions& options);

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
int compile_command(Output& out, const CompileCommandOptions& options);

int explain_rules_command(Output& out);
// Without a call: each plan's recipe (a graph file or a folder). With one: the verdict on the
// call against one graph file, kExitFailed when a rule refuses it.
int explain_command(Output& out, const std::string& graph_path, const std::string& call_path);

}  // namespace fusedgemm::tool
