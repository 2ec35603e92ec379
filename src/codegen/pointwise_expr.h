// One pointwise op as a device expression and as the formula its comment shows, evaluated
// as runtime/host_device.cpp's apply() does (same operations, same order; constants as
// hex literals). The device functions named here live in src/kernels/pointwise.cuh.
#pragma once

#include <span>
#include <string>

#include "fusedgemm/ops.h"

namespace fusedgemm::codegen {

struct PointwiseText {
  std::string expr;     // fp32 device expression over `inputs`
  std::string formula;  // for the comment, over the inputs' names
};

// `inputs` are the operand expressions (variable names), `names` the operands' tensor names
// (already safe for a comment); both hold arity(pw.mode) entries.
PointwiseText pointwise_text(const PointwiseAttributes& pw, std::span<const std::string> inputs,
                             std::span<const std::string> names);

}  // namespace fusedgemm::codegen
