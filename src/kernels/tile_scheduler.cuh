// The persistent grid's static tile schedule: which output tile each CTA computes next.
// Host and device code (the host's tests walk the same schedule, tests/kernels/); no
// headers (NVRTC).
//
// The problem's CTA tiles (TileM x TileN, over batch x ceil(M / TileM) x ceil(N / TileN))
// are grouped into cluster tiles of ClusterM x ClusterN CTA tiles, one per cluster (the
// CTA of rank r takes CTA tile r of its cluster tile, M first). Cluster c of C runs cluster
// tiles c, c + C, c + 2C, ... so every cluster tile is run once by one cluster, whatever C.
//
// Order (grouped rasterization): the batch is folded into the tile index, slowest; inside a
// batch, cluster tiles run in bands of `group` cluster-tile rows, and inside a band column by
// column, each column top to bottom:
//
//   group 2, 4 x 3 cluster tiles:   0 2 4
//                                   1 3 5
//                                   6 8 10
//                                   7 9 11
//
// so the CTAs resident at one time read `group` row panels of A and about C / group column
// panels of B, instead of one row panel and C column panels: the host sizes `group` so that
// both stay in L2 (recipe/kernel_config.cpp, raster_group). A CTA tile of a cluster tile that
// lies past the problem's edge (an odd count of M tiles under a 2-CTA cluster) is still run:
// its CTA takes part in the cluster's shared loads, and its epilogue writes nothing.
//
// Split K: with `splits` S > 1 the cluster tiles from `split_from` on are S work units each,
// each over its share of the K steps (split s: steps [s * steps / S, (s + 1) * steps / S));
// the tiles before it are one unit each, over every step. Unit u < split_from is tile u;
// unit split_from + v is split v % S of tile split_from + v / S, so the S units of a tile
// run side by side on S clusters. split_from 0 splits every tile (a call whose tiles fill
// a fraction of the device); split_from a multiple of the clusters splits only the last,
// partial wave's tiles (the tail), which then takes 1 / S of a tile's time. Their partial
// sums meet in the workspace (kernels/split_k.cuh). The host chooses S and split_from so
// that every split has K steps and the split units fit one wave (recipe::k_split).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FG_HOST_DEVICE __host__ __device__
#else
#define FG_HOST_DEVICE
#endif

namespace fusedgemm::kernels {

// A CTA tile: its batch and its place in units of whole tiles.
struct TileIndex {
  long long batch;
  long long m;  // tile row: rows [m * TileM, (m + 1) * TileM)
  long long n;  // tile column
};

// The K steps [begin, end) of one work unit.
struct KSteps {
  int begin;
  int end;
  FG_HOST_DEVICE int count() const { return end - begin; }
};

// Division by a divisor fixed at construction, as a multiply-high, an add and a shift (the
// round-up method of Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994): the quotient of a dividend below 2^31 in three dependent
// instructions where the compiler's division is a chain of about 20 (a float reciprocal
// and its corrections).
struct FastDivisor {
  unsigned divisor = 1;
  unsigned multiplier = 1;
  unsigned shift = 0;

  FastDivisor() = default;
  // 1 <= d < 2^31. Worked out on the host, once per bound call (ScheduleDivisors).
  FG_HOST_DEVICE explicit FastDivisor(unsigned d) : divisor(d) {
#if defined(__CUDA_ARCH__)
    shift = d <= 1 ? 0u : 32u - static_cast<unsigned>(__clz(d - 1));  // ceil(log2(d))
#else
    shift = d <= 1 ? 0u : 32u - static_cast<unsigned>(__builtin_clz(d - 1));
#endif
    multiplier = static_cast<unsigned>((((1ull << shift) - d) << 32) / d + 1);
  }

