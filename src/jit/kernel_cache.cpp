#include "jit/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <system_error>
#include <vector>

#include "jit/cache_entry.h"
#include "jit/digest.h"

namespace fusedgemm::jit {
namespace {

namespace fs = std::filesystem;

// A temp file older than this belongs to a writer that died before its rename.
constexpr auto kStaleTempAge = std::chrono::hours(24);
// No entry is larger (a cubin of the largest kernel is a few hundred KB): a bigger file at an
// entry's path is not read into memory.
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{64} << 20;

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_key(std::string_view key) {
  return key.size() == kSha256HexChars && is_hex(key);
}

// A shard folder: the first two hex digits of the keys it holds.
bool is_shard(const fs::path& dir) {
  const std::string name = dir.filename().string();
  return name.size() == 2 && is_hex(name);
}

// A writer's temp file: <key>.<pid>.<hex> (store). Nothing else in tmp/ is ours to delete.
bool is_temp_name(std::string_view name) {
  const std::size_t first = name.find('.');
  const std::size_t second = first == std::string_view::npos ? first : name.find('.', first + 1);
  if (second == std::string_view::npos) return false;
  const std::string_view pid = name.substr(first + 1, second - first - 1);
  const std::string_view suffix = name.substr(second + 1);
  return is_key(name.substr(0, first)) && !pid.empty() &&
         std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         !suffix.empty() && is_hex(suffix);
}

// An entry file: <shard>/<key>.cubin with the shard the key's first two digits.
bool is_entry(const fs::path& file, const fs::path& shard) {
  const std::string stem = file.stem().string();
  return file.extension() == ".cubin" && is_key(stem) &&
         stem.compare(0, 2, shard.filename().string()) == 0;
}

std::string errno_text() {
  return std::strerror(errno);
}

// Writes all of `bytes` to a new file at `path` and fsyncs it, so the rename that follows
// never publishes an entry whose data is still in flight.
Status write_synced(const fs::path& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  FG_CHECK(fd >= 0, ErrorCode::kIo, "open '" + path.string() + "': " + errno_text());
  std::string error;
  while (!bytes.empty() && error.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      error = "write '" + path.string() + "': " + errno_text();
    } else {
      bytes.remove_prefix(static_cast<std::size_t>(written));
    }
  }
  if (error.empty() && ::fsync(fd) != 0) error = "fsync '" + path.string() + "': " + errno_text();
  if (::close(fd) != 0 && error.empty()) error = "close '" + path.string() + "': " + errno_text();
  if (!error.empty()) {
    std::error_code ignored;
    fs::remove(path, ignored);
    return Status(ErrorCode::kIo, std::move(error));
  }
  return Status::ok();
}

// Makes a rename durable; a failure only weakens crash safety, so it is not reported.
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// fmt, not a stream: a stream's hex digits follow the global locale, whose grouping would put
// separators in the name, which is_temp_name (the sweep's test) then no longer accepts.
std::string random_suffix() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

struct EntryFile {
  fs::path path;
  std::uint64_t bytes;
  fs::file_time_type mtime;
};

std::vector<EntryFile> list_entries(const fs::path& dir) {
  std::vector<EntryFile> entries;
  std::error_code ec;
  for (const fs::directory_entry& shard : fs::directory_iterator(dir, ec)) {
    if (!shard.is_directory(ec) || !is_shard(shard.path())) continue;
    for (const fs::directory_entry& file : fs::directory_iterator(shard.path(), ec)) {
      if (!is_entry(file.path(), shard.path()) || !file.is_regular_file(ec)) continue;
      const std::uint64_t bytes = file.file_size(ec);
      if (ec) continue;  // another process evicted it meanwhile
      const fs::file_time_type mtime = file.last_write_time(ec);
      if (ec) continue;
      entries.push_back({file.path(), bytes, mtime});
    }
  }
  return entries;
}

}  // namespace

Result<std::string> cache_key(const KernelSource& source, const CompileOptions& options,
                              NvrtcVersion nvrtc) {
  // The headers go in by name, so a generator that lists them in another order still hits.
  std::vector<const std::pair<std::string, std::string>*> headers;
  for (const auto& header : source.headers) headers.push_back(&header);
  std::sort(headers.begin(), headers.end(), [](auto* a, auto* b) { return a->first < b->first; });
  Digest headers_digest;
  headers_digest.add_int(static_cast<std::int64_t>(headers.size()));
  for (const auto* header : headers) headers_digest.add(header->first).add(header->second);
  FG_ASSIGN_OR_RETURN(const std::string headers_hex, headers_digest.finish_hex());

  Digest digest;
  digest.add("fusedgemm kernel cache").add_int(kEntryFormatVersion);
  digest.add(source.name).add(source.code).add(headers_hex);
  digest.add_int(nvrtc.major).add_int(nvrtc.minor);
  digest.add(options.arch);
  for (const std::string& flag : options.extra) {
    FG_CHECK(!flag.starts_with("-I") && !flag.starts_with("--include-path"),
             ErrorCode::kInvalidArgument,
             "CompileOptions::extra '" + flag +
                 "' is an include path; legal: put it in include_dirs, which stays out of the "
                 "cache key");
  }
  const std::vector<std::string> flags = compile_flags(options);
  digest.add_int(static_cast<std::int64_t>(flags.size()));
  for (const std::string& flag : flags) digest.add(flag);
  return digest.finish_hex();
}

