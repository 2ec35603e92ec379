#include "runtime/cuda_driver.h"

#include <dlfcn.h>  // dlopen, dlsym, dlerror

#include <string>
#include <utility>

namespace fusedgemm::runtime {
namespace {

// Every entry point is requested for CUDA 12.0. cuGetProcAddress then returns the newest
// variant introduced at or before 12.0, whose signature is the PFN_*_v<N> named in DriverApi,
// whatever newer variants a later driver adds (13.0 added cuCtxGetDevice_v2 and
// cuCtxSynchronize_v2 with other signatures). 12.0 is also the oldest driver that knows
// sm_90a, which every fusedgemm kernel targets.
constexpr int kDriverAbiVersion = 12000;

// "CUDA_ERROR_INVALID_VALUE (invalid argument)". The stub libcuda that toolkits ship for
// linking answers every call, cuGetErrorName included, with CUDA_ERROR_STUB_LIBRARY, so that
// one name is known here as well.
std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name != nullptr) (void)api.get_error_name(result, &name);
  if (api.get_error_string != nullptr) (void)api.get_error_string(result, &text);
  std::string out;
  if (name != nullptr) {
    out = name;
  } else if (result == CUDA_ERROR_STUB_LIBRARY) {
    out = "CUDA_ERROR_STUB_LIBRARY";
  } else {
    out = "CUresult " + std::to_string(static_cast<int>(result));
  }
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

template <class Fn>
Status resolve(const DriverApi& api, PFN_cuGetProcAddress_v12000 get_proc_address,
               const char* symbol, Fn& fn) {
  void* address = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  // LEGACY_STREAM: stream 0 means the legacy default stream, as for a program that links
  // libcuda without CUDA_API_PER_THREAD_DEFAULT_STREAM.
  const CUresult result = get_proc_address(symbol, &address, kDriverAbiVersion,
                                           CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
  const std::string call = std::string("cuGetProcAddress(\"") + symbol + "\", " +
                           std::to_string(kDriverAbiVersion) + ")";
  if (result != CUDA_SUCCESS) {
    return driver_error(api, call, result, {}, ErrorCode::kUnavailable);
  }
  FG_CHECK(found == CU_GET_PROC_ADDRESS_SUCCESS && address != nullptr, ErrorCode::kUnavailable,
           call + " found no entry point (query result " + std::to_string(static_cast<int>(found)) +
               "); the driver lacks a call fusedgemm needs");
  fn = reinterpret_cast<Fn>(address);
  return Status::ok();
}

}  // namespace

Status driver_error(const DriverApi& api, std::string_view call, CUresult result,
                    std::string_view context, ErrorCode code) {
  std::string message = std::string(call) + " failed: " + describe(api, result);
  if (!context.empty()) message += std::string("; ") + std::string(context);
  return Status(code, std::move(message));
}

Status bootstrap(void* library, DriverApi& api) {
  const auto get_proc_address =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  api.get_error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(dlsym(library, "cuGetErrorName"));
  api.get_error_string =
      reinterpret_cast<PFN_cuGetErrorString_v6000>(dlsym(library, "cuGetErrorString"));
  api.driver_get_version =
      reinterpret_cast<PFN_cuDriverGetVersion_v2020>(dlsym(library, "cuDriverGetVersion"));
  FG_CHECK(get_proc_address != nullptr && api.driver_get_version != nullptr,
           ErrorCode::kUnavailable,
           "the CUDA driver has no cuGetProcAddress_v2 or cuDriverGetVersion; CUDA 12.0 or "
           "newer is needed");
  int version = 0;
  if (const CUresult r = api.driver_get_version(&version); r != CUDA_SUCCESS) {
    return driver_error(api, "cuDriverGetVersion", r, {}, ErrorCode::kUnavailable);
  }
  FG_CHECK(version >= kDriverAbiVersion, ErrorCode::kUnavailable,
           "the CUDA driver supports CUDA " + std::to_string(version / 1000) + "." +
               std::to_string(version % 1000 / 10) + "; CUDA 12.0 or newer is needed");
  const auto gpa = get_proc_address;
  FG_TRY(resolve(api, gpa, "cuInit", api.init));
  FG_TRY(resolve(api, gpa, "cuDeviceGetCount", api.device_get_count));
  FG_TRY(resolve(api, gpa, "cuDeviceGet", api.device_get));
  FG_TRY(resolve(api, gpa, "cuDeviceGetName", api.device_get_name));
  FG_TRY(resolve(api, gpa, "cuDeviceGetAttribute", api.device_get_attribute));
  FG_TRY(resolve(api, gpa, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain));
  FG_TRY(resolve(api, gpa, "cuDevicePrimaryCtxRelease", api.primary_ctx_release));
  FG_TRY(resolve(api, gpa, "cuCtxGetCurrent", api.ctx_get_current));
  FG_TRY(resolve(api, gpa, "cuCtxSetCurrent", api.ctx_set_current));
  FG_TRY(resolve(api, gpa, "cuCtxGetDevice", api.ctx_get_device));
  FG_TRY(resolve(api, gpa, "cuCtxPushCurrent", api.ctx_push_current));
  FG_TRY(resolve(api, gpa, "cuCtxPopCurrent", api.ctx_pop_current));
  FG_TRY(resolve(api, gpa, "cuCtxSynchronize", api.ctx_synchronize));
  FG_TRY(resolve(api, gpa, "cuModuleLoadData", api.module_load_data));
  FG_TRY(resolve(api, gpa, "cuModuleGetFunction", api.module_get_function));
  FG_TRY(resolve(api, gpa, "cuModuleUnload", api.module_unload));
  FG_TRY(resolve(api, gpa, "cuFuncSetAttribute", api.func_set_attribute));
  FG_TRY(resolve(api, gpa, "cuMemsetD32Async", api.memset_d32_async));
  FG_TRY(resolve(api, gpa, "cuMemsetD2D32Async", api.memset_d2d32_async));
  FG_TRY(resolve(api, gpa, "cuLaunchKernelEx", api.launch_kernel_ex));
  FG_TRY(resolve(api, gpa, "cuOccupancyMaxActiveClusters", api.occupancy_max_active_clusters));
  FG_TRY(resolve(api, gpa, "cuTensorMapEncodeTiled", api.tensor_map_encode_tiled));
  FG_TRY(resolve(api, gpa, "cuMemAlloc", api.mem_alloc));
  FG_TRY(resolve(api, gpa, "cuMemFree", api.mem_free));
  FG_TRY(resolve(api, gpa, "cuMemcpyHtoD", api.memcpy_htod));
  FG_TRY(resolve(api, gpa, "cuMemcpyDtoH", api.memcpy_dtoh));
  return Status::ok();
}

DriverLibrary open_library(const char* path) {
  DriverLibrary library;
  // RTLD_LOCAL keeps the driver's symbols out of the global namespace: nothing else in the
  // process binds to them through us.
  library.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library.handle == nullptr) {
    const char* reason = dlerror();
    library.error = std::string("dlopen(\"") + path +
                    "\") failed: " + (reason != nullptr ? reason : "unknown reason");
  }
  return library;
}

const DriverLibrary& system_driver() {
  static const DriverLibrary library = open_library("libcuda.so.1");
  return library;
}

}  // namespace fusedgemm::runtime
