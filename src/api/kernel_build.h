// The generated-kernel half of build(): epilogue and kernel source from a recipe, compiled
// (or found in the Context's cache) into the image a CUDA device loads. Also what
// `fusedgemm compile` runs to warm a cache ahead of time without a GPU.
#pragma once

#include <memory>

#include "fusedgemm/context.h"
#include "fusedgemm/status.h"
#include "jit/context.h"
#include "recipe/recipe.h"
#include "runtime/device.h"

namespace fusedgemm::api {

struct FusedKernel {
  runtime::KernelImage image;
  jit::CompileResult compiled;  // the cubin, its ptxas report, and whether the cache served it
};

// Settles recipe.config's shared memory and block size from the generated source.
Result<FusedKernel> compile_fused_kernel(recipe::Recipe& recipe, Context& context);

}  // namespace fusedgemm::api
