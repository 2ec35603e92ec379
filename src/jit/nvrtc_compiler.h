// Compiles one generated kernel with NVRTC into an sm_90a cubin (DESIGN.md section 4).
// No caching here: the Context puts the disk cache in front of this.
#pragma once

#include <string>
#include <vector>

#include "fusedgemm/status.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit {

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
};

// The version of the NVRTC library loaded in this process (nvrtcVersion).
Result<NvrtcVersion> nvrtc_version();

// The options that decide the generated code: -arch, the fixed flags every kernel gets,
// then `options.extra`. These, not the include paths, go into the cache key.
std::vector<std::string> compile_flags(const CompileOptions& options);

// compile_flags() plus -I for each include directory: what nvrtcCompileProgram receives.
std::vector<std::string> nvrtc_options(const CompileOptions& options);

// The CUDA toolkit's include directories under `cuda_home` (include/, and include/cccl/
// where CCCL lives since CUDA 13).
std::vector<std::string> cuda_include_dirs(const std::string& cuda_home);

// The toolkit include directories found when fusedgemm was configured.
std::vector<std::string> configured_cuda_include_dirs();

// Compiles `source`. A failure is kCompile naming the NVRTC call and error, with the path
// of the dumped source and the full log.
Result<CompiledKernel> compile(const KernelSource& source, const CompileOptions& options);

}  // namespace fusedgemm::jit
