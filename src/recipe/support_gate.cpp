#include "recipe/support_gate.h"

#include "recipe/rules.h"

namespace fusedgemm::recipe {

std::optional<Decline> check_support(const fusion::FusionProgram& program) {
  for (const Rule& rule : rule_table()) {
    if (rule.scope != RuleScope::kBuild) continue;
    const int item = rule.first_violation(program);
    if (item >= 0) return Decline{std::string(rule.id), rule.explain(program, item)};
  }
  return std::nullopt;
}

Decline decline_of(std::string message) {
  std::string rule = message.substr(0, message.find(':'));
  return Decline{std::move(rule), std::move(message)};
}

}  // namespace fusedgemm::recipe
