// The sm90 mainloop of every fused kernel, warp-specialized and persistent: each CTA runs
// output tiles of TileM x TileN from the static schedule (kernels/tile_scheduler.cuh) until
// none is left; for each, acc[g] = A_g[tile rows, :] * B_g[tile cols, :]^T per GEMM g, and
// the generated epilogue consumes the accumulators. Device code; no host headers (NVRTC).
// The generated translation unit instantiates it (codegen/kernel_source.cpp).
//
// Roles (kernel parameters, KernelArgs::buffers, kernel axis order, elements):
//   A  (b, M, K), K-major or M-major, read by TMA through KernelArgs::tma[slot]
//   B  (b, N, K), K-major or N-major, likewise; one B (and accumulator) per GEMM
//   several GEMMs may share one A operand (a gated MLP reads X once per stage)
//   operand batch 1 is broadcast: args.buffers[param].shape[0] == 1 -> batch coordinate 0
//
// Warpgroups (384 threads):
//   0, producer: one thread waits for a free stage ("empty" barrier), arms its "full"
//      barrier with the stage's bytes and issues the TMA boxes, tile after tile; its
//      warpgroup gives registers back (kProducerRegisters).
//   1, 2, consumers: consumer c computes its unit with wgmma — its half of every tile
//      (ConsumerSplit kM, kN: rows or columns), or every other tile whole (kPingPong) —,
//      keeps Math::kInFlight wgmma groups in flight and hands each stage back once its
//      MMAs are done, then runs the generated epilogue over its unit while the producer
//      already fills the next tile's stages (and, ping-pong, the other consumer's MMAs
//      keep the tensor cores busy). The first sub-tiles of the full aux inputs the epilogue
//      reads through shared memory are TMA-loaded before the unit's MMAs
//      (kernels/epilogue_aux_tiles.cuh). Consumers sharing each tile keep its last stage back
//      (Layout::kBorrowedBuffers > 0): once both are done with it, their epilogues stage
//      output sub-tiles there besides their own buffers, and each hands the stage back a K
//      step into its next unit, after its stores have read it.
// The (stage, phase) pair of the ring runs on across tiles on both sides; a ping-pong
// consumer steps over the other consumer's tiles' stages.
//
// Cluster (ClusterM x ClusterN = 1 or 2 CTAs): the CTAs of a cluster compute neighbouring
// tiles that read the same rows of B (along M) or of A (along N); each loads its part of
// that operand and multicasts it to both, and each consumer hands a stage back to every CTA
// of the cluster. Barriers are initialised before a cluster barrier, and a producer waits
// for its ring to drain before its CTA exits (no arrival may reach an exited CTA).
//
// Split K (KernelArgs::split.splits S > 1, chosen per call by the host where the call's
// tiles would leave SMs idle: every tile of a call that fills a fraction of the device, or
// the tiles of a last, partial wave; kernels whose consumers' units are one 64-row group or
// hold at most kMaxSplitKAccumulators): each such tile is S work units over disjoint K steps;
// the producer loads only a unit's steps, and a consumer's unit stores its sums to the
// workspace where the last of the S adds them and runs the epilogue (kernels/split_k.cuh).
//
// Partial tiles: TMA fills out-of-bounds elements of a box with zeros (so K needs no
// multiple of kTileK, and a tile past the edge computes zeros); the epilogue skips rows
// >= M and columns >= N, and is not run for a consumer half wholly outside the problem.
// Shared-memory map: kernels/gemm_sm90_config.cuh (GemmSm90Layout).
//
// FUSEDGEMM_KERNEL_DEBUG 1, defined before this header (generated source: from
// KernelSourceOptions::debug, so it is part of the source and of the cache key), checks the
// launch (block size, dynamic shared memory, buffer count) and bounds every barrier wait to
// 2 s: a violation prints the CTA, the barrier and the stage, then traps. Its printf makes
// ptxas serialize wgmma (C7510) and adds a stack frame: debug builds only.
#pragma once

