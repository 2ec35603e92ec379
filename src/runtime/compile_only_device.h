// A device that builds fused plans as a GPU of a given multiprocessor count would (the same
// tile choice, the same generated kernels, compiled through the Context's cache) and runs
// nothing: every fill and launch returns at once. For warming a kernel cache on a machine
// without a GPU: the cache key holds no driver, so the GPU machine then hits what it left.
#pragma once

#include "runtime/device.h"

namespace fusedgemm::runtime {

class CompileOnlyDevice final : public Device {
 public:
  explicit CompileOnlyDevice(int multiprocessor_count) : sm_count_(multiprocessor_count) {}
  std::string_view name() const noexcept override { return "compile-only"; }
  bool is_host() const noexcept override { return false; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 0; }
  int multiprocessor_count() const noexcept override { return sm_count_; }
  Result<std::shared_ptr<const LoadedKernel>> load(const KernelImage& image) override;
  Status fill(const Fill32&, Stream) noexcept override { return Status::ok(); }
  Status launch(const LoadedKernel&, const LaunchConfig&, kernels::KernelArgs&,
                Stream) noexcept override {
    return Status::ok();
  }

 private:
  int sm_count_;
};

}  // namespace fusedgemm::runtime
