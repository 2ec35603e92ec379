// The one parameter every fusedgemm kernel takes, by value. Shared by host code and by the
// generated device code (NVRTC has no host headers, so this file includes none).
//
// Layout of a launch: the problem size of this call, then one BufferArg per kernel
// parameter in the recipe's argument-plan order (the recipe says which role fills each).
// Extents and strides are in elements and in the KERNEL's axis order: A (b, M, K),
// B (b, N, K), aux/outputs/taps (b, M, N), block scales (b, rows/blk, cols/blk). A
// broadcast axis carries stride 0, so aux of every broadcast mode is read by one formula.
#pragma once

namespace fusedgemm::kernels {

// Buffers one kernel can address; the support gate declines graphs that need more.
inline constexpr int kMaxKernelBuffers = 16;

struct BufferArg {
  void* data;
  long long shape[3];
  long long stride[3];
};

struct KernelArgs {
  long long batch;
  long long m;
  long long n;
  long long k;
  int buffer_count;
  BufferArg buffers[kMaxKernelBuffers];
};

}  // namespace fusedgemm::kernels
