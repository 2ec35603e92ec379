#include "recipe/kernel_config.h"

#include "graph/checked_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels/kernel_args.h"
#include "recipe/limits.h"

namespace fusedgemm::recipe {
namespace {

// The accumulators a consumer thread holds past which the model takes a unit only for a light
// epilogue (takes_wide_unit): kernels::max_accumulators allows ping-pong 128x160 (cuBLASLt's
// tile at 4096 x 11008 x 4096), which compiles plain, fp8, row-scaled and residual epilogues
// with 0 spills (ptxas 13.0), and bias + GELU with 52 bytes.
constexpr int kMaxAccumulators = kernels::max_accumulators(false, 1);
// The model takes a unit past kMaxAccumulators only for an epilogue of at most these issue
// slots an element (epilogue_slots): fitted to ptxas 13.0 on ping-pong 128x160, where plain
// (3), a row scale (4.5) and a residual add (6) compiled with 0 spills, several outputs (9),
// aux_bias (10+) and bias + GELU (18) spilled 52-140 bytes.
constexpr double kLightEpilogueSlots = 6.0;
// ... and for 16-bit operands: fp8's m64n160k32 kernel computes right (KernelShapeGpu) but
// measured slower than its 128x256 tiles at locked clocks (H100, docs/PERF.md run 37: 4096^3
// 126.6 us against 118.8, 8192^3 803.6 against 787.3).
constexpr int kWideUnitOperandBits = 16;
// ... and up to this K: at 16384^3 ping-pong 128x160 ran 6-18% behind 128x256 (locked clocks,
// H100, docs/PERF.md run 39), which the model saw 3% ahead on its fuller last wave. Its tiles
// read 20% more operand bytes per MMA from L2, a cost the model does not weigh; at K 512-4096
// it ran 3-6% ahead (runs 38-39).
constexpr std::int64_t kWideUnitMaxK = 4096;
// Accumulators plus the epilogue's per-thread arrays (a quantized output's held values, a
// tap's per-row and per-column partials): what 232 registers hold without spills (ptxas
// 13.0 on every example, tests/api/kernel_compile_test.cpp). A preference, not a limit: a
// program past it at every tile (many column taps) takes the tile holding the fewest, and
// may spill.
constexpr int kMaxHeldFloats = 160;
constexpr int kMinStages = 2;  // one stage loading while one is read
constexpr int kMaxStages = 8;  // past ~4 K steps of look-ahead the loads are hidden anyway
// K bytes per stage: one 128-byte swizzled row.
constexpr int kTileKBytes = 128;
// The kernel's shared memory beside the ring and the epilogue (kernel_shared_bytes): 1 KB
// of alignment slack, the consumers' two 8-byte turn barriers, two 8-byte barriers per stage.
constexpr std::int64_t kSlackBytes = 1024 + 16;
constexpr std::int64_t kBarrierBytesPerStage = 16;
constexpr std::int64_t kScratchAlignBytes = 16;
constexpr int kThreadsPerConsumer = 128;
// The wgmma N the kernel's wrapper covers (kernels/ptx/wgmma.cuh). 160: tiles of 128x160,
// whose staged outputs store 64-byte sub-tile rows (kernels::staged_row_bytes), with B
// K-major (an MN-major box is 64 elements wide).
constexpr int kUnitWidths[] = {64, 128, 160, 192, 256};
constexpr int kMaxTmaBoxRows = 256;  // cuTensorMapEncodeTiled: boxDim[i] <= 256

// Shared memory per SM per clock the tensor cores' operand reads and TMA's writes share, and
// what a byte TMA writes costs against a byte wgmma reads: fitted, not derived (Hopper's 32
// banks of 4 bytes serve 128 a clock; wgmma's operand path evidently more). Fitted to the
// per-MMA rates measured at locked clocks (H100, docs/PERF.md runs 36-39): shared 128x128
// units 9% below the MMA rate, ping-pong 64x256 6-14% below, ping-pong 128x160, 128x192 and
// 128x256 at it. The earlier fit (128 bytes, TMA at 0.75; runs 26-27) saw ping-pong 128x160
// 4% below the MMA rate and gave 128x256 the LLM projections where ping-pong 128x160 ran
// 3-5% faster. Against that fit, in one run (run 39, 32 shapes whose pick moved): plain bf16
// at K <= 4096 3-6% faster on ping-pong 128x160, bias + GELU 1-5% and fp8 2-10% faster on
// ping-pong 128x128 than on ping-pong 64x256, a row tap at K = 4096 5-6% faster on 128x256,
// the gated MLP at decode-size M 1.5-3% faster on 128x64 (one shape 2.7% slower) and even
// at K = 1024 on 128x128.
constexpr double kSharedBytesPerClock = 176.0;
constexpr double kTmaWriteWeight = 1.5;
// The MMA work an SM does per clock (dense 16-bit).
constexpr double kMmaFlopsPerClock = 4096.0;
// Issue slots of the epilogue per element on one SM sub-partition: an fp32 instruction
// issues a warp per clock; the SFU (ex2, rcp, tanh, lg2, rsqrt, sqrt) serves 16 lanes per SM
// per clock, 8 clocks a warp. Estimates from the instructions kernels/pointwise.cuh emits,
// not measurements of each op: what matters is that an epilogue of SFU ops costs 10-30 slots
// an element where a plain store costs 2 (measured: bias + GELU, then an exp and a
// reciprocal, ran 6% slower than plain at 8192^3 with 128x192 tiles, docs/PERF.md run 10, as
// 30 slots predict).
constexpr double kSfuSlots = 8.0;
constexpr double kStoreSlots = 2.0;     // convert, then store to staging or global memory
constexpr double kAuxLoadSlots = 2.0;   // load and convert
constexpr double kTapSlots = 3.0;       // combine, then a share of the cross-lane reduction
constexpr double kQuantizeSlots = 4.0;  // block amax, scale, convert, store
// What a tile of 64-row units with taps adds once, whatever their number:
// kernels/tap_commit.cuh's fences around the partials and the group counter's arrival,
// about 2 us. Fitted to the H200 (docs/PERF.md run 14): GEMM + row-amax at 8192 x 8192 x
// 1024 ran 0.80 of the unfused sequence on 128x256 tiles and 0.89 in ping-pong, which hides
// it behind the other consumer's MMAs. A unit of 128 rows pays it four times (fitted, run 39):
// ping-pong 128x128 ran 6.5% behind ping-pong 64x256 at 8192^2 x 1024 and 17% at 16384 x
// 8192 x 512, where its mainloop no longer hides it, and 1-7% ahead at K 2048-4096.
constexpr double kTapArrivalClocks = 4000.0;
// What a CTA loses per tile besides its K steps and epilogue: draining the last wgmma
// group, the consumers' hand-off and the ring's first loads of the next tile. Fitted to the
// H200 (docs/PERF.md run 11), not derived: at 2048^3 and 4096^3 ping-pong 64x256 tiles
// measured 0.04-0.05 of cuBLASLt below 128x256 ones, whose half as many tiles each pay it
// once, and at K = 8192 and beyond the two ran even.
constexpr double kTileSwitchClocks = 2000.0;
// The share of it a ping-pong consumer still pays: the other consumer's MMAs run through its
// drain and its next unit's first loads, not through the hand-off between them. Fitted with
// kTmaWriteWeight to runs 26-27 (docs/PERF.md): at 1 the gated MLP at K = 1024 went to
// shared 128x128 tiles, measured 0.05-0.07 behind ping-pong 64x128 (run 22); at 0 plain
// 4096 x 11008 x 4096 tied ping-pong 64x256 with 128x256, measured 0.08-0.12 apart. At 0.5
// ping-pong 64x256 takes 8192^2 x 512 (0.84-0.87 against 128x256's 0.78-0.84, runs 26-27).
// (With today's shared-memory fit the gated MLP at K = 1024 takes 128x128 again; it now
// measures even with ping-pong 64x128, run 39.)
constexpr double kPingPongSwitchShare = 0.5;
// A ping-pong CTA that runs one unit issues it from one consumer warpgroup: measured 0.82 of
// cuBLASLt with ping-pong 64x256 at 512 x 4096 x 4096 (one wave) where shared 128x128 tiles
// ran 0.92-0.96, and 0.90-0.91 against 0.96 at 128 x 11008 x 4096 (run 27). Between 1.05
// and 1.10 those stay on 128x128 and every one-wave ping-pong pick of the model fitted at
// kTmaWriteWeight 0.5 (1024^3, decode-size M, the gated MLP's) stays ping-pong.
constexpr double kLoneConsumerFactor = 1.10;
// What a 2-CTA cluster's multicast saves per K step: half the L2 reads of the shared
// operand. A fixed discount, not a model of L2: the published Hopper ladder on this chip
// measured +5-10% for the cluster step.
constexpr double kClusterDiscount = 0.95;
// How long a stage's TMA loads take to land, in clocks: a ring of S stages runs a K step no
// faster than this over S - 1. Fitted to the H100 at locked clocks (docs/PERF.md run 48): six
// full aux at 4096^3 on 128x192 tiles took 1.26x as long with 2 stages as with 3, and 128x128
// tiles with 2 stages twice as long as ping-pong 128x128 with 3.
constexpr double kLoadLatencyClocks = 1100.0;
// Loaded aux (kernels/epilogue_aux_tiles.cuh): the SM's share of DRAM bandwidth (H100: 3.35
// TB/s over 132 SMs at ~1.6 GHz) and the latency of a sub-tile from DRAM, which a unit pays
// per round of aux_buffers sub-tiles (ping-pong 64x128 at 8192^2 x 512: 1 buffer 13% slower
// than 2, run 48).
constexpr double kDramBytesPerClock = 16.0;
constexpr double kAuxLatencyClocks = 2000.0;
// Split K: each split keeps the ring busy for at least this many K steps (a shorter one is
// mostly its prologue and the partials' round trip), and a tile is split at most this many
// ways (the last split reads every split's partials: S slots of fp32 per element).
constexpr int kMinSplitKSteps = 4;
constexpr int kMaxKSplits = 8;
// The whole waves a call runs before its last wave may split: 128 x 11008 x 4096 on ping-pong
// 64x128 tiles, one wave and 20 tiles split 3 ways, measured 8% slower (41.1 us at locked
// clocks, H100) than one wave of 128x128 tiles on 86 SMs (38.1 us), where a model of the
// tensor cores and shared memory alone saw it 11% faster: B's 90 MB from DRAM is the time
// there. At 4096 x 11008 x 4096 (10 waves and 28 tiles of 128x256 split 2 ways) the split
// was 2.4-4.7% faster (docs/PERF.md run 35).
constexpr std::int64_t kMinWavesBeforeSplit = 2;
// The L2 bytes per clock one SM's split units store and read their partials at, every SM of
// the last wave at once: H100/H200 L2 serves ~5.5 TB/s, about 24 bytes per clock per SM at
// 1.75 GHz; rounded up for the partials that stay in the SM's near L2 partition. An
// estimate, not fitted.
constexpr double kSplitBytesPerClock = 32.0;
struct TileShape {
  int tile_m;
  int tile_n;
  ConsumerSplit split;
};
// Candidates, largest first; a tie keeps the earlier one, so 64-row tiles (both consumers
// on rows a small M has) come before 128x64, a split tile before a ping-pong one, and the
// wider ping-pong unit (fewer operand bytes per MMA; measured 0.94-1.01 of cuBLASLt where
// 128x128 measured 0.89-0.97, docs/PERF.md run 7) before the squarer one. Ping-pong 64x128
// is the one ping-pong unit two GEMMs fit (64 accumulators each): a gated MLP's epilogue
// then hides behind the other consumer's MMAs, as a GELU's does at 64x256; and where a CTA
// runs one unit (a decode-size M, one wave of small tiles) one consumer reads A once where
// two column halves read it twice.
constexpr TileShape kTiles[] = {
    {128, 256, ConsumerSplit::kM},
    {256, 128, ConsumerSplit::kM},
    {128, 192, ConsumerSplit::kM},
    {128, 128, ConsumerSplit::kM},
    {64, 256, ConsumerSplit::kN},
    {64, 128, ConsumerSplit::kN},
    {128, 64, ConsumerSplit::kM},
    {64, 256, ConsumerSplit::kPingPong},
    {128, 128, ConsumerSplit::kPingPong},
    {64, 128, ConsumerSplit::kPingPong},
    // 160 accumulators a consumer: light epilogues only (takes_wide_unit). Measured at locked
    // clocks (H100, docs/PERF.md run 36): plain 8192^2 x 1024 215-217 us against 231-233 on
    // 128x256 2x1, 4096 x 11008 x 4096 516-517 against 530 (which the model, seeing its
    // mainloop shared-memory-bound, still gives 128x256).
    {128, 160, ConsumerSplit::kPingPong},
};

std::string_view split_name(ConsumerSplit split) {
  switch (split) {
    case ConsumerSplit::kM: return "split M";
    case ConsumerSplit::kN: return "split N";
    case ConsumerSplit::kPingPong: return "ping-pong";
  }
  return "?";
}

bool block_scaled(const fusion::FusionProgram& program) {
  return !program.operands.empty() && program.operands[0].block_scale.has_value();
}

int gemm_count(const fusion::FusionProgram& program) {
  return std::max<int>(1, static_cast<int>(program.gemms.size()));
}

// Registers a consumer thread holds across the epilogue besides the accumulators: quantized
// outputs' values, taps' partials, and the row addresses of every full or row aux input past
// the first (kernels/epilogue_access.cuh RowPointers: a 64-bit pointer for each of the
// unit_m / 32 rows a thread holds, a 64-bit column stride, the loaded value and its bounds,
// about 2 * unit_m / 32 + 6). One aux's fit in what kMaxHeldFloats leaves of the 168 registers
// ptxas gives a thread of 384 (ping-pong 128x160 with a full aux: no spill); without the count,
// 8 full bf16 aux at 4096^3 took ping-pong 128x128 and spilled 6 KB, 6 at 8192^2 x 512 1.5 KB
// (ptxas, `fusedgemm compile --sm-count 132`; 72 and 60 bytes with it).
int epilogue_floats(const fusion::FusionProgram& program, const KernelConfig& c) {
  const int per_thread = c.unit_m() * c.unit_n() / kThreadsPerConsumer;
  int floats = static_cast<int>(program.quantized_outputs.size()) * per_thread;
  int addressed = 0;
  const std::vector<int> loaded = loaded_aux(program, c);  // read from shared memory
  for (std::size_t a = 0; a < program.aux.size(); ++a) {
    const auto broadcast = program.aux[a].broadcast;
    if ((broadcast == fusion::Broadcast::kFull || broadcast == fusion::Broadcast::kRow) &&
        std::find(loaded.begin(), loaded.end(), static_cast<int>(a)) == loaded.end()) {
      ++addressed;
    }
  }
  floats += std::max(0, addressed - 1) * (2 * (c.unit_m() / 32) + 6);
  for (const auto& tap : program.taps) {
    if (tap.reduce_m && !tap.reduce_n) floats += c.unit_n() / 4;   // FragmentSlots::kCols
    if (tap.reduce_n && !tap.reduce_m) floats += c.unit_m() / 32;  // kRows
    if (tap.reduce_m && tap.reduce_n) floats += 1;
  }
  return floats;
}

// Floats a consumer thread holds across the epilogue: accumulators (two fragments each when
// block-scaled) and the epilogue's arrays.
int held_floats(const fusion::FusionProgram& program, const KernelConfig& c) {
  const int fragments = block_scaled(program) ? 2 : 1;
  return fragments * gemm_count(program) * c.unit_m() * c.unit_n() / kThreadsPerConsumer +
         epilogue_floats(program, c);
}

bool k_major(const fusion::Operand& op) {
  return op.major == fusion::Major::kK;
}

// The smallest integer K step in elements (tile_k) for the operands' type.
int tile_k_of(const fusion::FusionProgram& program) {
  if (program.operands.empty()) return 64;
  const DataType type = program.buffers[program.operands[0].buffer].data_type;
  return static_cast<int>(8 * kTileKBytes / std::max(1, bits_of(type)));
}

int max_stages(const fusion::FusionProgram& program, const KernelConfig& c) {
  const std::int64_t stage = std::max<std::int64_t>(1, stage_bytes(program, c));
  const std::int64_t room =
      kMaxSharedBytes - kSlackBytes -
      KernelConfig::kConsumers * (store_staging_bytes(program, c) + aux_tile_bytes(c) +
                                  epilogue_scratch_bound(program, c));
  return static_cast<int>(
      std::min<std::int64_t>(kMaxStages, room / (stage + kBarrierBytesPerStage)));
}

// Clocks one CTA spends per 16-bit K step of 16 elements (32 bytes of K) of a tile: the
// larger of its MMA work and its shared-memory traffic (each consumer's wgmma reads A's rows
// once per 64-row group and B's unit once per group; TMA writes every operand tile once, at
// kTmaWriteWeight).
double step_clocks(const fusion::FusionProgram& program, const KernelConfig& c) {
  const int gemms = gemm_count(program);
  const double groups = c.unit_m() / 64.0;
  const double reads = c.tile_readers() * gemms * groups * (64.0 * 32.0 + c.unit_n() * 32.0);
  const double writes = stage_bytes(program, c) * (32.0 / kTileKBytes);
  const double mma = 2.0 * gemms * c.tile_m * c.tile_n * 16.0 / kMmaFlopsPerClock;
  return std::max(mma, (reads + kTmaWriteWeight * writes) / kSharedBytesPerClock);
}

double pointwise_slots(PointwiseMode mode) {
  switch (mode) {
    case PointwiseMode::kIdentity: return 0;
    case PointwiseMode::kGeluTanh:
      return kSfuSlots + 5;  // tanh, 5 fp32 ops
    // tanh and 3 fp32 ops, but held at the two-SFU-op cost it had: the silu * mul epilogue
    // of the gated MLP was fitted at it (docs/PERF.md runs 32 and 39).
    case PointwiseMode::kSilu: return 2 * kSfuSlots + 4;
    case PointwiseMode::kSigmoid: return 2 * kSfuSlots + 4;  // e^-x, rcp
    case PointwiseMode::kGeluErf:
    case PointwiseMode::kTanh: return 2 * kSfuSlots + 12;  // CUDA's erff, tanhf
    case PointwiseMode::kExp:
    case PointwiseMode::kLog: return kSfuSlots + 6;
    case PointwiseMode::kSqrt:
    case PointwiseMode::kRsqrt:
    case PointwiseMode::kReciprocal:
    case PointwiseMode::kDiv: return kSfuSlots + 6;  // IEEE-rounded: a refinement step
    case PointwiseMode::kPow: return 2 * kSfuSlots + 8;
    case PointwiseMode::kRelu: return 2;
    default: return 1;
  }
}

// Loads of an aux input per output element: the epilogue reads a scalar once per unit and a
// vector once per value its 8-element load batch needs (kernels/epilogue_access.cuh,
// AuxRows::twin): a batch spans 2 rows and 4 columns of the fragment.
double aux_loads_per_element(fusion::Broadcast broadcast) {
  switch (broadcast) {
    case fusion::Broadcast::kScalar: return 0;
    case fusion::Broadcast::kRow: return 2.0 / 8.0;
    case fusion::Broadcast::kColumn: return 4.0 / 8.0;
    case fusion::Broadcast::kFull: return 1;
  }
  return 1;
}

// Issue slots per output element of the whole epilogue: its DAG, roundings, stores and taps.
double epilogue_slots(const fusion::FusionProgram& program) {
  double slots = 0;
  for (const auto& node : program.epilogue) {
    if (node.op == fusion::EpilogueOp::kPointwise) slots += pointwise_slots(node.pointwise.mode);
    if (node.op == fusion::EpilogueOp::kAuxLoad) {
      slots += kAuxLoadSlots * aux_loads_per_element(program.aux[node.aux].broadcast);
    }
    if (node.round_to != DataType::kFloat32) slots += 1;
  }
  return slots + kStoreSlots * static_cast<double>(program.outputs.size()) +
         kTapSlots * static_cast<double>(program.taps.size()) +
         kQuantizeSlots * static_cast<double>(program.quantized_outputs.size());
}

// Whether the model may give `program` a unit past kMaxAccumulators accumulators.
bool takes_wide_unit(const fusion::FusionProgram& program) {
  return !program.operands.empty() && program.problem.k <= kWideUnitMaxK &&
         bits_of(program.buffers[program.operands[0].buffer].data_type) == kWideUnitOperandBits &&
         epilogue_slots(program) <= kLightEpilogueSlots;
}

// Clocks a tile's epilogue keeps the SM's sub-partitions issuing: each consumer thread's
// unit_m * unit_n / 128 elements; sharing consumers run theirs at once, two warps to a
// sub-partition, a ping-pong consumer alone, one warp to each.
double epilogue_clocks(const fusion::FusionProgram& program, const KernelConfig& c) {
  const double warps_per_partition = c.split == ConsumerSplit::kPingPong ? 1.0 : 2.0;
  const double per_thread = static_cast<double>(c.unit_m()) * c.unit_n() / kThreadsPerConsumer;
  const double row_groups = c.unit_m() / 64.0;
  double issue = warps_per_partition * per_thread * epilogue_slots(program);
  // Loaded aux: no faster than the SM's share of DRAM brings the tile's aux bytes, nor than
  // a unit's sub-tiles arrive aux_buffers at a time (kernels/epilogue_aux_tiles.cuh).
  double sub_tiles = 0;
  double bytes = 0;
  for (const int a : loaded_aux(program, c)) {
    const int element_bytes = bits_of(program.buffers[program.aux[a].buffer].data_type) / 8;
    bytes += static_cast<double>(c.tile_m) * c.tile_n * element_bytes;
    sub_tiles =
        std::max(sub_tiles, c.unit_m() / 64.0 * c.unit_n() * element_bytes / kernels::kAuxRowBytes);
  }
  if (bytes > 0) {
    issue = std::max({issue, bytes / kDramBytesPerClock,
                      std::ceil(sub_tiles / c.aux_buffers) * kAuxLatencyClocks});
  }
  return issue + (program.taps.empty() ? 0.0 : kTapArrivalClocks * row_groups * row_groups);
}

// Clocks of one unsplit tile's K steps at K = `k`.
double tile_steps_clocks(const fusion::FusionProgram& program, const KernelConfig& c,
                         std::int64_t k) {
  const double stages = static_cast<double>(ceil_div(std::max<std::int64_t>(1, k), c.tile_k));
  const double discount = c.cluster_ctas() > 1 ? kClusterDiscount : 1.0;
  const double stage = (kTileKBytes / 32.0) * step_clocks(program, c) * discount;
  // A ring of S stages has S - 1 loads in flight while one stage is read.
  return stages * std::max(stage, kLoadLatencyClocks / std::max(1, c.stages - 1));
}

// Clocks a tile split `splits` ways adds: every split stores its partials (a CTA tile of
// fp32 per GEMM) once, and the last reads the other's, or all of them.
double split_partials_clocks(const fusion::FusionProgram& program, const KernelConfig& c,
                             int splits) {
  const double reads = splits == 2 ? 1.0 : splits;
  return 4.0 * gemm_count(program) * c.tile_m * c.tile_n * (1.0 + reads) / kSplitBytesPerClock;
}

// The model's clocks for the last wave of tiles, each split `splits` ways (1: unsplit), of a
// tile whose K steps take `steps` and whose epilogue `epilogue` (tile_steps_clocks,
// epilogue_clocks): a split unit's share of the steps, the epilogue, and the partials' round
// trip. A ping-pong tile's epilogue overlaps the other consumer's mainloop, except the last.
double last_wave_clocks(const fusion::FusionProgram& program, const KernelConfig& c, double steps,
                        double epilogue, int splits) {
  const double share = steps / splits;
  const double partials = splits > 1 ? split_partials_clocks(program, c, splits) : 0.0;
  if (c.split == ConsumerSplit::kPingPong) {
    return std::max(share + kPingPongSwitchShare * kTileSwitchClocks, epilogue) + partials +
           epilogue;
  }
  return share + kTileSwitchClocks + epilogue + partials;
}

// The model's time for the declared problem: waves of cluster tiles over the resident
// clusters, each tile its K steps at step_clocks plus its epilogue; the last wave's tiles
// split K where k_split splits them. A call of one wave, whose every tile may split, is
// costed unsplit: the picks at decode-size M were measured so (docs/PERF.md runs 17-18).
double estimated_clocks(const fusion::FusionProgram& program, const KernelConfig& c) {
  const auto& p = program.problem;
  const std::int64_t tiles_m = ceil_div(std::max<std::int64_t>(1, p.m), c.tile_m);
  const std::int64_t tiles_n = ceil_div(std::max<std::int64_t>(1, p.n), c.tile_n);
  const std::int64_t cluster_tiles = std::max<std::int64_t>(1, p.batch) *
                                     ceil_div(tiles_m, c.cluster_m) *
                                     ceil_div(tiles_n, c.cluster_n);
  // With no multiprocessor count, the tiles run one after another on one multiprocessor.
  const double waves =
      c.sm_count > 0
          ? static_cast<double>(ceil_div(cluster_tiles, std::max(1, c.sm_count / c.cluster_ctas())))
          : static_cast<double>(cluster_tiles * c.cluster_ctas());
  const double epilogue = epilogue_clocks(program, c);
  const double steps = tile_steps_clocks(program, c, p.k);
  const KSplit split = k_split(program, c, p);
  const int last_splits = split.first > 0 ? split.splits : 1;
  if (c.split == ConsumerSplit::kPingPong) {
    // Where a CTA runs one unit there is no other consumer to overlap: one warpgroup issues
    // every MMA alone.
    if (waves <= 1) return steps * kLoneConsumerFactor + kTileSwitchClocks + epilogue;
    const double mainloop = steps + kPingPongSwitchShare * kTileSwitchClocks;
    return (waves - 1) * std::max(mainloop, epilogue) +
           last_wave_clocks(program, c, steps, epilogue, last_splits);
  }
  return (waves - 1) * (steps + kTileSwitchClocks + epilogue) +
         last_wave_clocks(program, c, steps, epilogue, last_splits);
}

// A 2-CTA cluster where the tiles come in pairs: along M (B shared) when there are M tiles
// to pair, else along N.
void choose_cluster(const fusion::FusionProgram& program, KernelConfig& c) {
  c.cluster_m = 1;
  c.cluster_n = 1;
  const std::int64_t tiles_m = ceil_div(std::max<std::int64_t>(1, program.problem.m), c.tile_m);
  const std::int64_t tiles_n = ceil_div(std::max<std::int64_t>(1, program.problem.n), c.tile_n);
  KernelConfig pair = c;
  if (tiles_m >= 2) {
    pair.cluster_m = 2;
  } else if (tiles_n >= 2) {
    pair.cluster_n = 2;
  } else {
    return;
  }
  if (!config_violation(program, pair) &&
      estimated_clocks(program, pair) < estimated_clocks(program, c)) {
    c = pair;
  }
}

}  // namespace

std::int64_t stage_bytes(const fusion::FusionProgram& program, const KernelConfig& config) {
  std::int64_t bytes = 0;
  for (const auto& op : program.operands) {
    const int rows = op.role == Role::kA ? config.tile_m : config.tile_n;
    bytes += bytes_of(program.buffers[op.buffer].data_type, std::int64_t{rows} * config.tile_k);
  }
  return bytes;
}

std::int64_t kernel_shared_bytes(const fusion::FusionProgram& program, const KernelConfig& config,
                                 std::int64_t scratch_bytes) {
  const std::int64_t scratch =
      (scratch_bytes + kScratchAlignBytes - 1) / kScratchAlignBytes * kScratchAlignBytes;
  return (stage_bytes(program, config) + kBarrierBytesPerStage) * config.stages +
         KernelConfig::kConsumers *
             (store_staging_bytes(program, config) + aux_tile_bytes(config) + scratch) +
         kSlackBytes;
}

std::int64_t epilogue_scratch_bound(const fusion::FusionProgram& program,
                                    const KernelConfig& config) {
  if (program.taps.empty()) return 0;
  // A staging area of 4 warps x unit_n floats, then each tap's staged partial (at most a
  // unit's rows or columns, or 4 floats), codegen/epilogue_plan.cpp.
  const std::int64_t widest = std::max({config.unit_m(), config.unit_n(), 4});
  const std::int64_t floats =
      4 * std::int64_t{config.unit_n()} + widest * static_cast<std::int64_t>(program.taps.size());
  return floats * 4;
}

namespace {

// The epilogue tiles TMA can move: the first `limit` of `items` (outputs or aux) of 16- or
// 32-bit elements that `shaped` accepts, as indices.
template <class Items, class Shaped>
std::vector<int> tma_tiles_of(const fusion::FusionProgram& program, const Items& items, int limit,
                              Shaped shaped) {
  std::vector<int> tiles;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int bits = bits_of(program.buffers[items[i].buffer].data_type);
    if (!shaped(items[i]) || (bits != 16 && bits != 32)) continue;
    if (static_cast<int>(tiles.size()) == limit) break;
    tiles.push_back(static_cast<int>(i));
  }
  return tiles;
}

}  // namespace

