// The Python objects of a plan and a bound pack, shared by plan_bindings.cpp and
// bench_bindings.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "bindings.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::python {

// A plan, the device spelling its arrays must live on, and the array module that turns a
// buffers dict into views (imported once, at build).
struct PyPlan {
  Plan plan;
  std::string device;
  nb::object arrays;
  // What a call with PyTorch tensors needs besides the tensors (fusedgemm._arrays
  // .torch_context: the current-stream getter, its argument, the workspace allocator),
  // made on the first such call; the plan itself stays immutable.
  mutable nb::object torch_context;
};

// A bound pack with what its executes need; immutable.
struct PyBound {
  Plan plan;
  BoundPack pack;
  std::uint64_t workspace_bytes = 0;
  nb::object keepalive;
  nb::object stream_getter;
  nb::object stream_arg;
  nb::object allocator;
};

}  // namespace fusedgemm::python
