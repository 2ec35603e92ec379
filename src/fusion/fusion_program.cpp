#include "fusion/fusion_program.h"

namespace fusedgemm {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kA: return "A";
    case Role::kB: return "B";
    case Role::kAux: return "aux";
    case Role::kScale: return "scale";
    case Role::kOutput: return "output";
    case Role::kTap: return "tap";
  }
  return "unknown";
}

namespace fusion {

std::string_view to_string(Major major) {
  switch (major) {
    case Major::kK: return "K-major";
    case Major::kM: return "M-major";
    case Major::kN: return "N-major";
  }
  return "unknown";
}

std::string_view to_string(Broadcast broadcast) {
  switch (broadcast) {
    case Broadcast::kScalar: return "scalar";
    case Broadcast::kRow: return "row";
    case Broadcast::kColumn: return "column";
    case Broadcast::kFull: return "full";
  }
  return "unknown";
}

Role FusionProgram::role_of(int buffer) const {
  for (const auto& op : operands) {
    if (op.buffer == buffer) return op.role;
    if (op.block_scale && op.block_scale->scale_buffer == buffer) return Role::kScale;
  }
  for (const auto& a : aux) {
    if (a.buffer == buffer) return Role::kAux;
  }
  for (const auto& t : taps) {
    if (t.buffer == buffer) return Role::kTap;
  }
  for (const auto& q : quantized_outputs) {
    if (q.scale_buffer == buffer) return Role::kScale;
  }
  return Role::kOutput;
}

}  // namespace fusion
}  // namespace fusedgemm
