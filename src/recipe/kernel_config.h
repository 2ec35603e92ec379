// The tile configuration of a fused kernel, chosen from the problem at build.
#pragma once

#include <cstdint>

#include "fusion/fusion_program.h"

namespace fusedgemm::recipe {

struct KernelConfig {
  int tile_m = 128;  // 64 or 128: one or two wgmma row groups
  int tile_n = 128;  // 64 or 128: the wgmma N
  int tile_k = 64;   // elements of K per stage: 128 bytes (64 for 16-bit types, 128 for fp8)
  int stages = 4;    // depth of the shared-memory ring TMA fills
  int threads = 128;
  // Dynamic shared memory per CTA, set once the kernel source is generated (0 on the host).
  std::uint32_t shared_bytes = 0;
  bool operator==(const KernelConfig&) const = default;
};

// Shared memory one stage of the ring takes: every distinct operand's tile (TileM or TileN
// rows) of tile_k elements.
std::int64_t stage_bytes(const fusion::FusionProgram& program, const KernelConfig& config);

KernelConfig choose_kernel_config(const fusion::FusionProgram& program);

}  // namespace fusedgemm::recipe
