// The readable recipe: roles with their shape rules, majors and alignment, the argument
// plan and workspace. `fusedgemm explain` and Plan::describe print it.
#pragma once

#include <string>

#include "recipe/recipe.h"

namespace fusedgemm::recipe {

std::string to_string(const Recipe& recipe);
std::string_view to_string(Extent extent);
std::string_view to_string(BatchRule rule);

}  // namespace fusedgemm::recipe
