// The illegal-call table: at least one case per call row of recipe::rule_table(), each run
// through the public Plan::execute on the host device. A refused call returns kIllegalCall
// with the rule's message (rule id, role, tensor, the offending number), counts exactly one
// deferral under that rule and none under any other, writes nothing (canary words fill every
// output and tap and their surroundings), and explain names the same rule. A new call row
// without a case here fails IllegalCall.EveryCallRowHasACase.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/rules.h"
#include "runtime/device.h"
#include "runtime/host_device.h"
#include "runtime/plan_state.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {
namespace {

constexpr Major kM = Major::kM;

// The host device, except that the calling thread's current device is another one: what a
// CUDA caller sees after cuCtxSetCurrent to a second GPU.
class OtherCurrentDevice final : public runtime::Device {
 public:
  std::string_view name() const noexcept override { return "host (device 1 current)"; }
  bool is_host() const noexcept override { return true; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 1; }
  Result<std::shared_ptr<const runtime::LoadedKernel>> load(
      const runtime::KernelImage& image) override {
    return host_.load(image);
  }
  Status fill(const runtime::Fill32& fill, runtime::Stream stream) noexcept override {
    return host_.fill(fill, stream);
  }
  Status launch(const runtime::LoadedKernel& kernel, const runtime::LaunchConfig& config,
                kernels::KernelArgs& args, runtime::Stream stream) noexcept override {
    return host_.launch(kernel, config, args, stream);
  }

