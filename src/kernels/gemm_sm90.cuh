// The sm90 mainloop of every fused kernel: for one CTA's TileM x TileN output tile, the fp32
// accumulators of each GEMM of the graph, acc[g] = A_g[tile rows, :] * B_g[tile cols, :]^T,
// in the wgmma fragment layout of kernels/epilogue_contract.cuh. Device code; no host
// headers (NVRTC). The generated translation unit instantiates it (codegen/kernel_source.cpp).
//
// Roles (kernel parameters, KernelArgs::buffers, kernel axis order, elements):
//   A  (b, M, K), K-major or M-major, read by TMA through KernelArgs::tma[slot]
//   B  (b, N, K), K-major or N-major, likewise; one B (and accumulator) per GEMM
//   several GEMMs may share one A operand (a gated MLP reads X once per stage)
//   operand batch 1 is broadcast: args.buffers[param].shape[0] == 1 -> batch coordinate 0
//
// Warpgroup roles: ONE warpgroup of 128 threads does everything (a simple, correct first
// structure; there is no WarpRole switch yet). Thread 0 also issues the TMA loads.
//
// Grid: x = N tiles, y = M tiles, z = batch. Block: 128 threads. Partial tiles: TMA fills
// out-of-bounds elements of a box with zeros (so K needs no multiple of kTileK); the
// epilogue skips rows >= M and columns >= N.
//
// Pipeline, per K step kt (kTileKBytes = 128 bytes of K: 64 bf16/fp16 or 128 fp8):
//   stage s = kt % kStages; full[s] completes once per fill (phase parity (kt / kStages) & 1)
//   1. all threads wait on full[s]
//   2. wgmma over the stage: 4 MMA K-steps x GEMMs x (TileM / 64) row groups; commit; wait 0
//   3. __syncthreads: no wgmma still reads stage s
//   4. thread 0 refills stage s with K step kt + kStages (arrive.expect_tx, then the boxes)
// Loads run kStages - 1 steps ahead of the MMAs; a step's wgmma are not overlapped with the
// next step's (wait_group 0), which needs no "empty" barriers. Shared-memory map:
// kernels/gemm_sm90_config.cuh (GemmSm90Layout). Steps 1, 3 and 4 are `pipeline`, shared
// with the block-scaled mainloop (kernels/gemm_sm90_block_scale.cuh), which replaces step 2.
//
// FUSEDGEMM_KERNEL_DEBUG 1, defined before this header (generated source: from
// KernelSourceOptions::debug, so it is part of the source and of the cache key), checks the
// launch (block size, dynamic shared memory, buffer count) and bounds every barrier wait to
// 2 s: a violation prints the CTA, the stage and the K step, then traps. Its printf makes
// ptxas serialize wgmma (C7510) and adds a stack frame: debug builds only.
#pragma once

#include "kernels/epilogue_contract.cuh"
#include "kernels/gemm_sm90_config.cuh"
#include "kernels/kernel_args.h"
#include "kernels/ptx/fence.cuh"
#include "kernels/ptx/mbarrier.cuh"
#include "kernels/ptx/smem.cuh"
#include "kernels/ptx/smem_descriptor.cuh"
#include "kernels/ptx/special_registers.cuh"
#include "kernels/ptx/tma.cuh"
#include "kernels/ptx/wgmma.cuh"

#ifndef FUSEDGEMM_KERNEL_DEBUG
#define FUSEDGEMM_KERNEL_DEBUG 0
#endif

namespace fusedgemm::kernels {

template <class Config>
struct GemmSm90 {
  using Layout = GemmSm90Layout<Config>;
  using Frag = Fragment<Config::kTileM, Config::kTileN>;

