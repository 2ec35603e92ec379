// The example graphs as the epilogue generator sees them: loaded, validated, analyzed,
// gated and given a recipe with the kernel configuration build() would choose.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"

namespace fusedgemm_test {

struct EpilogueCase {
  std::shared_ptr<fusedgemm::fusion::FusionProgram> program;
  fusedgemm::recipe::Recipe recipe;
};

// Nothing when the example is declined (by analyze or the support gate) or does not load.
inline std::optional<EpilogueCase> epilogue_case(const std::filesystem::path& file) {
  using namespace fusedgemm;
  auto graph = load_graph(file.string());
  if (!graph || !graph->validate()) return std::nullopt;
  auto analysis = fusion::analyze(graph.value());
  if (!analysis || analysis->decline) return std::nullopt;
  if (recipe::check_support(analysis->program)) return std::nullopt;
  auto program = std::make_shared<fusion::FusionProgram>(std::move(analysis->program));
  auto recipe = recipe::make_recipe(program, recipe::choose_kernel_config(*program, 0).value());
  if (!recipe) return std::nullopt;
  return EpilogueCase{program, std::move(recipe.value())};
}

}  // namespace fusedgemm_test
