// How host-side facts are spelled in generated device code: element types as
// fusedgemm::kernels::Elem, reduction modes as a TapCombine plus the value each point
// contributes. One table each, so the generator and the device headers cannot disagree
// on a name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fusedgemm/data_type.h"
#include "fusedgemm/ops.h"
#include "fusion/fusion_program.h"

namespace fusedgemm::codegen {

// "fk::Elem::kBF16"; nullopt for kNotSet. The generated code aliases
// fusedgemm::kernels as fk.
std::optional<std::string_view> device_elem(DataType type);

// "fk::AuxCover::kColumn": how an aux input covers the unit (kernels/epilogue_access.cuh).
std::string_view aux_cover(fusion::Broadcast broadcast);

// "fk::TapCombine::kSum" for add, avg, norm1 and norm2; kMax for max and amax; kMin; kProduct.
std::string_view tap_combine(ReductionMode mode);

// The identity of the mode's combine: where every partial of a tap starts.
float tap_identity(ReductionMode mode);

// What one point contributes, given the value's expression and (avg only) the name of the
// 1 / count variable: v, v * inv_count, |v| (amax, norm1) or v * v (norm2).
std::string tap_contribution(ReductionMode mode, std::string_view value,
                             std::string_view inv_count);

}  // namespace fusedgemm::codegen
