// CudaDevice: the Device of one CUDA GPU, driven through the CUDA driver API.
//
// The driver is loaded at run time (dlopen "libcuda.so.1"), never linked, so the library and
// the tool start on machines without one; make_cuda_device then fails with kUnavailable. Every
// entry point is resolved once, at creation, with cuGetProcAddress at one fixed ABI version
// (kDriverAbiVersion in cuda_driver.cpp) into a table the device owns: a newer driver keeps
// serving the signatures this file was written against, and no call pays for a lookup.
//
// Context policy. Work runs in the device's primary context (the one the CUDA runtime uses),
// retained for as long as the device or any kernel it loaded lives. current_ordinal() is the
// device of the calling thread's current context, with one addition: a thread with NO current
// context gets the primary context made current and reports ordinal(). Why: the execute path
// checks the device_current rule on every call, and a worker thread that never touched CUDA
// should run a plan the way the runtime API would (it binds the primary context implicitly),
// rather than be refused. A thread that chose a context stays untouched: another device's
// context is reported as that device and the rule refuses the call. The common case costs one
// thread-local read (cuCtxGetCurrent) and a pointer compare; the binding happens once per
// thread. fill() and launch() use the calling thread's current context, which the rule check
// has just bound. A non-primary context of this same device passes the rule; its launch then
// fails with the driver's error, naming the call (modules belong to the primary context).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"
#include "runtime/device.h"

namespace fusedgemm::runtime {

// The driver table and the retained primary context of one device (cuda_context.h).
// Shared by the device and every kernel it loaded, so a kernel that outlives its device can
// still unload its module in the right context.
struct CudaContext;

class CudaDevice final : public Device {
 public:
  CudaDevice(std::shared_ptr<const CudaContext> context, std::string name, int sm_count);

  // "cuda:<ordinal> <device name>", read once at creation.
  std::string_view name() const noexcept override { return name_; }
  bool is_host() const noexcept override { return false; }
  int ordinal() const noexcept override;
  // See the context policy above: may make the primary context current on this thread.
  int current_ordinal() const noexcept override;
  int driver_version() const noexcept override;
  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, read once at creation.
  int multiprocessor_count() const noexcept override { return sm_count_; }

  // Loads image.cubin (a cubin, or NUL-terminated PTX the driver compiles) into the primary
  // context, sets image.max_shared_bytes as the kernel's dynamic shared memory limit and reads
  // its residency (cuOccupancyMaxActiveClusters at the image's block and cluster; where the
  // driver cannot answer, one cluster per cluster_ctas multiprocessors).
  Result<std::shared_ptr<const LoadedKernel>> load(const KernelImage& image) override;
  // 32-bit fill on `stream` (a CUstream; nullptr is the legacy default stream). An empty fill
  // (no words or no rows) does nothing.
  Status fill(const Fill32& fill, Stream stream) noexcept override;
  // cuLaunchKernelEx with `args` as the kernel's only parameter, by value; a cluster of more
  // than one CTA adds the cluster-dimension attribute, a dependent launch the programmatic
  // stream serialization attribute. Allocates nothing unless it fails.
  Status launch(const LoadedKernel& kernel, const LaunchConfig& config, kernels::KernelArgs& args,
                Stream stream) noexcept override;
  // Encodes the kernel's TMA descriptors into args.tma.
  Status prepare(const LoadedKernel& kernel, kernels::KernelArgs& args) noexcept override;
  // cuLaunchKernelEx with the descriptors prepare() encoded.
  Status launch_prepared(const LoadedKernel& kernel, const LaunchConfig& config,
                         const kernels::KernelArgs& args, Stream stream) noexcept override;

  const CudaContext& context() const noexcept { return *context_; }

 private:
  std::shared_ptr<const CudaContext> context_;
  std::string name_;
  int sm_count_ = 0;
};

// make_cuda_device with the driver taken from `library_path` instead of the system's
// libcuda.so.1. For tests of the missing- and stub-driver paths: each call dlopens again and
// never closes the handle (unloading a driver that may hold contexts is unsafe).
Result<std::shared_ptr<Device>> make_cuda_device_from_library(const char* library_path,
                                                              int ordinal);

// Test-only access to device memory through the device's own driver table, so GPU tests need
// not link libcuda. Each call makes the primary context current for its duration and fails
// with kInvalidArgument when `device` is not a CudaDevice.
namespace cuda_test {

Result<void*> allocate(const Device& device, std::size_t bytes);
Status release(const Device& device, void* data);
Status copy_to_device(const Device& device, void* device_data, const void* host_data,
                      std::size_t bytes);
Status copy_to_host(const Device& device, void* host_data, const void* device_data,
                    std::size_t bytes);
// Waits for all work in the primary context.
Status synchronize(const Device& device);
// The CUfunction of a kernel a CUDA device loaded (null otherwise), so a benchmark can
// launch it raw beside execute.
void* function_of(const LoadedKernel& kernel);

}  // namespace cuda_test

}  // namespace fusedgemm::runtime
