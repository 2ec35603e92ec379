#include "call_json.h"

#include <array>

#include <fmt/format.h>

#include "graph/json_read.h"

namespace fusedgemm::tool {
namespace {

using json::At;

constexpr std::array<std::string_view, 2> kTopKeys = {"buffers", "workspace_bytes"};
constexpr std::array<std::string_view, 5> kBufferKeys = {"shape", "stride", "data_type",
                                                         "offset_bytes", "null"};

Result<BufferView> read_buffer(const At& at, std::uintptr_t base) {
  FG_TRY(json::check_keys(at, "a buffer", kBufferKeys));
  std::int64_t offset = 0;
  if (at.has("offset_bytes")) {
    // Past the spacing a buffer's fake address would land on the next buffer's.
    const std::string legal = fmt::format(
        "an integer in [0, {}): each buffer's fake base is that far from the next", kFakeSpacing);
    FG_ASSIGN_OR_RETURN(offset, json::read_int(at.key("offset_bytes"), legal));
    if (offset < 0 || static_cast<std::uint64_t>(offset) >= kFakeSpacing) {
      return at.key("offset_bytes").error(fmt::format("{} is out of range", offset), legal);
    }
  }
  bool null = false;
  if (at.has("null")) {
    FG_ASSIGN_OR_RETURN(null, json::read_bool(at.key("null")));
  }
  void* data = null ? nullptr : reinterpret_cast<void*>(base + static_cast<std::uintptr_t>(offset));
  DataType type = DataType::kNotSet;
  if (at.has("data_type")) {
    static const auto kTypes = json::spelled_values<DataType>(DataType::kNotSet);
    FG_ASSIGN_OR_RETURN(type, json::read_enum(at.key("data_type"), "data type", kTypes));
  }
  if (!at.has("shape") && !at.has("stride")) {
    if (at.has("data_type")) {
      return at.key("data_type")
          .error("given without a view", "data_type with \"shape\" and \"stride\" (a view)");
    }
    return BufferView::address(data);
  }
  constexpr std::string_view kView =
      "\"shape\" and \"stride\" together, arrays of integers in the declared axis order";
  if (!at.has("shape")) return at.key("shape").error("missing while \"stride\" is given", kView);
  if (!at.has("stride")) return at.key("stride").error("missing while \"shape\" is given", kView);
  FG_ASSIGN_OR_RETURN(auto shape, json::read_ints(at.key("shape"), kView));
  FG_ASSIGN_OR_RETURN(auto stride, json::read_ints(at.key("stride"), kView));
  return BufferView::view(data, std::move(shape), std::move(stride), type);
}

}  // namespace

Result<CallDescription> call_from_json(std::string_view text) {
  try {
    FG_ASSIGN_OR_RETURN(json::Json root, json::parse(text, "call_json"));
    const At top{&root, "call_json", "", ""};
    FG_TRY(json::check_keys(top, "a call", kTopKeys));
    CallDescription call;
    if (top.has("workspace_bytes")) {
      constexpr std::string_view kLegal = "a non-negative integer";
      FG_ASSIGN_OR_RETURN(const std::int64_t bytes,
                          json::read_int(top.key("workspace_bytes"), kLegal));
      if (bytes < 0) return top.key("workspace_bytes").error(fmt::format("{}", bytes), kLegal);
      call.workspace_bytes = static_cast<std::uint64_t>(bytes);
    }
    if (!top.has("buffers")) return call;
    const At buffers = top.key("buffers");
    if (!buffers.json->is_object()) return buffers.wrong("an object: tensor name -> buffer");
    std::uintptr_t base = kFakeBase;
    for (const auto& [name, value] : buffers.json->items()) {
      At at = buffers.key(name);
      at.subject = fmt::format("tensor '{}'", name);
      FG_ASSIGN_OR_RETURN(BufferView view, read_buffer(at, base));
      call.pack.set(name, std::move(view));
      base += kFakeSpacing;
    }
    return call;
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal, fmt::format("call_json: {}", e.what()));
  }
}

Result<CallDescription> load_call(const std::string& path) {
  // Errors in load_graph's shape: "load_call: cannot open '<path>': <why>", or
  // "load_call: '<path>': call_json: <field>: ..." for bad content.
  FG_ASSIGN_OR_RETURN(const std::string text,
                      json::read_file(path, "load_call", "a call JSON file"));
  auto call = call_from_json(text);
  FG_CHECK(call, call.status().code(),
           fmt::format("load_call: '{}': {}", path, call.status().message()));
  return call;
}

}  // namespace fusedgemm::tool
