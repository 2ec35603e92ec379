// The fp32 formulas of the host device: each pointwise op and each reduction's combine
// step, as the generated kernels evaluate them (kernels/pointwise.cuh, codegen). The host
// device's interpreter and the fallback engine's host runner share them.
#pragma once

#include "fusedgemm/ops.h"

namespace fusedgemm::runtime {

// The op of `pw` on in[0..arity): fp32, the libm functions of <cmath>.
float apply(const PointwiseAttributes& pw, const float* in);

// One reduction step: acc combined with the point v (avg adds v * inv_count, norm2 adds
// v * v; its square root is the finish, not a step). max and min are fmax and fmin.
float combine(ReductionMode mode, float acc, float v, float inv_count);

// The value a reduction starts from.
float reduction_identity(ReductionMode mode);

}  // namespace fusedgemm::runtime
