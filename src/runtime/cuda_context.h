// The primary context of one CUDA device, and a scope that makes it current. The context is
// retained when the device is created (cuda_device.cpp) and released here when its last
// holder (the device, or a kernel it loaded) goes.
#pragma once

#include <string>

#include "fusedgemm/status.h"
#include "runtime/cuda_driver.h"

namespace fusedgemm::runtime {

// The driver table and one retained primary context; immutable once created.
struct CudaContext {
  // Takes over one reference to `retained_primary`, released when the last holder goes.
  CudaContext(const DriverApi& driver, CUdevice cu_device, int device_ordinal,
              CUcontext retained_primary)
      : api(driver), device(cu_device), ordinal(device_ordinal), primary(retained_primary) {}
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext() {
    // A failed release has no one to report to; the process is usually exiting.
    (void)api.primary_ctx_release(device);
  }

  const DriverApi api;
  const CUdevice device;
  const int ordinal;
  const CUcontext primary;
};

// Makes the primary context current for one scope (load, unload, the test helpers), then
// restores whatever the thread had.
class ScopedContext {
 public:
  explicit ScopedContext(const CudaContext& context)
      : context_(context), result_(context.api.ctx_push_current(context.primary)) {}
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  ~ScopedContext() {
    CUcontext popped = nullptr;
    if (result_ == CUDA_SUCCESS) (void)context_.api.ctx_pop_current(&popped);
  }

  bool ok() const { return result_ == CUDA_SUCCESS; }
  Status status() const {
    if (ok()) return Status::ok();
    return driver_error(context_.api, "cuCtxPushCurrent", result_,
                        "primary context of device " + std::to_string(context_.ordinal));
  }

 private:
  const CudaContext& context_;
  CUresult result_;
};

}  // namespace fusedgemm::runtime
