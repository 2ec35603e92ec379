// wgmma: warpgroup matrix multiply-accumulate with both operands in shared memory (sm_90a
// only). Issued by all 128 threads of a warpgroup (4 consecutive warps starting at a warp
// index divisible by 4). Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Orders earlier register and shared-memory accesses before the wgmma.mma_async that
// follow; needed before the first wgmma and whenever other code touched the accumulators.
//   PTX: wgmma.fence.sync.aligned;   PTX ISA 8.0, sm_90a.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Closes the wgmma.mma_async issued so far into one wgmma-group.
//   PTX: wgmma.commit_group.sync.aligned;   PTX ISA 8.0, sm_90a.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `Pending` wgmma-groups of this warpgroup are still in flight.
//   PTX: wgmma.wait_group.sync.aligned N;   PTX ISA 8.0, sm_90a.
template <int Pending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(Pending >= 0 && Pending <= 7, "wgmma.wait_group takes 0..7: pass a count in range");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Not an instruction: an empty asm that ties a register to this point, so the compiler
// neither reads an accumulator before wgmma.wait_group returns nor moves a write past the
// next wgmma.fence (wgmma writes the registers asynchronously, which the compiler cannot see).
__device__ __forceinline__ void wgmma_fence_operand(float& value) {
  asm volatile("" : "+f"(value)::"memory");
}

// Sets an accumulator to zero inside a branch taken rarely. A plain `= 0.0f` under a branch
// lets the compiler turn the branch into one select per register, executed every time (128
// FSELs per tile for K = 0, which no tile of a K > 0 call takes); a volatile asm cannot be
// speculated, so the branch stays a branch.
__device__ __forceinline__ void zero_accumulator_in_branch(float& value) {
  asm volatile("mov.b32 %0, 0;\n" : "=f"(value));
}

// Operand element types of wgmma.mma_async with an f32 accumulator.
enum class MmaType : int { kBf16, kF16, kE4M3, kE5M2 };

// Bytes of K one MMA consumes per row: k16 for 2-byte types, k32 for 1-byte types.
inline constexpr int kWgmmaKBytes = 32;

// The accumulator list of wgmma.mma_async and its "+f" operands, 32 registers (N = 64) at
// a time: N = 64, 128, 192 and 256 take chunks 0, 0-1, 0-2 and 0-3; N = 160 takes chunks
// 0-1 and the first half of chunk 2 (D2_HALF).
#define FG_WGMMA_D0                                                        \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FG_WGMMA_D1                                                                    \
  ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FG_WGMMA_D2                                                                    \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define FG_WGMMA_D2_HALF \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define FG_WGMMA_D3                                                                                \
  ", %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FG_WGMMA_D_N64 FG_WGMMA_D0
#define FG_WGMMA_D_N128 FG_WGMMA_D0 FG_WGMMA_D1
#define FG_WGMMA_D_N160 FG_WGMMA_D0 FG_WGMMA_D1 FG_WGMMA_D2_HALF
#define FG_WGMMA_D_N192 FG_WGMMA_D0 FG_WGMMA_D1 FG_WGMMA_D2
#define FG_WGMMA_D_N256 FG_WGMMA_D0 FG_WGMMA_D1 FG_WGMMA_D2 FG_WGMMA_D3
#define FG_WGMMA_OUT8(d, i)                                                                       \
  "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define FG_WGMMA_OUT32(d, i) \
  FG_WGMMA_OUT8(d, i), FG_WGMMA_OUT8(d, i + 8), FG_WGMMA_OUT8(d, i + 16), FG_WGMMA_OUT8(d, i + 24)
#define FG_WGMMA_OUT_N64(d) FG_WGMMA_OUT32(d, 0)
#define FG_WGMMA_OUT_N128(d) FG_WGMMA_OUT_N64(d), FG_WGMMA_OUT32(d, 32)
#define FG_WGMMA_OUT_N160(d) FG_WGMMA_OUT_N128(d), FG_WGMMA_OUT8(d, 64), FG_WGMMA_OUT8(d, 72)
#define FG_WGMMA_OUT_N192(d) FG_WGMMA_OUT_N128(d), FG_WGMMA_OUT32(d, 64)
#define FG_WGMMA_OUT_N256(d) FG_WGMMA_OUT_N192(d), FG_WGMMA_OUT32(d, 96)
// Operands after the N / 2 accumulators: a-desc, b-desc, scale-d, then (16-bit types) the
// two transpose immediates.
#define FG_WGMMA_SCALE_N64 "%34"
#define FG_WGMMA_ARGS_N64 "%32, %33, p, 1, 1"
#define FG_WGMMA_TRANS_N64 ", %35, %36"
#define FG_WGMMA_SCALE_N128 "%66"
#define FG_WGMMA_ARGS_N128 "%64, %65, p, 1, 1"
#define FG_WGMMA_TRANS_N128 ", %67, %68"
#define FG_WGMMA_SCALE_N160 "%82"
#define FG_WGMMA_ARGS_N160 "%80, %81, p, 1, 1"
#define FG_WGMMA_TRANS_N160 ", %83, %84"
#define FG_WGMMA_SCALE_N192 "%98"
#define FG_WGMMA_ARGS_N192 "%96, %97, p, 1, 1"
#define FG_WGMMA_TRANS_N192 ", %99, %100"
#define FG_WGMMA_SCALE_N256 "%130"
#define FG_WGMMA_ARGS_N256 "%128, %129, p, 1, 1"
#define FG_WGMMA_TRANS_N256 ", %131, %132"

// One wgmma.mma_async: N, K shape token (k16 or k32), the two type names, the transpose
// operand text ("" for fp8) and the extra inputs (the transpose immediates).
#define FG_WGMMA(N, K, TA, TB, TRANS, ...)                                               \
  asm volatile(                                                                          \
      "{\n"                                                                              \
      ".reg .pred p;\n"                                                                  \
      "setp.ne.b32 p, " FG_WGMMA_SCALE_N##N                                              \
      ", 0;\n"                                                                           \
      "wgmma.mma_async.sync.aligned.m64n" #N #K ".f32." #TA "." #TB " {" FG_WGMMA_D_N##N \
      "}, " FG_WGMMA_ARGS_N##N TRANS                                                     \
      ";\n"                                                                              \
      "}\n"                                                                              \
      : FG_WGMMA_OUT_N##N(d)                                                             \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d)__VA_ARGS__)
#define FG_WGMMA_16BIT(N, T) FG_WGMMA(N, k16, T, T, FG_WGMMA_TRANS_N##N, , "n"(TransA), "n"(TransB))
#define FG_WGMMA_FP8(N, TA, TB) FG_WGMMA(N, k32, TA, TB, "")
// Every type combination of one N.
#define FG_WGMMA_ALL_TYPES(N)                \
  if constexpr (TypeA == MmaType::kBf16)     \
    FG_WGMMA_16BIT(N, bf16);                 \
  else if constexpr (TypeA == MmaType::kF16) \
    FG_WGMMA_16BIT(N, f16);                  \
  else if constexpr (e4a && e4b)             \
    FG_WGMMA_FP8(N, e4m3, e4m3);             \
  else if constexpr (e4a)                    \
    FG_WGMMA_FP8(N, e4m3, e5m2);             \
  else if constexpr (e4b)                    \
    FG_WGMMA_FP8(N, e5m2, e4m3);             \
  else                                       \
    FG_WGMMA_FP8(N, e5m2, e5m2)

// The N a wgmma wrapper below covers.
__host__ __device__ constexpr bool wgmma_n_supported(int n) {
  return n == 64 || n == 128 || n == 160 || n == 192 || n == 256;
}

// d[0 .. N/2) (+)= A(64 x K) * B(N x K)^T over one K step of kWgmmaKBytes bytes, with the
// m64nNk{16,32} f32 accumulator fragment in `d` (kernels/epilogue_contract.cuh).
// `desc_a`, `desc_b`: shared-memory matrix descriptors (ptx/smem_descriptor.cuh).
// TransA = 1 reads A M-major, TransB = 1 reads B N-major (imm-trans-a/b; 16-bit types
// only). `scale_d` = 0 overwrites d, anything else accumulates. imm-scale-a/b are 1.
//   PTX: wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}
//            d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b;
//        wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}
//            d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b;
//   PTX ISA 8.0, sm_90a.
template <int N, MmaType TypeA, MmaType TypeB, int TransA, int TransB>
__device__ __forceinline__ void wgmma_mma_async(float* d, unsigned long long desc_a,
                                                unsigned long long desc_b, int scale_d) {
  static_assert(wgmma_n_supported(N),
                "wgmma wrapper covers N = 64, 128, 160, 192 and 256: add the shape here");
  constexpr bool k16 = TypeA == MmaType::kBf16 || TypeA == MmaType::kF16;
  static_assert(!k16 || TypeA == TypeB, "16-bit wgmma needs A and B of one type: cast one side");
  static_assert(k16 || TypeB == MmaType::kE4M3 || TypeB == MmaType::kE5M2,
                "fp8 wgmma needs both operands fp8 (e4m3 or e5m2): cast the other side");
  static_assert(k16 || (TransA == 0 && TransB == 0),
                "fp8 wgmma reads K-major operands only: make fp8 A and B K-major");
  static_assert((TransA == 0 || TransA == 1) && (TransB == 0 || TransB == 1),
                "imm-trans-a/b are 0 (K-major) or 1 (M-/N-major)");
  constexpr bool e4a = TypeA == MmaType::kE4M3;
  constexpr bool e4b = TypeB == MmaType::kE4M3;
  if constexpr (N == 64) {
    FG_WGMMA_ALL_TYPES(64);
  } else if constexpr (N == 128) {
    FG_WGMMA_ALL_TYPES(128);
  } else if constexpr (N == 160) {
    FG_WGMMA_ALL_TYPES(160);
  } else if constexpr (N == 192) {
    FG_WGMMA_ALL_TYPES(192);
  } else {
    FG_WGMMA_ALL_TYPES(256);
  }
}

#undef FG_WGMMA_ALL_TYPES
#undef FG_WGMMA_FP8
#undef FG_WGMMA_16BIT
#undef FG_WGMMA
#undef FG_WGMMA_TRANS_N64
#undef FG_WGMMA_ARGS_N64
#undef FG_WGMMA_SCALE_N64
#undef FG_WGMMA_OUT_N64
#undef FG_WGMMA_D_N64
#undef FG_WGMMA_TRANS_N128
#undef FG_WGMMA_ARGS_N128
#undef FG_WGMMA_SCALE_N128
#undef FG_WGMMA_OUT_N128
#undef FG_WGMMA_D_N128
#undef FG_WGMMA_TRANS_N160
#undef FG_WGMMA_ARGS_N160
#undef FG_WGMMA_SCALE_N160
#undef FG_WGMMA_OUT_N160
#undef FG_WGMMA_D_N160
#undef FG_WGMMA_TRANS_N192
#undef FG_WGMMA_ARGS_N192
#undef FG_WGMMA_SCALE_N192
#undef FG_WGMMA_OUT_N192
#undef FG_WGMMA_D_N192
#undef FG_WGMMA_TRANS_N256
#undef FG_WGMMA_ARGS_N256
#undef FG_WGMMA_SCALE_N256
#undef FG_WGMMA_OUT_N256
#undef FG_WGMMA_D_N256
#undef FG_WGMMA_OUT32
#undef FG_WGMMA_OUT8
#undef FG_WGMMA_D0
#undef FG_WGMMA_D1
#undef FG_WGMMA_D2
#undef FG_WGMMA_D2_HALF
#undef FG_WGMMA_D3

}  // namespace fusedgemm::kernels::ptx
