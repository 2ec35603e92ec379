// The fallback program on the host device: each step as a loop over host memory, with the
// host device's fp32 formulas (runtime/host_math.h) and element conversions
// (runtime/numeric.h), in the order and with the rounding of the CUDA step kernels. CI runs
// declined graphs through it.
#pragma once

#include <memory>

#include "fallback/program.h"
#include "runtime/runner.h"

namespace fusedgemm::fallback {

std::shared_ptr<const runtime::Runner> make_host_runner(std::shared_ptr<const Program> program);

}  // namespace fusedgemm::fallback
