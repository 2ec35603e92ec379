// The Python objects of a plan and a bound pack, shared by plan_bindings.cpp and
// bench_bindings.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "dlpack_exchange.h"
#include "fusedgemm/plan.h"

namespace fusedgemm::python {

// Where an execute given no stream= launches: the array producer's current work stream
// (DLPack's exchange table), a getter's answer (PyTorch's current stream), or the default
// stream when neither is set.
struct StreamSource {
  const dlpack::ExchangeApi* api = nullptr;
  int ordinal = 0;
  nb::object getter;
  nb::object arg;

  void* current() const;
};

// The array type a plan's calls last passed and what reading its arrays needs: its DLPack
// exchange table (null: read through fusedgemm._arrays) and the workspace allocator of a
// call with such arrays (PyTorch's caching allocator, numpy's on the host, or None).
struct ArrayTypeCache {
  nb::object type;
  const dlpack::ExchangeApi* api = nullptr;
  nb::object allocator;
};

// Bound packs of a plan's recent dict calls, keyed by the views they were bound from, so a
// loop that passes the same arrays again skips Plan::bind (its rules on layouts and its TMA
// descriptor encodes: 1.9 us of a 256x256x128 call on the H200, docs/PERF.md). A pack bound
// from equal views is the same pack, and every execute still checks every rule. Holds no
// array: an entry whose memory was freed and handed out again binds what it bound before.
class BoundPackCache {
 public:
  // A few call sites per plan in a loop (a layer's weights, activations, outputs), each
  // with its own buffers; a miss costs the bind it would have cost anyway.
  static constexpr std::size_t kEntries = 16;

  // The addresses, extents, strides and keys of a pack mixed into 64 bits: computed once a
  // call, compared before the packs themselves.
  static std::uint64_t fingerprint_of(const VariantPack& views);
  std::shared_ptr<const BoundPack> find(const VariantPack& views, std::uint64_t fingerprint);
  void insert(std::uint64_t fingerprint, VariantPack views, std::shared_ptr<const BoundPack> pack);

 private:
  struct Entry {
    std::uint64_t fingerprint = 0;  // compared first: most misses differ in an address
    VariantPack views;
    std::shared_ptr<const BoundPack> pack;
    std::uint64_t last_use = 0;
  };
  std::vector<Entry> entries_;
  std::uint64_t clock_ = 0;
};

// A plan, the device spelling its arrays must live on, and the array module that turns a
// buffers dict into views (imported once, at build).
struct PyPlan {
  Plan plan;
  std::string device;
  nb::object arrays;
  // What a call with PyTorch tensors needs besides the tensors (fusedgemm._arrays
  // .torch_context: the current-stream getter, its argument, the workspace allocator),
  // made on the first such call; the plan itself stays immutable (the caches are read
  // and written with the GIL held).
  mutable nb::object torch_context;
  mutable ArrayTypeCache array_type;
  mutable BoundPackCache bound_packs;
};

// A bound pack with what its executes need; immutable.
struct PyBound {
  Plan plan;
  BoundPack pack;
  std::uint64_t workspace_bytes = 0;
  nb::object keepalive;
  StreamSource stream;
  nb::object allocator;
};

}  // namespace fusedgemm::python
