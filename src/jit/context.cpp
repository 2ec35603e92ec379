#include "jit/context.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "jit/dump.h"
#include "jit/kernel_cache.h"
#include "jit/nvrtc_compiler.h"
#include "jit/settings.h"
#include "jit/slot_promise.h"

namespace fusedgemm {

using jit::CacheOutcome;
using jit::CompiledKernel;
using jit::CompileResult;
using jit::SharedKernel;

struct Context::Impl {
  ContextSettings settings;
  jit::NvrtcVersion nvrtc;
  std::optional<jit::KernelCache> disk;  // absent when disabled or no directory was found

  // Key -> the kernel, or the compile of it in flight. A failed compile is erased, so a
  // later call retries and reports its own error. The caller that inserts a key settles its
  // slot through a jit::SlotPromise, however it leaves.
  std::mutex mutex;
  jit::KernelSlots memory;

  std::atomic<std::int64_t> compiles{0};
  std::atomic<std::int64_t> disk_hits{0};
  std::atomic<std::int64_t> memory_hits{0};
  std::atomic<std::int64_t> corrupt_entries{0};
  std::atomic<std::int64_t> cache_write_failures{0};

  // A log line that cannot be written (stderr on a full disk, a closed pipe) is dropped:
  // fmt::print would throw, out of a build that otherwise succeeds.
  template <class... Args>
  void log(fmt::format_string<Args...> format, Args&&... args) const noexcept {
    if (!settings.verbose) return;
    try {
      const std::string line =
          fmt::format("fusedgemm: {}\n", fmt::format(format, std::forward<Args>(args)...));
      std::fputs(line.c_str(), stderr);
    } catch (...) {  // out of memory for the line: it is dropped too
    }
  }

