#include "codegen/epilogue.h"

#include <algorithm>
#include <bit>
#include <vector>

#include <fmt/format.h>

#include "codegen/device_terms.h"
#include "codegen/emit.h"
#include "codegen/pointwise_expr.h"

namespace fusedgemm::codegen {
namespace {

using fusion::EpilogueOp;
using fusion::FusionProgram;
using recipe::Extent;
using recipe::ParamKind;
using recipe::Recipe;

constexpr std::string_view kRule = "epilogue_codegen";
constexpr int kConsumerThreads = 128;  // one consumer warpgroup (epilogue_contract.cuh)
constexpr int kConsumerWarps = 4;
constexpr int kMaxTileN = 256;  // wgmma N
constexpr int kFloatBytes = 4;

// How a tap's elements meet one tile, from the axes it reduces (kernel axis order).
enum class TapShape {
  kElement,  // neither M nor N: every point has its own element (batch may still be reduced)
  kRows,     // N: one element per row
  kCols,     // M: one element per column
  kTile,     // M and N: one element per tile
};

struct TapPlan {
  int param = -1;
  TapShape shape = TapShape::kElement;
};

Status unavailable(std::string message) {
  return Status(ErrorCode::kUnavailable, std::move(message));
}

Status internal(std::string message) {
  return Status(ErrorCode::kInternal, std::move(message));
}

bool loadable(DataType type) {
  return type != DataType::kNotSet && type != DataType::kFp4E2M1;
}

bool quantized_value_type(DataType type) {
  return type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2 || type == DataType::kFp4E2M1;
}

bool quantized_scale_type(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16 ||
         is_fp8(type) || type == DataType::kE8M0;
}

std::string_view reduced_axes(TapShape shape) {
  switch (shape) {
    case TapShape::kElement: return "no tile axis";
    case TapShape::kRows: return "N";
    case TapShape::kCols: return "M";
    case TapShape::kTile: return "M, N";
  }
  return "";
}

class EpilogueGenerator {
 public:
  EpilogueGenerator(const FusionProgram& program, const Recipe& recipe) : p_(program), r_(recipe) {}

  Result<std::string> run() {
    FG_TRY(check());
    write_file();
    return w_.str();
  }

  Result<std::uint32_t> scratch() {
    FG_TRY(check());
    return static_cast<std::uint32_t>(scratch_bytes());
  }

 private:
  // --- checks ---------------------------------------------------------------------------

  Status check() {
    FG_TRY(index_params());
    FG_TRY(check_config());
    FG_TRY(check_nodes());
    FG_TRY(check_outputs());
    FG_TRY(plan_taps());
    return check_quantized();
  }

  std::string role_tensor(Role role, int buffer) const {
    return fmt::format("role {} '{}'", to_string(role), p_.buffers[buffer].name);
  }

  DataType type_of(int buffer) const { return p_.buffers[buffer].data_type; }

  // The kernel parameter of each entry of the program's lists, from the argument plan.
  Status index_params() {
    aux_param_.assign(p_.aux.size(), -1);
    output_param_.assign(p_.outputs.size(), -1);
    tap_param_.assign(p_.taps.size(), -1);
    quant_param_.assign(p_.quantized_outputs.size(), -1);
    quant_scale_param_.assign(p_.quantized_outputs.size(), -1);
    for (std::size_t i = 0; i < r_.roles.size(); ++i) {
      const auto& role = r_.roles[i];
      std::vector<int>* list = nullptr;
      switch (role.kind) {
        case ParamKind::kAux: list = &aux_param_; break;
        case ParamKind::kOutput: list = &output_param_; break;
        case ParamKind::kTap: list = &tap_param_; break;
        case ParamKind::kQuantized: list = &quant_param_; break;
        case ParamKind::kQuantizedScale: list = &quant_scale_param_; break;
        case ParamKind::kOperand:
        case ParamKind::kOperandScale: continue;
      }
      if (role.index < 0 || role.index >= static_cast<int>(list->size())) {
        return internal(
            fmt::format("{}: recipe parameter {} ('{}') indexes entry {} of a list of "
                        "{}; legal: a recipe made from this fusion program",
                        kRule, i, role.name, role.index, list->size()));
      }
      (*list)[role.index] = static_cast<int>(i);
    }
    for (const auto* list :
         {&aux_param_, &output_param_, &tap_param_, &quant_param_, &quant_scale_param_}) {
      if (std::find(list->begin(), list->end(), -1) != list->end()) {
        return internal(
            fmt::format("{}: graph '{}': the recipe has no kernel parameter for an "
                        "aux, output, tap or quantized output; legal: a recipe made "
                        "from this fusion program",
                        kRule, p_.graph_name));
      }
    }
    return Status::ok();
  }

