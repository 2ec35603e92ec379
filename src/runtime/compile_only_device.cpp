#include "runtime/compile_only_device.h"

namespace fusedgemm {
namespace runtime {
namespace {

struct NothingLoaded final : LoadedKernel {};

}  // namespace

Result<std::shared_ptr<const LoadedKernel>> CompileOnlyDevice::load(const KernelImage& image) {
  FG_CHECK(!image.cubin.empty(), ErrorCode::kInvalidArgument,
           "load: kernel image '" + image.entry + "' has no cubin");
  return std::shared_ptr<const LoadedKernel>(std::make_shared<NothingLoaded>());
}

}  // namespace runtime

std::shared_ptr<Device> make_compile_only_device(int multiprocessor_count) {
  return std::make_shared<runtime::CompileOnlyDevice>(multiprocessor_count);
}

}  // namespace fusedgemm
