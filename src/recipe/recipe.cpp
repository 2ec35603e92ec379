#include "recipe/recipe.h"

#include <algorithm>
#include <cstdint>

#include "recipe/limits.h"

namespace fusedgemm::recipe {
namespace {

using fusion::Broadcast;
using fusion::FusionProgram;
using fusion::Major;

// Where a graph of batch 1 was declared, a call may still run a batch: every role that is
// not a broadcast accepts 1 or the call's batch.
BatchRule batch_rule(std::int64_t declared, const FusionProgram& p) {
  if (p.problem.batch == 1) return BatchRule::kEither;
  return declared == 1 ? BatchRule::kBroadcast : BatchRule::kFull;
}

class RecipeBuilder {
 public:
  RecipeBuilder(std::shared_ptr<const FusionProgram> program, const KernelConfig& config) {
    recipe_.program = std::move(program);
    recipe_.config = config;
  }

  Result<Recipe> run() {
    const FusionProgram& p = *recipe_.program;
    for (std::size_t i = 0; i < p.buffers.size(); ++i) {
      recipe_.slots.push_back({p.buffers[i].uid, p.buffers[i].name, -1});
    }
    for (std::size_t i = 0; i < p.operands.size(); ++i) add_operand(static_cast<int>(i));
    for (std::size_t i = 0; i < p.operands.size(); ++i) {
      if (p.operands[i].block_scale) add_operand_scale(static_cast<int>(i));
    }
    for (std::size_t i = 0; i < p.aux.size(); ++i) add_aux(static_cast<int>(i));
    for (std::size_t i = 0; i < p.outputs.size(); ++i) add_output(static_cast<int>(i));
    for (std::size_t i = 0; i < p.taps.size(); ++i) add_tap(static_cast<int>(i));
    for (std::size_t i = 0; i < p.quantized_outputs.size(); ++i) {
      add_quantized(static_cast<int>(i));
    }
    for (std::size_t i = 0; i < recipe_.roles.size(); ++i) {
      auto& slot = recipe_.slots[recipe_.roles[i].slot];
      if (slot.first_role < 0) slot.first_role = static_cast<int>(i);
    }
    return std::move(recipe_);
  }

 private:
  RoleFacts& add(Role role, ParamKind kind, int index, int buffer) {
    const auto& b = recipe_.program->buffers[buffer];
    RoleFacts r;
    r.role = role;
    r.kind = kind;
    r.index = index;
    r.slot = buffer;
    r.name = b.name;
    r.data_type = b.data_type;
    r.declared = b.layout;
    r.batch = batch_rule(b.layout.shape[0], *recipe_.program);
    recipe_.roles.push_back(r);
    return recipe_.roles.back();
  }

  // A reads (b, M, K) as declared; B is declared (b, K, N) and read (b, N, K).
  void add_operand(int index) {
    const auto& op = recipe_.program->operands[index];
    RoleFacts& r = add(op.role, ParamKind::kOperand, index, op.buffer);
    if (op.role == Role::kA) {
      r.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kM}, AxisRule{Extent::kK}};
      r.contiguous_axis = op.major == Major::kK ? 2 : 1;
    } else {
      r.kernel_axes = {0, 2, 1};
      r.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kN}, AxisRule{Extent::kK}};
      r.contiguous_axis = op.major == Major::kK ? 2 : 1;
    }
    r.contiguous_modulus = contiguous_extent_modulus(r.data_type);
    r.tma = true;
    r.alignment_bytes = kTmaGranuleBytes;
  }

  void add_operand_scale(int index) {
    const auto& op = recipe_.program->operands[index];
    const auto& s = *op.block_scale;
    RoleFacts& r = add(Role::kScale, ParamKind::kOperandScale, index, s.scale_buffer);
    if (op.role == Role::kA) {
      r.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kM, s.block_rows},
                 AxisRule{Extent::kK, s.block_cols}};
    } else {
      r.kernel_axes = {0, 2, 1};
      r.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kN, s.block_cols},
                 AxisRule{Extent::kK, s.block_rows}};
    }
    r.alignment_bytes = kTmaGranuleBytes;
  }

  void add_aux(int index) {
    const auto& aux = recipe_.program->aux[index];
    RoleFacts& r = add(Role::kAux, ParamKind::kAux, index, aux.buffer);
    const bool rows = aux.broadcast == Broadcast::kRow || aux.broadcast == Broadcast::kFull;
    const bool cols = aux.broadcast == Broadcast::kColumn || aux.broadcast == Broadcast::kFull;
    r.shape = {AxisRule{Extent::kBatch}, AxisRule{rows ? Extent::kM : Extent::kOne},
               AxisRule{cols ? Extent::kN : Extent::kOne}};
    r.broadcast = aux.broadcast;
    r.alignment_bytes = std::max<std::int64_t>(1, bytes_of(r.data_type, 1));
  }

  void add_output(int index) {
    const auto& out = recipe_.program->outputs[index];
    RoleFacts& r = add(Role::kOutput, ParamKind::kOutput, index, out.buffer);
    r.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kM}, AxisRule{Extent::kN}};
    r.contiguous_axis = out.major == Major::kN ? 2 : 1;
    // An output is written per batch, even by a plan built at batch 1: a batch-1 output in
    // a call of batch b would have b results raced into each element.
    r.batch = BatchRule::kFull;
    r.alignment_bytes = kTmaGranuleBytes;
    r.written = true;
  }

  // A tap's declared extent-1 axes are reduced in every call, whatever the call's extents.
  void add_tap(int index) {
    const auto& tap = recipe_.program->taps[index];
    RoleFacts& r = add(Role::kTap, ParamKind::kTap, index, tap.buffer);
    const auto& d = r.declared.shape;
    r.shape = {AxisRule{d[0] == 1 ? Extent::kOne : Extent::kBatch},
               AxisRule{d[1] == 1 ? Extent::kOne : Extent::kM},
               AxisRule{d[2] == 1 ? Extent::kOne : Extent::kN}};
    r.batch = d[0] == 1 ? BatchRule::kBroadcast : BatchRule::kFull;
    if (d[0] != 1 && recipe_.program->problem.batch == 1) r.batch = BatchRule::kEither;
    r.alignment_bytes = 4;
    r.written = true;
    r.mode = tap.mode;
  }

  void add_quantized(int index) {
    const auto& q = recipe_.program->quantized_outputs[index];
    RoleFacts& v = add(Role::kOutput, ParamKind::kQuantized, index, q.buffer);
    v.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kM}, AxisRule{Extent::kN}};
    v.contiguous_axis = 2;
    // Stored element by element (a ragged last block, fp4 nibbles of an odd N through
    // atomics: kernels/block_quantize.cuh), never by TMA: any N.
    v.batch = BatchRule::kFull;  // written per batch, as a dense output
    v.alignment_bytes = kTmaGranuleBytes;
    v.written = true;
    RoleFacts& s = add(Role::kScale, ParamKind::kQuantizedScale, index, q.scale_buffer);
    s.shape = {AxisRule{Extent::kBatch}, AxisRule{Extent::kM, q.block_rows},
               AxisRule{Extent::kN, q.block_cols}};
    s.batch = v.batch;
    s.alignment_bytes = kTmaGranuleBytes;
    s.written = true;
  }

  Recipe recipe_;
};

}  // namespace

Result<Recipe> make_recipe(std::shared_ptr<const fusion::FusionProgram> program,
                           const KernelConfig& config) {
  return RecipeBuilder(std::move(program), config).run();
}

}  // namespace fusedgemm::recipe