std::vector<int> tma_store_outputs(const fusion::FusionProgram& program) {
  return tma_tiles_of(program, program.outputs, kernels::kMaxTmaStores,
                      [](const auto& out) { return out.major == fusion::Major::kN; });
}

std::vector<int> loaded_aux(const fusion::FusionProgram& program, const KernelConfig& config) {
  return config.loaded_aux > 0 ? tma_load_aux(program) : std::vector<int>{};
}

std::vector<int> tma_load_aux(const fusion::FusionProgram& program) {
  return tma_tiles_of(program, program.aux, kernels::kMaxTmaAuxLoads,
                      [](const auto& aux) { return aux.broadcast == fusion::Broadcast::kFull; });
}

std::int64_t aux_tile_bytes(const KernelConfig& config) {
  constexpr std::int64_t kAtom = 1024;
  const std::int64_t buffers = std::int64_t{config.loaded_aux} * config.aux_buffers;
  return (buffers * (kernels::kAuxBufferBytes + 8) + kAtom - 1) / kAtom * kAtom;
}

int default_staging_buffers(const fusion::FusionProgram& program, const KernelConfig& config) {
  if (config.split != ConsumerSplit::kPingPong) return 2;
  KernelConfig one = config;
  one.staging_buffers = 1;
  KernelConfig two = config;
  two.staging_buffers = 2;
  return max_stages(program, two) < max_stages(program, one) ? 1 : 2;
}

