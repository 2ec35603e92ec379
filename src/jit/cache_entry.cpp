#include "jit/cache_entry.h"

#include <cmath>
#include <cstring>

#include "jit/digest.h"

namespace fusedgemm::jit {
namespace {

constexpr char kMagic[8] = {'F', 'G', 'K', 'C', 'U', 'B', 'I', 'N'};
constexpr char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
constexpr std::size_t kKeyOffset = 16;
constexpr std::size_t kSizesOffset = kKeyOffset + kSha256HexChars;
constexpr std::size_t kDigestOffset = kSizesOffset + 3 * 8;
static_assert(kDigestOffset + kSha256Bytes == kEntryHeaderBytes,
              "cache_entry.h documents the header layout; update both together");

void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::uint64_t get_le(std::string_view bytes, std::size_t offset, int width) {
  std::uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

Result<Sha256> payload_digest(std::string_view cubin, std::string_view log) {
  Digest digest;
  digest.add(cubin).add(log);
  return digest.finish();
}

std::string_view as_chars(const std::vector<std::uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

Result<std::string> encode_entry(std::string_view key, const CompiledKernel& kernel) {
  FG_CHECK(key.size() == kSha256HexChars, ErrorCode::kInternal,
           "cache entry: key '" + std::string(key) + "' is not 64 hex digits");
  const std::string_view cubin = as_chars(kernel.cubin);
  FG_ASSIGN_OR_RETURN(const Sha256 digest, payload_digest(cubin, kernel.log));
  std::string out(kMagic, sizeof(kMagic));
  put_u32(out, kEntryFormatVersion);
  put_u32(out, kEntryHeaderBytes);
  out += key;
  put_u64(out, cubin.size());
  put_u64(out, kernel.log.size());
  put_u64(out, static_cast<std::uint64_t>(std::llround(kernel.compile_seconds * 1e6)));
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  out += cubin;
  out += kernel.log;
  return out;
}

Result<CompiledKernel> decode_entry(std::string_view bytes, std::string_view expected_key) {
  FG_CHECK(bytes.size() >= kEntryHeaderBytes, ErrorCode::kIo,
           "cache entry: " + std::to_string(bytes.size()) + " bytes, shorter than its " +
               std::to_string(kEntryHeaderBytes) + "-byte header");
  FG_CHECK(std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0, ErrorCode::kIo,
           "cache entry: bad magic");
  const std::uint64_t version = get_le(bytes, 8, 4);
  FG_CHECK(version == kEntryFormatVersion && get_le(bytes, 12, 4) == kEntryHeaderBytes,
           ErrorCode::kIo,
           "cache entry: format version " + std::to_string(version) +
               "; legal: " + std::to_string(kEntryFormatVersion));
  const std::string_view key = bytes.substr(kKeyOffset, kSha256HexChars);
  FG_CHECK(
      key == expected_key, ErrorCode::kIo,
      "cache entry: holds key " + std::string(key) + ", expected " + std::string(expected_key));
  const std::uint64_t cubin_bytes = get_le(bytes, kSizesOffset, 8);
  const std::uint64_t log_bytes = get_le(bytes, kSizesOffset + 8, 8);
  const std::uint64_t payload_bytes = bytes.size() - kEntryHeaderBytes;
  // Compared without adding the two, which an edited header could make overflow.
  FG_CHECK(cubin_bytes <= payload_bytes && log_bytes == payload_bytes - cubin_bytes, ErrorCode::kIo,
           "cache entry: header says " + std::to_string(cubin_bytes) + " cubin + " +
               std::to_string(log_bytes) + " log bytes, file holds " +
               std::to_string(payload_bytes) + " after the header");
  const std::string_view cubin = bytes.substr(kEntryHeaderBytes, cubin_bytes);
  const std::string_view log = bytes.substr(kEntryHeaderBytes + cubin_bytes);
  FG_ASSIGN_OR_RETURN(const Sha256 digest, payload_digest(cubin, log));
  FG_CHECK(std::memcmp(digest.data(), bytes.data() + kDigestOffset, digest.size()) == 0,
           ErrorCode::kIo, "cache entry: SHA-256 of the cubin and log does not match the header");
  FG_CHECK(cubin.size() >= sizeof(kElfMagic) &&
               std::memcmp(cubin.data(), kElfMagic, sizeof(kElfMagic)) == 0,
           ErrorCode::kIo, "cache entry: the cubin is not an ELF image");

  CompiledKernel kernel;
  kernel.cubin.assign(cubin.begin(), cubin.end());
  kernel.log = std::string(log);
  kernel.resources = parse_ptxas_report(kernel.log);
  kernel.compile_seconds = static_cast<double>(get_le(bytes, kSizesOffset + 16, 8)) * 1e-6;
  return kernel;
}

}  // namespace fusedgemm::jit
