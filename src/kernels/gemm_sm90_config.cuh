// What a generated kernel tells the sm90 mainloop (kernels/gemm_sm90.cuh): the operand table,
// the CTA tile and how its two consumer warpgroups share it, the cluster, the stage count;
// and the shared-memory layout that follows from them. Device code; no host headers (NVRTC).
//
// The generated translation unit defines one config struct of this shape:
//
//   struct FusedgemmConfig {
//     static constexpr int kTileM = 128;          // CTA tile: 64, 128 or 256 rows
//     static constexpr int kTileN = 256;          // 64 to 256 columns: 64, 128, 160, 192, 256
//     static constexpr auto kSplit = ConsumerSplit::kM;  // consumer c takes half the rows
//                                                   // (kN: columns; kPingPong: whole tiles)
//     static constexpr int kClusterM = 1;         // CTAs of a cluster along M (sharing B)
//     static constexpr int kClusterN = 1;         // ... along N (sharing A)
//     static constexpr int kStages = 4;           // TMA ring depth
//     static constexpr bool kDependentLaunch = false;  // griddepcontrol (PDL)
//     static constexpr int kOperandCount = 2;     // distinct (buffer, role) operands
//     static constexpr OperandSpec kOperands[kOperandCount] = {...};
//     static constexpr int kGemmCount = 1;
//     static constexpr int kGemmA[kGemmCount] = {0};  // operand index of each GEMM's A
//     static constexpr int kGemmB[kGemmCount] = {1};  // ... and of its B
//     static constexpr int kEpilogueScratchBytes = 0;  // per consumer warpgroup
//     static constexpr int kStagedOutputs = 1;  // outputs staged for TMA stores
//     static constexpr int kStagedBuffers = 2;  // per staged output (1 to 8; default 2)
//     static constexpr int kBorrowedBuffers = 2;  // per consumer, from the last K step's stage
//     static constexpr int kStoresAfterBorrowed = 2;  // a unit's stores after the borrowed ones
//     static constexpr int kLoadedAux = 0;      // full aux inputs loaded through TMA
//     static constexpr int kAuxBuffers = 1;     // per loaded aux and consumer (1 to 4)
//   };
//
// Operand o is read through the TMA descriptor KernelArgs::tma[kOperands[o].tma_slot], which
// the host encodes from kernel parameter kOperands[o].param (codegen/tma_plan.h).
#pragma once

#include "kernels/kernel_args.h"  // kStagedBufferBytes
#include "kernels/ptx/wgmma.cuh"

namespace fusedgemm::kernels {

enum class OperandRole : int { kA, kB };
// kK: K is the unit-stride axis. kMN: M (for A) or N (for B) is.
enum class OperandMajor : int { kK, kMN };
// How the two consumer warpgroups share the CTA's tiles: kM, consumer c computes rows
// [c * TileM / 2, (c + 1) * TileM / 2) of every tile; kN, columns likewise; each one's half
// is its epilogue unit (kernels/epilogue_contract.cuh). kPingPong, consumer c computes
// whole tiles, the CTA's tiles c, c + 2, ...: one runs its epilogue while the other's MMAs
// keep the tensor cores busy, and the unit is the tile.
enum class ConsumerSplit : int { kM, kN, kPingPong };

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
//   [0, kRingBytes)          kStages stages of kStageBytes; stage s at s * kStageBytes holds
//                            every operand's tile for one K step of kTileKBytes bytes,
//                            operand o at operand_offset(o), in TMA's 128B-swizzled form:
//       K-major operand:  rows(o) rows of 128 bytes (kTileK elements along K); 8-row atoms
//                         of 1024 bytes. TMA boxes {kTileK, load_rows(o), 1}.
//       MN-major operand: rows(o) / 64 boxes of kMnBoxBytes, box h holding MN elements
//                         [64h, 64h + 64) as kTileK K-rows of 128 bytes (64 elements), one
//                         TMA box {64, kTileK, 1} each.
//                         An operand the cluster shares (shared(o)) is loaded in parts: the
//                         CTA of rank r loads rows [r * load_rows(o), (r + 1) * load_rows(o))
//                         and multicasts them to every CTA of the cluster.
//                         Consumer c's epilogue borrows kBorrowedBuffers staging buffers
//                         of the stage its unit's last K step read, at stage + c *
//                         kBorrowedBuffers * kStagedBufferBytes (the whole stage is free
//                         once both consumers' MMAs on it are done), and hands the stage
//                         back once its stores have read them (kernels/gemm_sm90.cuh).
//   [kStagingOffset, + 2 * kStagingStride)  consumer c's staging for TMA-stored outputs at
//                            kStagingOffset + c * kStagingStride: kStagedOutputs x
//                            kStagedBuffers buffers of kStagedBufferBytes
//                            (kernels/epilogue_store.cuh), 1024-aligned
//                            for the 128B swizzle
//   [kAuxOffset, + 2 * kAuxStride)  consumer c's loaded aux at kAuxOffset + c * kAuxStride:
//                            kLoadedAux x kAuxBuffers buffers of kAuxBufferBytes
//                            (kernels/epilogue_aux_tiles.cuh), then a "full" mbarrier per
//                            buffer (1 arrival plus the box's bytes), 1024-aligned
//   [kScratchOffset, + 2 * kScratchStride)  consumer c's epilogue scratch at
//                            kScratchOffset + c * kScratchStride (kEpilogueScratchBytes of it;
//                            never aliases the ring: the producer fills the next tile's
//                            stages while the consumers run the epilogue)
//   [kBarrierOffset, + 8 * kStages)  "full" mbarrier per stage: 1 arrival (the producer's
//                            arrive.expect_tx) plus kStageBytes of TMA transactions
//   [kBarrierOffset + 8 * kStages, + 8 * kStages)  "empty" mbarrier per stage:
//                            kEmptyArrivals arrivals, one per consumer warpgroup that reads
//                            the stage in every CTA of the cluster (each CTA refills it)
//   [kTurnOffset, + 16)      ping-pong: consumer c's "turn" mbarrier at kTurnOffset + 8c, 1
//                            arrival: the other consumer has waited for every stage of its
//                            tile, so c may wait for the stages of its next one
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