  // n / divisor for n < 2^31 (so the sum below stays in 32 bits).
  FG_HOST_DEVICE unsigned quotient(unsigned n) const {
#if defined(__CUDA_ARCH__)
    const unsigned high = __umulhi(n, multiplier);
#else
    const unsigned high =
        static_cast<unsigned>((static_cast<unsigned long long>(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};

// The divisions of tile() for one problem, worked out once on the host (TileScheduler::
// divisors) and passed in KernelArgs: the kernel reads them from parameter space, so they hold
// no registers across the mainloop (where 256x128 and ping-pong 128x128 kernels have none to
// spare). `fast` 0: tile() takes the division path.
struct ScheduleDivisors {
  FastDivisor band_tiles;      // cluster tiles per raster band
  FastDivisor band_rows;       // cluster-tile rows of a whole band
  FastDivisor last_band_rows;  // ... of the last band
  int fast = 0;
};

template <int ClusterM, int ClusterN>
struct TileScheduler {
  static_assert(ClusterM >= 1 && ClusterN >= 1 && ClusterM * ClusterN <= 2,
                "clusters of 1 or 2 CTAs: change choose_kernel_config");
  static constexpr long long kFastLimit = 1ll << 31;

  long long tiles_m;     // CTA tiles along M
  long long tiles_n;     // ... along N
  long long rows;        // cluster tiles along M
  long long cols;        // ... along N
  long long per_batch;   // cluster tiles per batch
  long long tiles;       // cluster tiles of the launch
  long long splits;      // work units per cluster tile from split_from on (split K, >= 1)
  long long split_from;  // the first cluster tile that splits (tiles where none does)
  long long total;       // work units of the launch
  long long group;       // cluster-tile rows per raster band (>= 1)

  FG_HOST_DEVICE static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

  FG_HOST_DEVICE TileScheduler(long long batch, long long m, long long n, int tile_m, int tile_n,
                               long long raster_group, long long k_splits,
                               long long k_split_from = 0)
      : tiles_m(ceil_div(m, tile_m)),
        tiles_n(ceil_div(n, tile_n)),
        rows(ceil_div(tiles_m, ClusterM)),
        cols(ceil_div(tiles_n, ClusterN)),
        per_batch(rows * cols),
        tiles(batch * per_batch),
        splits(k_splits < 1 ? 1 : k_splits),
        split_from(k_splits <= 1 || k_split_from > tiles ? tiles
                   : k_split_from < 0                    ? 0
                                                         : k_split_from),
        total(split_from + (tiles - split_from) * splits),
        group(raster_group < 1 ? 1 : raster_group) {}

  // The divisors of the common case, one batch and every tile index below 2^31 (else `fast`
  // 0). They divide tile indices, so a split launch takes them too.
  FG_HOST_DEVICE ScheduleDivisors divisors() const {
    ScheduleDivisors d;
    if (tiles != per_batch || tiles >= kFastLimit || group >= kFastLimit) return d;
    const long long band_rows = group < rows ? group : rows;
    d.band_tiles = FastDivisor(static_cast<unsigned>(band_rows * cols));
    d.band_rows = FastDivisor(static_cast<unsigned>(band_rows));
    d.last_band_rows = FastDivisor(static_cast<unsigned>(rows - (rows - 1) / group * group));
    d.fast = 1;
    return d;
  }

  // The CTA tile that the CTA of cluster rank `rank` computes for work unit `u`
  // (0 <= u < total), by this schedule's divisors() `d` (the division path where d.fast is
  // 0). Every consumer warp runs this between two of its tiles while
  // the tensor cores wait: dividing by multiplying took the time between two units from
  // ~740 clocks to ~420 (docs/PERF.md, run 30).
  FG_HOST_DEVICE TileIndex tile(long long u, int rank, const ScheduleDivisors& d) const {
    const long long t = cluster_tile(u);
    long long batch, row, col;
    if (d.fast != 0) {
      const unsigned in_batch = static_cast<unsigned>(t);  // one batch
      const unsigned band = d.band_tiles.quotient(in_batch);
      const unsigned in_band = in_batch - band * d.band_tiles.divisor;
      const unsigned first_row = band * d.band_rows.divisor;
      // Bands of `group` rows, the last one of what remains (the one past rows - group).
      const FastDivisor& by_rows =
          first_row + d.band_rows.divisor > rows ? d.last_band_rows : d.band_rows;
      const unsigned c = by_rows.quotient(in_band);
      batch = 0;
      row = first_row + (in_band - c * by_rows.divisor);
      col = c;
    } else {
      batch = t < per_batch ? 0 : t / per_batch;
      const long long in_batch = t - batch * per_batch;
      const long long band_tiles = group * cols;
      const long long band = in_batch / band_tiles;
      const long long first_row = band * group;
      const long long band_rows = rows - first_row < group ? rows - first_row : group;
      const long long in_band = in_batch - band * band_tiles;
      row = first_row + in_band % band_rows;
      col = in_band / band_rows;
    }
    return {batch, row * ClusterM + rank % ClusterM, col * ClusterN + rank / ClusterM};
  }

  // The cluster tile of work unit `u` (the same for every CTA of its cluster).
  FG_HOST_DEVICE long long cluster_tile(long long u) const {
    return u < split_from ? u : split_from + (u - split_from) / splits;
  }

  // Whether work unit `u` is one split of its tile (its partial sums meet the others').
  FG_HOST_DEVICE bool split(long long u) const { return u >= split_from; }

  // Which split of its tile work unit `u` is (0 for a tile that does not split).
  FG_HOST_DEVICE int split_of(long long u) const {
    return u < split_from ? 0 : static_cast<int>((u - split_from) % splits);
  }

  // The K steps of work unit `u` out of the problem's `steps`; none past the last unit.
  FG_HOST_DEVICE KSteps k_steps(long long u, int steps) const {
    if (u >= total) return {0, 0};
    if (u < split_from) return {0, steps};
    const long long s = split_of(u);
    return {static_cast<int>(s * steps / splits), static_cast<int>((s + 1) * steps / splits)};
  }
};

}  // namespace fusedgemm::kernels
