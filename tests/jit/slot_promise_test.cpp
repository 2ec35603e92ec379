// The caller that inserts a key into a Context's memory map settles its slot however it
// leaves: its promise was destroyed unset when anything threw between the insert and
// set_value (the lock of the error path, an allocation), and every waiter on the key got
// std::future_error out of Context::compile.
#include "jit/slot_promise.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

namespace fusedgemm::jit {
namespace {

// A mutex whose lock() throws once `broken` is set, as std::mutex::lock may (system_error).
struct BreakableMutex {
  std::mutex mutex;
  bool broken = false;
  void lock() {
    if (broken)
      throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur));
    mutex.lock();
  }
  void unlock() { mutex.unlock(); }
};

// Inserts the slot of `key` as Context::compile does; true when `slot` owns it.
template <class Mutex>
bool insert(Mutex& mutex, KernelSlots& slots, SlotPromise<Mutex>& slot, const std::string& key) {
  const std::lock_guard<Mutex> lock(mutex);
  const auto [it, inserted] = slots.try_emplace(key, slot.future());
  if (inserted) slot.claim(key);
  return inserted;
}

bool is_ready(const SharedKernelResult& future) {
  return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// One key of a map guarded by a std::mutex, as Context::compile has them.
class SlotPromiseOnAKey : public testing::Test {
 protected:
  std::mutex mutex;
  KernelSlots slots;
  const std::string name = "tiny.cu";
  const std::string key = "key";
};

TEST_F(SlotPromiseOnAKey, AnOwnerLeftByAnExceptionHandsItsWaiterAnErrorAndFreesTheKey) {
  std::promise<void> waiting;
  Result<SharedKernel> waited = Status(ErrorCode::kOk, "not run");
  std::thread waiter;
  try {
    SlotPromise<std::mutex> owner(mutex, slots, name);
    ASSERT_TRUE(insert(mutex, slots, owner, key));
    waiter = std::thread([&, future = slots.at(key)] {
      waiting.set_value();
      waited = wait_for_kernel(future, name);  // threw std::future_error
    });
    waiting.get_future().wait();
    throw std::runtime_error("between inserting the slot and settling it");
  } catch (const std::runtime_error&) {
  }
  waiter.join();
  ASSERT_FALSE(waited.is_ok());
  EXPECT_EQ(waited.status().code(), ErrorCode::kInternal);
  EXPECT_NE(waited.status().message().find("'tiny.cu' was left unfinished by an exception"),
            std::string::npos)
      << waited.status().message();
  EXPECT_TRUE(slots.empty());  // a later compile of the key tries again
}

TEST_F(SlotPromiseOnAKey, AFailedCompileIsErasedAndHandedToWaiters) {
  SlotPromise<std::mutex> owner(mutex, slots, name);
  ASSERT_TRUE(insert(mutex, slots, owner, key));
  const SharedKernelResult future = slots.at(key);
  owner.fail(Status(ErrorCode::kCompile, "nvrtcCompileProgram: the log"));
  EXPECT_TRUE(slots.empty());
  ASSERT_TRUE(is_ready(future));
  EXPECT_EQ(future.get().status().code(), ErrorCode::kCompile);
  EXPECT_EQ(future.get().status().message(), "nvrtcCompileProgram: the log");
}

// Where even the lock of the error path throws, the error still reaches the waiters, and the
// slot, which cannot be erased, holds it for later callers: an error, never a wait.
TEST(SlotPromise, AMutexThatCannotBeLockedStillSettlesTheSlot) {
  BreakableMutex mutex;
  KernelSlots slots;
  const std::string name = "tiny.cu";
  const std::string first = "first";
  const std::string second = "second";
  {
    SlotPromise<BreakableMutex> failing(mutex, slots, name);
    ASSERT_TRUE(insert(mutex, slots, failing, first));
    mutex.broken = true;
    failing.fail(Status(ErrorCode::kCompile, "the log"));
    mutex.broken = false;
  }
  ASSERT_TRUE(is_ready(slots.at(first)));
  EXPECT_EQ(wait_for_kernel(slots.at(first), name).status().code(), ErrorCode::kCompile);

  try {
    SlotPromise<BreakableMutex> abandoned(mutex, slots, name);
    ASSERT_TRUE(insert(mutex, slots, abandoned, second));
    mutex.broken = true;
    throw std::runtime_error("between inserting the slot and settling it");
  } catch (const std::runtime_error&) {
  }
  mutex.broken = false;
  ASSERT_TRUE(is_ready(slots.at(second)));
  const Status abandoned = wait_for_kernel(slots.at(second), name).status();
  EXPECT_EQ(abandoned.code(), ErrorCode::kInternal);
  EXPECT_NE(abandoned.message().find("'tiny.cu' was left unfinished"), std::string::npos)
      << abandoned.message();
}

TEST_F(SlotPromiseOnAKey, AKeptKernelStaysForLaterCallersAndASecondCallerOwnsNothing) {
  SlotPromise<std::mutex> owner(mutex, slots, name);
  ASSERT_TRUE(insert(mutex, slots, owner, key));
  {
    // The second caller of the key: its own promise is never shared, and leaving settles
    // nothing and erases nothing.
    SlotPromise<std::mutex> second(mutex, slots, name);
    EXPECT_FALSE(insert(mutex, slots, second, key));
    EXPECT_FALSE(second.claimed());
  }
  ASSERT_EQ(slots.count(key), 1u);
  EXPECT_FALSE(is_ready(slots.at(key)));
  const auto kernel = std::make_shared<const CompiledKernel>();
  owner.keep(kernel);
  ASSERT_EQ(slots.count(key), 1u);
  const Result<SharedKernel> hit = wait_for_kernel(slots.at(key), name);
  ASSERT_TRUE(hit.is_ok()) << hit.status().message();
  EXPECT_EQ(hit.value(), kernel);
}

// The last line of defence: a promise broken whatever the reason is an error value.
TEST(SlotPromise, ABrokenPromiseIsAnErrorValueForItsWaiter) {
  SharedKernelResult future;
  {
    std::promise<Result<SharedKernel>> promise;
    future = promise.get_future().share();
  }
  const Result<SharedKernel> waited = wait_for_kernel(future, "tiny.cu");
  ASSERT_FALSE(waited.is_ok());
  EXPECT_EQ(waited.status().code(), ErrorCode::kInternal);
  EXPECT_NE(waited.status().message().find("waiting on the compile of 'tiny.cu' failed"),
            std::string::npos)
      << waited.status().message();
}

}  // namespace
}  // namespace fusedgemm::jit
