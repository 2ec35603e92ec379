// A call's guarded buffers (support/call_harness.h) mirrored on a CUDA device, so the GPU
// tests check outputs, poison and guards exactly as the host tests do. Test-only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fusedgemm/plan.h"
#include "runtime/cuda_device.h"
#include "support/call_harness.h"

namespace fusedgemm::test {

// Every guarded allocation of a call mirrored on the device: guard, payload, guard, so a
// stray write lands in a guard the host checks after copying it back.
class DeviceCall {
 public:
  DeviceCall(std::shared_ptr<Device> device, CallBuffers& call)
      : device_(std::move(device)), call_(call) {}
  DeviceCall(const DeviceCall&) = delete;
  DeviceCall& operator=(const DeviceCall&) = delete;
  ~DeviceCall() {
    for (void* p : whole_) (void)runtime::cuda_test::release(*device_, p);
  }

  // Uploads every tensor (inputs, and outputs as prepared: canary and poison).
  Status upload() {
    for (auto& t : call_.tensors()) {
      auto data = runtime::cuda_test::allocate(*device_, t.buffer->whole_size());
      FG_TRY(data.status());
      whole_.push_back(data.value());
      FG_TRY(runtime::cuda_test::copy_to_device(*device_, data.value(), t.buffer->whole(),
                                                t.buffer->whole_size()));
    }
    return Status::ok();
  }

  // Device payload addresses, keyed by name; with `plan`, only the tensors it has (an input
  // that feeds only dead nodes is not one of them).
  VariantPack pack(const Plan* plan = nullptr) const {
    VariantPack pack;
    const auto& tensors = call_.tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (plan != nullptr && !plan->slot_of(tensors[i].uid)) continue;
      pack.set(tensors[i].name, static_cast<std::uint8_t*>(whole_[i]) + GuardedBuffer::kGuardBytes);
    }
    return pack;
  }

  // `pack` (of host addresses into this call's buffers) with every address moved to the
  // device copy of its buffer; a null address stays null.
  VariantPack on_device(const VariantPack& pack) const {
    VariantPack out;
    for (const auto& e : pack.entries()) {
      BufferView view = e.buffer;
      view.data = device_address(view.data);
      if (e.name.empty()) {
        out.set(e.uid, std::move(view));
      } else {
        out.set(e.name, std::move(view));
      }
    }
    return out;
  }

  // A device workspace of `bytes` (none for 0), freed with the call.
  Result<Workspace> workspace(std::uint64_t bytes) {
    if (bytes == 0) return Workspace{};
    auto data = runtime::cuda_test::allocate(*device_, bytes);
    FG_TRY(data.status());
    whole_.push_back(data.value());
    return Workspace{data.value(), bytes};
  }

  // Copies every written allocation, guards included, back over the host's.
  Status download() {
    FG_TRY(runtime::cuda_test::synchronize(*device_));
    auto& tensors = call_.tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].written) continue;
      FG_TRY(runtime::cuda_test::copy_to_host(*device_, tensors[i].buffer->whole(), whole_[i],
                                              tensors[i].buffer->whole_size()));
    }
    return Status::ok();
  }

 private:
  void* device_address(const void* host) const {
    if (host == nullptr) return nullptr;
    const auto* p = static_cast<const std::uint8_t*>(host);
    const auto& tensors = call_.tensors();
    for (std::size_t i = 0; i < tensors.size() && i < whole_.size(); ++i) {
      const std::uint8_t* lo = tensors[i].buffer->whole();
      if (p >= lo && p < lo + tensors[i].buffer->whole_size()) {
        return static_cast<std::uint8_t*>(whole_[i]) + (p - lo);
      }
    }
    return const_cast<void*>(host);
  }

  std::shared_ptr<Device> device_;
  CallBuffers& call_;
  std::vector<void*> whole_;
};

}  // namespace fusedgemm::test
