// A host-device launch that runs out of memory returns an error, whichever allocation fails:
// the host matmul's worker threads are joined on every way out (a joinable std::thread
// destroyed by the unwinding ended the process through std::terminate). Its own program,
// not a gtest: it replaces the global operator new (the N-th allocation of the launching
// thread throws std::bad_alloc, N = 0, 1, ...) and pretends an 8-core host so the matmul
// starts several workers. Each N runs in a forked child, so an abort is counted, not fatal.
// Exit 0 when every child returned (a Status, error or not); 1 otherwise.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "fusedgemm/device.h"
#include "fusedgemm/plan.h"

// libstdc++'s std::thread::hardware_concurrency asks glibc's get_nprocs.
extern "C" int get_nprocs(void) {
  return 8;
}

namespace {

std::atomic<long> allocations_left{-1};
thread_local bool armed = false;

}  // namespace

void* operator new(std::size_t bytes) {
  if (armed && allocations_left.fetch_sub(1) == 0) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

int main() {
  using namespace fusedgemm;
  constexpr std::int64_t kM = 256, kN = 256, kK = 128;
  constexpr long kFailures = 60;  // allocation indices tried; past them every launch succeeds
  Graph g;
  auto a = g.tensor(
      TensorAttributes().set_name("A").set_dim({1, kM, kK}).set_data_type(DataType::kBFloat16));
  auto b = g.tensor(
      TensorAttributes().set_name("B").set_dim({1, kK, kN}).set_data_type(DataType::kBFloat16));
  auto d = g.matmul(a, b);
  d->set_output(true).set_data_type(DataType::kFloat32).set_name("D");
  auto plan = build(g, BuildOptions{make_host_device()});
  if (!plan) {
    std::printf("build: %s\n", plan.status().message().c_str());
    return 1;
  }
  // bf16 1.0 everywhere: every output element is K.
  std::vector<std::uint16_t> a_values(kM * kK, 0x3f80), b_values(kK * kN, 0x3f80);
  std::vector<float> out(kM * kN, -1.0f);
  VariantPack pack;
  pack.set(a, a_values.data()).set(b, b_values.data()).set(d, out.data());
  auto bound = plan->bind(pack);
  if (!bound) {
    std::printf("bind: %s\n", bound.status().message().c_str());
    return 1;
  }
  std::vector<unsigned char> workspace(plan->workspace_bytes(bound.value()).value() + 16);
  const Workspace ws{workspace.data(), workspace.size()};
  if (const Status s = plan->execute(bound.value(), ws, nullptr); !s || out[0] != kK) {
    std::printf("unarmed launch: %s, D[0] = %g\n", s ? "ok" : s.message().c_str(), out[0]);
    return 1;
  }
  int aborted = 0, refused = 0, computed = 0;
  for (long n = 0; n < kFailures; ++n) {
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
      armed = true;
      allocations_left = n;
      const Status s = plan->execute(bound.value(), ws, nullptr);
      armed = false;
      std::_Exit(s ? 0 : 2);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status)) {
      std::printf("allocation %ld failing: the launch ended the process (signal %d)\n", n,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      ++aborted;
    } else {
      (WEXITSTATUS(status) == 2 ? refused : computed)++;
    }
  }
  std::printf("%ld failing allocations: %d returned an error, %d computed, %d ended the process\n",
              kFailures, refused, computed, aborted);
  // Some of them must have failed a launch, or the hook reached nothing.
  return aborted == 0 && refused > 0 ? 0 : 1;
}