namespace {

// The sub-tiles (TMA stores) of a unit of the one staged output (its first, where several).
int staged_sub_tiles(const fusion::FusionProgram& program, const KernelConfig& config) {
  const std::vector<int> staged = tma_store_outputs(program);
  if (staged.empty()) return 0;
  const int bytes = bits_of(program.buffers[program.outputs[staged[0]].buffer].data_type) / 8;
  // 0 for a unit row no sub-tile row divides (no unit the kernel takes has one).
  const int row_bytes = kernels::staged_row_bytes(config.unit_n() * bytes);
  if (row_bytes == 0) return 0;
  return config.unit_m() / kernels::kStagedRows * (config.unit_n() * bytes / row_bytes);
}

}  // namespace

int borrowed_staging_buffers(const fusion::FusionProgram& program, const KernelConfig& config) {
  if (config.split == ConsumerSplit::kPingPong || tma_store_outputs(program).size() != 1 ||
      config.staging_buffers < 2 || block_scaled(program)) {
    return 0;
  }
  const std::int64_t fit =
      stage_bytes(program, config) / (KernelConfig::kConsumers * kernels::kStagedBufferBytes);
  return static_cast<int>(std::max<std::int64_t>(
      0, std::min<std::int64_t>(fit, staged_sub_tiles(program, config) - config.staging_buffers)));
}

