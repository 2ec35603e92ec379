// The host device: host memory stands in for device memory, fills write words, and a
// launch interprets the fusion program over the kernel arguments it was given — the same
// arguments, in the same argument-plan order, a generated kernel receives. This lets CI run
// the whole public execute path, bytes and all, and is the tool's device without a GPU.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/device.h"

namespace fusedgemm::runtime {

// A launch sums the products of each batch from operand panels decoded once (rows x K per
// operand), where they take at most `max_panel_bytes`; past that, it reads the operands per
// product (slow, but nothing it allocates grows with K). Both give the same bits.
class HostDevice final : public Device {
 public:
  static constexpr std::uint64_t kMaxPanelBytes = std::uint64_t{1} << 30;
  explicit HostDevice(std::uint64_t max_panel_bytes = kMaxPanelBytes)
      : max_panel_bytes_(max_panel_bytes) {}

  std::string_view name() const noexcept override { return "host"; }
  bool is_host() const noexcept override { return true; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 0; }

  Result<std::shared_ptr<const LoadedKernel>> load(const KernelImage& image) override;
  Status fill(const Fill32& fill, Stream stream) noexcept override;
  Status launch(const LoadedKernel& kernel, const LaunchConfig& config, kernels::KernelArgs& args,
                Stream stream) noexcept override;

 private:
  std::uint64_t max_panel_bytes_;
};

}  // namespace fusedgemm::runtime
