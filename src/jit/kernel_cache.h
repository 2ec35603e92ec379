// The on-disk kernel cache (STYLE.md rule 11). An entry lives at
// <dir>/<first 2 hex of key>/<key>.cubin in the format of cache_entry.h. Writers go through
// <dir>/tmp/ and rename into place, so readers in other processes never see half an entry;
// two processes writing one key both succeed and either file wins. The class holds no
// mutable state, so one object may serve several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"
#include "jit/compile_types.h"
#include "jit/nvrtc_compiler.h"

namespace fusedgemm::jit {

inline constexpr std::uint64_t kDefaultCacheMaxBytes = std::uint64_t{2} << 30;  // 2 GiB

// SHA-256 (hex) of everything that decides the cubin: the entry format version, the
// program name, the code, every header (name and contents, in name order), the NVRTC
// version, the arch and every compile flag. Never a path (include directories and the
// cache and dump directories stay out of it) and never the driver: NVRTC's cubin does not
// depend on it, so a cache warmed on a machine without a GPU is hit on one with a GPU.
Result<std::string> cache_key(const KernelSource& source, const CompileOptions& options,
                              NvrtcVersion nvrtc);

enum class CacheLoadOutcome {
  kHit,
  kMiss,     // no entry
  kCorrupt,  // an entry failed verification (or was no regular file) and was deleted
};

struct CacheLoad {
  CacheLoadOutcome outcome = CacheLoadOutcome::kMiss;
  CompiledKernel kernel;  // set on kHit
  std::string detail;     // on kCorrupt: which check failed, and whether it was deleted
};

class KernelCache {
 public:
  KernelCache(std::filesystem::path dir, std::uint64_t max_bytes);

  const std::filesystem::path& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  std::filesystem::path entry_path(std::string_view key) const;

  // Reads and verifies the entry of `key`. A hit refreshes the entry's mtime, so eviction
  // removes the least recently used entries first.
  CacheLoad load(std::string_view key) const;

  // Writes the entry of `key` (temp file, fsync, rename), then bounds the cache's size.
  // A failure is kIo saying why; the caller still has its kernel.
  Status store(std::string_view key, const CompiledKernel& kernel) const;

  // When the entries total more than max_bytes, deletes the oldest (by mtime) until they
  // total at most 90% of it; the entry at `keep` is never deleted. Also removes temp files
  // a killed writer left behind. Only files named as entries and temp files are touched:
  // anything else in the folder is left alone.
  void enforce_size_limit(const std::filesystem::path& keep) const;

  // Bytes of all entries now in the cache.
  std::uint64_t total_bytes() const;

 private:
  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
};

}  // namespace fusedgemm::jit
