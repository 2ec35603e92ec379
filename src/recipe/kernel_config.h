// The shape of a fused kernel — CTA tile, how its two consumer warpgroups share it, cluster,
// ring depth — chosen at build by a cost model over the declared problem and the device's
// multiprocessor count (kernels/gemm_sm90.cuh is the kernel it shapes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/plan.h"
#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"
#include "kernels/tile_scheduler.cuh"

namespace fusedgemm::recipe {

// How the two consumer warpgroups share the CTA's tiles (kernels::ConsumerSplit): each takes
// half the rows (kM) or half the columns (kN) of every tile, that half its epilogue unit; or
// (kPingPong) each takes every other tile whole, so one's epilogue runs while the other's
// MMAs do, and the unit is the tile.
enum class ConsumerSplit : std::uint8_t { kM, kN, kPingPong };

struct KernelConfig {
  static constexpr int kConsumers = 2;  // consumer warpgroups; one producer warpgroup besides

  int tile_m = 128;  // CTA tile rows: 64 (split kN), 128 or 256
  int tile_n = 256;  // CTA tile columns: 64 to 256, a multiple of 64
  int tile_k = 64;   // elements of K per stage: 128 bytes (64 for 16-bit types, 128 for fp8)
  int stages = 4;    // depth of the shared-memory ring TMA fills
  ConsumerSplit split = ConsumerSplit::kM;
  int cluster_m = 1;              // CTAs of a cluster along M (they share B, multicast)
  int cluster_n = 1;              // ... along N (they share A)
  bool dependent_launch = false;  // programmatic dependent launch (griddepcontrol)
  int threads = 128 * (1 + kConsumers);
  // The multiprocessor count the cost model planned waves over: the device's, 0 where it
  // has none (the host device).
  int sm_count = 0;
  // Dense outputs the epilogue can store through TMA (tma_store_outputs): each takes a
  // staging area per consumer, so it counts against the ring's stages.
  int staged_outputs = 0;
  // Staging buffers per staged output and consumer (default_staging_buffers, 1 to 8).
  int staging_buffers = 2;
  // More staging buffers per consumer, borrowed from the ring stage a unit's last K step read
  // (borrowed_staging_buffers; 0: none).
  int borrowed_buffers = 0;
  // Full aux inputs the epilogue reads through shared memory, TMA-loaded (tma_load_aux; 0: read
  // from global memory), and buffers per loaded aux and consumer (1 to 4; the cost model's 1
  // or 2): each takes an area per consumer, so they count against the ring's stages too.
  int loaded_aux = 0;
  int aux_buffers = 1;
  // Dynamic shared memory per CTA, set once the kernel source is generated (0 on the host).
  std::uint32_t shared_bytes = 0;

