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

// The default dump directory of a failed compile: <temp>/fusedgemm-<effective uid>, which
// dump_compile keeps to this user alone (mode 0700) and refuses when it is not.
std::filesystem::path default_dump_dir();

// Writes the files of one compile into `dir` (created if missing), never through a
// symbolic link at a file's name. `log` may be empty.
Result<DumpedFiles> dump_compile(const std::filesystem::path& dir, const KernelSource& source,
                                 const CompileOptions& options, std::string_view log);

}  // namespace fusedgemm::jit
