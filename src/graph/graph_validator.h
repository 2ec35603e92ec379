// The validator behind Graph::validate(): shape and data-type inference with one message per
// broken condition. Message shape: "<check>: tensor '<name>': <what was seen>; legal:
// <condition>". A tensor that failed a check is "bad": nodes that read it are skipped rather
// than checked, so one mistake gives one message, not one per downstream node.
// validate.cpp holds the structural checks (arity, producers, names, uids, order, layouts,
// outputs); infer.cpp the per-node shape and type inference.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

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
    if (graph_.nodes_.size() > kMaxGraphNodes || graph_.tensors_.size() > kMaxGraphTensors) {
      check_size();
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

  Status finish();

  void check_size();

  std::string graph_label() const;

  static std::string dims_str(const Dimv& d) { return fmt::format("[{}]", fmt::join(d, ", ")); }

  void forget_inferred();

  static void infer_type(TensorAttributes& t, DataType type);

  // `base`, or `base_<k>` for the smallest k that no one has taken yet.
  static std::string unique_name(std::set<std::string>& taken, const std::string& base);

  // Unnamed nodes become `<kind>_<index>`, avoiding names the caller chose. Messages and
  // default tensor names cite nodes by name, so two nodes may not share one.
  void name_nodes();

  // Every tensor gets a name: `<node>::<port>` of its producer, else of its first consumer.
  void name_tensors();

  // What a structural message is about: the node's first result, else the node itself.
  static std::string subject(const Node& node);

  // Nodes carry their own attributes and the arity of their op, hold no null handle, and
  // no tensor has two producers.
  bool check_structure();

  static bool attributes_match(const Node& node);

  static std::size_t expected_inputs(const Node& node);

  static std::string op_name(const Node& node);

  // User uids must be unique; the rest are assigned above the largest user uid (or, when
  // that is the largest int64, in the gaps), so an assigned uid never meets a user uid.
  void check_uids_and_names();

  // Kahn's algorithm, stable: among ready nodes the earliest inserted goes first.
  bool order_nodes();

  // Every node left unordered reads a tensor whose producer is also left unordered. Walking
  // those producers back from one of them must meet a node twice: that node is on a cycle
  // (the first unordered node may only sit downstream of one).
  void report_cycle(const std::vector<int>& pending);

  // Rank 3, positive extents, non-negative strides that reach each element once. Missing
  // strides default to row-major packed.
  bool check_layout(TensorAttributes& t);

  void check_leaf(const Tensor& t);

  bool any_bad(const Node& node) const;

  void poison(const Node& node);

  // Sets an inferred result; a user-declared shape must agree with the inference.
  void set_inferred(const Node& node, TensorAttributes& t, const Dimv& dims);

  void infer(const Node& node);

  static bool matmul_operand_type(DataType t) { return is_float(t) || t == DataType::kInt8; }

  // A [b, M, K] @ B [b, K, N] = [b, M, N]; each operand's batch is 1 or b.
  void infer_matmul(const Node& node);

  // Every input broadcasts to the result: per axis, extent 1 or the result's extent. The
  // result's extent is the first extent > 1 among the computed inputs, else among all, so
  // that an aux that disagrees with a GEMM result is the tensor the message names.
  void infer_pointwise(const Node& node);

  // The output's declared dims name the reduced axes: extent 1 where the input's is larger.
  void infer_reduction(const Node& node);

  static Dimv block_dims(const Dimv& dims, std::int64_t rows, std::int64_t cols);

  bool check_block(const Node& node, std::int64_t rows, std::int64_t cols);

  bool check_scale(const Node& node, const TensorAttributes& scale, const Dimv& want);

  static bool quantized_type(DataType t);

  void infer_dequantize(const Node& node);

  void infer_quantize(const Node& node);

  // True where no node infers the tensor's data type: matmul and pointwise results stored
  // as outputs, and the values of a block_scale_quantize.
  bool needs_declared_type(const TensorAttributes* t) const;

  void check_outputs();

  Graph& graph_;
  std::vector<std::string> errors_;
  std::unordered_map<const TensorAttributes*, std::size_t> producer_;
  std::set<const TensorAttributes*> consumed_;
  std::set<const TensorAttributes*> bad_;
  std::set<const TensorAttributes*> type_reported_;
};

}  // namespace fusedgemm
