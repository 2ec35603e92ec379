#include "fusion/analyze.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace fusedgemm::fusion {
namespace {

using Dimv = std::vector<std::int64_t>;

std::string dims_str(const Dimv& d) {
  return fmt::format("[{}]", fmt::join(d, ", "));
}

// The unit-stride axis of an operand or output decides its major. An axis of extent 1 is
// never the contiguous one when the other axis is long and dense: A [b, M, 1] with stride 1
// on M reads M-major, since a K-major reading would give TMA a contiguous extent of 1. When
// neither axis has extent > 1 every major reads the same bytes, and `first` is taken.
std::optional<int> unit_stride_axis(const Layout& layout, int first, int second) {
  for (int axis : {first, second}) {
    if (layout.shape[axis] > 1 && layout.stride[axis] == 1) return axis;
  }
  for (int axis : {first, second}) {
    if (layout.shape[axis] > 1) return std::nullopt;
  }
  return first;
}

class Analyzer {
 public:
  explicit Analyzer(const Graph& graph) : graph_(graph) {}

  Analysis run() {
    program_.graph_name = graph_.name();
    for (std::size_t i = 0; i < graph_.nodes().size(); ++i) {
      for (const auto& t : graph_.nodes()[i].outputs) producer_[t.get()] = &graph_.nodes()[i];
    }
    mark_live();
    if (!decline_) set_problem();
    // The mainloop first: every operand is checked before any epilogue node is read, so a
    // node computing an operand is declined as a prologue, never taken for an epilogue value
    // with its caller inputs as aux loads. The accumulators lead the epilogue.
    for (const Node* node : live_) {
      if (decline_) break;
      if (node->kind == NodeKind::kMatmul) add_gemm(*node);
    }
    for (const Node* node : live_) {
      if (decline_) break;
      switch (node->kind) {
        case NodeKind::kMatmul: break;
        case NodeKind::kPointwise: add_pointwise(*node); break;
        case NodeKind::kReduction: add_tap(*node); break;
        case NodeKind::kBlockScaleQuantize: add_quantized(*node); break;
        case NodeKind::kBlockScaleDequantize: check_dequantize(*node); break;
      }
    }
    if (!decline_) add_dense_outputs();
    return {std::move(program_), std::move(decline_)};
  }

 private:
  template <class... Args>
  void decline(std::string_view rule, fmt::format_string<Args...> format, Args&&... args) {
    if (decline_) return;
    decline_ =
        Decline{std::string(rule),
                fmt::format("{}: {}", rule, fmt::format(format, std::forward<Args>(args)...))};
  }

  const Node* producer(const Tensor& t) const {
    auto it = producer_.find(t.get());
    return it == producer_.end() ? nullptr : it->second;
  }

  // A node is live when one of its results is an output or feeds a live node.
  void mark_live() {
    std::set<const TensorAttributes*> needed;
    std::vector<const Node*> reversed;
    const auto& nodes = graph_.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      bool live = false;
      for (const auto& t : it->outputs) live = live || t->is_output() || needed.contains(t.get());
      if (!live) continue;
      reversed.push_back(&*it);
      for (const auto& t : it->inputs) needed.insert(t.get());
    }
    live_.assign(reversed.rbegin(), reversed.rend());
    for (const Node* node : live_) {
      if (node->kind == NodeKind::kMatmul) return;
    }
    const auto matmuls = std::count_if(nodes.begin(), nodes.end(), [](const Node& node) {
      return node.kind == NodeKind::kMatmul;
    });
    const auto output = std::find_if(graph_.tensors().begin(), graph_.tensors().end(),
                                     [](const Tensor& t) { return t->is_output(); });
    // validate() guarantees at least one output.
    decline("no_matmul",
            "role output '{}': 0 of the graph's {} matmuls feed the outputs; legal: at least one "
            "matmul feeding the outputs",
            output == graph_.tensors().end() ? std::string() : (*output)->name(), matmuls);
  }

  // Every GEMM must share one problem shape: one CTA tile walks all accumulators together.
  void set_problem() {
    bool first = true;
    for (const Node* node : live_) {
      if (node->kind != NodeKind::kMatmul) continue;
      const auto& a = node->inputs[0]->dims();
      const auto& b = node->inputs[1]->dims();
      const ProblemShape shape{std::max(a[0], b[0]), a[1], b[2], a[2]};
      if (first) {
        program_.problem = shape;
        first_gemm_ = node->name;
        first = false;
      } else if (!(shape == program_.problem)) {
        const auto& p = program_.problem;
        // Name the operand that carries the differing extent: M and K are A's, N is B's, and
        // a batch belongs to whichever operand is not broadcast.
        const bool blame_b =
            shape.m == p.m && shape.k == p.k && (shape.n != p.n || a[0] != shape.batch);
        const Tensor& operand = node->inputs[blame_b ? 1 : 0];
        decline("gemm_shape_mismatch",
                "role {} '{}': matmul '{}' has batch {} M {} N {} K {} but matmul '{}' has batch "
                "{} M {} N {} K {}; legal: every matmul of one graph has the same problem shape",
                blame_b ? "B" : "A", operand->name(), node->name, shape.batch, shape.m, shape.n,
                shape.k, first_gemm_, p.batch, p.m, p.n, p.k);
        return;
      }
    }
  }

