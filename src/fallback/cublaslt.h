// cuBLASLt, opened at run time (dlopen), for the fallback engine's matmuls: an fp32 GEMM of
// dense row-major operands in the workspace. fusedgemm never links cuBLASLt, so it starts
// where none is installed; a fallback plan on a GPU then fails to build, naming the library.
#pragma once

#include <cstdint>
#include <memory>

#include "fusedgemm/status.h"

namespace fusedgemm::fallback {

// D[b] = A[b] @ B[b] for b < batch: A [M, K], B [K, N], D [M, N], dense row-major fp32;
// an operand of batch 1 is read for every b. Descriptors and algorithm chosen once.
class Gemm {
 public:
  virtual ~Gemm() = default;
  virtual Status run(const void* a, const void* b, void* d, void* stream) const noexcept = 0;
};

class CublasLt {
 public:
  virtual ~CublasLt() = default;
  // Opens libcublasLt and creates a handle on the current device.
  static Result<std::shared_ptr<const CublasLt>> open();
  virtual Result<std::unique_ptr<const Gemm>> plan_gemm(std::int64_t batch, std::int64_t m,
                                                        std::int64_t n, std::int64_t k,
                                                        bool a_broadcast,
                                                        bool b_broadcast) const = 0;
};

}  // namespace fusedgemm::fallback
