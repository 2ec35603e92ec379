// Graph validation: shape and data-type inference with one message per broken condition.
// Message shape: "<check>: tensor '<name>': <what was seen>; legal: <condition>".
// A tensor that failed a check is "bad": nodes that read it are skipped rather than
// checked, so one mistake gives one message, not one per downstream node.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "fusedgemm/graph.h"

namespace fusedgemm {

class GraphValidator {
 public:
  explicit GraphValidator(Graph& graph) : graph_(graph) {}

  Status run() {
    forget_inferred();
    if (graph_.nodes_.empty()) {
      error("graph_empty: {} has 0 nodes; legal: at least one matmul", graph_label());
      return finish();
    }
    name_nodes();
    name_tensors();
    const bool structure_ok = check_structure();
    check_uids_and_names();
    if (!structure_ok || !order_nodes()) return finish();
    for (const auto& t : graph_.tensors_) {
      if (!producer_.contains(t.get()) && consumed_.contains(t.get())) check_leaf(t);
    }
    for (const auto& node : graph_.nodes_) infer(node);
    check_outputs();
    return finish();
  }

 private:
  using Dimv = std::vector<std::int64_t>;

  template <class... Args>
  void error(fmt::format_string<Args...> format, Args&&... args) {
    errors_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  Status finish() {
    if (errors_.empty()) {
      graph_.validated_ = true;
      return Status::ok();
    }
    return Status(ErrorCode::kInvalidGraph, fmt::format("{}", fmt::join(errors_, "\n")));
  }

  std::string graph_label() const {
    return graph_.name_.empty() ? std::string("the graph")
                                : fmt::format("graph '{}'", graph_.name_);
  }

  static std::string dims_str(const Dimv& d) { return fmt::format("[{}]", fmt::join(d, ", ")); }

  void forget_inferred() {
    for (const auto& t : graph_.tensors_) {
      if (t->dims_inferred_) t->dims_.clear();
      if (t->strides_inferred_) t->strides_.clear();
      if (t->data_type_inferred_) t->data_type_ = DataType::kNotSet;
      t->dims_inferred_ = t->strides_inferred_ = t->data_type_inferred_ = false;
    }
  }

  static void infer_type(TensorAttributes& t, DataType type) {
    if (t.data_type_ != DataType::kNotSet) return;
    t.data_type_ = type;
    t.data_type_inferred_ = true;
  }

  // `base`, or `base_<k>` for the smallest k that no one has taken yet.
  static std::string unique_name(std::set<std::string>& taken, const std::string& base) {
    std::string name = base;
    for (int k = 1; taken.contains(name); ++k) name = fmt::format("{}_{}", base, k);
    taken.insert(name);
    return name;
  }

  // Unnamed nodes become `<kind>_<index>`, avoiding names the caller chose. Messages and
  // default tensor names cite nodes by name, so two nodes may not share one.
  void name_nodes() {
    std::set<std::string> taken;
    for (const auto& node : graph_.nodes_) {
      if (!node.name.empty() && !taken.insert(node.name).second) {
        error(
            "node_duplicate_name: node '{}': the name is given to two nodes; legal: unique "
            "node names",
            node.name);
      }
    }
    for (std::size_t i = 0; i < graph_.nodes_.size(); ++i) {
      auto& node = graph_.nodes_[i];
      if (node.name.empty()) {
        node.name = unique_name(taken, fmt::format("{}_{}", to_string(node.kind), i));
      }
    }
  }

  // Every tensor gets a name: `<node>::<port>` of its producer, else of its first consumer.
  void name_tensors() {
    std::set<std::string> taken;
    for (const auto& t : graph_.tensors_) taken.insert(t->name_);
    auto name = [&](const Tensor& t, const Node& node, std::string_view port) {
      if (t && t->name_.empty())
        t->name_ = unique_name(taken, fmt::format("{}::{}", node.name, port));
    };
    for (const auto& node : graph_.nodes_) {
      for (std::size_t i = 0; i < node.outputs.size(); ++i) {
        name(node.outputs[i], node, output_port_name(node.kind, i));
      }
    }
    for (const auto& node : graph_.nodes_) {
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        name(node.inputs[i], node, input_port_name(node.kind, i));
      }
    }
    for (std::size_t i = 0; i < graph_.tensors_.size(); ++i) {
      auto& t = *graph_.tensors_[i];
      if (t.name_.empty()) t.name_ = unique_name(taken, fmt::format("tensor_{}", i));
    }
  }

