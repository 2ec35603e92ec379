#include "jit/kernel_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <vector>

#include "jit/cache_entry.h"
#include "jit/digest.h"

namespace fusedgemm::jit {
namespace {

namespace fs = std::filesystem;

// A temp file older than this belongs to a writer that died before its rename.
constexpr auto kStaleTempAge = std::chrono::hours(24);

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

std::string random_suffix() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
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
      if (file.path().extension() != ".cubin" || !file.is_regular_file(ec)) continue;
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
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return load;
  std::string bytes(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  // A short read (the file shrank meanwhile) fails verification like any truncation.
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  Result<CompiledKernel> kernel = decode_entry(bytes, key);
  std::error_code ec;
  if (!kernel) {
    // A corrupt entry is deleted so the recompile that follows can write a good one.
    fs::remove(path, ec);
    load.outcome = CacheLoadOutcome::kCorrupt;
    load.detail = kernel.status().message() + " (" + path.string() + ")";
    return load;
  }
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
