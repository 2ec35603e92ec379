#include "support/flavor_graphs.h"

#include <fmt/format.h>

#include "fusedgemm/graph_json.h"

namespace fusedgemm::test {
namespace {

using Dimv = std::vector<std::int64_t>;

constexpr DataType kBf16 = DataType::kBFloat16;
constexpr DataType kFp32 = DataType::kFloat32;
constexpr DataType kFp8 = DataType::kFp8E4M3;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

PointwiseAttributes op(PointwiseMode mode) {
  return PointwiseAttributes().set_mode(mode);
}

class Builder {
 public:
  Builder(Flavor flavor, const FlavorShape& shape) {
    fg_.flavor = flavor;
    fg_.shape = shape;
    fg_.graph.set_name(std::string(to_string(flavor)));
  }

  Result<FlavorGraph> run() {
    switch (fg_.flavor) {
      case Flavor::kPlain: plain(); break;
      case Flavor::kEpilogue: epilogue(); break;
      case Flavor::kAuxScalar: aux(false, false, PointwiseMode::kAdd); break;
      case Flavor::kAuxRow: aux(true, false, PointwiseMode::kMul); break;
      case Flavor::kAuxColumn: aux(false, true, PointwiseMode::kAdd); break;
      case Flavor::kAuxFull: aux(true, true, PointwiseMode::kAdd); break;
      case Flavor::kMultiOutput: multi_output(); break;
      case Flavor::kTapsRow: taps({s().batch, s().m, 1}); break;
      case Flavor::kTapsColumn: taps({s().batch, 1, s().n}); break;
      case Flavor::kTapsFull: taps({1, 1, 1}); break;
      case Flavor::kGatedMlp: gated_mlp(); break;
      case Flavor::kTapsOnlyMultiGemm: taps_only(); break;
      case Flavor::kBlockScaled: block_scaled(); break;
      case Flavor::kQuantized: quantized(); break;
    }
    FG_TRY(fg_.graph.validate());
    return std::move(fg_);
  }

 private:
  const FlavorShape& s() const { return fg_.shape; }
  Graph& g() { return fg_.graph; }

  Tensor input(const std::string& name, Dimv dims, DataType type, Dimv strides) {
    auto t = g().tensor(TensorAttributes()
                            .set_name(name)
                            .set_dim(std::move(dims))
                            .set_stride(std::move(strides))
                            .set_data_type(type));
    fg_.inputs.push_back(t);
    return t;
  }

  Tensor operand_a(const std::string& name) {
    const DataType type = s().operand_type;
    const Dimv dims{s().a_batch_one ? 1 : s().batch, s().m, s().k};
    const int contiguous = s().a_major == Major::kK ? 2 : 1;
    return input(name, dims, type, padded_strides(dims, contiguous, s().operand_pad));
  }

  Tensor operand_b(const std::string& name) {
    const DataType type = s().operand_type;
    const Dimv dims{s().b_batch_one ? 1 : s().batch, s().k, s().n};
    const int contiguous = s().b_major == Major::kK ? 1 : 2;
    return input(name, dims, type, padded_strides(dims, contiguous, s().operand_pad));
  }

  void store(const Tensor& t, const std::string& name, DataType type, Major major) {
    const Dimv dims{s().batch, s().m, s().n};
    t->set_name(name).set_data_type(type).set_output(true).set_dim(dims).set_stride(
        padded_strides(dims, major == Major::kN ? 2 : 1, s().output_pad));
    fg_.written.push_back(t);
  }

  void store_d(const Tensor& t) { store(t, "D", kBf16, s().out_major); }

  Tensor tap(const Tensor& in, const std::string& name, Dimv dims, ReductionMode mode) {
    auto t = g().reduction(in, ReductionAttributes().set_name(name + "_node").set_mode(mode));
    const Dimv strides = padded_strides(dims, 2, s().tap_pad);
    t->set_name(name)
        .set_dim(std::move(dims))
        .set_stride(strides)
        .set_data_type(kFp32)
        .set_output(true);
    fg_.written.push_back(t);
    fg_.taps.push_back(t);
    return t;
  }

  Tensor acc() { return g().matmul(operand_a("A"), operand_b("B")); }

  void plain() { store_d(acc()); }