  static constexpr int kConsumers = 2;
  static constexpr bool kSplitM = Config::kSplit == ConsumerSplit::kM;
  static constexpr bool kSplitN = Config::kSplit == ConsumerSplit::kN;
  static constexpr bool kPingPong = Config::kSplit == ConsumerSplit::kPingPong;
  static constexpr int kUnitM = kSplitM ? Config::kTileM / kConsumers : Config::kTileM;
  static constexpr int kUnitN = kSplitN ? Config::kTileN / kConsumers : Config::kTileN;
  // Consumer warpgroups that read each stage: both halves, or the one whose tile it is.
  static constexpr int kStageReaders = kPingPong ? 1 : kConsumers;
  static constexpr int kClusterCtas = Config::kClusterM * Config::kClusterN;
  static constexpr int kEmptyArrivals = kStageReaders * kClusterCtas;
  // Where consumer c's unit starts in the tile.
  __host__ __device__ static constexpr int unit_row(int c) { return kSplitM ? c * kUnitM : 0; }
  __host__ __device__ static constexpr int unit_col(int c) { return kSplitN ? c * kUnitN : 0; }

  __host__ __device__ static constexpr int rows(int o) {
    return Config::kOperands[o].role == OperandRole::kA ? Config::kTileM : Config::kTileN;
  }
  // The CTAs of a cluster along M compute tiles of one N range, so they read the same rows
  // of every B; along N, of every A.
  __host__ __device__ static constexpr bool shared(int o) {
    return Config::kOperands[o].role == OperandRole::kA ? Config::kClusterN > 1
                                                        : Config::kClusterM > 1;
  }
  // The rows of operand o one CTA loads per stage.
  __host__ __device__ static constexpr int load_rows(int o) {
    return shared(o) ? rows(o) / kClusterCtas : rows(o);
  }
  __host__ __device__ static constexpr int operand_bytes(int o) { return rows(o) * kTileKBytes; }
  __host__ __device__ static constexpr int operand_offset(int o) {
    int offset = 0;
    for (int i = 0; i < o; ++i) offset += operand_bytes(i);
    return offset;
  }
  __host__ __device__ static constexpr bool parts_tile(int o) {
    return Config::kOperands[o].major == OperandMajor::kK ? load_rows(o) % 8 == 0
                                                          : load_rows(o) % kMnBoxElems == 0;
  }
  // An MN-major operand's rows are whole boxes (TileN 160 takes K-major B only).
  __host__ __device__ static constexpr bool every_operand_boxes() {
    for (int o = 0; o < Config::kOperandCount; ++o) {
      if (Config::kOperands[o].major != OperandMajor::kK && rows(o) % kMnBoxElems != 0) {
        return false;
      }
    }
    return true;
  }
  __host__ __device__ static constexpr bool every_part_tiles() {
    for (int o = 0; o < Config::kOperandCount; ++o) {
      if (shared(o) && !parts_tile(o)) return false;
    }
    return true;
  }

