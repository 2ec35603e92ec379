// The variant pack (DESIGN.md section 7, steps 1 and 2): how a call's buffers are keyed,
// bound once, and read — bare addresses as declared, views in declared order, B views in
// kernel order re-labelled, the declaration winning at N == K, one buffer in two roles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {
namespace {

using Dimv = std::vector<std::int64_t>;

struct Built {
  FlavorGraph flavor;
  Plan plan;
};

// Builds `flavor` at `shape` on the host device; fails the test on error.
std::optional<Built> build_flavor(Flavor flavor, const FlavorShape& shape) {
  auto fg = make_flavor_graph(flavor, shape);
  if (!fg) {
    ADD_FAILURE() << fg.status().message();
    return std::nullopt;
  }
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  if (!plan) {
    ADD_FAILURE() << plan.status().message();
    return std::nullopt;
  }
  return Built{std::move(fg).value(), std::move(plan).value()};
}

CallBuffers make_call(const Graph& graph, std::uint64_t seed) {
  auto call = CallBuffers::make(graph, seed);
  EXPECT_TRUE(call) << call.status().message();
  return std::move(call).value();
}

// The pack of `call` by name, with the named tensors given as the views in `views`.
VariantPack pack_with_views(const CallBuffers& call,
                            const std::vector<std::pair<std::string, BufferView>>& views) {
  VariantPack pack;
  for (auto& t : const_cast<CallBuffers&>(call).tensors()) {
    auto it =
        std::find_if(views.begin(), views.end(), [&](const auto& v) { return v.first == t.name; });
    if (it != views.end()) {
      pack.set(t.name, it->second);
    } else {
      pack.set(t.name, static_cast<void*>(t.buffer->data()));
    }
  }
  return pack;
}

std::vector<std::uint8_t> payload(const CallBuffers& call, const std::string& name) {
  const auto& t = call[name];
  return {t.buffer->data(), t.buffer->data() + t.buffer->size()};
}

void expect_legal_and_correct(const Plan& plan, CallBuffers& call, const VariantPack& pack,
                              const Graph& graph) {
  call.prepare();
  const Status s = plan.execute(pack, workspace_of(plan, pack), nullptr);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(call.matches_reference(graph));
  EXPECT_TRUE(call.outside_untouched());
  EXPECT_EQ(total_deferrals(plan), 0u);
}

// Padded operands and outputs: a bare address is read through the declared strides, so the
// 0xFF padding between the inputs' rows is never read and the outputs' padding never written.
TEST(VariantPack, BareAddressesReadTheDeclaredLayout) {
  const FlavorShape shape{.batch = 2,
                          .m = 40,
                          .n = 48,
                          .k = 32,
                          .a_major = Major::kM,
                          .out_major = Major::kM,
                          .operand_pad = 8,
                          .output_pad = 8,
                          .tap_pad = 2};
  auto built = build_flavor(Flavor::kTapsColumn, shape);
  ASSERT_TRUE(built);
  auto call = make_call(built->flavor.graph, 1);
  expect_legal_and_correct(built->plan, call, call.pack(), built->flavor.graph);
}

// One plan, one set of buffers, keyed four ways: by name, by uid, by handle, and as views
// in declared order. Every way gives the same bytes.
TEST(VariantPack, KeyedByNameUidOrHandleAndAsViewsAlike) {
  auto built = build_flavor(Flavor::kAuxRow, {.batch = 2, .m = 24, .n = 40, .k = 16});
  ASSERT_TRUE(built);
  const Graph& graph = built->flavor.graph;
  auto call = make_call(graph, 2);
  VariantPack by_uid;
  for (const auto& t : call.tensors()) by_uid.set(t.uid, static_cast<void*>(t.buffer->data()));
  const std::vector<std::pair<const char*, VariantPack>> packs = {
      {"name", call.pack()},
      {"uid", by_uid},
      {"handle", call.pack_by_handle(graph)},
      {"views", call.pack(/*views=*/true)},
  };
  std::vector<std::uint8_t> first;
  for (const auto& [how, pack] : packs) {
    SCOPED_TRACE(how);
    expect_legal_and_correct(built->plan, call, pack, graph);
    if (first.empty()) first = payload(call, "D");
    EXPECT_EQ(payload(call, "D"), first);
  }
}

// B given as (b, N, K) — the kernel's order — with N != K is re-labelled, not refused: for
// a K-major and an N-major B, and for the block scales of a block-scaled B.
TEST(VariantPack, BViewsInKernelOrderAreRelabelled) {
  for (Major b_major : {Major::kK, Major::kN}) {
    SCOPED_TRACE(fusion::to_string(b_major));
    auto built =
        build_flavor(Flavor::kPlain, {.batch = 2, .m = 40, .n = 48, .k = 32, .b_major = b_major});
    ASSERT_TRUE(built);
    auto call = make_call(built->flavor.graph, 3);
    const Layout& d = call["B"].layout;  // declared [2, 32, 48]
    const BufferView kernel_order = BufferView::view(call["B"].buffer->data(), {2, 48, 32},
                                                     {d.stride[0], d.stride[2], d.stride[1]});
    expect_legal_and_correct(built->plan, call, pack_with_views(call, {{"B", kernel_order}}),
                             built->flavor.graph);
  }
  auto built = build_flavor(Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 256});
  ASSERT_TRUE(built);
  auto call = make_call(built->flavor.graph, 4);
  const Layout& b = call["B"].layout;        // [1, 256, 128]:[32768, 1, 256]
  const Layout& s = call["B_scale"].layout;  // [1, 2, 1]:[2, 1, 1]
  const std::vector<std::pair<std::string, BufferView>> views = {
      {"B", BufferView::view(call["B"].buffer->data(), {1, 128, 256},
                             {b.stride[0], b.stride[2], b.stride[1]})},
      {"B_scale", BufferView::view(call["B_scale"].buffer->data(), {1, 1, 2},
                                   {s.stride[0], s.stride[2], s.stride[1]})},
  };
  expect_legal_and_correct(built->plan, call, pack_with_views(call, views), built->flavor.graph);
}