  int buffer_of(const Tensor& t) {
    if (auto it = buffers_.find(t.get()); it != buffers_.end()) return it->second;
    const int index = static_cast<int>(program_.buffers.size());
    program_.buffers.push_back({t->uid().value_or(0), t->name(), t->data_type(), t->layout()});
    buffers_[t.get()] = index;
    return index;
  }

  int operand_of(const Node& matmul, std::size_t port) {
    const Tensor& input = matmul.inputs[port];
    const Role role = port == 0 ? Role::kA : Role::kB;
    Tensor data = input;
    Tensor scale;  // set for a block_scale_dequantize of caller buffers
    const BlockScaleDequantizeAttributes* scaling = nullptr;
    if (const Node* p = producer(input)) {
      if (p->kind != NodeKind::kBlockScaleDequantize) {
        decline(p->kind == NodeKind::kMatmul ? "chained_gemm" : "prologue_op",
                "role {} '{}': matmul '{}' reads the result of {} '{}' (dims {}); legal: an "
                "operand the caller provides, or a block_scale_dequantize of one",
                to_string(role), input->name(), matmul.name, to_string(p->kind), p->name,
                dims_str(input->dims()));
        return -1;
      }
      // The mainloop multiplies the quantized data and promotes fp32 partial sums by the
      // scales; no dequantized element exists in it to round (issue 10: the fused engine
      // dropped a declared fp8 here while the fallback and the reference rounded).
      if (const DataType type = rounding_of(*input); type != DataType::kFloat32) {
        decline("dequantize_rounding",
                "role {} '{}': block_scale_dequantize '{}' declares its result {}, a rounding "
                "point inside the mainloop; legal: no data type or fp32 on a dequantized "
                "operand (the fallback engine rounds there)",
                to_string(role), input->name(), p->name, to_string(type));
        return -1;
      }
      scaling = &std::get<BlockScaleDequantizeAttributes>(p->attributes);
      data = p->inputs[0];
      scale = p->inputs[1];
      for (const Tensor& t : {data, scale}) {
        if (const Node* q = producer(t)) {
          decline(q->kind == NodeKind::kMatmul ? "chained_gemm" : "prologue_op",
                  "role {} '{}': block_scale_dequantize '{}' reads the result of {} '{}' (dims "
                  "{}); legal: quantized data and scales the caller provides",
                  t == scale ? "scale" : to_string(role), t->name(), p->name, to_string(q->kind),
                  q->name, dims_str(t->dims()));
          return -1;
        }
      }
    }
    Operand op;
    op.buffer = buffer_of(data);  // the data's buffer comes before its scales'
    op.role = role;
    op.batch_broadcast = data->dims()[0] == 1 && program_.problem.batch > 1;
    if (scaling) {
      op.block_scale = BlockScale{buffer_of(scale), scale->data_type(), scaling->block_rows,
                                  scaling->block_cols};
    }
    // A is [b, M, K]: K contiguous on axis 2, M on axis 1. B is [b, K, N]: K on 1, N on 2.
    const auto axis = role == Role::kA ? unit_stride_axis(data->layout(), 2, 1)
                                       : unit_stride_axis(data->layout(), 1, 2);
    if (!axis) {
      decline("operand_major",
              "role {} '{}': layout {} has no unit stride on the {} axes; legal: K-major or {}",
              to_string(role), data->name(), to_string(data->layout()),
              role == Role::kA ? "M or K" : "K or N", role == Role::kA ? "M-major" : "N-major");
      return -1;
    }
    op.major = (role == Role::kA) ? (*axis == 2 ? Major::kK : Major::kM)
                                  : (*axis == 1 ? Major::kK : Major::kN);
    // One operand per (buffer, role, block scaling): the same data scaled by other blocks is
    // another operand even when the scale buffer's dims happen to coincide.
    for (std::size_t i = 0; i < program_.operands.size(); ++i) {
      const auto& seen = program_.operands[i];
      if (seen.buffer == op.buffer && seen.role == op.role &&
          same_block_scale(seen.block_scale, op.block_scale)) {
        return static_cast<int>(i);
      }
    }
    program_.operands.push_back(op);
    return static_cast<int>(program_.operands.size()) - 1;
  }

