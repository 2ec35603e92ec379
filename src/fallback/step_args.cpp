#include "fallback/step_args.h"

namespace fusedgemm::fallback {
namespace {

kernels::BufferArg arg_of(void* data, const Layout& layout) {
  kernels::BufferArg a{};
  a.data = data;
  for (int axis = 0; axis < kRank; ++axis) {
    a.shape[axis] = layout.shape[axis];
    a.stride[axis] = layout.shape[axis] == 1 ? 0 : layout.stride[axis];
  }
  return a;
}

}  // namespace

kernels::BufferArg value_arg(const Program& program, const recipe::CallView& view, int v) {
  const Value& value = program.values[v];
  if (value.in_workspace()) {
    auto* base = static_cast<std::uint8_t*>(const_cast<void*>(view.workspace));
    return arg_of(base + value.offset, Layout::row_major(value.dims));
  }
  return arg_of(const_cast<void*>(view.data[value.buffer]), view.layout->roles[value.buffer].given);
}

kernels::KernelArgs step_args(const Program& program, const recipe::CallView& view,
                              const Step& step) {
  kernels::KernelArgs args{};
  int n = 0;
  if (step.kind == StepKind::kStore) {
    args.buffers[n++] =
        arg_of(const_cast<void*>(view.data[step.buffer]), view.layout->roles[step.buffer].given);
  } else {
    args.buffers[n++] = value_arg(program, view, step.out);
  }
  if (step.out2 >= 0) args.buffers[n++] = value_arg(program, view, step.out2);
  for (int v : step.in) args.buffers[n++] = value_arg(program, view, v);
  args.buffer_count = n;
  // Quantize iterates its scales; every other step its result.
  const kernels::BufferArg& domain = args.buffers[step.kind == StepKind::kQuantize ? 1 : 0];
  args.batch = domain.shape[0];
  args.m = domain.shape[1];
  args.n = domain.shape[2];
  args.k = step.kind == StepKind::kMatmul ? program.values[step.in[0]].dims[2] : 1;
  args.workspace = const_cast<void*>(view.workspace);
  return args;
}

}  // namespace fusedgemm::fallback
