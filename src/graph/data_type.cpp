#include "fusedgemm/data_type.h"

#include <array>
#include <utility>

namespace fusedgemm {
namespace {

constexpr std::array<std::pair<DataType, std::string_view>, 10> kNames = {{
    {DataType::kNotSet, "not_set"},
    {DataType::kFloat32, "fp32"},
    {DataType::kFloat16, "fp16"},
    {DataType::kBFloat16, "bf16"},
    {DataType::kFp8E4M3, "fp8_e4m3"},
    {DataType::kFp8E5M2, "fp8_e5m2"},
    {DataType::kFp4E2M1, "fp4_e2m1"},
    {DataType::kE8M0, "e8m0"},
    {DataType::kInt8, "int8"},
    {DataType::kInt32, "int32"},
}};

}  // namespace

std::string_view to_string(DataType type) {
  for (const auto& [t, name] : kNames) {
    if (t == type) return name;
  }
  return "unknown";
}

std::optional<DataType> data_type_from_string(std::string_view name) {
  for (const auto& [t, n] : kNames) {
    if (n == name && t != DataType::kNotSet) return t;
  }
  return std::nullopt;
}

int bits_of(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kInt32: return 32;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 16;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
    case DataType::kE8M0:
    case DataType::kInt8: return 8;
    case DataType::kFp4E2M1: return 4;
    case DataType::kNotSet: return 0;
  }
  return 0;
}

int packing_factor(DataType type) {
  return type == DataType::kFp4E2M1 ? 2 : 1;
}

bool is_float(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
    case DataType::kFp4E2M1: return true;
    default: return false;
  }
}

bool is_integer(DataType type) {
  return type == DataType::kInt8 || type == DataType::kInt32;
}

bool is_fp8(DataType type) {
  return type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2;
}

}  // namespace fusedgemm
