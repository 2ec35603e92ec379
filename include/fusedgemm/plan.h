// build() turns a graph into a plan; a plan executes call after call through one path
// that checks every call against the plan's rules before anything is written.
//
//   auto plan = fusedgemm::build(graph, {});            // Result<Plan>
//   VariantPack pack;
//   pack.set(a, a_ptr).set(b, b_ptr).set(d, d_ptr);
//   Status s = plan->execute(pack, {}, stream);        // refused calls name the rule
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusedgemm/context.h"
#include "fusedgemm/decline.h"
#include "fusedgemm/device.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/status.h"
#include "fusedgemm/variant_pack.h"

namespace fusedgemm {

namespace runtime {
struct PlanState;
struct BoundCall;
struct PlanAccess;
}  // namespace runtime

enum class Engine : std::uint8_t { kFused, kFallback };
std::string_view to_string(Engine engine);

// The fused kernel's shape as the cost model would choose it, overridden (tests, benchmarks,
// tuning): each field that is set replaces the cost model's pick, the rest stay its own.
// build() refuses a choice the kernel cannot take (kInvalidArgument, naming the field, the
// numbers and what is legal). `fusedgemm explain` and Plan::describe() print the choice.
struct KernelTuning {
  std::optional<int> tile_m;    // CTA tile rows: 64 (with split_n), 128 or 256
  std::optional<int> tile_n;    // CTA tile columns: 64, 128, 160 (K-major B), 192 or 256
  std::optional<bool> split_n;  // the two consumer warpgroups take column halves, not rows
  // The two consumer warpgroups take whole tiles in turn (one's epilogue runs while the
  // other's MMAs do) instead of halves of every tile.
  std::optional<bool> ping_pong;
  std::optional<int> cluster_m;  // CTAs per cluster along M, sharing B by multicast: 1 or 2
  std::optional<int> cluster_n;  // ... along N, sharing A: 1 or 2 (not both 2)
  std::optional<int> stages;     // shared-memory ring depth
  // Staging buffers per TMA-stored output and consumer, 1 to 8 (8 KB each, taken from the
  // ring): with more, a consumer's epilogue waits less for the stores before it; default 2,
  // but 1 for a ping-pong tile whose ring would lose a stage to the second.
  std::optional<int> staging_buffers;
  // Staging also borrowed from the ring stage a tile's last K step read (kernel kinds where
  // both consumers share each tile and one output is staged with 2 or more buffers): on by
  // default there; false keeps the stage for the producer, true where the kernel cannot
  // borrow is refused.
  std::optional<bool> borrow_staging;
  // Buffers per full 16- or 32-bit aux input and consumer, 0 to 4 (4 KB each, taken from the
  // ring), through which the epilogue reads it (TMA-loaded): with 2, a unit's next aux
  // sub-tile loads while the current one is read; default the cost model's 1 or 2; 0 reads
  // the aux from global memory element by element instead.
  std::optional<int> aux_buffers;
  // Programmatic dependent launch: the kernel may start while the previous kernel on the
  // stream finishes (launch attribute + griddepcontrol); off unless asked for.
  bool dependent_launch = false;
};

struct BuildOptions {
  BuildOptions() = default;
  explicit BuildOptions(std::shared_ptr<Device> d, std::shared_ptr<Context> c = nullptr)
      : device(std::move(d)), context(std::move(c)) {}

  // The device the plan runs on; default_device() when unset.
  std::shared_ptr<Device> device;
  // The kernel cache and JIT settings; a Context made from the environment when unset.
  // Share one across builds so its in-memory cache serves them all.
  std::shared_ptr<Context> context;
  // Unset: the fused engine, or the fallback engine when the fused one declines the graph.
  // kFused fails with kDeclined on a graph the fused engine declines; kFallback runs any
  // valid graph unfused (for tests and benchmarks).
  std::optional<Engine> engine;
  // The fused kernel's tile, cluster and stages; the cost model's choice where unset.
  KernelTuning tuning;
};

struct Workspace {
  void* data = nullptr;
  std::uint64_t bytes = 0;
};

// A variant pack resolved to the plan's buffer order once, so a hot loop pays no lookups.
// Binding also reads every layout-only fact of the call (extents, strides, majors, the
// problem size, kernel arguments, workspace layout): those cannot change while the pack is
// reused, so each execute checks only what can — addresses, device and workspace — and
// still refuses a pack whose layouts break a rule, every time, under that rule.
class BoundPack {
 public:
  struct Buffer {
    void* data = nullptr;
    bool is_view = false;
    int rank = 0;
    std::int64_t shape[3] = {1, 1, 1};
    std::int64_t stride[3] = {1, 1, 1};
    DataType data_type = DataType::kNotSet;
    bool read_only = false;
  };

