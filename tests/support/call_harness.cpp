#include "support/call_harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "reference/compare.h"

namespace fusedgemm::test {
namespace {

constexpr std::size_t kAlignBytes = 256;

bool holds_canary(const std::uint8_t* whole, std::size_t i) {
  return whole[i] == kCanary[i % 4];
}

}  // namespace

GuardedBuffer::GuardedBuffer(std::size_t bytes)
    : storage_(bytes + 2 * kGuardBytes + kAlignBytes), bytes_(bytes) {
  const auto base = reinterpret_cast<std::uintptr_t>(storage_.data()) + kGuardBytes;
  offset_ = kGuardBytes + (kAlignBytes - base % kAlignBytes) % kAlignBytes;
}

std::vector<bool> element_bytes(DataType type, const Layout& layout, std::size_t bytes) {
  std::vector<bool> mask(bytes, false);
  const int bits = bits_of(type);
  for (std::int64_t b = 0; b < layout.shape[0]; ++b) {
    for (std::int64_t r = 0; r < layout.shape[1]; ++r) {
      for (std::int64_t c = 0; c < layout.shape[2]; ++c) {
        const std::int64_t e = b * layout.stride[0] + r * layout.stride[1] + c * layout.stride[2];
        const std::int64_t first = e * bits / 8;
        const std::int64_t last = (e * bits + bits - 1) / 8;
        for (std::int64_t i = first; i <= last && i < static_cast<std::int64_t>(bytes); ++i) {
          mask[static_cast<std::size_t>(i)] = true;
        }
      }
    }
  }
  return mask;
}

Result<CallBuffers> CallBuffers::make(const Graph& graph, std::uint64_t seed) {
  CallBuffers call;
  FG_ASSIGN_OR_RETURN(call.inputs_, reference::make_random_inputs(graph, seed));
  for (const Tensor& t : graph.tensors()) {
    auto input = call.inputs_.find(*t->uid());
    const bool is_input = input != call.inputs_.end();
    if (!is_input && !t->is_output()) continue;
    CallTensor ct;
    ct.name = t->name();
    ct.uid = *t->uid();
    ct.type = t->data_type();
    ct.layout = t->layout();
    ct.written = !is_input;
    ct.buffer = std::make_unique<GuardedBuffer>(
        static_cast<std::size_t>(reference::storage_bytes(ct.type, ct.layout)));
    if (is_input) {
      // Padding between an input's elements holds 0xFF (NaN): a kernel that reads it fails.
      std::memcpy(ct.buffer->data(), input->second.bytes.data(), ct.buffer->size());
      const auto mask = element_bytes(ct.type, ct.layout, ct.buffer->size());
      for (std::size_t i = 0; i < mask.size(); ++i) {
        if (!mask[i]) ct.buffer->data()[i] = kPoison;
      }
    }
    call.tensors_.push_back(std::move(ct));
  }
  call.prepare();
  return call;
}

CallTensor& CallBuffers::operator[](std::string_view name) {
  for (auto& t : tensors_) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor '" << name << "' in the call";
  return tensors_.front();
}

const CallTensor& CallBuffers::operator[](std::string_view name) const {
  return const_cast<CallBuffers&>(*this)[name];
}

void CallBuffers::fill_canary() {
  for (auto& t : tensors_) {
    if (!t.written) continue;
    std::uint8_t* whole = t.buffer->whole();
    for (std::size_t i = 0; i < t.buffer->whole_size(); ++i) whole[i] = kCanary[i % 4];
  }
}

void CallBuffers::prepare() {
  fill_canary();
  for (auto& t : tensors_) {
    if (!t.written) continue;
    const auto mask = element_bytes(t.type, t.layout, t.buffer->size());
    for (std::size_t i = 0; i < mask.size(); ++i) {
      if (mask[i]) t.buffer->data()[i] = kPoison;
    }
  }
}

VariantPack CallBuffers::pack(bool views) const {
  VariantPack pack;
  for (const auto& t : tensors_) {
    void* data = t.buffer->data();
    if (views) {
      const auto& l = t.layout;
      pack.set(t.name, BufferView::view(data, {l.shape[0], l.shape[1], l.shape[2]},
                                        {l.stride[0], l.stride[1], l.stride[2]}, t.type));
    } else {
      pack.set(t.name, data);
    }
  }
  return pack;
}

VariantPack CallBuffers::pack_by_handle(const Graph& graph) const {
  VariantPack pack;
  for (const auto& t : tensors_) {
    auto handle = graph.find_tensor(t.name);
    if (!handle) {
      ADD_FAILURE() << handle.status().message();
      continue;
    }
    pack.set(handle.value(), static_cast<void*>(t.buffer->data()));
  }
  return pack;
}

::testing::AssertionResult CallBuffers::matches_reference(const Graph& graph) const {
  auto expected = reference::evaluate(graph, inputs_);
  if (!expected) return ::testing::AssertionFailure() << expected.status().message();
  std::string failures;
  int checked = 0;
  for (const auto& want : expected->outputs()) {
    const CallTensor* got = nullptr;
    for (const auto& t : tensors_) {
      if (t.uid == want.uid && t.written) got = &t;
    }
    if (got == nullptr) {
      failures += fmt::format("\n  output uid {} has no buffer in the call", want.uid);
      continue;
    }
    reference::HostTensor host;
    host.type = got->type;
    host.layout = got->layout;
    host.bytes.assign(got->buffer->data(), got->buffer->data() + got->buffer->size());
    const auto cmp = reference::compare(host, want);
    std::int64_t non_finite = 0;
    for (std::int64_t b = 0; b < want.dims[0]; ++b) {
      for (std::int64_t r = 0; r < want.dims[1]; ++r) {
        for (std::int64_t c = 0; c < want.dims[2]; ++c) {
          non_finite += std::isfinite(host.at(b, r, c)) ? 0 : 1;
        }
      }
    }
    ++checked;
    if (!cmp.passed() || non_finite != 0) {
      failures += fmt::format("\n  '{}' ({}): {}, {} non-finite", got->name, to_string(got->type),
                              cmp.summary(), non_finite);
    }
  }
  if (checked == 0) failures += "\n  the reference has no outputs";
  if (!failures.empty()) return ::testing::AssertionFailure() << "mismatch:" << failures;
  return ::testing::AssertionSuccess() << checked << " outputs match";
}

::testing::AssertionResult CallBuffers::outside_untouched() const {
  std::string failures;
  for (const auto& t : tensors_) {
    if (!t.written) continue;
    const auto mask = element_bytes(t.type, t.layout, t.buffer->size());
    const std::uint8_t* whole = t.buffer->whole();
    std::int64_t changed = 0;
    std::int64_t first = -1;
    for (std::size_t i = 0; i < t.buffer->whole_size(); ++i) {
      const bool guard =
          i < GuardedBuffer::kGuardBytes || i >= GuardedBuffer::kGuardBytes + t.buffer->size();
      if (!guard && mask[i - GuardedBuffer::kGuardBytes]) continue;
      if (!holds_canary(whole, i)) {
        ++changed;
        if (first < 0) first = static_cast<std::int64_t>(i) - GuardedBuffer::kGuardBytes;
      }
    }
    if (changed != 0) {
      failures += fmt::format(
          "\n  '{}': {} bytes outside its elements written (first at byte {} "
          "of the payload)",
          t.name, changed, first);
    }
  }
  if (!failures.empty()) return ::testing::AssertionFailure() << "stray writes:" << failures;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult CallBuffers::all_canary() const {
  std::string failures;
  for (const auto& t : tensors_) {
    if (!t.written) continue;
    const std::uint8_t* whole = t.buffer->whole();
    std::int64_t changed = 0;
    for (std::size_t i = 0; i < t.buffer->whole_size(); ++i) changed += !holds_canary(whole, i);
    if (changed != 0) failures += fmt::format("\n  '{}': {} bytes written", t.name, changed);
  }
  if (!failures.empty())
    return ::testing::AssertionFailure() << "a refused call wrote:" << failures;
  return ::testing::AssertionSuccess();
}

std::map<std::string, std::uint64_t> deferral_map(const Plan& plan) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& d : plan.deferrals()) counts[std::string(d.rule)] = d.count;
  return counts;
}

