// The disk cache without NVRTC: the key, the entry format and its verification, the
// write-then-rename store and the size bound (STYLE.md rule 11).
#include "jit/kernel_cache.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "jit/cache_entry.h"
#include "jit/jit_test_util.h"

namespace fusedgemm::jit {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tiny_kernel;
using testing::write_file;

constexpr NvrtcVersion kNvrtc{13, 0};

std::string key_of(const KernelSource& source, const CompileOptions& options,
                   NvrtcVersion nvrtc = kNvrtc) {
  return cache_key(source, options, nvrtc).value();
}

// A stand-in for a compiled kernel: the loader checks only the ELF magic of the cubin.
CompiledKernel fake_kernel(std::size_t cubin_bytes, char fill = 'x') {
  CompiledKernel kernel;
  kernel.cubin.assign(cubin_bytes, static_cast<std::uint8_t>(fill));
  const char elf[] = {0x7f, 'E', 'L', 'F'};
  std::copy(std::begin(elf), std::end(elf), kernel.cubin.begin());
  kernel.log =
      "ptxas info    : Function properties for k\n"
      "ptxas info    : Used 12 registers, used 0 barriers\n";
  kernel.resources = parse_ptxas_report(kernel.log);
  kernel.compile_seconds = 0.25;
  return kernel;
}

std::string fake_key(char c) {
  return std::string(64, c);
}

TEST(KernelCacheKey, ChangesWithEveryInputThatDecidesTheCubin) {
  const KernelSource source = tiny_kernel();
  const CompileOptions options;
  const std::string base = key_of(source, options);
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, key_of(source, options));

  std::set<std::string> keys = {base};
  auto expect_new = [&](const std::string& key, const char* what) {
    EXPECT_TRUE(keys.insert(key).second) << what << " did not change the key";
  };
  KernelSource changed = source;
  changed.code += " ";
  expect_new(key_of(changed, options), "code");
  changed = source;
  changed.name = "other.cu";
  expect_new(key_of(changed, options), "name");
  changed = source;
  changed.headers[0].second += "\n";
  expect_new(key_of(changed, options), "header contents");
  changed = source;
  changed.headers[0].first = "other.h";
  expect_new(key_of(changed, options), "header name");
  CompileOptions other_options = options;
  other_options.extra = {"-DTILE=128"};
  expect_new(key_of(source, other_options), "extra option");
  other_options = options;
  other_options.arch = "sm_90";
  expect_new(key_of(source, other_options), "arch");
  expect_new(key_of(source, options, NvrtcVersion{13, 1}), "NVRTC version");
}

TEST(KernelCacheKey, IgnoresPathsAndHeaderOrder) {
  KernelSource source = tiny_kernel();
  source.headers.push_back({"b.h", "int b;"});
  const std::string base = key_of(source, CompileOptions{});
  CompileOptions with_paths;
  with_paths.include_dirs = std::vector<std::string>{"/somewhere/else/include"};
  with_paths.dump_dir = "/tmp/dumps";
  EXPECT_EQ(key_of(source, with_paths), base);
  std::swap(source.headers[0], source.headers[1]);
  EXPECT_EQ(key_of(source, CompileOptions{}), base);
}

