// A CUDA stream of a CUDA device's primary context, and the driver calls that capture the
// work issued on it into a CUDA graph and replay that graph (tests/runtime/
// cuda_graph_gpu_test.cpp). Test-only. The entry points come from the driver the device
// loaded (runtime::system_driver(), cuGetProcAddress at CUDA 12.0 as cuda_driver.cpp asks
// for its own), so the tests still link no libcuda.
//
//   auto stream = CudaGraphStream::create(*device);      // primary context made current
//   ASSERT_TRUE(plan->execute(bound, ws, stream->stream()));  // direct, on the stream
//   ASSERT_TRUE(stream->begin_capture());
//   Status s = plan->execute(bound, ws, stream->stream());    // recorded, not run
//   auto nodes = stream->end_capture();                        // instantiated
//   ASSERT_TRUE(stream->replay());                              // cuGraphLaunch, then sync
#pragma once

#include <cuda.h>  // CUstream, CUgraph, CUgraphExec

#include <cstddef>
#include <memory>

#include "fusedgemm/status.h"
#include "runtime/device.h"

namespace fusedgemm::test {

class CudaGraphStream {
 public:
  // Resolves the stream and graph calls, makes the device's primary context current on the
  // calling thread (as the runtime API binds it, and as execute's device_current rule would)
  // and creates a blocking stream on it. kInvalidArgument when `device` is not a CUDA device
  // (the compile-only warming device, say); the driver's failures name the call.
  static Result<std::unique_ptr<CudaGraphStream>> create(const runtime::Device& device);

  CudaGraphStream(const CudaGraphStream&) = delete;
  CudaGraphStream& operator=(const CudaGraphStream&) = delete;
  // Destroys the graph's executable, the graph and the stream.
  ~CudaGraphStream();

  // The CUstream, as Plan::execute takes it.
  void* stream() const { return stream_; }

  // cuStreamBeginCapture in CU_STREAM_CAPTURE_MODE_GLOBAL: a call the driver deems unsafe
  // during capture, from any thread, fails the capture (PyTorch's default mode).
  Status begin_capture();
  // cuStreamEndCapture, then cuGraphInstantiateWithFlags; the number of nodes captured.
  // A capture that an unsafe call invalidated fails here, naming the call.
  Result<std::size_t> end_capture();
  // cuGraphLaunch of the instantiated graph on the stream, then cuStreamSynchronize.
  Status replay();
  // cuStreamSynchronize.
  Status synchronize();

  struct Api;

 private:
  explicit CudaGraphStream(std::shared_ptr<const Api> api) : api_(std::move(api)) {}

  std::shared_ptr<const Api> api_;
  CUstream stream_ = nullptr;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace fusedgemm::test
