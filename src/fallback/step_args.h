// The arguments of one fallback step in one call: the same KernelArgs a step kernel takes
// (step_source.h says which buffer is which), built from the program's values and the
// call's addresses and layouts. The host runner executes exactly these arguments.
#pragma once

#include "fallback/program.h"
#include "kernels/kernel_args.h"
#include "recipe/call_view.h"

namespace fusedgemm::fallback {

// Value `v` in this call: a caller buffer's address and layout (declared axis order), or
// its workspace copy (dense fp32); stride 0 on every axis of extent 1.
kernels::BufferArg value_arg(const Program& program, const recipe::CallView& view, int v);

// buffers[0] the result (store: the caller buffer; quantize: values, then scales), then
// the inputs; batch, m, n the extents the step iterates.
kernels::KernelArgs step_args(const Program& program, const recipe::CallView& view,
                              const Step& step);

}  // namespace fusedgemm::fallback
