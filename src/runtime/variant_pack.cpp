#include "fusedgemm/variant_pack.h"

namespace fusedgemm {

// A handle keys by uid once validate assigned one, else by name.
VariantPack& VariantPack::set(const Tensor& tensor, BufferView buffer) {
  if (tensor->uid()) return set(*tensor->uid(), std::move(buffer));
  return set(tensor->name(), std::move(buffer));
}

VariantPack& VariantPack::set(std::int64_t uid, BufferView buffer) {
  entries_.push_back({uid, {}, std::move(buffer)});
  return *this;
}

VariantPack& VariantPack::set(std::string name, BufferView buffer) {
  entries_.push_back({0, std::move(name), std::move(buffer), true});
  return *this;
}

}  // namespace fusedgemm
