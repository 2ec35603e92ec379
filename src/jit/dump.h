// Writes a compile's source, headers, log and NVRTC options to a directory, so a failed
// or suspicious kernel can be read and recompiled by hand (STYLE.md rules 5 and 23).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit {

struct DumpedFiles {
  std::filesystem::path source;   // <dir>/<stem>-<tag>.cu
  std::filesystem::path log;      // <dir>/<stem>-<tag>.log
  std::filesystem::path command;  // <dir>/<stem>-<tag>.cmd: the NVRTC options, one a line
  std::filesystem::path headers;  // <dir>/<stem>-<tag>.include/: the in-memory headers
};

// The first 16 hex digits of a digest of the name, code, headers and compile flags, so
// the dumps of different kernels (or of one kernel under different options) never collide
// and a recompile of the same one overwrites its own files.
Result<std::string> dump_tag(const KernelSource& source, const CompileOptions& options);

// The temporary folder of a failed compile's default dump when none is known: a Context
// reads TMPDIR when it is created (ContextSettings::failure_dump_dir); a bare compile()
// reads no environment and uses this.
inline constexpr const char* kFallbackTempDir = "/tmp";

// The default dump directory of a failed compile: <temp_dir>/fusedgemm-<effective uid>.
// Reads no environment: getenv on whichever thread fails a compile would race a setenv on
// another, so the Context resolves `temp_dir` once, when it is created (STYLE.md rule 23).
std::filesystem::path default_dump_dir(const std::filesystem::path& temp_dir);

// Writes the files of one compile into `dir` (created if missing), never through a
// symbolic link at a file's name. `log` may be empty.
Result<DumpedFiles> dump_compile(const std::filesystem::path& dir, DumpFolder folder,
                                 const KernelSource& source, const CompileOptions& options,
                                 std::string_view log);

}  // namespace fusedgemm::jit