  // What a structural message is about: the node's first result, else the node itself.
  static std::string subject(const Node& node) {
    for (const auto& t : node.outputs) {
      if (t) return fmt::format("tensor '{}'", t->name());
    }
    return fmt::format("node '{}'", node.name);
  }

  // Nodes carry their own attributes and the arity of their op, hold no null handle, and
  // no tensor has two producers.
  bool check_structure() {
    bool ok = true;
    for (std::size_t i = 0; i < graph_.nodes_.size(); ++i) {
      const auto& node = graph_.nodes_[i];
      if (!attributes_match(node)) {
        error(
            "node_attributes: {}: {} node '{}' carries attributes of another op (variant "
            "index {}); legal: the attributes struct of its own op",
            subject(node), to_string(node.kind), node.name, node.attributes.index());
        ok = false;
        continue;
      }
      if (const auto* pw = std::get_if<PointwiseAttributes>(&node.attributes);
          pw && arity(pw->mode) == 0) {
        error(
            "pointwise_mode: {}: node '{}' has pointwise mode {}, which is not an op; legal: "
            "a PointwiseMode enumerator",
            subject(node), node.name, static_cast<int>(pw->mode));
        ok = false;
        continue;
      }
      const std::size_t want_in = expected_inputs(node);
      const std::size_t want_out = node.kind == NodeKind::kBlockScaleQuantize ? 2 : 1;
      if (node.inputs.size() != want_in || node.outputs.size() != want_out) {
        error(
            "node_arity: {}: node '{}' ({}) has {} inputs and {} outputs; legal: {} inputs and "
            "{} outputs",
            subject(node), node.name, op_name(node), node.inputs.size(), node.outputs.size(),
            want_in, want_out);
        ok = false;
        continue;
      }
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        if (node.inputs[k]) {
          consumed_.insert(node.inputs[k].get());
        } else {
          error(
              "node_null_tensor: {}: node '{}' has a null handle as input {} ({}); legal: a "
              "tensor handle",
              subject(node), node.name, k, input_port_name(node.kind, k));
          ok = false;
        }
      }
      for (std::size_t k = 0; k < node.outputs.size(); ++k) {
        const auto& t = node.outputs[k];
        if (!t) {
          error(
              "node_null_tensor: {}: node '{}' has a null handle as output {} ({}); legal: a "
              "tensor handle",
              subject(node), node.name, k, output_port_name(node.kind, k));
          ok = false;
        } else if (auto [it, fresh] = producer_.emplace(t.get(), i); !fresh) {
          error(
              "tensor_two_producers: tensor '{}': computed by node '{}' and node '{}' (2 "
              "producers); legal: one producer per tensor",
              t->name(), graph_.nodes_[it->second].name, node.name);
          ok = false;
        }
      }
    }
    return ok;
  }

  static bool attributes_match(const Node& node) {
    switch (node.kind) {
      case NodeKind::kMatmul: return std::holds_alternative<MatmulAttributes>(node.attributes);
      case NodeKind::kPointwise:
        return std::holds_alternative<PointwiseAttributes>(node.attributes);
      case NodeKind::kReduction:
        return std::holds_alternative<ReductionAttributes>(node.attributes);
      case NodeKind::kBlockScaleDequantize:
        return std::holds_alternative<BlockScaleDequantizeAttributes>(node.attributes);
      case NodeKind::kBlockScaleQuantize:
        return std::holds_alternative<BlockScaleQuantizeAttributes>(node.attributes);
    }
    return false;
  }

  static std::size_t expected_inputs(const Node& node) {
    switch (node.kind) {
      case NodeKind::kMatmul:
      case NodeKind::kBlockScaleDequantize: return 2;
      case NodeKind::kPointwise: {
        const auto* pw = std::get_if<PointwiseAttributes>(&node.attributes);
        return pw ? static_cast<std::size_t>(arity(pw->mode)) : 0;
      }
      case NodeKind::kReduction:
      case NodeKind::kBlockScaleQuantize: return 1;
    }
    return 0;
  }

