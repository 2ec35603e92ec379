#include "support/cuda_graph.h"

#include <cudaTypedefs.h>  // PFN_cu*_v<N>
#include <dlfcn.h>         // dlsym

#include <string>

#include "runtime/cuda_context.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_driver.h"

namespace fusedgemm::test {

// The calls the runtime's DriverApi does not carry (the library never creates a stream or
// a graph), next to the device's own table for naming errors.
struct CudaGraphStream::Api {
  runtime::DriverApi driver;
  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuStreamBeginCapture_v10010 stream_begin_capture = nullptr;
  PFN_cuStreamEndCapture_v10000 stream_end_capture = nullptr;
  PFN_cuGraphGetNodes_v10000 graph_get_nodes = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 graph_instantiate = nullptr;
  PFN_cuGraphLaunch_v10000 graph_launch = nullptr;
  PFN_cuGraphExecDestroy_v10000 graph_exec_destroy = nullptr;
  PFN_cuGraphDestroy_v10000 graph_destroy = nullptr;
};

namespace {

// As cuda_driver.cpp resolves its table: the variant current at CUDA 12.0, legacy stream 0.
template <class Fn>
Status resolve(const runtime::DriverApi& api, PFN_cuGetProcAddress_v12000 get_proc_address,
               const char* symbol, Fn& fn) {
  void* address = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult r =
      get_proc_address(symbol, &address, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
  const std::string call = std::string("cuGetProcAddress(\"") + symbol + "\", 12000)";
  if (r != CUDA_SUCCESS) return runtime::driver_error(api, call, r, {}, ErrorCode::kUnavailable);
  FG_CHECK(found == CU_GET_PROC_ADDRESS_SUCCESS && address != nullptr, ErrorCode::kUnavailable,
           call + " found no entry point");
  fn = reinterpret_cast<Fn>(address);
  return Status::ok();
}

Status check(const runtime::DriverApi& api, const char* call, CUresult r) {
  if (r == CUDA_SUCCESS) return Status::ok();
  return runtime::driver_error(api, call, r);
}

}  // namespace

Result<std::unique_ptr<CudaGraphStream>> CudaGraphStream::create(const runtime::Device& device) {
  const auto* cuda = dynamic_cast<const runtime::CudaDevice*>(&device);
  FG_CHECK(cuda != nullptr, ErrorCode::kInvalidArgument,
           "CudaGraphStream: '" + std::string(device.name()) + "' is not a CUDA device");
  const runtime::CudaContext& context = cuda->context();
  void* library = runtime::system_driver().handle;
  FG_CHECK(library != nullptr, ErrorCode::kUnavailable, runtime::system_driver().error);
  const auto gpa =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  FG_CHECK(gpa != nullptr, ErrorCode::kUnavailable, "the CUDA driver has no cuGetProcAddress_v2");
  auto api = std::make_shared<Api>();
  api->driver = context.api;
  FG_TRY(resolve(context.api, gpa, "cuStreamCreate", api->stream_create));
  FG_TRY(resolve(context.api, gpa, "cuStreamDestroy", api->stream_destroy));
  FG_TRY(resolve(context.api, gpa, "cuStreamSynchronize", api->stream_synchronize));
  FG_TRY(resolve(context.api, gpa, "cuStreamBeginCapture", api->stream_begin_capture));
  FG_TRY(resolve(context.api, gpa, "cuStreamEndCapture", api->stream_end_capture));
  FG_TRY(resolve(context.api, gpa, "cuGraphGetNodes", api->graph_get_nodes));
  FG_TRY(resolve(context.api, gpa, "cuGraphInstantiateWithFlags", api->graph_instantiate));
  FG_TRY(resolve(context.api, gpa, "cuGraphLaunch", api->graph_launch));
  FG_TRY(resolve(context.api, gpa, "cuGraphExecDestroy", api->graph_exec_destroy));
  FG_TRY(resolve(context.api, gpa, "cuGraphDestroy", api->graph_destroy));
  FG_TRY(check(context.api, "cuCtxSetCurrent", context.api.ctx_set_current(context.primary)));
  std::unique_ptr<CudaGraphStream> out(new CudaGraphStream(std::move(api)));
  FG_TRY(check(out->api_->driver, "cuStreamCreate",
               out->api_->stream_create(&out->stream_, CU_STREAM_DEFAULT)));
  return out;
}

CudaGraphStream::~CudaGraphStream() {
  // Failures here have no one to report to; the test has already judged what ran.
  if (exec_ != nullptr) (void)api_->graph_exec_destroy(exec_);
  if (graph_ != nullptr) (void)api_->graph_destroy(graph_);
  if (stream_ != nullptr) (void)api_->stream_destroy(stream_);
}

Status CudaGraphStream::begin_capture() {
  return check(api_->driver, "cuStreamBeginCapture",
               api_->stream_begin_capture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

Result<std::size_t> CudaGraphStream::end_capture() {
  FG_TRY(check(api_->driver, "cuStreamEndCapture", api_->stream_end_capture(stream_, &graph_)));
  std::size_t nodes = 0;
  FG_TRY(check(api_->driver, "cuGraphGetNodes", api_->graph_get_nodes(graph_, nullptr, &nodes)));
  FG_TRY(check(api_->driver, "cuGraphInstantiateWithFlags",
               api_->graph_instantiate(&exec_, graph_, 0)));
  return nodes;
}

Status CudaGraphStream::replay() {
  FG_CHECK(exec_ != nullptr, ErrorCode::kInvalidArgument,
           "CudaGraphStream::replay: no graph captured");
  FG_TRY(check(api_->driver, "cuGraphLaunch", api_->graph_launch(exec_, stream_)));
  return synchronize();
}

Status CudaGraphStream::synchronize() {
  return check(api_->driver, "cuStreamSynchronize", api_->stream_synchronize(stream_));
}

}  // namespace fusedgemm::test