  static constexpr int kStageBytes = operand_offset(Config::kOperandCount);
  static constexpr int kRingBytes = kStageBytes * Config::kStages;
  // The ring is whole atoms, so the staging that follows it is 1024-aligned.
  static constexpr int kStagingOffset = kRingBytes;
  static constexpr int kStagingStride =
      Config::kStagedOutputs * Config::kStagedBuffers * kStagedBufferBytes;
  static constexpr int kBorrowedBuffers = Config::kBorrowedBuffers;
  static constexpr int kBorrowedStride = kBorrowedBuffers * kStagedBufferBytes;
  static constexpr int kStoresAfterBorrowed = Config::kStoresAfterBorrowed;
  static constexpr int kAuxOffset = kStagingOffset + kConsumers * kStagingStride;
  static constexpr int kAuxBufferCount = Config::kLoadedAux * Config::kAuxBuffers;
  // Where a consumer's aux barriers start in its aux area.
  static constexpr int kAuxBarriers = kAuxBufferCount * kAuxBufferBytes;
  static constexpr int kAuxStride =
      (kAuxBarriers + 8 * kAuxBufferCount + kAtomBytes - 1) / kAtomBytes * kAtomBytes;
  static constexpr int kScratchOffset = kAuxOffset + kConsumers * kAuxStride;
  static constexpr int kScratchStride = (Config::kEpilogueScratchBytes + 15) / 16 * 16;
  static constexpr int kBarrierOffset = kScratchOffset + kConsumers * kScratchStride;
  static constexpr int kTurnOffset = kBarrierOffset + 16 * Config::kStages;
  static constexpr int kBytes = kTurnOffset + 16;
  static constexpr int kDynamicBytes = kBytes + kAtomBytes;  // + slack to align the base up
  // Hopper's per-block dynamic shared-memory limit (227 KB, CUDA C++ Programming Guide,
  // compute capability 9.0).
  static constexpr int kMaxDynamicBytes = 227 * 1024;

  static_assert(Config::kTileM == 64 || Config::kTileM == 128 || Config::kTileM == 256,
                "TileM must be 64, 128 or 256: change choose_kernel_config");
  static_assert(kUnitM % 64 == 0, "each consumer's rows must be whole 64-row wgmma groups");
  static_assert(ptx::wgmma_n_supported(kUnitN),
                "each consumer's columns must be a wgmma N the wrapper covers (64, 128, 160, "
                "192, 256): change choose_kernel_config");
  static_assert(Config::kTileN % 32 == 0 && every_operand_boxes(),
                "TileN must be a multiple of 32, and of 64 (whole MN-major boxes) where an "
                "operand is MN-major: change choose_kernel_config");
  static_assert(Config::kStagedOutputs >= 0 && Config::kStagedOutputs <= kMaxTmaStores,
                "at most kMaxTmaStores outputs staged for TMA stores (one descriptor each)");
  static_assert(Config::kStagedBuffers >= 1 && Config::kStagedBuffers <= kMaxStagedBuffers,
                "1 to kMaxStagedBuffers staging buffers per stored output");
  static_assert(kBorrowedBuffers == 0 ||
                    (!kPingPong && Config::kStagedOutputs == 1 && Config::kStagedBuffers >= 2 &&
                     kConsumers * kBorrowedStride <= kStageBytes),
                "buffers are borrowed by consumers sharing each tile, for one staged output "
                "with two or more of its own, within one stage: fix "
                "recipe::borrowed_staging_buffers");
  static_assert(Config::kLoadedAux >= 0 && Config::kLoadedAux <= kMaxTmaAuxLoads &&
                    Config::kAuxBuffers >= 1 && Config::kAuxBuffers <= kMaxAuxBuffers,
                "0 to kMaxTmaAuxLoads aux loaded through TMA, 1 to kMaxAuxBuffers buffers each");
  static_assert(kStoresAfterBorrowed >= 0 && (kBorrowedBuffers > 0 || kStoresAfterBorrowed == 0),
                "stores after the borrowed ones only where buffers are borrowed: fix "
                "recipe::stores_after_borrowed");
  static_assert(Config::kStages >= 2, "kStages must be at least 2: change choose_kernel_config");
  static_assert(Config::kOperandCount >= 2 && Config::kOperandCount <= kMaxTmaDescriptors,
                "one TMA descriptor per operand: at most kMaxTmaDescriptors operands");
  static_assert(kStageBytes % kAtomBytes == 0,
                "every operand tile must span whole 1024-byte swizzle atoms: rows multiple of 8");
  static_assert(every_part_tiles(),
                "a shared operand splits into whole atoms (K-major) or boxes (MN-major) per "
                "CTA: change the cluster in choose_kernel_config");
  static_assert(kDynamicBytes <= kMaxDynamicBytes,
                "shared memory over 227 KB: lower kStages or the tile in choose_kernel_config");
};

}  // namespace fusedgemm::kernels
