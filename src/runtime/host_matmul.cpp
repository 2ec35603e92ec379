#include "runtime/host_matmul.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace fusedgemm::runtime {
namespace {

// Below this a product runs on the calling thread alone (the call fuzzer's small calls).
constexpr double kFlopsPerThread = 1 << 22;
constexpr unsigned kMaxThreads = 8;

// Rows [m0, m1) of out, 4 x 4 accumulators at a time so 16 sums run side by side.
void multiply_rows(const double* a, const double* b, float* out, std::int64_t m0, std::int64_t m1,
                   std::int64_t n_extent, std::int64_t kk) {
  constexpr int kBlock = 4;
  for (std::int64_t m = m0; m < m1; m += kBlock) {
    const int rows = static_cast<int>(std::min<std::int64_t>(kBlock, m1 - m));
    for (std::int64_t n = 0; n < n_extent; n += kBlock) {
      const int cols = static_cast<int>(std::min<std::int64_t>(kBlock, n_extent - n));
      double sum[kBlock][kBlock] = {};
      if (rows == kBlock && cols == kBlock) {
        for (std::int64_t k = 0; k < kk; ++k) {
          for (int i = 0; i < kBlock; ++i) {
            const double x = a[(m + i) * kk + k];
            for (int j = 0; j < kBlock; ++j) sum[i][j] += x * b[(n + j) * kk + k];
          }
        }
      } else {
        for (int i = 0; i < rows; ++i) {
          for (int j = 0; j < cols; ++j) {
            for (std::int64_t k = 0; k < kk; ++k)
              sum[i][j] += a[(m + i) * kk + k] * b[(n + j) * kk + k];
          }
        }
      }
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j)
          out[(m + i) * n_extent + n + j] = static_cast<float>(sum[i][j]);
      }
    }
  }
}

}  // namespace

void multiply_panels(const double* a, const double* b, float* out, std::int64_t m, std::int64_t n,
                     std::int64_t k) {
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const auto threads = static_cast<std::int64_t>(
      flops < kFlopsPerThread ? 1 : std::min<unsigned>(hardware, kMaxThreads));
  const std::int64_t rows_each = (m + threads - 1) / threads;
  const auto rows_of = [&](std::int64_t t) {
    const std::int64_t m0 = std::min(m, t * rows_each);
    multiply_rows(a, b, out, m0, std::min(m, m0 + rows_each), n, k);
  };
  std::vector<std::thread> workers;
  // Joined on every way out: a joinable thread's destructor would end the process.
  struct JoinAll {
    std::vector<std::thread>& started;
    ~JoinAll() {
      for (auto& w : started) {
        if (w.joinable()) w.join();
      }
    }
  } join_all{workers};
  for (std::int64_t t = 1; t < threads; ++t) {
    // A thread the system cannot start (std::system_error), or the memory to hold it
    // (std::bad_alloc), leaves its rows to this one: a launch never fails, or ends the
    // process, for want of a thread.
    try {
      workers.emplace_back(rows_of, t);
    } catch (...) {
      rows_of(t);
    }
  }
  rows_of(0);
}

}  // namespace fusedgemm::runtime
