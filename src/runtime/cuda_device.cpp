#include "runtime/cuda_device.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <utility>

#include "runtime/cuda_context.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_tma.h"

namespace fusedgemm {
namespace runtime {
namespace {

// Owns one module in the primary context. Holds the context, so a kernel that outlives its
// device still unloads where it was loaded.
class CudaKernel final : public LoadedKernel {
 public:
  CudaKernel(std::shared_ptr<const CudaContext> context, CUmodule module)
      : context_(std::move(context)), module_(module) {}
  void set_resident_ctas(unsigned ctas) { resident_ctas_ = ctas; }
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;
  ~CudaKernel() override {
    // Unload errors have no one to report to; at worst the module dies with the context.
    ScopedContext scope(*context_);
    if (scope.ok()) (void)context_->api.module_unload(module_);
  }

  const CudaContext& context() const { return *context_; }

  CUfunction function = nullptr;
  unsigned max_shared_bytes = 0;
  std::vector<TmaPlan> tma;

 private:
  std::shared_ptr<const CudaContext> context_;
  CUmodule module_;
};

// The CTAs of `function` the device keeps resident at once: the clusters the driver says fit,
// times their size; one cluster per cluster_ctas multiprocessors where it cannot say.
unsigned resident_ctas(const DriverApi& api, CUfunction function, const KernelImage& image,
                       int sm_count) {
  const unsigned cluster = std::max(1u, image.cluster_ctas);
  const unsigned fallback =
      std::max(1u, static_cast<unsigned>(std::max(sm_count, 0)) / cluster) * cluster;
  if (image.block_threads == 0) return fallback;
  CUlaunchConfig config{};
  config.gridDimX = cluster;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = image.block_threads;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = image.max_shared_bytes;
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = cluster;
  attribute.value.clusterDim.y = 1;
  attribute.value.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  if (api.occupancy_max_active_clusters(&clusters, function, &config) != CUDA_SUCCESS ||
      clusters <= 0) {
    return fallback;
  }
  return static_cast<unsigned>(clusters) * cluster;
}

CUdeviceptr device_pointer(const void* data) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(data));
}

// Failures that mean "no usable GPU here" rather than "a call went wrong".
ErrorCode opening_error_code(CUresult result) {
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return ErrorCode::kUnavailable;
    default: return ErrorCode::kDriver;
  }
}

Result<std::shared_ptr<Device>> open_device(const DriverLibrary& library, int ordinal) {
  FG_CHECK(library.handle != nullptr, ErrorCode::kUnavailable,
           "CUDA driver not found: " + library.error);
  DriverApi api;
  FG_TRY(bootstrap(library.handle, api));
  // Any cuInit failure (no device, the stub library, a driver/kernel-module mismatch) means
  // the GPU cannot be used from this process.
  if (const CUresult r = api.init(0); r != CUDA_SUCCESS) {
    return driver_error(api, "cuInit", r, {}, ErrorCode::kUnavailable);
  }
  int count = 0;
  if (const CUresult r = api.device_get_count(&count); r != CUDA_SUCCESS) {
    return driver_error(api, "cuDeviceGetCount", r, {}, ErrorCode::kUnavailable);
  }
  FG_CHECK(count > 0, ErrorCode::kUnavailable, "cuDeviceGetCount reports no CUDA device");
  FG_CHECK(ordinal >= 0 && ordinal < count, ErrorCode::kUnavailable,
           "ordinal " + std::to_string(ordinal) + " is out of range: cuDeviceGetCount reports " +
               std::to_string(count) + " device(s), legal ordinals are 0 to " +
               std::to_string(count - 1));
  CUdevice device = 0;
  if (const CUresult r = api.device_get(&device, ordinal); r != CUDA_SUCCESS) {
    return driver_error(api, "cuDeviceGet", r, {}, opening_error_code(r));
  }
  char device_name[256] = {};
  if (const CUresult r = api.device_get_name(device_name, sizeof(device_name) - 1, device);
      r != CUDA_SUCCESS) {
    return driver_error(api, "cuDeviceGetName", r, {}, opening_error_code(r));
  }
  int sm_count = 0;
  if (const CUresult r =
          api.device_get_attribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
      r != CUDA_SUCCESS) {
    return driver_error(api, "cuDeviceGetAttribute", r, "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
                        opening_error_code(r));
  }
  CUcontext primary = nullptr;
  if (const CUresult r = api.primary_ctx_retain(&primary, device); r != CUDA_SUCCESS) {
    return driver_error(api, "cuDevicePrimaryCtxRetain", r, {}, opening_error_code(r));
  }
  auto context = std::make_shared<const CudaContext>(api, device, ordinal, primary);
  std::string name = "cuda:" + std::to_string(ordinal) + " " + device_name;
  return std::shared_ptr<Device>(
      std::make_shared<CudaDevice>(std::move(context), std::move(name), sm_count));
}

