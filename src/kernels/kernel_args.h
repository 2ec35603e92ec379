// The one parameter every fusedgemm kernel takes, by value. Shared by host code and by the
// generated device code (NVRTC has no host headers, so this file includes none).
//
// Layout of a launch: the problem size of this call, then one BufferArg per kernel
// parameter in the recipe's argument-plan order (the recipe says which role fills each).
// Extents and strides are in elements and in the KERNEL's axis order: A (b, M, K),
// B (b, N, K), aux/outputs/taps (b, M, N), block scales (b, rows/blk, cols/blk). A
// broadcast axis carries stride 0, so aux of every broadcast mode is read by one formula.
// Taps also carry where their reduction lives in the workspace (TapWorkspace), computed by
// the host's one workspace function (recipe/workspace.h), and the launch's epoch.
#pragma once

#include "kernels/tile_scheduler.cuh"  // ScheduleDivisors (no host headers either)

namespace fusedgemm::kernels {

// Buffers one kernel can address; the support gate declines graphs that need more.
inline constexpr int kMaxKernelBuffers = 16;
// TMA descriptors one launch carries for its operands: one A plus one B per GEMM (4 at
// most), with room.
inline constexpr int kMaxTmaDescriptors = 6;
// ... and for the dense outputs its epilogue stores through TMA, at slots
// kMaxTmaDescriptors + k (recipe::tma_store_outputs says which outputs),
inline constexpr int kMaxTmaStores = 2;
// ... and for the full aux inputs it loads through TMA, at slots kMaxTmaDescriptors +
// kMaxTmaStores + k (recipe::tma_load_aux says which aux; kernels/epilogue_aux_tiles.cuh).
inline constexpr int kMaxTmaAuxLoads = 6;
inline constexpr int kTmaAuxSlot = kMaxTmaDescriptors + kMaxTmaStores;
// A TMA-stored output's staging buffer per consumer warpgroup (kernels/epilogue_store.cuh)
// and the box of its descriptor: a sub-tile of 64 rows (one wgmma row group) x one 128-byte
// row (TMA's widest swizzle span). A kernel has 1 to kMaxStagedBuffers buffers per output
// (KernelConfig::staging_buffers).
inline constexpr int kMaxStagedBuffers = 8;
inline constexpr int kStagedRowBytes = 128;
inline constexpr int kStagedRows = 64;
inline constexpr int kStagedBufferBytes = kStagedRows * kStagedRowBytes;
// The row of one staged sub-tile of a unit whose rows hold `unit_row_bytes` of an output:
// 128 where whole 128-byte rows tile them, else 64 (160 bf16 columns: five sub-tiles of 64
// bytes in TMA's 64-byte swizzle, each half a buffer), else 0 (no staging). Host and kernel
// agree through this one function (codegen/kernel_source.cpp, kernels/epilogue_store.cuh).
FG_HOST_DEVICE constexpr int staged_row_bytes(int unit_row_bytes) {
  return unit_row_bytes % kStagedRowBytes == 0         ? kStagedRowBytes
         : unit_row_bytes % (kStagedRowBytes / 2) == 0 ? kStagedRowBytes / 2
                                                       : 0;
}
// A TMA-loaded aux input's buffer per consumer warpgroup (kernels/epilogue_aux_tiles.cuh) and
// the box of its descriptor: a sub-tile of 64 rows x 64 bytes (32 bf16 or 16 fp32 columns, in
// TMA's 64-byte swizzle), half a staged output's, so that six inputs double-buffered fit
// beside a ring. A kernel has 1 to kMaxAuxBuffers per input (KernelConfig::aux_buffers), and
// the parities of all of them fit one 32-bit word (kMaxTmaAuxLoads x kMaxAuxBuffers <= 32).
inline constexpr int kAuxRowBytes = 64;
inline constexpr int kAuxBufferBytes = kStagedRows * kAuxRowBytes;
inline constexpr int kMaxAuxBuffers = 4;

// Accumulators one consumer thread holds, every GEMM's fragments together (a block-scaled
// mainloop keeps two fp32 fragments a GEMM). Past 128 too few of a consumer's 232 registers
// remain for addresses and the epilogue, except in a ping-pong unit of one GEMM and one
// fragment, which holds one tile's schedule and no split path: up to 160 (ping-pong 128x160).
// The host's recipe::config_violation and the kernels' static_asserts read this one function.
FG_HOST_DEVICE constexpr int max_accumulators(bool ping_pong, int fragments) {
  return ping_pong && fragments == 1 ? 160 : 128;
}

// A CUtensorMap as the driver encodes it (128 opaque bytes, 64-byte aligned), so device code
// needs no cuda.h. The CUDA device encodes one per TMA-read operand and TMA-stored output
// from the call's address and layout, at bind or launch (docs/PERF.md).
struct alignas(64) TmaDescriptor {
  unsigned long long words[16];
};

struct BufferArg {
  void* data;
  long long shape[3];
  long long stride[3];
};

// The arrival counters of taps and split K (kernels/epoch_counter.cuh): a 64-bit word holds
// a 24-bit count under the launch's epoch. A group of at most kCounterMaxGroup arrivals
// never carries a completed count into the epoch; the workspace rule refuses a tap group
// of more (recipe/call_rules_memory.cpp).
inline constexpr int kCounterCountBits = 24;
inline constexpr long long kCounterMaxGroup = (1ll << kCounterCountBits) - 2;

// One tap's share of the workspace, in bytes from KernelArgs::workspace: one 64-bit arrival
// counter per reduction group at `counters`, then at `partials` every group's slots, one per
// CTA of the group, `slot_floats` floats apart (kernels/tap_commit.cuh).
struct TapWorkspace {
  long long counters;
  long long partials;
  long long slot_floats;
};

// Split K's share of the workspace (kernels/split_k.cuh, laid out by recipe/workspace.h):
// with `splits` > 1 the cluster tiles from `first` on split K (kernels/tile_scheduler.cuh),
// and every epilogue unit of those tiles has one 64-bit arrival counter at `counters` and
// `splits` partial slots at `partials` (bytes from KernelArgs::workspace). 1: no split.
// Split K runs in kernels whose consumer's unit is one 64-row wgmma group, or whose
// consumer threads hold at most this many accumulators (all GEMMs): beside 128 of them in
// two row groups (256x128, ping-pong 128x128) adding the partials leaves ptxas no registers
// and it spills (tests/codegen/kernel_source_test.cpp, KernelSourceTiles).
inline constexpr int kMaxSplitKAccumulators = 64;

struct SplitWorkspace {
  long long counters;
  long long partials;
  long long splits;
  long long first;
};

struct KernelArgs {
  // First: param space keeps them 64-byte aligned. Operands at [0, kMaxTmaDescriptors),
  // stored outputs after, then loaded aux from kTmaAuxSlot.
  TmaDescriptor tma[kTmaAuxSlot + kMaxTmaAuxLoads];
  long long batch;
  long long m;
  long long n;
  long long k;
  void* workspace;  // the call's workspace (tap and split-K counters and partials), or null
  // This launch's epoch: tags the arrival counters, so they never need zeroing
  // (epoch_counter.cuh).
  unsigned long long epoch;
  // Cluster-tile rows per band of the persistent grid's tile order (tile_scheduler.cuh), and
  // that order's divisors for this call's problem (TileScheduler::divisors, unsplit).
  long long raster_group;
  ScheduleDivisors schedule;
  int buffer_count;
  // Bit k < kMaxTmaStores: this call's layout of stored output k lets TMA write it, and
  // tma[kMaxTmaDescriptors + k] is its descriptor; bit kMaxTmaStores + k: likewise TMA can
  // read loaded aux k, at tma[kTmaAuxSlot + k]. Where any bit of the kernel's tiles is clear,
  // the epilogue stores every output and loads every aux directly (a layout TMA cannot take
  // stays legal).
  unsigned tma_tiles;
  BufferArg buffers[kMaxKernelBuffers];
  TapWorkspace taps[kMaxKernelBuffers];  // per kernel parameter; read for taps only
  SplitWorkspace split;
};

}  // namespace fusedgemm::kernels
