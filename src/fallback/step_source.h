// The CUDA source of a fallback program's step kernels: one translation unit, one entry
// per step that is not a matmul (matmuls run on cuBLASLt), compiled by the same NVRTC path
// and cache as fused kernels. Each entry takes the one KernelArgs: buffers[0] is the
// result (quantize: values, then scales), the step's inputs follow; batch, m and n are the
// extents the step iterates (the result's; quantize: the scales').
#pragma once

#include <string>
#include <vector>

#include "fallback/program.h"
#include "fusedgemm/status.h"
#include "jit/compile_types.h"

namespace fusedgemm::fallback {

struct StepSource {
  jit::KernelSource source;
  std::vector<std::string> entries;  // per step; empty for matmul steps
};

Result<StepSource> generate_step_source(const Program& program);

// The type a step reads value `v` as: fp32 in the workspace, else the caller buffer's.
DataType storage_type(const Program& program, int v);

}  // namespace fusedgemm::fallback