  Status check_config() {
    const auto& c = r_.config;
    if (p_.gemms.empty()) {
      return internal(fmt::format("{}: graph '{}' has no matmul", kRule, p_.graph_name));
    }
    if (c.threads != kConsumerThreads) {
      return unavailable(fmt::format(
          "{}: graph '{}': kernel configuration with {} threads; legal: the epilogue runs on one "
          "consumer warpgroup of {} threads",
          kRule, p_.graph_name, c.threads, kConsumerThreads));
    }
    if (c.tile_m <= 0 || c.tile_m % 64 != 0 || c.tile_n <= 0 || c.tile_n % 8 != 0 ||
        c.tile_n > kMaxTileN) {
      return unavailable(fmt::format(
          "{}: graph '{}': tile {}x{}; legal: tile M a multiple of 64, tile N a multiple of 8 up "
          "to {} (the wgmma fragment layout)",
          kRule, p_.graph_name, c.tile_m, c.tile_n, kMaxTileN));
    }
    return Status::ok();
  }

  Status check_nodes() {
    for (std::size_t i = 0; i < p_.epilogue.size(); ++i) {
      const auto& node = p_.epilogue[i];
      if (!device_elem(node.round_to)) {
        return unavailable(fmt::format("{}: node '{}': rounds to {}; legal: a stored data type",
                                       kRule, node.name, to_string(node.round_to)));
      }
      switch (node.op) {
        case EpilogueOp::kAccumulator:
          if (node.gemm < 0 || node.gemm >= static_cast<int>(p_.gemms.size())) {
            return internal(fmt::format("{}: node '{}': accumulator of matmul {} of {}", kRule,
                                        node.name, node.gemm, p_.gemms.size()));
          }
          break;
        case EpilogueOp::kAuxLoad: {
          if (node.aux < 0 || node.aux >= static_cast<int>(p_.aux.size())) {
            return internal(fmt::format("{}: node '{}': aux {} of {}", kRule, node.name, node.aux,
                                        p_.aux.size()));
          }
          const int buffer = p_.aux[node.aux].buffer;
          if (!loadable(type_of(buffer))) {
            return unavailable(fmt::format(
                "{}: {}: data type {} is not loaded by the epilogue; legal: fp32, fp16, bf16, "
                "fp8, e8m0, int8 or int32",
                kRule, role_tensor(Role::kAux, buffer), to_string(type_of(buffer))));
          }
          break;
        }
        case EpilogueOp::kPointwise: {
          const int want = arity(node.pointwise.mode);
          if (static_cast<int>(node.inputs.size()) != want) {
            return internal(fmt::format("{}: node '{}': {} with {} inputs; legal: {}", kRule,
                                        node.name, to_string(node.pointwise.mode),
                                        node.inputs.size(), want));
          }
          for (const int in : node.inputs) {
            if (in < 0 || in >= static_cast<int>(i)) {
              return internal(fmt::format("{}: node '{}' reads value {}; legal: an earlier node",
                                          kRule, node.name, in));
            }
          }
          break;
        }
      }
    }
    return Status::ok();
  }

  bool value_ok(int value) const {
    return value >= 0 && value < static_cast<int>(p_.epilogue.size());
  }