#include "kernels/epilogue_contract.cuh"
#include "kernels/gemm_sm90_config.cuh"
#include "kernels/kernel_args.h"
#include "kernels/ptx/barrier.cuh"
#include "kernels/ptx/cluster.cuh"
#include "kernels/ptx/fence.cuh"
#include "kernels/ptx/grid_dependency.cuh"
#include "kernels/ptx/mbarrier.cuh"
#include "kernels/ptx/registers.cuh"
#include "kernels/ptx/smem.cuh"
#include "kernels/ptx/smem_descriptor.cuh"
#include "kernels/ptx/special_registers.cuh"
#include "kernels/ptx/tma.cuh"
#include "kernels/ptx/wgmma.cuh"
#include "kernels/split_k.cuh"
#include "kernels/tile_scheduler.cuh"

#ifndef FUSEDGEMM_KERNEL_DEBUG
#define FUSEDGEMM_KERNEL_DEBUG 0
#endif

namespace fusedgemm::kernels {

// The ring position both sides walk: the stage and the parity of its current fill.
struct RingState {
  int stage = 0;
  unsigned phase = 0;
  template <int Stages>
  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1u;
    }
  }
  // `steps` advances at once (steps >= 0).
  template <int Stages>
  __device__ void skip(int steps) {
    const int to = stage + steps;
    stage = to % Stages;
    phase ^= static_cast<unsigned>(to / Stages) & 1u;
  }
};

template <class ConfigT, class Epilogue, template <class> class Math>
struct GemmSm90 {
  using Config = ConfigT;
  using Layout = GemmSm90Layout<Config>;
  using Scheduler = TileScheduler<Config::kClusterM, Config::kClusterN>;

  static constexpr int kTileM = Config::kTileM;
  static constexpr int kTileN = Config::kTileN;
  static constexpr int kUnitM = Layout::kUnitM;
  static constexpr int kUnitN = Layout::kUnitN;
  static constexpr int kStages = Config::kStages;
  static constexpr int kGemms = Config::kGemmCount;
  static constexpr int kOperands = Config::kOperandCount;
  static constexpr int kConsumers = Layout::kConsumers;
  static constexpr int kClusterCtas = Layout::kClusterCtas;
  static constexpr int kWarpgroupThreads = 128;
  static constexpr int kThreads = kWarpgroupThreads * (1 + kConsumers);
  // Registers per thread after setmaxnreg. The producer's one issuing thread needs a tile
  // loop and coordinates; a consumer holds up to 128 fp32 accumulators plus the epilogue's
  // values. 40 x 128 + 232 x 256 = 64,512 of the SM's 65,536.
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
  static_assert(kProducerRegisters * kWarpgroupThreads +
                        kConsumerRegisters * kWarpgroupThreads * kConsumers <=
                    65536,
                "the register split exceeds the SM's 64K registers: lower kConsumerRegisters");
  // wgmma's M is 64: a consumer's rows are kUnitM / 64 row groups, each its own MMA.
  static constexpr int kMmaM = 64;
  static constexpr int kKSteps = Layout::kTileKBytes / ptx::kWgmmaKBytes;  // MMAs per stage
  // K-rows one MMA step advances in an MN-major tile (16 for 16-bit types).
  static constexpr int kMmaKElems = ptx::kWgmmaKBytes / Layout::kElementBytes;
  // Accumulators per consumer thread, every GEMM's together: kernels::max_accumulators.
  static constexpr int kMaxAccumulators = max_accumulators(Layout::kPingPong, kGemms);
  // How long a DEBUG build waits on a barrier before declaring it hung: a stage's loads
  // take microseconds, so 2 s only ever trips on a hang.
  static constexpr unsigned long long kDebugWaitNs = 2000000000ull;

  using Frag = Fragment<kUnitM, kUnitN>;
  using Accumulators = float[kGemms][Frag::kCount];
  // Epilogue units per CTA tile: the split tiles' partials are laid out by them.
  static constexpr int kUnitsPerTile = Layout::kPingPong ? 1 : kConsumers;
  // Whether a call may split K on this kernel (the host's recipe::k_split agrees).
  static constexpr bool kSplitK =
      kUnitM == kMmaM || kGemms * Frag::kCount <= kMaxSplitKAccumulators;

