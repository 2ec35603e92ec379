// The persistent grid's schedule (kernels/tile_scheduler.cuh, compiled here for the host):
// every CTA tile of the problem is computed exactly once per K split, whatever the grid, the
// cluster and the raster band, and a tile's splits cover its K steps once each; the two CTAs
// of a cluster take neighbouring tiles of one cluster tile (same N range along M, same M
// range along N) and the same split; the band order is the documented one.
#include "kernels/tile_scheduler.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace fusedgemm::kernels {
namespace {

struct Problem {
  long long batch, m, n;
  int tile_m, tile_n;
};

// Runs the schedule as `clusters` clusters would and counts each CTA tile inside the
// problem; tiles past its edge (a pair's odd member) must come only from 2-CTA clusters.
template <int ClusterM, int ClusterN>
void expect_every_tile_once(const Problem& p, long long clusters, long long group, int splits = 1,
                            int k_steps = 0, long long split_from = 0) {
  SCOPED_TRACE(::testing::Message()
               << "cluster " << ClusterM << "x" << ClusterN << ", batch " << p.batch << " " << p.m
               << "x" << p.n << " tiles " << p.tile_m << "x" << p.tile_n << ", " << clusters
               << " clusters, band " << group << ", " << splits << " splits of " << k_steps
               << " K steps from cluster tile " << split_from);
  const TileScheduler<ClusterM, ClusterN> tiles(p.batch, p.m, p.n, p.tile_m, p.tile_n, group,
                                                splits, split_from);
  // Per tile, how often each K step was computed, and how many units it was (last slot).
  std::map<std::tuple<long long, long long, long long>, std::vector<int>> seen;
  std::map<std::tuple<long long, long long, long long>, int> want_units;
  long long split_units = 0;
  long long outside = 0;
  for (long long c = 0; c < clusters; ++c) {
    for (long long t = c; t < tiles.total; t += clusters) {
      const TileIndex first = tiles.tile(t, 0, tiles.divisors());
      const KSteps steps = tiles.k_steps(t, k_steps);
      EXPECT_LE(0, steps.begin);
      EXPECT_LE(steps.begin, steps.end);
      EXPECT_LE(steps.end, k_steps);
      const bool split = tiles.split(t);
      EXPECT_EQ(split, splits > 1 && tiles.cluster_tile(t) >= split_from);
      if (split) {
        ++split_units;
        if (k_steps >= splits) {
          EXPECT_GE(steps.count(), k_steps / splits);  // no split is left without steps
        }
      } else {
        EXPECT_EQ(steps.count(), k_steps);
        EXPECT_EQ(tiles.split_of(t), 0);
      }
      for (int rank = 0; rank < ClusterM * ClusterN; ++rank) {
        const TileIndex tile = tiles.tile(t, rank, tiles.divisors());
        // A cluster's CTAs share the batch and the tile row or column they multicast.
        EXPECT_EQ(tile.batch, first.batch);
        if (ClusterM > 1) {
          EXPECT_EQ(tile.n, first.n);
        }
        if (ClusterN > 1) {
          EXPECT_EQ(tile.m, first.m);
        }
        if (tile.m >= tiles.tiles_m || tile.n >= tiles.tiles_n) {
          ++outside;
          continue;
        }
        want_units[{tile.batch, tile.m, tile.n}] = split ? splits : 1;
        auto& counts = seen[{tile.batch, tile.m, tile.n}];
        counts.resize(static_cast<std::size_t>(k_steps) + 1);
        ++counts[static_cast<std::size_t>(k_steps)];  // units of this tile
        for (int k = steps.begin; k < steps.end; ++k) ++counts[static_cast<std::size_t>(k)];
      }
    }
  }
  const long long want = p.batch * tiles.tiles_m * tiles.tiles_n;
  EXPECT_EQ(static_cast<long long>(seen.size()), want);
  for (const auto& [tile, counts] : seen) {
    for (int k = 0; k < k_steps; ++k) {
      EXPECT_EQ(counts[static_cast<std::size_t>(k)], 1)
          << "tile (" << std::get<0>(tile) << ", " << std::get<1>(tile) << ", " << std::get<2>(tile)
          << "), K step " << k;
    }
    EXPECT_EQ(counts[static_cast<std::size_t>(k_steps)], want_units[tile])
        << "tile (" << std::get<0>(tile) << ", " << std::get<1>(tile) << ", " << std::get<2>(tile)
        << ")";
  }
  const long long whole = splits > 1 ? std::min(split_from, tiles.tiles) : tiles.tiles;
  EXPECT_EQ(split_units, (tiles.tiles - whole) * (splits > 1 ? splits : 0));
  EXPECT_EQ(tiles.total, whole + split_units);
  long long units = 0;
  for (const auto& [tile, n] : want_units) units += n;
  EXPECT_EQ(outside + units, tiles.total * ClusterM * ClusterN);
  if (ClusterM * ClusterN == 1) {
    EXPECT_EQ(outside, 0);
  }
}

TEST(TileScheduler, RunsEveryTileOnceForAnyGridClusterAndBand) {
  const std::vector<Problem> problems = {
      {1, 4096, 4096, 128, 256}, {3, 200, 300, 128, 128}, {2, 1, 4096, 64, 128},
      {1, 1000, 70, 256, 128},   {5, 129, 257, 128, 192}, {1, 128, 256, 128, 256},
  };
  for (const Problem& p : problems) {
    for (const long long clusters : {1LL, 7LL, 66LL, 132LL, 10000LL}) {
      for (const long long group : {1LL, 3LL, 8LL, 1000LL}) {
        expect_every_tile_once<1, 1>(p, clusters, group);
        expect_every_tile_once<2, 1>(p, clusters, group);
        expect_every_tile_once<1, 2>(p, clusters, group);
      }
    }
  }
}

// Split K: each tile is `splits` units, together over every K step once, each split with
// its share; the units of a tile are consecutive, so they run side by side.
TEST(TileScheduler, SplitsEveryTilesKStepsOnce) {
  const std::vector<Problem> problems = {{1, 16, 4096, 64, 128},
                                         {3, 200, 300, 128, 128},
                                         {2, 1, 4096, 64, 128},
                                         {1, 129, 257, 128, 192}};
  for (const Problem& p : problems) {
    for (const int splits : {2, 3, 4, 8}) {
      for (const int k_steps : {splits, 4 * splits, 64, 172}) {
        for (const long long clusters : {1LL, 7LL, 66LL}) {
          expect_every_tile_once<1, 1>(p, clusters, 3, splits, k_steps);
          expect_every_tile_once<2, 1>(p, clusters, 3, splits, k_steps);
          expect_every_tile_once<1, 2>(p, clusters, 3, splits, k_steps);
        }
      }
    }
  }
  const TileScheduler<1, 1> tiles(1, 64, 256, 64, 128, 1, 4);
  ASSERT_EQ(tiles.total, 8);
  for (int u = 0; u < 8; ++u) {
    EXPECT_EQ(tiles.tile(u, 0, tiles.divisors()).n, u / 4) << u;
    EXPECT_EQ(tiles.split_of(u), u % 4) << u;
  }
  EXPECT_EQ(tiles.k_steps(1, 10).begin, 2);
  EXPECT_EQ(tiles.k_steps(1, 10).end, 5);
  EXPECT_EQ(tiles.k_steps(8, 10).count(), 0);  // past the last unit
}

// Split K of the last wave: the cluster tiles from split_from on are `splits` consecutive
// units each, the tiles before it one unit over every K step; the units of a split tile
// run side by side in the last wave.
TEST(TileScheduler, SplitsTheTilesFromSplitFromOnly) {
  const std::vector<Problem> problems = {{1, 4096, 11008, 128, 256},
                                         {3, 200, 300, 128, 128},
                                         {1, 256, 148 * 128, 128, 128},
                                         {2, 129, 257, 64, 192}};
  for (const Problem& p : problems) {
    for (const int splits : {2, 3, 8}) {
      for (const int k_steps : {splits, 64, 172}) {
        for (const long long clusters : {7LL, 66LL, 132LL}) {
          const long long tiles =
              TileScheduler<1, 1>(p.batch, p.m, p.n, p.tile_m, p.tile_n, 1, 1).tiles;
          for (const long long from : {0LL, tiles / clusters * clusters, tiles - 1, tiles}) {
            expect_every_tile_once<1, 1>(p, clusters, 3, splits, k_steps, from);
            expect_every_tile_once<2, 1>(p, clusters, 3, splits, k_steps, from / 2);
            expect_every_tile_once<1, 2>(p, clusters, 3, splits, k_steps, from / 2);
          }
        }
      }
    }
  }
  // 688 cluster tiles of 128x256 2x1 at 4096 x 11008 on 66 clusters: 10 whole waves, then
  // 28 tiles of 2 units, the last wave of 56 units.
  const TileScheduler<2, 1> tiles(1, 4096, 11008, 128, 256, 8, 2, 660);
  ASSERT_EQ(tiles.total, 660 + 56);
  EXPECT_EQ(tiles.cluster_tile(659), 659);
  EXPECT_FALSE(tiles.split(659));
  EXPECT_EQ(tiles.k_steps(659, 64).count(), 64);
  for (long long u = 660; u < tiles.total; ++u) {
    EXPECT_TRUE(tiles.split(u));
    EXPECT_EQ(tiles.cluster_tile(u), 660 + (u - 660) / 2) << u;
    EXPECT_EQ(tiles.split_of(u), (u - 660) % 2) << u;
    EXPECT_EQ(tiles.k_steps(u, 64).begin, 32 * ((u - 660) % 2)) << u;
    EXPECT_EQ(tiles.k_steps(u, 64).count(), 32) << u;
  }
  EXPECT_EQ(tiles.k_steps(tiles.total, 64).count(), 0);  // past the last unit
}

// Bands of `group` cluster-tile rows, each walked column by column, top to bottom; the
// batch slowest. 4 x 3 cluster tiles, band 2 (the header's picture).
TEST(TileScheduler, WalksBandsColumnByColumn) {
  const TileScheduler<1, 1> tiles(2, 4 * 64, 3 * 64, 64, 64, 2, 1);
  ASSERT_EQ(tiles.total, 24);
  const int rows[12] = {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3};
  const int cols[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
  for (int t = 0; t < 24; ++t) {
    const TileIndex tile = tiles.tile(t, 0, tiles.divisors());
    EXPECT_EQ(tile.batch, t / 12) << t;
    EXPECT_EQ(tile.m, rows[t % 12]) << t;
    EXPECT_EQ(tile.n, cols[t % 12]) << t;
  }
  // A last band shorter than the rest: 3 rows, band 2, so the third row is a band of one.
  const TileScheduler<1, 1> ragged(1, 3 * 64, 2 * 64, 64, 64, 2, 1);
  EXPECT_EQ(ragged.tile(4, 0, ragged.divisors()).m, 2);
  EXPECT_EQ(ragged.tile(4, 0, ragged.divisors()).n, 0);
  EXPECT_EQ(ragged.tile(5, 0, ragged.divisors()).m, 2);
  EXPECT_EQ(ragged.tile(5, 0, ragged.divisors()).n, 1);
}

// A 2-CTA cluster along M: rank r takes tile row 2 * row + r of its cluster tile.
TEST(TileScheduler, PairsNeighbouringTilesInACluster) {
  const TileScheduler<2, 1> along_m(1, 4 * 128, 2 * 256, 128, 256, 1, 1);
  EXPECT_EQ(along_m.rows, 2);
  EXPECT_EQ(along_m.tile(0, 0, along_m.divisors()).m, 0);
  EXPECT_EQ(along_m.tile(0, 1, along_m.divisors()).m, 1);
  EXPECT_EQ(along_m.tile(1, 1, along_m.divisors()).n,
            1);  // band 1 row: the next cluster tile is the next column
  EXPECT_EQ(along_m.tile(2, 1, along_m.divisors()).m, 3);
  const TileScheduler<1, 2> along_n(1, 128, 4 * 256, 128, 256, 1, 1);
  EXPECT_EQ(along_n.cols, 2);
  EXPECT_EQ(along_n.tile(1, 0, along_n.divisors()).n, 2);
  EXPECT_EQ(along_n.tile(1, 1, along_n.divisors()).n, 3);
}

// The multiply-and-shift quotient is the division's for every dividend below 2^31: divisors
// at the edges (1, powers of two and their neighbours, past 2^21 where the multiplier's
// double rounds up, the largest) and at random, each with its edge dividends and random ones.
TEST(TileScheduler, FastDivisorDividesLikeTheDivision) {
  std::mt19937 rng(9);
  std::vector<unsigned> divisors = {1, 2, 3, 5, 7, 66, 132, 1000, (1u << 21) + 1, 0x7FFFFFFFu};
  for (int p = 1; p < 31; ++p) {
    for (const int delta : {-1, 0, 1}) divisors.push_back((1u << p) + static_cast<unsigned>(delta));
  }
  for (int i = 0; i < 2000; ++i) {
    divisors.push_back(std::uniform_int_distribution<unsigned>(1, 0x7FFFFFFFu)(rng));
    divisors.push_back(std::uniform_int_distribution<unsigned>(1, 5000)(rng));
  }
  std::uniform_int_distribution<unsigned> dividend(0, 0x7FFFFFFFu);
  for (const unsigned d : divisors) {
    const FastDivisor by(d);
    std::vector<unsigned> dividends = {
        0, 1, d - 1, d, d + 1, 2 * d - 1, 0x7FFFFFFFu, 0x7FFFFFFFu - 0x7FFFFFFFu % d};
    for (int i = 0; i < 200; ++i) dividends.push_back(dividend(rng));
    for (const unsigned n : dividends) {
      if (n > 0x7FFFFFFFu) continue;  // d + 1 and 2d - 1 may pass 2^31 - 1
      ASSERT_EQ(by.quotient(n), n / d) << n << " / " << d;
    }
  }
}

// The fast path of tile() (one batch, no split, fewer than 2^31 units) walks the same
// schedule as the division path, for whole and ragged last bands and both cluster shapes;
// the host's divisors for a call (recipe::schedule_divisors) are its schedule's.
TEST(TileScheduler, FastPathWalksTheDivisionPathsSchedule) {
  const std::vector<Problem> problems = {
      {1, 8192, 8192, 128, 256}, {1, 200, 300, 128, 128}, {1, 1, 4096, 64, 128},
      {1, 1000, 700, 64, 64},    {1, 129, 257, 128, 192}, {1, 8192, 11008, 128, 256},
  };
  const auto same = [](const auto& tiles) {
    const ScheduleDivisors fast = tiles.divisors();
    ASSERT_EQ(fast.fast, 1);
    for (long long u = 0; u < tiles.total; ++u) {
      for (int rank = 0; rank < 2; ++rank) {
        const TileIndex a = tiles.tile(u, rank, fast);
        const TileIndex b = tiles.tile(u, rank, ScheduleDivisors{});
        ASSERT_EQ(std::make_tuple(a.batch, a.m, a.n), std::make_tuple(b.batch, b.m, b.n))
            << "unit " << u << ", rank " << rank << ", band " << tiles.group << ", " << tiles.rows
            << " x " << tiles.cols << " cluster tiles";
      }
    }
  };
  for (const Problem& p : problems) {
    for (const long long group : {1LL, 3LL, 5LL, 8LL, 1000LL}) {
      same(TileScheduler<2, 1>(p.batch, p.m, p.n, p.tile_m, p.tile_n, group, 1));
      same(TileScheduler<1, 2>(p.batch, p.m, p.n, p.tile_m, p.tile_n, group, 1));
    }
  }
  // A batch and 2^31 tiles or more keep the division path; a launch that splits K divides
  // tile indices as the unsplit one does, with its divisors.
  EXPECT_EQ((TileScheduler<1, 1>(3, 200, 300, 128, 128, 2, 1).divisors().fast), 0);
  EXPECT_EQ((TileScheduler<1, 1>(1, 200, 300, 128, 128, 2, 3).divisors().fast), 1);
  const TileScheduler<1, 1> huge(1, 1LL << 24, 1LL << 24, 64, 64, 8, 1);
  EXPECT_EQ(huge.divisors().fast, 0);
  EXPECT_EQ(huge.tile(huge.total - 1, 0, huge.divisors()).m, (1LL << 18) - 1);
  const TileScheduler<1, 1> unsplit(1, 640, 640, 64, 64, 3, 1);
  for (const long long from : {0LL, 50LL, 99LL}) {
    const TileScheduler<1, 1> split(1, 640, 640, 64, 64, 3, 4, from);
    ASSERT_EQ(split.divisors().fast, 1);
    for (long long u = 0; u < split.total; ++u) {
      const TileIndex a = split.tile(u, 0, unsplit.divisors());
      const TileIndex b = split.tile(u, 0, ScheduleDivisors{});
      ASSERT_EQ(std::make_tuple(a.m, a.n), std::make_tuple(b.m, b.n)) << u;
    }
  }
}

}  // namespace
}  // namespace fusedgemm::kernels
