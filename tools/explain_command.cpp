// explain GRAPH [CALL]: a plan's recipe, or the verdict on one call described in JSON
// (docs/call-json.md). Nothing is launched and no address is dereferenced, so calls are
// described by shapes, strides and address offsets alone.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::tool {

int report(const Status& status);

namespace {

// Addresses explain hands out: far apart, 4 KiB aligned, never read.
constexpr std::uintptr_t kFakeBase = 0x7f0000000000;
constexpr std::uintptr_t kFakeSpacing = 0x100000000;

Result<VariantPack> read_call(const std::string& path, std::uint64_t* workspace_bytes) {
  std::ifstream in(path);
  FG_CHECK(in.good(), ErrorCode::kIo, fmt::format("call_json: cannot open '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str(), nullptr, false);
  FG_CHECK(!json.is_discarded() && json.is_object(), ErrorCode::kInvalidArgument,
           fmt::format("call_json: '{}' is not a JSON object", path));
  VariantPack pack;
  std::uintptr_t next = kFakeBase;
  const auto buffers = json.value("buffers", nlohmann::json::object());
  FG_CHECK(buffers.is_object(), ErrorCode::kInvalidArgument,
           "call_json: 'buffers' must map tensor names to buffers");
  for (const auto& [name, b] : buffers.items()) {
    const auto offset = b.value("offset_bytes", std::int64_t{0});
    void* data = b.value("null", false) ? nullptr : reinterpret_cast<void*>(next + offset);
    next += kFakeSpacing;
    if (!b.contains("shape")) {
      pack.set(name, BufferView::address(data));
      continue;
    }
    FG_CHECK(b["shape"].is_array() && b.contains("stride") && b["stride"].is_array(),
             ErrorCode::kInvalidArgument,
             fmt::format("call_json: buffers.{}: a view needs 'shape' and 'stride' arrays", name));
    DataType type = DataType::kNotSet;
    if (b.contains("data_type")) {
      const auto parsed = data_type_from_string(b["data_type"].get<std::string>());
      FG_CHECK(parsed.has_value(), ErrorCode::kInvalidArgument,
               fmt::format("call_json: buffers.{}.data_type: unknown data type {}", name,
                           b["data_type"].dump()));
      type = *parsed;
    }
    pack.set(name, BufferView::view(data, b["shape"].get<std::vector<std::int64_t>>(),
                                    b["stride"].get<std::vector<std::int64_t>>(), type));
  }
  *workspace_bytes = json.value("workspace_bytes", std::uint64_t{0});
  return pack;
}

// nlohmann reports type mismatches as exceptions; they stop here as errors.
Result<VariantPack> read_call_checked(const std::string& path, std::uint64_t* workspace_bytes) {
  try {
    return read_call(path, workspace_bytes);
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("call_json: {}: {}", path, e.what()));
  }
}

}  // namespace

int explain_command(const std::string& graph_path, const std::string& call_path) {
  auto graph = load_graph(graph_path);
  if (!graph) return report(graph.status());
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  if (!plan) return report(plan.status());
  if (call_path.empty()) {
    std::printf("%s", plan->describe().c_str());
    return 0;
  }
  std::uint64_t workspace_bytes = 0;
  auto pack = read_call_checked(call_path, &workspace_bytes);
  if (!pack) return report(pack.status());
  // A workspace of the size the call names, at an address nobody reads.
  const Workspace workspace{
      workspace_bytes ? reinterpret_cast<void*>(kFakeBase - kFakeSpacing) : nullptr,
      workspace_bytes};
  const Verdict verdict = plan->explain(pack.value(), workspace);
  if (verdict.legal()) {
    std::printf("legal: the call passes every rule\n");
    return 0;
  }
  std::printf("refused by rule %s\n  %s\n", verdict.rule.c_str(), verdict.message.c_str());
  return 1;
}

}  // namespace fusedgemm::tool
