// Element types a tensor can be stored in, and the facts about them every layer needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fusedgemm {

enum class DataType : std::uint8_t {
  kNotSet,
  kFloat32,
  kFloat16,
  kBFloat16,
  kFp8E4M3,
  kFp8E5M2,
  kFp4E2M1,  // two values packed into one byte
  kE8M0,     // power-of-two scale factor
  kInt8,
  kInt32,
};

// Spelling used in messages and JSON: "fp32", "bf16", "fp8_e4m3", ...
std::string_view to_string(DataType type);
std::optional<DataType> data_type_from_string(std::string_view name);

// Storage bits of one element (4 for fp4: two share a byte).
int bits_of(DataType type);
// Elements per addressable byte-sized unit along the contiguous axis: 2 for fp4, else 1.
int packing_factor(DataType type);

bool is_float(DataType type);    // fp32, fp16, bf16, fp8, fp4
bool is_integer(DataType type);  // int8, int32
bool is_fp8(DataType type);

}  // namespace fusedgemm
