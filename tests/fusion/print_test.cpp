#include "fusion/print.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusedgemm/graph.h"
#include "fusion/analyze.h"

namespace fusedgemm::fusion {
namespace {

using Dimv = std::vector<std::int64_t>;

Tensor input(Graph& g, const std::string& name, Dimv dims, DataType type, Dimv strides = {}) {
  TensorAttributes attributes;
  attributes.set_name(name).set_dim(std::move(dims)).set_data_type(type);
  if (!strides.empty()) attributes.set_stride(std::move(strides));
  return g.tensor(attributes);
}

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

// Validates and analyzes; the printed program, or the failure as text.
std::string printed(Graph& g) {
  if (Status s = g.validate(); !s) return "validate: " + s.message();
  auto analysis = analyze(g);
  if (!analysis) return "analyze: " + analysis.status().message();
  if (analysis->decline) return "declined: " + analysis->decline->message;
  return to_string(analysis->program);
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(Print, GatedMlpWithTapAndQuantizedOutputGolden) {
  Graph g;
  g.set_name("gated");
  auto a = input(g, "A", {2, 64, 128}, DataType::kBFloat16);
  auto b0 = input(g, "B0", {1, 128, 256}, DataType::kBFloat16, {128 * 256, 1, 128});
  auto b1 = input(g, "B1", {1, 128, 256}, DataType::kBFloat16);
  auto bias = input(g, "bias", {1, 1, 256}, DataType::kBFloat16);
  auto c0 = g.matmul(a, b0, MatmulAttributes().set_name("gate"));
  auto c1 = g.matmul(a, b1, MatmulAttributes().set_name("up"));
  auto x = g.pointwise(c0, bias, op(PointwiseMode::kAdd).set_name("add_bias"));
  auto s = g.pointwise(x, op(PointwiseMode::kSilu).set_swish_beta(1.5f).set_name("swish"));
  s->set_data_type(DataType::kBFloat16);
  auto d = g.pointwise(s, c1, op(PointwiseMode::kMul).set_name("gated"));
  d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
  auto r = g.reduction(d, ReductionAttributes().set_mode(ReductionMode::kAmax).set_name("amax"));
  r->set_dim({1, 64, 1}).set_name("row_amax").set_output(true);
  auto [y, ys] = g.block_scale_quantize(
      c1, BlockScaleQuantizeAttributes().set_block_size(1, 32).set_name("quant"));
  y->set_name("Y").set_data_type(DataType::kFp4E2M1).set_output(true);
  ys->set_name("Y_scale").set_output(true);

  const std::string golden = R"(fusion program 'gated': batch 2 M 64 N 256 K 128
buffers:
  #0 A      'A' uid 1 bf16 [2, 64, 128]:[8192, 128, 1]
  #1 B      'B0' uid 2 bf16 [1, 128, 256]:[32768, 1, 128]
  #2 B      'B1' uid 3 bf16 [1, 128, 256]:[32768, 256, 1]
  #3 aux    'bias' uid 4 bf16 [1, 1, 256]:[256, 256, 1]
  #4 tap    'row_amax' uid 10 fp32 [1, 64, 1]:[64, 1, 1]
  #5 output 'Y' uid 11 fp4_e2m1 [2, 64, 256]:[16384, 256, 1]
  #6 scale  'Y_scale' uid 12 fp32 [2, 64, 8]:[512, 8, 1]
  #7 output 'D' uid 9 bf16 [2, 64, 256]:[16384, 256, 1]
mainloop:
  gemm 0 'gate'
    A 'A' bf16 K-major
    B 'B0' bf16 K-major batch-broadcast
  gemm 1 'up'
    A 'A' bf16 K-major
    B 'B1' bf16 N-major batch-broadcast
epilogue:
  %0 = accumulator of gemm 0 'gate'  # 'gate::OUT'
  %1 = accumulator of gemm 1 'up'  # 'up::OUT'
  %2 = load aux 'bias' (column, batch 1)  # 'bias'
  %3 = add(%0, %2)  # 'add_bias::OUT'
  %4 = silu(%3, beta 1.5) rounded to bf16  # 'swish::OUT'
  %5 = mul(%4, %1) rounded to bf16  # 'D'
stores:
  output 'D' <- %5 bf16 N-major
  tap 'row_amax' <- amax(%5) over batch, N fp32
  quantized 'Y' + scales 'Y_scale' <- %1 fp4_e2m1 N-major blocks 1x32
)";
  EXPECT_EQ(printed(g), golden);
}

TEST(Print, OneBufferInTwoRolesListsBoth) {
  Graph g;
  auto a = input(g, "A", {1, 64, 64}, DataType::kBFloat16);
  auto d = g.matmul(a, a);
  d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
  const std::string text = printed(g);
  EXPECT_TRUE(has_line(text, "  #0 A,B    'A' uid 1 bf16 [1, 64, 64]:[4096, 64, 1]")) << text;
  EXPECT_TRUE(has_line(text, "    A 'A' bf16 K-major")) << text;
  EXPECT_TRUE(has_line(text, "    B 'A' bf16 N-major")) << text;
}

TEST(Print, BlockScaledOperandsAndReluAttributes) {
  Graph g;
  g.set_name("fp8");
  auto a = input(g, "A", {1, 64, 128}, DataType::kFp8E4M3);
  auto sa = input(g, "A_scale", {1, 64, 1}, DataType::kFloat32);
  auto b = input(g, "B", {1, 128, 128}, DataType::kFp8E4M3, {128 * 128, 1, 128});
  auto sb = input(g, "B_scale", {1, 1, 1}, DataType::kFloat32);
  auto acc = g.matmul(
      g.block_scale_dequantize(a, sa, BlockScaleDequantizeAttributes().set_block_size(1, 128)),
      g.block_scale_dequantize(b, sb, BlockScaleDequantizeAttributes().set_block_size(128, 128)));
  auto d = g.pointwise(acc, op(PointwiseMode::kRelu)
                                .set_relu_lower_clip_slope(0.25f)
                                .set_relu_lower_clip(-1.0f)
                                .set_relu_upper_clip(6.0f));
  d->set_name("D").set_data_type(DataType::kFp8E5M2).set_output(true);
  d->set_stride({64 * 128, 1, 64});
  const std::string text = printed(g);
  EXPECT_TRUE(has_line(text, "fusion program 'fp8': batch 1 M 64 N 128 K 128")) << text;
  EXPECT_TRUE(has_line(text, "  #1 scale  'A_scale' uid 2 fp32 [1, 64, 1]:[64, 1, 1]")) << text;
  EXPECT_TRUE(has_line(text, "    A 'A' fp8_e4m3 K-major block-scaled by 'A_scale' (fp32, 1x128)"))
      << text;
  EXPECT_TRUE(
      has_line(text, "    B 'B' fp8_e4m3 K-major block-scaled by 'B_scale' (fp32, 128x128)"))
      << text;
  EXPECT_NE(text.find("= relu(%0, slope 0.25, lower -1, upper 6) rounded to fp8_e5m2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  output 'D' <- %1 fp8_e5m2 M-major\n"), std::string::npos) << text;
}

TEST(Print, TapNamesOnlyTheAxesItReduces) {
  Graph g;
  auto a = input(g, "A", {1, 1, 64}, DataType::kBFloat16);
  auto b = input(g, "B", {1, 64, 128}, DataType::kBFloat16);
  auto acc = g.matmul(a, b);
  auto full = g.reduction(acc, ReductionAttributes().set_mode(ReductionMode::kNorm2));
  full->set_dim({1, 1, 1}).set_name("norm").set_output(true);
  const std::string text = printed(g);
  // M and batch are 1 already: only N is reduced.
  EXPECT_TRUE(has_line(text, "  tap 'norm' <- norm2(%0) over N fp32")) << text;
}

}  // namespace
}  // namespace fusedgemm::fusion