TEST(KernelCacheKey, RefusesIncludePathsAmongTheFlags) {
  for (const char* flag : {"-I/usr/local/cuda/include", "--include-path=/opt/x"}) {
    CompileOptions options;
    options.extra = {flag};
    const Result<std::string> key = cache_key(tiny_kernel(), options, kNvrtc);
    ASSERT_FALSE(key.is_ok()) << flag;
    EXPECT_EQ(key.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(key.status().message().find(flag), std::string::npos) << key.status().message();
  }
}

TEST(KernelCacheEntry, RoundTripsAndRereadsTheReport) {
  const CompiledKernel kernel = fake_kernel(100);
  const std::string bytes = encode_entry(fake_key('a'), kernel).value();
  EXPECT_EQ(bytes.size(), kEntryHeaderBytes + 100 + kernel.log.size());
  const CompiledKernel back = decode_entry(bytes, fake_key('a')).value();
  EXPECT_EQ(back.cubin, kernel.cubin);
  EXPECT_EQ(back.log, kernel.log);
  EXPECT_DOUBLE_EQ(back.compile_seconds, 0.25);
  ASSERT_NE(back.resources.find("k"), nullptr);
  EXPECT_EQ(back.resources.find("k")->registers, 12);
}

TEST(KernelCacheEntry, EveryCorruptionIsCaughtAndNamed) {
  const std::string key = fake_key('a');
  const std::string good = encode_entry(key, fake_kernel(100)).value();
  struct Case {
    const char* what;
    std::string bytes;
    const char* message;
  };
  auto flipped = [&](std::size_t at) {
    std::string bytes = good;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
    return bytes;
  };
  const std::vector<Case> cases = {
      {"magic", flipped(0), "bad magic"},
      {"version", flipped(8), "format version"},
      {"key", flipped(20), "holds key"},
      {"cubin byte", flipped(kEntryHeaderBytes + 50), "SHA-256"},
      {"log byte", flipped(good.size() - 3), "SHA-256"},
      {"truncated", good.substr(0, good.size() - 10), "file holds"},
      {"extended", good + "junk", "file holds"},
      {"header only", good.substr(0, 40), "shorter than"},
  };
  for (const Case& c : cases) {
    const Result<CompiledKernel> back = decode_entry(c.bytes, key);
    ASSERT_FALSE(back.is_ok()) << c.what;
    EXPECT_EQ(back.status().code(), ErrorCode::kIo) << c.what;
    EXPECT_NE(back.status().message().find(c.message), std::string::npos)
        << c.what << ": " << back.status().message();
  }
  EXPECT_FALSE(decode_entry(good, fake_key('b')).is_ok());
  // A cubin without the ELF magic is refused even when the digest matches.
  CompiledKernel not_elf = fake_kernel(100);
  not_elf.cubin[0] = 'Z';
  EXPECT_FALSE(decode_entry(encode_entry(key, not_elf).value(), key).is_ok());
}

TEST(KernelCacheStore, WritesShardedEntryThroughTempAndLoadsIt) {
  const TempDir dir;
  const KernelCache cache(dir.path(), kDefaultCacheMaxBytes);
  const std::string key = fake_key('c');
  EXPECT_EQ(cache.load(key).outcome, CacheLoadOutcome::kMiss);
  ASSERT_TRUE(cache.store(key, fake_kernel(64)).is_ok());
  EXPECT_EQ(cache.entry_path(key), dir.path() / "cc" / (key + ".cubin"));
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(key)));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "tmp"));  // renamed away
  const CacheLoad load = cache.load(key);
  ASSERT_EQ(load.outcome, CacheLoadOutcome::kHit);
  EXPECT_EQ(load.kernel.cubin, fake_kernel(64).cubin);
  // Storing again (a lost race) replaces the entry in place.
  ASSERT_TRUE(cache.store(key, fake_kernel(64)).is_ok());
  EXPECT_EQ(cache.load(key).outcome, CacheLoadOutcome::kHit);
}

TEST(KernelCacheStore, TruncatedOrFlippedEntryIsCorruptAndDeleted) {
  const TempDir dir;
  const KernelCache cache(dir.path(), kDefaultCacheMaxBytes);
  const std::string key = fake_key('d');
  const std::filesystem::path path = cache.entry_path(key);
  for (const bool truncate : {true, false}) {
    ASSERT_TRUE(cache.store(key, fake_kernel(64)).is_ok());
    std::string bytes = read_file(path);
    if (truncate) {
      bytes.resize(bytes.size() / 2);
    } else {
      bytes[kEntryHeaderBytes + 10] ^= 0x40;
    }
    write_file(path, bytes);
    const CacheLoad load = cache.load(key);
    EXPECT_EQ(load.outcome, CacheLoadOutcome::kCorrupt) << truncate;
    EXPECT_NE(load.detail.find(path.string() + "; deleted)"), std::string::npos) << load.detail;
    EXPECT_FALSE(std::filesystem::exists(path)) << truncate;
    EXPECT_EQ(cache.load(key).outcome, CacheLoadOutcome::kMiss);
  }
}

TEST(KernelCacheStore, SizeBoundEvictsTheOldestEntries) {
  const TempDir dir;
  const CompiledKernel kernel = fake_kernel(1000);
  const std::uint64_t entry_bytes = encode_entry(fake_key('0'), kernel)->size();
  // Room for three entries: the fourth write pushes the total over and evicts down to 90%,
  // which here means the single oldest entry.
  const KernelCache cache(dir.path(), 3 * entry_bytes + entry_bytes / 2);
  const auto now = std::filesystem::file_time_type::clock::now();
  const std::vector<std::string> keys = {fake_key('1'), fake_key('2'), fake_key('3')};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(cache.store(keys[i], kernel).is_ok());
    // Explicit mtimes: the file system's clock granularity must not decide the order.
    std::filesystem::last_write_time(cache.entry_path(keys[i]),
                                     now - std::chrono::hours(10 - static_cast<int>(i)));
  }
  // A hit refreshes the oldest entry, so the second-oldest is now the one to go.
  ASSERT_EQ(cache.load(keys[0]).outcome, CacheLoadOutcome::kHit);
  ASSERT_TRUE(cache.store(fake_key('4'), kernel).is_ok());
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(keys[0])));
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(keys[1])));
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(keys[2])));
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(fake_key('4'))));
  EXPECT_LE(cache.total_bytes(), cache.max_bytes());
}

TEST(KernelCacheStore, NewestEntrySurvivesEvenWhenAloneOverTheBound) {
  const TempDir dir;
  const KernelCache cache(dir.path(), 100);
  ASSERT_TRUE(cache.store(fake_key('5'), fake_kernel(1000)).is_ok());
  EXPECT_EQ(cache.load(fake_key('5')).outcome, CacheLoadOutcome::kHit);
}

