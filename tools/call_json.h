// The call file of `fusedgemm explain GRAPH CALL` (docs/call-json.md) as a VariantPack of
// fake addresses, read as strictly as a graph file: an unknown or repeated key, a value of
// the wrong type, a non-integer where an integer belongs, an unknown data type or a view
// with one of shape and stride are errors naming the path and the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fusedgemm/status.h"
#include "fusedgemm/variant_pack.h"

namespace fusedgemm::tool {

// Addresses a call file hands out: far apart, 4 KiB aligned, never read.
inline constexpr std::uintptr_t kFakeBase = 0x7f0000000000;
inline constexpr std::uintptr_t kFakeSpacing = 0x100000000;

struct CallDescription {
  VariantPack pack;
  std::uint64_t workspace_bytes = 0;
};

// kInvalidArgument on bad content, with "call_json: <path>: <what>; legal: <condition>".
Result<CallDescription> call_from_json(std::string_view text);
// kIo when the file cannot be read; bad content as above, prefixed by the path.
Result<CallDescription> load_call(const std::string& path);

}  // namespace fusedgemm::tool
