// The CUDA driver, loaded at run time: the library opened with dlopen, the table of entry
// points fusedgemm calls (resolved once, with cuGetProcAddress at one fixed ABI version), and
// the translation of a failed driver call into a Status. Never linked, so the library and the
// tool start on machines without a driver. Shared by the CUDA device (cuda_device.cpp), its
// primary context (cuda_context.h) and the TMA descriptors (cuda_tma.cpp).
#pragma once

#include <cuda.h>          // CUresult and the other driver types
#include <cudaTypedefs.h>  // PFN_cu*_v<N>: the signature of each versioned entry point

#include <string>
#include <string_view>

#include "fusedgemm/status.h"

namespace fusedgemm::runtime {

// The driver entry points fusedgemm calls. Filled once when a device is created and never
// changed after; the members are named after the call in snake_case because cuda.h turns
// several driver names into macros (cuMemAlloc -> cuMemAlloc_v2).
struct DriverApi {
  // Looked up by plain dlsym: their names and signatures are the same in every driver, and
  // they are needed before cuGetProcAddress can be trusted (to name its errors, and to check
  // the driver is new enough for the version cuGetProcAddress is asked for).
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  // Looked up by cuGetProcAddress at kDriverAbiVersion (cuda_driver.cpp).
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuCtxPushCurrent_v4000 ctx_push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctx_pop_current = nullptr;
  PFN_cuCtxSynchronize_v2000 ctx_synchronize = nullptr;
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuMemsetD32Async_v3020 memset_d32_async = nullptr;
  PFN_cuMemsetD2D32Async_v3020 memset_d2d32_async = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_kernel_ex = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 occupancy_max_active_clusters = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encode_tiled = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
};

// `<call> failed: <error name> (<error text>)[; <context>]`.
Status driver_error(const DriverApi& api, std::string_view call, CUresult result,
                    std::string_view context = {}, ErrorCode code = ErrorCode::kDriver);

// Fills `api` from an opened driver library; every failure is kUnavailable (the driver is
// there but cannot serve fusedgemm).
Status bootstrap(void* library, DriverApi& api);

struct DriverLibrary {
  void* handle = nullptr;
  std::string error;  // why dlopen failed, when handle is null
};

// dlopen of `path` (RTLD_NOW | RTLD_LOCAL); on failure the handle is null and `error` says why.
DriverLibrary open_library(const char* path);

// The system driver, opened on first use. A function-local static: initialized once and
// thread-safely, immutable afterwards, and never closed, because unloading libcuda while
// some context (ours or another library's) still lives is unsafe.
const DriverLibrary& system_driver();

}  // namespace fusedgemm::runtime
