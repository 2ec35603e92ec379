// What a buffer is to the kernel. One buffer may fill two roles.
#pragma once

#include <cstdint>
#include <string_view>

namespace fusedgemm {

enum class Role : std::uint8_t { kA, kB, kAux, kScale, kOutput, kTap };

// "A", "B", "aux", "scale", "output", "tap" — the spelling every message uses.
std::string_view to_string(Role role);

}  // namespace fusedgemm
