// The host device: host memory stands in for device memory, fills write words, and a
// launch interprets the fusion program over the kernel arguments it was given — the same
// arguments, in the same argument-plan order, a generated kernel receives. This lets CI run
// the whole public execute path, bytes and all, and is the tool's device without a GPU.
#pragma once

#include <memory>

#include "runtime/device.h"

namespace fusedgemm::runtime {

class HostDevice final : public Device {
 public:
  std::string_view name() const noexcept override { return "host"; }
  bool is_host() const noexcept override { return true; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 0; }

  Result<std::shared_ptr<const LoadedKernel>> load(const KernelImage& image) override;
  Status fill(const Fill32& fill, Stream stream) noexcept override;
  Status launch(const LoadedKernel& kernel, const LaunchConfig& config, kernels::KernelArgs& args,
                Stream stream) noexcept override;
};

}  // namespace fusedgemm::runtime
