// build(): the one place that sees every layer of the pipeline, in order.
#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"
#include "runtime/device.h"
#include "runtime/plan_state.h"

namespace fusedgemm {

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
  FG_CHECK(device->is_host(), ErrorCode::kUnavailable,
           fmt::format("build: graph '{}': device {} needs a generated kernel, which the kernel "
                       "generator (issue 4) will provide; legal: the host device",
                       graph.name(), device->name()));
  runtime::KernelImage image;
  image.entry = "fusedgemm_kernel";
  image.program = program;
  for (const auto& role : recipe.roles) image.params.push_back({role.kind, role.index});
  FG_ASSIGN_OR_RETURN(auto kernel, device->load(image));

  return Plan(std::make_shared<const runtime::PlanState>(Engine::kFused, std::nullopt,
                                                         std::move(device), std::move(kernel),
                                                         std::move(recipe)));
}

}  // namespace fusedgemm
