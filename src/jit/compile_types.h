// What the JIT compiles and what it hands back: plain values shared by the NVRTC
// compiler, the disk cache and the Context.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/ptxas_report.h"

namespace fusedgemm::jit {

struct KernelSource {
  // The program name given to NVRTC: it appears in the log and, through -lineinfo, in the
  // cubin, so it is part of the cache key. A name such as "gemm_bf16.cu", not a path.
  std::string name;
  std::string code;
  // Include name -> contents, handed to nvrtcCreateProgram so the generated code can
  // #include our hand-written headers with no file system.
  std::vector<std::pair<std::string, std::string>> headers;
};

// How a dump folder is treated (jit/dump.h dump_compile).
enum class DumpFolder {
  kChosen,   // FUSEDGEMM_DUMP_DIR or CompileOptions::dump_dir: written as it is
  kDefault,  // a default_dump_dir() in a shared temporary folder: kept to this user alone
             // (mode 0700), refused when not
};

struct CompileOptions {
  std::string arch = "sm_90a";     // must name a real SM ("sm_*"): the JIT returns a cubin
  std::vector<std::string> extra;  // further NVRTC options; part of the cache key
  // -I directories of the CUDA toolkit. Unset: the Context's (CUDA_HOME), or for a bare
  // compile() the toolkit found at configure time. Never part of the cache key (rule 11);
  // the NVRTC version stands for the toolkit.
  std::optional<std::vector<std::string>> include_dirs;
  // Where a failed compile dumps its source, log and options; not part of the cache key.
  // A Context passes FUSEDGEMM_DUMP_DIR, else its ContextSettings::failure_dump_dir (as
  // DumpFolder::kDefault). Empty: /tmp/fusedgemm-<euid> (kDefault), for a bare compile(),
  // which reads no environment (the library compiles through a Context).
  std::filesystem::path dump_dir;
  DumpFolder dump_folder = DumpFolder::kChosen;
};

struct CompiledKernel {
  std::vector<std::uint8_t> cubin;  // an ELF image of SASS for `arch`
  std::string log;                  // NVRTC's log, including the ptxas -v lines
  PtxasReport resources;            // parsed from `log`
  double compile_seconds = 0;       // NVRTC wall time when this kernel was first compiled
};

}  // namespace fusedgemm::jit