  static_assert(kGemms >= 1, "a kernel computes at least one GEMM");
  static_assert(kGemms * Frag::kCount <= kMaxAccumulators,
                "accumulators exceed kMaxAccumulators registers per consumer thread: choose a "
                "smaller tile in choose_kernel_config");

  __host__ __device__ static constexpr bool operands_share_width() {
    for (int o = 0; o < kOperands; ++o) {
      if (element_bytes(Config::kOperands[o].type) != Layout::kElementBytes) return false;
    }
    return true;
  }
  __host__ __device__ static constexpr bool gemms_valid() {
    for (int g = 0; g < kGemms; ++g) {
      const int a = Config::kGemmA[g];
      const int b = Config::kGemmB[g];
      if (a < 0 || a >= kOperands || b < 0 || b >= kOperands) return false;
      if (Config::kOperands[a].role != OperandRole::kA) return false;
      if (Config::kOperands[b].role != OperandRole::kB) return false;
    }
    return true;
  }
  static_assert(operands_share_width(),
                "all operands of one kernel must have one element width (one K step in bytes)");
  static_assert(gemms_valid(), "kGemmA/kGemmB must name an A and a B operand of kOperands");

  // --- barriers ---------------------------------------------------------------------------

  __device__ static unsigned full_barrier(unsigned base, int stage) {
    return base + Layout::kBarrierOffset + 8u * static_cast<unsigned>(stage);
  }
  __device__ static unsigned empty_barrier(unsigned base, int stage) {
    return base + Layout::kBarrierOffset + 8u * static_cast<unsigned>(kStages + stage);
  }
  __device__ static unsigned turn_barrier(unsigned base, int consumer) {
    return base + Layout::kTurnOffset + 8u * static_cast<unsigned>(consumer);
  }
  // Consumer c's loaded aux buffers, then their barriers (Layout::kAuxBarriers on).
  __device__ static unsigned aux_area(unsigned base, int consumer) {
    return base + static_cast<unsigned>(Layout::kAuxOffset + consumer * Layout::kAuxStride);
  }
  __device__ static unsigned stage_base(unsigned base, int stage) {
    return base + static_cast<unsigned>(stage * Layout::kStageBytes);
  }

