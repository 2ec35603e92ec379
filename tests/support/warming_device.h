// With FUSEDGEMM_TEST_WARM_SM_COUNT set (to the GPU's multiprocessor count), the GPU suites
// run on the compile-only device on a machine without a GPU, so every kernel they build is
// compiled into FUSEDGEMM_CACHE_DIR; the kernel cache key holds no driver, so the GPU run
// then finds them there (scripts/gpu_run.sh). Every check after build() fails on it: only
// the cache it leaves matters. Test-only.
#pragma once

#include <cstdlib>
#include <memory>

#include "fusedgemm/device.h"

namespace fusedgemm::test {

// The compile-only device when FUSEDGEMM_TEST_WARM_SM_COUNT names a positive count, else null.
inline std::shared_ptr<Device> warming_device_from_environment() {
  const char* value = std::getenv("FUSEDGEMM_TEST_WARM_SM_COUNT");
  if (value == nullptr) return nullptr;
  const int count = std::atoi(value);
  return count > 0 ? make_compile_only_device(count) : nullptr;
}

}  // namespace fusedgemm::test
