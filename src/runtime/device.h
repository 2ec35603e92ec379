// The device interface the execute path talks to: kernel loading and launching, plus
// 32-bit fills (a device capability the tests use to set memory; execute writes nothing
// before its one launch). Implementations: CudaDevice (driver API), HostDevice (interpreter), and a
// do-nothing device the host-cost benchmark uses.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/tma_plan.h"
#include "fusedgemm/device.h"
#include "fusedgemm/status.h"
#include "fusion/fusion_program.h"
#include "kernels/kernel_args.h"
#include "recipe/recipe.h"

namespace fusedgemm::runtime {

using Stream = void*;  // a CUstream on CUDA; the host device ignores it

// `height` rows of `width_words` 32-bit words, each row `pitch_bytes` after the previous
// (cuMemsetD2D32Async's shape).
struct Fill32 {
  void* data = nullptr;
  std::uint64_t pitch_bytes = 0;
  std::uint64_t width_words = 0;
  std::uint64_t height = 0;
  std::uint32_t word = 0;
};

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {128, 1, 1};
  unsigned cluster[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  // Programmatic dependent launch: the kernel may start before the previous one on the
  // stream has finished (it waits in griddepcontrol.wait for that one's memory).
  bool dependent_launch = false;
};

// One kernel parameter in fusion-program terms: parameter i is recipe role i.
struct KernelParam {
  recipe::ParamKind kind = recipe::ParamKind::kOperand;
  int index = 0;
};

// How the CUDA device encodes one TMA descriptor at launch (codegen/tma_plan.h says exactly
// how to call cuTensorMapEncodeTiled with it).
using TmaPlan = codegen::TmaPlan;

// What a device loads: a cubin for CUDA; the fusion program and its argument plan for the
// host device, which interprets them.
struct KernelImage {
  std::string entry;
  std::vector<std::uint8_t> cubin;
  // The largest dynamic shared memory any launch of this kernel asks for. A CUDA device sets
  // it as the kernel's limit once at load, never per launch; 0 keeps the driver's default
  // (48 KiB less the kernel's static shared memory).
  unsigned max_shared_bytes = 0;
  std::shared_ptr<const fusion::FusionProgram> program;
  std::vector<KernelParam> params;
  std::vector<TmaPlan> tma;
  // The launch shape every launch of this kernel has: block size and CTAs per cluster (the
  // CUDA device reads the kernel's residency from them at load).
  unsigned block_threads = 0;
  unsigned cluster_ctas = 1;
};

// A kernel a device has loaded; only the device that made it can launch it.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  // The CTAs of this kernel the device keeps resident at once, the size of a persistent
  // grid (a multiple of the cluster); 0 where the device has no such limit (the host device
  // runs any grid).
  unsigned resident_ctas() const noexcept { return resident_ctas_; }

 protected:
  unsigned resident_ctas_ = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string_view name() const noexcept = 0;
  virtual bool is_host() const noexcept = 0;
  // The device plans built on this object run on.
  virtual int ordinal() const noexcept = 0;
  // The device the calling thread's work would go to now (CUDA: the current context's).
  virtual int current_ordinal() const noexcept = 0;
  // The CUDA driver version (e.g. 13000), part of the kernel cache key; 0 without a driver.
  virtual int driver_version() const noexcept { return 0; }
  // The device's multiprocessor count, which the tile choice plans waves over; 0 where it
  // has none (the host device).
  virtual int multiprocessor_count() const noexcept { return 0; }

  virtual Result<std::shared_ptr<const LoadedKernel>> load(const KernelImage& image) = 0;
  virtual Status fill(const Fill32& fill, Stream stream) noexcept = 0;
  // `args` is the caller's, built for this launch: a device may complete it (the CUDA device
  // encodes the TMA descriptors into args.tma) before the driver copies it.
  virtual Status launch(const LoadedKernel& kernel, const LaunchConfig& config,
                        kernels::KernelArgs& args, Stream stream) noexcept = 0;
  // Completes `args` as launch() would (the CUDA device encodes the TMA descriptors) so
  // that launches with the same addresses can skip that work.
  virtual Status prepare(const LoadedKernel& /*kernel*/, kernels::KernelArgs& /*args*/) noexcept {
    return Status::ok();
  }
  // Launches arguments prepare() completed, with every address unchanged since. Reads
  // `args` only, so a bound pack's arguments are launched as they are.
  virtual Status launch_prepared(const LoadedKernel& kernel, const LaunchConfig& config,
                                 const kernels::KernelArgs& args, Stream stream) noexcept {
    kernels::KernelArgs copy = args;
    return launch(kernel, config, copy, stream);
  }
};

}  // namespace fusedgemm::runtime
