#include "recipe/kernel_config.h"

#include <algorithm>

#include "recipe/limits.h"

namespace fusedgemm::recipe {
namespace {

// Each thread of the one warpgroup holds tile_m * tile_n / 128 fp32 accumulators per GEMM;
// past 128 of them too few of the 255 registers remain for the rest of the kernel.
constexpr int kMaxAccumulatorsPerThread = 128;
// Ring bytes that still let two CTAs share one SM (228 KB each, less 1 KB reserved per CTA
// and the kernel's 1 KB alignment slack), so one CTA's MMA waits overlap the other's.
constexpr std::int64_t kTwoCtaRingBytes = 110 * 1024;
constexpr int kMinStages = 2;  // one stage loading while one is read
constexpr int kMaxStages = 4;  // loads 3 steps ahead already hide global latency
// K bytes per stage: one 128-byte swizzled row.
constexpr int kTileKBytes = 128;

}  // namespace

std::int64_t stage_bytes(const fusion::FusionProgram& program, const KernelConfig& config) {
  std::int64_t bytes = 0;
  for (const auto& op : program.operands) {
    const int rows = op.role == Role::kA ? config.tile_m : config.tile_n;
    bytes += bytes_of(program.buffers[op.buffer].data_type, std::int64_t{rows} * config.tile_k);
  }
  return bytes;
}

// Tiles: 128x128 for one GEMM; TileN 64 for two GEMMs and 64x64 for more, so the
// accumulators of every GEMM fit the register budget; TileM 64 when M is small, so a
// decode-time M does not leave most of a 128-row tile idle, and for quantized outputs.
// Block-scaled operands: 64x128 for one GEMM (64x64 for two), see below.
KernelConfig choose_kernel_config(const fusion::FusionProgram& program) {
  KernelConfig config;
  const int gemms = std::max<int>(1, static_cast<int>(program.gemms.size()));
  // A block-scaled mainloop holds two fp32 fragments per GEMM: the running sum and the
  // current K block's partial sum (kernels/gemm_sm90_block_scale.cuh). 128x128 would need
  // 256 registers for them; 64x128 needs 128, keeps wgmma at its widest N (m64n128k32: one
  // B read per A row group) and puts a tile's columns in one 128-column scale block of B,
  // so a K block needs one B scale per CTA and two A scales per thread.
  const bool block_scaled = !program.operands.empty() && program.operands[0].block_scale;
  const int fragments = block_scaled ? 2 : 1;
  if (program.problem.m <= 64 || block_scaled) config.tile_m = 64;
  if (gemms > 1) config.tile_n = 64;
  // A block-quantized output keeps every value of its row blocks live until the block's
  // amax is known: at 128x128 that spilled (255 registers, 112 bytes, ptxas, 2026-12-02),
  // at 64 rows it does not. The block runs along N, so N keeps its width.
  if (!program.quantized_outputs.empty()) config.tile_m = 64;
  while (fragments * gemms * config.tile_m * config.tile_n / config.threads >
             kMaxAccumulatorsPerThread &&
         config.tile_m > 64) {
    config.tile_m /= 2;
  }
  if (!program.operands.empty()) {
    const DataType type = program.buffers[program.operands[0].buffer].data_type;
    const std::int64_t elems = 8 * kTileKBytes / std::max(1, bits_of(type));
    config.tile_k = static_cast<int>(elems);
  }
  const std::int64_t stage = std::max<std::int64_t>(1, stage_bytes(program, config));
  config.stages =
      static_cast<int>(std::clamp<std::int64_t>(kTwoCtaRingBytes / stage, kMinStages, kMaxStages));
  return config;
}

}  // namespace fusedgemm::recipe
