// The rule table: the only statement of legality (STYLE.md rule 6). Structure and build
// rows are the support gate: a graph breaking one is declined. Call rows are the contract
// of every execute: a call breaking one is refused before anything is written and counted
// as a deferral under the row. Rows are ordered; the first broken row is reported.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "fusion/fusion_program.h"
#include "recipe/call_view.h"
#include "recipe/recipe.h"

namespace fusedgemm::recipe {

enum class RuleScope : std::uint8_t {
  kStructure,  // checked while analyze() builds the fusion program; a break is a decline
  kBuild,      // checked on the fusion program by the support gate; a break is a decline
  kCall,       // checked on every call by execute and explain; a break is a deferral
};

std::string_view to_string(RuleScope scope);

struct Rule {
  std::string_view id;
  RuleScope scope;
  std::string_view legal;  // what a legal graph looks like, for `fusedgemm explain --rules`
  // kBuild: the index of the first item (operand, aux, output, ...) breaking the rule, or
  // -1. The same predicate serves the gate and the message, so they cannot drift.
  int (*first_violation)(const fusion::FusionProgram& program) noexcept = nullptr;
  // kBuild: the message for the item first_violation returned.
  std::string (*explain)(const fusion::FusionProgram& program, int item) = nullptr;
  // kCall: the first role breaking the rule, or -1; noexcept, no allocation, no strings.
  int (*call_violation)(const Recipe& recipe, const CallView& view) noexcept = nullptr;
  // kCall: the diagnostic for that role; runs only after call_violation found it.
  std::string (*call_explain)(const Recipe& recipe, const CallView& view, int role) = nullptr;
  // kCall: reads what changes every call (addresses, the current device, the workspace).
  // Other call rows read only layouts, which a bound pack fixes, so they run at bind.
  bool per_call = false;
};

std::span<const Rule> rule_table();

}  // namespace fusedgemm::recipe
