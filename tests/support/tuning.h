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

}  // namespace fusedgemm::test
