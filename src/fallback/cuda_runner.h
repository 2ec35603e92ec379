// The fallback program on a CUDA device: matmuls through cuBLASLt, every other step as a
// generated kernel (step_source.h) compiled by the Context's NVRTC path and cache, all on
// the caller's stream in program order.
#pragma once

#include <memory>

#include "fallback/program.h"
#include "fusedgemm/context.h"
#include "runtime/device.h"
#include "runtime/runner.h"

namespace fusedgemm::fallback {

// Compiles and loads the step kernels and chooses each matmul's cuBLASLt algorithm.
Result<std::shared_ptr<const runtime::Runner>> make_cuda_runner(
    std::shared_ptr<const Program> program, std::shared_ptr<runtime::Device> device,
    Context& context);

}  // namespace fusedgemm::fallback
