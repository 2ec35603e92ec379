// Graph validation, inference half: each node's result dims and data type from its inputs,
// with the node's own legality conditions (the class is in graph_validator.h).
#include <algorithm>

#include <fmt/format.h>

#include "graph/graph_validator.h"

namespace fusedgemm {

void GraphValidator::infer(const Node& node) {
  if (any_bad(node)) {
    poison(node);
    return;
  }
  switch (node.kind) {
    case NodeKind::kMatmul: infer_matmul(node); break;
    case NodeKind::kPointwise: infer_pointwise(node); break;
    case NodeKind::kReduction: infer_reduction(node); break;
    case NodeKind::kBlockScaleDequantize: infer_dequantize(node); break;
    case NodeKind::kBlockScaleQuantize: infer_quantize(node); break;
  }
}

// A [b, M, K] @ B [b, K, N] = [b, M, N]; each operand's batch is 1 or b.
void GraphValidator::infer_matmul(const Node& node) {
  const auto& a = *node.inputs[0];
  const auto& b = *node.inputs[1];
  auto& out = *node.outputs[0];
  bool ok = true;
  for (const auto* t : {&a, &b}) {
    if (!matmul_operand_type(t->data_type())) {
      error(
          "matmul_data_type: tensor '{}': node '{}' has no matmul for data type {}; legal: "
          "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp4_e2m1 or int8",
          t->name(), node.name, to_string(t->data_type()));
      ok = false;
    }
    if (&a == &b) break;  // matmul(x, x): one tensor, one message
  }
  if (ok && is_integer(a.data_type()) != is_integer(b.data_type())) {
    error(
        "matmul_data_type: tensor '{}': node '{}' multiplies {} ('{}') by {}; legal: both "
        "integer or both floating point",
        b.name(), node.name, to_string(a.data_type()), a.name(), to_string(b.data_type()));
    ok = false;
  }
  if (a.dims_[2] != b.dims_[1]) {
    error(
        "matmul_k_mismatch: tensor '{}': K = {} (dims {}) but A '{}' has K = {} (dims {}) in "
        "node '{}'; legal: B's axis 1 equals A's axis 2",
        b.name(), b.dims_[1], dims_str(b.dims_), a.name(), a.dims_[2], dims_str(a.dims_),
        node.name);
    ok = false;
  }
  const std::int64_t batch = std::max(a.dims_[0], b.dims_[0]);
  if (a.dims_[0] != 1 && b.dims_[0] != 1 && a.dims_[0] != b.dims_[0]) {
    error(
        "batch_mismatch: tensor '{}': batch {} but A '{}' has batch {} in node '{}'; legal: "
        "batch 1 (broadcast) or A's batch {}",
        b.name(), b.dims_[0], a.name(), a.dims_[0], node.name, a.dims_[0]);
    ok = false;
  }
  if (!ok) return poison(node);
  set_inferred(node, out, {batch, a.dims_[1], b.dims_[2]});
  if (!out.output_) {
    infer_type(out, is_integer(a.data_type()) ? DataType::kInt32 : DataType::kFloat32);
  }
}

// Every input broadcasts to the result: per axis, extent 1 or the result's extent. The
// result's extent is the first extent > 1 among the computed inputs, else among all, so
// that an aux that disagrees with a GEMM result is the tensor the message names.
void GraphValidator::infer_pointwise(const Node& node) {
  const auto& attrs = std::get<PointwiseAttributes>(node.attributes);
  bool ok = true;
  std::vector<const TensorAttributes*> seen;  // pointwise(x, x): one message for x
  for (const auto& in : node.inputs) {
    if (std::find(seen.begin(), seen.end(), in.get()) != seen.end()) continue;
    seen.push_back(in.get());
    if (in->data_type() == DataType::kE8M0) {
      error(
          "pointwise_data_type: tensor '{}': pointwise {} in node '{}' is not defined for "
          "data type e8m0; legal: a floating-point or integer tensor (e8m0 feeds "
          "block_scale_dequantize)",
          in->name(), to_string(attrs.mode), node.name);
      ok = false;
    }
  }
  Dimv dims(kRank, 1);
  for (const bool computed_only : {true, false}) {
    for (const auto& in : node.inputs) {
      if (computed_only && !producer_.contains(in.get())) continue;
      for (std::size_t i = 0; i < kRank; ++i) {
        if (dims[i] == 1) dims[i] = in->dims_[i];
      }
    }
  }
  for (const TensorAttributes* in : seen) {
    for (std::size_t i = 0; i < kRank; ++i) {
      if (in->dims_[i] != 1 && in->dims_[i] != dims[i]) {
        error(
            "pointwise_broadcast: tensor '{}': dims {} do not broadcast to {} in node '{}' "
            "(axis {}: {} vs {}); legal: per axis extent 1 or the result's, {}",
            in->name(), dims_str(in->dims_), dims_str(dims), node.name, i, in->dims_[i], dims[i],
            dims_str(dims));
        ok = false;
        break;
      }
    }
  }
  if (!ok) return poison(node);
  set_inferred(node, *node.outputs[0], dims);
  if (!node.outputs[0]->output_) infer_type(*node.outputs[0], DataType::kFloat32);
}

// The output's declared dims name the reduced axes: extent 1 where the input's is larger.
void GraphValidator::infer_reduction(const Node& node) {
  const auto& attrs = std::get<ReductionAttributes>(node.attributes);
  const auto& in = *node.inputs[0];
  auto& out = *node.outputs[0];
  if (out.dims_.empty()) {
    error(
        "reduction_dims_missing: tensor '{}': reduction '{}' output has dims [] (none "
        "declared); legal: the input's dims {} with extent 1 on each reduced axis",
        out.name(), node.name, dims_str(in.dims_));
    return poison(node);
  }
  if (!check_layout(out)) return poison(node);
  bool reduces = false;
  for (std::size_t i = 0; i < kRank; ++i) {
    if (out.dims_[i] != 1 && out.dims_[i] != in.dims_[i]) {
      error(
          "reduction_dims: tensor '{}': dims {} against input dims {} (axis {}: {}); legal: "
          "per axis extent 1 (reduced) or {} (kept)",
          out.name(), dims_str(out.dims_), dims_str(in.dims_), i, out.dims_[i], in.dims_[i]);
      return poison(node);
    }
    // An axis of input extent 1 reduces its one element: a column tap at M = 1 is the
    // problem's call at M = 1 declared as a graph (the reference and `run` resize so).
    reduces = reduces || out.dims_[i] == 1;
  }
  if (!reduces) {
    error(
        "reduction_reduces_nothing: tensor '{}': dims {} against input dims {} reduce no "
        "axis; legal: extent 1 on at least one axis",
        out.name(), dims_str(out.dims_), dims_str(in.dims_));
    return poison(node);
  }
  infer_type(out, DataType::kFloat32);
  // DESIGN.md 3: taps are fp32, int32 for an integer input; avg and norm2 are fractional.
  const bool fractional = attrs.mode == ReductionMode::kAvg || attrs.mode == ReductionMode::kNorm2;
  const bool int_ok = is_integer(in.data_type()) && !fractional;
  if (out.data_type_ != DataType::kFloat32 && !(out.data_type_ == DataType::kInt32 && int_ok)) {
    error(
        "reduction_data_type: tensor '{}': reduction {} of {} input '{}' into data type {}; "
        "legal: fp32{}",
        out.name(), to_string(attrs.mode), to_string(in.data_type()), in.name(),
        to_string(out.data_type_),
        int_ok ? " or int32" : " (int32 only for integer add, max, min, amax, mul or norm1)");
    return poison(node);
  }
}

GraphValidator::Dimv GraphValidator::block_dims(const Dimv& dims, std::int64_t rows,
                                                std::int64_t cols) {
  return {dims[0], (dims[1] + rows - 1) / rows, (dims[2] + cols - 1) / cols};
}

bool GraphValidator::check_block(const Node& node, std::int64_t rows, std::int64_t cols) {
  if (rows > 0 && cols > 0) return true;
  error(
      "block_scale_block_size: tensor '{}': node '{}' has block size {}x{}; legal: both "
      "sides >= 1",
      node.inputs[0]->name(), node.name, rows, cols);
  poison(node);
  return false;
}

bool GraphValidator::check_scale(const Node& node, const TensorAttributes& scale,
                                 const Dimv& want) {
  bool ok = true;
  if (scale.data_type() != DataType::kFloat32 && scale.data_type() != DataType::kE8M0) {
    error(
        "block_scale_data_type: tensor '{}': scale of node '{}' has data type {}; legal: "
        "fp32 or e8m0",
        scale.name(), node.name, to_string(scale.data_type()));
    ok = false;
  }
  if (scale.dims_ != want) {
    error(
        "block_scale_dims: tensor '{}': scale of node '{}' has dims {}; legal: {} (one per "
        "block)",
        scale.name(), node.name, dims_str(scale.dims_), dims_str(want));
    ok = false;
  }
  return ok;
}

bool GraphValidator::quantized_type(DataType t) {
  return is_fp8(t) || t == DataType::kFp4E2M1 || t == DataType::kInt8;
}

void GraphValidator::infer_dequantize(const Node& node) {
  const auto& attrs = std::get<BlockScaleDequantizeAttributes>(node.attributes);
  const auto& x = *node.inputs[0];
  if (!check_block(node, attrs.block_rows, attrs.block_cols)) return;
  bool ok =
      check_scale(node, *node.inputs[1], block_dims(x.dims_, attrs.block_rows, attrs.block_cols));
  if (!quantized_type(x.data_type())) {
    error(
        "block_scale_data_type: tensor '{}': node '{}' dequantizes data type {}; legal: "
        "fp8_e4m3, fp8_e5m2, fp4_e2m1 or int8",
        x.name(), node.name, to_string(x.data_type()));
    ok = false;
  }
  if (!ok) return poison(node);
  auto& out = *node.outputs[0];
  set_inferred(node, out, x.dims_);
  infer_type(out, DataType::kFloat32);
}

void GraphValidator::infer_quantize(const Node& node) {
  const auto& attrs = std::get<BlockScaleQuantizeAttributes>(node.attributes);
  const auto& x = *node.inputs[0];
  auto& y = *node.outputs[0];
  auto& scale = *node.outputs[1];
  if (!check_block(node, attrs.block_rows, attrs.block_cols)) return;
  bool ok = true;
  if (x.data_type() == DataType::kE8M0) {
    error(
        "block_scale_data_type: tensor '{}': node '{}' quantizes data type e8m0; legal: a "
        "floating-point or integer tensor",
        x.name(), node.name);
    ok = false;
  }
  if (y.data_type() == DataType::kNotSet) {
    error(
        "tensor_data_type_missing: tensor '{}': result of block_scale_quantize '{}' has no "
        "data type; legal: set_data_type(fp8_e4m3, fp8_e5m2, fp4_e2m1 or int8)",
        y.name(), node.name);
    type_reported_.insert(&y);
    ok = false;
  } else if (!quantized_type(y.data_type())) {
    error(
        "block_scale_data_type: tensor '{}': node '{}' quantizes into data type {}; legal: "
        "fp8_e4m3, fp8_e5m2, fp4_e2m1 or int8",
        y.name(), node.name, to_string(y.data_type()));
    ok = false;
  }
  if (!ok) return poison(node);
  infer_type(scale, DataType::kFloat32);
  set_inferred(node, y, x.dims_);
  const Dimv want = block_dims(x.dims_, attrs.block_rows, attrs.block_cols);
  if (scale.dims_.empty()) {
    scale.dims_ = want;
    scale.dims_inferred_ = true;
  }
  if (!check_scale(node, scale, want) || !check_layout(scale)) bad_.insert(&scale);
}
}  // namespace fusedgemm