  static bool same_block_scale(const std::optional<BlockScale>& x,
                               const std::optional<BlockScale>& y) {
    if (!x || !y) return x.has_value() == y.has_value();
    return x->scale_buffer == y->scale_buffer && x->scale_type == y->scale_type &&
           x->block_rows == y->block_rows && x->block_cols == y->block_cols;
  }

  static DataType rounding_of(const TensorAttributes& t) {
    const DataType type = t.data_type();
    return type == DataType::kNotSet ? DataType::kFloat32 : type;
  }

  int add_value(EpilogueNode node, const Tensor& tensor) {
    node.name = tensor->name();
    node.round_to = rounding_of(*tensor);
    program_.epilogue.push_back(std::move(node));
    const int index = static_cast<int>(program_.epilogue.size()) - 1;
    values_[tensor.get()] = index;
    return index;
  }

  void add_gemm(const Node& node) {
    const int a = operand_of(node, 0);
    const int b = a < 0 ? -1 : operand_of(node, 1);
    if (b < 0) return;
    program_.gemms.push_back({node.name, a, b});
    EpilogueNode acc;
    acc.op = EpilogueOp::kAccumulator;
    acc.gemm = static_cast<int>(program_.gemms.size()) - 1;
    add_value(std::move(acc), node.outputs[0]);
  }

  std::optional<Broadcast> broadcast_of(const Dimv& d) const {
    const auto& p = program_.problem;
    if ((d[0] != 1 && d[0] != p.batch) || (d[1] != 1 && d[1] != p.m) ||
        (d[2] != 1 && d[2] != p.n)) {
      return std::nullopt;
    }
    // An extent of 1 reads as broadcast even where the problem's extent is 1 too.
    if (d[1] == 1) return d[2] == 1 ? Broadcast::kScalar : Broadcast::kColumn;
    return d[2] == 1 ? Broadcast::kRow : Broadcast::kFull;
  }

  // The epilogue value of a pointwise, tap or quantize input: an earlier value, or an aux
  // load of a tensor the caller provides.
  int value_of(const Node& consumer, const Tensor& t) {
    if (auto it = values_.find(t.get()); it != values_.end()) return it->second;
    if (const Node* p = producer(t)) {
      const bool tap = p->kind == NodeKind::kReduction;
      decline(tap ? "tap_consumed" : "epilogue_input",
              "role {} '{}': {} '{}' reads the result of {} '{}' (dims {}); legal: {}",
              tap ? "tap" : "aux", t->name(), to_string(consumer.kind), consumer.name,
              to_string(p->kind), p->name, dims_str(t->dims()),
              tap ? "a reduction's result is only stored (it needs every CTA's share first)"
                  : "values computed from the accumulators or provided by the caller");
      return -1;
    }
    const auto broadcast = broadcast_of(t->dims());
    if (!broadcast) {
      const auto& p = program_.problem;
      decline("aux_shape",
              "role aux '{}': dims {} do not broadcast to the problem [{}, {}, {}]; legal: per "
              "axis extent 1 or the problem's",
              t->name(), dims_str(t->dims()), p.batch, p.m, p.n);
      return -1;
    }
    program_.aux.push_back(
        {buffer_of(t), *broadcast, t->dims()[0] == 1 && program_.problem.batch > 1});
    EpilogueNode load;
    load.op = EpilogueOp::kAuxLoad;
    load.aux = static_cast<int>(program_.aux.size()) - 1;
    const int index = add_value(std::move(load), t);
    // A load widens the stored type to fp32 exactly; there is nothing to round.
    program_.epilogue[index].round_to = DataType::kFloat32;
    return index;
  }

  void add_pointwise(const Node& node) {
    EpilogueNode pw;
    pw.op = EpilogueOp::kPointwise;
    pw.pointwise = std::get<PointwiseAttributes>(node.attributes);
    for (const auto& in : node.inputs) {
      const int v = value_of(node, in);
      if (v < 0) return;
      pw.inputs.push_back(v);
    }
    add_value(std::move(pw), node.outputs[0]);
  }

  // A reduction or quantize input covers the whole problem, one value per (b, m, n). The
  // message names what is stored (the tap, or the quantized values) and the input it reads.
  bool covers_problem(const Node& node, const Tensor& in) {
    const auto& p = program_.problem;
    const Dimv full{p.batch, p.m, p.n};
    if (in->dims() == full) return true;
    decline("store_shape",
            "role {} '{}': {} '{}' reads '{}' with dims {}; legal: the problem's dims {}",
            node.kind == NodeKind::kReduction ? "tap" : "output", node.outputs[0]->name(),
            to_string(node.kind), node.name, in->name(), dims_str(in->dims()), dims_str(full));
    return false;
  }

