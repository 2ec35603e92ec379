// A Context puts a memory map in front of the disk cache in front of NVRTC; the counters
// prove which one answered. Each test compiles the tiny kernel at most twice.
#include "jit/context.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "jit/cache_entry.h"
#include "jit/jit_test_util.h"
#include "jit/kernel_cache.h"

namespace fusedgemm::jit {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tiny_kernel;
using testing::write_file;

// Hermetic: nothing from the developer's environment (a FUSEDGEMM_DUMP_DIR, say) leaks in.
std::shared_ptr<Context> make_context(const std::filesystem::path& cache_dir,
                                      ContextOptions options = {}) {
  options.read_environment = false;
  options.cache_dir = cache_dir;
  Result<std::shared_ptr<Context>> context = Context::create(options);
  EXPECT_TRUE(context.is_ok()) << context.status().message();
  return context.value();
}

// TMPDIR set for one test (single-threaded there), then restored.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::filesystem::path& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    set(dir);
  }
  ~ScopedTmpdir() {
    if (old_) {
      ::setenv("TMPDIR", old_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

  void set(const std::filesystem::path& dir) { ::setenv("TMPDIR", dir.c_str(), 1); }

 private:
  std::optional<std::string> old_;
};

TEST(JitContext, CompilesThenHitsMemoryThenDiskInANewContext) {
  const TempDir dir;
  const std::shared_ptr<Context> first = make_context(dir.path());
  const Result<CompileResult> compiled = first->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  EXPECT_EQ(compiled->outcome, CacheOutcome::kCompiled);
  EXPECT_TRUE(compiled->warning.empty()) << compiled->warning;
  EXPECT_TRUE(std::filesystem::exists(KernelCache(dir.path(), 1).entry_path(compiled->key)));

  const Result<CompileResult> again = first->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->outcome, CacheOutcome::kMemoryHit);
  EXPECT_EQ(again->kernel, compiled->kernel);  // the same object, not a copy
  EXPECT_EQ(first->counters().compiles, 1);
  EXPECT_EQ(first->counters().memory_hits, 1);

  const std::shared_ptr<Context> second = make_context(dir.path());
  const Result<CompileResult> loaded = second->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_EQ(loaded->outcome, CacheOutcome::kDiskHit);
  EXPECT_EQ(loaded->key, compiled->key);
  EXPECT_EQ(loaded->kernel->cubin, compiled->kernel->cubin);
  EXPECT_EQ(loaded->kernel->resources.find("tiny")->registers,
            compiled->kernel->resources.find("tiny")->registers);
  EXPECT_EQ(second->counters().compiles, 0);  // NVRTC never ran
  EXPECT_EQ(second->counters().disk_hits, 1);
  EXPECT_LT(loaded->seconds, compiled->seconds);
}

TEST(JitContext, CorruptEntryIsRecompiledAndReplaced) {
  const TempDir dir;
  const Result<CompileResult> compiled =
      make_context(dir.path())->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  const std::filesystem::path path = KernelCache(dir.path(), 1).entry_path(compiled->key);
  const std::string good = read_file(path);
  std::string bad = good;
  bad[kEntryHeaderBytes + bad.size() / 4] ^= 0x10;  // a byte inside the cubin
  write_file(path, bad);

  const std::shared_ptr<Context> context = make_context(dir.path());
  const Result<CompileResult> recompiled = context->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(recompiled.is_ok()) << recompiled.status().message();
  EXPECT_EQ(recompiled->outcome, CacheOutcome::kCompiled);
  EXPECT_EQ(context->counters().corrupt_entries, 1);
  EXPECT_EQ(context->counters().compiles, 1);
  // The replaced entry verifies again.
  EXPECT_TRUE(decode_entry(read_file(path), compiled->key).is_ok());
  EXPECT_EQ(recompiled->kernel->cubin, compiled->kernel->cubin);
}

TEST(JitContext, UnwritableCacheStillReturnsTheKernelWithAWarningAndDumps) {
  const TempDir dir;
  write_file(dir.path() / "file", "not a directory");
  ContextOptions options;
  options.dump_dir = dir.path() / "dumps";
  const std::shared_ptr<Context> context = make_context(dir.path() / "file" / "cache", options);
  const Result<CompileResult> compiled = context->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  EXPECT_EQ(compiled->outcome, CacheOutcome::kCompiled);
  EXPECT_FALSE(compiled->kernel->cubin.empty());
  EXPECT_NE(compiled->warning.find("not cached on disk: cannot create"), std::string::npos)
      << compiled->warning;
  EXPECT_EQ(context->counters().cache_write_failures, 1);

  // FUSEDGEMM_DUMP_DIR: the source, its log and the NVRTC options of every compile.
  int sources = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir.path() / "dumps")) {
    if (file.path().extension() != ".cu") continue;
    ++sources;
    EXPECT_EQ(read_file(file.path()), tiny_kernel().code);
    std::filesystem::path other = file.path();
    EXPECT_NE(read_file(other.replace_extension(".log")).find("'tiny'"), std::string::npos);
    EXPECT_NE(read_file(other.replace_extension(".cmd")).find("-arch=sm_90a"), std::string::npos);
  }
  EXPECT_EQ(sources, 1);
}

