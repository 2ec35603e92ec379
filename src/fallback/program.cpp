#include "fallback/program.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace fusedgemm::fallback {
namespace {

Dims dims_of(const TensorAttributes& t) {
  return {t.dims()[0], t.dims()[1], t.dims()[2]};
}

// Undeclared (inferred) tensors hold fp32, the running value's type.
DataType value_type(const TensorAttributes& t) {
  return t.data_type() == DataType::kNotSet ? DataType::kFloat32 : t.data_type();
}

bool rounds(DataType type) {
  return type != DataType::kFloat32;
}

Step make_step(StepKind kind, std::string node) {
  Step step;
  step.kind = kind;
  step.node = std::move(node);
  return step;
}

class Planner {
 public:
  explicit Planner(const Graph& graph) : graph_(graph) { program_.graph_name = graph.name(); }

  Result<Program> plan() {
    find_live_nodes();
    add_buffers_and_values();
    for (std::size_t i = 0; i < graph_.nodes().size(); ++i) {
      if (live_node_[i]) add_node(graph_.nodes()[i]);
    }
    for (std::size_t i = 0; i < program_.buffers.size(); ++i) {
      const Buffer& b = program_.buffers[i];
      if (!b.written) continue;
      Step store = make_step(StepKind::kStore, b.name);
      store.in = {b.value};
      store.buffer = static_cast<int>(i);
      program_.steps.push_back(std::move(store));
    }
    place_values();
    return std::move(program_);
  }

 private:
  // A node no output depends on is not run, and a tensor only such nodes read is not a
  // buffer of the plan (as in the fused engine's analysis, so one pack fits both engines).
  void find_live_nodes() {
    const auto& nodes = graph_.nodes();
    std::set<const TensorAttributes*> live;
    for (const Tensor& t : graph_.tensors()) {
      if (t->is_output()) live.insert(t.get());
    }
    live_node_.assign(nodes.size(), false);
    for (std::size_t i = nodes.size(); i-- > 0;) {
      for (const Tensor& t : nodes[i].outputs)
        live_node_[i] = live_node_[i] || live.contains(t.get());
      if (!live_node_[i]) continue;
      for (const Tensor& t : nodes[i].inputs) live.insert(t.get());
    }
  }

