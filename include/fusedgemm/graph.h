// The graph builder: tensors plus matmul, pointwise, reduction and block-scale nodes.
//
//   fusedgemm::Graph graph;
//   auto a = graph.tensor(TensorAttributes().set_name("A").set_dim({1, 256, 128})
//                             .set_stride({256 * 128, 128, 1}).set_data_type(DataType::kBFloat16));
//   auto c = graph.matmul(a, b);
//   auto d = graph.pointwise(c, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
//   d->set_output(true).set_data_type(DataType::kBFloat16);
//   Status s = graph.validate();
#pragma once

#include <array>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "fusedgemm/ops.h"
#include "fusedgemm/status.h"
#include "fusedgemm/tensor.h"

namespace fusedgemm {

enum class NodeKind : std::uint8_t {
  kMatmul,
  kPointwise,
  kReduction,
  kBlockScaleDequantize,
  kBlockScaleQuantize,
};

std::string_view to_string(NodeKind kind);

using NodeAttributes = std::variant<MatmulAttributes, PointwiseAttributes, ReductionAttributes,
                                    BlockScaleDequantizeAttributes, BlockScaleQuantizeAttributes>;

struct Node {
  NodeKind kind = NodeKind::kPointwise;
  std::string name;
  // matmul: A, B; pointwise: IN_0.. IN_2; reduction: IN; dequantize: X, SCALE; quantize: X.
  std::vector<Tensor> inputs;
  // matmul, pointwise, reduction, dequantize: OUT; quantize: Y, SCALE.
  std::vector<Tensor> outputs;
  NodeAttributes attributes;
};

// Port names used for default tensor names (`<node>::<port>`) and in messages.
std::string_view input_port_name(NodeKind kind, std::size_t index);
std::string_view output_port_name(NodeKind kind, std::size_t index);

// The largest graph validate() accepts (rules graph_node_count, graph_tensor_count): far
// beyond any epilogue a kernel holds, small enough that every pass over a graph stays
// quick (validate runs in time linear in its size: 100,000 nodes in about a second).
inline constexpr std::size_t kMaxGraphNodes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxGraphTensors = std::size_t{1} << 22;

class Graph {
 public:
  Graph() = default;
  // A copy holds copies of the tensors (same attributes, names and uids; new handles, found
  // with find_tensor), so building a copy never touches the original's tensors: copies of
  // one graph may be built on several threads at once. A handle passed to two graphs'
  // builders is one tensor of both: validating or building either rewrites what validate
  // fills in (an assigned uid, inferred dims), so build such graphs one at a time and give
  // a shared tensor its uid (set_uid) if a pack names it by handle.
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  ~Graph() = default;

  Graph& set_name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  const std::string& name() const { return name_; }

  // A tensor the caller provides (an operand, an aux input, a scale).
  Tensor tensor(const TensorAttributes& attributes);

  Tensor matmul(const Tensor& a, const Tensor& b, MatmulAttributes attributes = {});
  Tensor pointwise(const Tensor& in0, PointwiseAttributes attributes);
  Tensor pointwise(const Tensor& in0, const Tensor& in1, PointwiseAttributes attributes);
  Tensor pointwise(const Tensor& in0, const Tensor& in1, const Tensor& in2,
                   PointwiseAttributes attributes);
  // The returned tensor's dims say which axes are reduced (extent 1); set them.
  Tensor reduction(const Tensor& in, ReductionAttributes attributes);
  Tensor block_scale_dequantize(const Tensor& x, const Tensor& scale,
                                BlockScaleDequantizeAttributes attributes);
  // Returns {y, scale}; set y's data type (fp8 or fp4) and mark both outputs.
  std::array<Tensor, 2> block_scale_quantize(const Tensor& x,
                                             BlockScaleQuantizeAttributes attributes);

  // The general form the builders above reduce to; readers of serialized graphs use it.
  // Nothing is checked until validate().
  void add_node(Node node);

  // Infers dims, strides and data types, names every unnamed tensor, assigns uids, orders
  // the nodes topologically, and reports every error found (one per line) with the
  // tensor's name and the numbers.
  Status validate();
  // True after a successful validate() and no builder call since. A tensor changed through
  // its handle afterwards is not noticed: validate() again (build() always does).
  bool is_validated() const { return validated_; }

  // Nodes in topological order after validate(), in insertion order before.
  const std::vector<Node>& nodes() const { return nodes_; }
  // Every tensor the graph knows, in creation order.
  const std::vector<Tensor>& tensors() const { return tensors_; }

  Result<Tensor> find_tensor(std::int64_t uid) const;
  Result<Tensor> find_tensor(std::string_view name) const;

 private:
  friend class GraphValidator;

  Tensor add_output_tensor();
  void remember(const Tensor& tensor);

  std::string name_;
  std::vector<Node> nodes_;
  std::vector<Tensor> tensors_;
  // The members of tensors_, so that remembering a tensor costs O(1) and building a graph
  // of n nodes O(n) (a 100,000-node chain read from JSON took 21 s when this was a scan).
  std::unordered_set<const TensorAttributes*> known_;
  bool validated_ = false;
};

}  // namespace fusedgemm
