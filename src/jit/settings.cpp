#include "jit/settings.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <system_error>

#include "jit/dump.h"
#include "jit/kernel_cache.h"
#include "jit/nvrtc_compiler.h"

namespace fusedgemm::jit {
namespace {

constexpr const char* kBoolLegal = "1 or 0 (also true/false, yes/no, on/off)";

// An unset or empty variable counts as absent, as shells make `VAR= cmd` easy to type.
std::optional<std::string> read(const ContextOptions& options, const EnvLookup& env,
                                const char* name) {
  if (!options.read_environment) return std::nullopt;
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

Status invalid(const char* name, const std::string& value, const char* legal) {
  return Status(ErrorCode::kInvalidArgument,
                std::string("environment: ") + name + "='" + value + "'; legal: " + legal);
}

Result<bool> parse_bool(const char* name, const std::string& value) {
  std::string lower;
  for (const char c : value)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off") return false;
  return invalid(name, value, kBoolLegal);
}

// "<digits>" or "<digits>K|M|G|T" (binary multiples), greater than 0.
Result<std::uint64_t> parse_bytes(const char* name, const std::string& value) {
  constexpr const char* kLegal = "a byte count > 0, optionally suffixed K, M, G or T (x1024)";
  std::uint64_t number = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, number);
  if (ec != std::errc() || ptr == value.data()) return invalid(name, value, kLegal);
  int shift = 0;
  if (ptr != end) {
    const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(*ptr)));
    const std::string_view units = "KMGT";
    const std::size_t unit = units.find(suffix);
    if (unit == std::string_view::npos || ptr + 1 != end) return invalid(name, value, kLegal);
    shift = 10 * static_cast<int>(unit + 1);
  }
  if (number == 0 || number > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    return invalid(name, value, kLegal);
  }
  return number << shift;
}

// FUSEDGEMM_CACHE_DIR, else $XDG_CACHE_HOME/fusedgemm, else $HOME/.cache/fusedgemm.
std::filesystem::path default_cache_dir(const ContextOptions& options, const EnvLookup& env) {
  if (auto dir = read(options, env, "FUSEDGEMM_CACHE_DIR")) return *dir;
  // The XDG base-directory spec says to ignore a relative XDG_CACHE_HOME.
  if (auto xdg = read(options, env, "XDG_CACHE_HOME"); xdg && xdg->front() == '/') {
    return std::filesystem::path(*xdg) / "fusedgemm";
  }
  if (auto home = read(options, env, "HOME")) {
    return std::filesystem::path(*home) / ".cache" / "fusedgemm";
  }
  return {};
}

// The folder failed compiles dump under by default: TMPDIR, as temp_directory_path() would
// find it, but read now through `env` (temp_directory_path calls getenv on whichever thread
// fails a compile). A relative TMPDIR is ignored, as a relative XDG_CACHE_HOME is, and so
// is one that names no folder, as temp_directory_path() refuses it.
std::filesystem::path failure_temp_dir(const ContextOptions& options, const EnvLookup& env) {
  if (auto tmpdir = read(options, env, "TMPDIR"); tmpdir && tmpdir->front() == '/') {
    std::error_code ec;
    if (std::filesystem::is_directory(*tmpdir, ec)) return *tmpdir;
  }
  return kFallbackTempDir;
}

}  // namespace

EnvLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    // Called only while a Context is created, never concurrently with setenv by us.
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<ContextSettings> resolve_settings(const ContextOptions& options, const EnvLookup& env) {
  ContextSettings settings;
  settings.cache_dir = options.cache_dir ? *options.cache_dir : default_cache_dir(options, env);

  settings.cache_max_bytes = kDefaultCacheMaxBytes;
  if (options.cache_max_bytes) {
    FG_CHECK(*options.cache_max_bytes > 0, ErrorCode::kInvalidArgument,
             "ContextOptions::cache_max_bytes is 0; legal: > 0");
    settings.cache_max_bytes = *options.cache_max_bytes;
  } else if (auto value = read(options, env, "FUSEDGEMM_CACHE_MAX_BYTES")) {
    FG_ASSIGN_OR_RETURN(settings.cache_max_bytes, parse_bytes("FUSEDGEMM_CACHE_MAX_BYTES", *value));
  }

  if (options.disable_cache) {
    settings.cache_disabled = *options.disable_cache;
  } else if (auto value = read(options, env, "FUSEDGEMM_DISABLE_CACHE")) {
    FG_ASSIGN_OR_RETURN(settings.cache_disabled, parse_bool("FUSEDGEMM_DISABLE_CACHE", *value));
  }

  if (options.dump_dir) {
    settings.dump_dir = *options.dump_dir;
  } else if (auto value = read(options, env, "FUSEDGEMM_DUMP_DIR")) {
    settings.dump_dir = *value;
  }

  settings.failure_dump_dir = default_dump_dir(failure_temp_dir(options, env));

  // Relative folders are resolved now, once: a later chdir of the process moves neither.
  for (std::filesystem::path* dir : {&settings.cache_dir, &settings.dump_dir}) {
    std::error_code ec;
    if (!dir->empty() && dir->is_relative()) {
      if (auto absolute = std::filesystem::absolute(*dir, ec); !ec) *dir = std::move(absolute);
    }
  }

  if (options.verbose) {
    settings.verbose = *options.verbose;
  } else if (auto value = read(options, env, "FUSEDGEMM_VERBOSE")) {
    FG_ASSIGN_OR_RETURN(settings.verbose, parse_bool("FUSEDGEMM_VERBOSE", *value));
  }

  if (options.cuda_home) {
    settings.cuda_include_dirs = cuda_include_dirs(options.cuda_home->string());
  } else if (auto value = read(options, env, "CUDA_HOME")) {
    settings.cuda_include_dirs = cuda_include_dirs(*value);
  } else {
    settings.cuda_include_dirs = configured_cuda_include_dirs();
  }
  return settings;
}

}  // namespace fusedgemm::jit
