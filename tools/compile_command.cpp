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
#include "fallback/fallback_recipe.h"
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
#include "runtime/plan_state.h"

namespace fusedgemm::tool {

namespace {

enum class Outcome { kCompiled, kSpilled, kNotCompiled, kFailed, kError };

const char* outcome_text(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompiled: return "ready";
    case Outcome::kSpilled: return "spilled";
    case Outcome::kNotCompiled: return "not_compiled";
    case Outcome::kFailed: return "failed";
    case Outcome::kError: return "error";
  }
  return "?";
}

const char* cache_outcome_text(jit::CacheOutcome outcome) {
  switch (outcome) {
    case jit::CacheOutcome::kCompiled: return "compiled";
    case jit::CacheOutcome::kDiskHit: return "disk cache hit";
    case jit::CacheOutcome::kMemoryHit: return "memory cache hit";
  }
  return "?";
}

// A declined graph's fallback step kernels: compiled into the cache build() will read.
Outcome compile_fallback(Output& out, const Graph& graph, Context& context) {
  auto program = fallback::plan_program(graph);
  if (!program) return out.error(program.status()), Outcome::kError;
  // What build() refuses is not compiled either (fallback_buffer_count: a graph of 2000
  // matmuls kept NVRTC busy for minutes).
  if (auto recipe = fallback::make_recipe(program.value()); !recipe) {
    return out.error(recipe.status()), Outcome::kError;
  }
  auto source = fallback::generate_step_source(program.value());
  if (!source) return out.error(source.status()), Outcome::kError;
  auto compiled = context.compile(source->source, jit::CompileOptions{});
  if (!compiled) {
    out.error(compiled.status());
    return compiled.status().code() == ErrorCode::kCompile ? Outcome::kFailed : Outcome::kError;
  }
  int kernels = 0, registers = 0;
  for (const auto& f : compiled->kernel->resources.functions) {
    if (!f.is_entry) continue;
    ++kernels;
    registers = std::max(registers, f.registers);
  }
  out.text("  fallback engine: {} steps, {} step kernels {} in {:.3f} s, at most {} registers{}\n",
           program->steps.size(), kernels, cache_outcome_text(compiled->outcome), compiled->seconds,
           registers,
           compiled->kernel->resources.spills() ? "; FAIL: a step kernel spills" : ", no spills");
  out.at()["fallback"] = {{"steps", program->steps.size()},
                          {"kernels", kernels},
                          {"cache", cache_outcome_text(compiled->outcome)},
                          {"seconds", compiled->seconds},
                          {"registers", registers},
                          {"spills", compiled->kernel->resources.spills()}};
  return compiled->kernel->resources.spills() ? Outcome::kSpilled : Outcome::kCompiled;
}

// A graph build() declines (by the gate, or past it): the decline, then its fallback kernels.
Outcome compile_declined(Output& out, const Decline& decline, const Graph& graph,
                         Context& context) {
  out.text("  declined by rule {}\n  {}\n", decline.rule, decline.message);
  out.at()["declined"] = {{"rule", decline.rule}, {"message", decline.message}};
  return compile_fallback(out, graph, context);
}

Outcome compile_one(Output& out, const std::string& path, Context& context, int sm_count,
                    const reference::ProblemOverride& size) {
  out.text("== {}\n", path);
  auto graph = load_graph(path);
  if (!graph) return out.error(graph.status()), Outcome::kError;
  if (Status s = graph->validate(); !s) return out.error(s), Outcome::kError;
  if (size.any()) {
    // A graph declined by a structure rule (a chained GEMM) has no one problem to resize; its
    // plan is the fallback engine's, which build() makes at the declared dims, so those are
    // the kernels a cache needs. resize_graph refuses such a graph before changing it.
    if (Status s = reference::resize_graph(graph.value(), size); !s) {
      if (s.code() != ErrorCode::kDeclined) return out.error(s), Outcome::kError;
      out.text("  at the declared dims: --batch/--m/--n/--k resize one GEMM problem ({})\n",
               s.message());
      out.at()["declared_dims"] = s.message();
    }
    if (Status s = graph->validate(); !s) return out.error(s), Outcome::kError;
  }
  auto analysis = fusion::analyze(graph.value());
  if (!analysis) return out.error(analysis.status()), Outcome::kError;
  std::optional<Decline> decline = analysis->decline;
  if (!decline) decline = recipe::check_support(analysis->program);
  if (decline) return compile_declined(out, *decline, graph.value(), context);

  auto program = std::make_shared<const fusion::FusionProgram>(std::move(analysis->program));
  auto chosen = recipe::choose_kernel_config(*program, sm_count);
  if (!chosen) {
    if (chosen.status().code() != ErrorCode::kUnavailable) {
      return out.error(chosen.status()), Outcome::kError;
    }
    return compile_declined(out, recipe::decline_of(chosen.status().message()), graph.value(),
                            context);
  }
  auto recipe = recipe::make_recipe(program, chosen.value());
  if (!recipe) return out.error(recipe.status()), Outcome::kError;
  // As build(): a declared call that breaks a call rule declines the graph (padded scales).
  if (auto refused = runtime::PlanState(Engine::kFused, std::nullopt,
                                        make_compile_only_device(sm_count), nullptr, recipe.value())
                         .declared_call_decline()) {
    return compile_declined(out, *refused, graph.value(), context);
  }
  out.progress(fmt::format("compiling {}", path));
  auto kernel = api::compile_fused_kernel(recipe.value(), context);
  out.done();
  if (!kernel) {
    switch (kernel.status().code()) {
      case ErrorCode::kUnavailable:  // a type or layout the generator does not emit yet
        // On a GPU build() declines a kernel_* refusal to the fallback engine: its kernels.
        if (kernel.status().message().starts_with("kernel_")) {
          return compile_declined(out, recipe::decline_of(kernel.status().message()), graph.value(),
                                  context);
        }
        out.text("  not compiled: {}\n", kernel.status().message());
        out.at()["not_compiled"] = kernel.status().message();
        return Outcome::kNotCompiled;
      case ErrorCode::kCompile:  // NVRTC refused the generated source
        out.error(kernel.status());
        return Outcome::kFailed;
      default: return out.error(kernel.status()), Outcome::kError;
    }
  }

  const jit::CompileResult& compiled = kernel->compiled;
  const recipe::KernelConfig& config = recipe->config;
  out.text("  {} in {:.3f} s (cache key {:.16})\n", cache_outcome_text(compiled.outcome),
           compiled.seconds, compiled.key);
  if (out.json() && compiled.outcome == jit::CacheOutcome::kCompiled) {
    out.note(fmt::format("fusedgemm: {}: compiled in {:.2f} s", path, compiled.seconds));
  }
  if (!compiled.warning.empty()) out.text("  warning: {}\n", compiled.warning);
  out.text("  {}; {} bytes dynamic shared memory; {} threads\n", recipe::describe(config),
           config.shared_bytes, config.threads);
  nlohmann::json& fused = out.at()["kernel"];
  fused = {{"cache", cache_outcome_text(compiled.outcome)},
           {"seconds", compiled.seconds},
           {"cache_key", compiled.key},
           {"config", recipe::describe(config)},
           {"shared_bytes", config.shared_bytes},
           {"threads", config.threads}};
  if (!compiled.warning.empty()) fused["warning"] = compiled.warning;
  const jit::FunctionResources* entry = compiled.kernel->resources.find(kernel->image.entry);
  if (entry == nullptr) {
    out.error(
        Status(ErrorCode::kInternal, fmt::format("ptxas reported no function '{}'; the log:\n{}",
                                                 kernel->image.entry, compiled.kernel->log)));
    return Outcome::kError;
  }
  out.text(
      "  {}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes stack frame, {} "
      "bytes static shared\n",
      entry->name, entry->registers, entry->spill_store_bytes, entry->spill_load_bytes,
      entry->stack_frame_bytes, entry->shared_static_bytes);
  fused["entry"] = entry->name;
  fused["registers"] = entry->registers;
  fused["spill_store_bytes"] = entry->spill_store_bytes;
  fused["spill_load_bytes"] = entry->spill_load_bytes;
  fused["stack_frame_bytes"] = entry->stack_frame_bytes;
  fused["static_shared_bytes"] = entry->shared_static_bytes;
  fused["performance_warnings"] = compiled.kernel->resources.performance_warnings;
  for (const auto& warning : compiled.kernel->resources.performance_warnings) {
    out.text("  FAIL: {}\n", warning);
  }
  if (compiled.kernel->resources.spills()) {
    out.text("  FAIL: the kernel spills registers\n");
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

int compile_command(Output& out, const CompileCommandOptions& options) {
  if (options.arch != "sm_90a") {
    return out.error(ErrorCode::kInvalidArgument,
                     fmt::format("compile: --arch {}: only sm_90a is generated (the kernel uses "
                                 "wgmma and TMA)",
                                 options.arch),
                     kExitCannotRun);
  }
  const std::vector<std::string> paths = graph_files(options.path);
  if (paths.empty()) return no_graph_files(out, options.path);

  auto context = Context::create();
  if (!context) return out.error(context.status()), kExitCannotRun;
  const int sm_count = options.sm_count > 0 ? options.sm_count : local_sm_count();
  const ContextSettings& settings = context.value()->settings();
  const std::string cache = settings.cache_disabled      ? std::string("disabled")
                            : settings.cache_dir.empty() ? std::string("in memory only")
                                                         : settings.cache_dir.string();
  out.text("kernel cache: {}; tiles planned for {} multiprocessors{}\n", cache, sm_count,
           sm_count == 0 ? " (none known: --sm-count)" : "");
  out.top()["kernel_cache"] = cache;
  out.top()["sm_count"] = sm_count;

  int compiled = 0, spilled = 0, not_compiled = 0, failed = 0, errors = 0;
  for (const auto& path : paths) {
    const reference::ProblemOverride size{options.batch, options.m, options.n, options.k, {}, {}};
    out.begin_graph(path);
    const Outcome outcome = compile_one(out, path, *context.value(), sm_count, size);
    out.at()["outcome"] = outcome_text(outcome);
    switch (outcome) {
      case Outcome::kCompiled: ++compiled; break;
      case Outcome::kSpilled: ++spilled; break;
      case Outcome::kNotCompiled: ++not_compiled; break;
      case Outcome::kFailed: ++failed; break;
      case Outcome::kError: ++errors; break;
    }
  }
  out.text(
      "\n{} graphs: {} kernels ready (compiled or cached), {} spilled or serialized, {} not "
      "compiled (declined or not generated yet), {} failed to compile, {} errors\n",
      paths.size(), compiled, spilled, not_compiled, failed, errors);
  out.top()["summary"] = {{"ready", compiled},
                          {"spilled", spilled},
                          {"not_compiled", not_compiled},
                          {"failed", failed},
                          {"errors", errors}};
  if (errors != 0) return kExitCannotRun;
  return spilled + failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace fusedgemm::tool
