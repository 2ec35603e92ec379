// One seed of the random-graph differential sweep, on any device: the graph of
// make_random_graph(seed) builds, on the fused engine or declined by the rule the generator
// broke (then on the fallback); a fusable one is also forced onto the fallback engine; and
// every plan's call, inputs drawn from the seed and outputs poisoned and guarded
// (support/call_harness.h), matches the fp64 reference, leaves padding and guards
// untouched and counts no deferral. The host sweep (RandomGraph.*, support/
// random_graph_test.cpp) runs it on the host device, the GPU sweep (DifferentialGpu.
// RandomGraphSweep, tests/fallback/differential_gpu_test.cpp) on a CUDA device; each
// supplies only how one call is run there. A failure names the seed and the graph.
//
//   SweepTally tally;
//   for (std::uint64_t seed = 0; seed < 300; ++seed) sweep_seed(device, seed, run_on_host, tally);
//   std::printf("%s\n", tally.summary().c_str());
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fusedgemm/device.h"
#include "fusedgemm/plan.h"
#include "fusedgemm/variant_pack.h"
#include "reference/graph_reference.h"
#include "support/call_harness.h"
#include "support/random_graph.h"

namespace fusedgemm::test {

// Runs one call of `plan` with the inputs and poisoned outputs `call` holds: `pack` keys
// every tensor of the plan by name, at its host address (bare, or a view of the call's
// layout in declared order). Returns what execute returned; afterwards `call`'s host
// buffers hold what the call wrote (a device runner copies them back).
using SweepCallRunner =
    std::function<Status(const Plan& plan, CallBuffers& call, const VariantPack& pack)>;

// The host device's runner: execute on the host buffers with a garbage workspace.
Status run_on_host(const Plan& plan, CallBuffers& call, const VariantPack& pack);

// What one plan of a seed wrote: a host copy of every written tensor, in the call's order.
struct SweepRun {
  Engine engine = Engine::kFused;
  std::vector<reference::HostTensor> written;
  std::vector<std::int64_t> uids;  // each written tensor's
  // The fp64 reference of the seed's graph on the call's inputs (the same for every plan).
  std::vector<reference::OutputValues> expected;
};

struct SweepTally {
  std::uint64_t graphs = 0;
  std::uint64_t executions = 0;
  std::uint64_t fused = 0;  // graphs that ran on the fused engine (and on the fallback)
  // Graphs declined by the rule the generator broke, which ran on the fallback.
  std::uint64_t declined = 0;
  // Fusable graphs the kernel generator refused by a kernel_* rule: on a CUDA device they ran
  // on the fallback; the host device builds them fused (it generates no kernel) and the
  // sweep generates their source to see the refusal (counted in `fused` too).
  std::uint64_t kernel_declined = 0;
  // "1000 graphs: 812 fused, 188 declined by their rule, 0 by a kernel_* rule; 1812 executions"
  std::string summary() const;
};

// The sweep of one seed on `device`, each call run by `run`. With `written`, each plan that
// ran adds what it wrote (the fused plan first), for comparing the engines with each other.
void sweep_seed(const std::shared_ptr<Device>& device, std::uint64_t seed,
                const SweepCallRunner& run, SweepTally& tally,
                std::vector<SweepRun>* written = nullptr);

// Whether `id` names a row of the rule table (src/recipe/rules.cpp).
bool is_rule(const std::string& id);

// The call's buffers the plan knows, keyed by name at their host addresses: bare, or with
// `views` as views of the call layout. A dead node's inputs are no tensor of the plan.
VariantPack live_pack(CallBuffers& call, const Plan& plan, bool views);

}  // namespace fusedgemm::test
