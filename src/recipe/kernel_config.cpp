#include "recipe/kernel_config.h"

namespace fusedgemm::recipe {

// Two tile shapes: 128x128 for most problems; 64x128 when M is small, so a decode-time M
// does not leave most of a 128-row tile idle.
KernelConfig choose_kernel_config(const fusion::FusionProgram& program) {
  KernelConfig config;
  if (program.problem.m <= 64) config.tile_m = 64;
  return config;
}

}  // namespace fusedgemm::recipe
