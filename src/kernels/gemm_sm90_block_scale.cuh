// The stage math for block-scaled fp8 operands (DeepSeek-style) on the sm90 mainloop
// (kernels/gemm_sm90.cuh): for one consumer's unit, acc[g] = sum over K blocks kb of
//   (A_g[rows, kb] * B_g[cols, kb]^T) * scale_a[row, kb] * scale_b[kb, col / 128]
// in the fragment layout of kernels/epilogue_contract.cuh, so the epilogue is the plain one.
// Device code; no host headers (NVRTC). The generated translation unit passes it as
// GemmSm90's Math instead of AccumulateStages when the operands carry block scales.
//
// Roles, besides GemmSm90's (kernel axis order, elements):
//   A scale  (b, M, ceil(K / 128))        fp32, one per 1 x 128 block of A
//   B scale  (b, ceil(N / 128), ceil(K / 128))  fp32, one per 128 x 128 block of B
// read through KernelArgs::buffers[Config::kOperandScaleParam[operand]] with plain global
// loads: a K block needs UnitM + 1 of them per unit, all L2-resident.
//
// Per K step kt (= K block kt: the fp8 TileK is the 128 of the scale block), each consumer:
//   1. load this thread's A scales (2 rows per 64-row group) and the unit's one B scale;
//      their latency overlaps the MMAs
//   2. wgmma the stage into a temporary accumulator tmp (the first MMA overwrites it)
//   3. wait for the MMAs (no group stays in flight: promote needs them), hand the stage
//      back, then promote: acc[i] += tmp[i] * (scale_a[row(i)] * scale_b)
// K tail: TMA zero-fills the partial last block, whose scales exist (the scale extent rounds
// up). Ragged M: rows past M read row M - 1's scale (finite; the epilogue never stores
// those rows).
#pragma once

#include "kernels/fragment_slots.cuh"
#include "kernels/gemm_sm90.cuh"

namespace fusedgemm::kernels {

template <class Kernel>
struct PromoteBlockScales {
  using Config = typename Kernel::Config;
  using Accumulators = typename Kernel::Accumulators;
  using Slots = FragmentSlots<Kernel::kUnitM, Kernel::kUnitN>;
  static constexpr int kInFlight = 0;
  static constexpr int kGemms = Kernel::kGemms;
  static constexpr int kCount = Kernel::Frag::kCount;
  // The scale blocks the support gate admits (rule block_scale_shape): A 1 x 128, B 128 x 128.
  static constexpr int kScaleBlockK = 128;
  static constexpr int kScaleBlockN = 128;
  // acc and tmp are both live across the MMAs: two fp32 fragments per GEMM.
  static constexpr int kMaxAccumulators = max_accumulators(Kernel::Layout::kPingPong, 2 * kGemms);

  static_assert(Kernel::Layout::kTileK == kScaleBlockK,
                "a block-scaled K step must be one 128-wide scale block: keep the fp8 TileK at "
                "128 in choose_kernel_config");
  static_assert(kScaleBlockN % Config::kTileN == 0,
                "a tile's columns must lie in one 128-column scale block of B: TileN 64 or 128");
  static_assert(2 * kGemms * kCount <= kMaxAccumulators,
                "acc and tmp exceed 128 registers per consumer thread: choose_kernel_config "
                "must pick 64-row units of at most 128 (one GEMM) or 64 (two) columns");

  Accumulators& acc;
  Accumulators tmp;
  // This thread's scale pointers at K block 0 and their step per K block.
  const float* a[kGemms][Slots::kRows];
  const float* b[kGemms];
  long long a_step[kGemms];
  long long b_step[kGemms];

  __device__ static const float* element(const BufferArg& buf, long long batch, long long i1) {
    const long long bt = buf.shape[0] == 1 ? 0 : batch;
    return static_cast<const float*>(buf.data) + bt * buf.stride[0] + i1 * buf.stride[1];
  }

  // Fills this thread's scale pointers for GEMMs G.. (a compile-time loop, as GemmSm90's:
  // the config's tables are read as constants).
  template <int G>
  __device__ void scale_rows(const KernelArgs& args, const TileCoord& unit, int thread) {
    if constexpr (G < kGemms) {
      constexpr int a_param = Config::kOperandScaleParam[Config::kGemmA[G]];
      constexpr int b_param = Config::kOperandScaleParam[Config::kGemmB[G]];
      const BufferArg& sa = args.buffers[a_param];
      const BufferArg& sb = args.buffers[b_param];
#pragma unroll
      for (int r = 0; r < Slots::kRows; ++r) {
        const long long row = unit.m0 + Slots::row_of(r, thread);
        a[G][r] = element(sa, unit.batch, row < args.m ? row : args.m - 1);
      }
      b[G] = element(sb, unit.batch, unit.n0 / kScaleBlockN);
      a_step[G] = sa.stride[2];
      b_step[G] = sb.stride[2];
      scale_rows<G + 1>(args, unit, thread);
    }
  }

  __device__ PromoteBlockScales(const KernelArgs& args, const TileCoord& unit, int thread,
                                Accumulators& accumulators)
      : acc(accumulators) {
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
#pragma unroll
      for (int i = 0; i < kCount; ++i) acc[g][i] = 0.0f;
    }
    scale_rows<0>(args, unit, thread);
  }

  // k_step: the problem's K step (a split unit's first is not 0), which picks the scales.
  __device__ void consume(unsigned stage, int consumer, int k_step, bool /*first*/) {
    float scale_a[kGemms][Slots::kRows];
    float scale_b[kGemms];
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
      scale_b[g] = b[g][k_step * b_step[g]];
#pragma unroll
      for (int r = 0; r < Slots::kRows; ++r) scale_a[g][r] = a[g][r][k_step * a_step[g]];
    }
    Kernel::mma_stage(stage, consumer, /*overwrite=*/true, tmp);
    ptx::wgmma_wait_group<0>();
    Kernel::fence_accumulators(tmp);
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
      float row_scale[Slots::kRows];
#pragma unroll
      for (int r = 0; r < Slots::kRows; ++r) row_scale[r] = scale_a[g][r] * scale_b[g];
#pragma unroll
      for (int i = 0; i < kCount; ++i) {
        acc[g][i] = __fmaf_rn(tmp[g][i], row_scale[Slots::row_slot(i)], acc[g][i]);
      }
    }
  }

  __device__ void finish(int /*k_steps*/) {}
};

}  // namespace fusedgemm::kernels