  Status check_outputs() {
    for (const auto& o : p_.outputs) {
      if (!value_ok(o.value)) {
        return internal(fmt::format("{}: {} stores value {}", kRule,
                                    role_tensor(Role::kOutput, o.buffer), o.value));
      }
      const DataType t = type_of(o.buffer);
      if (!loadable(t)) {
        return unavailable(fmt::format(
            "{}: {}: dense output of data type {}; legal: fp32, fp16, bf16, fp8, int8 or int32 "
            "(fp4 through block_scale_quantize)",
            kRule, role_tensor(Role::kOutput, o.buffer), to_string(t)));
      }
    }
    return Status::ok();
  }

  // Which axes a tap reduces: those whose kernel extent is fixed at 1 (recipe shape rule
  // kOne), that is, declared 1. An axis declared larger that is 1 in some call needs no
  // reduction there, and the element-wise strategy gives the same sums.
  Status plan_taps() {
    taps_.clear();
    for (std::size_t i = 0; i < p_.taps.size(); ++i) {
      const auto& tap = p_.taps[i];
      if (!value_ok(tap.value)) {
        return internal(fmt::format("{}: {} reduces value {}", kRule,
                                    role_tensor(Role::kTap, tap.buffer), tap.value));
      }
      if (type_of(tap.buffer) != DataType::kFloat32) {
        return unavailable(fmt::format(
            "{}: {}: tap of data type {}; legal: fp32 (the epilogue accumulates taps in fp32)",
            kRule, role_tensor(Role::kTap, tap.buffer), to_string(type_of(tap.buffer))));
      }
      const auto& role = r_.roles[tap_param_[i]];
      if (std::bit_cast<std::uint32_t>(tap_identity(tap.mode)) != role.seed_word) {
        return internal(fmt::format("{}: {}: seed word 0x{:08x} is not the identity of {}", kRule,
                                    role_tensor(Role::kTap, tap.buffer), role.seed_word,
                                    to_string(tap.mode)));
      }
      const bool m = role.shape[1].source == Extent::kOne;
      const bool n = role.shape[2].source == Extent::kOne;
      const TapShape shape = m && n ? TapShape::kTile
                             : m    ? TapShape::kCols
                             : n    ? TapShape::kRows
                                    : TapShape::kElement;
      taps_.push_back({tap_param_[i], shape});
    }
    return Status::ok();
  }

  Status check_quantized() {
    for (const auto& q : p_.quantized_outputs) {
      if (!value_ok(q.value)) {
        return internal(fmt::format("{}: {} quantizes value {}", kRule,
                                    role_tensor(Role::kOutput, q.buffer), q.value));
      }
      const DataType y = type_of(q.buffer);
      const DataType s = type_of(q.scale_buffer);
      if (!quantized_value_type(y)) {
        return unavailable(
            fmt::format("{}: {}: quantized values of data type {}; legal: fp8 or fp4", kRule,
                        role_tensor(Role::kOutput, q.buffer), to_string(y)));
      }
      if (!quantized_scale_type(s)) {
        return unavailable(fmt::format(
            "{}: {}: block scales of data type {}; legal: fp32, fp16, bf16, fp8 or e8m0", kRule,
            role_tensor(Role::kScale, q.scale_buffer), to_string(s)));
      }
      if (q.block_rows != 1 || q.block_cols <= 0 || q.block_cols % 8 != 0 ||
          q.major != fusion::Major::kN) {
        return unavailable(fmt::format(
            "{}: {}: blocks of {}x{}, {}; legal: 1 x (a multiple of 8) blocks along N, N-major",
            kRule, role_tensor(Role::kOutput, q.buffer), q.block_rows, q.block_cols,
            to_string(q.major)));
      }
      if (r_.config.tile_n % q.block_cols != 0) {
        return unavailable(fmt::format(
            "{}: {}: blocks of 1x{} with a tile {} columns wide; legal: the tile width a "
            "multiple of the block width (a block's amax is taken inside one tile)",
            kRule, role_tensor(Role::kOutput, q.buffer), q.block_cols, r_.config.tile_n));
      }
    }
    return Status::ok();
  }