  void add_tap(const Node& node) {
    const Tensor& out = node.outputs[0];
    if (!out->is_output()) {
      decline("tap_consumed",
              "role tap '{}': reduction '{}' result (dims {}) is not an output; legal: "
              "set_output(true) on it, since a reduction's result is only stored",
              out->name(), node.name, dims_str(out->dims()));
      return;
    }
    if (!covers_problem(node, node.inputs[0])) return;
    const int v = value_of(node, node.inputs[0]);
    if (v < 0) return;
    const auto& d = out->dims();
    const auto& p = program_.problem;
    Tap tap;
    tap.buffer = buffer_of(out);
    tap.value = v;
    tap.mode = std::get<ReductionAttributes>(node.attributes).mode;
    tap.reduce_batch = d[0] == 1 && p.batch > 1;
    tap.reduce_m = d[1] == 1 && p.m > 1;
    tap.reduce_n = d[2] == 1 && p.n > 1;
    program_.taps.push_back(tap);
    stored_.insert(out.get());
  }

  void add_quantized(const Node& node) {
    if (!covers_problem(node, node.inputs[0])) return;
    const int v = value_of(node, node.inputs[0]);
    if (v < 0) return;
    const auto& attrs = std::get<BlockScaleQuantizeAttributes>(node.attributes);
    const Tensor& y = node.outputs[0];
    const Tensor& scale = node.outputs[1];
    for (const Tensor& t : {y, scale}) {
      if (!t->is_output()) {
        decline("quantized_output",
                "role {} '{}': block_scale_quantize '{}' result (dims {}) is not an output; "
                "legal: set_output(true) on both the values and the scales",
                t == scale ? "scale" : "output", t->name(), node.name, dims_str(t->dims()));
        return;
      }
      stored_.insert(t.get());
    }
    const auto major = output_major(y);
    if (!major) return;
    program_.quantized_outputs.push_back(
        {buffer_of(y), buffer_of(scale), v, attrs.block_rows, attrs.block_cols, *major});
  }

  // The major of a stored [b, M, N] tensor: N-major or M-major, else a decline.
  std::optional<Major> output_major(const Tensor& t) {
    const auto axis = unit_stride_axis(t->layout(), 2, 1);
    if (!axis) {
      decline("output_major",
              "role output '{}': layout {} has no unit stride on the M or N axis; legal: "
              "N-major or M-major",
              t->name(), to_string(t->layout()));
      return std::nullopt;
    }
    return *axis == 2 ? Major::kN : Major::kM;
  }

  // A dequantize belongs to the mainloop; anywhere else it is a prologue the kernel lacks.
  void check_dequantize(const Node& node) {
    for (const Node* user : live_) {
      for (std::size_t i = 0; i < user->inputs.size(); ++i) {
        if (user->inputs[i] != node.outputs[0] || user->kind == NodeKind::kMatmul) continue;
        decline("dequantize_placement",
                "role aux '{}': block_scale_dequantize '{}' result (dims {}) feeds {} '{}'; "
                "legal: a block_scale_dequantize feeds only matmul operands",
                node.outputs[0]->name(), node.name, dims_str(node.outputs[0]->dims()),
                to_string(user->kind), user->name);
        return;
      }
    }
    if (node.outputs[0]->is_output()) {
      decline("dequantize_placement",
              "role output '{}': block_scale_dequantize '{}' result (dims {}) is stored; legal: "
              "it feeds only matmul operands",
              node.outputs[0]->name(), node.name, dims_str(node.outputs[0]->dims()));
    }
  }

  void add_dense_outputs() {
    const auto& p = program_.problem;
    const Dimv full{p.batch, p.m, p.n};
    for (const auto& t : graph_.tensors()) {
      if (!t->is_output() || stored_.contains(t.get())) continue;
      auto it = values_.find(t.get());
      if (it == values_.end()) continue;  // declined above, or not live
      if (t->dims() != full) {
        decline("store_shape", "role output '{}': stores dims {}; legal: the problem's dims {}",
                t->name(), dims_str(t->dims()), dims_str(full));
        return;
      }
      const auto major = output_major(t);
      if (!major) return;
      program_.outputs.push_back({buffer_of(t), it->second, *major});
    }
  }

  const Graph& graph_;
  FusionProgram program_;
  std::optional<Decline> decline_;
  std::string first_gemm_;
  std::vector<const Node*> live_;
  std::map<const TensorAttributes*, const Node*> producer_;
  std::map<const TensorAttributes*, int> buffers_;
  std::map<const TensorAttributes*, int> values_;
  std::set<const TensorAttributes*> stored_;
};

}  // namespace

Result<Analysis> analyze(const Graph& graph) {
  FG_CHECK(graph.is_validated(), ErrorCode::kInvalidArgument,
           "analyze: the graph has not passed validate(); call validate() first");
  return Analyzer(graph).run();
}

}  // namespace fusedgemm::fusion
