// What a generated kernel tells the sm90 mainloop (kernels/gemm_sm90.cuh): the operand table,
// the tile shape, the stage count; and the shared-memory layout that follows from them.
// Device code; no host headers (NVRTC).
//
// The generated translation unit defines one config struct of this shape:
//
//   struct FusedgemmConfig {
//     static constexpr int kTileM = 128;         // 64 or 128
//     static constexpr int kTileN = 128;         // 64 or 128
//     static constexpr int kStages = 3;          // TMA ring depth
//     static constexpr int kOperandCount = 2;    // distinct (buffer, role) operands
//     static constexpr OperandSpec kOperands[kOperandCount] = {...};
//     static constexpr int kGemmCount = 1;
//     static constexpr int kGemmA[kGemmCount] = {0};  // operand index of each GEMM's A
//     static constexpr int kGemmB[kGemmCount] = {1};  // ... and of its B
//     static constexpr int kEpilogueScratchBytes = 0;
//   };
//
// Operand o is read through the TMA descriptor KernelArgs::tma[kOperands[o].tma_slot], which
// the host encodes from kernel parameter kOperands[o].param (codegen/tma_plan.h).
#pragma once

#include "kernels/kernel_args.h"
#include "kernels/ptx/wgmma.cuh"

namespace fusedgemm::kernels {

enum class OperandRole : int { kA, kB };
// kK: K is the unit-stride axis. kMN: M (for A) or N (for B) is.
enum class OperandMajor : int { kK, kMN };

struct OperandSpec {
  int param;     // index into KernelArgs::buffers (the recipe role's kernel parameter)
  int tma_slot;  // index into KernelArgs::tma
  OperandRole role;
  OperandMajor major;
  ptx::MmaType type;
};

__host__ __device__ constexpr int element_bytes(ptx::MmaType type) {
  return type == ptx::MmaType::kBf16 || type == ptx::MmaType::kF16 ? 2 : 1;
}

// Shared memory of one CTA, from a base aligned to kAtomBytes (the kernel aligns the
// dynamic shared-memory pointer up at run time; kDynamicBytes includes the slack):
//
//   [0, kRingBytes)           kStages stages of kStageBytes; stage s at s * kStageBytes holds
//                             every operand's tile for one K step of kTileKBytes bytes,
//                             operand o at operand_offset(o), in TMA's 128B-swizzled form:
//       K-major operand:  rows(o) rows of 128 bytes (kTileK elements along K), one TMA box
//                         {kTileK, rows(o), 1}; 8-row atoms of 1024 bytes.
//       MN-major operand: rows(o) / 64 boxes of kMnBoxBytes, box h holding MN elements
//                         [64h, 64h + 64) as kTileK K-rows of 128 bytes (64 elements), one
//                         TMA box {64, kTileK, 1} each.
//   [0, kEpilogueScratchBytes) the epilogue's scratch ALIASES the ring: the mainloop returns
//                             only after every issued load landed and every wgmma completed.
//   [kBarrierOffset, +8 * kStages) one "full" mbarrier per stage (arrival count 1: thread 0's
//                             arrive.expect_tx; the TMA bytes complete the phase).
template <class Config>
struct GemmSm90Layout {
  // One 128-byte row per K step: the widest TMA swizzle span and wgmma's 128B layout.
  static constexpr int kSwizzleBytes = 128;
  // 8 rows of 128 bytes: the unit the 128B swizzle repeats over; tiles start on it so the
  // descriptors' base offset stays 0.
  static constexpr int kAtomBytes = 1024;
  static constexpr int kElementBytes = element_bytes(Config::kOperands[0].type);
  static constexpr int kTileKBytes = kSwizzleBytes;
  static constexpr int kTileK = kTileKBytes / kElementBytes;  // 64 (16-bit) or 128 (fp8)
  // An MN-major box is 64 MN-elements (128 bytes) wide and kTileK K-rows deep.
  static constexpr int kMnBoxElems = kSwizzleBytes / kElementBytes;
  static constexpr int kMnBoxBytes = kTileK * kSwizzleBytes;

  __host__ __device__ static constexpr int rows(int o) {
    return Config::kOperands[o].role == OperandRole::kA ? Config::kTileM : Config::kTileN;
  }
  __host__ __device__ static constexpr int operand_bytes(int o) { return rows(o) * kTileKBytes; }
  __host__ __device__ static constexpr int operand_offset(int o) {
    int offset = 0;
    for (int i = 0; i < o; ++i) offset += operand_bytes(i);
    return offset;
  }
  static constexpr int kStageBytes = operand_offset(Config::kOperandCount);
  static constexpr int kRingBytes = kStageBytes * Config::kStages;
  static constexpr int kBarrierOffset =
      ((kRingBytes > Config::kEpilogueScratchBytes ? kRingBytes : Config::kEpilogueScratchBytes) +
       7) /
      8 * 8;
  static constexpr int kBytes = kBarrierOffset + 8 * Config::kStages;
  static constexpr int kDynamicBytes = kBytes + kAtomBytes;  // + slack to align the base up
  // Hopper's per-block dynamic shared-memory limit (227 KB, CUDA C++ Programming Guide,
  // compute capability 9.0).
  static constexpr int kMaxDynamicBytes = 227 * 1024;

  static_assert(Config::kTileM == 64 || Config::kTileM == 128,
                "TileM must be 64 or 128: change choose_kernel_config");
  static_assert(Config::kTileN == 64 || Config::kTileN == 128,
                "TileN must be 64 or 128 (the wgmma wrapper's N): change choose_kernel_config");
  static_assert(Config::kStages >= 1, "kStages must be at least 1: change choose_kernel_config");
  static_assert(Config::kOperandCount >= 2 && Config::kOperandCount <= kMaxTmaDescriptors,
                "one TMA descriptor per operand: at most kMaxTmaDescriptors operands");
  static_assert(kStageBytes % kAtomBytes == 0,
                "every operand tile must span whole 1024-byte swizzle atoms: rows multiple of 8");
  static_assert(kDynamicBytes <= kMaxDynamicBytes,
                "shared memory over 227 KB: lower kStages or the tile in choose_kernel_config");
};

}  // namespace fusedgemm::kernels
