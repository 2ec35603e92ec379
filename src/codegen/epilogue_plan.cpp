#include "codegen/epilogue_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/device_terms.h"
#include "recipe/kernel_config.h"
#include "recipe/limits.h"

namespace fusedgemm::codegen {
namespace {

using fusion::EpilogueOp;
using fusion::FusionProgram;
using recipe::Extent;
using recipe::ParamKind;
using recipe::Recipe;

constexpr std::string_view kRule = "epilogue_codegen";
constexpr int kConsumerWarps = 4;  // one consumer warpgroup runs a unit (epilogue_contract.cuh)
constexpr int kMaxTileN = 256;     // wgmma N
constexpr int kFloatBytes = 4;
constexpr int kStagedAlignBytes = 16;  // a staged column vector's start in the scratch

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

class Planner {
 public:
  Planner(const FusionProgram& program, const Recipe& recipe) : p_(program), r_(recipe) {}

  Result<EpiloguePlan> run() {
    FG_TRY(check());
    for (const auto& t : plan_.taps) plan_.column_taps |= t.shape == TapShape::kCols;
    int bytes = 0;
    if (!plan_.taps.empty()) {
      // The staging area (column taps' 4 warps x TileN, else the 4 warp partials of a tile
      // reduction and the arrival verdict), then each tap's staged CTA partial.
      int floats = plan_.column_taps ? kConsumerWarps * r_.config.unit_n() : kConsumerWarps;
      for (const auto& t : plan_.taps) floats += staged_floats(t.shape, r_.config);
      bytes = floats * kFloatBytes;
    }
    plan_.scratch_bytes = static_cast<std::uint32_t>(stage_columns(bytes));
    return std::move(plan_);
  }

 private:
  // Places each column vector after `bytes` of scratch where the kernel still fits in shared
  // memory with it (recipe::choose_kernel_config sizes the ring for the taps' scratch alone,
  // so a config with as many stages as fit may have no room: its vectors are read from global
  // memory, as before staging existed). Returns the scratch's new size.
  std::int64_t stage_columns(std::int64_t bytes) {
    plan_.aux_staged_offset.assign(p_.aux.size(), -1);
    for (std::size_t a = 0; a < p_.aux.size(); ++a) {
      if (p_.aux[a].broadcast != fusion::Broadcast::kColumn) continue;
      const std::int64_t offset =
          (bytes + kStagedAlignBytes - 1) / kStagedAlignBytes * kStagedAlignBytes;
      const std::int64_t end =
          offset + recipe::bytes_of(type_of(p_.aux[a].buffer), r_.config.unit_n());
      if (recipe::kernel_shared_bytes(p_, r_.config, end) > recipe::kMaxSharedBytes) continue;
      plan_.aux_staged_offset[a] = static_cast<int>(offset);
      bytes = end;
    }
    return bytes;
  }

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
    plan_.aux_param.assign(p_.aux.size(), -1);
    plan_.output_param.assign(p_.outputs.size(), -1);
    tap_param_.assign(p_.taps.size(), -1);
    plan_.quant_param.assign(p_.quantized_outputs.size(), -1);
    plan_.quant_scale_param.assign(p_.quantized_outputs.size(), -1);
    for (std::size_t i = 0; i < r_.roles.size(); ++i) {
      const auto& role = r_.roles[i];
      std::vector<int>* list = nullptr;
      switch (role.kind) {
        case ParamKind::kAux: list = &plan_.aux_param; break;
        case ParamKind::kOutput: list = &plan_.output_param; break;
        case ParamKind::kTap: list = &tap_param_; break;
        case ParamKind::kQuantized: list = &plan_.quant_param; break;
        case ParamKind::kQuantizedScale: list = &plan_.quant_scale_param; break;
        case ParamKind::kOperand:
        case ParamKind::kOperandScale:
        case ParamKind::kBuffer: continue;
      }
      if (role.index < 0 || role.index >= static_cast<int>(list->size())) {
        return internal(
            fmt::format("{}: recipe parameter {} ('{}') indexes entry {} of a list of "
                        "{}; legal: a recipe made from this fusion program",
                        kRule, i, role.name, role.index, list->size()));
      }
      (*list)[role.index] = static_cast<int>(i);
    }
    for (const auto* list : {&plan_.aux_param, &plan_.output_param, &tap_param_, &plan_.quant_param,
                             &plan_.quant_scale_param}) {
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
    if (c.unit_m() <= 0 || c.unit_m() % 64 != 0 || c.unit_n() <= 0 || c.unit_n() % 8 != 0 ||
        c.unit_n() > kMaxTileN) {
      return unavailable(fmt::format(
          "{}: graph '{}': epilogue unit {}x{}; legal: rows a multiple of 64, columns a "
          "multiple of 8 up to {} (the wgmma fragment layout)",
          kRule, p_.graph_name, c.unit_m(), c.unit_n(), kMaxTileN));
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
    plan_.taps.clear();
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
      const bool m = role.shape[1].source == Extent::kOne;
      const bool n = role.shape[2].source == Extent::kOne;
      const TapShape shape = m && n ? TapShape::kTile
                             : m    ? TapShape::kCols
                             : n    ? TapShape::kRows
                                    : TapShape::kElement;
      plan_.taps.push_back({tap_param_[i], shape});
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
      if (r_.config.unit_n() % q.block_cols != 0) {
        return unavailable(fmt::format(
            "{}: {}: blocks of 1x{} with an epilogue unit {} columns wide; legal: the unit "
            "width a multiple of the block width (a block's amax is taken inside one unit)",
            kRule, role_tensor(Role::kOutput, q.buffer), q.block_cols, r_.config.unit_n()));
      }
    }
    return Status::ok();
  }

  const FusionProgram& p_;
  const Recipe& r_;
  std::vector<int> tap_param_;
  EpiloguePlan plan_;
};

}  // namespace

int staged_floats(TapShape shape, const recipe::KernelConfig& config) {
  switch (shape) {
    case TapShape::kElement: return 0;
    case TapShape::kRows: return config.unit_m();
    case TapShape::kCols: return config.unit_n();
    case TapShape::kTile: return kConsumerWarps;  // one float, kept 16-byte aligned
  }
  return 0;
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

Result<EpiloguePlan> plan_epilogue(const fusion::FusionProgram& program,
                                   const recipe::Recipe& recipe) {
  return Planner(program, recipe).run();
}

}  // namespace fusedgemm::codegen
