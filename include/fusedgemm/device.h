// Where plans run: a CUDA device (driver API), or the host device, which treats host
// memory as device memory and runs a launch by interpreting the fusion program. The host
// device lets the whole execute path run without a GPU (CI, the tool's fallback).
#pragma once

#include <memory>

#include "fusedgemm/status.h"

namespace fusedgemm {

namespace runtime {
class Device;
}
using runtime::Device;

// The host device: buffers are host pointers, streams are ignored, launches run on the
// calling thread.
std::shared_ptr<Device> make_host_device();

// The CUDA device `ordinal`, through the driver API; fails with a clear error when the
// driver or the device is missing.
Result<std::shared_ptr<Device>> make_cuda_device(int ordinal = 0);

// A device that builds fused plans exactly as a GPU of `multiprocessor_count` SMs would —
// the same tile choice and kernels, compiled into the Context's cache — and runs nothing:
// for warming a kernel cache on a machine without a GPU (the key holds no driver).
std::shared_ptr<Device> make_compile_only_device(int multiprocessor_count);

// CUDA device 0 when one is present, else the host device.
std::shared_ptr<Device> default_device();

}  // namespace fusedgemm
