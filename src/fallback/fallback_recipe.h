// The fallback engine's recipe: one role per caller buffer, read through the same rule
// table as a fused plan's. The fallback runs the graph as declared, so every extent is
// fixed (Extent::kFixed) and batch 1 broadcasts only where it was declared; any strides
// and majors are read, so no role has a unit-stride axis, TMA modulus or 16-byte alignment.
#pragma once

#include "fallback/program.h"
#include "fusedgemm/status.h"
#include "recipe/recipe.h"

namespace fusedgemm::fallback {

// Fails (kUnavailable) when the graph has more caller buffers than one call can carry.
Result<recipe::Recipe> make_recipe(const Program& program);

}  // namespace fusedgemm::fallback
