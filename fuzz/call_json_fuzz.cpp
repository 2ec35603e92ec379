// libFuzzer target: any bytes given to the call reader of `fusedgemm explain`. It answers
// every input with a CallDescription or a Status; a crash, a sanitizer report, a hang or
// an exception is a bug.
#include <cstdint>
#include <string_view>

#include "call_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)fusedgemm::tool::call_from_json(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
