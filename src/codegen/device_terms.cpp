#include "codegen/device_terms.h"

#include <limits>

#include <fmt/format.h>

namespace fusedgemm::codegen {

std::optional<std::string_view> device_elem(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "fk::Elem::kF32";
    case DataType::kFloat16: return "fk::Elem::kF16";
    case DataType::kBFloat16: return "fk::Elem::kBF16";
    case DataType::kFp8E4M3: return "fk::Elem::kE4M3";
    case DataType::kFp8E5M2: return "fk::Elem::kE5M2";
    case DataType::kFp4E2M1: return "fk::Elem::kE2M1";
    case DataType::kE8M0: return "fk::Elem::kE8M0";
    case DataType::kInt8: return "fk::Elem::kS8";
    case DataType::kInt32: return "fk::Elem::kS32";
    case DataType::kNotSet: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view aux_cover(fusion::Broadcast broadcast) {
  switch (broadcast) {
    case fusion::Broadcast::kScalar: return "fk::AuxCover::kScalar";
    case fusion::Broadcast::kRow: return "fk::AuxCover::kRow";
    case fusion::Broadcast::kColumn: return "fk::AuxCover::kColumn";
    case fusion::Broadcast::kFull: return "fk::AuxCover::kFull";
  }
  return "fk::AuxCover::kFull";
}

std::string_view tap_combine(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kAdd:
    case ReductionMode::kAvg:
    case ReductionMode::kNorm1:
    case ReductionMode::kNorm2: return "fk::TapCombine::kSum";
    case ReductionMode::kMax:
    case ReductionMode::kAmax: return "fk::TapCombine::kMax";
    case ReductionMode::kMin: return "fk::TapCombine::kMin";
    case ReductionMode::kMul: return "fk::TapCombine::kProduct";
  }
  return "fk::TapCombine::kSum";
}

float tap_identity(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kMax: return -std::numeric_limits<float>::infinity();
    case ReductionMode::kMin: return std::numeric_limits<float>::infinity();
    case ReductionMode::kMul: return 1.0f;
    case ReductionMode::kAdd:
    case ReductionMode::kAmax:
    case ReductionMode::kAvg:
    case ReductionMode::kNorm1:
    case ReductionMode::kNorm2: return 0.0f;
  }
  return 0.0f;
}

std::string tap_contribution(ReductionMode mode, std::string_view value,
                             std::string_view inv_count) {
  switch (mode) {
    case ReductionMode::kAvg: return fmt::format("__fmul_rn({}, {})", value, inv_count);
    case ReductionMode::kAmax:
    case ReductionMode::kNorm1: return fmt::format("fabsf({})", value);
    case ReductionMode::kNorm2: return fmt::format("__fmul_rn({0}, {0})", value);
    case ReductionMode::kAdd:
    case ReductionMode::kMax:
    case ReductionMode::kMin:
    case ReductionMode::kMul: return std::string(value);
  }
  return std::string(value);
}

}  // namespace fusedgemm::codegen
