// Assembles the NVRTC translation unit of one fused kernel from a recipe and its generated
// epilogue: the hand-written mainloop (kernels/gemm_sm90.cuh) instantiated with the graph's
// operand table, then the epilogue, then the extern "C" entry. Also returns what loading
// and launching it needs: the headers, the TMA plans, shared memory and block size.
//
// Compiling and launching a KernelSource (the JIT and the CUDA device own these steps):
//   1. NVRTC: nvrtcCreateProgram(source, program_name, headers (contents, include names));
//      options "-arch=sm_90a" "-std=c++17" (sm_90a: wgmma exists only there); get the CUBIN.
//   2. Load: cuModuleLoadData, cuModuleGetFunction(entry), then once
//      cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)
//      (above 48 KB a launch fails without it).
//   3. Each launch: KernelArgs as the runtime fills it (problem size, buffers in the recipe's
//      argument-plan order), plus args.tma[plan.slot] encoded for every TmaPlan
//      (codegen/tma_plan.h gives the cuTensorMapEncodeTiled call) and args.raster_group
//      (recipe::raster_group); a persistent 1-D grid of at most the CTAs the device keeps
//      resident, a multiple of the cluster (recipe.config.cluster_ctas(), the cluster-
//      dimension attribute when above 1), block (block_threads, 1, 1), dynamic shared
//      memory shared_bytes, the one kernel parameter &args (cuLaunchKernelEx). Any grid is
//      correct: each cluster runs every tile the schedule gives it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/tma_plan.h"
#include "fusedgemm/status.h"
#include "recipe/recipe.h"

namespace fusedgemm::codegen {

// The epilogue generator's output. `text` defines, at global scope (TileM x TileN: the
// epilogue unit, one consumer warpgroup's half of the CTA tile),
//   template <int TileM, int TileN>
//   __device__ void fusedgemm_epilogue(const fusedgemm::kernels::KernelArgs& args,
//                                      const fusedgemm::kernels::TileCoord& tile,
//                                      float (&acc)[G][fusedgemm::kernels::Fragment<TileM,
//                                                                  TileN>::kCount],
//                                      float* smem_scratch, unsigned smem_staging,
//                                      unsigned smem_borrowed);
// (kernels/epilogue_contract.cuh), with G the program's GEMM count. It may read the config
// struct FusedgemmConfig, which precedes it.
struct EpilogueCode {
  std::string text;
  std::uint32_t scratch_bytes = 0;  // shared memory the epilogue needs per consumer warpgroup
};

struct KernelSourceOptions {
  // Emits #define FUSEDGEMM_KERNEL_DEBUG 1: launch checks and bounded barrier waits that
  // print and trap (kernels/gemm_sm90.cuh). Part of the source, so part of the cache key.
  bool debug = false;
};

struct KernelHeader {
  std::string_view name;  // include name, e.g. "kernels/gemm_sm90.cuh"
  std::string_view contents;
};

struct KernelSource {
  std::string program_name;  // for NVRTC and dumps: "fusedgemm_<graph>.cu"
  std::string entry;         // "fusedgemm_kernel"
  std::string source;
  std::vector<KernelHeader> headers;  // every embedded kernel header, sorted by name
  // One per operand (slot = operand index), then one per TMA-stored output (slot
  // kMaxTmaDescriptors + k, `store`).
  std::vector<TmaPlan> tma;
  std::uint32_t shared_bytes = 0;     // dynamic shared memory per CTA (set the attribute)
  std::uint32_t block_threads = 384;  // block (block_threads, 1, 1)
  // recipe.config's CTA tile and cluster, for the launch.
  int tile_m = 0;
  int tile_n = 0;
  int cluster_ctas = 1;
};

// Fails with kUnavailable, naming the operand and its type, for what the kernel cannot read
// yet (fp4, fp8 not K-major, mixed operand types, block-scaled next to unscaled operands);
// with kInternal when recipe.config is not a configuration the kernel has. Block-scaled
// operands take the PromoteBlockScales stage math (kernels/gemm_sm90_block_scale.cuh).
Result<KernelSource> generate_kernel_source(const recipe::Recipe& recipe,
                                            const EpilogueCode& epilogue,
                                            const KernelSourceOptions& options = {});

}  // namespace fusedgemm::codegen
