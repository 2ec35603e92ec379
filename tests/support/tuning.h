// A KernelTuning that pins a kernel shape: the tile, whether the consumers split its columns
// (or take whole tiles in turn: ping_pong), the cluster, and optionally the stages. Test-only.
#pragma once

#include <optional>

#include "fusedgemm/plan.h"

namespace fusedgemm::test {

inline KernelTuning pinned_tuning(int tile_m, int tile_n, bool split_n, int cluster_m,
                                  int cluster_n, std::optional<int> stages = std::nullopt,
                                  bool ping_pong = false) {
  KernelTuning t;
  t.tile_m = tile_m;
  t.tile_n = tile_n;
  t.split_n = split_n;
  t.ping_pong = ping_pong;
  t.cluster_m = cluster_m;
  t.cluster_n = cluster_n;
  t.stages = stages;
  return t;
}

// Every kernel shape the cost model may choose (recipe/kernel_config.cpp's candidates): the
// consumers split the rows (the default), the columns (split_n), or take whole tiles in turn.
struct KernelShape {
  const char* name;
  int tile_m, tile_n;
  bool split_n = false;
  bool ping_pong = false;
};
inline constexpr KernelShape kKernelShapes[] = {{"128x256", 128, 256},
                                                {"256x128", 256, 128},
                                                {"128x192", 128, 192},
                                                {"128x128", 128, 128},
                                                {"64x256n", 64, 256, true},
                                                {"64x128n", 64, 128, true},
                                                {"128x64", 128, 64},
                                                {"128x128pp", 128, 128, false, true},
                                                {"64x256pp", 64, 256, false, true},
                                                {"64x128pp", 64, 128, false, true},
                                                {"128x160pp", 128, 160, false, true}};

inline KernelTuning pinned_tuning(const KernelShape& shape, int cluster_m, int cluster_n) {
  return pinned_tuning(shape.tile_m, shape.tile_n, shape.split_n, cluster_m, cluster_n,
                       std::nullopt, shape.ping_pong);
}

}  // namespace fusedgemm::test
