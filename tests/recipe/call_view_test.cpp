// resolve_layout(): how one call's buffers become the CallView every rule reads — the given layout
// in declared order, the kernel layout, and the problem the A and B views imply.
#include "recipe/call_view.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "runtime/device.h"
#include "runtime/plan_state.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::recipe {
namespace {

using test::Flavor;
using test::FlavorShape;

// A PlanState (the one execute implementation) built the way build() builds it, so that a
// pack can be bound and resolved by hand.
std::unique_ptr<runtime::PlanState> make_state(Flavor flavor, const FlavorShape& shape) {
  auto fg = test::make_flavor_graph(flavor, shape);
  if (!fg) {
    ADD_FAILURE() << fg.status().message();
    return nullptr;
  }
  auto analysis = fusion::analyze(fg->graph);
  if (!analysis || analysis->decline) {
    ADD_FAILURE() << "analyze failed or declined";
    return nullptr;
  }
  auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
  auto recipe = make_recipe(program, choose_kernel_config(*program, 0).value());
  if (!recipe) {
    ADD_FAILURE() << recipe.status().message();
    return nullptr;
  }
  std::shared_ptr<Device> device = make_host_device();
  runtime::KernelImage image;
  image.program = program;
  for (const auto& role : recipe->roles) image.params.push_back({role.kind, role.index});
  auto kernel = device->load(image);
  if (!kernel) {
    ADD_FAILURE() << kernel.status().message();
    return nullptr;
  }
  return std::make_unique<runtime::PlanState>(Engine::kFused, std::nullopt, device, kernel.value(),
                                              std::move(recipe).value());
}

int role_named(const Recipe& recipe, const std::string& name) {
  for (std::size_t i = 0; i < recipe.roles.size(); ++i) {
    if (recipe.roles[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no role '" << name << "'";
  return 0;
}

// Resolves `pack` against `state`.
CallLayout resolved(const runtime::PlanState& state, const VariantPack& pack) {
  CallLayout layout;
  auto bound = state.bind(pack);
  EXPECT_TRUE(bound) << bound.status().message();
  if (bound) resolve_layout(state.recipe, bound.value(), layout);
  return layout;
}

std::uint8_t g_memory[64];
void* const kAddress = g_memory;

// Plain at batch 2, M 40, N 48, K 32: B declared [2, 32, 48]:[1536, 1, 32] (K-major).
constexpr FlavorShape kShape{.batch = 2, .m = 40, .n = 48, .k = 32};

VariantPack all_addresses() {
  VariantPack pack;
  for (const char* name : {"A", "B", "D"}) pack.set(name, kAddress);
  return pack;
}

TEST(CallView, BareAddressesReadAsDeclaredAndBIsPermutedToKernelOrder) {
  auto state = make_state(Flavor::kPlain, kShape);
  ASSERT_TRUE(state);
  const CallLayout view = resolved(*state, all_addresses());
  const int b = role_named(state->recipe, "B");
  EXPECT_EQ(view.roles[b].given, (Layout{{2, 32, 48}, {1536, 1, 32}}));
  EXPECT_EQ(view.roles[b].kernel, (Layout{{2, 48, 32}, {1536, 32, 1}}));
  EXPECT_EQ(view.problem, (fusion::ProblemShape{2, 40, 48, 32}));
}

TEST(CallView, ABViewsSetTheCallsProblem) {
  auto state = make_state(Flavor::kPlain, kShape);
  ASSERT_TRUE(state);
  VariantPack pack;
  pack.set("A", BufferView::view(kAddress, {3, 1, 16}, {16, 16, 1}));
  pack.set("B", BufferView::view(kAddress, {1, 16, 8}, {128, 1, 16}));
  pack.set("D", kAddress);
  const CallLayout view = resolved(*state, pack);
  EXPECT_EQ(view.problem, (fusion::ProblemShape{3, 1, 8, 16}));
}

TEST(CallView, BViewInKernelOrderIsTakenAsItIs) {
  auto state = make_state(Flavor::kPlain, kShape);
  ASSERT_TRUE(state);
  VariantPack with_view;
  with_view.set("A", kAddress).set("D", kAddress);
  with_view.set("B", BufferView::view(kAddress, {2, 48, 32}, {1536, 32, 1}));
  const CallLayout view = resolved(*state, with_view);
  const int b = role_named(state->recipe, "B");
  EXPECT_EQ(view.roles[b].kernel, (Layout{{2, 48, 32}, {1536, 32, 1}}));
}

TEST(CallView, AtNEqualsKAViewReadsInDeclaredOrder) {
  auto state = make_state(Flavor::kPlain, {.batch = 1, .m = 40, .n = 32, .k = 32});
  ASSERT_TRUE(state);
  const int b = role_named(state->recipe, "B");
  for (const Layout& given :
       {Layout{{1, 32, 32}, {1024, 1, 32}}, Layout{{1, 32, 32}, {1024, 32, 1}}}) {
    SCOPED_TRACE(to_string(given));
    VariantPack pack;
    pack.set("A", kAddress).set("D", kAddress);
    pack.set("B", BufferView::view(kAddress, {1, 32, 32},
                                   {given.stride[0], given.stride[1], given.stride[2]}));
    const CallLayout view = resolved(*state, pack);
    EXPECT_EQ(view.roles[b].kernel, given.permuted({0, 2, 1}));
  }
}

TEST(CallView, ShortAuxViewsAlignToTheLastAxes) {
  auto state = make_state(Flavor::kAuxColumn, kShape);
  ASSERT_TRUE(state);
  const int aux = role_named(state->recipe, "aux");
  VariantPack pack;
  pack.set("A", kAddress).set("B", kAddress).set("D", kAddress);
  pack.set("aux", BufferView::view(kAddress, {48}, {1}));
  const CallLayout view = resolved(*state, pack);
  EXPECT_EQ(view.roles[aux].rank, 1);
  EXPECT_EQ(view.roles[aux].given, (Layout{{1, 1, 48}, {48, 48, 1}}));
}

// A view of rank 4 is the view_rank rule's to refuse; until then it reads as declared and
// indexes nothing outside the three axes a layout has.
TEST(CallView, AViewOfRankFourReadsAsDeclared) {
  auto state = make_state(Flavor::kAuxColumn, kShape);
  ASSERT_TRUE(state);
  const int aux = role_named(state->recipe, "aux");
  VariantPack pack;
  pack.set("A", kAddress).set("B", kAddress).set("D", kAddress);
  pack.set("aux", BufferView::view(kAddress, {1, 1, 1, 48}, {48, 48, 48, 1}));
  const CallLayout view = resolved(*state, pack);
  EXPECT_EQ(view.roles[aux].rank, 4);
  EXPECT_EQ(view.roles[aux].given, state->recipe.roles[aux].declared);
}

}  // namespace
}  // namespace fusedgemm::recipe
