// The global half of a TMA descriptor (dims and byte strides in TMA dimension order) for one
// operand of one call: the ONE computation that the tma_limits rule checks, the CUDA device
// encodes (runtime/cuda_tma.cpp) and the host device reads through (runtime/host_device.cpp),
// so a layout the GPU would misread is misread, or refused, on the host too.
#pragma once

#include <array>
#include <cstdint>

#include "fusedgemm/layout.h"

namespace fusedgemm::recipe {

// cuTensorMapEncodeTiled: globalDim[i] <= 2^32, globalStrides[i] < 2^40 bytes and a multiple
// of 16 (CUDA driver API, "Tensor Map Object Management").
inline constexpr std::int64_t kMaxTmaDim = std::int64_t{1} << 32;
inline constexpr std::int64_t kMaxTmaStrideBytes = (std::int64_t{1} << 40) - 1;

// Kernel axes in TMA dimension order, fastest (the unit-stride axis) first: (K, M or N,
// batch) for a K-major operand, (M or N, K, batch) otherwise.
constexpr std::array<int, 3> tma_axes(int contiguous_axis) {
  return contiguous_axis == 2 ? std::array<int, 3>{2, 1, 0} : std::array<int, 3>{1, 2, 0};
}

// A role's kernel layout as the kernel is given it (KernelArgs::buffers): an axis of extent 1
// carries stride 0, and a batch of stride 0 (a broadcast, e.g. PyTorch's expand of a batch-1
// weight) is extent 1, which the kernel reads at batch 0 for every batch.
Layout kernel_arg_layout(const Layout& kernel) noexcept;

enum class TmaFault : std::uint8_t {
  kNone,
  kZeroStride,      // stride 0 on a dimension of extent > 1 below the batch: not encodable
  kNegativeStride,  // TMA strides are unsigned
  kDimTooLarge,     // an extent past kMaxTmaDim
  kStrideTooLarge,  // a byte stride past kMaxTmaStrideBytes
};

struct TmaGlobal {
  std::array<std::int64_t, 3> dims{};          // globalDim, TMA order
  std::array<std::int64_t, 2> stride_bytes{};  // globalStrides of dims 1 and 2
  std::array<std::int64_t, 3> stride_elems{};  // of dims 0, 1, 2 (dim 0: 1), for the host
  TmaFault fault = TmaFault::kNone;
  int fault_dim = -1;  // the TMA dimension at fault
};

// The descriptor's dims and strides for a buffer of `arg` (kernel_arg_layout of the kernel
// layout) read along `axes` with elements of `element_bits`. A dimension of extent 1 gets the
// packed stride of the dimensions below it (any legal value: only coordinate 0 is read);
// every other stride is the buffer's own, never replaced.
TmaGlobal tma_global(const Layout& arg, const std::array<int, 3>& axes, int element_bits) noexcept;

// Whether a TMA store can write an output of `arg` (kernel_arg_layout, axes (b, M, N)) at
// `address` exactly as the call lays it out: N unit-stride, the address and every byte
// stride of the descriptor 16-byte multiples (cuTensorMapEncodeTiled's conditions), a row
// of N elements a 16-byte multiple too (the bytes after a row are never written), and
// tma_global without a fault. Where not, the epilogue stores directly: a choice per call,
// never a refusal.
bool tma_storable(const Layout& arg, std::uintptr_t address, int element_bits) noexcept;

}  // namespace fusedgemm::recipe
