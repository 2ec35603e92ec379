// A graph as JSON; the format is specified in docs/graph-json.md. Parsing and the typed
// reads are graph/json_read.h's, shared with the call reader. nlohmann-json reports errors
// by throwing: every throw is caught in this file and becomes a Status, so none crosses the
// API (STYLE.md rule 4). Message shape:
//   "graph_json: <json path>: <tensor or node>: <what was seen>; legal: <condition>".
#include "fusedgemm/graph_json.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graph/checked_math.h"
#include "graph/json_read.h"

namespace fusedgemm {
namespace {

using json::At;
using json::check_keys;
using json::Json;
using json::read_bool;
using json::read_enum;
using json::read_int;
using json::read_ints;
using json::read_string;
using json::shown;
using json::spelled_values;

constexpr std::int64_t kFormatVersion = 1;

// Keys per object; the writer emits the ones it writes in this order.
constexpr std::array<std::string_view, 5> kTopKeys = {"fusedgemm_graph", "name", "description",
                                                      "tensors", "nodes"};
constexpr std::array<std::string_view, 6> kTensorKeys = {"name",    "uid",       "dims",
                                                         "strides", "data_type", "output"};
constexpr std::array<std::string_view, 4> kNodeKeys = {"kind", "name", "inputs", "outputs"};
constexpr std::array<std::string_view, 5> kPointwiseKeys = {
    "mode", "relu_lower_clip_slope", "relu_lower_clip", "relu_upper_clip", "swish_beta"};
constexpr std::array<std::string_view, 1> kBlockScaleKeys = {"block_size"};
// The optional attributes of a pointwise node (kPointwiseKeys after "mode").
constexpr std::array<std::optional<float> PointwiseAttributes::*, 4> kPointwiseFloats = {
    &PointwiseAttributes::relu_lower_clip_slope, &PointwiseAttributes::relu_lower_clip,
    &PointwiseAttributes::relu_upper_clip, &PointwiseAttributes::swish_beta};

// The attribute keys a node of `kind` may carry besides kNodeKeys.
std::span<const std::string_view> attribute_keys(NodeKind kind) {
  if (kind == NodeKind::kPointwise) return kPointwiseKeys;
  if (kind == NodeKind::kReduction) return std::span(kPointwiseKeys).first(1);  // "mode"
  if (kind == NodeKind::kMatmul) return {};
  return kBlockScaleKeys;
}

// JSON has no infinity or NaN, so those travel as the strings "inf", "-inf" and "nan".
Result<float> read_float(const At& at) {
  constexpr std::string_view kLegal = "a number within fp32 range, or \"inf\", \"-inf\", \"nan\"";
  if (at.json && at.json->is_string()) {
    const auto& s = at.json->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<float>::infinity();
    if (s == "-inf") return -std::numeric_limits<float>::infinity();
    if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
  }
  if (!at.json || !at.json->is_number()) return at.wrong(kLegal);
  // A JSON number is finite: past fp32's range it has no value.
  const std::optional<float> value = checked::fp32(at.json->get<double>());
  if (!value) return at.error(fmt::format("{} is out of fp32 range", shown(*at.json)), kLegal);
  return *value;
}

class Reader {
 public:
  Result<Graph> read(const Json& root) {
    const At top{&root, "graph_json", "", ""};
    FG_TRY(check_keys(top, "a fusedgemm graph", kTopKeys));
    const auto legal = fmt::format("the format version {}", kFormatVersion);
    FG_ASSIGN_OR_RETURN(std::int64_t version, read_int(top.key("fusedgemm_graph"), legal));
    if (version != kFormatVersion) {
      return top.key("fusedgemm_graph")
          .error(fmt::format("format version {} is unknown to this reader", version), legal);
    }
    if (top.has("name")) {
      FG_ASSIGN_OR_RETURN(std::string name, read_string(top.key("name"), "a string"));
      graph_.set_name(std::move(name));
    }
    // Free text for people; the graph has no field for it, so it is checked and dropped.
    if (top.has("description")) FG_TRY(read_string(top.key("description"), "a string"));
    const At tensors = top.key("tensors");
    const At nodes = top.key("nodes");
    if (!tensors.json || !tensors.json->is_array()) return tensors.wrong("an array");
    if (!nodes.json || !nodes.json->is_array()) return nodes.wrong("an array");
    // Every tensor exists before any node refers to it, so nodes may come in any order and
    // a cycle or a second producer is expressible; validate() reports those.
    for (std::size_t i = 0; i < tensors.json->size(); ++i) FG_TRY(read_tensor(tensors.at(i)));
    for (std::size_t i = 0; i < nodes.json->size(); ++i) FG_TRY(read_node(nodes.at(i)));
    return std::move(graph_);
  }