// At N == K both readings of a B view have the same shape. A view equal to the declaration
// is read as declared: accepted, with the reference's answer. The same bytes described in
// kernel order read the other way — K with stride 64 — which the K-major plan refuses: had
// the kernel reading won the tie, the first call would have been refused instead.
TEST(VariantPack, AtNEqualsKTheDeclarationWins) {
  auto built = build_flavor(Flavor::kPlain, {.batch = 1, .m = 40, .n = 64, .k = 64});
  ASSERT_TRUE(built);
  auto call = make_call(built->flavor.graph, 5);
  void* b = call["B"].buffer->data();
  ASSERT_EQ(call["B"].layout, (Layout{{1, 64, 64}, {4096, 1, 64}}));
  const BufferView declared = BufferView::view(b, {1, 64, 64}, {4096, 1, 64});
  expect_legal_and_correct(built->plan, call, pack_with_views(call, {{"B", declared}}),
                           built->flavor.graph);

  call.fill_canary();
  const VariantPack kernel_order =
      pack_with_views(call, {{"B", BufferView::view(b, {1, 64, 64}, {4096, 64, 1})}});
  const Status s =
      built->plan.execute(kernel_order, workspace_of(built->plan, kernel_order), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("major: role B 'B': K stride 64", 0), 0u) << s.message();
  EXPECT_TRUE(call.all_canary());
}

// matmul(A, A): one buffer, two roles — A read K-major, B (the same bytes) N-major — bound
// once, whether as a bare address, a view, or a padded view.
TEST(VariantPack, OneBufferInTwoRoles) {
  Graph g;
  g.set_name("square");
  const std::int64_t pad = 8;
  auto a = g.tensor(TensorAttributes()
                        .set_name("A")
                        .set_dim({2, 48, 48})
                        .set_stride({48 * (48 + pad) + pad, 48 + pad, 1})
                        .set_data_type(DataType::kBFloat16));
  auto d = g.matmul(a, a);
  d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
  ASSERT_TRUE(g.validate());
  auto plan = build(g, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_NE(plan->describe().find("'A'"), std::string::npos);
  auto call = make_call(g, 6);
  expect_legal_and_correct(plan.value(), call, call.pack(), g);
  expect_legal_and_correct(plan.value(), call, call.pack(/*views=*/true), g);
  // The same values copied densely: a view of other strides than declared, still one
  // buffer read in two roles.
  const Layout& padded = call["A"].layout;
  GuardedBuffer dense(2 * 48 * 48 * 2);
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t r = 0; r < 48; ++r) {
      std::memcpy(dense.data() + (b * 48 + r) * 48 * 2,
                  call["A"].buffer->data() + (b * padded.stride[0] + r * padded.stride[1]) * 2,
                  48 * 2);
    }
  }
  const BufferView dense_view = BufferView::view(dense.data(), {2, 48, 48}, {48 * 48, 48, 1});
  expect_legal_and_correct(plan.value(), call, pack_with_views(call, {{"A", dense_view}}), g);
}

