// Graph validation, structural half: arity, producers, names, uids, topological order,
// layouts and outputs (the class is in graph_validator.h; inference is in infer.cpp).
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "graph/graph_validator.h"

namespace fusedgemm {

Status GraphValidator::finish() {
  if (errors_.empty()) {
    graph_.validated_ = true;
    return Status::ok();
  }
  return Status(ErrorCode::kInvalidGraph, fmt::format("{}", fmt::join(errors_, "\n")));
}

void GraphValidator::check_size() {
  if (graph_.nodes_.size() > kMaxGraphNodes) {
    error("graph_node_count: {} has {} nodes; legal: at most {} (2^20)", graph_label(),
          graph_.nodes_.size(), kMaxGraphNodes);
  }
  if (graph_.tensors_.size() > kMaxGraphTensors) {
    error("graph_tensor_count: {} has {} tensors; legal: at most {} (2^22)", graph_label(),
          graph_.tensors_.size(), kMaxGraphTensors);
  }
}

std::string GraphValidator::graph_label() const {
  return graph_.name_.empty() ? std::string("the graph") : fmt::format("graph '{}'", graph_.name_);
}

void GraphValidator::forget_inferred() {
  for (const auto& t : graph_.tensors_) {
    if (t->dims_inferred_) t->dims_.clear();
    if (t->strides_inferred_) t->strides_.clear();
    if (t->data_type_inferred_) t->data_type_ = DataType::kNotSet;
    t->dims_inferred_ = t->strides_inferred_ = t->data_type_inferred_ = false;
  }
}

void GraphValidator::infer_type(TensorAttributes& t, DataType type) {
  if (t.data_type_ != DataType::kNotSet) return;
  t.data_type_ = type;
  t.data_type_inferred_ = true;
}

// `base`, or `base_<k>` for the smallest k that no one has taken yet.
std::string GraphValidator::unique_name(std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int k = 1; taken.contains(name); ++k) name = fmt::format("{}_{}", base, k);
  taken.insert(name);
  return name;
}

// Unnamed nodes become `<kind>_<index>`, avoiding names the caller chose. Messages and
// default tensor names cite nodes by name, so two nodes may not share one.
void GraphValidator::name_nodes() {
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
void GraphValidator::name_tensors() {
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
std::string GraphValidator::subject(const Node& node) {
  for (const auto& t : node.outputs) {
    if (t) return fmt::format("tensor '{}'", t->name());
  }
  return fmt::format("node '{}'", node.name);
}

// Nodes carry their own attributes and the arity of their op, hold no null handle, and
// no tensor has two producers.
bool GraphValidator::check_structure() {
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
          subject(node), node.name, op_name(node), node.inputs.size(), node.outputs.size(), want_in,
          want_out);
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

bool GraphValidator::attributes_match(const Node& node) {
  switch (node.kind) {
    case NodeKind::kMatmul: return std::holds_alternative<MatmulAttributes>(node.attributes);
    case NodeKind::kPointwise: return std::holds_alternative<PointwiseAttributes>(node.attributes);
    case NodeKind::kReduction: return std::holds_alternative<ReductionAttributes>(node.attributes);
    case NodeKind::kBlockScaleDequantize:
      return std::holds_alternative<BlockScaleDequantizeAttributes>(node.attributes);
    case NodeKind::kBlockScaleQuantize:
      return std::holds_alternative<BlockScaleQuantizeAttributes>(node.attributes);
  }
  return false;
}

std::size_t GraphValidator::expected_inputs(const Node& node) {
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

std::string GraphValidator::op_name(const Node& node) {
  if (const auto* pw = std::get_if<PointwiseAttributes>(&node.attributes)) {
    return fmt::format("pointwise {}", to_string(pw->mode));
  }
  return std::string(to_string(node.kind));
}

// User uids must be unique; the rest are assigned above the largest user uid (or, when
// that is the largest int64, in the gaps), so an assigned uid never meets a user uid.
void GraphValidator::check_uids_and_names() {
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
bool GraphValidator::order_nodes() {
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
void GraphValidator::report_cycle(const std::vector<int>& pending) {
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
bool GraphValidator::check_layout(TensorAttributes& t) {
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
  if (const std::int64_t span = layout.span(); span > kMaxSpanElements) {
    error(
        "tensor_span: tensor '{}': layout {} spans {} elements; legal: at most {} (2^48), more "
        "than any device or host address space holds",
        t.name(), to_string(layout),
        span == std::numeric_limits<std::int64_t>::max() ? std::string("more than 2^63")
                                                         : std::to_string(span),
        kMaxSpanElements);
    return false;
  }
  return true;
}

void GraphValidator::check_leaf(const Tensor& t) {
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

bool GraphValidator::any_bad(const Node& node) const {
  return std::any_of(node.inputs.begin(), node.inputs.end(),
                     [&](const Tensor& t) { return bad_.contains(t.get()); });
}

void GraphValidator::poison(const Node& node) {
  for (const auto& t : node.outputs) bad_.insert(t.get());
}

// Sets an inferred result; a user-declared shape must agree with the inference.
void GraphValidator::set_inferred(const Node& node, TensorAttributes& t, const Dimv& dims) {
  if (!t.dims_.empty() && t.dims_ != dims) {
    // Either side may be the mistake (issue 10: a changed A read as a wrong output), so the
    // message names the inputs the computed dims come from, with theirs.
    std::vector<std::string> inputs;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      inputs.push_back(fmt::format("{} '{}' {}", input_port_name(node.kind, i),
                                   node.inputs[i]->name(), dims_str(node.inputs[i]->dims_)));
    }
    error(
        "tensor_dims_mismatch: tensor '{}': declared dims {} but node '{}' computes {} from "
        "{}; legal: {} or no declared dims, or inputs that give the declared dims",
        t.name(), dims_str(t.dims_), node.name, dims_str(dims), fmt::join(inputs, ", "),
        dims_str(dims));
    bad_.insert(&t);
    return;
  }
  if (t.dims_.empty()) t.dims_inferred_ = true;
  t.dims_ = dims;
  if (!check_layout(t)) bad_.insert(&t);
}

// True where no node infers the tensor's data type: matmul and pointwise results stored
// as outputs, and the values of a block_scale_quantize.
bool GraphValidator::needs_declared_type(const TensorAttributes* t) const {
  const Node& node = graph_.nodes_[producer_.at(t)];
  return node.kind == NodeKind::kMatmul || node.kind == NodeKind::kPointwise ||
         (node.kind == NodeKind::kBlockScaleQuantize && node.outputs[0].get() == t);
}

void GraphValidator::check_outputs() {
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

Status Graph::validate() {
  validated_ = false;
  return GraphValidator(*this).run();
}

}  // namespace fusedgemm
