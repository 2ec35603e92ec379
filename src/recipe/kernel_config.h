// The tile configuration of a fused kernel, chosen from the problem at build.
#pragma once

#include <cstdint>

#include "fusion/fusion_program.h"

namespace fusedgemm::recipe {

struct KernelConfig {
  int tile_m = 128;
  int tile_n = 128;
  int tile_k = 64;
  int stages = 4;
  int threads = 128;
  bool operator==(const KernelConfig&) const = default;
};

KernelConfig choose_kernel_config(const fusion::FusionProgram& program);

}  // namespace fusedgemm::recipe
