// The call fuzzer (support/call_fuzzer.h) against the independent legality oracle
// (support/call_oracle.h): on the host device in CI with a fixed seed, and on a CUDA device
// (label gpu). FUSEDGEMM_CALL_FUZZ_CALLS, _SEED and _ONLY (one call index, a repro's replay)
// override the run; scripts/call_fuzz.sh runs the long one with a random seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "runtime/cuda_device.h"
#include "support/call_fuzzer.h"
#include "support/device_call.h"

namespace fusedgemm::test {
namespace {

std::int64_t env_or(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::strtoll(v, nullptr, 0);
}

void expect_clean(const FuzzFigures& f, const std::string& device) {
  fmt::print(
      "call fuzz on {}: {} calls, {} accepted, {} refused ({} legal draws past the arena "
      "skipped), {} decision mismatches, {} wrong results\n",
      device, f.calls, f.accepted, f.refused, f.skipped, f.decision_mismatches, f.wrong_results);
  EXPECT_EQ(f.decision_mismatches, 0);
  EXPECT_EQ(f.wrong_results, 0);
  for (const auto& r : f.repros) ADD_FAILURE() << r;
  // The draws reach both sides of the boundary.
  EXPECT_GT(f.accepted, f.calls / 20);
  EXPECT_GT(f.refused, f.calls / 20);
}

TEST(CallFuzz, HostDeviceDecidesAsTheOracleAndComputesAcceptedCallsRight) {
  const auto seed = static_cast<std::uint64_t>(env_or("FUSEDGEMM_CALL_FUZZ_SEED", 20261203));
  const std::int64_t calls = env_or("FUSEDGEMM_CALL_FUZZ_CALLS", 100000);
  const std::int64_t only = env_or("FUSEDGEMM_CALL_FUZZ_ONLY", -1);
  const FuzzFigures f = fuzz_calls(seed, calls, make_host_device(), {}, only);
  if (only >= 0) {
    for (const auto& r : f.repros) ADD_FAILURE() << r;
    return;
  }
  expect_clean(f, "host");
}

class CallFuzzGpu : public OnGpu<> {};

// The same calls on the GPU, on a device copy of the arena (same offsets), >= 10^4 calls.
TEST_F(CallFuzzGpu, CudaDeviceDecidesAsTheOracleAndComputesAcceptedCallsRight) {
  auto arena = runtime::cuda_test::allocate(*device_, kFuzzArenaBytes);
  ASSERT_TRUE(arena) << arena.status().message();
  auto* device_base = static_cast<std::uint8_t*>(arena.value());
  FuzzArena a;
  a.device_base = device_base;
  a.upload = [&](const std::uint8_t* host, std::size_t bytes) {
    return runtime::cuda_test::copy_to_device(*device_, device_base, host, bytes);
  };
  a.download = [&](std::uint8_t* host, std::size_t bytes) {
    FG_TRY(runtime::cuda_test::synchronize(*device_));
    return runtime::cuda_test::copy_to_host(*device_, host, device_base, bytes);
  };
  const auto seed = static_cast<std::uint64_t>(env_or("FUSEDGEMM_CALL_FUZZ_SEED", 20261203));
  const FuzzFigures f = fuzz_calls(seed, env_or("FUSEDGEMM_CALL_FUZZ_CALLS", 20000), device_, a,
                                   env_or("FUSEDGEMM_CALL_FUZZ_ONLY", -1));
  (void)runtime::cuda_test::release(*device_, device_base);
  expect_clean(f, "cuda");
}

}  // namespace
}  // namespace fusedgemm::test
