// The generated-kernel half of build(): epilogue and kernel source from a recipe, compiled
// (or found in the Context's cache) into the image a CUDA device loads. Also what
// `fusedgemm compile` runs to warm a cache ahead of time without a GPU.
#pragma once

#include <memory>

#include "codegen/kernel_source.h"
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

// The kernel's source (the generated epilogue in the mainloop's translation unit), not
// compiled: fails where the generator refuses the recipe, with a "kernel_*" id for what it
// does not emit yet (kUnavailable).
Result<codegen::KernelSource> generate_fused_source(const recipe::Recipe& recipe);

// Settles recipe.config's shared memory and block size from the generated source.
Result<FusedKernel> compile_fused_kernel(recipe::Recipe& recipe, Context& context);

}  // namespace fusedgemm::api