// A [1, 1, N] bias may be given as [N], [1, N] or [1, 1, N] (views align to the last axes).
TEST(VariantPack, AuxViewsOfRankOneTwoAndThreeAreOneBias) {
  auto built = build_flavor(Flavor::kAuxColumn,
                            {.batch = 2, .m = 24, .n = 40, .k = 16, .aux_batch_one = true});
  ASSERT_TRUE(built);
  auto call = make_call(built->flavor.graph, 7);
  void* bias = call["aux"].buffer->data();
  const std::vector<std::pair<const char*, BufferView>> views = {
      {"rank 1", BufferView::view(bias, {40}, {1})},
      {"rank 2", BufferView::view(bias, {1, 40}, {40, 1})},
      {"rank 3", BufferView::view(bias, {1, 1, 40}, {40, 40, 1})},
  };
  std::vector<std::uint8_t> first;
  for (const auto& [rank, view] : views) {
    SCOPED_TRACE(rank);
    expect_legal_and_correct(built->plan, call, pack_with_views(call, {{"aux", view}}),
                             built->flavor.graph);
    if (first.empty()) first = payload(call, "D");
    EXPECT_EQ(payload(call, "D"), first);
  }
}

// A pack bound once serves call after call: set_data re-points each slot (found by uid) at
// the next call's buffers, and every call gets its own inputs' answer.
TEST(BoundPack, ReusedAcrossCallsWithSetData) {
  auto built = build_flavor(Flavor::kTapsRow, {.batch = 2, .m = 24, .n = 40, .k = 16});
  ASSERT_TRUE(built);
  const Graph& graph = built->flavor.graph;
  auto first = make_call(graph, 10);
  auto bound = built->plan.bind(first.pack());
  ASSERT_TRUE(bound) << bound.status().message();
  first.fill_canary();
  for (std::uint64_t seed : {11, 12, 13}) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    auto call = make_call(graph, seed);
    for (const auto& t : call.tensors()) {
      auto slot = built->plan.slot_of(t.uid);
      ASSERT_TRUE(slot) << slot.status().message();
      bound->set_data(slot.value(), t.buffer->data());
    }
    const Status s =
        built->plan.execute(bound.value(), workspace_of(built->plan, bound.value()), nullptr);
    ASSERT_TRUE(s) << s.message();
    EXPECT_TRUE(call.matches_reference(graph));
    EXPECT_TRUE(call.outside_untouched());
  }
  EXPECT_TRUE(first.all_canary()) << "a call wrote through a slot it was re-pointed away from";
  EXPECT_EQ(built->plan.slot_of(9999).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(total_deferrals(built->plan), 0u);
}

// Packs compare equal exactly when bind() reads the same from them: the same keys, in the
// same order, with the same addresses, extents, strides and types (Python's bound-pack cache
// keys on this).
TEST(VariantPack, EqualExactlyWhenEveryEntryIsTheSame) {
  int x = 0;
  int y = 0;
  const auto pack = [&](void* d, std::int64_t n, std::int64_t stride, DataType type) {
    VariantPack p;
    p.reserve(2);
    p.set("A", BufferView::view(&x, {1, 4, n}, {4 * n, n, stride}, type));
    p.set(7, BufferView::address(d));
    return p;
  };
  const VariantPack base = pack(&y, 8, 1, DataType::kBFloat16);
  EXPECT_EQ(base, pack(&y, 8, 1, DataType::kBFloat16));
  EXPECT_NE(base, pack(&x, 8, 1, DataType::kBFloat16));  // another address
  EXPECT_NE(base, pack(&y, 9, 1, DataType::kBFloat16));  // another extent
  EXPECT_NE(base, pack(&y, 8, 2, DataType::kBFloat16));  // another stride
  EXPECT_NE(base, pack(&y, 8, 1, DataType::kFloat16));   // another type
  VariantPack by_name;
  by_name.set("A", BufferView::view(&x, {1, 4, 8}, {32, 8, 1}, DataType::kBFloat16));
  by_name.set("B", BufferView::address(&y));  // the same buffer keyed by name, not uid 7
  EXPECT_NE(base, by_name);
  VariantPack reordered;
  reordered.set(7, BufferView::address(&y));
  reordered.set("A", BufferView::view(&x, {1, 4, 8}, {32, 8, 1}, DataType::kBFloat16));
  EXPECT_NE(base, reordered);
  EXPECT_NE(BufferView::address(&y), BufferView::view(&y, {}, {}));  // a bare address is no view
}

}  // namespace
}  // namespace fusedgemm::test