 private:
  Status read_tensor(At at) {
    FG_TRY(check_keys(at, "a tensor", kTensorKeys));
    constexpr std::string_view kNameLegal = "a unique, non-empty string (nodes refer to it)";
    FG_ASSIGN_OR_RETURN(std::string name, read_string(at.key("name"), kNameLegal));
    if (name.empty()) return at.key("name").error("empty", kNameLegal);
    if (auto it = tensors_.find(name); it != tensors_.end()) {
      return at.key("name").error(
          fmt::format("'{}' is also the name of {}", name, it->second.second), kNameLegal);
    }
    at.subject = fmt::format("tensor '{}'", name);
    TensorAttributes attributes;
    attributes.set_name(name);
    if (at.has("uid")) {
      FG_ASSIGN_OR_RETURN(std::int64_t uid, read_int(at.key("uid"), "an integer"));
      attributes.set_uid(uid);
    }
    if (at.has("dims")) {
      FG_ASSIGN_OR_RETURN(auto dims,
                          read_ints(at.key("dims"), "an array of integers [batch, rows, columns]"));
      attributes.set_dim(std::move(dims));
    }
    if (at.has("strides")) {
      FG_ASSIGN_OR_RETURN(
          auto strides,
          read_ints(at.key("strides"), "an array of integers, in elements, one per dim"));
      attributes.set_stride(std::move(strides));
    }
    if (at.has("data_type")) {
      // "not_set" is spelled by leaving the key out.
      static const auto kTypes = spelled_values<DataType>(DataType::kNotSet);
      FG_ASSIGN_OR_RETURN(auto type, read_enum(at.key("data_type"), "data type", kTypes));
      attributes.set_data_type(type);
    }
    if (at.has("output")) {
      FG_ASSIGN_OR_RETURN(const bool output, read_bool(at.key("output")));
      attributes.set_output(output);
    }
    tensors_[name] = {graph_.tensor(attributes), at.path};
    return Status::ok();
  }

  Result<std::vector<Tensor>> read_tensor_names(const At& at) {
    constexpr std::string_view kLegal = "an array of names of entries of \"tensors\"";
    if (!at.json || !at.json->is_array()) return at.wrong(kLegal);
    std::vector<Tensor> tensors;
    for (std::size_t i = 0; i < at.json->size(); ++i) {
      FG_ASSIGN_OR_RETURN(std::string name, read_string(at.at(i), kLegal));
      auto it = tensors_.find(name);
      if (it == tensors_.end()) {
        return at.at(i).error(fmt::format("no tensor named '{}'", name), kLegal);
      }
      tensors.push_back(it->second.first);
    }
    return tensors;
  }

