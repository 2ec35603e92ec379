#include "jit/dump.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "jit/digest.h"
#include "jit/nvrtc_compiler.h"

namespace fusedgemm::jit {
namespace {

// The file-name stem of a program name: "gemm_bf16.cu" -> "gemm_bf16", and anything but
// [A-Za-z0-9_.-] becomes '_' so a name can never leave the dump directory.
std::string stem_of(std::string_view name) {
  if (name.size() > 3 && name.substr(name.size() - 3) == ".cu") name.remove_suffix(3);
  std::string stem;
  for (const char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
    stem.push_back(keep ? c : '_');
  }
  if (stem.empty() || stem.front() == '.') stem.insert(stem.begin(), 'k');
  return stem;
}

Status write_file(const std::filesystem::path& path, std::string_view contents) {
  errno = 0;  // the stream keeps no reason; the failed call's errno is it
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  const int error = errno;
  FG_CHECK(out.good(), ErrorCode::kIo,
           "dump: cannot write '" + path.string() + "'" +
               (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
  return Status::ok();
}

std::string command_text(const KernelSource& source, const CompileOptions& options,
                         const std::filesystem::path& headers_dir) {
  std::string text = "# nvrtcCreateProgram: name '" + source.name + "'";
  if (!source.headers.empty()) {
    text += ", headers given in memory (copies under " + headers_dir.string() + "):";
    for (const auto& [name, contents] : source.headers) text += " " + name;
  }
  text += "\n# nvrtcCompileProgram options, one a line:\n";
  for (const std::string& option : nvrtc_options(options)) text += option + "\n";
  return text;
}

}  // namespace

Result<std::string> dump_tag(const KernelSource& source, const CompileOptions& options) {
  Digest digest;
  digest.add(source.name)
      .add(source.code)
      .add_int(static_cast<std::int64_t>(source.headers.size()));
  for (const auto& [name, contents] : source.headers) digest.add(name).add(contents);
  for (const std::string& flag : compile_flags(options)) digest.add(flag);
  FG_ASSIGN_OR_RETURN(const std::string hex, digest.finish_hex());
  return hex.substr(0, 16);
}

std::filesystem::path default_dump_dir() {
  std::error_code ec;
  std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (ec) temp = "/tmp";
  return temp / "fusedgemm";
}

Result<DumpedFiles> dump_compile(const std::filesystem::path& dir, const KernelSource& source,
                                 const CompileOptions& options, std::string_view log) {
  FG_ASSIGN_OR_RETURN(const std::string tag, dump_tag(source, options));
  const std::string base = stem_of(source.name) + "-" + tag;
  DumpedFiles files{.source = dir / (base + ".cu"),
                    .log = dir / (base + ".log"),
                    .command = dir / (base + ".cmd"),
                    .headers = dir / (base + ".include")};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  FG_CHECK(!ec, ErrorCode::kIo,
           "dump: cannot create directory '" + dir.string() + "': " + ec.message());
  FG_TRY(write_file(files.source, source.code));
  FG_TRY(write_file(files.log, log));
  FG_TRY(write_file(files.command, command_text(source, options, files.headers)));
  for (const auto& [name, contents] : source.headers) {
    // An include name may hold folders ("kernels/ptx/tma.cuh"), never a way out of `dir`.
    const std::filesystem::path relative = std::filesystem::path(name).lexically_normal();
    FG_CHECK(relative.is_relative() && !relative.empty() && *relative.begin() != "..",
             ErrorCode::kInvalidArgument, "dump: header name '" + name + "' leaves the folder");
    const std::filesystem::path path = files.headers / relative;
    std::filesystem::create_directories(path.parent_path(), ec);
    FG_CHECK(
        !ec, ErrorCode::kIo,
        "dump: cannot create directory '" + path.parent_path().string() + "': " + ec.message());
    FG_TRY(write_file(path, contents));
  }
  return files;
}

}  // namespace fusedgemm::jit