// Every failure of make_cuda_device names the ordinal it was asked for.
Result<std::shared_ptr<Device>> name_ordinal(Result<std::shared_ptr<Device>> result, int ordinal) {
  if (result) return result;
  const Status status = result.status();
  return Status(status.code(), "CUDA device " + std::to_string(ordinal) + ": " + status.message());
}

}  // namespace

CudaDevice::CudaDevice(std::shared_ptr<const CudaContext> context, std::string name, int sm_count)
    : context_(std::move(context)), name_(std::move(name)), sm_count_(sm_count) {}

int CudaDevice::ordinal() const noexcept {
  return context_->ordinal;
}

int CudaDevice::driver_version() const noexcept {
  int version = 0;
  return context_->api.driver_get_version(&version) == CUDA_SUCCESS ? version : 0;
}

int CudaDevice::current_ordinal() const noexcept {
  // The why of this policy is in the header. Driver failures read as "no device" (-1), which
  // the device_current rule then refuses with the numbers.
  const CudaContext& context = *context_;
  CUcontext current = nullptr;
  if (context.api.ctx_get_current(&current) != CUDA_SUCCESS) return -1;
  if (current == context.primary) return context.ordinal;
  if (current == nullptr) {
    if (context.api.ctx_set_current(context.primary) != CUDA_SUCCESS) return -1;
    return context.ordinal;
  }
  CUdevice device = 0;
  if (context.api.ctx_get_device(&device) != CUDA_SUCCESS) return -1;
  // cuDeviceGet hands out the ordinal as the CUdevice, so another device reads as its ordinal.
  return device == context.device ? context.ordinal : static_cast<int>(device);
}

Result<std::shared_ptr<const LoadedKernel>> CudaDevice::load(const KernelImage& image) {
  const CudaContext& context = *context_;
  FG_CHECK(!image.cubin.empty(), ErrorCode::kInvalidArgument,
           "load: kernel image '" + image.entry + "' has no cubin");
  FG_CHECK(image.max_shared_bytes <= static_cast<unsigned>(INT_MAX), ErrorCode::kInvalidArgument,
           "load: kernel image '" + image.entry + "' asks for max_shared_bytes " +
               std::to_string(image.max_shared_bytes));
  ScopedContext scope(context);
  FG_TRY(scope.status());
  CUmodule module = nullptr;
  if (const CUresult r = context.api.module_load_data(&module, image.cubin.data());
      r != CUDA_SUCCESS) {
    return driver_error(
        context.api, "cuModuleLoadData", r,
        "kernel '" + image.entry + "', " + std::to_string(image.cubin.size()) + "-byte image");
  }
  // Owns the module from here, so every later failure unloads it.
  auto kernel = std::make_shared<CudaKernel>(context_, module);
  if (const CUresult r =
          context.api.module_get_function(&kernel->function, module, image.entry.c_str());
      r != CUDA_SUCCESS) {
    return driver_error(context.api, "cuModuleGetFunction", r, "entry '" + image.entry + "'");
  }
  // Set here, once: the kernel's limit is a property of the function, and setting it per
  // launch would put an attribute call on the hot path.
  if (image.max_shared_bytes > 0) {
    if (const CUresult r = context.api.func_set_attribute(
            kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(image.max_shared_bytes));
        r != CUDA_SUCCESS) {
      return driver_error(context.api, "cuFuncSetAttribute", r,
                          "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = " +
                              std::to_string(image.max_shared_bytes) + " for kernel '" +
                              image.entry + "'");
    }
  }
  kernel->max_shared_bytes = image.max_shared_bytes;
  kernel->tma = image.tma;
  kernel->set_resident_ctas(resident_ctas(context.api, kernel->function, image, sm_count_));
  return std::shared_ptr<const LoadedKernel>(std::move(kernel));
}

