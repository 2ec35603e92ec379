// Reading untrusted JSON for the graph reader (graph_json.cpp) and the call reader
// (tools/call_json.cpp), so that both are equally strict and their messages share one shape:
//   "<reader>: <json path>: <tensor or node>: <what was seen>; legal: <condition>".
// parse() refuses what nlohmann accepts silently or survives badly: a key given twice (it
// keeps the last), nesting past kMaxDepth (its dump() recurses, so 75,000 nested '[' blew
// the stack), a number past double range; each error names the path, a syntax error its
// line and column. Its cost is linear in the text (nlohmann's callback parser, used before,
// rescans an array at each object's end: quadratic in the length of "nodes").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fusedgemm/status.h"

namespace fusedgemm::json {

using Json = nlohmann::json;

// Arrays and objects nested in one another; the formats need 4.
inline constexpr int kMaxDepth = 64;

Result<Json> parse(std::string_view text, std::string_view reader);

// No graph or call file is larger: a graph of the most nodes validate takes (2^20) is about
// 100 MiB of JSON.
inline constexpr std::int64_t kMaxFileBytes = std::int64_t{256} << 20;

// The text of a JSON file of at most kMaxFileBytes: a regular file, or a pipe read to its
// end (an open never waits for a writer; /dev/zero is refused at the limit). Errors name
// `loader` ("load_graph", "load_call") and say what was expected ("a graph JSON file").
Result<std::string> read_file(const std::string& path, std::string_view loader,
                              std::string_view what);

// A JSON value as it appears in a message, cut short past 48 characters.
std::string shown(const Json& value);

// A value of the document (null when its key is missing), where it sits ("nodes[2].mode",
// empty for the top level) and the tensor or node it belongs to once that is known.
struct At {
  const Json* json = nullptr;
  std::string reader;  // "graph_json", "call_json"
  std::string path;
  std::string subject;

  bool has(std::string_view key) const { return json->contains(key); }
  At key(std::string_view key) const;
  At at(std::size_t index) const;

  Status error(std::string_view what, std::string_view legal) const;
  // The value is missing or not of the expected type.
  Status wrong(std::string_view legal, std::string_view detail = "") const;
};

Result<std::int64_t> read_int(const At& at, std::string_view legal);
Result<std::vector<std::int64_t>> read_ints(const At& at, std::string_view legal);
Result<std::string> read_string(const At& at, std::string_view legal);
Result<bool> read_bool(const At& at);
// An object whose every key is in `legal` or `more`.
Status check_keys(const At& at, std::string_view what, std::span<const std::string_view> legal,
                  std::span<const std::string_view> more = {});

// Every enumerator but `except` that `to_string` spells, found by asking it about each
// value of the underlying type, so that a new enumerator needs no edit here.
template <class Enum>
std::vector<Enum> spelled_values(std::optional<Enum> except = {}) {
  std::vector<Enum> values;
  for (int i = 0; i <= std::numeric_limits<std::uint8_t>::max(); ++i) {
    const auto value = static_cast<Enum>(i);
    if (to_string(value) != "unknown" && value != except) values.push_back(value);
  }
  return values;
}

// The enumerator the value spells; `what` names the enum in the message.
template <class Enum>
Result<Enum> read_enum(const At& at, std::string_view what, const std::vector<Enum>& values) {
  std::vector<std::string_view> names;
  for (Enum v : values) names.push_back(to_string(v));
  const std::string legal = fmt::format("one of {}", fmt::join(names, ", "));
  FG_ASSIGN_OR_RETURN(std::string s, read_string(at, legal));
  for (Enum v : values) {
    if (to_string(v) == s) return v;
  }
  return at.error(fmt::format("unknown {} '{}'", what, s), legal);
}

}  // namespace fusedgemm::json
