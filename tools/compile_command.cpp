// compile GRAPH|FOLDER: generate each graph's fused kernel and compile it for sm_90a through
// the Context's kernel cache, with no GPU needed: warms a cache ahead of time and prints
// what ptxas reports for the kernel.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "api/kernel_build.h"
#include "commands.h"
#include "fallback/program.h"
#include "fallback/step_source.h"
#include "fusedgemm/context.h"
#include "fusedgemm/device.h"
#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "jit/context.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"
#include "reference/resize.h"
#include "runtime/device.h"

namespace fusedgemm::tool {

namespace {

enum class Outcome { kCompiled, kSpilled, kNotCompiled, kFailed, kError };

const char* cache_outcome_text(jit::CacheOutcome outcome) {
  switch (outcome) {
    case jit::CacheOutcome::kCompiled: return "compiled";
    case jit::CacheOutcome::kDiskHit: return "disk cache hit";
    case jit::CacheOutcome::kMemoryHit: return "memory cache hit";
  }
  return "?";
}

// A declined graph's fallback step kernels: compiled into the cache build() will read.
Outcome compile_fallback(const Graph& graph, Context& context) {
  auto program = fallback::plan_program(graph);
  if (!program) return report(program.status()), Outcome::kError;
  auto source = fallback::generate_step_source(program.value());
  if (!source) return report(source.status()), Outcome::kError;
  auto compiled = context.compile(source->source, jit::CompileOptions{});
  if (!compiled) {
    report(compiled.status());
    return compiled.status().code() == ErrorCode::kCompile ? Outcome::kFailed : Outcome::kError;
  }
  int kernels = 0, registers = 0;
  for (const auto& f : compiled->kernel->resources.functions) {
    if (!f.is_entry) continue;
    ++kernels;
    registers = std::max(registers, f.registers);
  }
  std::printf(
      "  fallback engine: %zu steps, %d step kernels %s in %.3f s, at most %d registers%s\n",
      program->steps.size(), kernels, cache_outcome_text(compiled->outcome), compiled->seconds,
      registers,
      compiled->kernel->resources.spills() ? "; FAIL: a step kernel spills" : ", no spills");
  return compiled->kernel->resources.spills() ? Outcome::kSpilled : Outcome::kCompiled;
}

Outcome compile_one(const std::string& path, Context& context, int sm_count,
                    const reference::ProblemOverride& size) {
  std::printf("== %s\n", path.c_str());
  auto graph = load_graph(path);
  if (!graph) return report(graph.status()), Outcome::kError;
  if (Status s = graph->validate(); !s) return report(s), Outcome::kError;
  if (size.any()) {
    // A graph declined by a structure rule (a chained GEMM) has no one problem to resize; its
    // plan is the fallback engine's, which build() makes at the declared dims, so those are
    // the kernels a cache needs. resize_graph refuses such a graph before changing it.
    if (Status s = reference::resize_graph(graph.value(), size); !s) {
      if (s.code() != ErrorCode::kDeclined) return report(s), Outcome::kError;
      std::printf("  at the declared dims: --batch/--m/--n/--k resize one GEMM problem (%s)\n",
                  s.message().c_str());
    }
    if (Status s = graph->validate(); !s) return report(s), Outcome::kError;
  }
  auto analysis = fusion::analyze(graph.value());
  if (!analysis) return report(analysis.status()), Outcome::kError;
  std::optional<Decline> decline = analysis->decline;
  if (!decline) decline = recipe::check_support(analysis->program);
  if (decline) {
    std::printf("  declined by rule %s\n  %s\n", decline->rule.c_str(), decline->message.c_str());
    return compile_fallback(graph.value(), context);
  }

  auto program = std::make_shared<const fusion::FusionProgram>(std::move(analysis->program));
  auto chosen = recipe::choose_kernel_config(*program, sm_count);
  if (!chosen) {
    if (chosen.status().code() != ErrorCode::kUnavailable) {
      return report(chosen.status()), Outcome::kError;
    }
    std::printf("  declined: %s\n", chosen.status().message().c_str());
    return compile_fallback(graph.value(), context);
  }
  auto recipe = recipe::make_recipe(program, chosen.value());
  if (!recipe) {
    if (recipe.status().code() != ErrorCode::kDeclined) {
      return report(recipe.status()), Outcome::kError;
    }
    std::printf("  not compiled: %s\n", recipe.status().message().c_str());
    return Outcome::kNotCompiled;
  }
  auto kernel = api::compile_fused_kernel(recipe.value(), context);
  if (!kernel) {
    switch (kernel.status().code()) {
      case ErrorCode::kUnavailable:  // a type or layout the generator does not emit yet
        std::printf("  not compiled: %s\n", kernel.status().message().c_str());
        return Outcome::kNotCompiled;
      case ErrorCode::kCompile:  // NVRTC refused the generated source
        report(kernel.status());
        return Outcome::kFailed;
      default: return report(kernel.status()), Outcome::kError;
    }
  }

  const jit::CompileResult& compiled = kernel->compiled;
  const recipe::KernelConfig& config = recipe->config;
  std::printf("  %s in %.3f s (cache key %.16s)\n", cache_outcome_text(compiled.outcome),
              compiled.seconds, compiled.key.c_str());
  if (!compiled.warning.empty()) std::printf("  warning: %s\n", compiled.warning.c_str());
  std::printf("  %s; %u bytes dynamic shared memory; %d threads\n",
              recipe::describe(config).c_str(), config.shared_bytes, config.threads);
  const jit::FunctionResources* entry = compiled.kernel->resources.find(kernel->image.entry);
  if (entry == nullptr) {
    report(Status(ErrorCode::kInternal, fmt::format("ptxas reported no function '{}'; the log:\n{}",
                                                    kernel->image.entry, compiled.kernel->log)));
    return Outcome::kError;
  }
  std::printf(
      "  %s: %d registers, %llu bytes spill stores, %llu bytes spill loads, %llu bytes "
      "stack frame, %llu bytes static shared\n",
      entry->name.c_str(), entry->registers,
      static_cast<unsigned long long>(entry->spill_store_bytes),
      static_cast<unsigned long long>(entry->spill_load_bytes),
      static_cast<unsigned long long>(entry->stack_frame_bytes),
      static_cast<unsigned long long>(entry->shared_static_bytes));
  for (const auto& warning : compiled.kernel->resources.performance_warnings) {
    std::printf("  FAIL: %s\n", warning.c_str());
  }
  if (compiled.kernel->resources.spills()) {
    std::printf("  FAIL: the kernel spills registers\n");
    return Outcome::kSpilled;
  }
  return compiled.kernel->resources.performance_warnings.empty() ? Outcome::kCompiled
                                                                 : Outcome::kSpilled;
}

// The local GPU's multiprocessor count, 0 without one.
int local_sm_count() {
  auto device = make_cuda_device(0);
  return device ? device.value()->multiprocessor_count() : 0;
}

}  // namespace

int compile_command(const CompileCommandOptions& options) {
  if (options.arch != "sm_90a") {
    std::fprintf(stderr,
                 "compile: --arch %s: only sm_90a is generated (the kernel uses wgmma and TMA)\n",
                 options.arch.c_str());
    return kExitCannotRun;
  }
  const std::vector<std::string> paths = graph_files(options.path);
  if (paths.empty()) return no_graph_files(options.path);

  auto context = Context::create();
  if (!context) return report(context.status()), kExitCannotRun;
  const int sm_count = options.sm_count > 0 ? options.sm_count : local_sm_count();
  const ContextSettings& settings = context.value()->settings();
  const std::string cache = settings.cache_disabled      ? std::string("disabled")
                            : settings.cache_dir.empty() ? std::string("in memory only")
                                                         : settings.cache_dir.string();
  std::printf("kernel cache: %s; tiles planned for %d multiprocessors%s\n", cache.c_str(), sm_count,
              sm_count == 0 ? " (none known: --sm-count)" : "");

  int compiled = 0, spilled = 0, not_compiled = 0, failed = 0, errors = 0;
  for (const auto& path : paths) {
    const reference::ProblemOverride size{options.batch, options.m, options.n, options.k, {}, {}};
    switch (compile_one(path, *context.value(), sm_count, size)) {
      case Outcome::kCompiled: ++compiled; break;
      case Outcome::kSpilled: ++spilled; break;
      case Outcome::kNotCompiled: ++not_compiled; break;
      case Outcome::kFailed: ++failed; break;
      case Outcome::kError: ++errors; break;
    }
  }
  std::printf(
      "\n%d graphs: %d kernels ready (compiled or cached), %d spilled or serialized, %d not "
      "compiled (declined "
      "or not generated "
      "yet), %d failed to compile, %d errors\n",
      static_cast<int>(paths.size()), compiled, spilled, not_compiled, failed, errors);
  if (errors != 0) return kExitCannotRun;
  return spilled + failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace fusedgemm::tool