std::vector<std::vector<std::uint8_t>> written_bytes(const CallBuffers& call) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const CallTensor& t : call.tensors()) {
    if (!t.written) continue;
    out.emplace_back(t.buffer->whole(), t.buffer->whole() + t.buffer->whole_size());
  }
  return out;
}

std::uint64_t total_deferrals(const Plan& plan) {
  std::uint64_t total = 0;
  for (const auto& d : plan.deferrals()) total += d.count;
  return total;
}

Workspace workspace_of(const Plan& plan, const BoundPack& pack) {
  const auto needed = plan.workspace_bytes(pack);
  const std::uint64_t bytes = needed ? needed.value() : plan.workspace_bytes();
  if (bytes == 0) return {};
  // 64-bit words keep the base 16-byte aligned (operator new's alignment).
  static thread_local std::vector<std::uint64_t> storage;
  static thread_local std::uint64_t garbage = 0x9E3779B97F4A7C15ull;
  storage.resize((bytes + 7) / 8);
  for (auto& word : storage) {
    garbage ^= garbage << 13;
    garbage ^= garbage >> 7;
    garbage ^= garbage << 17;
    word = garbage;
  }
  return {storage.data(), bytes};
}

Workspace workspace_of(const Plan& plan, const VariantPack& pack) {
  const auto bound = plan.bind(pack);
  if (!bound) return workspace_of(plan, BoundPack{});
  return workspace_of(plan, bound.value());
}

}  // namespace fusedgemm::test
