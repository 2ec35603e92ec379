// A Context owns what fusedgemm keeps between builds: the kernel cache (a map in memory in
// front of a directory on disk) and the debug settings, read once from the FUSEDGEMM_*
// environment variables when the Context is created (docs/ENVIRONMENT.md). There is no
// process-wide state: two Contexts share nothing but the files of a shared cache directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/status.h"

namespace fusedgemm {

namespace jit {
struct KernelSource;
struct CompileOptions;
struct CompileResult;
}  // namespace jit

// Each field, when set, overrides its environment variable (tests and embedders use these
// rather than setenv).
struct ContextOptions {
  bool read_environment = true;                    // false: every unset field takes its default
  std::optional<std::filesystem::path> cache_dir;  // FUSEDGEMM_CACHE_DIR
  std::optional<std::uint64_t> cache_max_bytes;    // FUSEDGEMM_CACHE_MAX_BYTES
  std::optional<bool> disable_cache;               // FUSEDGEMM_DISABLE_CACHE
  std::optional<std::filesystem::path> dump_dir;   // FUSEDGEMM_DUMP_DIR; empty: no dumps
  std::optional<bool> verbose;                     // FUSEDGEMM_VERBOSE
  std::optional<std::filesystem::path> cuda_home;  // CUDA_HOME
};

// The settings a Context runs with, fixed at creation.
struct ContextSettings {
  std::filesystem::path cache_dir;  // empty when no location could be found
  std::uint64_t cache_max_bytes = 0;
  bool cache_disabled = false;     // true: the disk is skipped; the memory map still serves
  std::filesystem::path dump_dir;  // empty: nothing is dumped except failed compiles
  // Where a failed compile dumps when dump_dir is empty: <temp>/fusedgemm-<effective uid>,
  // kept to this user alone (mode 0700). <temp> is TMPDIR when the environment is read and
  // it is an absolute path to a folder, else /tmp. Resolved here, at creation, so no
  // failing compile reads the environment (getenv) while other threads may call setenv.
  std::filesystem::path failure_dump_dir;
  bool verbose = false;                        // compile and cache events go to stderr
  std::vector<std::string> cuda_include_dirs;  // -I directories of the CUDA toolkit
};

// What a Context has done so far; for tests and diagnostics.
struct ContextCounters {
  std::int64_t compiles = 0;  // NVRTC invocations, failed ones included
  std::int64_t disk_hits = 0;
  std::int64_t memory_hits = 0;      // including calls that waited on an in-flight compile
  std::int64_t corrupt_entries = 0;  // disk entries that failed verification and were deleted
  std::int64_t cache_write_failures = 0;
};

class Context {
 public:
  // Reads the environment (unless options say not to) and the NVRTC version. Fails with
  // kInvalidArgument naming a malformed variable, or kUnavailable when NVRTC cannot load.
  static Result<std::shared_ptr<Context>> create(const ContextOptions& options = {});

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ContextSettings& settings() const;
  ContextCounters counters() const;

  // The compiled kernel of `source`: from memory, from disk, or from NVRTC (in that order)
  // under the key of jit::cache_key. Thread-safe; concurrent calls for one key compile it
  // once. Declared here, defined with its types in src/jit/context.h.
  Result<jit::CompileResult> compile(const jit::KernelSource& source,
                                     const jit::CompileOptions& options);

 private:
  struct Impl;
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusedgemm
