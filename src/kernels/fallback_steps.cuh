// The fallback engine's step kernels (fallback/step_source.cpp instantiates one per step):
// whole-tensor loops with no tiling, written to be obviously right rather than fast. Every
// step reads and writes through BufferArgs in declared [b, rows, cols] order; an axis of
// extent 1 carries stride 0, so a broadcast input is read by the result's index.
// Device code; no host headers (NVRTC).
#pragma once

#include "kernels/element_io.cuh"  // Elem, encode, decode, load_at, store_at, element
#include "kernels/kernel_args.h"   // KernelArgs, BufferArg

namespace fusedgemm::kernels::fallback {

inline constexpr int kStepThreads = 256;

// [b, r, c] of the i-th element of a dense (batch, m, n) index space.
__device__ __forceinline__ void coords(long long i, long long m, long long n, long long& b,
                                       long long& r, long long& c) {
  c = i % n;
  r = (i / n) % m;
  b = i / (n * m);
}

template <Elem E>
__device__ __forceinline__ float read(const BufferArg& a, long long b, long long r, long long c) {
  if constexpr (E == Elem::kE2M1) {
    const long long i = element(a, b, r, c);
    const unsigned byte = static_cast<const unsigned char*>(a.data)[i >> 1];
    return decode<E>((i & 1) ? (byte >> 4) : (byte & 0xFu));
  } else {
    return load_at<E>(a, b, r, c);
  }
}

// fp4 shares a byte between two elements that different threads may write: the nibble is
// merged into its aligned 32-bit word by compare-and-swap.
template <Elem E>
__device__ __forceinline__ void write(const BufferArg& a, long long b, long long r, long long c,
                                      float v) {
  if constexpr (E == Elem::kE2M1) {
    const long long i = element(a, b, r, c);
    const auto byte = reinterpret_cast<unsigned long long>(a.data) + (i >> 1);
    unsigned* word = reinterpret_cast<unsigned*>(byte & ~3ull);
    const unsigned shift = static_cast<unsigned>(byte & 3ull) * 8u + ((i & 1) ? 4u : 0u);
    const unsigned mask = 0xFu << shift;
    const unsigned code = (encode<E>(v) & 0xFu) << shift;
    unsigned old = *word;
    unsigned assumed = 0;
    do {
      assumed = old;
      old = atomicCAS(word, assumed, (assumed & ~mask) | code);
    } while (old != assumed);
  } else {
    store_at<E>(a, b, r, c, v);
  }
}

// A grid-stride loop over the (batch, m, n) index space of `args`.
template <class F>
__device__ __forceinline__ void for_each_element(const KernelArgs& args, F f) {
  const long long count = args.batch * args.m * args.n;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    long long b = 0, r = 0, c = 0;
    coords(i, args.m, args.n, b, r, c);
    f(b, r, c);
  }
}

// One output element per block: each thread folds a fixed stride of the reduced points,
// then a fixed tree combines the threads, so the result is the same bits on every run.
// `contribute(v)` is what a point adds, `combine(a, b)` the mode's combine. The extents are
// the plan's (the fallback runs declared dims): the output's (M, N) and the reduced axes'
// (R0, R1, R2; 1 where an axis is kept), constants so that no index needs a division call.
template <Elem In, Elem Out, long long M, long long N, long long R0, long long R1, long long R2,
          class Contribute, class Combine>
__device__ __forceinline__ void reduce(const KernelArgs& args, float identity, bool square_root,
                                       Contribute contribute, Combine combine) {
  __shared__ float part[kStepThreads];
  const BufferArg& out = args.buffers[0];
  const BufferArg& in = args.buffers[1];
  constexpr long long kPoints = R0 * R1 * R2;
  const long long outputs = args.batch * M * N;
  for (long long o = blockIdx.x; o < outputs; o += gridDim.x) {
    long long ob = 0, orow = 0, oc = 0;
    coords(o, M, N, ob, orow, oc);
    float acc = identity;
    for (long long j = threadIdx.x; j < kPoints; j += kStepThreads) {
      long long jb = 0, jr = 0, jc = 0;
      coords(j, R1, R2, jb, jr, jc);
      const float v = read<In>(in, R0 > 1 ? jb : ob, R1 > 1 ? jr : orow, R2 > 1 ? jc : oc);
      acc = combine(acc, contribute(v));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kStepThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) part[threadIdx.x] = combine(part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      const float v = square_root ? __fsqrt_rn(part[0]) : part[0];
      write<Elem::kF32>(out, ob, orow, oc, round_to<Out>(v));
    }
    __syncthreads();
  }
}

// Per block of the scales' index space: amax over the block, scale = amax / max_finite(Y)
// (1 for an all-zero block) rounded to the scale type, values x / scale rounded to Y.
template <Elem X, Elem Y, Elem S>
__device__ __forceinline__ void quantize(const KernelArgs& args, long long block_rows,
                                         long long block_cols) {
  const BufferArg& values = args.buffers[0];
  const BufferArg& scales = args.buffers[1];
  const BufferArg& x = args.buffers[2];
  for_each_element(args, [&](long long b, long long i, long long j) {
    const long long r0 = i * block_rows;
    const long long c0 = j * block_cols;
    const long long r1 = r0 + block_rows < x.shape[1] ? r0 + block_rows : x.shape[1];
    const long long c1 = c0 + block_cols < x.shape[2] ? c0 + block_cols : x.shape[2];
    float amax = 0.0f;
    for (long long r = r0; r < r1; ++r) {
      for (long long c = c0; c < c1; ++c) amax = fmaxf(amax, fabsf(read<X>(x, b, r, c)));
    }
    const float scale = round_to<S>(amax == 0.0f ? 1.0f : __fdiv_rn(amax, max_finite<Y>()));
    write<Elem::kF32>(scales, b, i, j, scale);
    for (long long r = r0; r < r1; ++r) {
      for (long long c = c0; c < c1; ++c) {
        write<Elem::kF32>(values, b, r, c, round_to<Y>(__fdiv_rn(read<X>(x, b, r, c), scale)));
      }
    }
  });
}

}  // namespace fusedgemm::kernels::fallback