Status CudaDevice::fill(const Fill32& fill, Stream stream) noexcept {
  if (fill.width_words == 0 || fill.height == 0) return Status::ok();
  const DriverApi& api = context_->api;
  const auto cu_stream = static_cast<CUstream>(stream);
  if (fill.height == 1) {
    const CUresult r = api.memset_d32_async(device_pointer(fill.data), fill.word,
                                            static_cast<std::size_t>(fill.width_words), cu_stream);
    if (r != CUDA_SUCCESS) return driver_error(api, "cuMemsetD32Async", r);
    return Status::ok();
  }
  const CUresult r = api.memset_d2d32_async(
      device_pointer(fill.data), static_cast<std::size_t>(fill.pitch_bytes), fill.word,
      static_cast<std::size_t>(fill.width_words), static_cast<std::size_t>(fill.height), cu_stream);
  if (r != CUDA_SUCCESS) return driver_error(api, "cuMemsetD2D32Async", r);
  return Status::ok();
}

Status CudaDevice::prepare(const LoadedKernel& kernel, kernels::KernelArgs& args) noexcept {
  if (typeid(kernel) != typeid(CudaKernel)) {
    return Status(ErrorCode::kInvalidArgument,
                  "prepare: the kernel was not loaded by a CUDA device");
  }
  args.tma_tiles = 0;
  for (const TmaPlan& plan : static_cast<const CudaKernel&>(kernel).tma) {
    FG_TRY(encode_tma(context_->api, plan, args));
  }
  return Status::ok();
}

Status CudaDevice::launch(const LoadedKernel& kernel, const LaunchConfig& config,
                          kernels::KernelArgs& args, Stream stream) noexcept {
  FG_TRY(prepare(kernel, args));
  return launch_prepared(kernel, config, args, stream);
}

Status CudaDevice::launch_prepared(const LoadedKernel& kernel, const LaunchConfig& config,
                                   const kernels::KernelArgs& args, Stream stream) noexcept {
  // A typeid compare, not dynamic_cast: one vtable read on the hot path.
  if (typeid(kernel) != typeid(CudaKernel)) {
    return Status(ErrorCode::kInvalidArgument,
                  "launch: the kernel was not loaded by a CUDA device");
  }
  const auto& cuda_kernel = static_cast<const CudaKernel&>(kernel);
  const CudaContext& context = *context_;
  if (cuda_kernel.context().primary != context.primary) {
    return Status(ErrorCode::kInvalidArgument, "launch: the kernel was loaded on CUDA device " +
                                                   std::to_string(cuda_kernel.context().ordinal) +
                                                   ", not on device " +
                                                   std::to_string(context.ordinal));
  }
  if (cuda_kernel.max_shared_bytes > 0 && config.shared_bytes > cuda_kernel.max_shared_bytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "launch: shared_bytes " + std::to_string(config.shared_bytes) +
                      " exceeds the kernel's max_shared_bytes " +
                      std::to_string(cuda_kernel.max_shared_bytes) + " set at load");
  }
  CUlaunchConfig launch_config{};
  launch_config.gridDimX = config.grid[0];
  launch_config.gridDimY = config.grid[1];
  launch_config.gridDimZ = config.grid[2];
  launch_config.blockDimX = config.block[0];
  launch_config.blockDimY = config.block[1];
  launch_config.blockDimZ = config.block[2];
  launch_config.sharedMemBytes = config.shared_bytes;
  launch_config.hStream = static_cast<CUstream>(stream);
  CUlaunchAttribute attributes[2]{};
  unsigned count = 0;
  if (config.cluster[0] * config.cluster[1] * config.cluster[2] > 1) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[count].value.clusterDim.x = config.cluster[0];
    attributes[count].value.clusterDim.y = config.cluster[1];
    attributes[count].value.clusterDim.z = config.cluster[2];
    ++count;
  }
  if (config.dependent_launch) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[count].value.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  launch_config.attrs = count > 0 ? attributes : nullptr;
  launch_config.numAttrs = count;
  // The kernel's one parameter is KernelArgs by value; the driver copies it at launch, so
  // pointing into the caller's args is safe and nothing is allocated.
  void* params[] = {const_cast<kernels::KernelArgs*>(&args)};
  const CUresult r =
      context.api.launch_kernel_ex(&launch_config, cuda_kernel.function, params, nullptr);
  if (r != CUDA_SUCCESS) return driver_error(context.api, "cuLaunchKernelEx", r);
  return Status::ok();
}

