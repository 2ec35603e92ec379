// An engine that runs a checked call itself: the fallback engine's several launches. The
// plan checks every rule first, exactly as for a fused kernel, then hands the runner the
// call's addresses; a runner never sees an illegal call.
#pragma once

#include <string>

#include "fusedgemm/status.h"
#include "recipe/call_view.h"

namespace fusedgemm::runtime {

using Stream = void*;

class Runner {
 public:
  virtual ~Runner() = default;
  // `view` has passed every call rule: per role its address and layout, the workspace.
  virtual Status run(const recipe::CallView& view, Stream stream) const noexcept = 0;
  // What runs, step by step, for Plan::describe.
  virtual std::string describe() const = 0;
};

}  // namespace fusedgemm::runtime
