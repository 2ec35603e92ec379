// Shared by the JIT tests: a fresh temporary directory per test, and the small kernels
// the tests compile (each NVRTC compile costs ~0.2-1 s, so the suite compiles few).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fusedgemm/context.h"
#include "jit/compile_types.h"

namespace fusedgemm::jit::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/fusedgemm-jit-test-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A one-line kernel that includes an in-memory header, as generated code includes ours.
inline KernelSource tiny_kernel() {
  KernelSource source;
  source.name = "tiny.cu";
  source.code = R"(#include "tiny_helpers.h"
extern "C" __global__ void tiny(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(in[i]);
}
)";
  source.headers = {{"tiny_helpers.h", "inline float twice(float x) { return 2.0f * x; }\n"}};
  return source;
}

// A Context on a cache directory of its own that reads nothing from the developer's
// environment.
inline Result<std::shared_ptr<Context>> hermetic_context(const std::filesystem::path& cache_dir) {
  ContextOptions options;
  options.read_environment = false;
  options.cache_dir = cache_dir;
  return Context::create(options);
}

}  // namespace fusedgemm::jit::testing
