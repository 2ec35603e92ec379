#include "support/illegal_calls.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "fusedgemm/device.h"

namespace fusedgemm::test {

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

Result<Setup> setup(Flavor flavor, const FlavorShape& plan_shape, const FlavorShape& call_shape,
                    std::uint64_t seed) {
  FG_ASSIGN_OR_RETURN(FlavorGraph fg, make_flavor_graph(flavor, plan_shape));
  FG_ASSIGN_OR_RETURN(Plan plan, build(fg.graph, BuildOptions{make_host_device()}));
  FG_ASSIGN_OR_RETURN(FlavorGraph call_fg, make_flavor_graph(flavor, call_shape));
  FG_ASSIGN_OR_RETURN(CallBuffers call, CallBuffers::make(call_fg.graph, seed));
  return Setup{std::move(plan), std::move(call_fg), std::move(call)};
}

void expect_computed(Setup& s, const VariantPack& pack) {
  s.call.prepare();
  expect_computed(s.plan, s.call, s.call_graph.graph, pack);
}

void expect_computed(const Plan& plan, const CallBuffers& call, const Graph& graph,
                     const VariantPack& pack) {
  const Status status = plan.execute(pack, workspace_of(plan, pack), nullptr);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(call.matches_reference(graph));
  EXPECT_TRUE(call.outside_untouched());
  EXPECT_EQ(total_deferrals(plan), 0u);
}

void expect_refused(Setup& s, const VariantPack& pack, const std::string& rule,
                    const std::string& role, const std::string& tensor, const std::string& seen) {
  s.call.fill_canary();
  const Status status = s.plan.execute(pack, workspace_of(s.plan, pack), nullptr);
  EXPECT_EQ(status.code(), ErrorCode::kIllegalCall) << status.message();
  const std::string prefix =
      role.empty() ? rule + ": " : rule + ": role " + role + " '" + tensor + "': ";
  EXPECT_EQ(status.message().rfind(prefix, 0), 0u) << status.message() << "\nwant: " << prefix;
  EXPECT_NE(status.message().find(seen), std::string::npos)
      << status.message() << "\nwant: " << seen;
  EXPECT_EQ(s.plan.explain(pack, workspace_of(s.plan, pack)).rule, rule);
  EXPECT_TRUE(s.call.all_canary());
}

BufferView view(CallBuffers& call, const std::string& name, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> stride, DataType type, std::ptrdiff_t offset_bytes) {
  return BufferView::view(call[name].buffer->data() + offset_bytes, std::move(shape),
                          std::move(stride), type);
}

namespace {
constexpr Major kM = Major::kM;
constexpr FlavorShape kPlain{.batch = 1, .m = 72, .n = 100, .k = 64};
constexpr FlavorShape kBatched{.batch = 3, .m = 40, .n = 48, .k = 32};
}  // namespace

const std::vector<IllegalCase>& illegal_cases() {
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
      // A row stride of 2^63 - 1 elements: the output's addresses would wrap below its base.
      {"view_span", "output", "D", "spans more than 2^63 elements", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         constexpr std::int64_t kHuge = std::numeric_limits<std::int64_t>::max();
         return Changes{{"D", view(c, "D", {1, 72, 100}, {kHuge, kHuge, 1})}};
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
      {"stride_alignment", "A", "A", "M stride 0", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         // Every row the same: no TMA descriptor has that stride (only a batch may be 0).
         return Changes{{"A", view(c, "A", {1, 72, 64}, {72 * 64, 0, 1})}};
       }},
      {"tma_limits", "A", "A", "batch stride 1099511627776", Flavor::kPlain, kBatched,
       [](CallBuffers& c) {
         // 2^40 elements of bf16 is 2^41 bytes, past globalStrides. Refused before any read.
         return Changes{{"A", view(c, "A", {3, 40, 32}, {std::int64_t{1} << 40, 32, 1})}};
       }},
      {"grid_extent", nullptr, nullptr, "M at most", Flavor::kPlain, kPlain,
       [](CallBuffers& c) {
         // Refused before any memory is touched, so views larger than the buffers are safe.
         constexpr std::int64_t kM = std::int64_t{1} << 31;
         return Changes{{"A", view(c, "A", {1, kM, 64}, {kM * 64, 64, 1})},
                        {"D", view(c, "D", {1, kM, 100}, {kM * 100, 100, 1})}};
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
      // Rows reversed from the last: no element twice, but outputs take no negative stride.
      // (N = 104: the last row's address stays 16-byte aligned.)
      {"output_aliasing",
       "output",
       "D",
       "the negative stride -104 on axis 1",
       Flavor::kPlain,
       {.batch = 1, .m = 72, .n = 104, .k = 64},
       [](CallBuffers& c) {
         return Changes{
             {"D", view(c, "D", {1, 72, 104}, {7488, -104, 1}, DataType::kNotSet, 71 * 104 * 2)}};
       }},
      {"output_aliasing", "tap", "T_min", "[3, 1, 48]:[16, 48, 1]", Flavor::kTapsColumn, kBatched,
       [](CallBuffers& c) {
         return Changes{{"T_min", view(c, "T_min", {3, 1, 48}, {16, 48, 1})}};
       }},
      {"read_only", "tap", "T_max", "its buffer is read-only", Flavor::kTapsRow, kBatched,
       [](CallBuffers& c) {
         BufferView v = view(c, "T_max", {3, 40, 1}, {40, 1, 1});
         v.read_only = true;
         return Changes{{"T_max", v}};
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

}  // namespace fusedgemm::test
