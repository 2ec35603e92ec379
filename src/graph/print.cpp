#include <set>

#include <fmt/format.h>

#include "fusedgemm/graph_print.h"

namespace fusedgemm {
namespace {

std::string dims(const std::vector<std::int64_t>& d) {
  return d.empty() ? "?" : fmt::format("[{}]", fmt::join(d, ", "));
}

std::string attributes(const Node& node) {
  if (const auto* pw = std::get_if<PointwiseAttributes>(&node.attributes)) {
    std::string s(to_string(pw->mode));
    if (pw->relu_lower_clip_slope) s += fmt::format(" slope={}", *pw->relu_lower_clip_slope);
    if (pw->relu_lower_clip) s += fmt::format(" lower_clip={}", *pw->relu_lower_clip);
    if (pw->relu_upper_clip) s += fmt::format(" upper_clip={}", *pw->relu_upper_clip);
    if (pw->swish_beta) s += fmt::format(" beta={}", *pw->swish_beta);
    return s;
  }
  if (const auto* r = std::get_if<ReductionAttributes>(&node.attributes)) {
    return std::string(to_string(r->mode));
  }
  if (const auto* d = std::get_if<BlockScaleDequantizeAttributes>(&node.attributes)) {
    return fmt::format("block {}x{}", d->block_rows, d->block_cols);
  }
  if (const auto* q = std::get_if<BlockScaleQuantizeAttributes>(&node.attributes)) {
    return fmt::format("block {}x{}", q->block_rows, q->block_cols);
  }
  return "";
}

std::string names(const std::vector<Tensor>& tensors) {
  std::vector<std::string> out;
  for (const auto& t : tensors) out.push_back(t ? fmt::format("'{}'", t->name()) : "null");
  return fmt::format("{}", fmt::join(out, ", "));
}

}  // namespace

std::string to_string(const Graph& graph) {
  std::set<const TensorAttributes*> computed;
  for (const auto& node : graph.nodes()) {
    for (const auto& t : node.outputs) computed.insert(t.get());
  }
  std::string out =
      fmt::format("graph '{}': {} tensors, {} nodes{}\n", graph.name(), graph.tensors().size(),
                  graph.nodes().size(), graph.is_validated() ? "" : " (not validated)");
  out += "tensors:\n";
  for (const auto& t : graph.tensors()) {
    const char* kind = !computed.contains(t.get()) ? "input"
                       : t->is_output()            ? "output"
                                                   : "virtual";
    out += fmt::format("  {:<7} '{}' uid {} {}:{} {}\n", kind, t->name(),
                       t->uid() ? fmt::format("{}", *t->uid()) : "?", dims(t->dims()),
                       dims(t->strides()), to_string(t->data_type()));
  }
  out += "nodes:\n";
  for (const auto& node : graph.nodes()) {
    out += fmt::format("  {} '{}' {}: ({}) -> ({})\n", to_string(node.kind), node.name,
                       attributes(node), names(node.inputs), names(node.outputs));
  }
  return out;
}

}  // namespace fusedgemm
