// Per-warpgroup register budgets. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Raises (inc) or lowers (dec) the registers each thread of this warpgroup may hold to
// `Count`; every warp of the warpgroup executes the same one. Takes effect only when the
// kernel has a register cap at entry (__launch_bounds__(threads, 1)); ptxas warns (C7508)
// when it cannot honour it.
//   PTX: setmaxnreg.inc.sync.aligned.u32 n; setmaxnreg.dec.sync.aligned.u32 n;
//   PTX ISA 8.0, sm_90a.
template <int Count>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes a multiple of 8 in [24, 256]: fix the register split");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Count));
}
template <int Count>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes a multiple of 8 in [24, 256]: fix the register split");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Count));
}

}  // namespace fusedgemm::kernels::ptx
