// Arrival counters in the workspace that never need zeroing: the CTAs (epilogue units) of
// a group each arrive once per launch, and the last to arrive learns that it is last — a
// tap's reduction group (kernels/tap_commit.cuh), the K splits of a tile
// (kernels/split_k.cuh). Device code; no host headers (NVRTC).
//
// A counter word is (epoch << kCounterCountBits) | arrivals. 24 bits of count hold a group
// of up to 2^24 - 1 arrivals (the workspace rule refuses larger groups); the 40 bits of
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

#include "kernels/ptx/global.cuh"  // ld_relaxed_gpu

namespace fusedgemm::kernels {

inline constexpr int kCounterCountBits = 24;
inline constexpr unsigned long long kCounterCountMask = (1ull << kCounterCountBits) - 1ull;
inline constexpr unsigned long long kCounterEpochMask = (1ull << (64 - kCounterCountBits)) - 1ull;

// One arrival on a group's counter; true for the group's last (the `size`-th) arrival.
// The caller orders its stores before it (fence, then barrier) and its reads of the others'
// stores after it (fence), as tap_arrive_all and split_k_reduce do.
__device__ __forceinline__ bool epoch_arrive(unsigned long long* word, unsigned long long epoch,
                                             long long size) {
  const unsigned long long tag = epoch & kCounterEpochMask;
  unsigned long long seen = ptx::ld_relaxed_gpu(word);
  for (;;) {
    const unsigned long long count = seen & kCounterCountMask;
    const bool this_launch = (seen >> kCounterCountBits) == tag && count < size;
    const unsigned long long next =
        (tag << kCounterCountBits) | (this_launch ? count + 1ull : 1ull);
    const unsigned long long prev = atomicCAS(word, seen, next);
    if (prev == seen) return static_cast<long long>(next & kCounterCountMask) == size;
    seen = prev;
  }
}

}  // namespace fusedgemm::kernels