int stores_after_borrowed(const fusion::FusionProgram& program, const KernelConfig& config) {
  if (config.borrowed_buffers == 0) return 0;
  return stores_after_borrowed(staged_sub_tiles(program, config), config.staging_buffers,
                               config.borrowed_buffers);
}

std::int64_t store_staging_bytes(const fusion::FusionProgram& program, const KernelConfig& config) {
  return static_cast<std::int64_t>(tma_store_outputs(program).size()) * config.staging_buffers *
         kernels::kStagedBufferBytes;
}

std::optional<std::string> config_violation(const fusion::FusionProgram& program,
                                            const KernelConfig& c) {
  const int gemms = gemm_count(program);
  const int fragments = block_scaled(program) ? 2 : 1;
  const std::string tile = fmt::format("tile {}x{} {}", c.tile_m, c.tile_n, split_name(c.split));
  const bool widths = std::find(std::begin(kUnitWidths), std::end(kUnitWidths), c.unit_n()) !=
                      std::end(kUnitWidths);
  const bool tile_m_ok = c.tile_m == 64 || c.tile_m == 128 || c.tile_m == 256;
  if (!tile_m_ok || c.tile_n <= 0 || c.unit_m() % 64 != 0 || c.tile_n % 32 != 0 || !widths) {
    return fmt::format(
        "{}: each consumer's unit is {}x{}; legal: tile_m 64, 128 or 256, units of whole "
        "64-row groups, 64, 128, 160, 192 or 256 columns wide (the wgmma N)",
        tile, c.unit_m(), c.unit_n());
  }
  for (const auto& op : program.operands) {
    if (op.role == Role::kB && !k_major(op) && c.tile_n % 64 != 0) {
      return fmt::format(
          "{}: B '{}' is N-major; legal: a K-major B, or tile_n a multiple of 64 (whole "
          "64-element N-major boxes)",
          tile, program.buffers[op.buffer].name);
    }
  }
  const int accumulators = fragments * gemms * c.unit_m() * c.unit_n() / kThreadsPerConsumer;
  const bool ping_pong = c.split == ConsumerSplit::kPingPong;
  if (accumulators > kernels::max_accumulators(ping_pong, gemms * fragments)) {
    return fmt::format(
        "{}: {} GEMM(s) x {} fragment(s) x {} accumulators per consumer thread; legal: at most "
        "{} ({} in a ping-pong unit of one GEMM)",
        tile, gemms, fragments, c.unit_m() * c.unit_n() / kThreadsPerConsumer,
        kernels::max_accumulators(false, 1), kernels::max_accumulators(true, 1));
  }
  if (block_scaled(program) &&
      (c.split != ConsumerSplit::kM || (c.tile_n != 64 && c.tile_n != 128))) {
    return fmt::format(
        "{}: block-scaled operands; legal: row halves and tile_n 64 or 128 (a tile's columns "
        "in one 128-column scale block of B)",
        tile);
  }
  for (const auto& q : program.quantized_outputs) {
    if (q.block_cols <= 0 || c.unit_n() % q.block_cols != 0) {
      return fmt::format(
          "{}: quantized output '{}' has blocks of 1x{}; legal: a consumer's {} columns a "
          "multiple of the block",
          tile, program.buffers[q.buffer].name, q.block_cols, c.unit_n());
    }
  }
  if (c.staging_buffers < 1 || c.staging_buffers > kernels::kMaxStagedBuffers) {
    return fmt::format("{}: {} staging buffers per stored output; legal: 1 to {}", tile,
                       c.staging_buffers, kernels::kMaxStagedBuffers);
  }
  if (c.loaded_aux > 0) {
    // The fewest sub-tiles a unit has of a loaded aux: those of the 16-bit ones, if any
    // (kernels/epilogue_aux_tiles.cuh: one prefetched per buffer).
    int sub_tiles = std::numeric_limits<int>::max();
    for (const int a : loaded_aux(program, c)) {
      const int bytes = bits_of(program.buffers[program.aux[a].buffer].data_type) / 8;
      sub_tiles = std::min(sub_tiles, c.unit_m() / kernels::kStagedRows * c.unit_n() * bytes /
                                          kernels::kAuxRowBytes);
    }
    if (c.aux_buffers < 1 || c.aux_buffers > kernels::kMaxAuxBuffers || c.aux_buffers > sub_tiles) {
      return fmt::format(
          "{}: {} buffers per loaded aux; legal: 1 to {} and at most a unit's {} sub-tiles of "
          "64 rows x {} bytes",
          tile, c.aux_buffers, kernels::kMaxAuxBuffers, sub_tiles, kernels::kAuxRowBytes);
    }
  }
  if (c.cluster_m < 1 || c.cluster_n < 1 || c.cluster_ctas() > 2) {
    return fmt::format("cluster {}x{}; legal: 1x1, 2x1 or 1x2", c.cluster_m, c.cluster_n);
  }
  // Each CTA loads its rows of an operand: all of them, or its half of a shared one.
  for (const auto& op : program.operands) {
    const bool shared = op.role == Role::kA ? c.cluster_n > 1 : c.cluster_m > 1;
    const int rows = (op.role == Role::kA ? c.tile_m : c.tile_n) / (shared ? c.cluster_ctas() : 1);
    // A K-major operand's rows of a CTA are one TMA box (codegen's plan_tma).
    if (k_major(op) && rows > kMaxTmaBoxRows) {
      return fmt::format(
          "{}: each CTA loads {} rows of {} '{}' in one TMA box; legal: at most {} (a TMA box's "
          "extent): a narrower tile, or a 2-CTA cluster sharing the operand",
          tile, rows, to_string(op.role), program.buffers[op.buffer].name, kMaxTmaBoxRows);
    }
    if (!shared) continue;
    const int element_bytes = std::max(1, bits_of(program.buffers[op.buffer].data_type) / 8);
    const int box = kTileKBytes / element_bytes;  // elements of an MN-major box
    if (k_major(op) ? rows % 8 != 0 : rows % box != 0) {
      return fmt::format(
          "cluster {}x{} with {}: each CTA loads {} rows of {} '{}'; legal: a multiple of {} "
          "({})",
          c.cluster_m, c.cluster_n, tile, rows, to_string(op.role), program.buffers[op.buffer].name,
          k_major(op) ? 8 : box, k_major(op) ? "whole swizzle atoms" : "whole MN-major boxes");
    }
  }
  const int most = max_stages(program, c);
  if (c.stages < kMinStages || c.stages > most) {
    return fmt::format(
        "{}: {} stages of {} bytes; legal: {} to {} (227 KB of shared memory with the "
        "epilogue's {} bytes per consumer)",
        tile, c.stages, stage_bytes(program, c), kMinStages, std::max(kMinStages, most),
        store_staging_bytes(program, c) + aux_tile_bytes(c) + epilogue_scratch_bound(program, c));
  }
  return std::nullopt;
}

