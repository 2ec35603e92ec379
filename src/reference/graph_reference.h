// An fp64 evaluator of a validated Graph: the correctness oracle for tests and for
// `fusedgemm run` (DESIGN.md section 9). It shares no code with any kernel, only the
// element conversions of runtime/numeric.h, so a kernel bug cannot hide in both.
//
//   Graph graph = ...;  FG_TRY(graph.validate());
//   FG_ASSIGN_OR_RETURN(auto inputs, reference::make_random_inputs(graph, /*seed=*/1));
//   FG_ASSIGN_OR_RETURN(auto result, reference::evaluate(graph, inputs));
//   FG_ASSIGN_OR_RETURN(auto d, result.values(d_uid));  // fp64, before rounding to D's type
//
// Semantics, all in fp64:
// - matmul: out[b, m, n] = sum_k A[b', m, k] * B[b'', k, n], where an operand of batch 1 is
//   read at batch 0 for every b.
// - pointwise: the modes of ops.h, inputs broadcast per axis (extent 1 against the
//   result's extent). relu, gelu, silu and select as ops.h documents them; comparisons give
//   1 or 0. max and min, pow, NaN and saturation as docs/SEMANTICS.md defines them for every
//   evaluator: max/min are C's fmax/fmin (a NaN operand gives the other), pow is C's pow.
// - reduction: over the axes where the output's extent is 1 and the input's is larger.
// - block_scale_dequantize: x[b, r, c] * scale[b, r / block_rows, c / block_cols].
// - block_scale_quantize, per block: amax = max |x|; scale = amax / max_finite(y's type),
//   1 when amax is 0; the stored scale is that value rounded to the scale's type (a power of
//   two for e8m0); y = x / stored scale, rounded to y's type with saturation. So
//   dequantize(quantize(x)) reproduces x within y's precision.
// - rounding: a computed tensor whose data type is neither fp32 nor unset rounds its
//   running value there (numeric::round_to_double), output or not; later nodes see the
//   rounded value. fp32 does not round: validate infers fp32 for undeclared tensors and the
//   kernel's running value is fp32 already.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "fusedgemm/data_type.h"  // DataType
#include "fusedgemm/graph.h"      // Graph
#include "fusedgemm/layout.h"     // Layout, Dims
#include "fusedgemm/status.h"     // Status, Result
#include "fusedgemm/tensor.h"     // TensorAttributes

namespace fusedgemm::reference {

// One buffer in host memory: the stored encoding (numeric.h) of a tensor, addressed
// through its layout (in elements; fp4 packs two elements per byte).
struct HostTensor {
  DataType type = DataType::kNotSet;
  Layout layout;
  std::vector<std::uint8_t> bytes;

