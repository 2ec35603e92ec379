// SHA-256 and the part-separated Digest behind the kernel cache key (STYLE.md rule 11).
#include "jit/digest.h"

#include <gtest/gtest.h>

namespace fusedgemm::jit {
namespace {

std::string hex_of(Digest& digest) {
  return digest.finish_hex().value();
}

TEST(JitDigest, Sha256MatchesKnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(sha256_hex("").value(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc").value(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(JitDigest, PartBoundariesChangeTheDigest) {
  Digest ab_c;
  ab_c.add("ab").add("c");
  Digest a_bc;
  a_bc.add("a").add("bc");
  Digest ab_c_again;
  ab_c_again.add("ab").add("c");
  const std::string first = hex_of(ab_c);
  EXPECT_NE(first, hex_of(a_bc));
  EXPECT_EQ(first, hex_of(ab_c_again));
  EXPECT_EQ(first.size(), kSha256HexChars);
  // A length-prefixed part is not the plain digest of its bytes.
  Digest abc;
  abc.add("abc");
  EXPECT_NE(hex_of(abc), sha256_hex("abc").value());
}

TEST(JitDigest, EmptyPartsAndIntegersCount) {
  Digest one_empty;
  one_empty.add("");
  Digest none;
  EXPECT_NE(hex_of(one_empty), hex_of(none));
  Digest seven;
  seven.add_int(7);
  Digest eight;
  eight.add_int(8);
  EXPECT_NE(hex_of(seven), hex_of(eight));
}

TEST(JitDigest, SecondFinishIsAnError) {
  Digest digest;
  digest.add("x");
  ASSERT_TRUE(digest.finish().is_ok());
  const Result<Sha256> again = digest.finish();
  ASSERT_FALSE(again.is_ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kInternal);
}

TEST(JitDigest, HexIsLowercase) {
  const std::uint8_t bytes[] = {0x00, 0xab, 0x7f, 0xff};
  EXPECT_EQ(to_hex(bytes), "00ab7fff");
}

}  // namespace
}  // namespace fusedgemm::jit