  Status read_node(At at) {
    static const auto kKinds = spelled_values<NodeKind>();
    if (!at.json->is_object()) return at.wrong("an object (a node)");
    Node node;
    FG_ASSIGN_OR_RETURN(node.kind, read_enum(at.key("kind"), "node kind", kKinds));
    FG_TRY(check_keys(at, "a node", kNodeKeys, attribute_keys(node.kind)));
    if (at.has("name")) {
      FG_ASSIGN_OR_RETURN(node.name, read_string(at.key("name"), "a string"));
      if (!node.name.empty()) at.subject = fmt::format("node '{}'", node.name);
    }
    FG_ASSIGN_OR_RETURN(node.inputs, read_tensor_names(at.key("inputs")));
    FG_ASSIGN_OR_RETURN(node.outputs, read_tensor_names(at.key("outputs")));
    if (node.kind == NodeKind::kMatmul) {
      node.attributes = MatmulAttributes().set_name(node.name);
    } else if (node.kind == NodeKind::kPointwise) {
      static const auto kModes = all_pointwise_modes();
      PointwiseAttributes attributes;
      attributes.set_name(node.name);
      FG_ASSIGN_OR_RETURN(attributes.mode, read_enum(at.key("mode"), "pointwise mode", kModes));
      for (std::size_t i = 0; i < kPointwiseFloats.size(); ++i) {
        const std::string_view key = kPointwiseKeys[i + 1];
        if (at.has(key)) {
          FG_ASSIGN_OR_RETURN(attributes.*kPointwiseFloats[i], read_float(at.key(key)));
        }
      }
      node.attributes = std::move(attributes);
    } else if (node.kind == NodeKind::kReduction) {
      static const auto kModes = all_reduction_modes();
      FG_ASSIGN_OR_RETURN(auto mode, read_enum(at.key("mode"), "reduction mode", kModes));
      node.attributes = ReductionAttributes().set_name(node.name).set_mode(mode);
    } else {
      constexpr std::string_view kLegal = "[rows, cols], two integers";
      FG_ASSIGN_OR_RETURN(auto block, read_ints(at.key("block_size"), kLegal));
      if (block.size() != 2) {
        return at.key("block_size").error(fmt::format("{} entries", block.size()), kLegal);
      }
      auto set = [&](auto a) {
        node.attributes = a.set_name(node.name).set_block_size(block[0], block[1]);
      };
      if (node.kind == NodeKind::kBlockScaleQuantize) set(BlockScaleQuantizeAttributes());
      if (node.kind == NodeKind::kBlockScaleDequantize) set(BlockScaleDequantizeAttributes());
    }
    graph_.add_node(std::move(node));
    return Status::ok();
  }

  Graph graph_;
  // By name: the tensor and where it was declared ("tensors[3]"), for messages.
  std::map<std::string, std::pair<Tensor, std::string>, std::less<>> tensors_;
};

// --- writing ----------------------------------------------------------------------------

std::string json_string(std::string_view text) {
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The shortest decimal that reads back as the same fp32 value (0.1f is written 0.1, not
// 0.10000000149011612); non-finite values as strings, since JSON has none.
std::string float_text(float value) {
  if (std::isnan(value)) return json_string("nan");
  if (std::isinf(value)) return json_string(value > 0 ? "inf" : "-inf");
  const std::string text = fmt::format("{}", value);
  double parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  return Json(ec == std::errc() && static_cast<float>(parsed) == value ? parsed : double{value})
      .dump();
}

// The names tensors are written under: their own, or for an unnamed tensor the name
// validate() would give it, found by validating a copy so that the naming rule lives in
// validate.cpp alone. A graph whose structure validate rejects before naming (a null
// handle, a node with the wrong arity) gets "tensor_<index>", validate's last resort too.
std::vector<std::string> names_for_writing(const Graph& graph) {
  std::vector<std::string> names;
  for (const auto& t : graph.tensors()) names.push_back(t->name());
  if (std::ranges::none_of(names, [](const auto& n) { return n.empty(); })) return names;
  Graph copy;
  std::map<const TensorAttributes*, Tensor> clone;
  for (const auto& t : graph.tensors()) clone[t.get()] = copy.tensor(*t);
  for (Node node : graph.nodes()) {
    for (auto* list : {&node.inputs, &node.outputs}) {
      for (auto& t : *list) t = t ? clone.at(t.get()) : t;
    }
    copy.add_node(std::move(node));
  }
  (void)copy.validate();  // only the names are wanted; errors are the caller's to find
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) names[i] = copy.tensors()[i]->name();
    if (names[i].empty()) names[i] = fmt::format("tensor_{}", i);
  }
  return names;
}

// One object on one line: {"key": value, ...}, each value given as JSON text.
struct Line {
  std::string text;
  Line& add(std::string_view key, std::string_view value) {
    text += fmt::format("{}{}: {}", text.empty() ? "{" : ", ", json_string(key), value);
    return *this;
  }
  std::string done() const { return text + "}"; }
};

std::string ints_text(const std::vector<std::int64_t>& ints) {
  return fmt::format("[{}]", fmt::join(ints, ", "));
}

// Only what the user declared: validate's inferences and assigned uids are left out, so
// that reading the text back gives the graph as it was built.
std::string tensor_line(const TensorAttributes& t, const std::string& name) {
  Line line;
  line.add("name", json_string(name));
  if (t.uid() && !t.uid_assigned()) line.add("uid", fmt::format("{}", *t.uid()));
  if (!t.dims().empty() && !t.dims_inferred()) line.add("dims", ints_text(t.dims()));
  if (!t.strides().empty() && !t.strides_inferred()) line.add("strides", ints_text(t.strides()));
  if (t.data_type() != DataType::kNotSet && !t.data_type_inferred()) {
    line.add("data_type", json_string(to_string(t.data_type())));
  }
  if (t.is_output()) line.add("output", "true");
  return line.done();
}

std::string node_line(const Node& node,
                      const std::map<const TensorAttributes*, std::string>& name_of) {
  auto names = [&](const std::vector<Tensor>& list) {
    std::vector<std::string> texts;
    for (const auto& t : list) texts.push_back(t ? json_string(name_of.at(t.get())) : "null");
    return fmt::format("[{}]", fmt::join(texts, ", "));
  };
  Line line;
  line.add("kind", json_string(to_string(node.kind)));
  // An unnamed node stays unnamed: validate() names it from its position, which a reader
  // reproduces because nodes are written in graph order.
  if (!node.name.empty()) line.add("name", json_string(node.name));
  line.add("inputs", names(node.inputs)).add("outputs", names(node.outputs));
  if (const auto* a = std::get_if<PointwiseAttributes>(&node.attributes)) {
    line.add("mode", json_string(to_string(a->mode)));
    for (std::size_t i = 0; i < kPointwiseFloats.size(); ++i) {
      const auto& value = a->*kPointwiseFloats[i];
      if (value) line.add(kPointwiseKeys[i + 1], float_text(*value));
    }
  } else if (const auto* r = std::get_if<ReductionAttributes>(&node.attributes)) {
    line.add("mode", json_string(to_string(r->mode)));
  } else if (const auto* d = std::get_if<BlockScaleDequantizeAttributes>(&node.attributes)) {
    line.add("block_size", ints_text({d->block_rows, d->block_cols}));
  } else if (const auto* q = std::get_if<BlockScaleQuantizeAttributes>(&node.attributes)) {
    line.add("block_size", ints_text({q->block_rows, q->block_cols}));
  }
  return line.done();
}

}  // namespace

Result<Graph> graph_from_json(std::string_view text) {
  try {
    FG_ASSIGN_OR_RETURN(Json root, json::parse(text, "graph_json"));
    return Reader().read(root);
  } catch (const Json::exception& e) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("graph_json: {}", e.what()));
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, fmt::format("graph_json: {}", e.what()));
  }
}

