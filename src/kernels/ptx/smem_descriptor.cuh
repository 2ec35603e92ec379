// The shared-memory matrix descriptor wgmma reads its operands through (PTX ISA "Matrix
// Descriptor Format" for wgmma, sm_90a). Device code; no host headers (NVRTC).
//
// Bits: 0-13 start address >> 4; 16-29 leading dimension byte offset (LBO) >> 4;
// 32-45 stride dimension byte offset (SBO) >> 4; 49-51 base offset; 62-63 swizzle mode
// (0 none, 1 128B, 2 64B, 3 32B).
//
// With the 128B swizzle, in 16-byte units (CuTe notation: (shape):(stride), the canonical
// layouts of the PTX ISA's "Shared Memory Matrix Layout"):
//   K-major  ((8, n), 2) : ((8, SBO), 1)         rows of 128 bytes along K; 8-row groups SBO
//                                                apart; LBO unused (set to 1).
//   MN-major ((8, n), (8, k)) : ((1, LBO), (8, SBO))
//                                                128 bytes = 64 MN-elements contiguous;
//                                                64-element MN blocks LBO apart; 8 K-rows of
//                                                128 bytes, then 8-row K groups SBO apart.
// The base offset stays 0 because every 1024-byte swizzle atom we address starts on a
// 1024-byte boundary (K-major steps inside an atom move the start address only, as the
// swizzle is a function of the address bits).
#pragma once

namespace fusedgemm::kernels::ptx {

// The 128B-swizzle layout type (bits 62-63).
inline constexpr unsigned long long kDescriptorSwizzle128B = 1ull << 62;

__device__ __forceinline__ unsigned long long smem_descriptor_sw128(unsigned smem_addr,
                                                                    unsigned leading_bytes,
                                                                    unsigned stride_bytes) {
  const unsigned long long start = (smem_addr & 0x3FFFFu) >> 4;
  const unsigned long long leading = (leading_bytes >> 4) & 0x3FFFu;
  const unsigned long long stride = (stride_bytes >> 4) & 0x3FFFu;
  return start | (leading << 16) | (stride << 32) | kDescriptorSwizzle128B;
}

}  // namespace fusedgemm::kernels::ptx