  static constexpr int kTileM = Config::kTileM;
  static constexpr int kTileN = Config::kTileN;
  static constexpr int kStages = Config::kStages;
  static constexpr int kGemms = Config::kGemmCount;
  static constexpr int kOperands = Config::kOperandCount;
  // One warpgroup: wgmma's issuing unit, and the whole CTA.
  static constexpr int kThreads = 128;
  // wgmma's M is 64: a TileM of 128 is two row groups, each its own MMA.
  static constexpr int kMmaM = 64;
  static constexpr int kKSteps = Layout::kTileKBytes / ptx::kWgmmaKBytes;  // MMAs per stage
  // K-rows one MMA step advances in an MN-major tile (16 for 16-bit types).
  static constexpr int kMmaKElems = ptx::kWgmmaKBytes / Layout::kElementBytes;
  // Accumulators per thread: each GEMM holds TileM * TileN / 128 floats. Past 128 the
  // kernel leaves too few of the 255 registers for addresses and the epilogue.
  static constexpr int kMaxAccumulators = 128;
  // How long a DEBUG build waits on a barrier before declaring it hung: a stage's loads
  // take microseconds, so 2 s only ever trips on a hang.
  static constexpr unsigned long long kDebugWaitNs = 2000000000ull;

  using Accumulators = float[kGemms][Frag::kCount];

  static_assert(kGemms >= 1, "a kernel computes at least one GEMM");
  static_assert(kGemms * Frag::kCount <= kMaxAccumulators,
                "accumulators exceed 128 registers per thread: use TileN 64 (or TileM 64) for "
                "multi-GEMM graphs in choose_kernel_config");
  static_assert(Frag::kPerGroup == kTileN / 2, "fragment layout: one m64nNk MMA per row group");

  __host__ __device__ static constexpr bool operands_share_width() {
    for (int o = 0; o < kOperands; ++o) {
      if (element_bytes(Config::kOperands[o].type) != Layout::kElementBytes) return false;
    }
    return true;
  }
  __host__ __device__ static constexpr bool gemms_valid() {
    for (int g = 0; g < kGemms; ++g) {
      const int a = Config::kGemmA[g];
      const int b = Config::kGemmB[g];
      if (a < 0 || a >= kOperands || b < 0 || b >= kOperands) return false;
      if (Config::kOperands[a].role != OperandRole::kA) return false;
      if (Config::kOperands[b].role != OperandRole::kB) return false;
    }
    return true;
  }
  static_assert(operands_share_width(),
                "all operands of one kernel must have one element width (one K step in bytes)");
  static_assert(gemms_valid(), "kGemmA/kGemmB must name an A and a B operand of kOperands");

  __device__ static TileCoord tile_coord() {
    return {static_cast<long long>(blockIdx.z), static_cast<long long>(blockIdx.y) * kTileM,
            static_cast<long long>(blockIdx.x) * kTileN};
  }

  __device__ static unsigned full_barrier(unsigned base, int stage) {
    return base + Layout::kBarrierOffset + 8u * static_cast<unsigned>(stage);
  }

  __device__ static void wait_full(unsigned base, int stage, int k_step) {
    const unsigned parity = static_cast<unsigned>((k_step / kStages) & 1);
    if constexpr (FUSEDGEMM_KERNEL_DEBUG) {
      const unsigned long long start = ptx::global_timer_ns();
      while (!ptx::mbarrier_try_wait_parity(full_barrier(base, stage), parity)) {
        if (ptx::global_timer_ns() - start > kDebugWaitNs) {
          printf(
              "fusedgemm: CTA (%d,%d,%d) thread %d: TMA barrier of stage %d never completed "
              "for K step %d (wrong expect_tx bytes or a bad tensor map?)\n",
              blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, stage, k_step);
          __trap();
        }
      }
    } else {
      ptx::mbarrier_wait_parity(full_barrier(base, stage), parity);
    }
  }

  // Thread 0: fills `stage` with K step `k_step` of every operand.
  __device__ static void load_stage(const KernelArgs& args, unsigned base, int stage, int k_step,
                                    const TileCoord& tile) {
    const unsigned bar = full_barrier(base, stage);
    const unsigned stage_base = base + static_cast<unsigned>(stage * Layout::kStageBytes);
    ptx::mbarrier_arrive_expect_tx(bar, Layout::kStageBytes);
    load_operands<0>(args, stage_base, bar, k_step * Layout::kTileK, tile);
  }

