// A decline: the fused engine refusing a graph at build, naming the rule (docs/ARCHITECTURE.md,
// "Rules").
#pragma once

#include <string>

namespace fusedgemm {

struct Decline {
  std::string rule;     // stable snake_case id
  std::string message;  // "<rule>: role <Role> '<tensor>': <seen>; legal: <condition>"
};

}  // namespace fusedgemm
