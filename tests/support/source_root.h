// Where the tests find the repository's files (examples, goldens, src/): under
// $FUSEDGEMM_SOURCE_ROOT when set, else the source tree the tests were built from. A test
// binary carried to another machine (scripts/gpu_run.sh) points the variable at its checkout
// instead of recreating the build machine's path. Force-included into every test source
// (tests/CMakeLists.txt), since the path macros expand to source_path() calls.
#pragma once

#include <cstdlib>
#include <string>

namespace fusedgemm_test {

inline std::string source_path(const char* relative) {
  const char* root = std::getenv("FUSEDGEMM_SOURCE_ROOT");
  return std::string(root != nullptr && *root != '\0' ? root : FUSEDGEMM_BUILT_SOURCE_ROOT) + "/" +
         relative;
}

}  // namespace fusedgemm_test
