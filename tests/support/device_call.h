// A call's guarded buffers (support/call_harness.h) mirrored on a CUDA device, so the GPU
// tests check outputs, poison and guards exactly as the host tests do. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "fusedgemm/plan.h"
#include "runtime/cuda_device.h"
#include "support/call_harness.h"
#include "support/warming_device.h"

namespace fusedgemm::test {

// A fixture on CUDA device 0: every test of it skips cleanly where there is none (and runs
// on the cache-warming device where FUSEDGEMM_TEST_WARM_SM_COUNT asks for it).
template <class Base = ::testing::Test>
class OnGpu : public Base {
 protected:
  void SetUp() override {
    if (auto warming = warming_device_from_environment()) {
      device_ = warming;
      return;
    }
    auto device = make_cuda_device(0);
    if (!device) GTEST_SKIP() << device.status().message();
    device_ = device.value();
  }
  std::shared_ptr<Device> device_;
};

// Every guarded allocation of a call mirrored on the device: guard, payload, guard, so a
// stray write lands in a guard the host checks after copying it back.
class DeviceCall {
 public:
  // Allocates the device copy of every allocation of `call`; status() says whether it could.
  DeviceCall(std::shared_ptr<Device> device, CallBuffers& call)
      : device_(std::move(device)), call_(call) {
    for (auto& t : call_.tensors()) {
      auto data = runtime::cuda_test::allocate(*device_, t.buffer->whole_size());
      if (!data) {
        status_ = data.status();
        return;
      }
      whole_.push_back(data.value());
    }
  }
  DeviceCall(const DeviceCall&) = delete;
  DeviceCall& operator=(const DeviceCall&) = delete;
  ~DeviceCall() {
    for (void* p : whole_) (void)runtime::cuda_test::release(*device_, p);
    if (workspace_ != nullptr) (void)runtime::cuda_test::release(*device_, workspace_);
  }

  const Status& status() const { return status_; }

  // Copies every allocation as the host holds it (inputs; outputs with their canary and
  // poison) to the device. May be repeated, e.g. after CallBuffers::prepare().
  Status upload() {
    FG_TRY(status_);
    auto& tensors = call_.tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      FG_TRY(runtime::cuda_test::copy_to_device(*device_, whole_[i], tensors[i].buffer->whole(),
                                                tensors[i].buffer->whole_size()));
    }
    return Status::ok();
  }

  // Device payload addresses, keyed by name; with `plan`, only the tensors it has (an input
  // that feeds only dead nodes is not one of them).
  VariantPack pack(const Plan* plan = nullptr) const {
    VariantPack pack;
    const auto& tensors = call_.tensors();
    for (std::size_t i = 0; i < tensors.size() && i < whole_.size(); ++i) {
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
      if (e.by_name) {
        out.set(e.name, std::move(view));
      } else {
        out.set(e.uid, std::move(view));
      }
    }
    return out;
  }

  // A device workspace of `bytes` (none for 0), kept and grown across calls, freed with the
  // call; with `garbage`, refilled with fresh random bytes from it every time.
  Result<Workspace> workspace(std::uint64_t bytes, std::mt19937_64* garbage = nullptr) {
    if (bytes == 0) return Workspace{};
    if (workspace_bytes_ < bytes) {
      if (workspace_ != nullptr) (void)runtime::cuda_test::release(*device_, workspace_);
      workspace_ = nullptr;
      workspace_bytes_ = 0;
      FG_ASSIGN_OR_RETURN(workspace_, runtime::cuda_test::allocate(*device_, bytes));
      workspace_bytes_ = bytes;
    }
    if (garbage != nullptr) {
      std::vector<std::uint64_t> words((bytes + 7) / 8);
      for (auto& w : words) w = (*garbage)();
      FG_TRY(runtime::cuda_test::copy_to_device(*device_, workspace_, words.data(), bytes));
    }
    return Workspace{workspace_, bytes};
  }

  // Copies every written allocation, guards included, back over the host's.
  Status download() {
    FG_TRY(status_);
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
  Status status_ = Status::ok();
  void* workspace_ = nullptr;
  std::uint64_t workspace_bytes_ = 0;
};

}  // namespace fusedgemm::test
