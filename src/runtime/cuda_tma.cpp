#include "runtime/cuda_tma.h"

#include <cstdint>

namespace fusedgemm::runtime {
namespace {

CUtensorMapSwizzle swizzle_of(std::uint32_t bytes) {
  switch (bytes) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

CUtensorMapDataType tma_type_of(std::uint32_t element_bytes) {
  switch (element_bytes) {
    case 1: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case 4: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    default: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
  }
}

}  // namespace

Status encode_tma(const DriverApi& api, const TmaPlan& plan, kernels::KernelArgs& args) {
  const kernels::BufferArg& b = args.buffers[plan.param];
  cuuint64_t dims[3];
  cuuint64_t strides[2];
  cuuint32_t box[3];
  const cuuint32_t element_strides[3] = {1, 1, 1};
  std::uint64_t span_bytes = plan.element_bytes;
  for (int j = 0; j < 3; ++j) {
    const int axis = plan.axes[j];
    dims[j] = static_cast<cuuint64_t>(b.shape[axis]);
    box[j] = plan.box[j];
    if (j > 0) {
      // A broadcast axis (extent 1, stride 0) still needs a legal stride: the packed one.
      const std::uint64_t stride =
          b.stride[axis] != 0 ? static_cast<std::uint64_t>(b.stride[axis]) * plan.element_bytes
                              : span_bytes;
      strides[j - 1] = stride;
    }
    span_bytes = (j == 0 ? plan.element_bytes : strides[j - 1]) * dims[j];
  }
  const CUresult r = api.tensor_map_encode_tiled(
      reinterpret_cast<CUtensorMap*>(&args.tma[plan.slot]), tma_type_of(plan.element_bytes), 3,
      b.data, dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle_of(plan.swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return driver_error(api, "cuTensorMapEncodeTiled", r);
  return Status::ok();
}

}  // namespace fusedgemm::runtime
