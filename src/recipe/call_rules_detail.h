// Helpers the call-rule files share (call_rules.cpp, call_rules_layout.cpp,
// call_rules_memory.cpp); private to them.
#pragma once

#include <string>
#include <string_view>

#include "recipe/call_view.h"
#include "recipe/recipe.h"

namespace fusedgemm::recipe::call_rules::detail {

// Axis names in kernel order, for messages.
std::string_view axis_name(const RoleFacts& role, int kernel_axis);

// "role <Role> '<tensor>'", the subject of every message.
std::string who(const RoleFacts& role);

// The layout the caller gave, in declared axis order.
std::string seen(const RoleLayout& rv);

std::string problem_str(const fusion::ProblemShape& p);

// The first role `pred` holds for, or -1.
template <class Pred>
int first_role(const CallView& view, Pred pred) noexcept {
  for (int i = 0; i < view.layout->role_count; ++i) {
    if (pred(i)) return i;
  }
  return -1;
}

inline bool is_tap(const RoleFacts& role) {
  return role.role == Role::kTap;
}
inline bool is_aux(const RoleFacts& role) {
  return role.kind == ParamKind::kAux;
}
inline bool is_scale(const RoleFacts& role) {
  return role.kind == ParamKind::kOperandScale || role.kind == ParamKind::kQuantizedScale;
}

}  // namespace fusedgemm::recipe::call_rules::detail
