// build(): the one place that sees every layer of the pipeline, in order.
#include <fmt/format.h>

#include "api/kernel_build.h"
#include "codegen/epilogue.h"
#include "codegen/kernel_source.h"
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

Result<FusedKernel> compile_fused_kernel(recipe::Recipe& recipe, Context& context,
                                         int driver_version) {
  FG_ASSIGN_OR_RETURN(std::string epilogue, codegen::generate_epilogue(*recipe.program, recipe));
  FG_ASSIGN_OR_RETURN(std::uint32_t scratch,
                      codegen::epilogue_scratch_bytes(*recipe.program, recipe));
  FG_ASSIGN_OR_RETURN(codegen::KernelSource source,
                      codegen::generate_kernel_source(recipe, {std::move(epilogue), scratch}));
  jit::KernelSource jit_source{source.program_name, source.source, {}};
  for (const auto& header : source.headers) {
    jit_source.headers.emplace_back(std::string(header.name), std::string(header.contents));
  }
  FG_ASSIGN_OR_RETURN(jit::CompileResult compiled,
                      context.compile(jit_source, jit::CompileOptions{}, driver_version));
  FusedKernel kernel{{}, std::move(compiled)};
  kernel.image.entry = source.entry;
  kernel.image.cubin = kernel.compiled.kernel->cubin;
  kernel.image.tma = source.tma;
  kernel.image.max_shared_bytes = source.shared_bytes;
  recipe.config.shared_bytes = source.shared_bytes;
  recipe.config.threads = static_cast<int>(source.block_threads);
  return kernel;
}

}  // namespace api

Result<Plan> build(Graph& graph, const BuildOptions& options) {
  FG_TRY(graph.validate());
  FG_ASSIGN_OR_RETURN(fusion::Analysis analysis, fusion::analyze(graph));
  std::optional<Decline> decline = analysis.decline;
  if (!decline) decline = recipe::check_support(analysis.program);
  // The fallback engine (issue 5) will run declined graphs; until then a decline is final.
  if (decline) return Status(ErrorCode::kDeclined, decline->message);

  auto program = std::make_shared<const fusion::FusionProgram>(std::move(analysis.program));
  const recipe::KernelConfig config = recipe::choose_kernel_config(*program);
  FG_ASSIGN_OR_RETURN(recipe::Recipe recipe, recipe::make_recipe(program, config));

  std::shared_ptr<Device> device = options.device ? options.device : default_device();
  runtime::KernelImage image;
  image.entry = "fusedgemm_kernel";
  image.program = program;
  for (const auto& role : recipe.roles) image.params.push_back({role.kind, role.index});
  if (!device->is_host()) {
    std::shared_ptr<Context> context = options.context;
    if (!context) {
      FG_ASSIGN_OR_RETURN(context, Context::create());
    }
    FG_ASSIGN_OR_RETURN(api::FusedKernel fused,
                        api::compile_fused_kernel(recipe, *context, device->driver_version()));
    image.entry = fused.image.entry;
    image.cubin = std::move(fused.image.cubin);
    image.tma = std::move(fused.image.tma);
    image.max_shared_bytes = fused.image.max_shared_bytes;
  }
  FG_ASSIGN_OR_RETURN(auto kernel, device->load(image));

  return Plan(std::make_shared<const runtime::PlanState>(
      Engine::kFused, std::nullopt, std::move(device), std::move(kernel), std::move(recipe)));
}

}  // namespace fusedgemm
