#include "runtime/cuda_tma.h"

#include <cstdint>

#include <fmt/format.h>

#include "recipe/tma_global.h"

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
  Layout arg;
  for (int axis = 0; axis < kRank; ++axis) {
    arg.shape[axis] = b.shape[axis];
    arg.stride[axis] = b.stride[axis];
  }
  if (plan.tile_bit >= 0) {
    // A layout TMA cannot take is stored or loaded directly by the epilogue: its bit stays
    // clear.
    if (!recipe::tma_storable(arg, reinterpret_cast<std::uintptr_t>(b.data),
                              static_cast<int>(plan.element_bytes * 8))) {
      return Status::ok();
    }
  }
  const recipe::TmaGlobal g =
      recipe::tma_global(arg, plan.axes, static_cast<int>(plan.element_bytes * 8));
  // The call rules refuse every layout with a fault (stride_alignment, tma_limits).
  if (g.fault != recipe::TmaFault::kNone) {
    return Status(ErrorCode::kInternal,
                  fmt::format("cuTensorMapEncodeTiled: kernel parameter {}: TMA dimension {} of "
                              "{} cannot be encoded (fault {}); the call rules should have "
                              "refused it",
                              plan.param, g.fault_dim, to_string(arg), static_cast<int>(g.fault)));
  }
  cuuint64_t dims[3];
  cuuint64_t strides[2];
  cuuint32_t box[3];
  const cuuint32_t element_strides[3] = {1, 1, 1};
  for (int j = 0; j < 3; ++j) {
    dims[j] = static_cast<cuuint64_t>(g.dims[j]);
    box[j] = plan.box[j];
    if (j > 0) strides[j - 1] = static_cast<cuuint64_t>(g.stride_bytes[j - 1]);
  }
  const CUresult r = api.tensor_map_encode_tiled(
      reinterpret_cast<CUtensorMap*>(&args.tma[plan.slot]), tma_type_of(plan.element_bytes), 3,
      b.data, dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle_of(plan.swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return driver_error(api, "cuTensorMapEncodeTiled", r);
  if (plan.tile_bit >= 0) args.tma_tiles |= 1u << plan.tile_bit;
  return Status::ok();
}

}  // namespace fusedgemm::runtime