  // Disk, then NVRTC: the work of the one caller that owns a key's map slot.
  Result<CompileResult> produce(const std::string& key, const jit::KernelSource& source,
                                const jit::CompileOptions& options);
  // produce() with an exception as an error value, which the owner of a key's map slot
  // returns and hands to the key's waiters (they get the reason, not the SlotPromise's
  // catch-all error).
  Result<CompileResult> produce_or_error(const std::string& key, const jit::KernelSource& source,
                                         const jit::CompileOptions& options);
  // Writes the source, log and options when FUSEDGEMM_DUMP_DIR is set; says why not.
  std::string dump(const jit::KernelSource& source, const jit::CompileOptions& options,
                   const std::string& log) const;
};

namespace {

void append(std::string& text, const std::string& more) {
  if (more.empty()) return;
  if (!text.empty()) text += "; ";
  text += more;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string Context::Impl::dump(const jit::KernelSource& source, const jit::CompileOptions& options,
                                const std::string& log) const {
  if (settings.dump_dir.empty()) return {};
  const Result<jit::DumpedFiles> files =
      jit::dump_compile(settings.dump_dir, jit::DumpFolder::kChosen, source, options, log);
  if (!files) return "not dumped: " + files.status().message();
  this->log("dumped '{}' to {}", source.name, files->source.string());
  return {};
}

Result<CompileResult> Context::Impl::produce_or_error(const std::string& key,
                                                      const jit::KernelSource& source,
                                                      const jit::CompileOptions& options) {
  try {
    return produce(key, source, options);
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kUnavailable, "compile: out of host memory");
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, std::string("compile: uncaught exception: ") + e.what());
  } catch (...) {
    return Status(ErrorCode::kInternal, "compile: uncaught exception of an unknown type");
  }
}

Result<CompileResult> Context::Impl::produce(const std::string& key,
                                             const jit::KernelSource& source,
                                             const jit::CompileOptions& options) {
  CompileResult result;
  result.key = key;
  if (disk) {
    jit::CacheLoad load = disk->load(key);
    if (load.outcome == jit::CacheLoadOutcome::kHit) {
      ++disk_hits;
      log("disk hit '{}' key {}", source.name, key);
      result.warning = dump(source, options, load.kernel.log);
      result.kernel = std::make_shared<const CompiledKernel>(std::move(load.kernel));
      result.outcome = CacheOutcome::kDiskHit;
      return result;
    }
    if (load.outcome == jit::CacheLoadOutcome::kCorrupt) {
      ++corrupt_entries;
      log("a corrupt cache entry, recompiling: {}", load.detail);
    }
  }

  ++compiles;
  FG_ASSIGN_OR_RETURN(CompiledKernel kernel, jit::compile(source, options));
  log("compiled '{}' key {} in {:.3f} s", source.name, key, kernel.compile_seconds);
  result.warning = dump(source, options, kernel.log);
  if (disk) {
    if (const Status stored = disk->store(key, kernel); !stored) {
      ++cache_write_failures;
      append(result.warning, "not cached on disk: " + stored.message());
    }
  } else if (!settings.cache_disabled) {
    append(result.warning,
           "not cached on disk: no cache directory (FUSEDGEMM_CACHE_DIR, XDG_CACHE_HOME and "
           "HOME are unset)");
  }
  if (!result.warning.empty()) log("{}", result.warning);
  result.kernel = std::make_shared<const CompiledKernel>(std::move(kernel));
  result.outcome = CacheOutcome::kCompiled;
  return result;
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;

Result<std::shared_ptr<Context>> Context::create(const ContextOptions& options) {
  auto impl = std::make_unique<Impl>();
  FG_ASSIGN_OR_RETURN(impl->settings, jit::resolve_settings(options, jit::process_environment()));
  FG_ASSIGN_OR_RETURN(impl->nvrtc, jit::nvrtc_version());
  if (!impl->settings.cache_disabled && !impl->settings.cache_dir.empty()) {
    impl->disk.emplace(impl->settings.cache_dir, impl->settings.cache_max_bytes);
  }
  impl->log("context: NVRTC {}.{}, cache {}", impl->nvrtc.major, impl->nvrtc.minor,
            impl->disk ? impl->settings.cache_dir.string() : std::string("off"));
  return std::shared_ptr<Context>(new Context(std::move(impl)));
}

const ContextSettings& Context::settings() const {
  return impl_->settings;
}

ContextCounters Context::counters() const {
  return {.compiles = impl_->compiles.load(),
          .disk_hits = impl_->disk_hits.load(),
          .memory_hits = impl_->memory_hits.load(),
          .corrupt_entries = impl_->corrupt_entries.load(),
          .cache_write_failures = impl_->cache_write_failures.load()};
}

Result<CompileResult> Context::compile(const jit::KernelSource& source,
                                       const jit::CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  jit::CompileOptions resolved = options;
  if (!resolved.include_dirs) resolved.include_dirs = impl_->settings.cuda_include_dirs;
  if (resolved.dump_dir.empty()) resolved.dump_dir = impl_->settings.dump_dir;
  if (resolved.dump_dir.empty()) {
    // The default folder of a failed compile, resolved when the Context was created.
    resolved.dump_dir = impl_->settings.failure_dump_dir;
    resolved.dump_folder = jit::DumpFolder::kDefault;
  }
  FG_ASSIGN_OR_RETURN(std::string key, jit::cache_key(source, resolved, impl_->nvrtc));

  // Settles the key's slot when this call inserts it, however this call leaves.
  jit::SlotPromise slot(impl_->mutex, impl_->memory, source.name);
  jit::SharedKernelResult future;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    const auto [it, inserted] = impl_->memory.try_emplace(key, slot.future());
    if (inserted) slot.claim(key);
    future = it->second;
  }

  if (!slot.claimed()) {
    // Waits outside the lock, so compiles of other keys proceed meanwhile.
    const Result<SharedKernel> kernel = jit::wait_for_kernel(future, source.name);
    FG_TRY(kernel);
    ++impl_->memory_hits;
    impl_->log("memory hit '{}' key {}", source.name, key);
    CompileResult result{.kernel = kernel.value(),
                         .outcome = CacheOutcome::kMemoryHit,
                         .key = std::move(key),
                         .warning = {},
                         .seconds = seconds_since(start)};
    return result;
  }

  Result<CompileResult> result = impl_->produce_or_error(key, source, resolved);
  if (!result) {
    slot.fail(result.status());
    return result;
  }
  slot.keep(result->kernel);
  result->seconds = seconds_since(start);
  return result;
}

}  // namespace fusedgemm

namespace fusedgemm::jit {

std::string_view to_string(CacheOutcome outcome) {
  switch (outcome) {
    case CacheOutcome::kCompiled: return "compiled";
    case CacheOutcome::kDiskHit: return "disk_hit";
    case CacheOutcome::kMemoryHit: return "memory_hit";
  }
  return "unknown";
}

}  // namespace fusedgemm::jit
