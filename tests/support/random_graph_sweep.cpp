#include "support/random_graph_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "api/kernel_build.h"
#include "recipe/rules.h"
#include "runtime/device.h"
#include "runtime/plan_state.h"

namespace fusedgemm::test {

bool is_rule(const std::string& id) {
  const auto table = recipe::rule_table();
  return std::any_of(table.begin(), table.end(), [&](const recipe::Rule& r) { return r.id == id; });
}

Status run_on_host(const Plan& plan, CallBuffers& /*call*/, const VariantPack& pack) {
  return plan.execute(pack, workspace_of(plan, pack), nullptr);
}

std::string SweepTally::summary() const {
  return fmt::format(
      "{} graphs: {} fused, {} declined by their rule, {} by a kernel_* rule; {} executions",
      graphs, fused, declined, kernel_declined, executions);
}

VariantPack live_pack(CallBuffers& call, const Plan& plan, bool views) {
  VariantPack pack;
  for (auto& t : call.tensors()) {
    if (!plan.slot_of(t.uid)) continue;
    void* data = t.buffer->data();
    const auto& l = t.layout;
    if (views) {
      pack.set(t.name, BufferView::view(data, {l.shape[0], l.shape[1], l.shape[2]},
                                        {l.stride[0], l.stride[1], l.stride[2]}, t.type));
    } else {
      pack.set(t.name, data);
    }
  }
  return pack;
}

void sweep_seed(const std::shared_ptr<Device>& device, std::uint64_t seed,
                const SweepCallRunner& run, SweepTally& tally, std::vector<SweepRun>* written) {
  auto rg = make_random_graph(seed);
  ASSERT_TRUE(rg) << "seed " << seed << ": " << rg.status().message();
  SCOPED_TRACE(fmt::format("seed {}: {}", rg->seed, rg->summary));
  ++tally.graphs;
  // A declined graph runs on the fallback engine, naming the rule; a fusable one runs
  // fused and, forced, on the fallback too. Every run matches the reference.
  auto plan = build(rg->graph, BuildOptions(device));
  ASSERT_TRUE(plan) << plan.status().message();
  const bool fusable = rg->expected_decline.empty();
  if (!fusable) {
    EXPECT_EQ(plan->engine(), Engine::kFallback);
    ASSERT_TRUE(plan->declined().has_value()) << "expected a decline by " << rg->expected_decline;
    EXPECT_TRUE(is_rule(plan->declined()->rule)) << plan->declined()->message;
    EXPECT_EQ(plan->declined()->rule, rg->expected_decline) << plan->declined()->message;
    ++tally.declined;
  } else if (plan->engine() == Engine::kFallback && !device->is_host()) {
    // A GPU's kernel generator may refuse what the host device interprets (fp4 operands,
    // say): build() declines the graph by that kernel_* rule and it runs on the fallback.
    ASSERT_TRUE(plan->declined().has_value());
    EXPECT_EQ(plan->declined()->rule.rfind("kernel_", 0), 0u) << plan->declined()->message;
    ++tally.kernel_declined;
  } else {
    EXPECT_EQ(plan->engine(), Engine::kFused)
        << (plan->declined() ? plan->declined()->message : std::string());
    ++tally.fused;
    // The host device generates no kernel: generate its source here, so that the generator
    // refusing a graph the gate passed (which fails build() on a GPU) fails CI too. Only a
    // kernel_* id is a refusal build() declines on a GPU.
    if (device->is_host() && plan->engine() == Engine::kFused) {
      auto source = api::generate_fused_source(runtime::PlanAccess::state(plan.value()).recipe);
      if (!source) {
        EXPECT_EQ(source.status().code(), ErrorCode::kUnavailable) << source.status().message();
        EXPECT_EQ(source.status().message().rfind("kernel_", 0), 0u) << source.status().message();
        ++tally.kernel_declined;
      }
    }
  }
  std::vector<Plan> plans{std::move(plan.value())};
  if (plans[0].engine() == Engine::kFused) {
    BuildOptions forced(device);
    forced.engine = Engine::kFallback;
    auto fallback = build(rg->graph, forced);
    ASSERT_TRUE(fallback) << fallback.status().message();
    plans.push_back(std::move(fallback.value()));
  }
  for (const Plan& p : plans) {
    SCOPED_TRACE(to_string(p.engine()));
    auto call = CallBuffers::make(rg->graph, seed);
    ASSERT_TRUE(call) << call.status().message();
    call->prepare();
    const Status s = run(p, call.value(), live_pack(call.value(), p, seed % 2 == 1));
    ASSERT_TRUE(s) << s.message();
    ++tally.executions;
    EXPECT_EQ(total_deferrals(p), 0u);
    EXPECT_TRUE(call->matches_reference(rg->graph));
    EXPECT_TRUE(call->outside_untouched());
    if (written == nullptr) continue;
    SweepRun out{p.engine(), {}, {}, {}};
    for (const CallTensor& t : call->tensors()) {
      if (!t.written) continue;
      reference::HostTensor host{t.type, t.layout, {}};
      host.bytes.assign(t.buffer->data(), t.buffer->data() + t.buffer->size());
      out.written.push_back(std::move(host));
      out.uids.push_back(t.uid);
    }
    auto expected = reference::evaluate(rg->graph, call->inputs());
    ASSERT_TRUE(expected) << expected.status().message();
    out.expected = expected->outputs();
    written->push_back(std::move(out));
  }
}

}  // namespace fusedgemm::test