TEST(KernelCacheStore, UnwritableDirectoryIsAnIoErrorSayingWhy) {
  const TempDir dir;
  // A regular file where a folder should be: fails for root too, unlike chmod.
  write_file(dir.path() / "file", "not a directory");
  const KernelCache cache(dir.path() / "file" / "cache", kDefaultCacheMaxBytes);
  const Status stored = cache.store(fake_key('e'), fake_kernel(64));
  ASSERT_FALSE(stored.is_ok());
  EXPECT_EQ(stored.code(), ErrorCode::kIo);
  EXPECT_NE(stored.message().find("cannot create"), std::string::npos) << stored.message();
  EXPECT_EQ(cache.load(fake_key('e')).outcome, CacheLoadOutcome::kMiss);
}

// What sits at an entry's path but is no entry is corrupt, never read into memory and never
// waited on: a FIFO (a blocking open would wait for a writer), a folder, a sparse file of
// 1 TiB. The FIFO and the file are deleted; the folder is left, and storing over it fails.
TEST(KernelCacheStore, AnEntryPathThatIsNoRegularFileIsCorrupt) {
  const TempDir dir;
  const KernelCache cache(dir.path(), kDefaultCacheMaxBytes);
  const std::string fifo_key = fake_key('6');
  const std::string folder_key = fake_key('7');
  const std::string huge_key = fake_key('8');
  for (const std::string& key : {fifo_key, folder_key, huge_key}) {
    std::filesystem::create_directories(cache.entry_path(key).parent_path());
  }
  ASSERT_EQ(::mkfifo(cache.entry_path(fifo_key).c_str(), 0644), 0);
  std::filesystem::create_directory(cache.entry_path(folder_key));
  { std::ofstream(cache.entry_path(huge_key)) << "x"; }
  std::filesystem::resize_file(cache.entry_path(huge_key), std::uintmax_t{1} << 40);
  // The detail says what became of each (a log that says "deleted" of what is still there
  // misleads).
  for (const auto& [key, why, fate] :
       {std::tuple{fifo_key, "not a regular file", "; deleted)"},
        std::tuple{folder_key, "not a regular file", "; a folder, left in place)"},
        std::tuple{huge_key, "an entry of 1099511627776 bytes", "; deleted)"}}) {
    const CacheLoad load = cache.load(key);
    EXPECT_EQ(load.outcome, CacheLoadOutcome::kCorrupt) << key;
    EXPECT_NE(load.detail.find(why), std::string::npos) << load.detail;
    EXPECT_NE(load.detail.find(fate), std::string::npos) << load.detail;
  }
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(fifo_key)));
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(huge_key)));
  EXPECT_TRUE(std::filesystem::is_directory(cache.entry_path(folder_key)));
  EXPECT_EQ(cache.store(folder_key, fake_kernel(64)).code(), ErrorCode::kIo);
  ASSERT_TRUE(cache.store(huge_key, fake_kernel(64)).is_ok());
  EXPECT_EQ(cache.load(huge_key).outcome, CacheLoadOutcome::kHit);
}

// The size bound and the temp sweep delete entries and temp files only: a cache folder
// that also holds other files (a misconfigured FUSEDGEMM_CACHE_DIR=$HOME) keeps them, old
// or not, whatever the bound.
TEST(KernelCacheStore, FilesThatAreNoEntriesAreNeverDeleted) {
  const TempDir dir;
  const KernelCache cache(dir.path(), 100);  // every older entry is evicted
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(48);
  const std::vector<std::filesystem::path> foreign = {
      dir.path() / "tmp" / "notes.txt", dir.path() / "ab" / "user.cubin",
      dir.path() / "ab" / (fake_key('a') + ".cubin"),  // a key in the wrong shard
      dir.path() / "tmp" / (fake_key('b') + ".txt")};
  for (const auto& path : foreign) {
    std::filesystem::create_directories(path.parent_path());
    write_file(path, std::string(4096, 'u'));
    std::filesystem::last_write_time(path, old);
  }
  std::filesystem::create_directories(dir.path() / "tmp" / "old_folder");
  std::filesystem::last_write_time(dir.path() / "tmp" / "old_folder", old);
  // A temp file a killed writer left a day ago is swept.
  const std::filesystem::path stale = dir.path() / "tmp" / (fake_key('c') + ".123.9f");
  write_file(stale, "half an entry");
  std::filesystem::last_write_time(stale, old);
  ASSERT_TRUE(cache.store(fake_key('1'), fake_kernel(64)).is_ok());
  ASSERT_TRUE(cache.store(fake_key('2'), fake_kernel(64)).is_ok());
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(fake_key('1'))));  // evicted
  EXPECT_FALSE(std::filesystem::exists(stale));
  for (const auto& path : foreign) EXPECT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "tmp" / "old_folder"));
}
}  // namespace
}  // namespace fusedgemm::jit