KernelCache::KernelCache(fs::path dir, std::uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

fs::path KernelCache::entry_path(std::string_view key) const {
  return dir_ / std::string(key.substr(0, 2)) / (std::string(key) + ".cubin");
}

CacheLoad KernelCache::load(std::string_view key) const {
  CacheLoad load;
  if (!is_key(key)) return load;
  const fs::path path = entry_path(key);
  // Opened without blocking (a FIFO at the path would wait for a writer) and read only if
  // it is a regular file of a plausible size: anything else is a corrupt entry.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return load;
  struct stat info {};
  std::string bytes;
  std::string wrong;
  if (::fstat(fd, &info) != 0) {
    wrong = "fstat: " + errno_text();
  } else if (!S_ISREG(info.st_mode)) {
    wrong = "not a regular file";
  } else if (static_cast<std::uint64_t>(info.st_size) > kMaxEntryBytes) {
    wrong = "an entry of " + std::to_string(info.st_size) + " bytes, past " +
            std::to_string(kMaxEntryBytes);
  } else {
    bytes.resize(static_cast<std::size_t>(info.st_size));
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    // A short read (the file shrank meanwhile) fails verification like any truncation.
    bytes.resize(got);
  }
  ::close(fd);
  std::error_code ec;
  // A corrupt entry is deleted so the recompile that follows can write a good one, unless a
  // folder (whose contents are nobody's to delete here: the recompile's store then reports
  // that it cannot write the entry). The detail says which, and why a delete failed.
  const auto corrupt = [&](const std::string& why, bool folder) {
    std::string fate = "a folder, left in place";
    if (!folder) fate = fs::remove(path, ec) || !ec ? "deleted" : "not deleted: " + ec.message();
    load.outcome = CacheLoadOutcome::kCorrupt;
    load.detail = why + " (" + path.string() + "; " + fate + ")";
    return load;
  };
  if (!wrong.empty()) return corrupt(wrong, S_ISDIR(info.st_mode));
  Result<CompiledKernel> kernel = decode_entry(bytes, key);
  if (!kernel) return corrupt(kernel.status().message(), false);
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  load.outcome = CacheLoadOutcome::kHit;
  load.kernel = std::move(kernel).value();
  return load;
}

Status KernelCache::store(std::string_view key, const CompiledKernel& kernel) const {
  FG_CHECK(is_key(key), ErrorCode::kInternal,
           "kernel cache: '" + std::string(key) + "' is not a key");
  FG_ASSIGN_OR_RETURN(const std::string bytes, encode_entry(key, kernel));
  const fs::path tmp_dir = dir_ / "tmp";
  const fs::path final_path = entry_path(key);
  std::error_code ec;
  fs::create_directories(tmp_dir, ec);
  FG_CHECK(!ec, ErrorCode::kIo, "cannot create '" + tmp_dir.string() + "': " + ec.message());
  fs::create_directories(final_path.parent_path(), ec);
  FG_CHECK(!ec, ErrorCode::kIo,
           "cannot create '" + final_path.parent_path().string() + "': " + ec.message());

  const fs::path tmp_path =
      tmp_dir / (std::string(key) + "." + std::to_string(::getpid()) + "." + random_suffix());
  FG_TRY(write_synced(tmp_path, bytes));
  // rename() replaces atomically: a concurrent writer of the same key wrote the same
  // kernel, so losing the race is fine.
  fs::rename(tmp_path, final_path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp_path, ignored);
    return Status(ErrorCode::kIo, "rename '" + tmp_path.string() + "' -> '" + final_path.string() +
                                      "': " + ec.message());
  }
  sync_directory(final_path.parent_path());
  enforce_size_limit(final_path);
  return Status::ok();
}

std::uint64_t KernelCache::total_bytes() const {
  std::uint64_t total = 0;
  for (const EntryFile& entry : list_entries(dir_)) total += entry.bytes;
  return total;
}

void KernelCache::enforce_size_limit(const fs::path& keep) const {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& file : fs::directory_iterator(dir_ / "tmp", ec)) {
    std::error_code file_ec;
    if (!is_temp_name(file.path().filename().string()) || !file.is_regular_file(file_ec)) {
      continue;
    }
    const auto mtime = file.last_write_time(file_ec);
    if (!file_ec && now - mtime > kStaleTempAge) fs::remove(file.path(), file_ec);
  }

  std::vector<EntryFile> entries = list_entries(dir_);
  std::uint64_t total = 0;
  for (const EntryFile& entry : entries) total += entry.bytes;
  if (total <= max_bytes_) return;
  const std::uint64_t target = max_bytes_ / 10 * 9;
  std::sort(entries.begin(), entries.end(),
            [](const EntryFile& a, const EntryFile& b) { return a.mtime < b.mtime; });
  for (const EntryFile& entry : entries) {
    if (total <= target) break;
    if (entry.path == keep) continue;
    // Another process may have evicted it already; either way its bytes are gone.
    fs::remove(entry.path, ec);
    total -= entry.bytes;
  }
}

}  // namespace fusedgemm::jit
