// The support gate: analyze() then every build rule in table order.
#pragma once

#include <optional>

#include "fusedgemm/decline.h"
#include "fusion/fusion_program.h"

namespace fusedgemm::recipe {

// The first build rule the program breaks, or nothing when the fused engine supports it.
std::optional<Decline> check_support(const fusion::FusionProgram& program);

}  // namespace fusedgemm::recipe
