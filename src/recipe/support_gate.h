// The support gate: analyze() then every build rule in table order.
#pragma once

#include <optional>
#include <string>

#include "fusedgemm/decline.h"
#include "fusion/fusion_program.h"

namespace fusedgemm::recipe {

// The first build rule the program breaks, or nothing when the fused engine supports it.
std::optional<Decline> check_support(const fusion::FusionProgram& program);

// A decline past the gate (kernel_config, a kernel_* generator refusal) from its status
// message "<rule>: ...": the rule is the message's first word.
Decline decline_of(std::string message);

}  // namespace fusedgemm::recipe
