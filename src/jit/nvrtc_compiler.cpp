#include "jit/nvrtc_compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <memory>
#include <system_error>

#include "jit/dump.h"

#ifndef FUSEDGEMM_CUDA_INCLUDE_DIR
#error "CMake passes FUSEDGEMM_CUDA_INCLUDE_DIR, the CUDA toolkit's include directory"
#endif

namespace fusedgemm::jit {
namespace {

// Flags every kernel is compiled with; part of the key through compile_flags().
//   -std=c++17: the newest dialect NVRTC and our kernel headers agree on.
//   --ptxas-options=-v: the log then carries registers, spills and shared memory
//     (ptxas_report.h), which the tile configuration is judged by.
//   -default-device: generated helpers need no __device__ on every function.
//   -lineinfo: profilers map SASS back to the dumped source at no runtime cost.
constexpr const char* kFixedFlags[] = {"-std=c++17", "--ptxas-options=-v", "-default-device",
                                       "-lineinfo"};

struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// The kCompile error of a failed NVRTC call: names the call and the error, dumps the source
// so it can be read and recompiled by hand, and carries the full log.
Status compile_error(std::string_view call, nvrtcResult result, const KernelSource& source,
                     const CompileOptions& options, const std::string& log) {
  // No environment is read here, on the thread that failed: a Context passes the folder
  // it resolved when created; a bare compile() falls back to /tmp (compile_types.h).
  const bool fallback = options.dump_dir.empty();
  const Result<DumpedFiles> dumped =
      dump_compile(fallback ? default_dump_dir(kFallbackTempDir) : options.dump_dir,
                   fallback ? DumpFolder::kDefault : options.dump_folder, source, options, log);
  std::string message = std::string(call) + ": " + nvrtcGetErrorString(result) + " compiling '" +
                        source.name + "' for " + options.arch + "; ";
  message += dumped ? "source dumped to " + dumped->source.string()
                    : "source not dumped (" + dumped.status().message() + ")";
  message += log.empty() ? "; empty log" : "; log:\n" + log;
  return Status(ErrorCode::kCompile, std::move(message));
}

std::vector<std::string> include_dirs_from(const std::filesystem::path& include_dir) {
  std::vector<std::string> dirs = {include_dir.string()};
  std::error_code ec;
  if (std::filesystem::is_directory(include_dir / "cccl", ec)) {
    dirs.push_back((include_dir / "cccl").string());
  }
  return dirs;
}

}  // namespace

Result<NvrtcVersion> nvrtc_version() {
  NvrtcVersion version;
  const nvrtcResult result = nvrtcVersion(&version.major, &version.minor);
  FG_CHECK(result == NVRTC_SUCCESS, ErrorCode::kUnavailable,
           std::string("nvrtcVersion: ") + nvrtcGetErrorString(result));
  return version;
}

std::vector<std::string> compile_flags(const CompileOptions& options) {
  std::vector<std::string> flags = {"-arch=" + options.arch};
  flags.insert(flags.end(), std::begin(kFixedFlags), std::end(kFixedFlags));
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

std::vector<std::string> nvrtc_options(const CompileOptions& options) {
  std::vector<std::string> flags = compile_flags(options);
  const std::vector<std::string> dirs =
      options.include_dirs.value_or(configured_cuda_include_dirs());
  for (const std::string& dir : dirs) flags.push_back("-I" + dir);
  return flags;
}

std::vector<std::string> cuda_include_dirs(const std::string& cuda_home) {
  return include_dirs_from(std::filesystem::path(cuda_home) / "include");
}

std::vector<std::string> configured_cuda_include_dirs() {
  return include_dirs_from(FUSEDGEMM_CUDA_INCLUDE_DIR);
}

Result<CompiledKernel> compile(const KernelSource& source, const CompileOptions& options) {
  // The JIT hands back SASS; a virtual arch (compute_*) would only give PTX.
  FG_CHECK(options.arch.starts_with("sm_"), ErrorCode::kInvalidArgument,
           "compile: arch '" + options.arch + "' is not a real SM; legal: sm_90a and other sm_*");
  const auto start = std::chrono::steady_clock::now();

  std::vector<const char*> header_contents;
  std::vector<const char*> header_names;
  for (const auto& [name, contents] : source.headers) {
    header_names.push_back(name.c_str());
    header_contents.push_back(contents.c_str());
  }
  nvrtcProgram raw = nullptr;
  nvrtcResult result = nvrtcCreateProgram(&raw, source.code.c_str(), source.name.c_str(),
                                          static_cast<int>(header_names.size()),
                                          header_contents.data(), header_names.data());
  if (result != NVRTC_SUCCESS)
    return compile_error("nvrtcCreateProgram", result, source, options, {});
  const Program program(raw);

  const std::vector<std::string> flags = nvrtc_options(options);
  std::vector<const char*> flag_ptrs;
  for (const std::string& flag : flags) flag_ptrs.push_back(flag.c_str());
  result = nvrtcCompileProgram(program.get(), static_cast<int>(flag_ptrs.size()), flag_ptrs.data());
  CompiledKernel kernel;
  kernel.log = program_log(program.get());
  if (result != NVRTC_SUCCESS) {
    return compile_error("nvrtcCompileProgram", result, source, options, kernel.log);
  }

  std::size_t cubin_bytes = 0;
  result = nvrtcGetCUBINSize(program.get(), &cubin_bytes);
  if (result == NVRTC_SUCCESS) {
    kernel.cubin.resize(cubin_bytes);
    result = nvrtcGetCUBIN(program.get(), reinterpret_cast<char*>(kernel.cubin.data()));
  }
  if (result != NVRTC_SUCCESS)
    return compile_error("nvrtcGetCUBIN", result, source, options, kernel.log);

  kernel.resources = parse_ptxas_report(kernel.log);
  kernel.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return kernel;
}

}  // namespace fusedgemm::jit
