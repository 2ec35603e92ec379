// The rule table (STYLE.md rules 6-7): every row has a refusing and a passing case, each
// built through the public Graph API. Structure rows are declined by analyze(), build rows
// by check_support(). A new row without a case here fails RuleTable.EveryRowHasACase.
#include "recipe/rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/graph.h"
#include "fusion/analyze.h"
#include "recipe/support_gate.h"

namespace fusedgemm::recipe {
namespace {

using Dimv = std::vector<std::int64_t>;

constexpr DataType kBf16 = DataType::kBFloat16;
constexpr DataType kFp32 = DataType::kFloat32;
constexpr DataType kFp8 = DataType::kFp8E4M3;
constexpr DataType kFp4 = DataType::kFp4E2M1;

Tensor input(Graph& g, const std::string& name, Dimv dims, DataType type, Dimv strides = {}) {
  TensorAttributes attributes;
  attributes.set_name(name).set_dim(std::move(dims)).set_data_type(type);
  if (!strides.empty()) attributes.set_stride(std::move(strides));
  return g.tensor(attributes);
}

void store(const Tensor& t, const std::string& name, DataType type) {
  t->set_name(name).set_data_type(type).set_output(true);
}

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

// A reduction of `in` into `dims` (extent 1 on each reduced axis).
Tensor reduce(Graph& g, const Tensor& in, Dimv dims, ReductionMode mode = ReductionMode::kAdd) {
  auto r = g.reduction(in, ReductionAttributes().set_mode(mode));
  r->set_dim(std::move(dims));
  return r;
}

// A [1, 64, 64] and B [1, 64, 128] K-major, both bf16: the legal baseline most cases bend.
Tensor a_bf16(Graph& g) {
  return input(g, "A", {1, 64, 64}, kBf16);
}
Tensor b_bf16(Graph& g) {
  return input(g, "B", {1, 64, 128}, kBf16, {64 * 128, 1, 64});
}
Tensor acc_bf16(Graph& g) {
  return g.matmul(a_bf16(g), b_bf16(g));
}

// Block-scaled fp8 operand: data [1, rows, cols] with fp32 scales per block.
Tensor dequantized(Graph& g, const std::string& name, Dimv dims, Dimv strides,
                   std::int64_t block_rows, std::int64_t block_cols) {
  auto data = input(g, name, dims, kFp8, std::move(strides));
  auto scale = input(
      g, name + "_scale",
      {dims[0], (dims[1] + block_rows - 1) / block_rows, (dims[2] + block_cols - 1) / block_cols},
      kFp32);
  return g.block_scale_dequantize(
      data, scale, BlockScaleDequantizeAttributes().set_block_size(block_rows, block_cols));
}

enum class Stage { kNone, kAnalyze, kSupportGate };

struct Outcome {
  Stage stage = Stage::kNone;
  std::optional<Decline> decline;
};

// validate -> analyze -> check_support, as build() runs them.
Outcome first_decline(Graph& g) {
  Outcome outcome;
  if (Status s = g.validate(); !s) {
    ADD_FAILURE() << "the case must be a valid graph; validate: " << s.message();
    return outcome;
  }
  auto analysis = fusion::analyze(g);
  if (!analysis) {
    ADD_FAILURE() << "analyze: " << analysis.status().message();
    return outcome;
  }
  if (analysis->decline) return {Stage::kAnalyze, analysis->decline};
  if (auto decline = check_support(analysis->program)) return {Stage::kSupportGate, decline};
  return outcome;
}

// One row's case: build(g, false) breaks the rule; build(g, true) is the minimal change that
// makes the graph legal for the fused engine.
struct RuleCase {
  const char* rule;
  const char* role;    // as messages spell it: "A", "B", "aux", "scale", "output", "tap"
  const char* tensor;  // the tensor the message names
  const char* seen;    // the offending number (or value) the message must contain
  void (*build)(Graph& g, bool legal);
};

const std::vector<RuleCase>& cases() {
  static const std::vector<RuleCase> kCases = {
      // --- structure --------------------------------------------------------------------
      {"no_matmul", "output", "Y", "0 of the graph's 1 matmuls",
       [](Graph& g, bool legal) {
         auto acc = acc_bf16(g);
         auto x = input(g, "X", {1, 64, 128}, kBf16);
         store(g.pointwise(legal ? acc : x, op(PointwiseMode::kRelu)), "Y", kBf16);
       }},
      {"gemm_shape_mismatch", "A", "A1", "K 32",
       [](Graph& g, bool legal) {
         const std::int64_t k1 = legal ? 64 : 32;
         auto c0 = acc_bf16(g);
         auto a1 = input(g, "A1", {1, 64, k1}, kBf16);
         auto b1 = input(g, "B1", {1, k1, 128}, kBf16, {k1 * 128, 1, k1});
         auto c1 = g.matmul(a1, b1);
         store(g.pointwise(c0, c1, op(PointwiseMode::kAdd)), "D", kBf16);
       }},
      {"gemm_shape_mismatch", "B", "B1", "N 256",
       [](Graph& g, bool legal) {
         auto c0 = acc_bf16(g);
         const std::int64_t n1 = legal ? 128 : 256;
         auto b1 = input(g, "B1", {1, 64, n1}, kBf16, {64 * n1, 1, 64});
         auto c1 = g.matmul(input(g, "A1", {1, 64, 64}, kBf16), b1);
         store(reduce(g, c0, {1, 64, 1}), "R0", kFp32);  // taps: N differs, so no sum
         store(reduce(g, c1, {1, 64, 1}), "R1", kFp32);
       }},
      {"chained_gemm", "A", "C", "[1, 64, 64]",
       [](Graph& g, bool legal) {
         // Square, so that both matmuls share one problem shape and only the chain is wrong.
         auto c = g.matmul(a_bf16(g), input(g, "B", {1, 64, 64}, kBf16));
         c->set_name("C");
         auto caller = input(g, "A2", {1, 64, 64}, kBf16);
         auto b2 = input(g, "B2", {1, 64, 64}, kBf16);
         store(g.matmul(legal ? caller : c, b2), "D", kBf16);
       }},
      {"chained_gemm", "scale", "S", "[1, 64, 1]",
       [](Graph& g, bool legal) {
         // A matmul result used as the block scales of an operand. M 64, N 1, K 128 for both
         // matmuls: A [1, 64, 128] in 1x128 blocks has scales [1, 64, 1].
         auto a = input(g, "A", {1, 64, 128}, kFp8);
         auto s_caller = input(g, "S_caller", {1, 64, 1}, kFp32);
         auto s = g.matmul(input(g, "P", {1, 64, 128}, kBf16), input(g, "Q", {1, 128, 1}, kBf16));
         s->set_name("S");
         auto b = dequantized(g, "B", {1, 128, 1}, {128, 1, 128}, 128, 128);
         auto da = g.block_scale_dequantize(
             a, legal ? s_caller : s, BlockScaleDequantizeAttributes().set_block_size(1, 128));
         store(g.matmul(da, b), "D", kBf16);
       }},
      {"prologue_op", "A", "P", "[1, 64, 64]",
       [](Graph& g, bool legal) {
         auto a = a_bf16(g);
         auto p = g.pointwise(a, op(PointwiseMode::kRelu));
         p->set_name("P");
         store(g.matmul(legal ? a : p, b_bf16(g)), "D", kBf16);
       }},
      {"operand_major", "A", "A", "[8192, 128, 2]",
       [](Graph& g, bool legal) {
         auto a =
             input(g, "A", {1, 64, 64}, kBf16, legal ? Dimv{64 * 64, 64, 1} : Dimv{8192, 128, 2});
         store(g.matmul(a, b_bf16(g)), "D", kBf16);
       }},
      {"epilogue_input", "aux", "Y", "[1, 64, 128]",
       [](Graph& g, bool legal) {
         auto acc = acc_bf16(g);
         auto [y, scale] = g.block_scale_quantize(acc, BlockScaleQuantizeAttributes());
         store(y, "Y", kFp8);
         scale->set_name("Y_scale").set_output(true);
         store(g.pointwise(legal ? acc : y, op(PointwiseMode::kRelu)), "Z", kBf16);
       }},
      {"tap_consumed", "tap", "R", "[1, 64, 1]",
       [](Graph& g, bool legal) {
         auto acc = acc_bf16(g);
         auto r = reduce(g, acc, {1, 64, 1}, ReductionMode::kMax);
         store(r, "R", kFp32);
         auto row_scale = input(g, "row_scale", {1, 64, 1}, kFp32);
         store(g.pointwise(acc, legal ? row_scale : r, op(PointwiseMode::kDiv)), "D", kBf16);
       }},
      {"tap_consumed", "tap", "R", "[1, 64, 1]",
       [](Graph& g, bool legal) {
         // A reduction that is not an output but feeds one.
         auto acc = acc_bf16(g);
         auto r = reduce(g, acc, {1, 64, 1}, ReductionMode::kMax);
         r->set_name("R");
         if (legal) {
           store(r, "R", kFp32);
         } else {
           store(g.pointwise(acc, r, op(PointwiseMode::kDiv)), "D", kBf16);
         }
       }},
      {"aux_shape", "aux", "X", "[3, 64, 128]",
       [](Graph& g, bool legal) {
         auto x = input(g, "X", {legal ? 1 : 3, 64, 128}, kBf16);
         store(g.pointwise(acc_bf16(g), x, op(PointwiseMode::kAdd)), "D", kBf16);
       }},
      {"store_shape", "output", "E", "[1, 1, 128]",
       [](Graph& g, bool legal) {
         auto acc = acc_bf16(g);
         store(acc, "D", kBf16);
         auto bias = input(g, "bias", {1, 1, 128}, kBf16);
         auto e = legal ? g.pointwise(bias, acc, op(PointwiseMode::kAdd))
                        : g.pointwise(bias, op(PointwiseMode::kRelu));
         store(e, "E", kBf16);
       }},
      {"store_shape", "tap", "T", "[1, 1, 128]",
       [](Graph& g, bool legal) {
         auto acc = acc_bf16(g);
         store(acc, "D", kBf16);
         auto bias = input(g, "bias", {1, 1, 128}, kBf16);
         auto x = legal ? g.pointwise(bias, acc, op(PointwiseMode::kAdd))
                        : g.pointwise(bias, op(PointwiseMode::kRelu));
         x->set_name("bias_relu");
         store(reduce(g, x, {1, 1, 1}), "T", kFp32);
       }},
      {"quantized_output", "scale", "Y_scale", "[1, 64, 1]",
       [](Graph& g, bool legal) {
         auto [y, scale] = g.block_scale_quantize(acc_bf16(g), BlockScaleQuantizeAttributes());
         store(y, "Y", kFp8);
         scale->set_name("Y_scale").set_output(legal);
       }},
      {"dequantize_placement", "aux", "DQ", "[1, 64, 128]",
       [](Graph& g, bool legal) {
         auto dq = dequantized(g, "X", {1, 64, 128}, {}, 1, 128);
         dq->set_name("DQ");
         auto residual = input(g, "residual", {1, 64, 128}, kBf16);
         store(g.pointwise(acc_bf16(g), legal ? residual : dq, op(PointwiseMode::kAdd)), "D",
               kBf16);
       }},
      {"dequantize_placement", "output", "DQ", "[1, 64, 128]",
       [](Graph& g, bool legal) {
         auto dq = dequantized(g, "X", {1, 64, 128}, {}, 1, 128);
         dq->set_name("DQ");
         store(acc_bf16(g), "D", kBf16);
         if (!legal) store(dq, "DQ", kFp32);
       }},
      {"dequantize_rounding", "B", "BQ", "fp8_e4m3",
       [](Graph& g, bool legal) {
         auto a = dequantized(g, "A", {1, 64, 128}, {}, 1, 128);
         auto b = dequantized(g, "B", {1, 128, 128}, {128 * 128, 1, 128}, 128, 128);
         b->set_name("BQ");
         if (!legal) b->set_data_type(kFp8);
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"output_major", "output", "D", "[1, 256, 2]",
       [](Graph& g, bool legal) {
         auto a = input(g, "A", {2, 64, 64}, kBf16);
         auto d = g.matmul(a, b_bf16(g));
         store(d, "D", kBf16);
         if (!legal) d->set_stride({1, 256, 2});  // the batch axis is the contiguous one
       }},
      {"output_major", "output", "Y", "[1, 256, 2]",
       [](Graph& g, bool legal) {
         auto a = input(g, "A", {2, 64, 64}, kBf16);
         auto [y, scale] =
             g.block_scale_quantize(g.matmul(a, b_bf16(g)), BlockScaleQuantizeAttributes());
         store(y, "Y", kFp8);
         if (!legal) y->set_stride({1, 256, 2});
         scale->set_name("Y_scale").set_output(true);
       }},
      // --- build ------------------------------------------------------------------------
      {"gemm_count", "A", "A", "matmul 5 of 5",
       [](Graph& g, bool legal) {
         auto a = a_bf16(g);
         Tensor sum;
         for (int i = 0; i < (legal ? 4 : 5); ++i) {
           auto c = g.matmul(a, input(g, fmt::format("B{}", i), {1, 64, 128}, kBf16));
           sum = sum ? g.pointwise(sum, c, op(PointwiseMode::kAdd)) : c;
         }
         store(sum, "D", kBf16);
       }},
      {"epilogue_ops", "output", "D", "computes 33 pointwise operations",
       [](Graph& g, bool legal) {
         Tensor x = acc_bf16(g);
         for (int i = 0; i < (legal ? 32 : 33); ++i) x = g.pointwise(x, op(PointwiseMode::kRelu));
         store(x, "D", kBf16);
       }},
      {"kernel_buffer_count", "aux", "aux14", "parameter 17 of 18",
       [](Graph& g, bool legal) {
         Tensor sum = acc_bf16(g);
         for (int i = 0; i < (legal ? 13 : 15); ++i) {
           sum = g.pointwise(sum, input(g, fmt::format("aux{}", i), {1, 64, 128}, kBf16),
                             op(PointwiseMode::kAdd));
         }
         store(sum, "D", kBf16);
       }},
      {"tma_descriptor_count", "A", "A3", "operand 7 of 8",
       [](Graph& g, bool legal) {
         Tensor sum;
         const Tensor a0 = input(g, "A0", {1, 64, 64}, kBf16);
         for (int i = 0; i < 4; ++i) {
           auto a = legal || i == 0 ? a0 : input(g, fmt::format("A{}", i), {1, 64, 64}, kBf16);
           auto c = g.matmul(a, input(g, fmt::format("B{}", i), {1, 64, 128}, kBf16));
           sum = sum ? g.pointwise(sum, c, op(PointwiseMode::kAdd)) : c;
         }
         store(sum, "D", kBf16);
       }},
      {"operand_data_type", "B", "B", "fp16",
       [](Graph& g, bool legal) {
         auto b = input(g, "B", {1, 64, 128}, legal ? kBf16 : DataType::kFloat16);
         store(g.matmul(a_bf16(g), b), "D", kBf16);
       }},
      {"operand_data_type", "A", "A", "fp32",
       [](Graph& g, bool legal) {
         auto a = input(g, "A", {1, 64, 64}, legal ? kBf16 : kFp32);
         store(g.matmul(a, b_bf16(g)), "D", kBf16);
       }},
      {"layout_group_major", "A", "A1", "M-major",
       [](Graph& g, bool legal) {
         auto a0 = input(g, "A0", {1, 64, 64}, kBf16);
         auto a1 = input(g, "A1", {1, 64, 64}, kBf16,
                         legal ? Dimv{64 * 64, 64, 1} : Dimv{64 * 64, 1, 64});
         auto b0 = input(g, "B0", {1, 64, 128}, kBf16);
         auto b1 = input(g, "B1", {1, 64, 128}, kBf16);
         auto c0 = g.matmul(a0, b0);  // in order: A0 is the group's first A
         auto c1 = g.matmul(a1, b1);
         store(g.pointwise(c0, c1, op(PointwiseMode::kAdd)), "D", kBf16);
       }},
      {"operand_major_8bit", "B", "B", "N-major",
       [](Graph& g, bool legal) {
         auto a = input(g, "A", {1, 64, 64}, kFp8);
         auto b = input(g, "B", {1, 64, 128}, kFp8,
                        legal ? Dimv{64 * 128, 1, 64} : Dimv{64 * 128, 128, 1});
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"operand_major_8bit", "B", "A", "N-major",
       [](Graph& g, bool legal) {
         // One buffer in two roles: A reads it K-major, B N-major; only B breaks the rule.
         auto a = input(g, "A", {1, 64, 64}, legal ? kBf16 : kFp8);
         store(g.matmul(a, a), "D", kBf16);
       }},
      {"block_scale_shape", "A", "A", "1x64",
       [](Graph& g, bool legal) {
         auto a = dequantized(g, "A", {1, 64, 128}, {}, 1, legal ? 128 : 64);
         auto b = dequantized(g, "B", {1, 128, 128}, {128 * 128, 1, 128}, 128, 128);
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"block_scale_shape", "B", "B", "128x64",
       [](Graph& g, bool legal) {
         auto a = dequantized(g, "A", {1, 64, 128}, {}, 1, 128);
         auto b = dequantized(g, "B", {1, 128, 128}, {128 * 128, 1, 128}, 128, legal ? 128 : 64);
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"block_scale_shape", "B", "B", "unscaled",
       [](Graph& g, bool legal) {
         // Only A is scaled.
         auto a = dequantized(g, "A", {1, 64, 128}, {}, 1, 128);
         auto b = legal ? dequantized(g, "B", {1, 128, 128}, {128 * 128, 1, 128}, 128, 128)
                        : input(g, "B", {1, 128, 128}, kFp8, {128 * 128, 1, 128});
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"tma_contiguous_extent", "A", "A", "100",
       [](Graph& g, bool legal) {
         const std::int64_t k = legal ? 104 : 100;
         auto a = input(g, "A", {1, 64, k}, kBf16);
         auto b = input(g, "B", {1, k, 128}, kBf16);  // N-major: contiguous extent 128
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"tma_contiguous_extent", "A", "A", "48",
       [](Graph& g, bool legal) {
         // fp4 packs two values a byte: 48 values are 24 bytes, not a 16-byte multiple.
         const std::int64_t k = legal ? 64 : 48;
         auto a = input(g, "A", {1, 64, k}, kFp4);
         auto b = input(g, "B", {1, k, 128}, kFp4, {k * 128, 1, k});
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"tma_stride_alignment", "A", "A", "stride 68",
       [](Graph& g, bool legal) {
         const std::int64_t row = legal ? 72 : 68;  // 136 bytes is not a 16-byte multiple
         auto a = input(g, "A", {1, 64, 64}, kBf16, {64 * row, row, 1});
         store(g.matmul(a, b_bf16(g)), "D", kBf16);
       }},
      {"tma_stride_alignment", "A", "A", "stride 63",
       [](Graph& g, bool legal) {
         // 63 fp4 values are 31.5 bytes: rounding up to 32 bytes must not hide it.
         const std::int64_t row = legal ? 64 : 63;
         auto a = input(g, "A", {1, 64, 32}, kFp4, {64 * row, row, 1});
         auto b = input(g, "B", {1, 32, 64}, kFp4, {32 * 64, 1, 32});
         store(g.matmul(a, b), "D", kBf16);
       }},
      {"aux_data_type", "aux", "bias", "int8",
       [](Graph& g, bool legal) {
         auto bias = input(g, "bias", {1, 1, 128}, legal ? kBf16 : DataType::kInt8);
         store(g.pointwise(acc_bf16(g), bias, op(PointwiseMode::kAdd)), "D", kBf16);
       }},
      {"output_data_type", "output", "D", "int32",
       [](Graph& g, bool legal) { store(acc_bf16(g), "D", legal ? kBf16 : DataType::kInt32); }},
      {"output_data_type", "output", "D", "fp4_e2m1",
       [](Graph& g, bool legal) { store(acc_bf16(g), "D", legal ? kBf16 : kFp4); }},
      {"tap_data_type", "tap", "qsum", "int32",
       [](Graph& g, bool legal) {
         // An integer row sum is legal in a graph (the fallback engine runs it); the fused
         // epilogue accumulates taps in fp32 only.
         auto acc = acc_bf16(g);
         store(acc, "D", kBf16);
         auto q = g.pointwise(acc, op(PointwiseMode::kIdentity));
         q->set_name("q").set_data_type(legal ? kFp32 : DataType::kInt32);
         store(reduce(g, q, {1, 64, 1}), "qsum", legal ? kFp32 : DataType::kInt32);
       }},
      {"quantized_block_shape", "output", "Y", "1x64",
       [](Graph& g, bool legal) {
         auto [y, scale] = g.block_scale_quantize(
             acc_bf16(g), BlockScaleQuantizeAttributes().set_block_size(1, legal ? 128 : 64));
         store(y, "Y", kFp8);
         scale->set_name("Y_scale").set_output(true);
       }},
      {"quantized_block_shape", "output", "Y", "int8",
       [](Graph& g, bool legal) {
         auto [y, scale] = g.block_scale_quantize(acc_bf16(g), BlockScaleQuantizeAttributes());
         store(y, "Y", legal ? kFp8 : DataType::kInt8);
         scale->set_name("Y_scale").set_output(true);
       }},
      {"quantized_block_shape", "output", "Y", "M-major",
       [](Graph& g, bool legal) {
         auto [y, scale] = g.block_scale_quantize(acc_bf16(g), BlockScaleQuantizeAttributes());
         store(y, "Y", kFp8);
         if (!legal) y->set_stride({64 * 128, 1, 64});
         scale->set_name("Y_scale").set_output(true);
       }},
  };
  return kCases;
}

const Rule* find_rule(std::string_view id) {
  for (const Rule& rule : rule_table()) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

std::string case_name(const RuleCase& c) {
  return fmt::format("{} (role {} '{}', {})", c.rule, c.role, c.tensor, c.seen);
}

// One case per call, so that an ASSERT ends that case only and the table runs on.
void expect_refusal(const RuleCase& c) {
  SCOPED_TRACE(case_name(c));
  const Rule* rule = find_rule(c.rule);
  ASSERT_NE(rule, nullptr) << "no row '" << c.rule << "' in rule_table()";
  Graph g;
  c.build(g, /*legal=*/false);
  const Outcome outcome = first_decline(g);
  ASSERT_TRUE(outcome.decline) << "the refusing case was accepted";
  const Decline& d = *outcome.decline;
  EXPECT_EQ(d.rule, c.rule) << d.message;
  EXPECT_EQ(outcome.stage,
            rule->scope == RuleScope::kStructure ? Stage::kAnalyze : Stage::kSupportGate)
      << "a " << to_string(rule->scope) << " rule declined at the wrong stage";
  const std::string prefix = fmt::format("{}: role {} '{}': ", c.rule, c.role, c.tensor);
  EXPECT_EQ(d.message.rfind(prefix, 0), 0u) << d.message << "\nwant prefix: " << prefix;
  EXPECT_NE(d.message.find(c.seen), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("; legal: "), std::string::npos) << d.message;
}

void expect_pass(const RuleCase& c) {
  SCOPED_TRACE(case_name(c));
  Graph g;
  c.build(g, /*legal=*/true);
  const Outcome outcome = first_decline(g);
  EXPECT_FALSE(outcome.decline) << outcome.decline->message;
}

TEST(RuleTable, EachCaseRefusesWithItsRuleRoleTensorAndNumber) {
  for (const RuleCase& c : cases()) expect_refusal(c);
}

TEST(RuleTable, EachCasePassesAfterTheMinimalChange) {
  for (const RuleCase& c : cases()) expect_pass(c);
}

// Call rows have their cases in tests/runtime/illegal_call_test.cpp, run through execute.
TEST(RuleTable, EveryStructureAndBuildRowHasACase) {
  std::set<std::string_view> covered;
  for (const RuleCase& c : cases()) covered.insert(c.rule);
  for (const Rule& rule : rule_table()) {
    if (rule.scope == RuleScope::kCall) continue;
    EXPECT_TRUE(covered.contains(rule.id))
        << "rule '" << rule.id << "' has no refusing/passing case in rules_test.cpp";
  }
}

bool is_snake_case(std::string_view id) {
  if (id.empty() || id.front() == '_' || id.back() == '_') return false;
  if (!(id.front() >= 'a' && id.front() <= 'z')) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char ch = id[i];
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok || (ch == '_' && id[i + 1] == '_')) return false;
  }
  return true;
}

TEST(RuleTable, IdsAreUniqueAndSnakeCase) {
  std::set<std::string_view> seen;
  for (const Rule& rule : rule_table()) {
    EXPECT_TRUE(is_snake_case(rule.id)) << "'" << rule.id << "'";
    EXPECT_TRUE(seen.insert(rule.id).second) << "duplicate id '" << rule.id << "'";
  }
  EXPECT_FALSE(is_snake_case("Bad_id"));
  EXPECT_FALSE(is_snake_case("bad__id"));
  EXPECT_FALSE(is_snake_case("bad-id"));
}

TEST(RuleTable, BuildRowsCarryAPredicateAndAnExplainStructureRowsNeither) {
  for (const Rule& rule : rule_table()) {
    SCOPED_TRACE(rule.id);
    EXPECT_FALSE(rule.legal.empty());
    const bool build = rule.scope == RuleScope::kBuild;
    EXPECT_EQ(rule.first_violation != nullptr, build);
    EXPECT_EQ(rule.explain != nullptr, build);
  }
}

TEST(RuleTable, RowsRunInPipelineOrderStructureBuildCall) {
  const auto rules = rule_table();
  EXPECT_TRUE(std::is_sorted(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
    return static_cast<int>(a.scope) < static_cast<int>(b.scope);
  }));
}

TEST(SupportGate, ReportsTheFirstBrokenRowInTableOrder) {
  // An fp8 B that is N-major with K 100 breaks operand_major_8bit and tma_contiguous_extent
  // (for A); the earlier row is the one reported.
  Graph g;
  auto a = input(g, "A", {1, 64, 100}, kFp8);
  auto b = input(g, "B", {1, 100, 128}, kFp8);
  store(g.matmul(a, b), "D", kBf16);
  const Outcome outcome = first_decline(g);
  ASSERT_TRUE(outcome.decline);
  EXPECT_EQ(outcome.decline->rule, "operand_major_8bit");
}

TEST(SupportGate, AcceptsGatedMlpWithBiasAndTap) {
  Graph g;
  auto a = input(g, "A", {1, 256, 128}, kBf16);
  auto b0 = input(g, "B0", {1, 128, 512}, kBf16, {128 * 512, 1, 128});
  auto b1 = input(g, "B1", {1, 128, 512}, kBf16, {128 * 512, 1, 128});
  auto bias = input(g, "bias", {1, 1, 512}, kBf16);
  auto c0 = g.matmul(a, b0);
  auto c1 = g.matmul(a, b1);
  auto s = g.pointwise(g.pointwise(c0, bias, op(PointwiseMode::kAdd)), op(PointwiseMode::kSilu));
  auto d = g.pointwise(s, c1, op(PointwiseMode::kMul));
  store(d, "D", kBf16);
  store(reduce(g, d, {1, 256, 1}, ReductionMode::kAmax), "row_amax", kFp32);
  const Outcome outcome = first_decline(g);
  EXPECT_FALSE(outcome.decline) << outcome.decline->message;
}

TEST(SupportGate, AcceptsBlockScaledFp8WithQuantizedOutput) {
  Graph g;
  auto a = dequantized(g, "A", {1, 64, 256}, {}, 1, 128);
  auto b = dequantized(g, "B", {1, 256, 128}, {256 * 128, 1, 256}, 128, 128);
  auto [y, scale] =
      g.block_scale_quantize(g.matmul(a, b), BlockScaleQuantizeAttributes().set_block_size(1, 32));
  store(y, "Y", kFp4);
  scale->set_name("Y_scale").set_output(true);
  const Outcome outcome = first_decline(g);
  EXPECT_FALSE(outcome.decline) << outcome.decline->message;
}

}  // namespace
}  // namespace fusedgemm::recipe
