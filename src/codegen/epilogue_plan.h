// What the epilogue generator needs to know before it writes a line, checked: the kernel
// parameter of every aux, output, tap and quantized output (from the recipe's argument
// plan), how each tap meets a tile, and the shared memory the CTA-level steps need.
// Everything the generator cannot produce correctly is refused here (kUnavailable naming
// the node or role and why); a recipe that does not match its program is kInternal.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"
#include "recipe/recipe.h"

namespace fusedgemm::codegen {

// How a tap's elements meet one tile, from the axes it reduces (kernel axis order).
enum class TapShape : std::uint8_t {
  kElement,  // neither M nor N: every point has its own element (batch may still be reduced)
  kRows,     // N: one element per row
  kCols,     // M: one element per column
  kTile,     // M and N: one element per tile
};

// "N", "M", "M, N" or "no tile axis".
std::string_view reduced_axes(TapShape shape);

// Floats of shared memory a tap's unit partial is staged in before it goes to the
// workspace: a unit's rows, a unit's columns, or one value (padded to 4).
int staged_floats(TapShape shape, const recipe::KernelConfig& config);

struct TapPlan {
  int param = -1;
  TapShape shape = TapShape::kElement;
};

struct EpiloguePlan {
  // Kernel parameter of each entry of the program's lists.
  std::vector<int> aux_param;
  std::vector<int> output_param;
  std::vector<int> quant_param;
  std::vector<int> quant_scale_param;
  std::vector<TapPlan> taps;  // per program tap
  bool column_taps = false;   // scratch then depends on UnitN (sized for the config's unit)
  // Per aux: where in the scratch a column vector is staged once per unit (bytes, 16-byte
  // aligned; kernels/epilogue_access.cuh, StagedColumns), or -1 where it is read from global
  // memory (no column vector, or the kernel's shared memory has no room beside the ring).
  std::vector<int> aux_staged_offset;
  // Shared memory the epilogue needs per consumer warpgroup: a staging area for the taps
  // used one step at a time (column taps park 4 warps x UnitN partials, tile reductions 4
  // floats, the arrival verdict a word), then every tap's staged unit partial
  // (staged_floats) side by side, then the staged column vectors.
  std::uint32_t scratch_bytes = 0;
};

Result<EpiloguePlan> plan_epilogue(const fusion::FusionProgram& program,
                                   const recipe::Recipe& recipe);

}  // namespace fusedgemm::codegen