 private:
  runtime::HostDevice host_;
};

// Buffers replaced in the call's pack: a view (or null address), or nullopt to leave the
// tensor out of the pack.
using Changes = std::vector<std::pair<std::string, std::optional<BufferView>>>;

VariantPack pack_with(const CallBuffers& call, const Changes& changes, bool views) {
  VariantPack pack;
  for (const auto& t : const_cast<CallBuffers&>(call).tensors()) {
    auto change = std::find_if(changes.begin(), changes.end(),
                               [&](const auto& c) { return c.first == t.name; });
    const auto& l = t.layout;
    if (change != changes.end()) {
      if (change->second) pack.set(t.name, *change->second);
    } else if (views) {
      pack.set(t.name, BufferView::view(t.buffer->data(), {l.shape[0], l.shape[1], l.shape[2]},
                                        {l.stride[0], l.stride[1], l.stride[2]}));
    } else {
      pack.set(t.name, static_cast<void*>(t.buffer->data()));
    }
  }
  return pack;
}

// A view of `name`'s buffer, `offset_bytes` past its start.
BufferView view(CallBuffers& call, const std::string& name, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> stride, DataType type = DataType::kNotSet,
                std::ptrdiff_t offset_bytes = 0) {
  return BufferView::view(call[name].buffer->data() + offset_bytes, std::move(shape),
                          std::move(stride), type);
}

struct IllegalCase {
  const char* rule;
  const char* role;    // as messages spell it; nullptr for rules of the whole call
  const char* tensor;  // the tensor the message names
  // The offending number as the message must show it; "{uid}" stands for the tensor's uid.
  const char* seen;
  Flavor flavor;
  FlavorShape shape;
  Changes (*change)(CallBuffers& call);
  bool other_current_device = false;
  // When set, the call's buffers are of this size (given as views): a plan serves calls of
  // other sizes.
  std::optional<FlavorShape> call_shape = std::nullopt;
};

constexpr FlavorShape kPlain{.batch = 1, .m = 72, .n = 100, .k = 64};
constexpr FlavorShape kBatched{.batch = 3, .m = 40, .n = 48, .k = 32};

const std::vector<IllegalCase>& cases() {
  static const std::vector<IllegalCase> kCases = {
      {"device_current", nullptr, nullptr, "current device is 1", Flavor::kPlain, kPlain,
       [](CallBuffers&) { return Changes{}; }, true},
      {"buffer_missing", "output", "D", "uid {uid}", Flavor::kPlain, kPlain,
       [](CallBuffers&) {
         return Changes{{"D", std::nullopt}};
       }},
      {"buffer_missing", "tap", "T_max", "uid {uid}", Flavor::kTapsRow, kBatched,
       [](CallBuffers&) {
         return Changes{{"T_max", BufferView::address(nullptr)}};
       }},
      {"buffer_missing",
       "scale",
       "B_scale",
       "uid {uid}",
       Flavor::kBlockScaled,
       {.batch = 1, .m = 16, .n = 128, .k = 128},
       [](CallBuffers&) {
         return Changes{{"B_scale", std::nullopt}};
       }},
      {"view_rank", "A", "A", "rank 2", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {72, 64}, {64, 1})}};
       }},
      {"view_rank", "output", "D", "rank 1", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"D", view(c, "D", {7200}, {1})}};
       }},
      {"data_type", "A", "A", "fp16", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {1, 72, 64}, {72 * 64, 64, 1}, DataType::kFloat16)}};
       }},
      {"data_type", "aux", "aux", "fp32", Flavor::kAuxColumn, kPlain,
       [](CallBuffers& c) {
         return Changes{{"aux", view(c, "aux", {100}, {1}, DataType::kFloat32)}};
       }},
      {"tap_element_width", "tap", "T_add", "2 bytes", Flavor::kTapsRow, kBatched,
       [](CallBuffers& c) {
         return Changes{{"T_add", view(c, "T_add", {3, 40, 1}, {40, 1, 1}, DataType::kBFloat16)}};
       }},
      {"batch", "B", "B", "batch 2", Flavor::kPlain, kBatched,
       [](CallBuffers& c) {
         return Changes{{"B", view(c, "B", {2, 32, 48}, {32 * 48, 1, 32})}};
       }},
      {"batch", "tap", "T_add", "batch 3", Flavor::kTapsFull, kBatched,
       [](CallBuffers& c) {
         // A [1, 1, 1] tap reduces the batch too; given per batch it is refused.
         return Changes{{"T_add", view(c, "T_add", {3, 1, 1}, {1, 1, 1})}};
       }},
      {"extent", "output", "D", "M 71", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"D", view(c, "D", {1, 71, 100}, {7200, 100, 1})}};
       }},
      {"extent",
       "scale",
       "A_scale",
       "K 2",
       Flavor::kBlockScaled,
       {.batch = 1, .m = 16, .n = 128, .k = 128},
       [](CallBuffers& c) {
         return Changes{{"A_scale", view(c, "A_scale", {1, 16, 2}, {32, 2, 1})}};
       }},
      {"aux_broadcast", "aux", "aux", "M extent 71", Flavor::kAuxRow, kPlain,
       [](CallBuffers& c) {
         return Changes{{"aux", view(c, "aux", {1, 71, 1}, {71, 1, 1})}};
       }},
      {"aux_broadcast", "aux", "aux", "N extent 99", Flavor::kAuxColumn, kPlain,
       [](CallBuffers& c) {
         return Changes{{"aux", view(c, "aux", {99}, {1})}};
       }},
      {"major", "A", "A", "K stride 72", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {1, 72, 64}, {72 * 64, 1, 72})}};
       }},
      {"major", "output", "D", "N stride 72", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"D", view(c, "D", {1, 72, 100}, {7200, 1, 72})}};
       }},
      {"contiguous_extent",
       "A",
       "A",
       "extent 100",
       Flavor::kPlain,
       {.batch = 1, .m = 72, .n = 100, .k = 104},
       [](CallBuffers& c) {
         // K 100 for A and B alike: only the 16-byte rule is broken.
         return Changes{{"A", view(c, "A", {1, 72, 100}, {72 * 100, 100, 1})},
                        {"B", view(c, "B", {1, 100, 100}, {100 * 100, 1, 100})}};
       }},
      {"stride_alignment",
       "A",
       "A",
       "136 bytes",
       Flavor::kPlain,
       {.batch = 1, .m = 72, .n = 100, .k = 64, .operand_pad = 8},
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {1, 72, 64}, {72 * 68, 68, 1})}};
       }},
      {"stride_alignment",
       "A",
       "A",
       "31.5 bytes",
       Flavor::kPlain,
       {.batch = 1, .m = 64, .n = 64, .k = 64, .operand_type = DataType::kFp4E2M1},
       [](CallBuffers& c) {
         // 63 fp4 values are 31.5 bytes: counting whole bytes (32) must not hide it.
         return Changes{{"A", view(c, "A", {1, 64, 64}, {64 * 63, 63, 1})}};
       }},
      {"grid_extent", nullptr, nullptr, "grid of (1, 1, 70000)", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         // Refused before any memory is touched, so views larger than the buffers are safe.
         return Changes{{"A", view(c, "A", {70000, 72, 64}, {72 * 64, 64, 1})},
                        {"B", view(c, "B", {70000, 64, 100}, {64 * 100, 1, 64})},
                        {"D", view(c, "D", {70000, 72, 100}, {7200, 100, 1})}};
       }},
      {"buffer_overlap", "output", "D", "shares memory with role A 'A'", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"D", view(c, "A", {1, 72, 100}, {7200, 100, 1})}};
       }},
      {"alignment", "A", "A", "2 bytes past a 16-byte boundary", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {1, 72, 64}, {72 * 64, 64, 1}, DataType::kNotSet, 2)}};
       }},
      {"alignment", "tap", "T_max", "2 bytes past a 4-byte boundary", Flavor::kTapsRow, kBatched,
       [](CallBuffers& c) {
         return Changes{{"T_max", view(c, "T_max", {3, 40, 1}, {40, 1, 1}, DataType::kNotSet, 2)}};
       }},
      {"output_aliasing", "output", "D", "[1, 72, 100]:[7200, 50, 1]", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"D", view(c, "D", {1, 72, 100}, {7200, 50, 1})}};
       }},
      {"output_aliasing", "tap", "T_min", "[3, 1, 48]:[16, 48, 1]", Flavor::kTapsColumn, kBatched,
       [](CallBuffers& c) {
         return Changes{{"T_min", view(c, "T_min", {3, 1, 48}, {16, 48, 1})}};
       }},
      {"layout_group",
       "B",
       "B1",
       "[1, 32, 48]:[1856, 1, 40]",
       Flavor::kGatedMlp,
       {.batch = 1, .m = 40, .n = 48, .k = 32, .operand_pad = 8},
       [](CallBuffers& c) {
         // B1 padded by 8 where B0 is dense: each legal, together not one layout.
         return Changes{{"B0", view(c, "B0", {1, 32, 48}, {32 * 48, 1, 32})},
                        {"B1", view(c, "B1", {1, 32, 48}, {1856, 1, 40})}};
       }},
      {"layout_group",
       "A",
       "A1",
       "[1, 40, 32]:[1608, 40, 1]",
       Flavor::kTapsOnlyMultiGemm,
       {.batch = 1, .m = 40, .n = 48, .k = 32, .operand_pad = 8},
       [](CallBuffers& c) {
         // A0 read dense where A1 keeps its padded rows: each legal, together not one layout.
         return Changes{{"A0", view(c, "A0", {1, 40, 32}, {1280, 32, 1})}};
       }},
      {"view_rank", "aux", "aux", "rank 4", Flavor::kAuxColumn, kPlain,
       [](CallBuffers& c) {
         return Changes{{"aux", view(c, "aux", {1, 1, 1, 100}, {100, 100, 100, 1})}};
       }},
      {"data_type", "tap", "T_add", "int32", Flavor::kTapsRow, kBatched,
       [](CallBuffers& c) {
         // 4 bytes wide, but not the fp32 the tap is declared (and seeded, and summed) as.
         return Changes{{"T_add", view(c, "T_add", {3, 40, 1}, {40, 1, 1}, DataType::kInt32)}};
       }},
      {"stride_alignment", "A", "A", "M stride -64", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         // Rows read backwards from the last one: TMA strides are unsigned.
         return Changes{
             {"A", view(c, "A", {1, 72, 64}, {72 * 64, -64, 1}, DataType::kNotSet, 71 * 64 * 2)}};
       }},
      {"extent", "A", "A", "M 0", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"A", view(c, "A", {1, 0, 64}, {72 * 64, 64, 1})},
                        {"D", view(c, "D", {1, 0, 100}, {7200, 100, 1})}};
       }},
      {"extent", "B", "B", "N -4", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         return Changes{{"B", view(c, "B", {1, 64, -4}, {6400, 1, 64})},
                        {"D", view(c, "D", {1, 72, -4}, {7200, 100, 1})}};
       }},
      {"batch", "output", "D", "batch 1", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         // A plan built at batch 1 runs a call of batch 3, but its output cannot broadcast.
         return Changes{{"D", view(c, "D", {1, 72, 100}, {7200, 100, 1})}};
       },
       false, FlavorShape{.batch = 3, .m = 72, .n = 100, .k = 64, .b_batch_one = true}},
      {"batch",
       "output",
       "Y",
       "batch 1",
       Flavor::kQuantized,
       {.batch = 1, .m = 16, .n = 128, .k = 32},
       [](CallBuffers& c) {
         return Changes{{"Y", view(c, "Y", {1, 16, 128}, {2048, 128, 1})},
                        {"Y_scale", view(c, "Y_scale", {1, 16, 1}, {16, 1, 1})}};
       },
       false,
       FlavorShape{.batch = 2, .m = 16, .n = 128, .k = 32}},
      {"scale_layout",
       "scale",
       "A_scale",
       "spans 31 elements",
       Flavor::kBlockScaled,
       {.batch = 1, .m = 16, .n = 128, .k = 128},
       [](CallBuffers& c) {
         return Changes{{"A_scale", view(c, "A_scale", {1, 16, 1}, {32, 2, 1})}};
       }},
  };
  return kCases;
}