  // --- writing --------------------------------------------------------------------------

  bool has_shape(TapShape shape) const {
    return std::any_of(taps_.begin(), taps_.end(),
                       [&](const TapPlan& t) { return t.shape == shape; });
  }

  bool has_norm2() const {
    return std::any_of(p_.taps.begin(), p_.taps.end(),
                       [](const fusion::Tap& t) { return t.mode == ReductionMode::kNorm2; });
  }

  // Scratch the CTA-level steps need, one at a time (each ends with a barrier): column
  // taps park 4 warps x TileN partials, tile taps 4, the last-tile verdict one word.
  int scratch_bytes() const {
    int bytes = 0;
    if (has_shape(TapShape::kCols)) {
      bytes = std::max(bytes, kConsumerWarps * r_.config.tile_n * kFloatBytes);
    }
    if (has_shape(TapShape::kTile)) bytes = std::max(bytes, kConsumerWarps * kFloatBytes);
    if (has_norm2()) bytes = std::max(bytes, kFloatBytes);
    return bytes;
  }

  std::string value(int index) const { return emit_identifier("v", index); }
  std::string name(int index) const { return emit_quoted(p_.epilogue[index].name); }
  std::string param(int index) const { return fmt::format("args.buffers[{}]", index); }
  std::string elem(DataType type) const { return std::string(*device_elem(type)); }

  void write_file() {
    const std::size_t taps = p_.taps.size();
    w_.comment("Generated by fusedgemm codegen (src/codegen/epilogue.cpp); do not edit.");
    w_.comment(
        fmt::format("Epilogue of graph '{}': {} matmul(s), {} epilogue values, {} dense "
                    "output(s), {} tap(s), {} quantized output(s).",
                    p_.graph_name, p_.gemms.size(), p_.epilogue.size(), p_.outputs.size(), taps,
                    p_.quantized_outputs.size()));
    w_.blank();
    w_.directive("#include \"kernels/element_io.cuh\"");
    w_.directive("#include \"kernels/epilogue_contract.cuh\"");
    w_.directive("#include \"kernels/fragment_slots.cuh\"");
    w_.directive("#include \"kernels/pointwise.cuh\"");
    if (!p_.quantized_outputs.empty()) w_.directive("#include \"kernels/block_quantize.cuh\"");
    if (taps > 0) w_.directive("#include \"kernels/tap_commit.cuh\"");
    w_.blank();
    w_.comment("Shared memory (bytes) the mainloop passes as smem_scratch, 16-byte aligned.");
    if (has_shape(TapShape::kCols)) {
      w_.comment(fmt::format("Column taps need 4 warps x TileN floats; sized for TileN <= {}.",
                             r_.config.tile_n));
    }
    w_.line(fmt::format("constexpr int kEpilogueScratchBytes = {};", scratch_bytes()));
    w_.blank();
    w_.line("template <int TileM, int TileN>");
    w_.line("__device__ __forceinline__ void fusedgemm_epilogue(");
    w_.line(
        "    const fusedgemm::kernels::KernelArgs& args, const fusedgemm::kernels::TileCoord& "
        "tile,");
    w_.line(fmt::format("    float (&acc)[{}][fusedgemm::kernels::Fragment<TileM, TileN>::kCount],",
                        p_.gemms.size()));
    w_.open("    float* smem_scratch)");
    write_prologue();
    write_element_loop();
    write_quantized();
    write_tap_commits();
    w_.close();
  }

