#include "recipe/print.h"

#include <fmt/format.h>

#include "recipe/workspace.h"

namespace fusedgemm::recipe {
namespace {

std::string axis_rule(const AxisRule& rule) {
  if (rule.source == Extent::kFixed) return fmt::format("{}", rule.fixed);
  if (rule.divisor == 1) return std::string(to_string(rule.source));
  return fmt::format("{}/{}", to_string(rule.source), rule.divisor);
}

}  // namespace

std::string_view to_string(Extent extent) {
  switch (extent) {
    case Extent::kOne: return "1";
    case Extent::kBatch: return "batch";
    case Extent::kM: return "M";
    case Extent::kN: return "N";
    case Extent::kK: return "K";
    case Extent::kFixed: return "fixed";
  }
  return "?";
}

std::string_view to_string(BatchRule rule) {
  switch (rule) {
    case BatchRule::kBroadcast: return "1";
    case BatchRule::kFull: return "b";
    case BatchRule::kEither: return "1 or b";
  }
  return "?";
}

std::string to_string(const Recipe& recipe) {
  const auto& p = recipe.program->problem;
  const auto& c = recipe.config;
  // A fallback plan's roles are its caller buffers, at their declared dims; it has no tile.
  const bool unfused = !recipe.roles.empty() && recipe.roles[0].kind == ParamKind::kBuffer;
  std::string out =
      unfused ? fmt::format("recipe for '{}': unfused, declared batch {}\ncaller buffers (role):\n",
                            recipe.program->graph_name, p.batch)
              : fmt::format(
                    "recipe for '{}': declared batch {} M {} N {} K {}\nkernel: {}; {} threads "
                    "(1 producer, {} consumer warpgroups), planned for {} multiprocessors\n"
                    "argument plan (kernel parameter: role):\n",
                    recipe.program->graph_name, p.batch, p.m, p.n, p.k, describe(c), c.threads,
                    KernelConfig::kConsumers, c.sm_count);
  for (std::size_t i = 0; i < recipe.roles.size(); ++i) {
    const auto& r = recipe.roles[i];
    out += fmt::format(
        "  {:>2}: {:<6} '{}' uid {} {} shape [{}, {}, {}] batch {} kernel axes ({}, {}, {})", i,
        fusedgemm::to_string(r.role), r.name, recipe.slots[r.slot].uid,
        fusedgemm::to_string(r.data_type), axis_rule(r.shape[0]), axis_rule(r.shape[1]),
        axis_rule(r.shape[2]), to_string(r.batch), r.kernel_axes[0], r.kernel_axes[1],
        r.kernel_axes[2]);
    if (r.contiguous_axis >= 0) {
      out += fmt::format(" unit-stride axis {} (extent % {})", r.contiguous_axis,
                         r.contiguous_modulus);
    }
    out += fmt::format(" align {} B", r.alignment_bytes);
    if (r.role == Role::kTap) {
      out += fmt::format(" {}", fusedgemm::to_string(r.mode));
    }
    out += "\n";
  }
  const WorkspaceLayout ws = workspace_layout(recipe, recipe.program->problem);
  out += fmt::format("workspace: {} bytes{}", ws.bytes,
                     unfused ? "" : " for the declared problem (grows with the call's tiles)");
  if (ws.split.splits > 1) {
    out += fmt::format(
        "; K split {} ways there in {}, {} bytes of it required (a smaller workspace "
        "runs the call unsplit)",
        ws.split.splits,
        ws.split.first == 0 ? std::string("every tile")
                            : fmt::format("the last wave's {} cluster tiles", ws.split.tiles),
        ws.required_bytes);
  }
  out += "\n";
  return out;
}

}  // namespace fusedgemm::recipe