  // The element at declared index [b, r, c], decoded.
  double at(std::int64_t b, std::int64_t r, std::int64_t c) const;
  // Encodes `value` (with the type's rounding) into the element at [b, r, c].
  void set(std::int64_t b, std::int64_t r, std::int64_t c, double value);
};

// Bytes that hold every element of the layout: ceil(span * bits_of(type) / 8), INT64_MAX
// when that does not fit in int64 (a layout of huge strides that validate accepts).
std::int64_t storage_bytes(DataType type, const Layout& layout);

// The largest host tensor make_host_tensor allocates: 16 GiB, beyond the memory of the
// machines the tool and the tests run on, so a layout past it is refused before allocating
// rather than left to the allocator (or to an out-of-memory kill while it is filled).
inline constexpr std::int64_t kMaxHostTensorBytes = std::int64_t{1} << 34;

// A zero-filled host tensor of the tensor's declared data type and layout. Refuses a layout
// spanning more than kMaxHostTensorBytes (host_tensor_bytes) and reports an allocation the
// host cannot make (host_tensor_allocation), each naming the tensor and the bytes.
// @pre the graph the tensor belongs to is validated.
Result<HostTensor> make_host_tensor(const TensorAttributes& tensor);

// Which value range make_random_host_tensor draws from.
enum class ValueRange : std::uint8_t {
  kSigned,  // uniform in [-1, 1]
  kScale,   // 2^u with u uniform in [-1, 1]: positive, in [0.5, 2]
};

// Random values, drawn in declared [b, r, c] order and encoded to the tensor's type; never
// all zeros (if every drawn value rounds to 0, element [0, 0, 0] becomes 1). The draws use
// only rng() bits, so a seed gives the same tensor on every standard library.
Result<HostTensor> make_random_host_tensor(const TensorAttributes& tensor, ValueRange range,
                                           std::mt19937_64& rng);

using HostTensors = std::map<std::int64_t, HostTensor>;  // by tensor uid

// What the fp64 reference evaluates within a few minutes on one core and a few GiB: at most
// 2^28 values per tensor (2 GiB of fp64), 2^30 over all tensors (it keeps every one), and
// 2^36 operations: multiply-adds over all matmuls (a 4096-cubed GEMM) plus one per value
// each elementwise op or reduction reads. check_reference_limits refuses a graph past any
// (reference_tensor_elements, reference_held_values, reference_multiply_adds) before
// anything is allocated; evaluate and make_random_inputs call it first.
inline constexpr std::int64_t kMaxReferenceElements = std::int64_t{1} << 28;
inline constexpr std::int64_t kMaxReferenceHeldValues = std::int64_t{1} << 30;
inline constexpr std::int64_t kMaxReferenceMultiplyAdds = std::int64_t{1} << 36;
// @pre graph validated.
Status check_reference_limits(const Graph& graph);

// One random tensor for every graph input (a tensor consumed but not computed), drawn in
// the graph's tensor order from one std::mt19937_64(seed). Scale inputs of
// block_scale_dequantize and every e8m0 tensor draw from ValueRange::kScale.
// Fails (kInvalidGraph) unless the graph is validated, and as check_reference_limits and
// make_host_tensor do.
Result<HostTensors> make_random_inputs(const Graph& graph, std::uint64_t seed);

// The values of one output tensor, dense in declared [b, rows, cols] order (row-major over
// dims, ignoring the declared strides).
struct OutputValues {
  std::int64_t uid = 0;
  DataType type = DataType::kNotSet;
  Dims dims{1, 1, 1};
  std::vector<double> values;   // before rounding to `type`
  std::vector<double> rounded;  // after numeric::round_to_double(type, ...)
  // Empty, or per element the OrderEffect bits: where an fp32 evaluator's combine order may
  // move the value past rounding. Only a mul reduction has them, whose partial products may
  // leave fp32's range in some order though the fp64 product does not (docs/SEMANTICS.md).
  std::vector<std::uint8_t> order_effects;
};

// Bits of OutputValues::order_effects.
enum OrderEffect : std::uint8_t {
  kMayOverflow = 1,   // some partial product may pass fp32's largest value: inf of the sign
  kMayUnderflow = 2,  // some partial product may fall below fp32's normal range: any value of
                      // the sign, or zero (and NaN with an overflow: inf * 0)
  kNegative = 4,      // the product's sign, for the above
};

class Evaluation {
 public:
  explicit Evaluation(std::vector<OutputValues> outputs) : outputs_(std::move(outputs)) {}

  // Before the output's rounding to its data type. kNotFound when `uid` is not an output.
  Result<std::span<const double>> values(std::int64_t uid) const;
  // After rounding to the output's data type: what a faithful store holds.
  Result<std::span<const double>> rounded(std::int64_t uid) const;
  // Every output, in the graph's tensor order.
  const std::vector<OutputValues>& outputs() const { return outputs_; }

 private:
  Result<const OutputValues*> find(std::int64_t uid) const;

  std::vector<OutputValues> outputs_;
};

// Offset of [b, r, c] in a dense array of `dims`.
inline std::int64_t dense_index(const Dims& dims, std::int64_t b, std::int64_t r, std::int64_t c) {
  return (b * dims[1] + r) * dims[2] + c;
}

// Evaluates every node in topological order. Fails with kInvalidGraph for a graph that is
// not validated, kNotFound for a graph input with no entry in `inputs`, and
// kInvalidArgument for an input whose type, shape or byte size disagrees with its tensor.
Result<Evaluation> evaluate(const Graph& graph, const HostTensors& inputs);

}  // namespace fusedgemm::reference