  void write_prologue() {
    w_.line("namespace fk = fusedgemm::kernels;");
    w_.line("using Frag = fk::Fragment<TileM, TileN>;");
    if (!p_.taps.empty()) w_.line("using Slots = fk::FragmentSlots<TileM, TileN>;");
    if (has_shape(TapShape::kCols)) {
      w_.line(fmt::format(
          "static_assert(TileN <= {}, \"fusedgemm_epilogue: kEpilogueScratchBytes holds column "
          "taps of tiles up to {} wide; regenerate for the wider tile\");",
          r_.config.tile_n, r_.config.tile_n));
    }
    if (scratch_bytes() == 0) w_.line("(void)smem_scratch;");
    w_.line("const int thread = static_cast<int>(threadIdx.x % 128);  // in the warpgroup");
    for (std::size_t t = 0; t < p_.taps.size(); ++t) write_tap_partial(static_cast<int>(t));
    for (std::size_t q = 0; q < p_.quantized_outputs.size(); ++q) {
      const auto& qo = p_.quantized_outputs[q];
      w_.comment(
          fmt::format("quantized output {}: its input {}, held until its blocks' scales "
                      "are known",
                      emit_quoted(p_.buffers[qo.buffer].name), name(qo.value)));
      w_.line(fmt::format("float quant{}[Frag::kCount];", q));
    }
    w_.blank();
  }

  void write_tap_partial(int t) {
    const auto& tap = p_.taps[t];
    const TapPlan& plan = taps_[t];
    const std::string identity = emit_f32(tap_identity(tap.mode));
    w_.comment(fmt::format("tap {} (kernel parameter {}): {} of {} over {}",
                           emit_quoted(p_.buffers[tap.buffer].name), plan.param,
                           to_string(tap.mode), name(tap.value), reduced_axes(plan.shape)));
    if (tap.mode == ReductionMode::kAvg) {
      w_.line(fmt::format("const float tap{}_inv_count = fk::tap_inv_count(args, {});", t,
                          param(plan.param)));
    }
    switch (plan.shape) {
      case TapShape::kElement: break;
      case TapShape::kRows:
        w_.line(fmt::format("float tap{}[Slots::kRows];", t));
        w_.line(fmt::format("fk::tap_fill(tap{}, {});", t, identity));
        break;
      case TapShape::kCols:
        w_.line(fmt::format("float tap{}[Slots::kCols];", t));
        w_.line(fmt::format("fk::tap_fill(tap{}, {});", t, identity));
        break;
      case TapShape::kTile: w_.line(fmt::format("float tap{} = {};", t, identity)); break;
    }
  }

  // Aux, dense outputs and taps address (batch, m, n) and skip points outside the problem.
  bool needs_position() const { return !p_.aux.empty() || !p_.outputs.empty() || !p_.taps.empty(); }

  void write_element_loop() {
    w_.line("#pragma unroll");
    w_.open("for (int i = 0; i < Frag::kCount; ++i)");
    if (needs_position()) {
      w_.line("const long long m = tile.m0 + Frag::row(i, thread);");
      w_.line("const long long n = tile.n0 + Frag::col(i, thread);");
      w_.line("const bool inside = m < args.m && n < args.n;");
    }
    for (std::size_t i = 0; i < p_.epilogue.size(); ++i) write_node(static_cast<int>(i));
    for (std::size_t o = 0; o < p_.outputs.size(); ++o) write_output(static_cast<int>(o));
    for (std::size_t t = 0; t < p_.taps.size(); ++t) write_tap_fold(static_cast<int>(t));
    for (std::size_t q = 0; q < p_.quantized_outputs.size(); ++q) {
      w_.line(fmt::format("quant{}[i] = {};", q, value(p_.quantized_outputs[q].value)));
    }
    w_.close();
  }

