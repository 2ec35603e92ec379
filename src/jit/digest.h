// SHA-256 digests for the kernel cache key and for verifying cache entries (STYLE.md rule
// 11: a cryptographic digest, never std::hash, whose value changes across processes and
// standard libraries).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"

namespace fusedgemm::jit {

inline constexpr std::size_t kSha256Bytes = 32;
inline constexpr std::size_t kSha256HexChars = 2 * kSha256Bytes;

using Sha256 = std::array<std::uint8_t, kSha256Bytes>;

// Lowercase hex of `bytes`.
std::string to_hex(std::span<const std::uint8_t> bytes);

// SHA-256 of one byte string, as 64 lowercase hex characters (no length prefix: this is
// the plain digest `sha256sum` prints).
Result<std::string> sha256_hex(std::string_view bytes);

// A streaming SHA-256 over several parts. Each part is fed as its 8-byte little-endian
// length followed by its bytes, so the boundaries are part of the digest: "ab" + "c" and
// "a" + "bc" differ. An OpenSSL failure is remembered and reported by finish().
class Digest {
 public:
  Digest();
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  Digest& add(std::string_view part);
  Digest& add(std::span<const std::uint8_t> part);
  // An integer is fed as one 8-byte little-endian part.
  Digest& add_int(std::int64_t value);

  // Ends the digest; further add() calls are ignored and a second finish() fails.
  Result<Sha256> finish();
  Result<std::string> finish_hex();

 private:
  void feed(const void* data, std::size_t size);

  struct EvpContext;
  std::unique_ptr<EvpContext> evp_;
  Status status_;
  bool finished_ = false;
};

}  // namespace fusedgemm::jit
