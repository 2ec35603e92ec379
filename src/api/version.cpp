// fusedgemm::version(): the version the library was built at, from the configured header.
#include "fusedgemm/version.h"

namespace fusedgemm {

std::string_view version() noexcept {
  return FUSEDGEMM_VERSION_STRING;
}

}  // namespace fusedgemm
