// The generated epilogue: one fusion program's DAG, stores, taps and quantized outputs as
// the device function the mainloop calls (src/kernels/epilogue_contract.cuh):
//
//   template <int TileM, int TileN>
//   __device__ __forceinline__ void fusedgemm_epilogue(
//       const fusedgemm::kernels::KernelArgs& args, const fusedgemm::kernels::TileCoord& tile,
//       float (&acc)[G][fusedgemm::kernels::Fragment<TileM, TileN>::kCount],
//       float* smem_scratch, unsigned smem_staging, unsigned smem_borrowed);
//
// with G the program's GEMM count, plus `constexpr int kEpilogueScratchBytes`: the shared
// memory (bytes, 16-byte aligned) the mainloop passes as smem_scratch. smem_staging is the
// shared address of the staging of the outputs recipe::tma_store_outputs names, which the
// epilogue stores through TMA where the call's layout allows (kernels/epilogue_store.cuh)
// and directly elsewhere: it is instantiated for both. smem_borrowed is where the
// KernelConfig::borrowed_buffers more buffers of the one staged output lie this unit.
//
// Per fragment element inside the problem, the DAG runs in fp32, one statement per node in
// program (topological) order under a comment with the node's name and formula; a node
// whose tensor declares a type below fp32 rounds there. Then dense outputs are stored,
// taps fold their contribution into per-thread partials, and quantized outputs keep their
// input. After the element loop: quantized blocks are scaled and stored, each tap is
// reduced in the CTA into the CTA's workspace slot, and the last CTA of each tap's
// reduction group folds the group's slots in a fixed order, finishes (norm2: square root)
// and stores the tap (kernels/tap_commit.cuh): no atomics on data, no seed.
//
// Anything it cannot generate correctly is an ErrorCode::kUnavailable naming the node or
// role and why; a recipe that does not match the program is kInternal.
#pragma once

#include <cstdint>
#include <string>

#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"
#include "recipe/recipe.h"

namespace fusedgemm::codegen {

// The same program and recipe give byte-identical source. The text is spliced into the
// kernel's translation unit (no #pragma once); it includes the src/kernels/ headers it uses.
Result<std::string> generate_epilogue(const fusion::FusionProgram& program,
                                      const recipe::Recipe& recipe);

// kEpilogueScratchBytes of that source, for the host's shared-memory plan (the scratch may
// alias the idle TMA ring); fails exactly when generate_epilogue does.
Result<std::uint32_t> epilogue_scratch_bytes(const fusion::FusionProgram& program,
                                             const recipe::Recipe& recipe);

}  // namespace fusedgemm::codegen
