#include "fusedgemm/graph.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace fusedgemm {

Layout TensorAttributes::layout() const {
  Layout layout;
  for (int i = 0; i < kRank && i < static_cast<int>(dims_.size()); ++i) {
    layout.shape[i] = dims_[i];
    if (i < static_cast<int>(strides_.size())) layout.stride[i] = strides_[i];
  }
  return layout;
}

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kMatmul: return "matmul";
    case NodeKind::kPointwise: return "pointwise";
    case NodeKind::kReduction: return "reduction";
    case NodeKind::kBlockScaleDequantize: return "block_scale_dequantize";
    case NodeKind::kBlockScaleQuantize: return "block_scale_quantize";
  }
  return "unknown";
}

std::string_view input_port_name(NodeKind kind, std::size_t index) {
  switch (kind) {
    case NodeKind::kMatmul: return index == 0 ? "A" : "B";
    case NodeKind::kPointwise: return index == 0 ? "IN_0" : index == 1 ? "IN_1" : "IN_2";
    case NodeKind::kReduction: return "IN";
    case NodeKind::kBlockScaleDequantize: return index == 0 ? "X" : "SCALE";
    case NodeKind::kBlockScaleQuantize: return "X";
  }
  return "IN";
}

std::string_view output_port_name(NodeKind kind, std::size_t index) {
  if (kind == NodeKind::kBlockScaleQuantize) return index == 0 ? "Y" : "SCALE";
  return "OUT";
}

Graph::Graph(const Graph& other)
    : name_(other.name_), nodes_(other.nodes_), validated_(other.validated_) {
  std::unordered_map<const TensorAttributes*, Tensor> copy_of;
  copy_of.reserve(other.tensors_.size());
  tensors_.reserve(other.tensors_.size());
  known_.reserve(other.tensors_.size());
  for (const Tensor& t : other.tensors_) {
    Tensor copy = std::make_shared<TensorAttributes>(*t);
    copy_of.emplace(t.get(), copy);
    known_.insert(copy.get());
    tensors_.push_back(std::move(copy));
  }
  // Every tensor a node names is in tensors_ (add_node remembers it); a null one stays null
  // for validate to report.
  for (Node& node : nodes_) {
    for (std::vector<Tensor>* port : {&node.inputs, &node.outputs}) {
      for (Tensor& t : *port) {
        if (t) t = copy_of.at(t.get());
      }
    }
  }
}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *this = Graph(other);
  return *this;
}

Tensor Graph::tensor(const TensorAttributes& attributes) {
  auto t = std::make_shared<TensorAttributes>(attributes);
  // The attributes may be a copy of a validated tensor: what validate filled in is now
  // declared by the caller, and a uid validate chose belongs to the original.
  t->dims_inferred_ = t->strides_inferred_ = t->data_type_inferred_ = false;
  if (t->uid_assigned_) t->uid_.reset();
  t->uid_assigned_ = false;
  remember(t);
  validated_ = false;
  return t;
}

void Graph::remember(const Tensor& tensor) {
  if (tensor && known_.insert(tensor.get()).second) tensors_.push_back(tensor);
}

Tensor Graph::add_output_tensor() {
  auto t = std::make_shared<TensorAttributes>();
  remember(t);
  return t;
}

void Graph::add_node(Node node) {
  for (const auto& t : node.inputs) remember(t);
  for (const auto& t : node.outputs) remember(t);
  nodes_.push_back(std::move(node));
  validated_ = false;
}

Tensor Graph::matmul(const Tensor& a, const Tensor& b, MatmulAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node({NodeKind::kMatmul, std::move(name), {a, b}, {out}, std::move(attributes)});
  return out;
}

Tensor Graph::pointwise(const Tensor& in0, PointwiseAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node({NodeKind::kPointwise, std::move(name), {in0}, {out}, std::move(attributes)});
  return out;
}

Tensor Graph::pointwise(const Tensor& in0, const Tensor& in1, PointwiseAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node({NodeKind::kPointwise, std::move(name), {in0, in1}, {out}, std::move(attributes)});
  return out;
}

Tensor Graph::pointwise(const Tensor& in0, const Tensor& in1, const Tensor& in2,
                        PointwiseAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node({NodeKind::kPointwise, std::move(name), {in0, in1, in2}, {out}, std::move(attributes)});
  return out;
}

Tensor Graph::reduction(const Tensor& in, ReductionAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node({NodeKind::kReduction, std::move(name), {in}, {out}, std::move(attributes)});
  return out;
}

Tensor Graph::block_scale_dequantize(const Tensor& x, const Tensor& scale,
                                     BlockScaleDequantizeAttributes attributes) {
  auto out = add_output_tensor();
  std::string name = attributes.name;
  add_node(
      {NodeKind::kBlockScaleDequantize, std::move(name), {x, scale}, {out}, std::move(attributes)});
  return out;
}

std::array<Tensor, 2> Graph::block_scale_quantize(const Tensor& x,
                                                  BlockScaleQuantizeAttributes attributes) {
  auto y = add_output_tensor();
  auto scale = add_output_tensor();
  std::string name = attributes.name;
  add_node(
      {NodeKind::kBlockScaleQuantize, std::move(name), {x}, {y, scale}, std::move(attributes)});
  return {y, scale};
}

Result<Tensor> Graph::find_tensor(std::int64_t uid) const {
  for (const auto& t : tensors_) {
    if (t->uid() == uid) return t;
  }
  return Status(ErrorCode::kNotFound, fmt::format("graph has no tensor with uid {}", uid));
}

Result<Tensor> Graph::find_tensor(std::string_view name) const {
  for (const auto& t : tensors_) {
    // Before validate() an unnamed tensor's name is empty; that is no key.
    if (!name.empty() && t->name() == name) return t;
  }
  return Status(ErrorCode::kNotFound, fmt::format("graph has no tensor named '{}'", name));
}

}  // namespace fusedgemm