Result<KernelConfig> choose_kernel_config(const fusion::FusionProgram& program, int sm_count,
                                          const KernelTuning& tuning) {
  if (tuning.aux_buffers &&
      (*tuning.aux_buffers < 0 || *tuning.aux_buffers > kernels::kMaxAuxBuffers)) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("kernel_tuning: graph '{}': aux_buffers {}; legal: 0 (aux read from "
                              "global memory) to {} buffers per full aux and consumer",
                              program.graph_name, *tuning.aux_buffers, kernels::kMaxAuxBuffers));
  }
  KernelConfig base;
  base.tile_k = tile_k_of(program);
  base.sm_count = std::max(0, sm_count);
  base.dependent_launch = tuning.dependent_launch;
  base.staged_outputs = static_cast<int>(tma_store_outputs(program).size());
  base.loaded_aux = static_cast<int>(tma_load_aux(program).size());
  // The candidates that agree with every tuned tile field, or the tuned tile alone.
  std::vector<TileShape> shapes;
  for (const TileShape& shape : kTiles) {
    if (tuning.tile_m && *tuning.tile_m != shape.tile_m) continue;
    if (tuning.tile_n && *tuning.tile_n != shape.tile_n) continue;
    if (tuning.split_n && *tuning.split_n != (shape.split == ConsumerSplit::kN)) continue;
    if (tuning.ping_pong && *tuning.ping_pong != (shape.split == ConsumerSplit::kPingPong)) {
      continue;
    }
    shapes.push_back(shape);
  }
  if (shapes.empty()) {
    const ConsumerSplit split = tuning.ping_pong.value_or(false) ? ConsumerSplit::kPingPong
                                : tuning.split_n.value_or(false) ? ConsumerSplit::kN
                                                                 : ConsumerSplit::kM;
    shapes.push_back({tuning.tile_m.value_or(128), tuning.tile_n.value_or(256), split});
  }
  const bool tuned_tile = tuning.tile_m || tuning.tile_n || tuning.ping_pong;
  std::optional<KernelConfig> best;
  std::optional<std::string> first_violation;
  double best_clocks = std::numeric_limits<double>::infinity();
  int best_excess = std::numeric_limits<int>::max();  // held floats past kMaxHeldFloats
  // The shape's config with `loaded` aux through shared memory (all of tma_load_aux, or none)
  // in `aux_buffers` buffers each.
  const auto shape_config = [&](const TileShape& shape, int loaded, int aux_buffers) {
    KernelConfig c = base;
    c.tile_m = shape.tile_m;
    c.tile_n = shape.tile_n;
    c.split = shape.split;
    c.loaded_aux = loaded;
    c.aux_buffers = aux_buffers;
    c.staging_buffers = tuning.staging_buffers.value_or(default_staging_buffers(program, c));
    c.stages = tuning.stages.value_or(std::max(kMinStages, max_stages(program, c)));
    if (tuning.cluster_m || tuning.cluster_n) {
      c.cluster_m = tuning.cluster_m.value_or(1);
      c.cluster_n = tuning.cluster_n.value_or(1);
    } else if (!config_violation(program, c)) {
      // Only a tile the kernel takes is costed (a tuned tile may be 0 or negative).
      choose_cluster(program, c);
    }
    return c;
  };
  for (const TileShape& shape : shapes) {
    // aux_buffers 0: the aux are read from global memory element by element.
    const bool direct = tuning.aux_buffers == 0;
    KernelConfig c = shape_config(shape, direct ? 0 : base.loaded_aux,
                                  direct ? 1 : tuning.aux_buffers.value_or(1));
    if (c.loaded_aux > 0 && !tuning.aux_buffers) {
      // More buffers each where the ring keeps its stages and the model finds them faster.
      for (const int buffers : {2, 4}) {
        const KernelConfig more = shape_config(shape, base.loaded_aux, buffers);
        if (!config_violation(program, more) &&
            (config_violation(program, c) ||
             estimated_clocks(program, more) < estimated_clocks(program, c))) {
          c = more;
        }
      }
      // Where even one buffer each leaves the ring too few stages, the aux are read from
      // global memory element by element.
      if (config_violation(program, c)) c = shape_config(shape, 0, 1);
    }
    if (tuning.aux_buffers > 0 && c.loaded_aux == 0) {
      if (!first_violation) {
        first_violation = fmt::format(
            "aux_buffers is {}, but graph '{}' has no full 16- or 32-bit aux input to load "
            "through TMA: leave aux_buffers unset",
            *tuning.aux_buffers, program.graph_name);
      }
      continue;
    }
    if (const auto why = config_violation(program, c)) {
      if (!first_violation) first_violation = why;
      continue;
    }
    c.borrowed_buffers = borrowed_staging_buffers(program, c);
    if (tuning.borrow_staging == false) c.borrowed_buffers = 0;
    if (tuning.borrow_staging == true && c.borrowed_buffers == 0) {
      if (!first_violation) {
        first_violation = fmt::format(
            "tile {}x{} {}: borrow_staging is true, but staging is borrowed only where both "
            "consumers share each tile, one output is staged through TMA ({} here) with 2 or "
            "more own buffers ({} here) and fewer than the unit's sub-tiles ({} here), the "
            "operands are not block-scaled and a stage holds a buffer per consumer: leave "
            "borrow_staging unset",
            c.tile_m, c.tile_n, split_name(c.split), tma_store_outputs(program).size(),
            c.staging_buffers, staged_sub_tiles(program, c));
      }
      continue;
    }
    if (!tuned_tile && c.unit_m() * c.unit_n() / kThreadsPerConsumer > kMaxAccumulators &&
        !takes_wide_unit(program)) {
      continue;
    }
    // Within the register budget first, then the fastest.
    const int excess = std::max(0, held_floats(program, c) - kMaxHeldFloats);
    const double clocks = estimated_clocks(program, c);
    if (excess < best_excess || (excess == best_excess && clocks < best_clocks)) {
      best = c;
      best_clocks = clocks;
      best_excess = excess;
    }
  }
  if (!best) {
    const bool tuned = tuning.tile_m || tuning.tile_n || tuning.split_n || tuning.ping_pong ||
                       tuning.cluster_m || tuning.cluster_n || tuning.stages ||
                       tuning.staging_buffers || tuning.borrow_staging || tuning.aux_buffers;
    // Untuned, no shape fits the program (a generator limit: the graph is declined); tuned,
    // the caller asked for what the kernel cannot take.
    return Status(tuned ? ErrorCode::kInvalidArgument : ErrorCode::kUnavailable,
                  fmt::format("{}: graph '{}': no kernel shape fits{}: {}",
                              tuned ? "kernel_tuning" : "kernel_config", program.graph_name,
                              tuned ? " the tuning" : "", first_violation.value_or("none")));
  }
  return *best;
}

