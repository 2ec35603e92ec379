// The JIT side of fusedgemm::Context (include/fusedgemm/context.h): what compile() returns.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "fusedgemm/context.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit {

enum class CacheOutcome {
  kCompiled,   // NVRTC ran
  kDiskHit,    // a verified entry of the disk cache
  kMemoryHit,  // the Context's map, or a compile of the same key in flight on another thread
};

std::string_view to_string(CacheOutcome outcome);

struct CompileResult {
  // Shared with the Context's map: a hit costs no copy of the cubin, and the kernel stays
  // valid after the Context is gone.
  std::shared_ptr<const CompiledKernel> kernel;
  CacheOutcome outcome = CacheOutcome::kCompiled;
  std::string key;  // jit::cache_key, 64 hex digits
  // Non-empty when a compiled kernel could not be written to disk (read-only or full cache
  // directory, no directory found) or a dump failed: says why. Never fails the compile.
  std::string warning;
  double seconds = 0;  // wall time of this compile() call
};

}  // namespace fusedgemm::jit
