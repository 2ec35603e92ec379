// Arrival counters in the workspace that never need zeroing: the CTAs (epilogue units) of
// a group each arrive once per launch, and the last to arrive learns that it is last — a
// tap's reduction group (kernels/tap_commit.cuh), the K splits of a tile
// (kernels/split_k.cuh). Device code; no host headers (NVRTC).
//
// A counter word is (epoch << kCounterCountBits) | arrivals. 24 bits of count hold a group
// of up to 2^24 - 2 arrivals (kCounterMaxGroup, kernels/kernel_args.h); the 40 bits of
// epoch are the launch's KernelArgs::epoch, which the plan starts at a random value and
// advances by one per execute that uses counters.
//
// Why no word ever needs zeroing: an arrival whose launch's epoch differs from the word's
// starts the count afresh at 1; so does one that finds the count already complete (a
// replayed CUDA graph launches one epoch again, after the previous replay finished). Within
// a launch the count of a group never reaches its size before its last arrival, so every
// other arrival sees its own epoch and a count below the size. What the word held before —
// a finished launch of this plan, another plan's launch, any bytes a caller wrote — is
// ignored unless its top 40 bits equal this launch's epoch while its count is below the
// group size. For one plan's own earlier launches that needs 2^40 executes in between (~38
// days at 3 us each); for another plan or arbitrary bytes, a 2^-40 chance per word and launch.
#pragma once

#include "kernels/kernel_args.h"  // kCounterCountBits, kCounterMaxGroup

namespace fusedgemm::kernels {

inline constexpr unsigned long long kCounterCountMask = (1ull << kCounterCountBits) - 1ull;
inline constexpr unsigned long long kCounterEpochMask = (1ull << (64 - kCounterCountBits)) - 1ull;

// One arrival on a group's counter; true for the group's last (the `size`-th) arrival.
// The caller orders its stores before it and its reads of the others' stores after it (a
// fence on each side), as tap_arrive_all and SplitK::reduce do.
//
// The arrival adds 1 first, one L2 round trip: a word already this launch's (its epoch, a
// count below the size) only grows by this launch's arrivals, one each, so that add counts.
// An add that finds a word of the past (another epoch, or this epoch's count complete: a
// replayed graph) does not count; that arrival restarts the word at a count of 1 by
// compare-and-swap, or, where another arrival restarted it first, adds again. Of the
// arrivals that find the past at once one restarts and the others add: none retries more
// than twice. (A compare-and-swap per arrival retried once per arrival that beat it, and
// a row tap's group arrives within microseconds.)
//
// An add on a word of the past leaves it of the past: a completed word's count is at most
// kCounterMaxGroup, so the add never carries into the epoch.
static_assert(kCounterMaxGroup == static_cast<long long>(kCounterCountMask) - 1,
              "a completed count plus one more add must stay below the epoch's bits");

// Whether a counter word holds a count of this launch (epoch tag `tag`) still below `size`.
__device__ __forceinline__ bool epoch_counting(unsigned long long value, unsigned long long tag,
                                               long long size) {
  return (value >> kCounterCountBits) == tag &&
         static_cast<long long>(value & kCounterCountMask) < size;
}

__device__ __forceinline__ bool epoch_arrive(unsigned long long* word, unsigned long long epoch,
                                             long long size) {
  const unsigned long long tag = epoch & kCounterEpochMask;
  unsigned long long before = atomicAdd(word, 1ull);
  unsigned long long seen = before + 1ull;  // the word as this add left it
  while (!epoch_counting(before, tag, size)) {
    const unsigned long long prev = atomicCAS(word, seen, (tag << kCounterCountBits) | 1ull);
    if (prev == seen) return size == 1;
    if (epoch_counting(prev, tag, size)) {
      before = atomicAdd(word, 1ull);
    } else {
      seen = prev;
    }
  }
  return static_cast<long long>(before & kCounterCountMask) + 1 == size;
}

}  // namespace fusedgemm::kernels