std::int64_t raster_group(const KernelConfig& config, const fusion::ProblemShape& problem,
                          std::int64_t clusters) {
  const std::int64_t tiles_m = ceil_div(std::max<std::int64_t>(1, problem.m), config.tile_m);
  const std::int64_t rows = ceil_div(tiles_m, config.cluster_m);
  // `clusters` run g rows x clusters / g columns of cluster tiles at once: the panels they
  // read are g * (cluster_m * tile_m) rows of A and (clusters / g) * (cluster_n * tile_n)
  // rows of B, least at g = sqrt(clusters * height_n / height_m).
  const double height_m = static_cast<double>(config.cluster_m) * config.tile_m;
  const double height_n = static_cast<double>(config.cluster_n) * config.tile_n;
  const double g =
      std::sqrt(static_cast<double>(std::max<std::int64_t>(1, clusters)) * height_n / height_m);
  return std::clamp<std::int64_t>(std::llround(g), 1, std::max<std::int64_t>(1, rows));
}

kernels::ScheduleDivisors schedule_divisors(const KernelConfig& config,
                                            const fusion::ProblemShape& problem,
                                            std::int64_t raster_group) {
  // Fewer than 2^31 tile rows and columns keep the schedule's tile count from overflowing;
  // divisors() itself declines 2^31 tiles or more.
  constexpr std::int64_t kLimit = std::int64_t{1} << 31;
  if (problem.batch != 1 || problem.m <= 0 || problem.n <= 0 || config.tile_m <= 0 ||
      config.tile_n <= 0 || problem.m >= kLimit * config.tile_m ||
      problem.n >= kLimit * config.tile_n) {
    return {};
  }
  const auto& p = problem;
  const auto& c = config;
  if (c.cluster_m == 2) {
    return kernels::TileScheduler<2, 1>(1, p.m, p.n, c.tile_m, c.tile_n, raster_group, 1)
        .divisors();
  }
  if (c.cluster_n == 2) {
    return kernels::TileScheduler<1, 2>(1, p.m, p.n, c.tile_m, c.tile_n, raster_group, 1)
        .divisors();
  }
  return kernels::TileScheduler<1, 1>(1, p.m, p.n, c.tile_m, c.tile_n, raster_group, 1).divisors();
}