  void add_buffers_and_values() {
    std::set<const TensorAttributes*> produced;
    std::map<const TensorAttributes*, Role> use;
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      if (!live_node_[n]) continue;
      const Node& node = graph_.nodes()[n];
      for (const Tensor& t : node.outputs) produced.insert(t.get());
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        Role role = Role::kAux;
        if (node.kind == NodeKind::kMatmul) role = i == 0 ? Role::kA : Role::kB;
        if (node.kind == NodeKind::kBlockScaleDequantize && i == 1) role = Role::kScale;
        use.try_emplace(node.inputs[i].get(), role);
      }
    }
    for (const Tensor& t : graph_.tensors()) {
      const bool input = !produced.contains(t.get()) && use.contains(t.get());
      if (!input && !produced.contains(t.get())) continue;  // declared, never used
      const int value = static_cast<int>(program_.values.size());
      program_.values.push_back({t->name(), dims_of(*t), value_type(*t), -1, -1});
      value_of_[t.get()] = value;
      program_.batch = std::max(program_.batch, t->dims()[0]);
      if (!input && !t->is_output()) continue;
      const int buffer = static_cast<int>(program_.buffers.size());
      program_.buffers.push_back({*t->uid(), t->name(), input ? use.at(t.get()) : Role::kOutput,
                                  t->data_type(), t->layout(), !input, value});
      if (input) program_.values[value].buffer = buffer;
    }
  }

  int value(const Tensor& t) const { return value_of_.at(t.get()); }

  // A matmul operand as a workspace value: a caller's buffer is converted to fp32 once.
  int operand(const Tensor& t) {
    const int v = value(t);
    if (program_.values[v].in_workspace()) return v;
    if (auto it = converted_.find(v); it != converted_.end()) return it->second;
    const int copy = static_cast<int>(program_.values.size());
    Value converted = program_.values[v];
    converted.name += ":fp32";
    converted.type = DataType::kFloat32;
    converted.buffer = -1;
    program_.values.push_back(std::move(converted));
    Step step = make_step(StepKind::kPointwise, program_.values[copy].name);
    step.in = {v};
    step.out = copy;
    program_.steps.push_back(std::move(step));
    converted_[v] = copy;
    return copy;
  }

  void add_node(const Node& node) {
    Step step = make_step(StepKind::kPointwise, node.name);
    step.out = value(node.outputs[0]);
    switch (node.kind) {
      case NodeKind::kMatmul: {
        step.kind = StepKind::kMatmul;
        step.in = {operand(node.inputs[0]), operand(node.inputs[1])};
        program_.steps.push_back(step);
        // The GEMM leaves fp32; a declared type rounds the result in place.
        if (rounds(program_.values[step.out].type)) {
          Step round = make_step(StepKind::kPointwise, node.name + " (round)");
          round.in = {step.out};
          round.out = step.out;
          program_.steps.push_back(std::move(round));
        }
        return;
      }
      case NodeKind::kPointwise:
        step.kind = StepKind::kPointwise;
        step.pointwise = std::get<PointwiseAttributes>(node.attributes);
        break;
      case NodeKind::kReduction:
        step.kind = StepKind::kReduction;
        step.reduction = std::get<ReductionAttributes>(node.attributes).mode;
        break;
      case NodeKind::kBlockScaleDequantize: {
        const auto& a = std::get<BlockScaleDequantizeAttributes>(node.attributes);
        step.kind = StepKind::kDequantize;
        step.block_rows = a.block_rows;
        step.block_cols = a.block_cols;
        break;
      }
      case NodeKind::kBlockScaleQuantize: {
        const auto& a = std::get<BlockScaleQuantizeAttributes>(node.attributes);
        step.kind = StepKind::kQuantize;
        step.block_rows = a.block_rows;
        step.block_cols = a.block_cols;
        step.out2 = value(node.outputs[1]);
        break;
      }
    }
    for (const Tensor& t : node.inputs) step.in.push_back(value(t));
    program_.steps.push_back(std::move(step));
  }

  void place_values() {
    std::int64_t offset = 0;
    for (Value& v : program_.values) {
      if (!v.in_workspace()) continue;
      v.offset = offset;
      const std::int64_t bytes = v.count() * 4;
      offset += (bytes + kValueAlignment - 1) / kValueAlignment * kValueAlignment;
    }
    program_.workspace_bytes = static_cast<std::uint64_t>(offset);
  }

  const Graph& graph_;
  Program program_;
  std::map<const TensorAttributes*, int> value_of_;
  std::map<int, int> converted_;
  std::vector<bool> live_node_;
};

}  // namespace

std::string_view to_string(StepKind kind) {
  switch (kind) {
    case StepKind::kPointwise: return "pointwise";
    case StepKind::kMatmul: return "matmul";
    case StepKind::kReduction: return "reduction";
    case StepKind::kDequantize: return "dequantize";
    case StepKind::kQuantize: return "quantize";
    case StepKind::kStore: return "store";
  }
  return "?";
}

Result<Program> plan_program(const Graph& graph) {
  FG_CHECK(graph.is_validated(), ErrorCode::kInvalidGraph,
           "fallback_graph_not_validated: graph '" + graph.name() +
               "': the fallback engine plans from inferred dims and node order; legal: "
               "validate() first");
  return Planner(graph).plan();
}

std::string to_string(const Program& program) {
  std::string out = fmt::format("fallback steps of '{}' ({} workspace bytes for values):\n",
                                program.graph_name, program.workspace_bytes);
  auto name = [&](int v) {
    const Value& value = program.values[v];
    return fmt::format("'{}' {} {}", value.name, fusedgemm::to_string(value.dims),
                       value.in_workspace() ? "fp32 workspace" : "caller buffer");
  };
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    const Step& s = program.steps[i];
    std::string detail;
    if (s.kind == StepKind::kPointwise) detail = fmt::format(" {}", to_string(s.pointwise.mode));
    if (s.kind == StepKind::kReduction) detail = fmt::format(" {}", to_string(s.reduction));
    out += fmt::format("  {:>2}: {}{} ({})", i, to_string(s.kind), detail, s.node);
    for (int v : s.in) out += " <- " + name(v);
    if (s.out >= 0) out += " -> " + name(s.out);
    if (s.out2 >= 0) out += ", " + name(s.out2);
    if (s.buffer >= 0) {
      const Buffer& b = program.buffers[s.buffer];
      out += fmt::format(" -> caller '{}' {}", b.name, to_string(b.type));
    }
    out += "\n";
  }
  return out;
}

}  // namespace fusedgemm::fallback