  // What one consumer computes of a tile: the epilogue's unit (kernels/epilogue_contract.cuh).
  int unit_m() const noexcept { return split == ConsumerSplit::kM ? tile_m / kConsumers : tile_m; }
  int unit_n() const noexcept { return split == ConsumerSplit::kN ? tile_n / kConsumers : tile_n; }
  // Consumers that compute each tile (and read each stage).
  int tile_readers() const noexcept { return split == ConsumerSplit::kPingPong ? 1 : kConsumers; }
  int cluster_ctas() const noexcept { return cluster_m * cluster_n; }
  bool operator==(const KernelConfig&) const = default;
};

// Shared memory one stage of the ring takes: every distinct operand's tile (TileM or TileN
// rows) of tile_k elements.
std::int64_t stage_bytes(const fusion::FusionProgram& program, const KernelConfig& config);

// The most shared memory the generated epilogue needs per consumer warpgroup for a unit of
// the config (its taps' staging, codegen/epilogue_plan.h): the ring's stages are counted
// after it. Column vectors are staged beside it only where the stages leave room.
std::int64_t epilogue_scratch_bound(const fusion::FusionProgram& program,
                                    const KernelConfig& config);

// Hopper's per-block opt-in limit on dynamic shared memory (227 KB).
inline constexpr std::int64_t kMaxSharedBytes = 227 * 1024;

// The dynamic shared memory of the kernel for `config` with `scratch_bytes` of epilogue
// scratch per consumer warpgroup (kernels/gemm_sm90_config.cuh): the ring, each consumer's
// staging of its TMA-stored outputs and its scratch (16-byte aligned), a full and an empty
// barrier per stage, the consumers' two turn barriers and the 1 KB the kernel aligns its
// base up by. The kernel source sizes its launch with it; the epilogue planner asks it
// whether a column vector's staging fits.
std::int64_t kernel_shared_bytes(const fusion::FusionProgram& program, const KernelConfig& config,
                                 std::int64_t scratch_bytes);

// The dense outputs (indices into program.outputs) the epilogue stages for TMA stores:
// 16- and 32-bit N-major ones, at most kernels::kMaxTmaStores. Whether a call's layout lets
// TMA write them is decided per call (recipe::tma_storable); the others store directly.
std::vector<int> tma_store_outputs(const fusion::FusionProgram& program);

// The full aux inputs (indices into program.aux) the epilogue loads through TMA: 16- and
// 32-bit ones of one value per output element, at most kernels::kMaxTmaAuxLoads. Whether a
// call's layout lets TMA read them is decided per call (recipe::tma_storable, the same
// conditions); where not, the epilogue's warpgroup copies them into the same buffers itself.
std::vector<int> tma_load_aux(const fusion::FusionProgram& program);

// The aux `config` loads through TMA: all of tma_load_aux, or none where the chooser found
// their buffers would leave the ring too few stages (KernelConfig::loaded_aux 0).
std::vector<int> loaded_aux(const fusion::FusionProgram& program, const KernelConfig& config);

// Shared memory the loaded aux take per consumer warpgroup: loaded_aux x aux_buffers buffers
// of kernels::kAuxBufferBytes and a barrier each, in whole 1024-byte atoms
// (kernels/gemm_sm90_config.cuh, kAuxStride).
std::int64_t aux_tile_bytes(const KernelConfig& config);

// Staging buffers per TMA-stored output and consumer (KernelConfig::staging_buffers) unless
// KernelTuning sets them, for `config`'s tile and split: 2 (a sub-tile is written while the
// store of the one before still reads), but 1 for a ping-pong tile whose ring would lose a
// stage to the second (64x256: 5 stages, not 4), where the epilogue overlaps the other
// consumer's MMAs. With one, each sub-tile waits for its own store's read: ten times a unit
// of ping-pong 128x160 (sub-tiles of 64-byte rows), longer than the other consumer's K
// steps at K = 512 (docs/PERF.md run 38). With B buffers a sub-tile waits only for the store
// B - 1 sub-tiles before it; as many as a unit has sub-tiles, a unit waits for none of its
// own stores, only, at its start, for the previous unit's.
int default_staging_buffers(const fusion::FusionProgram& program, const KernelConfig& config);

// Staging buffers a consumer's epilogue borrows from the ring stage its unit's last K step
// read (KernelConfig::borrowed_buffers): a tile's stage is free once both consumers' MMAs on
// it are done, and the kernel hands it back to the producer only once the stores have read
// it, a K step into the next unit (kernels/gemm_sm90.cuh). Run 24 measured what the waits
// for the stores' reads cost, up to 6% at K <= 1024; more own buffers cost a stage. As many
// as the unit's sub-tiles lack and half a stage holds, for consumers that share each tile
// and stage one output with two or more own buffers; 0 elsewhere (ping-pong's epilogue is
// off the critical path; block scaling hands each stage back inside its loop).
int borrowed_staging_buffers(const fusion::FusionProgram& program, const KernelConfig& config);

// Of a unit's `sub_tiles` stores of a staged output through `borrowed` buffers borrowed from
// a ring stage and `own` of its own (sub-tile s in buffer s % (borrowed + own), the borrowed
// ones first, so their stores are the unit's earliest: kernels/epilogue_store.cuh), how many
// follow the last one that reads a borrowed buffer.
constexpr int stores_after_borrowed(int sub_tiles, int own, int borrowed) {
  int last = -1;
  for (int s = 0; s < sub_tiles; ++s) {
    if (s % (borrowed + own) < borrowed) last = s;
  }
  return last < 0 ? 0 : sub_tiles - 1 - last;
}

// The same for the config's one staged output (0 where nothing is borrowed): the kernel
// hands the borrowed stage back once no more than that many of a unit's stores are still
// reading (FusedgemmConfig::kStoresAfterBorrowed).
int stores_after_borrowed(const fusion::FusionProgram& program, const KernelConfig& config);

// Shared memory the staging of the TMA-stored outputs takes per consumer warpgroup.
std::int64_t store_staging_bytes(const fusion::FusionProgram& program, const KernelConfig& config);

// Why the kernel cannot take `config` for `program` (accumulators past the register budget,
// a unit no wgmma covers, a cluster that cannot split its shared operand, shared memory past
// 227 KB, ...), with the numbers and what is legal; nullopt when it can.
std::optional<std::string> config_violation(const fusion::FusionProgram& program,
                                            const KernelConfig& config);

// The cost model's pick for the declared problem on a device of `sm_count` multiprocessors
// (0: unknown), with `tuning`'s fields in place of its own where set. Fails with
// kInvalidArgument when the tuning names a config the kernel cannot take.
Result<KernelConfig> choose_kernel_config(const fusion::FusionProgram& program, int sm_count,
                                          const KernelTuning& tuning = {});

// The raster band of the persistent grid's tile order (kernels/tile_scheduler.cuh) for a
// launch of `clusters` resident clusters: the band height, in cluster-tile rows, that
// minimises the row panels of A plus the column panels of B the resident clusters read.
std::int64_t raster_group(const KernelConfig& config, const fusion::ProblemShape& problem,
                          std::int64_t clusters);

// The tile order's divisors (KernelArgs::schedule) for an unsplit launch of `problem` in
// bands of `raster_group`: `fast` 0 where the kernel's tile index must take the division
// path (a batch, no tiles, 2^31 tiles or more).
kernels::ScheduleDivisors schedule_divisors(const KernelConfig& config,
                                            const fusion::ProblemShape& problem,
                                            std::int64_t raster_group);

// How a call of `problem` splits K (kernels/tile_scheduler.cuh, kernels/split_k.cuh): the
// cluster tiles of the last wave split into work units that fit that wave's clusters, each
// at least kMinSplitKSteps K steps, at most kMaxKSplits — every tile, as many ways as fit,
// where the tiles fill less than one wave; the last wave's, as many ways as the cost model
// finds fastest, after kMinWavesBeforeSplit whole waves. Unsplit (splits 1) where fewer
// than 2 fit (a last wave more than half full, a short K), after one whole wave, where the
// config has no multiprocessor count (the host device) or where the kernel has no split
// path (units of two 64-row groups holding more than kernels::kMaxSplitKAccumulators
// accumulators).
struct KSplit {
  int splits = 1;          // work units per split tile
  std::int64_t first = 0;  // the first cluster tile that splits (in the schedule's order)
  std::int64_t tiles = 0;  // cluster tiles that split
};
KSplit k_split(const fusion::FusionProgram& program, const KernelConfig& config,
               const fusion::ProblemShape& problem);

// The floats one epilogue unit's split-K slot holds: every GEMM's unit_m x unit_n
// accumulators (kernels/split_k.cuh).
std::int64_t split_slot_floats(const fusion::FusionProgram& program, const KernelConfig& config);

// "tile 128x256x64 (2 consumers of 64x256), cluster 2x1 (B multicast), 4 stages, persistent
// grid, grouped tile order, direct-store epilogue".
std::string describe(const KernelConfig& config);

}  // namespace fusedgemm::recipe
