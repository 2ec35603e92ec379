// The device's software codecs for fp4 e2m1 and e8m0 (kernels/soft_float.cuh) against
// numeric.cpp, the host definition both the host device and the oracle use.
#include "kernels/soft_float.cuh"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/numeric.h"

namespace {

using fusedgemm::DataType;
namespace fk = fusedgemm::kernels;

// Every 65537th fp32 bit pattern (both signs, every exponent, scattered mantissas) plus
// the codecs' decision points and their neighbours.
std::vector<float> sweep() {
  std::vector<float> values;
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 65537) {
    values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  }
  const float points[] = {0.0f,
                          0.25f,
                          0.75f,
                          1.25f,
                          1.75f,
                          2.5f,
                          3.5f,
                          5.0f,
                          6.0f,
                          7.0f,
                          1.5f,
                          3.0f,
                          0x1p-127f,
                          0x1.8p-127f,
                          0x1p-126f,
                          0x1.8p+127f,
                          0x1.fffffep+127f,
                          0x1p-149f};
  for (const float p : points) {
    for (const float s : {p, -p}) {
      values.push_back(s);
      values.push_back(std::nextafter(s, 1e30f));
      values.push_back(std::nextafter(s, -1e30f));
    }
  }
  values.push_back(std::numeric_limits<float>::infinity());
  values.push_back(-std::numeric_limits<float>::infinity());
  values.push_back(std::numeric_limits<float>::quiet_NaN());
  return values;
}

TEST(SoftFloat, E2M1EncodeMatchesNumeric) {
  for (const float v : sweep()) {
    ASSERT_EQ(fk::encode_e2m1(v), fusedgemm::numeric::encode(DataType::kFp4E2M1, v))
        << "v = " << v << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  }
}

TEST(SoftFloat, E8M0EncodeMatchesNumeric) {
  for (const float v : sweep()) {
    ASSERT_EQ(fk::encode_e8m0(v), fusedgemm::numeric::encode(DataType::kE8M0, v))
        << "v = " << v << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  }
}

TEST(SoftFloat, DecodeMatchesNumericForEveryCode) {
  for (unsigned code = 0; code < 16; ++code) {
    const float want = fusedgemm::numeric::decode(DataType::kFp4E2M1, code);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(fk::decode_e2m1(code)),
              std::bit_cast<std::uint32_t>(want))
        << "e2m1 code " << code;
  }
  for (unsigned code = 0; code < 256; ++code) {
    const float want = fusedgemm::numeric::decode(DataType::kE8M0, code);
    const float got = fk::decode_e8m0(code);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "e8m0 code " << code;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
          << "e8m0 code " << code;
    }
  }
}

}  // namespace