  static std::string op_name(const Node& node) {
    if (const auto* pw = std::get_if<PointwiseAttributes>(&node.attributes)) {
      return fmt::format("pointwise {}", to_string(pw->mode));
    }
    return std::string(to_string(node.kind));
  }

  // User uids must be unique; the rest are assigned above the largest user uid (or, when
  // that is the largest int64, in the gaps), so an assigned uid never meets a user uid.
  void check_uids_and_names() {
    std::map<std::int64_t, const TensorAttributes*> by_uid;
    std::int64_t largest = 0;
    for (const auto& t : graph_.tensors_) {
      if (t->uid_assigned_) t->uid_.reset();
      t->uid_assigned_ = false;
      if (!t->uid_) continue;
      largest = std::max(largest, *t->uid_);
      if (auto [it, fresh] = by_uid.emplace(*t->uid_, t.get()); !fresh) {
        error(
            "tensor_duplicate_uid: tensor '{}': uid {} is also the uid of tensor '{}'; legal: "
            "one tensor per uid",
            t->name(), *t->uid_, it->second->name());
      }
    }
    std::int64_t next = largest < std::numeric_limits<std::int64_t>::max() ? largest + 1 : 1;
    for (const auto& t : graph_.tensors_) {
      if (t->uid_) continue;
      while (by_uid.contains(next)) ++next;
      t->uid_ = next;
      t->uid_assigned_ = true;
      by_uid.emplace(next, t.get());
    }
    std::map<std::string, const TensorAttributes*> by_name;
    std::set<std::string> reported;
    for (const auto& t : graph_.tensors_) {
      auto [it, fresh] = by_name.emplace(t->name(), t.get());
      if (!fresh && reported.insert(t->name()).second) {
        error(
            "tensor_duplicate_name: tensor '{}': the name is given to the tensors of uid {} and "
            "uid {}; legal: unique names (a variant pack may be keyed by name)",
            t->name(), *it->second->uid(), *t->uid_);
      }
    }
  }

