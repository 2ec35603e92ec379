// How the host encodes one TMA descriptor (CUtensorMap) of a generated kernel at each launch.
// The kernel generator writes one TmaPlan per operand, per TMA-stored output and per
// TMA-loaded aux (the epilogue's tiles, `tile_bit` >= 0); the CUDA device encodes
// KernelArgs::tma[slot] from it and the call's BufferArg of kernel parameter `param`. A tile's
// plan is encoded only where recipe::tma_storable holds for the call (a layout TMA can write,
// it can read), which sets bit tile_bit of KernelArgs::tma_tiles; elsewhere the bit is clear
// and the epilogue stores and loads directly.
//
// Encoding with the driver API, for BufferArg `buf` = KernelArgs::buffers[param]
// (extents and strides in elements, kernel axis order):
//
//   cuTensorMapEncodeTiled(&args.tma[slot],
//     dataType:        by element_bytes: 2 -> CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 (or FLOAT16 or
//                      UINT16: a copy moves bytes, any 2-byte type gives the same result),
//                      1 -> CU_TENSOR_MAP_DATA_TYPE_UINT8 (fp8),
//     tensorRank:      3,
//     globalAddress:   buf.data (16-byte aligned; the rules guarantee it),
//     globalDim, globalStrides: recipe::tma_global(buf's layout, axes, element bits), the
//                      one computation the tma_limits rule checks and the host device reads
//                      through: globalDim[i] = buf.shape[axes[i]]; globalStrides[i - 1] =
//                      buf.stride[axes[i]] * element_bytes, except on an axis of extent 1
//                      (stride 0 there), which gets the packed span of the faster dimensions —
//                      the kernel only reads coordinate 0 on it. A stride is never replaced
//                      on an axis of extent > 1; a batch of stride 0 arrives as extent 1,
//     boxDim:          box (elements; box[0] * element_bytes <= swizzle_bytes),
//     elementStrides:  {1, 1, 1},
//     interleave:      CU_TENSOR_MAP_INTERLEAVE_NONE,
//     swizzle:         swizzle_bytes 128 -> CU_TENSOR_MAP_SWIZZLE_128B (64 -> _64B, 32 -> _32B,
//                      0 -> _NONE),
//     l2Promotion:     CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
//     oobFill:         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (out-of-bounds elements read as zero;
//                      partial tiles and K tails depend on it)).
//
// The kernel's coordinates are in the same dimension order: for a K-major operand
// {k, m or n, batch}; for an M-/N-major one {m or n, k, batch}; batch is 0 where
// buf.shape[0] == 1 (a broadcast operand).
#pragma once

#include <array>
#include <cstdint>

namespace fusedgemm::codegen {

struct TmaPlan {
  int param = 0;  // kernel parameter (KernelArgs::buffers index) the box is over
  int slot = 0;   // KernelArgs::tma index the descriptor goes to
  std::uint32_t element_bytes = 2;
  std::array<int, 3> axes{2, 1, 0};  // kernel axes, fastest (unit-stride) first
  std::array<std::uint32_t, 3> box{64, 64, 1};
  std::uint32_t swizzle_bytes = 128;  // 0, 32, 64 or 128
  int tile_bit = -1;  // an epilogue tile's bit of KernelArgs::tma_tiles; -1: an operand
  bool operator==(const TmaPlan&) const = default;
};

}  // namespace fusedgemm::codegen
