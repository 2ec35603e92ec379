// The on-disk format of one kernel cache entry (STYLE.md rule 11: entries are verified
// before loading). All integers little-endian.
//
//   offset  bytes  field
//        0      8  magic "FGKCUBIN"
//        8      4  format version (kEntryFormatVersion)
//       12      4  header bytes (kEntryHeaderBytes)
//       16     64  the cache key, lowercase hex
//       80      8  cubin bytes
//       88      8  log bytes
//       96      8  compile time in microseconds
//      104     32  SHA-256 over the cubin and the log (a Digest of the two parts)
//      136      -  the cubin, then the log
//
// The digest covers the log too: the ptxas report is re-read from it on load, so a flipped
// byte there would silently change the resources a tile choice is judged by.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit {

inline constexpr std::uint32_t kEntryFormatVersion = 1;
inline constexpr std::size_t kEntryHeaderBytes = 136;

// The bytes of an entry holding `kernel` under `key` (64 hex characters).
Result<std::string> encode_entry(std::string_view key, const CompiledKernel& kernel);

// The kernel of an entry, verified: magic, version, key, sizes, digest and the cubin's ELF
// magic. Any mismatch is kIo saying which check failed.
Result<CompiledKernel> decode_entry(std::string_view bytes, std::string_view expected_key);

}  // namespace fusedgemm::jit
