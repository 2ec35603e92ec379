// fusedgemm: validate, analyze, run, compile and explain fused GEMM graphs from the command line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "commands.h"
#include "fusedgemm/version.h"

namespace {

// The exit codes of tools/commands.h, stated once for every command's --help.
constexpr const char* kExitCodes =
    "Exit codes: 0 all good; 1 a check failed (an output FAIL, a refused call, a spill, a "
    "graph the forced fused engine declines, a graph neither engine runs); 2 could not run "
    "(unreadable file, invalid graph, a folder with no *.json files, bad usage).";

int run_tool(int argc, char** argv) {
  using namespace fusedgemm::tool;
  CLI::App app{"fusedgemm: fused GEMM graphs for NVIDIA Hopper"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fusedgemm " + std::string(fusedgemm::version()),
                       "print the version and exit");
  app.footer(kExitCodes);

  std::string path;
  auto* validate =
      app.add_subcommand("validate", "validate a graph (or every graph of a folder) and print it");
  validate->add_option("graph", path, "graph JSON file, or a folder of them")->required();

  auto* analyze =
      app.add_subcommand("analyze", "print a graph's fusion program and support verdict");
  analyze->add_option("graph", path, "graph JSON file, or a folder of them")->required();

  RunOptions run_options;
  auto* run = app.add_subcommand(
      "run", "build, execute on random inputs and check every output against an fp64 reference");
  run->add_option("graph", run_options.path, "graph JSON file, or a folder of them")->required();
  run->add_option("--m", run_options.m, "rows of the problem");
  run->add_option("--n", run_options.n, "columns of the problem");
  run->add_option("--k", run_options.k, "reduction extent of the problem");
  run->add_option("--batch", run_options.batch, "batch of the problem");
  run->add_option("--seed", run_options.seed, "seed of the random inputs")
      ->check(CLI::Validator(
          [](std::string& text) {
            // A negative number would wrap to 2^64 - 1 and beyond unnoticed.
            return text.starts_with("-") ? std::string("a seed from 0 to 2^64 - 1") : std::string();
          },
          "0 to 2^64 - 1"));
  run->add_option("--engine", run_options.engine,
                  "force an engine (default: fused, or fallback for a declined graph)")
      ->check(CLI::IsMember({"fused", "fallback"}));
  run->add_option("--timed-calls", run_options.timed_calls,
                  "calls timed after the checked one, on a GPU (0: none, as under "
                  "compute-sanitizer, whose trackers grow with every launch)")
      ->check(CLI::Range(0, 100000));

  CompileCommandOptions compile_options;
  auto* compile = app.add_subcommand(
      "compile",
      "generate and compile (or find in the kernel cache) each graph's sm_90a kernel, "
      "no GPU needed, and print its ptxas resources");
  compile->footer(
      "Exit 0: every graph compiled without spills (a graph the support gate declines: its "
      "fallback engine step kernels). A graph of a type the generator does not emit yet prints "
      "\"not compiled: <reason>\" and does not fail. Exit 1: a kernel spills or NVRTC refuses it. "
      "Exit 2: an error (unreadable or invalid graph, a folder with no *.json files, no NVRTC). "
      "FUSEDGEMM_CACHE_DIR and the other FUSEDGEMM_* variables apply as in build().");
  compile->add_option("graph", compile_options.path, "graph JSON file, or a folder of them")
      ->required();
  compile->add_option("--m", compile_options.m, "rows of the problem to choose the tile for");
  compile->add_option("--n", compile_options.n, "columns of the problem");
  compile->add_option("--k", compile_options.k, "reduction extent of the problem");
  compile->add_option("--batch", compile_options.batch, "batch of the problem");
  compile
      ->add_option("--sm-count", compile_options.sm_count,
                   "multiprocessors the tile choice plans for (default: the local GPU's)")
      ->check(CLI::Range(0, 4096));
  compile->add_option("--arch", compile_options.arch, "target architecture; only sm_90a")
      ->capture_default_str();

  std::string call_path;
  bool list_rules = false;
  auto* explain = app.add_subcommand(
      "explain", "print a plan's recipe, or the verdict on a call (CALL.json), or the rule table");
  explain->add_flag("--rules", list_rules, "print the rule table");
  explain->add_option("graph", path, "graph JSON file (without a call: or a folder of them)");
  explain->add_option("call", call_path, "call JSON file (docs/call-json.md)");
  bool json = false;
  for (CLI::App* command : {validate, analyze, run, compile, explain}) {
    if (command->get_footer().empty()) command->footer(kExitCodes);
    command->add_flag("--json", json,
                      "print one JSON document on stdout instead of text (docs/tool-json.md)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" of exit code 0; every real parse error (CLI11's own
    // codes: 104 conversion, 105 validation, 106 required, 109 extras, ...) is bad usage.
    // Asked for JSON, bad usage is a document too: CLI11 may stop before it reads --json.
    const std::span<char* const> args(argv, static_cast<std::size_t>(argc));
    const bool wants_json = std::any_of(
        args.begin(), args.end(), [](const char* a) { return a == std::string_view("--json"); });
    if (e.get_exit_code() == 0 || !wants_json) {
      const int code = app.exit(e);
      return code == 0 ? kExitOk : kExitCannotRun;
    }
    CLI::App* const named = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    Output out(named != nullptr ? named->get_name() : std::string(), true);
    return out.finish(out.error("invalid argument", e.what(), kExitCannotRun));
  }
  CLI::App* const chosen = app.get_subcommands().front();
  Output out(chosen->get_name(), json);
  if (*validate) return out.finish(validate_command(out, path));
  if (*analyze) return out.finish(analyze_command(out, path));
  if (*run) return out.finish(run_command(out, run_options));
  if (*compile) return out.finish(compile_command(out, compile_options));
  if (list_rules) return out.finish(explain_rules_command(out));
  if (path.empty()) {
    return out.finish(out.error("invalid argument",
                                "explain: give a graph (and optionally a call), or --rules",
                                kExitCannotRun));
  }
  return out.finish(explain_command(out, path, call_path));
}

}  // namespace

// Every failure the commands foresee is an error value; this is the last guard, so that an
// allocation the host cannot make (or any other throw) is an exit code with a message, not
// an abort.
int main(int argc, char** argv) {
  try {
    return run_tool(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error (internal):\nout of host memory (std::bad_alloc)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error (internal):\nuncaught exception: %s\n", e.what());
  }
  return fusedgemm::tool::kExitCannotRun;
}
