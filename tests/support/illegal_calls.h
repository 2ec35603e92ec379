// The illegal-call table: at least one call per call row of recipe::rule_table(), each a
// legal call of a flavor with one change that breaks the row. The host test
// (runtime/illegal_call_test.cpp) and the GPU test (runtime/illegal_call_gpu_test.cpp) run
// the same table. Also what host tests of single calls share: a call's pack with some
// buffers changed, and a host plan with the buffers of a call, expected computed or refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fusedgemm/graph.h"
#include "fusedgemm/plan.h"
#include "fusedgemm/variant_pack.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {

// Buffers replaced in the call's pack: a view (or null address), or nullopt to leave the
// tensor out of the pack.
using Changes = std::vector<std::pair<std::string, std::optional<BufferView>>>;

// The call's buffers, by name, with `changes` applied; bare addresses, or views of the call
// layouts when `views`.
VariantPack pack_with(const CallBuffers& call, const Changes& changes, bool views);

// A view of `name`'s buffer, `offset_bytes` past its start.
BufferView view(CallBuffers& call, const std::string& name, std::vector<std::int64_t> shape,
                std::vector<std::int64_t> stride, DataType type = DataType::kNotSet,
                std::ptrdiff_t offset_bytes = 0);

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

const std::vector<IllegalCase>& illegal_cases();

// A plan of `flavor` at `plan_shape` on the host device, and the buffers of a call at
// `call_shape` (declared layouts of that size).
struct Setup {
  Plan plan;
  FlavorGraph call_graph;
  CallBuffers call;
};

Result<Setup> setup(Flavor flavor, const FlavorShape& plan_shape, const FlavorShape& call_shape,
                    std::uint64_t seed = 5);

// A legal call: computed right, nothing outside the elements written, no deferral.
void expect_computed(Setup& s, const VariantPack& pack);
// The same of `call`'s buffers as they are (prepared, or holding what an in-place aux reads),
// against the reference of `graph`.
void expect_computed(const Plan& plan, const CallBuffers& call, const Graph& graph,
                     const VariantPack& pack);

// Refused by `rule`, naming `role` and `tensor` (no role: a rule of the whole call) and
// `seen`, as explain says too, with nothing written.
void expect_refused(Setup& s, const VariantPack& pack, const std::string& rule,
                    const std::string& role, const std::string& tensor, const std::string& seen);

std::string case_name(const IllegalCase& c);

// c.seen with "{uid}" replaced by the tensor's uid in `graph`.
std::string expected_seen(const IllegalCase& c, const Graph& graph);

}  // namespace fusedgemm::test