  // Kahn's algorithm, stable: among ready nodes the earliest inserted goes first.
  bool order_nodes() {
    const std::size_t n = graph_.nodes_.size();
    std::vector<int> pending(n, 0);
    std::vector<std::vector<std::size_t>> users(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& t : graph_.nodes_[i].inputs) {
        if (auto it = producer_.find(t.get()); it != producer_.end()) {
          ++pending[i];
          users[it->second].push_back(i);
        }
      }
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.insert(i);
    }
    std::vector<std::size_t> order;
    while (!ready.empty()) {
      const std::size_t i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (std::size_t u : users[i]) {
        if (--pending[u] == 0) ready.insert(u);
      }
    }
    if (order.size() != n) {
      report_cycle(pending);
      return false;
    }
    std::vector<Node> sorted;
    for (std::size_t i : order) sorted.push_back(std::move(graph_.nodes_[i]));
    graph_.nodes_ = std::move(sorted);
    producer_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& t : graph_.nodes_[i].outputs) producer_[t.get()] = i;
    }
    return true;
  }

  // Every node left unordered reads a tensor whose producer is also left unordered. Walking
  // those producers back from one of them must meet a node twice: that node is on a cycle
  // (the first unordered node may only sit downstream of one).
  void report_cycle(const std::vector<int>& pending) {
    const auto& nodes = graph_.nodes_;
    std::size_t at = 0;
    while (pending[at] == 0) ++at;
    std::vector<std::size_t> path;
    std::vector<const TensorAttributes*> via;  // via[k]: input of path[k] made by path[k + 1]
    std::vector<int> seen_at(nodes.size(), -1);
    while (seen_at[at] < 0) {
      seen_at[at] = static_cast<int>(path.size());
      path.push_back(at);
      for (const auto& t : nodes[at].inputs) {
        if (auto it = producer_.find(t.get()); it != producer_.end() && pending[it->second] > 0) {
          via.push_back(t.get());
          at = it->second;
          break;
        }
      }
    }
    const auto start = static_cast<std::size_t>(seen_at[at]);
    std::vector<std::string> flow{fmt::format("'{}'", nodes[at].name)};
    for (std::size_t k = path.size(); k-- > start + 1;) {
      flow.push_back(fmt::format("'{}'", nodes[path[k]].name));
    }
    flow.push_back(flow.front());
    error(
        "graph_cycle: tensor '{}': node '{}' reads it, yet it is computed from that node's "
        "own result through a cycle of {} node(s): {}; legal: an acyclic graph",
        via[start]->name(), nodes[at].name, path.size() - start, fmt::join(flow, " -> "));
  }

  // Rank 3, positive extents, non-negative strides that reach each element once. Missing
  // strides default to row-major packed.
  bool check_layout(TensorAttributes& t) {
    if (t.dims_.size() != kRank) {
      error(
          "tensor_rank: tensor '{}': dims {} have rank {}; legal: rank 3 [batch, rows, "
          "columns]",
          t.name(), dims_str(t.dims_), t.dims_.size());
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < kRank; ++i) {
      if (t.dims_[i] <= 0) {
        error(
            "tensor_extent: tensor '{}': dims {} have extent {} on axis {}; legal: every "
            "extent >= 1",
            t.name(), dims_str(t.dims_), t.dims_[i], i);
        ok = false;
      }
    }
    if (t.strides_.empty()) {
      if (!ok) return false;
      t.strides_ = {t.dims_[1] * t.dims_[2], t.dims_[2], 1};
      t.strides_inferred_ = true;
      return true;
    }
    if (t.strides_.size() != kRank) {
      error(
          "tensor_rank: tensor '{}': strides {} have rank {}; legal: rank 3, one stride per "
          "dim",
          t.name(), dims_str(t.strides_), t.strides_.size());
      return false;
    }
    for (std::size_t i = 0; i < kRank; ++i) {
      if (t.strides_[i] < 0) {
        error(
            "tensor_stride: tensor '{}': strides {} have stride {} on axis {}; legal: every "
            "stride >= 0",
            t.name(), dims_str(t.strides_), t.strides_[i], i);
        ok = false;
      }
    }
    if (!ok) return false;
    const Layout layout = t.layout();
    if (const int axis = layout.overlapping_axis(); axis >= 0) {
      error(
          "tensor_aliasing: tensor '{}': layout {} has axis {} (extent {}, stride {}) inside "
          "the span of the axes of smaller stride; legal: each axis's stride clears the span "
          "of the axes below it, so no two index tuples can reach one element",
          t.name(), to_string(layout), axis, layout.shape[axis], layout.stride[axis]);
      return false;
    }
    return true;
  }

  void check_leaf(const Tensor& t) {
    bool ok = true;
    if (t->dims_.empty()) {
      error(
          "tensor_dims_missing: tensor '{}': dims [] (none declared); legal: set_dim([batch, "
          "rows, columns])",
          t->name());
      ok = false;
    } else {
      ok = check_layout(*t);
    }
    if (t->data_type_ == DataType::kNotSet) {
      error(
          "tensor_data_type_missing: tensor '{}': input has no data type; legal: "
          "set_data_type(...)",
          t->name());
      ok = false;
    }
    if (t->output_) {
      error(
          "output_not_computed: tensor '{}': marked as output but no node computes it (0 "
          "producers); legal: an output is the result of a node",
          t->name());
    }
    if (!ok) bad_.insert(t.get());
  }

  bool any_bad(const Node& node) const {
    return std::any_of(node.inputs.begin(), node.inputs.end(),
                       [&](const Tensor& t) { return bad_.contains(t.get()); });
  }

  void poison(const Node& node) {
    for (const auto& t : node.outputs) bad_.insert(t.get());
  }

  // Sets an inferred result; a user-declared shape must agree with the inference.
  void set_inferred(const Node& node, TensorAttributes& t, const Dimv& dims) {
    if (!t.dims_.empty() && t.dims_ != dims) {
      error(
          "tensor_dims_mismatch: tensor '{}': declared dims {} but node '{}' computes {}; "
          "legal: {} or no declared dims",
          t.name(), dims_str(t.dims_), node.name, dims_str(dims), dims_str(dims));
      bad_.insert(&t);
      return;
    }
    if (t.dims_.empty()) t.dims_inferred_ = true;
    t.dims_ = dims;
    if (!check_layout(t)) bad_.insert(&t);
  }

  void infer(const Node& node) {
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

  static bool matmul_operand_type(DataType t) { return is_float(t) || t == DataType::kInt8; }

  // A [b, M, K] @ B [b, K, N] = [b, M, N]; each operand's batch is 1 or b.
  void infer_matmul(const Node& node) {
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
  void infer_pointwise(const Node& node) {
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
  void infer_reduction(const Node& node) {
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
      reduces = reduces || (out.dims_[i] == 1 && in.dims_[i] > 1);
    }
    if (!reduces) {
      error(
          "reduction_reduces_nothing: tensor '{}': dims {} against input dims {} reduce no "
          "axis; legal: extent 1 on at least one axis whose input extent is larger",
          out.name(), dims_str(out.dims_), dims_str(in.dims_));
      return poison(node);
    }
    infer_type(out, DataType::kFloat32);
    // DESIGN.md 3: taps are fp32, int32 for an integer input; avg and norm2 are fractional.
    const bool fractional =
        attrs.mode == ReductionMode::kAvg || attrs.mode == ReductionMode::kNorm2;
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

  static Dimv block_dims(const Dimv& dims, std::int64_t rows, std::int64_t cols) {
    return {dims[0], (dims[1] + rows - 1) / rows, (dims[2] + cols - 1) / cols};
  }

  bool check_block(const Node& node, std::int64_t rows, std::int64_t cols) {
    if (rows > 0 && cols > 0) return true;
    error(
        "block_scale_block_size: tensor '{}': node '{}' has block size {}x{}; legal: both "
        "sides >= 1",
        node.inputs[0]->name(), node.name, rows, cols);
    poison(node);
    return false;
  }

  bool check_scale(const Node& node, const TensorAttributes& scale, const Dimv& want) {
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

  static bool quantized_type(DataType t) {
    return is_fp8(t) || t == DataType::kFp4E2M1 || t == DataType::kInt8;
  }

  void infer_dequantize(const Node& node) {
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

  void infer_quantize(const Node& node) {
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

  // True where no node infers the tensor's data type: matmul and pointwise results stored
  // as outputs, and the values of a block_scale_quantize.
  bool needs_declared_type(const TensorAttributes* t) const {
    const Node& node = graph_.nodes_[producer_.at(t)];
    return node.kind == NodeKind::kMatmul || node.kind == NodeKind::kPointwise ||
           (node.kind == NodeKind::kBlockScaleQuantize && node.outputs[0].get() == t);
  }

  void check_outputs() {
    bool any = false;
    for (const auto& t : graph_.tensors_) {
      if (!t->output_) continue;
      any = true;
      if (!producer_.contains(t.get())) {
        if (!consumed_.contains(t.get())) {
          error(
              "output_not_computed: tensor '{}': marked as output but no node computes it (0 "
              "producers); legal: an output is the result of a node",
              t->name());
        }
        continue;
      }
      // A tap or scale downstream of a bad tensor has no inferred type; that is no news.
      if (t->data_type_ == DataType::kNotSet && !type_reported_.contains(t.get()) &&
          needs_declared_type(t.get())) {
        error(
            "tensor_data_type_missing: tensor '{}': output has no data type; legal: "
            "set_data_type(bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, int8, ...)",
            t->name());
      }
    }
    if (!any) {
      error(
          "graph_no_output: {} has 0 tensors marked as output; legal: set_output(true) on at "
          "least one computed tensor",
          graph_label());
    }
  }

  Graph& graph_;
  std::vector<std::string> errors_;
  std::unordered_map<const TensorAttributes*, std::size_t> producer_;
  std::set<const TensorAttributes*> consumed_;
  std::set<const TensorAttributes*> bad_;
  std::set<const TensorAttributes*> type_reported_;
};

Status Graph::validate() {
  validated_ = false;
  return GraphValidator(*this).run();
}

}  // namespace fusedgemm
