#include "fusion/print.h"

#include <algorithm>

#include <fmt/format.h>

namespace fusedgemm::fusion {
namespace {

std::string describe(const EpilogueNode& node, const FusionProgram& program) {
  switch (node.op) {
    case EpilogueOp::kAccumulator:
      return fmt::format("accumulator of gemm {} '{}'", node.gemm, program.gemms[node.gemm].name);
    case EpilogueOp::kAuxLoad: {
      const auto& aux = program.aux[node.aux];
      return fmt::format("load aux '{}' ({}{})", program.buffers[aux.buffer].name,
                         to_string(aux.broadcast), aux.batch_broadcast ? ", batch 1" : "");
    }
    case EpilogueOp::kPointwise: {
      std::vector<std::string> args;
      for (int in : node.inputs) args.push_back(fmt::format("%{}", in));
      const auto& pw = node.pointwise;
      // Attributes change the formula, so a program that differs only in them prints apart.
      if (pw.relu_lower_clip_slope)
        args.push_back(fmt::format("slope {}", *pw.relu_lower_clip_slope));
      if (pw.relu_lower_clip) args.push_back(fmt::format("lower {}", *pw.relu_lower_clip));
      if (pw.relu_upper_clip) args.push_back(fmt::format("upper {}", *pw.relu_upper_clip));
      if (pw.swish_beta) args.push_back(fmt::format("beta {}", *pw.swish_beta));
      return fmt::format("{}({})", to_string(pw.mode), fmt::join(args, ", "));
    }
  }
  return "?";
}

std::string axes(const Tap& tap) {
  std::vector<std::string_view> reduced;
  if (tap.reduce_batch) reduced.push_back("batch");
  if (tap.reduce_m) reduced.push_back("M");
  if (tap.reduce_n) reduced.push_back("N");
  return reduced.empty() ? "nothing" : fmt::format("{}", fmt::join(reduced, ", "));
}

// Every role a buffer plays, in first-use order: matmul(A, A) binds one buffer as "A,B".
std::string roles(const FusionProgram& program, int buffer) {
  std::vector<std::string_view> seen;
  auto add = [&](Role role) {
    const auto name = fusedgemm::to_string(role);
    if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
  };
  for (const auto& op : program.operands) {
    if (op.buffer == buffer) add(op.role);
    if (op.block_scale && op.block_scale->scale_buffer == buffer) add(Role::kScale);
  }
  for (const auto& a : program.aux) {
    if (a.buffer == buffer) add(Role::kAux);
  }
  for (const auto& o : program.outputs) {
    if (o.buffer == buffer) add(Role::kOutput);
  }
  for (const auto& t : program.taps) {
    if (t.buffer == buffer) add(Role::kTap);
  }
  for (const auto& q : program.quantized_outputs) {
    if (q.buffer == buffer) add(Role::kOutput);
    if (q.scale_buffer == buffer) add(Role::kScale);
  }
  if (seen.empty()) add(program.role_of(buffer));
  return fmt::format("{}", fmt::join(seen, ","));
}

}  // namespace

std::string to_string(const FusionProgram& program) {
  const auto& p = program.problem;
  const auto& buffers = program.buffers;
  std::string out = fmt::format("fusion program '{}': batch {} M {} N {} K {}\n",
                                program.graph_name, p.batch, p.m, p.n, p.k);
  out += "buffers:\n";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const auto& b = buffers[i];
    out += fmt::format("  #{} {:<6} '{}' uid {} {} {}\n", i, roles(program, static_cast<int>(i)),
                       b.name, b.uid, fusedgemm::to_string(b.data_type),
                       fusedgemm::to_string(b.layout));
  }
  out += "mainloop:\n";
  for (std::size_t g = 0; g < program.gemms.size(); ++g) {
    const auto& gemm = program.gemms[g];
    out += fmt::format("  gemm {} '{}'\n", g, gemm.name);
    for (int index : {gemm.a, gemm.b}) {
      const auto& op = program.operands[index];
      out +=
          fmt::format("    {} '{}' {} {}{}", fusedgemm::to_string(op.role), buffers[op.buffer].name,
                      fusedgemm::to_string(buffers[op.buffer].data_type), to_string(op.major),
                      op.batch_broadcast ? " batch-broadcast" : "");
      if (op.block_scale) {
        out += fmt::format(" block-scaled by '{}' ({}, {}x{})",
                           buffers[op.block_scale->scale_buffer].name,
                           fusedgemm::to_string(op.block_scale->scale_type),
                           op.block_scale->block_rows, op.block_scale->block_cols);
      }
      out += "\n";
    }
  }
  out += "epilogue:\n";
  for (std::size_t i = 0; i < program.epilogue.size(); ++i) {
    const auto& node = program.epilogue[i];
    out += fmt::format("  %{} = {}", i, describe(node, program));
    if (node.round_to != DataType::kFloat32) {
      out += fmt::format(" rounded to {}", fusedgemm::to_string(node.round_to));
    }
    out += fmt::format("  # '{}'\n", node.name);
  }
  out += "stores:\n";
  for (const auto& o : program.outputs) {
    out += fmt::format("  output '{}' <- %{} {} {}\n", buffers[o.buffer].name, o.value,
                       fusedgemm::to_string(buffers[o.buffer].data_type), to_string(o.major));
  }
  for (const auto& t : program.taps) {
    out += fmt::format("  tap '{}' <- {}(%{}) over {} {}\n", buffers[t.buffer].name,
                       fusedgemm::to_string(t.mode), t.value, axes(t),
                       fusedgemm::to_string(buffers[t.buffer].data_type));
  }
  for (const auto& q : program.quantized_outputs) {
    out += fmt::format("  quantized '{}' + scales '{}' <- %{} {} {} blocks {}x{}\n",
                       buffers[q.buffer].name, buffers[q.scale_buffer].name, q.value,
                       fusedgemm::to_string(buffers[q.buffer].data_type), to_string(q.major),
                       q.block_rows, q.block_cols);
  }
  return out;
}

}  // namespace fusedgemm::fusion