  __device__ static void wait(unsigned bar, unsigned parity, const char* what, int stage) {
    if constexpr (FUSEDGEMM_KERNEL_DEBUG) {
      const unsigned long long start = ptx::global_timer_ns();
      while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
        if (ptx::global_timer_ns() - start > kDebugWaitNs) {
          printf(
              "fusedgemm: CTA %d thread %d: the %s barrier of stage %d never completed phase "
              "parity %u (wrong expect_tx bytes, a bad tensor map or a missing arrival?)\n",
              blockIdx.x, threadIdx.x, what, stage, parity);
          __trap();
        }
      }
    } else {
      (void)what;
      (void)stage;
      ptx::mbarrier_wait_parity(bar, parity);
    }
  }

  // This CTA's share of the persistent schedule: its cluster's first work unit and the
  // stride to its next, its rank in the cluster, and the problem's K steps. Its tile()
  // divides by args.schedule (host-computed, read from parameter space).
  struct Work {
    Scheduler tiles;
    long long first;
    long long step;
    int rank;
    int k_steps;
    __device__ explicit Work(const KernelArgs& args)
        : tiles(args.batch, args.m, args.n, kTileM, kTileN, args.raster_group,
                kSplitK ? args.split.splits : 1, kSplitK ? args.split.first : 0),
          first(kClusterCtas > 1 ? ptx::cluster_id_x() : blockIdx.x),
          step(kClusterCtas > 1 ? ptx::cluster_count_x() : gridDim.x),
          rank(kClusterCtas > 1 ? static_cast<int>(ptx::cluster_ctarank()) : 0),
          k_steps(static_cast<int>((args.k + Layout::kTileK - 1) / Layout::kTileK)) {}
  };

  // --- producer ---------------------------------------------------------------------------

  // Issues the TMA boxes of operands O.. for one stage (a compile-time loop: each operand's
  // major and offsets are constants; NVRTC takes no lambdas in device code, hence recursion).
  template <int O>
  __device__ static void load_operands(const KernelArgs& args, unsigned stage, unsigned bar, int k0,
                                       const TileIndex& tile, int rank) {
    if constexpr (O < kOperands) {
      constexpr OperandSpec op = Config::kOperands[O];
      constexpr int kRows = Layout::load_rows(O);
      const void* tensor_map = &args.tma[op.tma_slot];
      // A broadcast operand (batch 1) is read at batch 0 by every batch's tiles.
      const int batch = args.buffers[op.param].shape[0] == 1 ? 0 : static_cast<int>(tile.batch);
      const int first = Layout::shared(O) ? rank * kRows : 0;  // this CTA's part
      const int mn0 =
          static_cast<int>(op.role == OperandRole::kA ? tile.m * kTileM : tile.n * kTileN) + first;
      const unsigned dst = stage + Layout::operand_offset(O);
      constexpr unsigned short kAll = static_cast<unsigned short>((1u << kClusterCtas) - 1u);
      if constexpr (op.major == OperandMajor::kK) {
        const unsigned at = dst + static_cast<unsigned>(first * Layout::kSwizzleBytes);
        if constexpr (Layout::shared(O)) {
          ptx::tma_load_3d_multicast(at, tensor_map, bar, k0, mn0, batch, kAll);
        } else {
          ptx::tma_load_3d(at, tensor_map, bar, k0, mn0, batch);
        }
      } else {
        const int box0 = first / Layout::kMnBoxElems;
#pragma unroll
        for (int h = 0; h < kRows / Layout::kMnBoxElems; ++h) {
          const unsigned at = dst + static_cast<unsigned>((box0 + h) * Layout::kMnBoxBytes);
          const int mn = mn0 + h * Layout::kMnBoxElems;
          if constexpr (Layout::shared(O)) {
            ptx::tma_load_3d_multicast(at, tensor_map, bar, mn, k0, batch, kAll);
          } else {
            ptx::tma_load_3d(at, tensor_map, bar, mn, k0, batch);
          }
        }
      }
      load_operands<O + 1>(args, stage, bar, k0, tile, rank);
    }
  }

  // The producer's one thread: every stage of every work unit of this CTA, in schedule order.
  __device__ static void load_loop(const KernelArgs& args, unsigned base, const Work& work) {
    RingState ring;
    for (long long t = work.first; t < work.tiles.total; t += work.step) {
      const TileIndex tile = work.tiles.tile(t, work.rank, args.schedule);
      const KSteps steps = work.tiles.k_steps(t, work.k_steps);
      for (int kt = steps.begin; kt < steps.end; ++kt) {
        wait(empty_barrier(base, ring.stage), ring.phase ^ 1u, "empty", ring.stage);
        const unsigned full = full_barrier(base, ring.stage);
        ptx::mbarrier_arrive_expect_tx(full, Layout::kStageBytes);
        load_operands<0>(args, stage_base(base, ring.stage), full, kt * Layout::kTileK, tile,
                         work.rank);
        ring.advance<kStages>();
      }
    }
    // Every consumer of the cluster hands each stage back once more after its last fill:
    // wait for those arrivals, so none reaches this CTA after it exits.
    if constexpr (kClusterCtas > 1) {
      for (int s = 0; s < kStages; ++s) {
        wait(empty_barrier(base, ring.stage), ring.phase ^ 1u, "empty", ring.stage);
        ring.advance<kStages>();
      }
    }
  }

  // --- consumers --------------------------------------------------------------------------

  // The wgmma descriptor of operand O at operand row `row0` (a multiple of 64 for
  // MN-major operands, of 8 for K-major ones) and MMA K step `kk` of a stage whose operand
  // tile starts at `tile_base`.
  template <int O>
  __device__ static unsigned long long descriptor(unsigned tile_base, int row0, int kk) {
    constexpr OperandSpec op = Config::kOperands[O];
    if constexpr (op.major == OperandMajor::kK) {
      // K-major: rows of 128 bytes; a K step moves 32 bytes along the row. LBO is unused
      // by swizzled K-major layouts (1 by convention); SBO = one 8-row atom.
      const unsigned addr =
          tile_base + static_cast<unsigned>(row0 * Layout::kSwizzleBytes + kk * ptx::kWgmmaKBytes);
      return ptx::smem_descriptor_sw128(addr, 16, Layout::kAtomBytes);
    } else {
      // MN-major: 64-row block h is box h; a K step moves kMmaKElems K-rows. LBO = the
      // stride between 64-element MN blocks (boxes), SBO = between 8-row K groups (one atom).
      const unsigned addr =
          tile_base + static_cast<unsigned>((row0 / Layout::kMnBoxElems) * Layout::kMnBoxBytes +
                                            kk * kMmaKElems * Layout::kSwizzleBytes);
      return ptx::smem_descriptor_sw128(addr, Layout::kMnBoxBytes, Layout::kAtomBytes);
    }
  }

  // acc[g] (+)= A_g * B_g^T for GEMMs G.. over MMA K step `kk` of the stage at `stage`, for
  // consumer `consumer`'s half; scale_d 0 overwrites acc[g], 1 accumulates (wgmma's scale-d).
  template <int G>
  __device__ static void mma_gemms(unsigned stage, int consumer, int kk, int scale_d,
                                   Accumulators& acc) {
    if constexpr (G < kGemms) {
      constexpr int a = Config::kGemmA[G];
      constexpr int b = Config::kGemmB[G];
      constexpr OperandSpec op_a = Config::kOperands[a];
      constexpr OperandSpec op_b = Config::kOperands[b];
      const int row_a = Layout::unit_row(consumer);
      const int row_b = Layout::unit_col(consumer);
      const unsigned long long desc_b = descriptor<b>(stage + Layout::operand_offset(b), row_b, kk);
#pragma unroll
      for (int group = 0; group < Frag::kGroups; ++group) {
        const unsigned long long desc_a =
            descriptor<a>(stage + Layout::operand_offset(a), row_a + group * kMmaM, kk);
        ptx::wgmma_mma_async<kUnitN, op_a.type, op_b.type, op_a.major == OperandMajor::kMN,
                             op_b.major == OperandMajor::kMN>(&acc[G][group * Frag::kPerGroup],
                                                              desc_a, desc_b, scale_d);
      }
      mma_gemms<G + 1>(stage, consumer, kk, scale_d, acc);
    }
  }

  // One consumer warpgroup: issues every MMA of the stage at `stage` into `acc` (the first
  // overwrites it where `overwrite`) as one wgmma group. The caller waits for it.
  __device__ static void mma_stage(unsigned stage, int consumer, bool overwrite,
                                   Accumulators& acc) {
    __syncwarp();        // wgmma is .sync.aligned: each warp converged after the barrier wait loop
    ptx::wgmma_fence();  // the accumulators may have been read or written since the last MMA
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) {
      mma_gemms<0>(stage, consumer, kk, overwrite && kk == 0 ? 0 : 1, acc);
    }
    ptx::wgmma_commit_group();
  }

  // After a wgmma wait: no read of the accumulators may move above it.
  __device__ static void fence_accumulators(Accumulators& acc) {
#pragma unroll
    for (int g = 0; g < kGemms; ++g) {
#pragma unroll
      for (int i = 0; i < Frag::kCount; ++i) ptx::wgmma_fence_operand(acc[g][i]);
    }
  }

  // Hands `stage` back to the producer of every CTA of the cluster (one thread per consumer
  // warpgroup, after that warpgroup's MMAs on the stage completed).
  __device__ static void release(unsigned base, int stage, bool signaller) {
    if (!signaller) return;
    const unsigned bar = empty_barrier(base, stage);
    if constexpr (kClusterCtas == 1) {
      ptx::mbarrier_arrive(bar);
    } else {
#pragma unroll
      for (int r = 0; r < kClusterCtas; ++r) ptx::mbarrier_arrive_cluster(ptx::map_to_rank(bar, r));
    }
  }

  // Where consumer `consumer`'s unit of `tile` starts.
  __device__ static TileCoord unit_of(const TileIndex& tile, int consumer) {
    return {tile.batch, tile.m * kTileM + Layout::unit_row(consumer),
            tile.n * kTileN + Layout::unit_col(consumer)};
  }

  // Both consumers' MMAs on the unit's last stage are done (before either writes staging
  // into it). Barriers 1 and 2 are the consumers' own (epilogue_barrier_id), 0 __syncthreads.
  static constexpr int kConsumersBarrier = 3;

  // Hands `held`, the stage a unit's epilogue borrowed staging from, back to the producers once
  // the stores of this consumer that read it (all issued by its thread 0, the signaller, as
  // the unit's first; only Layout::kStoresAfterBorrowed followed) have read it.
  __device__ static void return_borrowed(unsigned base, int& held, bool signaller) {
    if (held < 0) return;
    if (signaller) ptx::bulk_wait_group_read<Layout::kStoresAfterBorrowed>();
    release(base, held, signaller);
    held = -1;
  }

  // The index of consumer `consumer`'s unit of work unit `t` among the split tiles' units
  // (kernels/split_k.cuh).
  __device__ static long long split_unit(const Work& work, long long t, int consumer) {
    const long long tile = work.tiles.cluster_tile(t) - work.tiles.split_from;
    return (tile * kClusterCtas + work.rank) * kUnitsPerTile + (Layout::kPingPong ? 0 : consumer);
  }

  __device__ static void mma_loop(const KernelArgs& args, unsigned base, float* scratch,
                                  unsigned staging, unsigned aux, const Work& work, int consumer) {
    const int thread = static_cast<int>(threadIdx.x % kWarpgroupThreads);
    const bool signaller = thread == 0;
    constexpr bool kBorrows = Layout::kBorrowedBuffers > 0;
    static_assert(!kBorrows || Math<GemmSm90>::kInFlight > 0,
                  "staging is borrowed from the stage a unit's last MMAs read, which a mainloop "
                  "that hands each stage back inside its loop has already returned");
    RingState ring;
    Accumulators acc;
    // Ping-pong: this consumer's work units are the CTA's units `consumer`, `consumer` + 2,
    // ...; the stages of the other consumer's units pass by. It waits for its turn before its
    // unit's stages: a parity wait tells a stage's next fill from its last one only, so a
    // consumer may wait for a fill only once the fill before it (kStages positions earlier,
    // the other consumer's then) has completed, which the other's last full wait shows.
    constexpr int kTurns = Layout::kPingPong ? kConsumers : 1;
    const int own = Layout::kPingPong ? consumer : 0;
    if (own > 0) ring.skip<kStages>(work.tiles.k_steps(work.first, work.k_steps).count());
    unsigned turns = 0;  // turns waited for
    // The stage the last unit's epilogue borrowed staging from: handed back after the next
    // unit's first MMAs are issued (its stores have had a K step to read it), or at the end.
    int held = -1;
    unsigned aux_parity = 0;  // the epilogue's loaded aux buffers (kernels/epilogue_aux_tiles.cuh)
    for (long long t = work.first + own * work.step; t < work.tiles.total;
         t += kTurns * work.step) {
      const TileCoord unit = unit_of(work.tiles.tile(t, work.rank, args.schedule), consumer);
      const KSteps steps = work.tiles.k_steps(t, work.k_steps);
      // Whether the unit has an epilogue: one inside the problem (a split one's maybe not).
      const bool runs = unit.m0 < args.m && unit.n0 < args.n;
      // Its first aux sub-tiles load while its MMAs run.
      if (runs) Epilogue::template prefetch<kUnitM, kUnitN>(args, unit, aux, aux_parity);
      if constexpr (Layout::kPingPong) {
        if (t != work.first) wait(turn_barrier(base, consumer), turns++ & 1u, "turn", consumer);
      }
      Math<GemmSm90> math(args, unit, thread, acc);
      int previous = 0;
      for (int kt = 0; kt < steps.count(); ++kt) {
        wait(full_barrier(base, ring.stage), ring.phase, "full", ring.stage);
        math.consume(stage_base(base, ring.stage), consumer, steps.begin + kt, kt == 0);
        if constexpr (Math<GemmSm90>::kInFlight == 0) {
          release(base, ring.stage, signaller);
        } else if (kt > 0) {
          release(base, previous, signaller);  // its MMAs were waited on in consume
        } else if constexpr (kBorrows) {
          return_borrowed(base, held, signaller);
        }
        previous = ring.stage;
        ring.advance<kStages>();
      }
      if constexpr (Layout::kPingPong) {
        if (signaller) ptx::mbarrier_arrive(turn_barrier(base, 1 - consumer));
      }
      math.finish(steps.count());
      if constexpr (Math<GemmSm90>::kInFlight > 0) {
        if (steps.count() > 0) {
          if constexpr (kBorrows) {
            held = previous;
          } else {
            release(base, previous, signaller);
          }
        }
      }
      unsigned borrowed = 0;
      if constexpr (kBorrows) {
        ptx::bar_sync(kConsumersBarrier, kConsumers * kWarpgroupThreads);
        ptx::fence_proxy_async_shared();  // TMA wrote the stage and wgmma read it: now generic
        // K = 0 (no unit has a step, so the producer fills no stage): any stage is free.
        borrowed = stage_base(base, held < 0 ? 0 : held) +
                   static_cast<unsigned>(consumer * Layout::kBorrowedStride);
      }
      if (runs) {
        if constexpr (kSplitK) {
          if (!work.tiles.split(t) ||
              SplitK<kGemms, kUnitM, kUnitN>::reduce(args, split_unit(work, t, consumer), unit,
                                                     work.tiles.split_of(t), acc, thread)) {
            Epilogue::template run<kUnitM, kUnitN>(args, unit, acc, scratch, staging, borrowed, aux,
                                                   aux_parity);
          } else {
            Epilogue::template skip<kUnitM, kUnitN>(args, aux, aux_parity);
          }
        } else {
          Epilogue::template run<kUnitM, kUnitN>(args, unit, acc, scratch, staging, borrowed, aux,
                                                 aux_parity);
        }
      }
      if constexpr (Layout::kPingPong)
        ring.skip<kStages>(work.tiles.k_steps(t + work.step, work.k_steps).count());
    }
    // The epilogue's TMA stores read this CTA's shared memory: done before it exits.
    if constexpr (Config::kStagedOutputs > 0) {
      if (signaller) ptx::bulk_wait_group<0>();
    }
    if constexpr (kBorrows) return_borrowed(base, held, signaller);
  }

  // --- entry ------------------------------------------------------------------------------

  template <int O>
  __device__ static bool params_in_range(const KernelArgs& args) {
    if constexpr (O < kOperands) {
      return Config::kOperands[O].param < args.buffer_count && params_in_range<O + 1>(args);
    } else {
      return true;
    }
  }

  template <int O>
  __device__ static void prefetch_descriptors(const KernelArgs& args) {
    if constexpr (O < kOperands) {
      ptx::tma_prefetch_descriptor(&args.tma[Config::kOperands[O].tma_slot]);
      prefetch_descriptors<O + 1>(args);
    }
  }

  __device__ static void check_launch(const KernelArgs& args) {
    const bool ok = blockDim.x == kThreads && blockDim.y == 1 && blockDim.z == 1 &&
                    gridDim.x % kClusterCtas == 0 &&
                    ptx::dynamic_smem_bytes() >= static_cast<unsigned>(Layout::kDynamicBytes) &&
                    params_in_range<0>(args) && args.split.splits >= 1 &&
                    (kSplitK || args.split.splits == 1);
    if (!ok) {
      printf(
          "fusedgemm: CTA %d: bad launch: block (%d,%d,%d), want (%d,1,1); grid %d, a multiple "
          "of %d; dynamic shared memory %u bytes, want >= %d; %d kernel buffers; K split %lld "
          "ways, want 1%s\n",
          blockIdx.x, blockDim.x, blockDim.y, blockDim.z, kThreads, gridDim.x, kClusterCtas,
          ptx::dynamic_smem_bytes(), Layout::kDynamicBytes, args.buffer_count, args.split.splits,
          kSplitK ? " or more" : " (this kernel has no split path)");
      __trap();
    }
  }

  // The whole kernel: `smem` is its dynamic shared memory (at least Layout::kDynamicBytes).
  __device__ static void run(const KernelArgs& args, unsigned char* smem) {
    if constexpr (FUSEDGEMM_KERNEL_DEBUG) {
      if (threadIdx.x == 0) check_launch(args);
    }
    const unsigned raw = ptx::smem_address(smem);
    const unsigned base = (raw + Layout::kAtomBytes - 1) & ~(Layout::kAtomBytes - 1u);
    const int warpgroup = static_cast<int>(threadIdx.x / kWarpgroupThreads);
    if (threadIdx.x == 0) {
      prefetch_descriptors<0>(args);
      for (int s = 0; s < kStages; ++s) {
        ptx::mbarrier_init(full_barrier(base, s), 1);
        ptx::mbarrier_init(empty_barrier(base, s), Layout::kEmptyArrivals);
      }
      for (int c = 0; c < kConsumers; ++c) {
        ptx::mbarrier_init(turn_barrier(base, c), 1);
        for (int b = 0; b < Layout::kAuxBufferCount; ++b) {
          ptx::mbarrier_init(aux_area(base, c) + Layout::kAuxBarriers + 8u * b, 1);
        }
      }
      ptx::fence_mbarrier_init();
    }
    // Barriers initialised before anyone in the cluster waits on or arrives at them.
    if constexpr (kClusterCtas > 1) {
      ptx::cluster_sync();
    } else {
      __syncthreads();
    }
    if constexpr (Config::kDependentLaunch) {
      // The previous grid's writes (our inputs, or outputs it still reads) come first; the
      // next grid may be scheduled now, and its own wait holds it until this one completes.
      ptx::grid_dependency_wait();
      ptx::grid_launch_dependents();
    }
    // Each role works out its schedule after its setmaxnreg: a value computed before would
    // live across the producer's drop to kProducerRegisters, and ptxas spilled such values
    // to local memory (ping-pong kernels without a cluster, with taps: 16 bytes).
    if (warpgroup == 0) {
      ptx::setmaxnreg_dec<kProducerRegisters>();
      if (threadIdx.x == 0) {
        const Work work(args);
        load_loop(args, base, work);
      }
    } else {
      ptx::setmaxnreg_inc<kConsumerRegisters>();
      const Work work(args);
      const int consumer = warpgroup - 1;
      float* scratch = reinterpret_cast<float*>(smem + (base - raw) + Layout::kScratchOffset +
                                                consumer * Layout::kScratchStride);
      const unsigned staging =
          base + static_cast<unsigned>(Layout::kStagingOffset + consumer * Layout::kStagingStride);
      mma_loop(args, base, scratch, staging, aux_area(base, consumer), work, consumer);
    }
  }
};

