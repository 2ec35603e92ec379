// Host tensors and their random contents: what the reference and `fusedgemm run` feed a
// graph.
#include <cmath>
#include <limits>
#include <new>
#include <set>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "reference/graph_reference.h"
#include "runtime/numeric.h"

namespace fusedgemm::reference {
namespace {

std::int64_t offset_of(const Layout& layout, std::int64_t b, std::int64_t r, std::int64_t c) {
  return b * layout.stride[0] + r * layout.stride[1] + c * layout.stride[2];
}

// 53 random bits as a double in [0, 1): independent of the standard library's
// distributions, whose output differs between implementations.
double unit_interval(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * std::ldexp(1.0, -53);
}

}  // namespace

double HostTensor::at(std::int64_t b, std::int64_t r, std::int64_t c) const {
  return numeric::load_double(type, bytes.data(), offset_of(layout, b, r, c));
}

void HostTensor::set(std::int64_t b, std::int64_t r, std::int64_t c, double value) {
  numeric::store_double(type, bytes.data(), offset_of(layout, b, r, c), value);
}

std::int64_t storage_bytes(DataType type, const Layout& layout) {
  const auto bits = checked::mul(layout.span(), bits_of(type));
  if (!bits) return std::numeric_limits<std::int64_t>::max();
  return ceil_div(*bits, 8);
}

Result<HostTensor> make_host_tensor(const TensorAttributes& tensor) {
  HostTensor host;
  host.type = tensor.data_type();
  host.layout = tensor.layout();
  const std::int64_t bytes = storage_bytes(host.type, host.layout);
  FG_CHECK(
      bytes <= kMaxHostTensorBytes, ErrorCode::kInvalidArgument,
      fmt::format("host_tensor_bytes: tensor '{}': layout {} of {} spans {} bytes; legal: "
                  "at most {} bytes (2^34) in one host tensor",
                  tensor.name(), to_string(host.layout), to_string(host.type),
                  bytes == std::numeric_limits<std::int64_t>::max() ? std::string("more than 2^63")
                                                                    : std::to_string(bytes),
                  kMaxHostTensorBytes));
  try {
    host.bytes.assign(static_cast<std::size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kUnavailable,
                  fmt::format("host_tensor_allocation: tensor '{}': {} bytes for layout {} could "
                              "not be allocated; legal: a layout whose span fits in host memory",
                              tensor.name(), bytes, to_string(host.layout)));
  }
  return host;
}

Result<HostTensor> make_random_host_tensor(const TensorAttributes& tensor, ValueRange range,
                                           std::mt19937_64& rng) {
  FG_ASSIGN_OR_RETURN(HostTensor host, make_host_tensor(tensor));
  const Dims& shape = host.layout.shape;
  bool any_nonzero = false;
  for (std::int64_t b = 0; b < shape[0]; ++b) {
    for (std::int64_t r = 0; r < shape[1]; ++r) {
      for (std::int64_t c = 0; c < shape[2]; ++c) {
        const double u = 2 * unit_interval(rng) - 1;
        host.set(b, r, c, range == ValueRange::kScale ? std::exp2(u) : u);
        any_nonzero = any_nonzero || host.at(b, r, c) != 0;
      }
    }
  }
  // An all-zero operand would let a kernel that ignores it pass (DESIGN.md section 9).
  if (!any_nonzero) host.set(0, 0, 0, 1.0);
  return host;
}

Result<HostTensors> make_random_inputs(const Graph& graph, std::uint64_t seed) {
  FG_CHECK(graph.is_validated(), ErrorCode::kInvalidGraph,
           "reference_graph_not_validated: graph '" + graph.name() +
               "': random inputs need the inferred dims and uids; legal: call validate() first");
  FG_TRY(check_reference_limits(graph));
  std::set<const TensorAttributes*> produced;
  std::set<const TensorAttributes*> consumed;
  std::set<const TensorAttributes*> scales;
  for (const Node& node : graph.nodes()) {
    for (const Tensor& t : node.outputs) produced.insert(t.get());
    for (const Tensor& t : node.inputs) consumed.insert(t.get());
    if (node.kind == NodeKind::kBlockScaleDequantize) scales.insert(node.inputs[1].get());
  }
  std::mt19937_64 rng(seed);
  HostTensors inputs;
  for (const Tensor& t : graph.tensors()) {
    if (produced.contains(t.get()) || !consumed.contains(t.get())) continue;
    const bool scale = scales.contains(t.get()) || t->data_type() == DataType::kE8M0;
    FG_ASSIGN_OR_RETURN(
        HostTensor host,
        make_random_host_tensor(*t, scale ? ValueRange::kScale : ValueRange::kSigned, rng));
    inputs.emplace(*t->uid(), std::move(host));
  }
  return inputs;
}

}  // namespace fusedgemm::reference
