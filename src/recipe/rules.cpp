#include "recipe/rules.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "kernels/kernel_args.h"
#include "recipe/call_rules.h"
#include "recipe/limits.h"

namespace fusedgemm::recipe {
namespace {

using fusion::FusionProgram;
using fusion::Major;
using fusion::Operand;

const fusion::Buffer& buffer(const FusionProgram& p, int index) {
  return p.buffers[index];
}

// The role is the one the breaking item plays, not the buffer's first role: matmul(A, A)
// binds one buffer as A and as B, and a rule broken by the B operand must say B.
std::string role_tensor(const FusionProgram& p, Role role, int buffer_index) {
  return fmt::format("role {} '{}'", to_string(role), buffer(p, buffer_index).name);
}

template <class Items, class Pred>
int first_index(const Items& items, Pred pred) noexcept {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (pred(items[i])) return static_cast<int>(i);
  }
  return -1;
}

// --- gemm_count -------------------------------------------------------------------------

int gemm_count_violation(const FusionProgram& p) noexcept {
  return static_cast<int>(p.gemms.size()) > kMaxGemms ? kMaxGemms : -1;
}

std::string gemm_count_explain(const FusionProgram& p, int item) {
  const auto& g = p.gemms[item];
  return fmt::format("gemm_count: {}: matmul '{}' is matmul {} of {}; legal: at most {} matmuls",
                     role_tensor(p, Role::kA, p.operands[g.a].buffer), g.name, item + 1,
                     p.gemms.size(), kMaxGemms);
}

// --- epilogue_ops -----------------------------------------------------------------------

int epilogue_ops_violation(const FusionProgram& p) noexcept {
  int ops = 0;
  for (std::size_t i = 0; i < p.epilogue.size(); ++i) {
    if (p.epilogue[i].op == fusion::EpilogueOp::kPointwise && ++ops > kMaxEpilogueOps) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string epilogue_ops_explain(const FusionProgram& p, int item) {
  const auto ops = std::count_if(p.epilogue.begin(), p.epilogue.end(), [](const auto& node) {
    return node.op == fusion::EpilogueOp::kPointwise;
  });
  // The message names the graph's first store: the epilogue computes for its stores.
  const std::string store = !p.outputs.empty() ? role_tensor(p, Role::kOutput, p.outputs[0].buffer)
                            : !p.taps.empty()
                                ? role_tensor(p, Role::kTap, p.taps[0].buffer)
                                : role_tensor(p, Role::kOutput, p.quantized_outputs[0].buffer);
  return fmt::format(
      "epilogue_ops: {}: its epilogue computes {} pointwise operations (operation {} computes "
      "'{}'); legal: at most {} in one fused kernel (its compile time grows fast past them)",
      store, ops, kMaxEpilogueOps + 1, p.epilogue[item].name, kMaxEpilogueOps);
}

// --- operand_data_type ------------------------------------------------------------------

bool is_low_precision(DataType t) {
  return is_fp8(t) || t == DataType::kFp4E2M1;
}

// Hopper's wgmma multiplies bf16 x bf16, fp16 x fp16 or 8-bit float x 8-bit float (either
// fp8 flavour); fp4 is a storage type widened to fp8 after a block-scaled load.
bool pair_supported(DataType a, DataType b) {
  if (a == DataType::kBFloat16 || a == DataType::kFloat16) return a == b;
  return is_low_precision(a) && is_low_precision(b);
}

int operand_type_violation(const FusionProgram& p) noexcept {
  return first_index(p.gemms, [&](const fusion::Gemm& g) {
    return !pair_supported(buffer(p, p.operands[g.a].buffer).data_type,
                           buffer(p, p.operands[g.b].buffer).data_type);
  });
}

bool multipliable(DataType t) {
  return t == DataType::kBFloat16 || t == DataType::kFloat16 || is_low_precision(t);
}

std::string operand_type_explain(const FusionProgram& p, int item) {
  const auto& g = p.gemms[item];
  const auto& a = buffer(p, p.operands[g.a].buffer);
  const auto& b = buffer(p, p.operands[g.b].buffer);
  // Blame A when no B could pair with it; otherwise B is the one that does not match A.
  if (!multipliable(a.data_type)) {
    return fmt::format(
        "operand_data_type: role A '{}': matmul '{}' multiplies {} by {} ('{}'); legal: bf16 x "
        "bf16, fp16 x fp16, or fp8/fp4 x fp8/fp4",
        a.name, g.name, to_string(a.data_type), to_string(b.data_type), b.name);
  }
  return fmt::format(
      "operand_data_type: role B '{}': matmul '{}' multiplies {} ('{}') by {}; legal: bf16 x "
      "bf16, fp16 x fp16, or fp8/fp4 x fp8/fp4",
      b.name, g.name, to_string(a.data_type), a.name, to_string(b.data_type));
}

// --- layout_group_major -----------------------------------------------------------------

// The same role of several GEMMs is loaded by one mainloop code path, whose shared-memory
// layout and wgmma descriptors are fixed by the operand's major at compile time.
int group_major_violation(const FusionProgram& p) noexcept {
  return first_index(p.operands, [&](const Operand& op) {
    for (const Operand& first : p.operands) {
      if (first.role == op.role) return first.major != op.major;
    }
    return false;
  });
}

std::string group_major_explain(const FusionProgram& p, int item) {
  const auto& op = p.operands[item];
  for (const Operand& first : p.operands) {
    if (first.role != op.role) continue;
    return fmt::format(
        "layout_group_major: {}: {} but {} is {}; legal: the {} operands of every matmul share "
        "one major",
        role_tensor(p, op.role, op.buffer), to_string(op.major),
        role_tensor(p, first.role, first.buffer), to_string(first.major), to_string(op.role));
  }
  return "layout_group_major";
}

// --- operand_major_8bit -----------------------------------------------------------------

// wgmma reads 8-bit operands from shared memory K-major only (PTX ISA 8.0, section
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate": transpose is 16-bit only).
int operand_major_violation(const FusionProgram& p) noexcept {
  return first_index(p.operands, [&](const Operand& op) {
    return bits_of(buffer(p, op.buffer).data_type) < 16 && op.major != Major::kK;
  });
}

std::string operand_major_explain(const FusionProgram& p, int item) {
  const auto& op = p.operands[item];
  const auto& b = buffer(p, op.buffer);
  return fmt::format(
      "operand_major_8bit: {}: {} operand is {}; legal: K-major for 8-bit and "
      "4-bit operands (wgmma transposes 16-bit types only)",
      role_tensor(p, op.role, op.buffer), to_string(b.data_type), to_string(op.major));
}

// --- block_scale_shape ------------------------------------------------------------------

// fp32 scales per block of rows x cols in the operand's declared axes.
// @pre op is block-scaled.
bool operand_scale_ok(const Operand& op, std::int64_t rows, std::int64_t cols) {
  return op.block_scale->scale_type == DataType::kFloat32 && op.block_scale->block_rows == rows &&
         op.block_scale->block_cols == cols;
}

// DeepSeek-style block scaling: fp32 scales per 1x128 of A ([M, K]) and per 128x128 of B
// ([K, N]); both operands of a GEMM are scaled or neither is.
bool block_scale_ok(const FusionProgram& p, const fusion::Gemm& g) {
  const auto& a = p.operands[g.a];
  const auto& b = p.operands[g.b];
  if (a.block_scale.has_value() != b.block_scale.has_value()) return false;
  if (!a.block_scale) return true;
  return operand_scale_ok(a, 1, 128) && operand_scale_ok(b, 128, 128);
}

int block_scale_violation(const FusionProgram& p) noexcept {
  return first_index(p.gemms, [&](const fusion::Gemm& g) { return !block_scale_ok(p, g); });
}

std::string block_scale_explain(const FusionProgram& p, int item) {
  const auto& g = p.gemms[item];
  const auto& a = p.operands[g.a];
  const auto& b = p.operands[g.b];
  constexpr std::string_view kLegal =
      "legal: both unscaled, or A scaled per 1x128 and B per 128x128 block with fp32 scales";
  if (a.block_scale.has_value() != b.block_scale.has_value()) {
    const Operand& unscaled = a.block_scale ? b : a;
    const Operand& scaled = a.block_scale ? a : b;
    return fmt::format(
        "block_scale_shape: {}: unscaled in matmul '{}' while role {} '{}' is scaled by {} "
        "blocks of {}x{}; {}",
        role_tensor(p, unscaled.role, unscaled.buffer), g.name, to_string(scaled.role),
        buffer(p, scaled.buffer).name, to_string(scaled.block_scale->scale_type),
        scaled.block_scale->block_rows, scaled.block_scale->block_cols, kLegal);
  }
  const Operand& bad = operand_scale_ok(a, 1, 128) ? b : a;
  return fmt::format(
      "block_scale_shape: {}: scaled by {} blocks of {}x{} ('{}') in matmul '{}'; {}",
      role_tensor(p, bad.role, bad.buffer), to_string(bad.block_scale->scale_type),
      bad.block_scale->block_rows, bad.block_scale->block_cols,
      buffer(p, bad.block_scale->scale_buffer).name, g.name, kLegal);
}

// --- tma_contiguous_extent --------------------------------------------------------------

// The operand's unit-stride axis in declared order: B is declared (b, K, N).
int declared_contiguous_axis(const Operand& op) {
  const bool k_major = op.major == Major::kK;
  return (op.role == Role::kA) == k_major ? 2 : 1;
}

std::int64_t contiguous_extent(const FusionProgram& p, const Operand& op) {
  return buffer(p, op.buffer).layout.shape[declared_contiguous_axis(op)];
}

int contiguous_extent_violation(const FusionProgram& p) noexcept {
  return first_index(p.operands, [&](const Operand& op) {
    return contiguous_extent(p, op) % contiguous_extent_modulus(buffer(p, op.buffer).data_type);
  });
}

std::string contiguous_extent_explain(const FusionProgram& p, int item) {
  const auto& op = p.operands[item];
  const auto type = buffer(p, op.buffer).data_type;
  return fmt::format(
      "tma_contiguous_extent: {}: contiguous extent {} ({}) is not a multiple of {}; legal: a "
      "multiple of {} elements (16 bytes of {})",
      role_tensor(p, op.role, op.buffer), contiguous_extent(p, op), to_string(op.major),
      contiguous_extent_modulus(type), contiguous_extent_modulus(type), to_string(type));
}

// --- tma_stride_alignment ---------------------------------------------------------------

int misaligned_stride_axis(const FusionProgram& p, const Operand& op) {
  const auto& b = buffer(p, op.buffer);
  return recipe::misaligned_stride_axis(b.data_type, b.layout, declared_contiguous_axis(op));
}

int stride_alignment_violation(const FusionProgram& p) noexcept {
  return first_index(p.operands,
                     [&](const Operand& op) { return misaligned_stride_axis(p, op) >= 0; });
}

std::string stride_alignment_explain(const FusionProgram& p, int item) {
  const auto& op = p.operands[item];
  const auto& b = buffer(p, op.buffer);
  const int axis = misaligned_stride_axis(p, op);
  const std::int64_t stride = b.layout.stride[axis];
  const std::int64_t bits = stride * bits_of(b.data_type);
  // fp4 strides can end mid-byte: "15.5 bytes".
  const std::string bytes =
      bits % 8 == 0 ? fmt::format("{}", bits / 8) : fmt::format("{}.5", bits / 8);
  return fmt::format(
      "tma_stride_alignment: {}: stride {} on axis {} is {} bytes of {}; legal: every stride "
      "but the unit one positive (a batch stride may be 0, a broadcast) and a multiple of {} "
      "elements ({} bytes)",
      role_tensor(p, op.role, op.buffer), stride, axis, bytes, to_string(b.data_type),
      contiguous_extent_modulus(b.data_type), kTmaGranuleBytes);
}

// --- aux_data_type ----------------------------------------------------------------------

bool aux_type_ok(DataType t) {
  return is_float(t) && t != DataType::kFp4E2M1;
}

int aux_type_violation(const FusionProgram& p) noexcept {
  return first_index(
      p.aux, [&](const fusion::AuxLoad& a) { return !aux_type_ok(buffer(p, a.buffer).data_type); });
}

std::string aux_type_explain(const FusionProgram& p, int item) {
  const auto& b = p.aux[item].buffer;
  return fmt::format(
      "aux_data_type: {}: data type {}; legal: fp32, fp16, bf16, fp8_e4m3 or "
      "fp8_e5m2",
      role_tensor(p, Role::kAux, b), to_string(buffer(p, b).data_type));
}

// --- output_data_type -------------------------------------------------------------------

bool output_type_ok(DataType t) {
  return (is_float(t) && t != DataType::kFp4E2M1) || t == DataType::kInt8;
}

int output_type_violation(const FusionProgram& p) noexcept {
  return first_index(p.outputs, [&](const fusion::DenseOutput& o) {
    return !output_type_ok(buffer(p, o.buffer).data_type);
  });
}

std::string output_type_explain(const FusionProgram& p, int item) {
  const auto& b = p.outputs[item].buffer;
  return fmt::format(
      "output_data_type: {}: data type {}; legal: fp32, fp16, bf16, fp8_e4m3, "
      "fp8_e5m2 or int8 (fp4 through block_scale_quantize)",
      role_tensor(p, Role::kOutput, b), to_string(buffer(p, b).data_type));
}

// --- tap_data_type ----------------------------------------------------------------------

// The epilogue accumulates a tap's partials in fp32 (an int32 tap, legal in a graph, runs on
// the fallback engine).
int tap_type_violation(const FusionProgram& p) noexcept {
  return first_index(p.taps, [&](const fusion::Tap& t) {
    return buffer(p, t.buffer).data_type != DataType::kFloat32;
  });
}

std::string tap_type_explain(const FusionProgram& p, int item) {
  const auto& b = p.taps[item].buffer;
  return fmt::format(
      "tap_data_type: {}: data type {}; legal: fp32 (the epilogue accumulates taps in fp32)",
      role_tensor(p, Role::kTap, b), to_string(buffer(p, b).data_type));
}

// --- quantized_block_shape --------------------------------------------------------------

bool quantized_ok(const FusionProgram& p, const fusion::QuantizedOutput& q) {
  const DataType y = buffer(p, q.buffer).data_type;
  return (is_fp8(y) || y == DataType::kFp4E2M1) && q.block_rows == 1 &&
         (q.block_cols == 16 || q.block_cols == 32 || q.block_cols == 128) && q.major == Major::kN;
}

int quantized_violation(const FusionProgram& p) noexcept {
  return first_index(p.quantized_outputs,
                     [&](const fusion::QuantizedOutput& q) { return !quantized_ok(p, q); });
}

std::string quantized_explain(const FusionProgram& p, int item) {
  const auto& q = p.quantized_outputs[item];
  return fmt::format(
      "quantized_block_shape: {}: {} {} with blocks of {}x{}; legal: fp8 or fp4, N-major, "
      "blocks of 1x16, 1x32 or 1x128 along N",
      role_tensor(p, Role::kOutput, q.buffer), to_string(buffer(p, q.buffer).data_type),
      to_string(q.major), q.block_rows, q.block_cols);
}

// --- kernel_buffer_count / tma_descriptor_count -----------------------------------------

// Kernel parameters the recipe will make: one per operand, operand scale, aux, output, tap,
// and two per quantized output (values and scales).
int kernel_buffers(const FusionProgram& p) noexcept {
  int count = 0;
  for (const auto& op : p.operands) count += op.block_scale ? 2 : 1;
  return count + static_cast<int>(p.aux.size() + p.outputs.size() + p.taps.size() +
                                  2 * p.quantized_outputs.size());
}

// Role and tensor of kernel parameter `n` (from 0), in the recipe's argument order.
std::string parameter_tensor(const FusionProgram& p, int n) {
  for (const auto& op : p.operands) {
    if (n-- == 0) return role_tensor(p, op.role, op.buffer);
  }
  for (const auto& op : p.operands) {
    if (op.block_scale && n-- == 0)
      return role_tensor(p, Role::kScale, op.block_scale->scale_buffer);
  }
  for (const auto& a : p.aux) {
    if (n-- == 0) return role_tensor(p, Role::kAux, a.buffer);
  }
  for (const auto& o : p.outputs) {
    if (n-- == 0) return role_tensor(p, Role::kOutput, o.buffer);
  }
  for (const auto& t : p.taps) {
    if (n-- == 0) return role_tensor(p, Role::kTap, t.buffer);
  }
  for (const auto& q : p.quantized_outputs) {
    if (n-- == 0) return role_tensor(p, Role::kOutput, q.buffer);
    if (n-- == 0) return role_tensor(p, Role::kOutput, q.scale_buffer);
  }
  return fmt::format("graph '{}'", p.graph_name);
}

int buffer_count_violation(const FusionProgram& p) noexcept {
  return kernel_buffers(p) > kernels::kMaxKernelBuffers ? kernels::kMaxKernelBuffers : -1;
}

std::string buffer_count_explain(const FusionProgram& p, int item) {
  return fmt::format(
      "kernel_buffer_count: {}: kernel parameter {} of {} ({} operands with their scales, {} "
      "aux, {} outputs, {} taps, {} quantized outputs x2); legal: at most {} kernel parameters",
      parameter_tensor(p, item), item + 1, kernel_buffers(p), p.operands.size(), p.aux.size(),
      p.outputs.size(), p.taps.size(), p.quantized_outputs.size(), kernels::kMaxKernelBuffers);
}

int tma_count_violation(const FusionProgram& p) noexcept {
  return static_cast<int>(p.operands.size()) > kernels::kMaxTmaDescriptors
             ? kernels::kMaxTmaDescriptors
             : -1;
}

std::string tma_count_explain(const FusionProgram& p, int item) {
  return fmt::format(
      "tma_descriptor_count: {}: operand {} of {} distinct matmul operands, each read through "
      "its own TMA descriptor; legal: at most {} distinct operands (share A or B between "
      "matmuls)",
      role_tensor(p, p.operands[item].role, p.operands[item].buffer), item + 1, p.operands.size(),
      kernels::kMaxTmaDescriptors);
}

constexpr std::array kRules = {
    // Structure: analyze() declines these while it builds the fusion program.
    Rule{"no_matmul", RuleScope::kStructure, "at least one matmul feeds the outputs"},
    Rule{"gemm_shape_mismatch", RuleScope::kStructure,
         "every matmul of one graph has the same batch, M, N and K"},
    Rule{"chained_gemm", RuleScope::kStructure, "no matmul reads another matmul's result"},
    Rule{"prologue_op", RuleScope::kStructure,
         "matmul operands are caller buffers or block_scale_dequantize of them"},
    Rule{"operand_major", RuleScope::kStructure,
         "each operand has a unit stride on K or on its M/N axis"},
    Rule{"epilogue_input", RuleScope::kStructure,
         "epilogue inputs are accumulator values or caller buffers"},
    Rule{"tap_consumed", RuleScope::kStructure,
         "a reduction's result is an output, read by no node"},
    Rule{"aux_shape", RuleScope::kStructure,
         "aux dims are, per axis, 1 or the problem's [batch, M, N]"},
    Rule{"store_shape", RuleScope::kStructure,
         "dense outputs, taps and quantized outputs are computed over the problem's dims"},
    Rule{"quantized_output", RuleScope::kStructure,
         "both results of block_scale_quantize are outputs"},
    Rule{"dequantize_placement", RuleScope::kStructure,
         "block_scale_dequantize feeds matmul operands only"},
    Rule{"dequantize_rounding", RuleScope::kStructure,
         "a dequantized operand declares no data type or fp32 (no rounding in the mainloop)"},
    Rule{"output_major", RuleScope::kStructure, "dense outputs are N-major or M-major"},
    // Build: the support gate checks these on the fusion program.
    Rule{"gemm_count", RuleScope::kBuild, "at most 4 matmuls", gemm_count_violation,
         gemm_count_explain},
    Rule{"epilogue_ops", RuleScope::kBuild, "at most 32 pointwise operations in the epilogue",
         epilogue_ops_violation, epilogue_ops_explain},
    Rule{"operand_data_type", RuleScope::kBuild, "bf16 x bf16, fp16 x fp16, or fp8/fp4 x fp8/fp4",
         operand_type_violation, operand_type_explain},
    Rule{"layout_group_major", RuleScope::kBuild, "the same role of several matmuls has one major",
         group_major_violation, group_major_explain},
    Rule{"operand_major_8bit", RuleScope::kBuild, "8-bit and 4-bit operands are K-major",
         operand_major_violation, operand_major_explain},
    Rule{"block_scale_shape", RuleScope::kBuild,
         "both operands unscaled, or fp32 scales per 1x128 of A and 128x128 of B",
         block_scale_violation, block_scale_explain},
    Rule{"tma_contiguous_extent", RuleScope::kBuild,
         "each operand's contiguous extent is a multiple of 16 bytes", contiguous_extent_violation,
         contiguous_extent_explain},
    Rule{"tma_stride_alignment", RuleScope::kBuild,
         "each operand's non-unit strides are multiples of 16 bytes", stride_alignment_violation,
         stride_alignment_explain},
    Rule{"aux_data_type", RuleScope::kBuild, "aux inputs are fp32, fp16, bf16 or fp8",
         aux_type_violation, aux_type_explain},
    Rule{"output_data_type", RuleScope::kBuild, "dense outputs are fp32, fp16, bf16, fp8 or int8",
         output_type_violation, output_type_explain},
    Rule{"tap_data_type", RuleScope::kBuild, "taps are fp32", tap_type_violation, tap_type_explain},
    Rule{"quantized_block_shape", RuleScope::kBuild,
         "quantized outputs are fp8 or fp4, N-major, in 1x16, 1x32 or 1x128 blocks",
         quantized_violation, quantized_explain},
    Rule{"kernel_buffer_count", RuleScope::kBuild,
         "at most 16 kernel parameters (operands, scales, aux, outputs, taps, quantized x2)",
         buffer_count_violation, buffer_count_explain},
    Rule{"tma_descriptor_count", RuleScope::kBuild, "at most 6 distinct matmul operands",
         tma_count_violation, tma_count_explain},
// Call: every execute and explain walks these, in this order.
#define FG_CALL_ROW(name, per_call, legal)                                          \
  Rule {                                                                            \
#name, RuleScope::kCall, legal, nullptr, nullptr, call_rules::name##_violation, \
        call_rules::name##_explain, per_call                                        \
  }
    FG_CALL_ROW(device_current, true, "the plan's device is the current device"),
    FG_CALL_ROW(buffer_missing, true, "a non-null buffer for every tensor of the plan"),
    FG_CALL_ROW(read_only, false, "outputs, taps and quantized outputs are writable memory"),
    FG_CALL_ROW(view_rank, false, "views of rank 3 (aux: 0 to 3, aligned to the last axes)"),
    FG_CALL_ROW(data_type, false, "a view's data type, when given, is the declared one"),
    FG_CALL_ROW(tap_element_width, false, "tap elements are 4 bytes wide"),
    FG_CALL_ROW(batch, false,
                "each batch is the call's, or 1 where the role broadcasts (an input's batch of "
                "stride 0 is 1)"),
    FG_CALL_ROW(extent, false, "extents follow the call's M, N and K (scales: per block)"),
    FG_CALL_ROW(grid_extent, false,
                "the tiles fit 32-bit TMA coordinates and the grid's 64-bit tile index"),
    FG_CALL_ROW(aux_broadcast, false, "aux extents fit the declared broadcast mode"),
    FG_CALL_ROW(view_span, false,
                "every view spans at most 2^48 elements, from its lowest element to its highest"),
    FG_CALL_ROW(major, false, "unit stride on the axis the plan was built contiguous in"),
    FG_CALL_ROW(contiguous_extent, false,
                "the contiguous extent of TMA-read roles is 16-byte aligned"),
    FG_CALL_ROW(stride_alignment, false,
                "non-unit strides of TMA-read roles are 16-byte multiples"),
    FG_CALL_ROW(tma_limits, false,
                "TMA-read roles: every extent at most 2^32, every byte stride below 2^40"),
    FG_CALL_ROW(
        alignment, true,
        "base addresses aligned (operands, outputs, scales 16 B; taps 4 B; aux one element)"),
    FG_CALL_ROW(output_aliasing, false, "no output or tap layout reaches one element twice"),
    FG_CALL_ROW(buffer_overlap, true, "written buffers share no byte with any other buffer"),
    FG_CALL_ROW(scale_layout, false, "block scales are one dense run"),
    FG_CALL_ROW(workspace, true,
                "with taps, a 16-byte aligned workspace of Plan::workspace_bytes(pack) bytes"),
    FG_CALL_ROW(workspace_overlap, true,
                "the workspace bytes a call uses share no byte with any buffer of the call"),
#undef FG_CALL_ROW
};

}  // namespace

std::string_view to_string(RuleScope scope) {
  switch (scope) {
    case RuleScope::kStructure: return "structure";
    case RuleScope::kBuild: return "build";
    case RuleScope::kCall: return "call";
  }
  return "unknown";
}

std::span<const Rule> rule_table() {
  return kRules;
}

}  // namespace fusedgemm::recipe