TEST(JitContext, DisabledCacheSkipsTheDiskButKeepsMemory) {
  const TempDir dir;
  ContextOptions options;
  options.disable_cache = true;
  const std::shared_ptr<Context> context = make_context(dir.path() / "cache", options);
  const Result<CompileResult> compiled = context->compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  EXPECT_TRUE(compiled->warning.empty()) << compiled->warning;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
  EXPECT_EQ(context->compile(tiny_kernel(), CompileOptions{})->outcome, CacheOutcome::kMemoryHit);
}

TEST(JitContext, ConcurrentCompilesOfOneSourceCompileOnce) {
  const TempDir dir;
  const std::shared_ptr<Context> context = make_context(dir.path());
  constexpr int kThreads = 4;
  std::vector<Result<CompileResult>> results(kThreads, Status(ErrorCode::kInternal, "not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = context->compile(tiny_kernel(), CompileOptions{}); });
  }
  for (std::thread& thread : threads) thread.join();
  int compiled = 0;
  for (const Result<CompileResult>& result : results) {
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    EXPECT_EQ(result->kernel, results[0]->kernel);
    compiled += result->outcome == CacheOutcome::kCompiled ? 1 : 0;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(context->counters().compiles, 1);
  EXPECT_EQ(context->counters().memory_hits, kThreads - 1);
}

TEST(JitContext, FailedCompileIsReportedToEveryCallerAndNotRemembered) {
  const TempDir dir;
  ContextOptions options;
  options.dump_dir = dir.path() / "dumps";
  const std::shared_ptr<Context> context = make_context(dir.path() / "cache", options);
  KernelSource broken = tiny_kernel();
  broken.code = "this is not CUDA\n";
  const Result<CompileResult> first = context->compile(broken, CompileOptions{});
  ASSERT_FALSE(first.is_ok());
  EXPECT_EQ(first.status().code(), ErrorCode::kCompile);
  EXPECT_NE(first.status().message().find((dir.path() / "dumps").string()), std::string::npos)
      << first.status().message();
  EXPECT_FALSE(context->compile(broken, CompileOptions{}).is_ok());
  EXPECT_EQ(context->counters().compiles, 2);
  EXPECT_EQ(context->counters().memory_hits, 0);
}

// With no FUSEDGEMM_DUMP_DIR a failed compile dumps into the folder the Context resolved
// from TMPDIR when it was created, and reads TMPDIR no more: the compile ran
// temp_directory_path() (getenv) on the failing thread, racing a setenv on any other.
TEST(JitContext, FailedCompileDumpsIntoTheFolderResolvedAtCreation) {
  const TempDir dir;
  const TempDir temp;
  ContextOptions options;  // reads the environment, for TMPDIR; every other field is set
  options.cache_dir = dir.path();
  options.cache_max_bytes = std::uint64_t{1} << 30;
  options.disable_cache = true;
  options.dump_dir = "";
  options.verbose = false;
  ScopedTmpdir tmpdir(temp.path());
  Result<std::shared_ptr<Context>> created = Context::create(options);
  ASSERT_TRUE(created.is_ok()) << created.status().message();
  const std::shared_ptr<Context> context = created.value();
  const std::filesystem::path own = temp.path() / ("fusedgemm-" + std::to_string(::geteuid()));
  EXPECT_EQ(context->settings().failure_dump_dir, own);

  std::filesystem::create_directory(dir.path() / "moved");
  tmpdir.set(dir.path() / "moved");  // after creation: never read
  KernelSource broken = tiny_kernel();
  broken.code = "this is not CUDA\n";
  const Result<CompileResult> failed = context->compile(broken, CompileOptions{});
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kCompile);
  EXPECT_NE(failed.status().message().find("source dumped to " + own.string() + "/tiny-"),
            std::string::npos)
      << failed.status().message();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "moved"));
  struct stat info {};
  ASSERT_EQ(::lstat(own.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);  // still kept to this user alone
}

// A verbose Context on a stderr that cannot be written (a full disk: /dev/full) still
// compiles, and the same key compiled again once stderr is healthy is a memory hit: a log
// line that fails is dropped. It threw, and left the key's promise broken for every later
// compile of it (std::future_error, from any thread).
TEST(JitContext, VerboseLogThatCannotBeWrittenIsDropped) {
  const TempDir dir;
  ContextOptions options;
  options.verbose = true;
  const std::shared_ptr<Context> context = make_context(dir.path(), options);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(saved, 0);
  ASSERT_GE(full, 0);
  ::dup2(full, STDERR_FILENO);
  std::string thrown;
  Result<CompileResult> first = Status(ErrorCode::kInternal, "not compiled");
  try {
    first = context->compile(tiny_kernel(), CompileOptions{});
  } catch (const std::exception& e) {
    thrown = e.what();
  }
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(full);
  EXPECT_EQ(thrown, "");
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_EQ(first->outcome, CacheOutcome::kCompiled);
  std::string thrown_again;
  try {
    const Result<CompileResult> again = context->compile(tiny_kernel(), CompileOptions{});
    ASSERT_TRUE(again.is_ok()) << again.status().message();
    EXPECT_EQ(again->outcome, CacheOutcome::kMemoryHit);
  } catch (const std::exception& e) {
    thrown_again = e.what();
  }
  EXPECT_EQ(thrown_again, "");
}

}  // namespace
}  // namespace fusedgemm::jit