std::string case_name(const IllegalCase& c) {
  return fmt::format("{} (role {} '{}', {}) on {}", c.rule, c.role ? c.role : "-",
                     c.tensor ? c.tensor : "-", c.seen, to_string(c.flavor));
}

std::string expected_seen(const IllegalCase& c, const Graph& graph) {
  std::string seen = c.seen;
  if (const auto at = seen.find("{uid}"); at != std::string::npos) {
    auto t = graph.find_tensor(c.tensor);
    seen.replace(at, 5, t ? fmt::format("{}", *t.value()->uid()) : "?");
  }
  return seen;
}

void expect_refused(const IllegalCase& c) {
  SCOPED_TRACE(case_name(c));
  auto fg = make_flavor_graph(c.flavor, c.shape);
  ASSERT_TRUE(fg) << fg.status().message();
  std::shared_ptr<Device> device = make_host_device();
  if (c.other_current_device) device = std::make_shared<OtherCurrentDevice>();
  auto plan = build(fg->graph, BuildOptions{device});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call_fg = make_flavor_graph(c.flavor, c.call_shape.value_or(c.shape));
  ASSERT_TRUE(call_fg) << call_fg.status().message();
  auto call = CallBuffers::make(call_fg->graph, 11);
  ASSERT_TRUE(call) << call.status().message();
  const bool views = c.call_shape.has_value();

  // The unchanged call is legal: the change alone breaks the rule.
  if (!c.other_current_device) {
    call->prepare();
    const Status legal =
        plan->execute(call->pack(views), workspace_of(plan.value(), call->pack(views)), nullptr);
    ASSERT_TRUE(legal) << legal.message();
    ASSERT_TRUE(call->matches_reference(call_fg->graph));
  }

  const VariantPack pack = pack_with(call.value(), c.change(call.value()), views);
  call->fill_canary();
  const Status status = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(status.code(), ErrorCode::kIllegalCall) << status.message();
  const std::string& m = status.message();
  const std::string prefix = c.role ? fmt::format("{}: role {} '{}': ", c.rule, c.role, c.tensor)
                                    : fmt::format("{}: ", c.rule);
  EXPECT_EQ(m.rfind(prefix, 0), 0u) << m << "\nwant prefix: " << prefix;
  EXPECT_NE(m.find(expected_seen(c, fg->graph)), std::string::npos)
      << m << "\nwant: " << expected_seen(c, fg->graph);
  EXPECT_NE(m.find("; legal: "), std::string::npos) << m;
  EXPECT_TRUE(call->all_canary());

  for (const auto& [rule, count] : deferral_map(plan.value())) {
    EXPECT_EQ(count, rule == c.rule ? 1u : 0u) << "deferrals of '" << rule << "'";
  }
  const Verdict verdict = plan->explain(pack, workspace_of(plan.value(), pack));
  EXPECT_EQ(verdict.rule, c.rule) << verdict.message;
  EXPECT_EQ(verdict.message, m);
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 1u) << "explain counted a deferral";
}

