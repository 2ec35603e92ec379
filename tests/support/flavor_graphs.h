// Graphs of every flavor of DESIGN.md section 5, built through the public Graph API and
// parameterised by problem size, operand and output majors, operand batch, and padded
// (strided) layouts. The execute, illegal-call and degenerate-extent tests share them.
//
//   FlavorShape shape{.batch = 3, .m = 72, .n = 100, .k = 64, .a_major = Major::kM};
//   auto flavor = make_flavor_graph(Flavor::kTapsRow, shape);  // validated
//
// Every tensor is named, so a pack keyed by name fits any size of the same flavor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"

namespace fusedgemm::test {

using fusion::Major;

enum class Flavor : std::uint8_t {
  kPlain,              // D = A @ B
  kEpilogue,           // D = gelu_tanh(acc * scale), acc * scale declared bf16
  kAuxScalar,          // D = acc + bias[*, 1, 1]
  kAuxRow,             // D = acc * row[*, M, 1]
  kAuxColumn,          // D = acc + bias[*, 1, N]
  kAuxFull,            // D = acc + residual[*, M, N]
  kMultiOutput,        // five outputs: fp32, bf16 (other major), fp16, fp8_e4m3, int8
  kTapsRow,            // D plus a [b, M, 1] tap of every reduction mode
  kTapsColumn,         // D plus a [b, 1, N] tap of every reduction mode
  kTapsFull,           // D plus a [1, 1, 1] tap of every mode and a [b, 1, 1] add tap
  kGatedMlp,           // D = silu(A @ B0) * (A @ B1)
  kTapsOnlyMultiGemm,  // taps of A0 @ B0 + A1 @ B1 and of A1 @ B1, no dense output
  kBlockScaled,        // D = dequant(A fp8, 1x128) @ dequant(B fp8, 128x128)
  kQuantized,          // Y, Y_scale = block_scale_quantize(A @ B) into fp8_e4m3, 1x128
};

std::string_view to_string(Flavor flavor);
std::vector<Flavor> all_flavors();

struct FlavorShape {
  std::int64_t batch = 1;  // the problem's batch
  std::int64_t m = 64;
  std::int64_t n = 64;
  std::int64_t k = 64;
  Major a_major = Major::kK;    // kK or kM (block-scaled: kK only)
  Major b_major = Major::kK;    // kK or kN (block-scaled: kK only)
  Major out_major = Major::kN;  // kN or kM (quantized values: kN only)
  // Operands of every flavor but block-scaled: bf16, fp16, fp8 or fp4 (8- and 4-bit
  // operands are K-major only).
  DataType operand_type = DataType::kBFloat16;
  bool a_batch_one = false;    // A (every A) declared with batch 1, broadcast over batch
  bool b_batch_one = false;    // B (every B) declared with batch 1
  bool aux_batch_one = false;  // aux declared with batch 1
  // kQuantized: the values' type, the block length along N and the scales' type.
  DataType quantized_type = DataType::kFp8E4M3;
  std::int64_t quantize_block = 128;
  DataType quantized_scale_type = DataType::kFloat32;
  // Elements added to the stride of the axis after the contiguous one (and to the batch
  // stride): padded rows or columns the kernel must neither read nor write.
  std::int64_t operand_pad = 0;  // a multiple of 8 keeps bf16 strides 16-byte aligned
  std::int64_t output_pad = 0;
  std::int64_t tap_pad = 0;
};

std::string to_string(const FlavorShape& shape);

// A validated graph of one flavor. Names: operands A, B (A0, A1, B0, B1 for multi-GEMM),
// their scales A_scale, B_scale; aux "aux" (epilogue: "scale"); dense outputs D (D0..D4);
// taps T_<mode> (T_batch_add for the per-batch tap of kTapsFull, R and C for the taps-only flavor);
// quantized Y and Y_scale.
struct FlavorGraph {
  Flavor flavor = Flavor::kPlain;
  FlavorShape shape;
  Graph graph;
  std::vector<Tensor> inputs;   // operands, scales and aux, in creation order
  std::vector<Tensor> written;  // outputs and taps
  std::vector<Tensor> taps;     // the taps among `written`
};

// Builds and validates the graph; a validate failure comes back as its Status.
Result<FlavorGraph> make_flavor_graph(Flavor flavor, const FlavorShape& shape);

// A graph read from JSON text (docs/graph-json.md) and validated; a failure of either comes
// back as its Status.
Result<Graph> validated_graph(std::string_view json);

// Strides of a [b, rows, cols] tensor whose `contiguous` axis (1 or 2) has unit stride and
// whose other two axes are padded by `pad` elements.
std::vector<std::int64_t> padded_strides(const std::vector<std::int64_t>& dims, int contiguous,
                                         std::int64_t pad);

}  // namespace fusedgemm::test