  std::size_t size() const { return buffers_.size(); }
  const Buffer& operator[](std::size_t slot) const { return buffers_[slot]; }
  // Re-points one buffer, keeping its view (extents, strides, data type and read-only flag:
  // the new memory is taken to be as writable as the bound one); `slot` comes from
  // Plan::slot_of.
  void set_data(std::size_t slot, void* data) { buffers_[slot].data = data; }

 private:
  friend struct runtime::PlanState;
  friend struct runtime::PlanAccess;
  std::vector<Buffer> buffers_;
  std::shared_ptr<const runtime::BoundCall> call_;
};

// What explain says of a call: legal, or the first broken rule with its diagnostic.
struct Verdict {
  std::string rule;     // empty when legal
  std::string message;  // the diagnostic, or "legal"
  bool legal() const { return rule.empty(); }
};

struct DeferralCount {
  std::string_view rule;
  std::uint64_t count = 0;
};

class Plan {
 public:
  Engine engine() const;
  // Why the fused engine refused the graph, when engine() is kFallback.
  const std::optional<Decline>& declined() const;
  // The workspace a call wants: taps keep their CTAs' partials and arrival counters there,
  // so it grows with the call's tiles; and a call whose tiles would leave SMs idle (a
  // decode-size M, or a last wave of tiles under half full) splits K, its work units adding
  // their partial sums there (up to ~17 MB on 132 SMs). The taps' part is required (the
  // `workspace` rule); the split's is optional — a call given less than this runs unsplit,
  // slower and as right. 0 without taps where calls fill whole waves. Its contents need no
  // initialization and may change between calls. The first form is for the declared
  // problem; the second for the problem a bound pack implies (refused when the pack is
  // another plan's).
  std::uint64_t workspace_bytes() const;
  Result<std::uint64_t> workspace_bytes(const BoundPack& pack) const;
  const Device& device() const;

  // Resolves a pack to the plan's buffer order. Keys naming no tensor of the plan, or a
  // tensor given twice, are errors (kIllegalCall); missing tensors are left for the rules.
  Result<BoundPack> bind(const VariantPack& pack) const;
  Result<std::size_t> slot_of(std::int64_t uid) const;

  // Checks every rule, then launches on `stream` (one launch, nothing else). A refused call
  // writes nothing and counts a deferral under the broken rule. Safe from several threads
  // at once; calls that run concurrently on the device need workspaces of their own.
  //
  // CUDA graph capture: an execute on a stream that is being captured (any capture mode)
  // issues only capturable work (the fused engine's one launch; the fallback's step kernels
  // and cuBLASLt GEMMs) and the graph replays it: the rules are checked once, at capture,
  // and the call as bound then — every buffer address, the workspace's address and size,
  // the extents and the kernel arguments — is baked into the graph. So every buffer and the
  // workspace must stay allocated at the same addresses, and the plan alive, for as long as
  // the graph may be launched; new inputs are written into the same buffers. The workspace
  // needs no initialization between replays (taps restart their counts), but replays
  // running at the same time need workspaces of their own, as executes do. build() (compile
  // and load) is not capturable: build every plan before capturing.
  // tests/runtime/cuda_graph_gpu_test.cpp replays every example this way.
  Status execute(const BoundPack& pack, const Workspace& workspace, void* stream) const;
  Status execute(const VariantPack& pack, const Workspace& workspace, void* stream) const;

  // The same rules as execute, launching nothing.
  Verdict explain(const BoundPack& pack, const Workspace& workspace = {}) const;
  Verdict explain(const VariantPack& pack, const Workspace& workspace = {}) const;

  // Refused calls per rule since build, in rule-table order (rules never broken included).
  std::vector<DeferralCount> deferrals() const;

  // The readable recipe: roles, shape rules, argument plan (`fusedgemm explain` prints it).
  std::string describe() const;

 private:
  friend Result<Plan> build(Graph& graph, const BuildOptions& options);
  friend struct runtime::PlanAccess;
  explicit Plan(std::shared_ptr<const runtime::PlanState> state) : state_(std::move(state)) {}
  std::shared_ptr<const runtime::PlanState> state_;
};

// validate -> analyze -> support gate -> tile configuration -> kernel -> recipe -> plan.
// A graph the fused engine declines runs on the fallback engine: Plan::engine() says which
// engine a plan uses and Plan::declined() why the fused one refused.
// build() validates `graph` in place, rewriting what validate() fills in (inferred dims and
// types, assigned uids, the node order) even on a graph validated before: no other thread
// may read, copy or build the same Graph (or its tensors) meanwhile. To build one graph on
// several threads, copy it first and give each thread its copy (Graph's copy constructor).
// The plan keeps nothing of the graph: changing or destroying it later changes no plan.
Result<Plan> build(Graph& graph, const BuildOptions& options = {});

}  // namespace fusedgemm