  // Issues the TMA boxes of operands O.. (a compile-time loop: each operand's major and
  // offsets are constants; NVRTC takes no lambdas in device code, hence recursion).
  template <int O>
  __device__ static void load_operands(const KernelArgs& args, unsigned stage_base, unsigned bar,
                                       int k0, const TileCoord& tile) {
    if constexpr (O < kOperands) {
      constexpr OperandSpec op = Config::kOperands[O];
      const void* tensor_map = &args.tma[op.tma_slot];
      // A broadcast operand (batch 1) is read at batch 0 by every batch's CTAs.
      const int batch = args.buffers[op.param].shape[0] == 1 ? 0 : static_cast<int>(tile.batch);
      const int mn0 = static_cast<int>(op.role == OperandRole::kA ? tile.m0 : tile.n0);
      const unsigned dst = stage_base + Layout::operand_offset(O);
      if constexpr (op.major == OperandMajor::kK) {
        ptx::tma_load_3d(dst, tensor_map, bar, k0, mn0, batch);
      } else {
#pragma unroll
        for (int h = 0; h < Layout::rows(O) / Layout::kMnBoxElems; ++h) {
          ptx::tma_load_3d(dst + h * Layout::kMnBoxBytes, tensor_map, bar,
                           mn0 + h * Layout::kMnBoxElems, k0, batch);
        }
      }
      load_operands<O + 1>(args, stage_base, bar, k0, tile);
    }
  }

  // The wgmma descriptor of operand O for 64-row group `group` (A; B is read whole) and
  // MMA K step `kk` of a stage whose operand tile starts at `tile_base`.
  template <int O>
  __device__ static unsigned long long descriptor(unsigned tile_base, int group, int kk) {
    constexpr OperandSpec op = Config::kOperands[O];
    if constexpr (op.major == OperandMajor::kK) {
      // K-major: 64 rows of 128 bytes per group; a K step moves 32 bytes along the row.
      // LBO is unused by swizzled K-major layouts (1 by convention); SBO = one 8-row atom.
      const unsigned addr =
          tile_base + group * kMmaM * Layout::kSwizzleBytes + kk * ptx::kWgmmaKBytes;
      return ptx::smem_descriptor_sw128(addr, 16, Layout::kAtomBytes);
    } else {
      // MN-major: group g is box g; a K step moves kMmaKElems K-rows. LBO = the stride
      // between 64-element MN blocks (boxes), SBO = between 8-row K groups (one atom).
      const unsigned addr =
          tile_base + group * Layout::kMnBoxBytes + kk * kMmaKElems * Layout::kSwizzleBytes;
      return ptx::smem_descriptor_sw128(addr, Layout::kMnBoxBytes, Layout::kAtomBytes);
    }
  }

  // acc[g] (+)= A_g * B_g^T for GEMMs G.. over MMA K step `kk` of the stage at `stage_base`;
  // scale_d 0 overwrites acc[g], 1 accumulates (wgmma's scale-d).
  template <int G>
  __device__ static void mma_gemms(unsigned stage_base, int kk, int scale_d, Accumulators& acc) {
    if constexpr (G < kGemms) {
      constexpr int a = Config::kGemmA[G];
      constexpr int b = Config::kGemmB[G];
      constexpr OperandSpec op_a = Config::kOperands[a];
      constexpr OperandSpec op_b = Config::kOperands[b];
      const unsigned long long desc_b =
          descriptor<b>(stage_base + Layout::operand_offset(b), 0, kk);
#pragma unroll
      for (int group = 0; group < Frag::kGroups; ++group) {
        const unsigned long long desc_a =
            descriptor<a>(stage_base + Layout::operand_offset(a), group, kk);
        ptx::wgmma_mma_async<kTileN, op_a.type, op_b.type, op_a.major == OperandMajor::kMN,
                             op_b.major == OperandMajor::kMN>(&acc[G][group * Frag::kPerGroup],
                                                              desc_a, desc_b, scale_d);
      }
      mma_gemms<G + 1>(stage_base, kk, scale_d, acc);
    }
  }

