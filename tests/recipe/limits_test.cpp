// The derived limits (DESIGN.md section 6): one function gives the 16-byte TMA modulus for
// both the support gate and the per-call rules.
#include "recipe/limits.h"

#include <gtest/gtest.h>

#include <vector>

namespace fusedgemm::recipe {
namespace {

struct ModulusCase {
  DataType type;
  std::int64_t modulus;
};

TEST(Limits, ContiguousExtentModulusIsSixteenBytesOfElements) {
  const std::vector<ModulusCase> cases = {
      {DataType::kBFloat16, 8}, {DataType::kFloat16, 8},  {DataType::kFp8E4M3, 16},
      {DataType::kFp8E5M2, 16}, {DataType::kFp4E2M1, 32}, {DataType::kFloat32, 4},
      {DataType::kInt8, 16},    {DataType::kInt32, 4},    {DataType::kE8M0, 16},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(contiguous_extent_modulus(c.type), c.modulus) << to_string(c.type);
    // The modulus is exactly one TMA granule of the type.
    EXPECT_EQ(bytes_of(c.type, c.modulus), kTmaGranuleBytes) << to_string(c.type);
  }
}

struct BytesCase {
  DataType type;
  std::int64_t elements;
  std::int64_t bytes;
};

TEST(Limits, BytesOfRoundsPackedTypesUp) {
  const std::vector<BytesCase> cases = {
      {DataType::kFp4E2M1, 0, 0},  {DataType::kFp4E2M1, 1, 1},   {DataType::kFp4E2M1, 2, 1},
      {DataType::kFp4E2M1, 3, 2},  {DataType::kFp4E2M1, 63, 32}, {DataType::kFp4E2M1, 64, 32},
      {DataType::kFp8E4M3, 3, 3},  {DataType::kBFloat16, 3, 6},  {DataType::kFloat16, 8, 16},
      {DataType::kFloat32, 5, 20}, {DataType::kInt32, 2, 8},     {DataType::kInt8, 7, 7},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(bytes_of(c.type, c.elements), c.bytes)
        << c.elements << " elements of " << to_string(c.type);
  }
}

}  // namespace
}  // namespace fusedgemm::recipe
