// The promise behind one key of a Context's memory map, where every caller of the key
// shares one std::shared_future of its compile. The caller that inserted the key's slot owns
// it and must settle it however it leaves: a promise destroyed unset hands std::future_error
// to every caller waiting on the key, and to every later one while the slot stays. So the
// owner holds a SlotPromise, which on an exception erases the slot and settles it with an
// error value.
#pragma once

#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "fusedgemm/status.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit {

using SharedKernel = std::shared_ptr<const CompiledKernel>;
using SharedKernelResult = std::shared_future<Result<SharedKernel>>;
// Key -> the kernel, or its compile in flight.
using KernelSlots = std::unordered_map<std::string, SharedKernelResult>;

// `Mutex` guards the map: std::mutex, or in a test one whose lock() throws.
template <class Mutex>
class SlotPromise {
 public:
  // `name` (the kernel's) goes into the error waiters get when the owner leaves by an
  // exception. The mutex, the map and `name` must outlive this object.
  SlotPromise(Mutex& mutex, KernelSlots& slots, const std::string& name)
      : mutex_(mutex), slots_(slots), name_(name), future_(promise_.get_future().share()) {}
  ~SlotPromise() {
    if (key_ != nullptr && !settled_) abandon();
  }
  SlotPromise(const SlotPromise&) = delete;
  SlotPromise& operator=(const SlotPromise&) = delete;

  // What to insert at the key, whole (`try_emplace(key, future())`): an insert that throws
  // then leaves no slot, never one holding an empty future.
  const SharedKernelResult& future() const { return future_; }

  // Called under the map's lock once future() is in the map at `key` (which must outlive
  // this object): from then on this object settles that slot.
  void claim(const std::string& key) noexcept { key_ = &key; }
  bool claimed() const noexcept { return key_ != nullptr; }

  // Hands `kernel` to every waiter; the slot stays, so later callers hit it.
  void keep(SharedKernel kernel) {
    promise_.set_value(std::move(kernel));
    settled_ = true;
  }

  // Erases the slot, so a later caller compiles again, then hands `status` to every waiter.
  void fail(const Status& status) noexcept {
    erase();
    settle(status);
  }

 private:
  void erase() noexcept {
    if (key_ == nullptr) return;  // not this object's slot
    try {
      const std::lock_guard<Mutex> lock(mutex_);
      slots_.erase(*key_);
    } catch (...) {
      // The lock failed (a broken mutex): the slot stays, and the error settle() puts in it
      // reaches later callers of the key too, who get it rather than a wait.
    }
  }

  void settle(const Status& status) noexcept {
    try {
      promise_.set_value(status);
    } catch (...) {
      // No memory for a copy of the message: the code alone still reaches every waiter.
      try {
        promise_.set_value(Status(status.code(), std::string()));
      } catch (...) {  // only if the promise was settled already
      }
    }
    settled_ = true;
  }

  // The owner left by an exception (which goes on to its caller) before settling the slot.
  void abandon() noexcept {
    Status status(ErrorCode::kInternal, std::string());
    try {
      status = Status(ErrorCode::kInternal, "compile: '" + name_ +
                                                "' was left unfinished by an exception on the "
                                                "compiling thread");
    } catch (...) {  // no memory for the message: the code alone
    }
    fail(status);
  }

  Mutex& mutex_;
  KernelSlots& slots_;
  const std::string& name_;
  std::promise<Result<SharedKernel>> promise_;
  SharedKernelResult future_;
  const std::string* key_ = nullptr;
  bool settled_ = false;
};

// What a waiter on another caller's compile gets: a Result, never an exception, even should
// a promise be broken despite SlotPromise.
inline Result<SharedKernel> wait_for_kernel(const SharedKernelResult& future,
                                            const std::string& name) {
  try {
    return future.get();
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInternal,
                  "compile: waiting on the compile of '" + name + "' failed: " + e.what());
  }
}

}  // namespace fusedgemm::jit