KSplit k_split(const fusion::FusionProgram& program, const KernelConfig& config,
               const fusion::ProblemShape& problem) {
  if (config.sm_count <= 0 || problem.m <= 0 || problem.n <= 0 || problem.batch <= 0) return {};
  if (config.unit_m() > 64 &&
      split_slot_floats(program, config) / kThreadsPerConsumer > kernels::kMaxSplitKAccumulators) {
    return {};  // a unit of two row groups with more accumulators than the split path fits
  }
  const std::int64_t k_steps = ceil_div(std::max<std::int64_t>(0, problem.k), config.tile_k);
  const std::int64_t rows = ceil_div(ceil_div(problem.m, config.tile_m), config.cluster_m);
  const std::int64_t cols = ceil_div(ceil_div(problem.n, config.tile_n), config.cluster_n);
  // A call of absurd extents (refused later by the grid_extent rule) has more tiles than
  // clusters however its product is rounded: overflow reads as "many", unsplit.
  std::int64_t cluster_tiles = 0;
  if (__builtin_mul_overflow(rows, cols, &cluster_tiles) ||
      __builtin_mul_overflow(cluster_tiles, problem.batch, &cluster_tiles) ||
      cluster_tiles > INT32_MAX) {
    return {};
  }
  // The split units fill the last wave's clusters and no more. Splitting into more waves
  // measured slower: 16 x 11008 x 4096 at 43 of 66 clusters ran 0.71-0.73 of cuBLASLt split
  // 3 ways (two waves) against 0.83 unsplit (docs/PERF.md run 17). So the partials are at
  // most one slot per SM and consumer: 64 KB each (128 threads x 128 fp32), 17 MB on 132
  // SMs.
  const std::int64_t clusters = std::max(1, config.sm_count / config.cluster_ctas());
  const std::int64_t tail = cluster_tiles % clusters;
  if (tail == 0) return {};
  const std::int64_t most =
      std::min({clusters / tail, k_steps / kMinSplitKSteps, std::int64_t{kMaxKSplits}});
  if (most < 2) return {};
  // One wave (the tiles fill a fraction of the device): as many splits as fit, measured
  // (docs/PERF.md runs 17-18). After kMinWavesBeforeSplit whole waves, the split that
  // shortens the last wave most by the model (last_wave_clocks), if any does.
  if (cluster_tiles < clusters) return {static_cast<int>(most), 0, cluster_tiles};
  if (cluster_tiles < kMinWavesBeforeSplit * clusters) return {};
  const double steps = tile_steps_clocks(program, config, problem.k);
  const double epilogue = epilogue_clocks(program, config);
  int best = 1;
  double best_clocks = last_wave_clocks(program, config, steps, epilogue, 1);
  for (int s = 2; s <= most; ++s) {
    const double clocks = last_wave_clocks(program, config, steps, epilogue, s);
    if (clocks < best_clocks) {
      best = s;
      best_clocks = clocks;
    }
  }
  if (best < 2) return {};
  return {best, cluster_tiles - tail, tail};
}

