// The call-scope rows of the rule table: each a noexcept predicate over a CallView that
// returns the first role breaking it (-1 when none), and the diagnostic for that role.
// The table itself, with its order, is in rules.cpp.
#pragma once

#include <string>

#include "recipe/call_view.h"
#include "recipe/recipe.h"

namespace fusedgemm::recipe::call_rules {

#define FG_CALL_RULE(name)                                                   \
  int name##_violation(const Recipe& recipe, const CallView& view) noexcept; \
  std::string name##_explain(const Recipe& recipe, const CallView& view, int role)

FG_CALL_RULE(device_current);
FG_CALL_RULE(buffer_missing);
FG_CALL_RULE(read_only);
FG_CALL_RULE(view_rank);
FG_CALL_RULE(data_type);
FG_CALL_RULE(tap_element_width);
FG_CALL_RULE(batch);
FG_CALL_RULE(extent);
FG_CALL_RULE(grid_extent);
FG_CALL_RULE(aux_broadcast);
FG_CALL_RULE(view_span);
FG_CALL_RULE(major);
FG_CALL_RULE(contiguous_extent);
FG_CALL_RULE(stride_alignment);
FG_CALL_RULE(tma_limits);
FG_CALL_RULE(alignment);
FG_CALL_RULE(buffer_overlap);
FG_CALL_RULE(output_aliasing);
FG_CALL_RULE(scale_layout);
FG_CALL_RULE(workspace);
FG_CALL_RULE(workspace_overlap);

#undef FG_CALL_RULE

}  // namespace fusedgemm::recipe::call_rules
