// The buffers of one call, keyed by tensor handle, uid or name (docs/ARCHITECTURE.md, "The
// life of a plan").
//
// A buffer is either a bare device address, read as the tensor's declared layout, or a
// view: address, extents and strides (in elements). A view is given in the graph's declared
// axis order; rank 1 or 2 views of an aux input are aligned to its last axes, so [N],
// [1, N] and [1, 1, N] are the same bias, and a rank-0 view is one element (a scalar).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/tensor.h"

namespace fusedgemm {

struct BufferView {
  void* data = nullptr;
  bool is_view = false;  // false: a bare address, read as the declared layout
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  DataType data_type = DataType::kNotSet;  // checked against the plan's when set
  // The memory may be read, not written (a read-only array): rule read_only refuses it for
  // an output, a tap or a quantized output.
  bool read_only = false;

  static BufferView address(void* data) { return {data, false, {}, {}, DataType::kNotSet}; }
  static BufferView view(void* data, std::vector<std::int64_t> shape,
                         std::vector<std::int64_t> stride, DataType data_type = DataType::kNotSet) {
    return {data, true, std::move(shape), std::move(stride), data_type};
  }
  friend bool operator==(const BufferView&, const BufferView&) = default;
};

class VariantPack {
 public:
  VariantPack& set(const Tensor& tensor, BufferView buffer);
  VariantPack& set(std::int64_t uid, BufferView buffer);
  VariantPack& set(std::string name, BufferView buffer);
  // A bare address, the common case.
  VariantPack& set(const Tensor& tensor, void* data) {
    return set(tensor, BufferView::address(data));
  }
  VariantPack& set(std::int64_t uid, void* data) { return set(uid, BufferView::address(data)); }
  VariantPack& set(std::string name, void* data) {
    return set(std::move(name), BufferView::address(data));
  }
  // Room for `entries` buffers, for callers that know how many they will set.
  void reserve(std::size_t entries) { entries_.reserve(entries); }

  // Keyed by name where `by_name` (set(name), the empty name too: a name no tensor has),
  // else by uid.
  struct Entry {
    std::int64_t uid = 0;
    std::string name;
    BufferView buffer;
    bool by_name = false;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  // The same entries in the same order: packs that bind() turns into the same BoundPack.
  friend bool operator==(const VariantPack&, const VariantPack&) = default;

 private:
  std::vector<Entry> entries_;
};

}  // namespace fusedgemm
