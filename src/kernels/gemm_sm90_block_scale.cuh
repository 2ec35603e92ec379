// The sm90 mainloop for block-scaled fp8 operands (DeepSeek-style): for one CTA's TileM x TileN
// output tile, acc[g] = sum over K blocks kb of
//   (A_g[rows, kb] * B_g[cols, kb]^T) * scale_a[row, kb] * scale_b[kb, col / 128]
// in the fragment layout of kernels/epilogue_contract.cuh, so the epilogue is the plain one.
// Device code; no host headers (NVRTC). The generated translation unit instantiates it
// (codegen/kernel_source.cpp) instead of GemmSm90 when the operands carry block scales.
//
// Roles, besides GemmSm90's (kernel axis order, elements):
//   A scale  (b, M, ceil(K / 128))        fp32, one per 1 x 128 block of A
//   B scale  (b, ceil(N / 128), ceil(K / 128))  fp32, one per 128 x 128 block of B
// read through KernelArgs::buffers[Config::kOperandScaleParam[operand]] with plain global
// loads: a K block needs TileM + 1 of them per CTA, all L2-resident.
//
// Per K step kt (= K block kt: the fp8 TileK is the 128 of the scale block), all threads:
//   1. load this thread's A scales (2 rows per 64-row group) and the tile's one B scale;
//      their latency overlaps the MMAs
//   2. wgmma the stage into a temporary accumulator tmp (the first MMA overwrites it)
//   3. wait for the MMAs, then promote: acc[i] += tmp[i] * (scale_a[row(i)] * scale_b)
// The ring, barriers and TMA loads are GemmSm90::pipeline's. K tail: TMA zero-fills the
// partial last block, whose scales exist (the scale extent rounds up). Ragged M: rows past M
// read row M - 1's scale (finite; the epilogue never stores those rows).
#pragma once

#include "kernels/fragment_slots.cuh"
#include "kernels/gemm_sm90.cuh"

namespace fusedgemm::kernels {

template <class Config>
struct GemmSm90BlockScaled {
  using Base = GemmSm90<Config>;
  using Layout = typename Base::Layout;
  using Accumulators = typename Base::Accumulators;
  using Slots = FragmentSlots<Config::kTileM, Config::kTileN>;

  static constexpr int kTileM = Config::kTileM;
  static constexpr int kTileN = Config::kTileN;
  static constexpr int kGemms = Config::kGemmCount;
  // The scale blocks the support gate admits (rule block_scale_shape): A 1 x 128, B 128 x 128.
  static constexpr int kScaleBlockK = 128;
  static constexpr int kScaleBlockN = 128;
  // acc and tmp are both live across the MMAs: two fp32 fragments per GEMM.
  static constexpr int kMaxAccumulators = 128;

  static_assert(Layout::kTileK == kScaleBlockK,
                "a block-scaled K step must be one 128-wide scale block: keep the fp8 TileK at "
                "128 in choose_kernel_config");
  static_assert(kScaleBlockN % kTileN == 0,
                "a tile's columns must lie in one 128-column scale block of B: TileN 64 or 128");
  static_assert(2 * kGemms * Base::Frag::kCount <= kMaxAccumulators,
                "acc and tmp exceed 128 registers per thread: choose_kernel_config must pick "
                "TileM 64 for block-scaled programs (and TileN 64 for two GEMMs)");

  __device__ static TileCoord tile_coord() { return Base::tile_coord(); }

  // This thread's scale pointers at K block 0 and their step per K block.
  struct ScaleRows {
    const float* a[kGemms][Slots::kRows];
    const float* b[kGemms];
    long long a_step[kGemms];
    long long b_step[kGemms];
  };

  struct PromoteStages {
    ScaleRows scales;
    Accumulators& acc;
    Accumulators& tmp;

    __device__ void operator()(unsigned base, int stage, int k_step) {
      float scale_a[kGemms][Slots::kRows];
      float scale_b[kGemms];
#pragma unroll
      for (int g = 0; g < kGemms; ++g) {
        scale_b[g] = scales.b[g][k_step * scales.b_step[g]];
#pragma unroll
        for (int r = 0; r < Slots::kRows; ++r) {
          scale_a[g][r] = scales.a[g][r][k_step * scales.a_step[g]];
        }
      }
      Base::mma_stage(base, stage, tmp, /*overwrite=*/true);
#pragma unroll
      for (int g = 0; g < kGemms; ++g) {
        float row_scale[Slots::kRows];
#pragma unroll
        for (int r = 0; r < Slots::kRows; ++r) row_scale[r] = scale_a[g][r] * scale_b[g];
#pragma unroll
        for (int i = 0; i < Base::Frag::kCount; ++i) {
          acc[g][i] = __fmaf_rn(tmp[g][i], row_scale[Slots::row_slot(i)], acc[g][i]);
        }
      }
    }
  };

  __device__ static const float* element(const BufferArg& buf, long long batch, long long i1) {
    const long long b = buf.shape[0] == 1 ? 0 : batch;
    return static_cast<const float*>(buf.data) + b * buf.stride[0] + i1 * buf.stride[1];
  }

  // Fills this thread's scale pointers for GEMMs G.. (a compile-time loop, as GemmSm90's:
  // the config's tables are read as constants).
  template <int G>
  __device__ static void scale_rows(const KernelArgs& args, const TileCoord& tile, ScaleRows& s) {
    if constexpr (G < kGemms) {
      constexpr int a_param = Config::kOperandScaleParam[Config::kGemmA[G]];
      constexpr int b_param = Config::kOperandScaleParam[Config::kGemmB[G]];
      const BufferArg& a = args.buffers[a_param];
      const BufferArg& b = args.buffers[b_param];
      const int thread = static_cast<int>(threadIdx.x);
#pragma unroll
      for (int r = 0; r < Slots::kRows; ++r) {
        const long long row = tile.m0 + Slots::row_of(r, thread);
        s.a[G][r] = element(a, tile.batch, row < args.m ? row : args.m - 1);
      }
      s.b[G] = element(b, tile.batch, tile.n0 / kScaleBlockN);
      s.a_step[G] = a.stride[2];
      s.b_step[G] = b.stride[2];
      scale_rows<G + 1>(args, tile, s);
    }
  }

  // As GemmSm90::run: the mainloop of this CTA's tile into `acc`; returns the epilogue's
  // scratch.
  __device__ static float* run(const KernelArgs& args, unsigned char* smem, const TileCoord& tile,
                               Accumulators& acc) {
    Accumulators tmp;
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
#pragma unroll
      for (int i = 0; i < Base::Frag::kCount; ++i) {
        acc[g][i] = 0.0f;
        tmp[g][i] = 0.0f;
      }
    }
    PromoteStages math{{}, acc, tmp};
    scale_rows<0>(args, tile, math.scales);
    return Base::pipeline(args, smem, tile, math);
  }
};

}  // namespace fusedgemm::kernels
