#include "jit/dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
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

// Never through a symbolic link at the file's name (O_NOFOLLOW): one planted in a shared
// folder would have a dump overwrite whatever it points at.
Status write_file(const std::filesystem::path& path, std::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  FG_CHECK(fd >= 0, ErrorCode::kIo,
           "dump: cannot write '" + path.string() + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return Status(ErrorCode::kIo,
                    "dump: cannot write '" + path.string() + "': " + std::strerror(error));
    }
    done += static_cast<std::size_t>(n);
  }
  FG_CHECK(::close(fd) == 0, ErrorCode::kIo,
           "dump: cannot write '" + path.string() + "': " + std::strerror(errno));
  return Status::ok();
}

// The default folder lies in the shared temporary folder: it must be a folder (no link) of
// this user, and is kept to this user alone (mode 0700), so no one else can read or redirect
// the dumps. (In a sticky temporary folder no one else can replace it between the checks.)
Status keep_own_folder(const std::filesystem::path& dir) {
  struct stat info {};
  FG_CHECK(::lstat(dir.c_str(), &info) == 0, ErrorCode::kIo,
           "dump: cannot read '" + dir.string() + "': " + std::strerror(errno));
  FG_CHECK(S_ISDIR(info.st_mode) && info.st_uid == ::geteuid(), ErrorCode::kIo,
           "dump: '" + dir.string() +
               "' is not a folder of this user (another user's, or a link); legal: remove it, "
               "or set FUSEDGEMM_DUMP_DIR");
  if ((info.st_mode & 077) != 0) {
    FG_CHECK(::chmod(dir.c_str(), 0700) == 0, ErrorCode::kIo,
             "dump: cannot keep '" + dir.string() + "' to this user: " + std::strerror(errno));
  }
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

std::filesystem::path default_dump_dir(const std::filesystem::path& temp_dir) {
  return temp_dir / ("fusedgemm-" + std::to_string(::geteuid()));
}

Result<DumpedFiles> dump_compile(const std::filesystem::path& dir, DumpFolder folder,
                                 const KernelSource& source, const CompileOptions& options,
                                 std::string_view log) {
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
  if (folder == DumpFolder::kDefault) FG_TRY(keep_own_folder(dir));
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
