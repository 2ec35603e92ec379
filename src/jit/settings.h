// Resolves a Context's settings from its options and the FUSEDGEMM_* environment variables
// (docs/ENVIRONMENT.md). Read once, when the Context is created (STYLE.md rule 23).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "fusedgemm/context.h"
#include "fusedgemm/status.h"

namespace fusedgemm::jit {

// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment (std::getenv).
EnvLookup process_environment();

// Options first, then `env` (when options.read_environment), then the defaults. A variable
// that cannot be parsed is kInvalidArgument naming it, its value and what is legal.
Result<ContextSettings> resolve_settings(const ContextOptions& options, const EnvLookup& env);

}  // namespace fusedgemm::jit
