// The readable form of a graph that `fusedgemm validate` prints.
#pragma once

#include <string>

#include "fusedgemm/graph.h"

namespace fusedgemm {

// Tensors (name, uid, dims:strides, data type, input/virtual/output) then nodes in order.
std::string to_string(const Graph& graph);

}  // namespace fusedgemm