Result<std::shared_ptr<Device>> make_cuda_device_from_library(const char* library_path,
                                                              int ordinal) {
  return name_ordinal(open_device(open_library(library_path), ordinal), ordinal);
}

namespace cuda_test {
namespace {

// Runs `call` (one driver call) with the primary context of `device` current.
template <class Call>
Status in_primary_context(const Device& device, std::string_view call_name, Call call) {
  const auto* cuda_device = dynamic_cast<const CudaDevice*>(&device);
  FG_CHECK(cuda_device != nullptr, ErrorCode::kInvalidArgument,
           "cuda_test: '" + std::string(device.name()) + "' is not a CUDA device");
  const CudaContext& context = cuda_device->context();
  ScopedContext scope(context);
  FG_TRY(scope.status());
  if (const CUresult r = call(context.api); r != CUDA_SUCCESS) {
    return driver_error(context.api, call_name, r);
  }
  return Status::ok();
}

}  // namespace

Result<void*> allocate(const Device& device, std::size_t bytes) {
  CUdeviceptr data = 0;
  FG_TRY(in_primary_context(device, "cuMemAlloc",
                            [&](const DriverApi& api) { return api.mem_alloc(&data, bytes); }));
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(data));
}

Status release(const Device& device, void* data) {
  return in_primary_context(device, "cuMemFree", [&](const DriverApi& api) {
    return api.mem_free(device_pointer(data));
  });
}

Status copy_to_device(const Device& device, void* device_data, const void* host_data,
                      std::size_t bytes) {
  return in_primary_context(device, "cuMemcpyHtoD", [&](const DriverApi& api) {
    return api.memcpy_htod(device_pointer(device_data), host_data, bytes);
  });
}

Status copy_to_host(const Device& device, void* host_data, const void* device_data,
                    std::size_t bytes) {
  return in_primary_context(device, "cuMemcpyDtoH", [&](const DriverApi& api) {
    return api.memcpy_dtoh(host_data, device_pointer(device_data), bytes);
  });
}

void* function_of(const LoadedKernel& kernel) {
  if (typeid(kernel) != typeid(CudaKernel)) return nullptr;
  return static_cast<const CudaKernel&>(kernel).function;
}

Status synchronize(const Device& device) {
  return in_primary_context(device, "cuCtxSynchronize",
                            [](const DriverApi& api) { return api.ctx_synchronize(); });
}

}  // namespace cuda_test
}  // namespace runtime

Result<std::shared_ptr<Device>> make_cuda_device(int ordinal) {
  return runtime::name_ordinal(runtime::open_device(runtime::system_driver(), ordinal), ordinal);
}

}  // namespace fusedgemm
