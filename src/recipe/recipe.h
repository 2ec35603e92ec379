// The recipe: every fact about a plan's calls that no runtime value can change, read once
// at build (DESIGN.md section 6). Per role — a buffer filling two roles (matmul(A, A))
// has two entries — in the argument plan's order: role i fills kernel parameter i.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/layout.h"
#include "fusedgemm/ops.h"
#include "fusedgemm/role.h"
#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"
#include "recipe/kernel_config.h"

namespace fusedgemm::recipe {

// What a kernel parameter is, in fusion-program terms.
enum class ParamKind : std::uint8_t {
  kOperand,         // program.operands[index]
  kOperandScale,    // program.operands[index].block_scale
  kAux,             // program.aux[index]
  kOutput,          // program.outputs[index]
  kTap,             // program.taps[index]
  kQuantized,       // program.quantized_outputs[index] values
  kQuantizedScale,  // program.quantized_outputs[index] scales
  kBuffer,          // the fallback engine's caller buffer `index` (fallback/program.h)
};

// Where one axis's extent comes from in a call: 1, a problem extent divided (rounding up)
// by a block size, or the declared extent (the fallback engine runs the declared dims).
enum class Extent : std::uint8_t { kOne, kBatch, kM, kN, kK, kFixed };

struct AxisRule {
  Extent source = Extent::kOne;
  std::int64_t divisor = 1;  // block size of a scale buffer, else 1
  std::int64_t fixed = 1;    // the extent, for kFixed
};

// Which batches a role accepts, given the call's batch b.
enum class BatchRule : std::uint8_t {
  kBroadcast,  // 1 only
  kFull,       // b only
  kEither,     // 1 (broadcast) or b — declared in a graph of batch 1
};

struct RoleFacts {
  Role role = Role::kA;
  ParamKind kind = ParamKind::kOperand;
  int index = 0;  // into the fusion program's list for `kind`
  int slot = 0;   // the bound-pack slot (one per buffer) the role reads
  std::string name;
  DataType data_type = DataType::kNotSet;
  Layout declared;                              // as declared, declared axis order
  std::array<int, kRank> kernel_axes{0, 1, 2};  // kernel axis i is declared axis kernel_axes[i]
  std::array<AxisRule, kRank> shape;            // per kernel axis
  BatchRule batch = BatchRule::kFull;
  // Kernel axis that must have unit stride, or -1 where any layout is read.
  int contiguous_axis = -1;
  std::int64_t contiguous_modulus = 1;  // elements; 1 where TMA does not read the role
  bool tma = false;                     // non-unit strides must be 16-byte multiples
  std::int64_t alignment_bytes = 1;     // of the base address
  bool written = false;                 // an output, tap or quantized output
  fusion::Broadcast broadcast = fusion::Broadcast::kFull;  // aux only
  ReductionMode mode = ReductionMode::kAdd;                // taps: the reduction
};

struct Slot {
  std::int64_t uid = 0;
  std::string name;
  int first_role = 0;
};

struct Recipe {
  std::shared_ptr<const fusion::FusionProgram> program;
  KernelConfig config;
  std::vector<RoleFacts> roles;  // argument-plan order
  std::vector<Slot> slots;       // one per buffer of the program, in its buffer order
  // The workspace a call needs depends on its problem: recipe/workspace.h. An unfused
  // engine keeps its intermediate values in the first `engine_workspace_bytes` of it.
  std::uint64_t engine_workspace_bytes = 0;
};

// Reads the fusion program and the kernel configuration into a recipe.
// @pre the program passed the support gate: its kernel_buffer_count row is the one check
// that the roles fit KernelArgs::buffers.
Result<Recipe> make_recipe(std::shared_ptr<const fusion::FusionProgram> program,
                           const KernelConfig& config);

}  // namespace fusedgemm::recipe
