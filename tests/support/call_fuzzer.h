// The call fuzzer (issue 10): random plans of the oracle's flavors (support/call_oracle.h:
// plain, aux of every broadcast mode, row taps; random majors and batch) x random calls
// drawn around the boundary — views of rank 1 to 3, zero, negative, misaligned and huge
// strides, extents off by one and past the hardware's limits, B in kernel order, wrong
// view types, null buffers, misaligned bases, every role and the workspace placed in one
// arena so that they alias. Each call: the plan's decision against the oracle's; an
// accepted call's outputs against the fp64 reference, read through their views, and every
// arena byte no written role reaches unchanged; a refused call changes no byte.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fusedgemm/device.h"
#include "fusedgemm/plan.h"
#include "fusedgemm/status.h"

namespace fusedgemm::test {

struct FuzzFigures {
  std::int64_t calls = 0;
  std::int64_t accepted = 0;
  std::int64_t refused = 0;
  std::int64_t skipped = 0;              // legal draws that reached past the arena, not executed
  std::int64_t decision_mismatches = 0;  // plan and oracle disagree
  std::int64_t wrong_results = 0;        // accepted and legal, but computed or written wrong
  std::vector<std::string> repros;       // the first few, replayable by seed and call index
};

// Where a call's arena lives: the host device executes on the host arena itself; a CUDA
// device on a device copy (upload before, download after, same offsets).
struct FuzzArena {
  std::function<Status(const std::uint8_t* host, std::size_t bytes)> upload;
  std::function<Status(std::uint8_t* host, std::size_t bytes)> download;
  std::uint8_t* device_base = nullptr;  // null: the host arena is executed on
};

// `calls` calls from `seed` on plans built for `device`. With `only_call` >= 0, only that
// call index is run (a replay of a repro).
FuzzFigures fuzz_calls(std::uint64_t seed, std::int64_t calls, std::shared_ptr<Device> device,
                       const FuzzArena& arena = {}, std::int64_t only_call = -1);

// Bytes of the arena every call's buffers and workspace are placed in.
inline constexpr std::size_t kFuzzArenaBytes = std::size_t{1} << 18;

}  // namespace fusedgemm::test
