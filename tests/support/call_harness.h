// The buffers of one call on the host device, and the checks every execute test makes:
// random inputs (never zeros), outputs and taps in guarded allocations whose every byte
// holds a canary before the call and whose elements are then poisoned (0xFF), comparison
// of every output and tap with the fp64 reference, and that nothing outside the elements
// (padding, guards) was written.
//
//   auto flavor = make_flavor_graph(Flavor::kTapsRow, shape);
//   auto call = CallBuffers::make(flavor->graph, /*seed=*/7);
//   call->prepare();
//   ASSERT_TRUE(plan->execute(call->pack(), {}, nullptr));
//   EXPECT_TRUE(call->matches_reference(flavor->graph));
//   EXPECT_TRUE(call->outside_untouched());
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fusedgemm/graph.h"
#include "fusedgemm/layout.h"
#include "fusedgemm/plan.h"
#include "fusedgemm/variant_pack.h"
#include "reference/graph_reference.h"

namespace fusedgemm::test {

// Bytes standing in for device memory: `bytes` of payload aligned to 256 bytes, with
// kGuardBytes of guard on either side. A byte outside the payload is never legal to write.
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuardBytes = 256;
  explicit GuardedBuffer(std::size_t bytes);

  std::uint8_t* data() { return storage_.data() + offset_; }
  const std::uint8_t* data() const { return storage_.data() + offset_; }
  std::size_t size() const { return bytes_; }
  // Guard, payload and guard: every byte a stray write could reach first.
  std::uint8_t* whole() { return storage_.data() + offset_ - kGuardBytes; }
  const std::uint8_t* whole() const { return storage_.data() + offset_ - kGuardBytes; }
  std::size_t whole_size() const { return bytes_ + 2 * kGuardBytes; }

 private:
  std::vector<std::uint8_t> storage_;
  std::size_t offset_ = 0;
  std::size_t bytes_ = 0;
};

// The canary: byte i of an allocation (counted from whole()) is kCanary[i % 4].
inline constexpr std::uint8_t kCanary[4] = {0xC3, 0x5A, 0xA5, 0x3C};
// Every byte 0xFF: NaN in every float type, so an element never written cannot pass.
inline constexpr std::uint8_t kPoison = 0xFF;

// Offsets (bytes from data()) of every element of `layout`; fp4 shares bytes.
std::vector<bool> element_bytes(DataType type, const Layout& layout, std::size_t bytes);

struct CallTensor {
  std::string name;
  std::int64_t uid = 0;
  DataType type = DataType::kNotSet;
  Layout layout;  // as the call gives it, in declared axis order
  bool written = false;
  std::unique_ptr<GuardedBuffer> buffer;
};

class CallBuffers {
 public:
  // Random inputs for every input of `graph` from `seed` (0xFF in any padding between their
  // elements); a guarded buffer for every output and tap, each in the graph's declared
  // layout, prepared. @pre graph is validated.
  static Result<CallBuffers> make(const Graph& graph, std::uint64_t seed);

  CallTensor& operator[](std::string_view name);
  const CallTensor& operator[](std::string_view name) const;
  std::vector<CallTensor>& tensors() { return tensors_; }
  const std::vector<CallTensor>& tensors() const { return tensors_; }

  // Canary over every written allocation, then 0xFF over each element.
  void prepare();
  // Canary over every byte of every written allocation (guards and elements alike).
  void fill_canary();

  // Every tensor by name: bare addresses, or views of the call layout in declared order.
  VariantPack pack(bool views = false) const;
  // The same buffers keyed by the given graph's tensor handles (uid after validate).
  VariantPack pack_by_handle(const Graph& graph) const;

  // Each written tensor agrees with the reference of `graph` (the graph the inputs were
  // drawn for): compare() passes and no element is NaN or inf.
  ::testing::AssertionResult matches_reference(const Graph& graph) const;
  // Every byte of every written allocation that is not an element still holds the canary.
  ::testing::AssertionResult outside_untouched() const;
  // Every byte of every written allocation holds the canary (a refused call wrote nothing).
  ::testing::AssertionResult all_canary() const;
  // The inputs as the reference reads them.
  const reference::HostTensors& inputs() const { return inputs_; }

 private:
  std::vector<CallTensor> tensors_;
  reference::HostTensors inputs_;
};

// Every byte of every allocation the call writes (guard, payload, guard), as the host holds
// it: two runs of one call compare equal when they wrote the same bits.
std::vector<std::vector<std::uint8_t>> written_bytes(const CallBuffers& call);

// The counts of Plan::deferrals(), by rule id.
std::map<std::string, std::uint64_t> deferral_map(const Plan& plan);
// Sum of every deferral counter.
std::uint64_t total_deferrals(const Plan& plan);

// A workspace of the size a call with `pack` needs (Plan::workspace_bytes of the bound
// pack; the declared problem's when the pack does not bind), per test thread, refilled with
// fresh garbage every time: no call may depend on what a workspace held before.
Workspace workspace_of(const Plan& plan, const BoundPack& pack);
Workspace workspace_of(const Plan& plan, const VariantPack& pack);

}  // namespace fusedgemm::test