  // One statement per node, under a comment with its name and formula.
  void write_node(int i) {
    const auto& node = p_.epilogue[i];
    std::string expr;
    std::string formula;
    switch (node.op) {
      case EpilogueOp::kAccumulator:
        expr = fmt::format("acc[{}][i]", node.gemm);
        formula = fmt::format("accumulator of matmul {}", emit_quoted(p_.gemms[node.gemm].name));
        break;
      case EpilogueOp::kAuxLoad: {
        const auto& aux = p_.aux[node.aux];
        const bool rows =
            aux.broadcast == fusion::Broadcast::kRow || aux.broadcast == fusion::Broadcast::kFull;
        const bool cols = aux.broadcast == fusion::Broadcast::kColumn ||
                          aux.broadcast == fusion::Broadcast::kFull;
        const int p = aux_param_[node.aux];
        // A broadcast axis is read at index 0 (its stride is 0 as well); the batch index
        // always goes through the stride, which is 0 for a batch-1 aux.
        expr = fmt::format("inside ? fk::load_at<{}>({}, tile.batch, {}, {}) : {}",
                           elem(type_of(aux.buffer)), param(p), rows ? "m" : "0", cols ? "n" : "0",
                           emit_f32(0.0f));
        formula = fmt::format("load aux {} (kernel parameter {}, {}, {})",
                              emit_quoted(p_.buffers[aux.buffer].name), p,
                              to_string(type_of(aux.buffer)), to_string(aux.broadcast));
        break;
      }
      case EpilogueOp::kPointwise: {
        std::vector<std::string> ins;
        std::vector<std::string> names;
        for (const int in : node.inputs) {
          ins.push_back(value(in));
          names.push_back(name(in));
        }
        PointwiseText text = pointwise_text(node.pointwise, ins, names);
        expr = std::move(text.expr);
        formula = std::move(text.formula);
        break;
      }
    }
    if (node.round_to != DataType::kFloat32) {
      expr = fmt::format("fk::round_to<{}>({})", elem(node.round_to), expr);
      formula += fmt::format(", rounded to {}", to_string(node.round_to));
    }
    w_.comment(fmt::format("{} = {}", name(i), formula));
    w_.line(fmt::format("const float {} = {};", value(i), expr));
  }

  void write_output(int o) {
    const auto& out = p_.outputs[o];
    const int p = output_param_[o];
    w_.comment(fmt::format("output {} (kernel parameter {}, {}) = {}",
                           emit_quoted(p_.buffers[out.buffer].name), p,
                           to_string(type_of(out.buffer)), name(out.value)));
    w_.line(fmt::format("if (inside) fk::store_at<{}>({}, tile.batch, m, n, {});",
                        elem(type_of(out.buffer)), param(p), value(out.value)));
  }

  void write_tap_fold(int t) {
    const auto& tap = p_.taps[t];
    const TapPlan& plan = taps_[t];
    const std::string combine(tap_combine(tap.mode));
    const std::string inv = fmt::format("tap{}_inv_count", t);
    const std::string point = tap_contribution(tap.mode, value(tap.value), inv);
    const std::string guarded =
        fmt::format("inside ? {} : {}", point, emit_f32(tap_identity(tap.mode)));
    w_.comment(fmt::format("tap {}: {} of {}", emit_quoted(p_.buffers[tap.buffer].name),
                           to_string(tap.mode), name(tap.value)));
    switch (plan.shape) {
      case TapShape::kElement:
        w_.line(
            fmt::format("if (inside) fk::tap_atomic<{}>(fk::tap_word({}, tile.batch, m, n), {});",
                        combine, param(plan.param), point));
        break;
      case TapShape::kRows:
        w_.line(fmt::format(
            "tap{0}[Slots::row_slot(i)] = fk::tap_merge<{1}>(tap{0}[Slots::row_slot(i)], {2});", t,
            combine, guarded));
        break;
      case TapShape::kCols:
        w_.line(fmt::format(
            "tap{0}[Slots::col_slot(i)] = fk::tap_merge<{1}>(tap{0}[Slots::col_slot(i)], {2});", t,
            combine, guarded));
        break;
      case TapShape::kTile:
        w_.line(fmt::format("tap{0} = fk::tap_merge<{1}>(tap{0}, {2});", t, combine, guarded));
        break;
    }
  }