TEST(IllegalCall, EachCaseIsRefusedByItsRuleBeforeAnyWrite) {
  for (const IllegalCase& c : cases()) expect_refused(c);
}

TEST(IllegalCall, EveryCallRowHasACase) {
  std::set<std::string_view> covered;
  for (const IllegalCase& c : cases()) covered.insert(c.rule);
  covered.insert("workspace");  // IllegalCall.WorkspaceMissingShortOrMisaligned
  for (const recipe::Rule& rule : recipe::rule_table()) {
    if (rule.scope != recipe::RuleScope::kCall) continue;
    EXPECT_TRUE(covered.contains(rule.id))
        << "call rule '" << rule.id << "' has no case in illegal_call_test.cpp";
  }
}

// A taps flavor needs a workspace that grows with the call's tiles: missing, short or
// misaligned ones are refused by the workspace rule, naming the needed and given bytes.
TEST(IllegalCall, WorkspaceMissingShortOrMisaligned) {
  auto fg = make_flavor_graph(Flavor::kTapsRow, {.batch = 2, .m = 72, .n = 200, .k = 16});
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 3);
  ASSERT_TRUE(call) << call.status().message();
  auto bound = plan->bind(call->pack());
  ASSERT_TRUE(bound) << bound.status().message();
  const auto needed = plan->workspace_bytes(bound.value());
  ASSERT_TRUE(needed) << needed.status().message();
  ASSERT_GT(needed.value(), 0u);
  EXPECT_EQ(needed.value(), plan->workspace_bytes());  // the call is the declared problem

  std::vector<std::uint64_t> storage(needed.value() / 8 + 2);
  auto* base = reinterpret_cast<std::uint8_t*>(storage.data());
  const std::vector<std::pair<Workspace, std::string>> refused = {
      {Workspace{}, "workspace of 0 bytes"},
      {Workspace{base, needed.value() - 1},
       fmt::format("workspace of {} bytes", needed.value() - 1)},
      {Workspace{nullptr, needed.value()}, fmt::format("workspace of {} bytes", needed.value())},
      {Workspace{base + 4, needed.value()}, fmt::format("workspace of {} bytes", needed.value())},
  };
  int row = -1;
  const auto table = recipe::rule_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].id == "workspace") row = static_cast<int>(i);
  }
  ASSERT_GE(row, 0);
  std::uint64_t expected = 0;
  for (const auto& [ws, seen] : refused) {
    SCOPED_TRACE(seen);
    call->fill_canary();
    const Status s = plan->execute(bound.value(), ws, nullptr);
    EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
    EXPECT_EQ(s.message().rfind("workspace: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(seen), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(fmt::format("needed: {} bytes", needed.value())), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("; legal: "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("'T_add' 2 group(s) of 2 CTA(s)"), std::string::npos) << s.message();
    EXPECT_TRUE(call->all_canary());
    EXPECT_EQ(deferral_map(plan.value())["workspace"], ++expected);
    const Verdict v = plan->explain(bound.value(), ws);
    EXPECT_EQ(v.rule, "workspace");
    EXPECT_EQ(v.message, s.message());
  }
  call->prepare();
  const Status ok = plan->execute(bound.value(), Workspace{base, needed.value()}, nullptr);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_TRUE(call->matches_reference(fg->graph));
  EXPECT_EQ(total_deferrals(plan.value()), expected);
}

// A pack of another plan has no workspace size here.
TEST(IllegalCall, WorkspaceBytesOfAForeignPackIsRefused) {
  auto fg = make_flavor_graph(Flavor::kTapsFull, {.batch = 1, .m = 64, .n = 64, .k = 16});
  ASSERT_TRUE(fg) << fg.status().message();
  auto one = build(fg->graph, BuildOptions{make_host_device()});
  auto two = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(one && two);
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  auto bound = one->bind(call->pack());
  ASSERT_TRUE(bound) << bound.status().message();
  const auto foreign = two->workspace_bytes(bound.value());
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.status().code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(foreign.status().message().rfind("bound_pack: ", 0), 0u) << foreign.status().message();
}

TEST(IllegalCall, UnknownUidOrNameIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kPlain, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();

  VariantPack by_name = call->pack();
  by_name.set("bias", static_cast<void*>(call.value()["A"].buffer->data()));
  const Status s = plan->execute(by_name, workspace_of(plan.value(), by_name), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("pack_unknown_tensor: name 'bias' names no buffer", 0), 0u)
      << s.message();
  EXPECT_EQ(plan->explain(by_name, workspace_of(plan.value(), by_name)).rule,
            "pack_unknown_tensor");

  VariantPack by_uid = call->pack();
  by_uid.set(std::int64_t{9999}, static_cast<void*>(call.value()["A"].buffer->data()));
  const Status u = plan->execute(by_uid, workspace_of(plan.value(), by_uid), nullptr);
  EXPECT_EQ(u.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(u.message().rfind("pack_unknown_tensor: uid 9999 names no buffer", 0), 0u)
      << u.message();
  EXPECT_EQ(plan->explain(by_uid, workspace_of(plan.value(), by_uid)).rule, "pack_unknown_tensor");

  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

TEST(IllegalCall, ATensorGivenTwiceIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kPlain, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  auto b = fg->graph.find_tensor("B");
  ASSERT_TRUE(b);

  // Once by name and once by uid: the same tensor.
  VariantPack pack = call->pack();
  pack.set(*b.value()->uid(), static_cast<void*>(call.value()["B"].buffer->data()));
  const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  const std::string want = fmt::format(
      "pack_duplicate_tensor: uid {} gives tensor 'B' a second buffer", *b.value()->uid());
  EXPECT_EQ(s.message().rfind(want, 0), 0u) << s.message();
  EXPECT_EQ(plan->explain(pack, workspace_of(plan.value(), pack)).rule, "pack_duplicate_tensor");
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

}  // namespace
}  // namespace fusedgemm::test

namespace fusedgemm::test {
namespace {

// A view whose strides do not pair with its extents has no rank for view_rank to judge: it
// is a pack error, named with the tensor's role, and no rule's deferral.
TEST(IllegalCall, AViewWithoutOneStridePerExtentIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kAuxColumn, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  const VariantPack pack =
      pack_with(call.value(), {{"aux", view(call.value(), "aux", {1, 1, 100}, {100, 1})}}, false);
  const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("pack_view_strides: role aux 'aux': view with 3 extents and 2 "
                              "strides; legal: ",
                              0),
            0u)
      << s.message();
  EXPECT_EQ(plan->explain(pack, workspace_of(plan.value(), pack)).rule, "pack_view_strides");
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

}  // namespace
}  // namespace fusedgemm::test
