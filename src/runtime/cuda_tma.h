// TMA descriptors: one per TMA-read operand of a kernel, encoded by the driver into the
// kernel arguments from the operand's TmaPlan and this call's address and layout.
#pragma once

#include "fusedgemm/status.h"
#include "kernels/kernel_args.h"
#include "runtime/cuda_driver.h"
#include "runtime/device.h"  // TmaPlan

namespace fusedgemm::runtime {

// One descriptor per TMA-read operand, encoded from this call's address and layout. The
// rules already guaranteed what the driver checks (16-byte base and strides, unit stride on
// the first axis), so a failure here names a broken invariant, not a user error. A store
// plan's descriptor is encoded, and its bit of args.tma_stores set, only where the output's
// layout lets TMA write it (recipe::tma_storable); the caller clears tma_stores first.
// Measured on the H200: ~0.05 us per encode (issue 4), cheaper than any cache keyed by
// address would be to check.
Status encode_tma(const DriverApi& api, const TmaPlan& plan, kernels::KernelArgs& args);

}  // namespace fusedgemm::runtime