  void write_quantized() {
    for (std::size_t q = 0; q < p_.quantized_outputs.size(); ++q) {
      const auto& qo = p_.quantized_outputs[q];
      w_.blank();
      w_.comment(fmt::format(
          "quantized output {} (kernel parameter {}, {}) with scales {} (kernel parameter {}, "
          "{}) per 1x{} block",
          emit_quoted(p_.buffers[qo.buffer].name), quant_param_[q], to_string(type_of(qo.buffer)),
          emit_quoted(p_.buffers[qo.scale_buffer].name), quant_scale_param_[q],
          to_string(type_of(qo.scale_buffer)), qo.block_cols));
      w_.line(fmt::format(
          "fk::block_quantize<{}, {}, {}, TileM, TileN>(args, {}, {}, tile, quant{}, thread);",
          elem(type_of(qo.buffer)), elem(type_of(qo.scale_buffer)), qo.block_cols,
          param(quant_param_[q]), param(quant_scale_param_[q]), q));
    }
  }

  void write_tap_commits() {
    for (std::size_t t = 0; t < p_.taps.size(); ++t) {
      const auto& tap = p_.taps[t];
      const TapPlan& plan = taps_[t];
      if (plan.shape == TapShape::kElement) continue;  // committed point by point
      const std::string combine(tap_combine(tap.mode));
      w_.blank();
      switch (plan.shape) {
        case TapShape::kElement: break;
        case TapShape::kRows:
          w_.comment(fmt::format("tap {}: the 4 lanes of each row, one atomic per row",
                                 emit_quoted(p_.buffers[tap.buffer].name)));
          w_.line(
              fmt::format("fk::tap_commit_rows<{}, TileM, TileN>(args, {}, tile, tap{}, thread);",
                          combine, param(plan.param), t));
          break;
        case TapShape::kCols:
          w_.comment(fmt::format(
              "tap {}: the 8 lanes of each column, then the 4 warps, one atomic per column",
              emit_quoted(p_.buffers[tap.buffer].name)));
          w_.line(fmt::format(
              "fk::tap_commit_cols<{}, TileM, TileN>(args, {}, tile, tap{}, smem_scratch, "
              "thread);",
              combine, param(plan.param), t));
          break;
        case TapShape::kTile:
          w_.comment(fmt::format("tap {}: the warp, then the 4 warps, one atomic per tile",
                                 emit_quoted(p_.buffers[tap.buffer].name)));
          w_.line(fmt::format("fk::tap_commit_tile<{}>({}, tile, tap{}, smem_scratch, thread);",
                              combine, param(plan.param), t));
          break;
      }
    }
    if (!has_norm2()) return;
    w_.blank();
    w_.comment("norm2 taps hold sums of squares until every tile has committed; the last tile");
    w_.comment("to finish takes the square roots.");
    w_.open("if (fk::last_tile_to_finish<TileM, TileN>(args, smem_scratch, thread))");
    for (std::size_t t = 0; t < p_.taps.size(); ++t) {
      if (p_.taps[t].mode != ReductionMode::kNorm2) continue;
      w_.comment(fmt::format("tap {}", emit_quoted(p_.buffers[p_.taps[t].buffer].name)));
      w_.line(fmt::format("fk::tap_sqrt({}, thread);", param(taps_[t].param)));
    }
    w_.close();
  }

  const FusionProgram& p_;
  const Recipe& r_;
  std::vector<int> aux_param_, output_param_, tap_param_, quant_param_, quant_scale_param_;
  std::vector<TapPlan> taps_;
  SourceWriter w_;
};

}  // namespace

Result<std::string> generate_epilogue(const fusion::FusionProgram& program,
                                      const recipe::Recipe& recipe) {
  return EpilogueGenerator(program, recipe).run();
}

Result<std::uint32_t> epilogue_scratch_bytes(const fusion::FusionProgram& program,
                                             const recipe::Recipe& recipe) {
  return EpilogueGenerator(program, recipe).scratch();
}

}  // namespace fusedgemm::codegen