// The stage math of the plain mainloop: acc[g] += A_g * B_g^T over each stage, one wgmma
// group left in flight, so a stage's MMAs overlap the wait for the next one.
template <class Kernel>
struct AccumulateStages {
  static constexpr int kInFlight = 1;
  typename Kernel::Accumulators& acc;

  __device__ AccumulateStages(const KernelArgs&, const TileCoord&, int,
                              typename Kernel::Accumulators& accumulators)
      : acc(accumulators) {}

  // The unit's first stage's first MMA overwrites the accumulators (no zeroing pass).
  __device__ void consume(unsigned stage, int consumer, int /*k_step*/, bool first) {
    Kernel::mma_stage(stage, consumer, first, acc);
    ptx::wgmma_wait_group<kInFlight>();
  }

  __device__ void finish(int k_steps) {
    ptx::wgmma_wait_group<0>();
    Kernel::fence_accumulators(acc);
    if (k_steps == 0) {  // K of 0 (no split then): the product is zero
#pragma unroll
      for (int g = 0; g < Kernel::kGemms; ++g) {
#pragma unroll
        for (int i = 0; i < Kernel::Frag::kCount; ++i) ptx::zero_accumulator_in_branch(acc[g][i]);
      }
    }
  }
};

}  // namespace fusedgemm::kernels