  // The scale is a [1, 1, 1] fp32 aux; the product is declared bf16, so the running value
  // rounds there before gelu sees it.
  void epilogue() {
    auto scale = input("scale", {1, 1, 1}, kFp32, {1, 1, 1});
    auto scaled = g().pointwise(acc(), scale, op(PointwiseMode::kMul).set_name("scaled"));
    scaled->set_name("acc_scaled").set_data_type(kBf16);
    store_d(g().pointwise(scaled, op(PointwiseMode::kGeluTanh)));
  }

  void aux(bool rows, bool cols, PointwiseMode mode) {
    const Dimv dims{s().aux_batch_one ? 1 : s().batch, rows ? s().m : 1, cols ? s().n : 1};
    auto a = input("aux", dims, kBf16, padded_strides(dims, 2, 0));
    store_d(g().pointwise(acc(), a, op(mode)));
  }

  void multi_output() {
    auto c = acc();
    const Major other = s().out_major == Major::kN ? Major::kM : Major::kN;
    auto d0 = g().pointwise(c, op(PointwiseMode::kIdentity));
    store(d0, "D0", kFp32, s().out_major);
    store(g().pointwise(c, op(PointwiseMode::kRelu).set_relu_lower_clip_slope(0.25f)), "D1", kBf16,
          other);
    store(g().pointwise(c, op(PointwiseMode::kTanh)), "D2", DataType::kFloat16, s().out_major);
    store(g().pointwise(c, op(PointwiseMode::kIdentity)), "D3", kFp8, s().out_major);
    store(g().pointwise(c, op(PointwiseMode::kIdentity)), "D4", DataType::kInt8, other);
  }

  // Every reduction mode into `dims`. A product of many values leaves fp32's range, so the
  // mul tap reduces exp(tanh(acc) / 8) (three square roots of exp(tanh(acc))): its
  // logarithm has mean 0 and stays within fp32's range over 21600 values.
  void taps(const Dimv& dims) {
    auto c = acc();
    auto d = g().pointwise(c, op(PointwiseMode::kIdentity));
    store_d(d);
    for (ReductionMode mode : all_reduction_modes()) {
      if (mode == ReductionMode::kMul) continue;
      tap(c, fmt::format("T_{}", to_string(mode)), dims, mode);
    }
    auto near_one =
        g().pointwise(g().pointwise(c, op(PointwiseMode::kTanh)), op(PointwiseMode::kExp));
    for (int i = 0; i < 3; ++i) near_one = g().pointwise(near_one, op(PointwiseMode::kSqrt));
    tap(near_one, "T_mul", dims, ReductionMode::kMul);
    if (fg_.flavor == Flavor::kTapsFull) {
      tap(c, "T_batch_add", {s().batch, 1, 1}, ReductionMode::kAdd);
    }
  }

  void gated_mlp() {
    auto a = operand_a("A");
    auto c0 = g().matmul(a, operand_b("B0"));
    auto c1 = g().matmul(a, operand_b("B1"));
    store_d(
        g().pointwise(g().pointwise(c0, op(PointwiseMode::kSilu)), c1, op(PointwiseMode::kMul)));
  }

  void taps_only() {
    auto c0 = g().matmul(operand_a("A0"), operand_b("B0"));
    auto c1 = g().matmul(operand_a("A1"), operand_b("B1"));
    auto sum = g().pointwise(c0, c1, op(PointwiseMode::kAdd));
    tap(sum, "R", {s().batch, s().m, 1}, ReductionMode::kAdd);
    tap(c1, "C", {s().batch, 1, s().n}, ReductionMode::kAmax);
  }

  // DeepSeek-style: fp32 scales per 1x128 of A and 128x128 of B, both K-major.
  void block_scaled() {
    const std::int64_t ab = s().a_batch_one ? 1 : s().batch;
    const std::int64_t bb = s().b_batch_one ? 1 : s().batch;
    const Dimv a_dims{ab, s().m, s().k};
    const Dimv b_dims{bb, s().k, s().n};
    auto a = input("A", a_dims, kFp8, padded_strides(a_dims, 2, s().operand_pad));
    const Dimv as_dims{ab, s().m, ceil_div(s().k, 128)};
    auto a_scale = input("A_scale", as_dims, kFp32, padded_strides(as_dims, 2, 0));
    auto b = input("B", b_dims, kFp8, padded_strides(b_dims, 1, s().operand_pad));
    const Dimv bs_dims{bb, ceil_div(s().k, 128), ceil_div(s().n, 128)};
    auto b_scale = input("B_scale", bs_dims, kFp32, padded_strides(bs_dims, 2, 0));
    auto da = g().block_scale_dequantize(
        a, a_scale, BlockScaleDequantizeAttributes().set_name("dequant_A").set_block_size(1, 128));
    auto db = g().block_scale_dequantize(
        b, b_scale,
        BlockScaleDequantizeAttributes().set_name("dequant_B").set_block_size(128, 128));
    store_d(g().matmul(da, db));
  }

