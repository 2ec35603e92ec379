// build(): the one place that sees every layer of the pipeline, in order.
#include <fmt/format.h>

#include "api/kernel_build.h"
#include "codegen/epilogue.h"
#include "codegen/kernel_source.h"
#include "fallback/cuda_runner.h"
#include "fallback/fallback_recipe.h"
#include "fallback/host_runner.h"
#include "fallback/program.h"
#include "fusedgemm/context.h"
#include "fusedgemm/plan.h"
#include "fusion/analyze.h"
#include "jit/context.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"
#include "runtime/device.h"
#include "runtime/plan_state.h"

namespace fusedgemm {
namespace api {

Result<codegen::KernelSource> generate_fused_source(const recipe::Recipe& recipe) {
  FG_ASSIGN_OR_RETURN(std::string epilogue, codegen::generate_epilogue(*recipe.program, recipe));
  FG_ASSIGN_OR_RETURN(std::uint32_t scratch,
                      codegen::epilogue_scratch_bytes(*recipe.program, recipe));
  return codegen::generate_kernel_source(recipe, {std::move(epilogue), scratch});
}

Result<FusedKernel> compile_fused_kernel(recipe::Recipe& recipe, Context& context) {
  FG_ASSIGN_OR_RETURN(codegen::KernelSource source, generate_fused_source(recipe));
  jit::KernelSource jit_source{source.program_name, source.source, {}};
  for (const auto& header : source.headers) {
    jit_source.headers.emplace_back(std::string(header.name), std::string(header.contents));
  }
  FG_ASSIGN_OR_RETURN(jit::CompileResult compiled,
                      context.compile(jit_source, jit::CompileOptions{}));
  FusedKernel kernel{{}, std::move(compiled)};
  kernel.image.entry = source.entry;
  kernel.image.cubin = kernel.compiled.kernel->cubin;
  kernel.image.tma = source.tma;
  kernel.image.max_shared_bytes = source.shared_bytes;
  recipe.config.shared_bytes = source.shared_bytes;
  recipe.config.threads = static_cast<int>(source.block_threads);
  return kernel;
}

namespace {

Result<std::shared_ptr<Context>> context_of(const BuildOptions& options) {
  if (options.context) return options.context;
  return Context::create();
}

Result<Plan> build_fallback(const Graph& graph, std::optional<Decline> decline,
                            std::shared_ptr<Device> device, const BuildOptions& options) {
  FG_ASSIGN_OR_RETURN(fallback::Program planned, fallback::plan_program(graph));
  auto program = std::make_shared<const fallback::Program>(std::move(planned));
  Result<recipe::Recipe> made = fallback::make_recipe(*program);
  if (!made && decline) {  // neither engine runs the graph: say why the first declined
    return Status(
        made.status().code(),
        made.status().message() + "; the fused engine declined it too: " + decline->message);
  }
  FG_ASSIGN_OR_RETURN(recipe::Recipe recipe, std::move(made));
  std::shared_ptr<const runtime::Runner> runner;
  if (device->is_host()) {
    runner = fallback::make_host_runner(program);
  } else {
    FG_ASSIGN_OR_RETURN(std::shared_ptr<Context> context, context_of(options));
    FG_ASSIGN_OR_RETURN(runner, fallback::make_cuda_runner(program, device, *context));
  }
  return runtime::PlanAccess::make(std::make_shared<const runtime::PlanState>(
      Engine::kFallback, std::move(decline), std::move(device), nullptr, std::move(recipe),
      std::move(runner)));
}

}  // namespace
}  // namespace api

Result<Plan> build(Graph& graph, const BuildOptions& options) {
  FG_TRY(graph.validate());
  FG_ASSIGN_OR_RETURN(fusion::Analysis analysis, fusion::analyze(graph));
  std::optional<Decline> decline = analysis.decline;
  if (!decline) decline = recipe::check_support(analysis.program);
  const Engine engine = options.engine.value_or(decline ? Engine::kFallback : Engine::kFused);
  if (engine == Engine::kFused && decline) return Status(ErrorCode::kDeclined, decline->message);
  std::shared_ptr<Device> device = options.device ? options.device : default_device();
  if (engine == Engine::kFallback) {
    return api::build_fallback(graph, std::move(decline), std::move(device), options);
  }

  // A decline past the gate, as the gate's: kDeclined where the fused engine is forced, else
  // the fallback engine's plan.
  const auto declined = [&](Decline d) -> Result<Plan> {
    if (options.engine) return Status(ErrorCode::kDeclined, std::move(d.message));
    return api::build_fallback(graph, std::move(d), std::move(device), options);
  };
  auto program = std::make_shared<const fusion::FusionProgram>(std::move(analysis.program));
  auto config =
      recipe::choose_kernel_config(*program, device->multiprocessor_count(), options.tuning);
  // No kernel shape fits the program (kernel_config, kUnavailable).
  if (!config && config.status().code() == ErrorCode::kUnavailable) {
    return declined(recipe::decline_of(config.status().message()));
  }
  FG_TRY(config.status());
  FG_ASSIGN_OR_RETURN(recipe::Recipe recipe, recipe::make_recipe(program, config.value()));
  // A call rule that refuses the declared call refuses every call of that layout: no fused
  // plan is built that no declared call fits.
  if (auto refused = runtime::PlanState(Engine::kFused, std::nullopt, device, nullptr, recipe)
                         .declared_call_decline()) {
    return declined(std::move(*refused));
  }

  runtime::KernelImage image;
  image.entry = "fusedgemm_kernel";
  image.program = program;
  for (const auto& role : recipe.roles) image.params.push_back({role.kind, role.index});
  if (!device->is_host()) {
    FG_ASSIGN_OR_RETURN(std::shared_ptr<Context> context, api::context_of(options));
    auto compiled = api::compile_fused_kernel(recipe, *context);
    // The generator refuses what it does not emit yet (fp4 operands, say) with kUnavailable
    // and a "kernel_*" id: on a GPU such a graph is declined too, and runs unfused.
    if (!compiled && compiled.status().code() == ErrorCode::kUnavailable &&
        compiled.status().message().rfind("kernel_", 0) == 0) {
      return declined(recipe::decline_of(compiled.status().message()));
    }
    FG_ASSIGN_OR_RETURN(api::FusedKernel fused, std::move(compiled));
    image.entry = fused.image.entry;
    image.cubin = std::move(fused.image.cubin);
    image.tma = std::move(fused.image.tma);
    image.max_shared_bytes = fused.image.max_shared_bytes;
    image.block_threads = static_cast<unsigned>(recipe.config.threads);
    image.cluster_ctas = static_cast<unsigned>(recipe.config.cluster_ctas());
  }
  FG_ASSIGN_OR_RETURN(auto kernel, device->load(image));

  return Plan(std::make_shared<const runtime::PlanState>(
      Engine::kFused, std::nullopt, std::move(device), std::move(kernel), std::move(recipe)));
}

}  // namespace fusedgemm
