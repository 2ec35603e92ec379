// Programmatic dependent launch: a kernel launched with the programmatic stream
// serialization attribute may start while the previous kernel on its stream still runs.
// Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Blocks until every prerequisite grid has completed and its memory is visible; returns at
// once in a grid launched without the attribute.
//   PTX: griddepcontrol.wait;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ void grid_dependency_wait() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

// Lets the next grid on the stream be scheduled once every CTA of this one has executed it
// (or exited); that grid's griddepcontrol.wait still waits for this one to complete.
//   PTX: griddepcontrol.launch_dependents;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ void grid_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace fusedgemm::kernels::ptx