// Top-level keys one per line, each tensor and node on a line of its own: a diff of two
// graph files then shows which tensor or node changed.
std::string graph_to_json(const Graph& graph) {
  const std::vector<std::string> names = names_for_writing(graph);
  std::map<const TensorAttributes*, std::string> name_of;
  std::vector<std::string> tensors;
  for (std::size_t i = 0; i < names.size(); ++i) {
    name_of[graph.tensors()[i].get()] = names[i];
    tensors.push_back(tensor_line(*graph.tensors()[i], names[i]));
  }
  std::vector<std::string> nodes;
  for (const auto& node : graph.nodes()) nodes.push_back(node_line(node, name_of));
  auto list = [](const std::vector<std::string>& lines) {
    return lines.empty() ? "[]" : fmt::format("[\n    {}\n  ]", fmt::join(lines, ",\n    "));
  };
  std::string out = fmt::format("{{\n  \"fusedgemm_graph\": {},\n", kFormatVersion);
  if (!graph.name().empty()) out += fmt::format("  \"name\": {},\n", json_string(graph.name()));
  out += fmt::format("  \"tensors\": {},\n  \"nodes\": {}\n}}\n", list(tensors), list(nodes));
  return out;
}

Result<Graph> load_graph(const std::string& path) {
  FG_ASSIGN_OR_RETURN(const std::string text,
                      json::read_file(path, "load_graph", "a graph JSON file"));
  auto graph = graph_from_json(text);
  FG_CHECK(graph, graph.status().code(),
           fmt::format("load_graph: '{}': {}", path, graph.status().message()));
  return graph;
}

Status save_graph(const Graph& graph, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << graph_to_json(graph);
  out.close();
  FG_CHECK(out, ErrorCode::kIo,
           fmt::format("save_graph: cannot write '{}': {}", path, std::strerror(errno)));
  return Status::ok();
}

}  // namespace fusedgemm