  void quantized() {
    const std::int64_t block = s().quantize_block;
    auto [y, scale] = g().block_scale_quantize(
        acc(), BlockScaleQuantizeAttributes().set_name("quantize").set_block_size(1, block));
    store(y, "Y", s().quantized_type, Major::kN);
    const Dimv scale_dims{s().batch, s().m, ceil_div(s().n, block)};
    scale->set_name("Y_scale")
        .set_data_type(s().quantized_scale_type)
        .set_output(true)
        .set_dim(scale_dims)
        .set_stride(padded_strides(scale_dims, 2, 0));
    fg_.written.push_back(scale);
  }

  FlavorGraph fg_;
};

}  // namespace

std::string_view to_string(Flavor flavor) {
  switch (flavor) {
    case Flavor::kPlain: return "plain";
    case Flavor::kEpilogue: return "epilogue";
    case Flavor::kAuxScalar: return "aux_scalar";
    case Flavor::kAuxRow: return "aux_row";
    case Flavor::kAuxColumn: return "aux_column";
    case Flavor::kAuxFull: return "aux_full";
    case Flavor::kMultiOutput: return "multi_output";
    case Flavor::kTapsRow: return "taps_row";
    case Flavor::kTapsColumn: return "taps_column";
    case Flavor::kTapsFull: return "taps_full";
    case Flavor::kGatedMlp: return "gated_mlp";
    case Flavor::kTapsOnlyMultiGemm: return "taps_only_multi_gemm";
    case Flavor::kBlockScaled: return "block_scaled";
    case Flavor::kQuantized: return "quantized";
  }
  return "unknown";
}

std::vector<Flavor> all_flavors() {
  return {Flavor::kPlain,       Flavor::kEpilogue, Flavor::kAuxScalar,   Flavor::kAuxRow,
          Flavor::kAuxColumn,   Flavor::kAuxFull,  Flavor::kMultiOutput, Flavor::kTapsRow,
          Flavor::kTapsColumn,  Flavor::kTapsFull, Flavor::kGatedMlp,    Flavor::kTapsOnlyMultiGemm,
          Flavor::kBlockScaled, Flavor::kQuantized};
}

std::string to_string(const FlavorShape& s) {
  auto major = [](Major m) { return std::string(fusion::to_string(m)); };
  std::string text = fmt::format("batch {} M {} N {} K {}, A {}, B {}, out {}", s.batch, s.m, s.n,
                                 s.k, major(s.a_major), major(s.b_major), major(s.out_major));
  if (s.operand_type != DataType::kBFloat16) text += fmt::format(", {}", to_string(s.operand_type));
  if (s.a_batch_one) text += ", A batch 1";
  if (s.b_batch_one) text += ", B batch 1";
  if (s.aux_batch_one) text += ", aux batch 1";
  if (s.operand_pad) text += fmt::format(", operand pad {}", s.operand_pad);
  if (s.quantized_type != DataType::kFp8E4M3 || s.quantize_block != 128 ||
      s.quantized_scale_type != DataType::kFloat32) {
    text += fmt::format(", quantized {} 1x{} scales {}", to_string(s.quantized_type),
                        s.quantize_block, to_string(s.quantized_scale_type));
  }
  if (s.output_pad) text += fmt::format(", output pad {}", s.output_pad);
  if (s.tap_pad) text += fmt::format(", tap pad {}", s.tap_pad);
  return text;
}

Result<FlavorGraph> make_flavor_graph(Flavor flavor, const FlavorShape& shape) {
  return Builder(flavor, shape).run();
}

Result<Graph> validated_graph(std::string_view json) {
  Result<Graph> graph = graph_from_json(json);
  if (!graph) return graph;
  if (Status status = graph->validate(); !status) return status;
  return graph;
}

std::vector<std::int64_t> padded_strides(const std::vector<std::int64_t>& dims, int contiguous,
                                         std::int64_t pad) {
  if (contiguous == 2) {
    const std::int64_t row = dims[2] + pad;
    return {dims[1] * row + pad, row, 1};
  }
  const std::int64_t column = dims[1] + pad;
  return {dims[2] * column + pad, 1, column};
}

}  // namespace fusedgemm::test