  // All 128 threads: acc[g] += A_g * B_g^T over one stage (acc[g] = A_g * B_g^T where
  // `overwrite`), waiting for the MMAs to finish.
  __device__ static void mma_stage(unsigned base, int stage, Accumulators& acc,
                                   bool overwrite = false) {
    const unsigned stage_base = base + static_cast<unsigned>(stage * Layout::kStageBytes);
    __syncwarp();  // wgmma is .sync.aligned: each warp converged after the barrier wait loop
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      mma_gemms<0>(stage_base, kk, overwrite && kk == 0 ? 0 : 1, acc);
    }
    ptx::wgmma_commit_group();
    ptx::wgmma_wait_group<0>();
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
#pragma unroll
      for (int i = 0; i < Frag::kCount; ++i) ptx::wgmma_fence_operand(acc[g][i]);
    }
  }

  template <int O>
  __device__ static bool params_in_range(const KernelArgs& args) {
    if constexpr (O < kOperands) {
      return Config::kOperands[O].param < args.buffer_count && params_in_range<O + 1>(args);
    } else {
      return true;
    }
  }

  template <int O>
  __device__ static void prefetch_descriptors(const KernelArgs& args) {
    if constexpr (O < kOperands) {
      ptx::tma_prefetch_descriptor(&args.tma[Config::kOperands[O].tma_slot]);
      prefetch_descriptors<O + 1>(args);
    }
  }

  __device__ static void check_launch(const KernelArgs& args) {
    const bool ok = blockDim.x == kThreads && blockDim.y == 1 && blockDim.z == 1 &&
                    ptx::dynamic_smem_bytes() >= static_cast<unsigned>(Layout::kDynamicBytes) &&
                    params_in_range<0>(args);
    if (!ok) {
      printf(
          "fusedgemm: CTA (%d,%d,%d): bad launch: block (%d,%d,%d), want (%d,1,1); dynamic "
          "shared memory %u bytes, want >= %d; %d kernel buffers\n",
          blockIdx.x, blockIdx.y, blockIdx.z, blockDim.x, blockDim.y, blockDim.z, kThreads,
          ptx::dynamic_smem_bytes(), Layout::kDynamicBytes, args.buffer_count);
      __trap();
    }
  }

  // The stage math of the plain mainloop: acc[g] += A_g * B_g^T over each stage.
  struct AccumulateStages {
    Accumulators& acc;
    __device__ void operator()(unsigned base, int stage, int /*k_step*/) {
      mma_stage(base, stage, acc);
    }
  };

  // Runs the mainloop of this CTA's tile into `acc` and returns the epilogue's scratch (the
  // start of the now idle stage ring, kEpilogueScratchBytes long). `smem` is the kernel's
  // dynamic shared memory of at least Layout::kDynamicBytes.
  __device__ static float* run(const KernelArgs& args, unsigned char* smem, const TileCoord& tile,
                               Accumulators& acc) {
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
#pragma unroll
      for (int i = 0; i < Frag::kCount; ++i) acc[g][i] = 0.0f;
    }
    AccumulateStages math{acc};
    return pipeline(args, smem, tile, math);
  }

  // The TMA ring every mainloop shares: `math(base, stage, k_step)`, called by all 128
  // threads once K step k_step has landed in `stage`, consumes it with wgmma (and must have
  // waited for them) before the stage is refilled. Returns the epilogue's scratch, as run.
  template <class StageMath>
  __device__ static float* pipeline(const KernelArgs& args, unsigned char* smem,
                                    const TileCoord& tile, StageMath& math) {
    if constexpr (FUSEDGEMM_KERNEL_DEBUG) {
      if (threadIdx.x == 0) check_launch(args);
    }
    const unsigned raw = ptx::smem_address(smem);
    const unsigned base = (raw + Layout::kAtomBytes - 1) & ~(Layout::kAtomBytes - 1u);
    const bool producer = threadIdx.x == 0;
    const int k_steps = static_cast<int>((args.k + Layout::kTileK - 1) / Layout::kTileK);

    if (producer) {
      prefetch_descriptors<0>(args);
      for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(full_barrier(base, s), 1);
      ptx::fence_mbarrier_init();
    }
    __syncthreads();  // barriers initialised before anyone waits on them

    if (producer) {
      for (int s = 0; s < kStages && s < k_steps; ++s) load_stage(args, base, s, s, tile);
    }
    for (int kt = 0; kt < k_steps; ++kt) {
      const int stage = kt % kStages;
      wait_full(base, stage, kt);
      math(base, stage, kt);
      __syncthreads();  // every warp's MMAs on `stage` are done before it is refilled
      if (producer && kt + kStages < k_steps) load_stage(args, base, stage, kt + kStages, tile);
    }
    // Every issued load was waited on and every MMA completed before the last barrier, so
    // the ring is idle: the epilogue's scratch may alias it.
    return reinterpret_cast<float*>(smem + (base - raw));
  }
};

}  // namespace fusedgemm::kernels