std::int64_t split_slot_floats(const fusion::FusionProgram& program, const KernelConfig& config) {
  return std::int64_t{gemm_count(program)} * config.unit_m() * config.unit_n();
}

std::string describe(const KernelConfig& c) {
  const std::string cluster = c.cluster_ctas() == 1
                                  ? "no cluster"
                                  : fmt::format("cluster {}x{} ({} multicast)", c.cluster_m,
                                                c.cluster_n, c.cluster_m > 1 ? "B" : "A");
  const std::string consumers =
      c.split == ConsumerSplit::kPingPong
          ? fmt::format("{} ping-pong consumers, a tile each", KernelConfig::kConsumers)
          : fmt::format("{} consumers of {}x{}", KernelConfig::kConsumers, c.unit_m(), c.unit_n());
  return fmt::format(
      "tile {}x{}x{} ({}), {}, {} stages, persistent grid, grouped tile order, {}{}{}", c.tile_m,
      c.tile_n, c.tile_k, consumers, cluster, c.stages,
      c.staged_outputs > 0
          ? fmt::format("TMA-store epilogue ({} output(s) staged, {} buffer(s) each{}; direct "
                        "where a call's layout cannot take TMA)",
                        c.staged_outputs, c.staging_buffers,
                        c.borrowed_buffers > 0
                            ? fmt::format(" + {} borrowed from the ring", c.borrowed_buffers)
                            : std::string())
          : std::string("direct-store epilogue"),
      c.loaded_aux > 0 ? fmt::format(", {} full aux loaded through TMA ({} buffer(s) each)",
                                     c.loaded_aux, c.aux_buffers)
                       : std::string(),
      c.dependent_launch ? ", programmatic dependent launch" : "");
}

}  // namespace fusedgemm::recipe
