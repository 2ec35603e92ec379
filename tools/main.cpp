// fusedgemm: validate, analyze, run, compile and explain fused GEMM graphs from the command line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "commands.h"
#include "fusedgemm/version.h"

namespace {

// The exit codes of tools/commands.h, stated once for every command's --help.
constexpr const char* kExitCodes =
    "Exit codes: 0 all good; 1 a check failed (an output FAIL, a refused call, a spill, a "
    "graph the forced fused engine declines, a graph neither engine runs); 2 could not run "
    "(unreadable file, invalid graph, a folder with no *.json files, bad usage).";

// A whole number that fits T: CLI11 clamps one past T's range to its end, so that 2^64 read
// as 2^64 - 1, unnoticed (and a negative seed would wrap).
template <class T>
CLI::Validator fits(std::string description) {
  return CLI::Validator(
      [description](std::string& text) {
        T value{};
        const char* end = text.data() + text.size();
        const auto [at, error] = std::from_chars(text.data(), end, value);
        return error == std::errc() && at == end ? std::string()
                                                 : "'" + text + "': legal: " + description;
      },
      description);
}
const CLI::Validator kInt64 = fits<std::int64_t>("an integer from -2^63 to 2^63 - 1");
const CLI::Validator kUint64 = fits<std::uint64_t>("an integer from 0 to 2^64 - 1");

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
  run->add_option("--m", run_options.m, "rows of the problem")->check(kInt64);
  run->add_option("--n", run_options.n, "columns of the problem")->check(kInt64);
  run->add_option("--k", run_options.k, "reduction extent of the problem")->check(kInt64);
  run->add_option("--batch", run_options.batch, "batch of the problem")->check(kInt64);
  run->add_option("--seed", run_options.seed, "seed of the random inputs")->check(kUint64);
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
  compile->add_option("--m", compile_options.m, "rows of the problem to choose the tile for")
      ->check(kInt64);
  compile->add_option("--n", compile_options.n, "columns of the problem")->check(kInt64);
  compile->add_option("--k", compile_options.k, "reduction extent of the problem")->check(kInt64);
  compile->add_option("--batch", compile_options.batch, "batch of the problem")->check(kInt64);
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
    const bool wants_json = std::any_of(args.begin(), args.end(), [](const char* a) {
      const std::string_view arg(a);
      return arg == "--json" || arg.starts_with("--json=");
    });
    // A first argument that is no option and no command: name it, where CLI11 says only
    // that a command is required.
    std::string commands;
    bool known = false;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      commands += (commands.empty() ? "" : ", ") + command->get_name();
      known = known || (argc > 1 && command->get_name() == argv[1]);
    }
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-' && !known) {
      Output out(std::string(), wants_json);
      return out.finish(out.error(
          fusedgemm::ErrorCode::kInvalidArgument,
          std::string("unknown command '") + argv[1] + "'; legal: " + commands, kExitCannotRun));
    }
    if (e.get_exit_code() == 0 || !wants_json) {
      const int code = app.exit(e);
      return code == 0 ? kExitOk : kExitCannotRun;
    }
    CLI::App* const named = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    Output out(named != nullptr ? named->get_name() : std::string(), true);
    return out.finish(out.error(fusedgemm::ErrorCode::kInvalidArgument, e.what(), kExitCannotRun));
  }
  CLI::App* const chosen = app.get_subcommands().front();
  Output out(chosen->get_name(), json);
  if (*validate) return out.finish(validate_command(out, path));
  if (*analyze) return out.finish(analyze_command(out, path));
  if (*run) return out.finish(run_command(out, run_options));
  if (*compile) return out.finish(compile_command(out, compile_options));
  if (list_rules && !(path.empty() && call_path.empty())) {
    return out.finish(out.error(fusedgemm::ErrorCode::kInvalidArgument,
                                "explain --rules prints the rule table and takes no graph or call; "
                                "legal: explain --rules, or explain GRAPH [CALL]",
                                kExitCannotRun));
  }
  if (list_rules) return out.finish(explain_rules_command(out));
  if (path.empty()) {
    return out.finish(out.error(fusedgemm::ErrorCode::kInvalidArgument,
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
  } catch (const std::system_error& e) {
    // fmt's print throws this when stdout cannot be written (a full disk, a closed stream).
    std::fprintf(stderr, "error (io):\n%s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error (internal):\nuncaught exception: %s\n", e.what());
  }
  return fusedgemm::tool::kExitCannotRun;
}
