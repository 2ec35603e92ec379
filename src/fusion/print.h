// The readable form of a fusion program that `fusedgemm analyze` prints.
#pragma once

#include <string>

#include "fusion/fusion_program.h"

namespace fusedgemm::fusion {

std::string to_string(const FusionProgram& program);

}  // namespace fusedgemm::fusion
