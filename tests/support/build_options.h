// BuildOptions for a device with the engine forced: the tests that run one graph on both
// engines. Test-only.
#pragma once

#include <memory>

#include "fusedgemm/device.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::test {

inline BuildOptions on_engine(std::shared_ptr<Device> device, Engine engine) {
  BuildOptions options{std::move(device)};
  options.engine = engine;
  return options;
}

}  // namespace fusedgemm::test
