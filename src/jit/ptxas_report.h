// The resources ptxas reports for each function of a compiled kernel, read from the
// `--ptxas-options=-v` lines NVRTC appends to its log. Register count and spills decide
// whether a tile configuration is viable, so they are kept as numbers, not as log text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fusedgemm::jit {

struct FunctionResources {
  std::string name;       // as ptxas prints it: mangled unless declared extern "C"
  bool is_entry = false;  // a __global__ function ("Compiling entry function ...")
  int registers = 0;
  int barriers = 0;  // named barriers (bar.sync ids) the function uses
  std::uint64_t stack_frame_bytes = 0;
  std::uint64_t spill_store_bytes = 0;
  std::uint64_t spill_load_bytes = 0;
  std::uint64_t cumulative_stack_bytes = 0;
  std::uint64_t shared_static_bytes = 0;  // __shared__ arrays; dynamic shared memory excluded
  // Sum over the constant banks (`N bytes cmem[B]`). ptxas of CUDA 13.0 no longer prints
  // cmem lines (observed 2025 with NVRTC 13.0), so this is 0 there.
  std::uint64_t constant_bytes = 0;
  std::uint64_t local_bytes = 0;  // `N bytes lmem` of older ptxas; newer ones say stack frame

  bool spills() const { return spill_store_bytes != 0 || spill_load_bytes != 0; }
};

struct PtxasReport {
  std::vector<FunctionResources> functions;  // in log order
  std::uint64_t global_bytes = 0;            // `N bytes gmem`: module-scope __device__ data
  // ptxas's "Potential Performance Loss" warnings (C75xx: wgmma serialized, setmaxnreg
  // ignored, ...), each line as printed: a kernel that has one lost its pipelining.
  std::vector<std::string> performance_warnings;

  // The function named `name`, or nullptr.
  const FunctionResources* find(std::string_view name) const;
  // True when any function of the module spills.
  bool spills() const;
};

// Parses every `ptxas info` / `ptxas .` line of `log` and keeps the performance warnings;
// other lines (other warnings, errors, compile times) are skipped. A log without -v lines gives an
// empty report.
PtxasReport parse_ptxas_report(std::string_view log);

}  // namespace fusedgemm::jit
