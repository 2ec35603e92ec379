// CudaDevice: the missing-driver and stub-driver paths run everywhere; everything that needs
// a GPU (fill, load, launch, the context policy) skips when make_cuda_device(0) fails.
#include "runtime/cuda_device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fusedgemm/device.h"
#include "kernels/kernel_args.h"
#include "runtime/device.h"

using fusedgemm::ErrorCode;
using fusedgemm::make_cuda_device;
using fusedgemm::kernels::KernelArgs;
using fusedgemm::runtime::Device;
using fusedgemm::runtime::Fill32;
using fusedgemm::runtime::KernelImage;
using fusedgemm::runtime::LaunchConfig;
using fusedgemm::runtime::LoadedKernel;
using fusedgemm::runtime::make_cuda_device_from_library;
namespace cuda_test = fusedgemm::runtime::cuda_test;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The stub libcuda a toolkit ships for linking: present on build machines with no driver.
const char* find_stub_driver() {
  for (const char* path : {"/usr/local/cuda/lib64/stubs/libcuda.so",
                           "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"}) {
    if (access(path, R_OK) == 0) return path;
  }
  return nullptr;
}

// A probe kernel in PTX, standing in for a cubin until kernels are compiled with NVRTC. It
// reports what it received, so a launch test sees the by-value KernelArgs, the dynamic shared
// memory and the cluster size. Equivalent CUDA:
//
//   extern "C" __global__ void fusedgemm_probe(KernelArgs args) {
//     long long* out = static_cast<long long*>(args.buffers[0].data);
//     if (threadIdx.x != 0) return;
//     if (blockIdx.x == 0) {
//       out[0] = args.batch; out[1] = args.m; out[2] = args.n; out[3] = args.k;
//       out[4] = args.buffer_count; out[5] = args.buffers[0].shape[2];
//       out[6] = args.buffers[0].stride[1]; out[7] = %dynamic_smem_size;
//     }
//     out[8 + blockIdx.x] = %cluster_nctarank;
//   }
//
// The parameter's size and every field offset come from the host's KernelArgs, so the probe
// follows that struct as it changes. PTX ISA 7.8 (the first with sm_90 and the cluster
// registers), so any 12.x driver JIT-compiles it.
std::string probe_ptx() {
  using fusedgemm::kernels::BufferArg;
  const auto at = [](std::size_t offset) { return "[args+" + std::to_string(offset) + "]"; };
  const std::size_t buffer0 = offsetof(KernelArgs, buffers);
  return ".version 7.8\n.target sm_90\n.address_size 64\n"
         ".visible .entry fusedgemm_probe(.param .align " +
         std::to_string(alignof(KernelArgs)) + " .b8 args[" + std::to_string(sizeof(KernelArgs)) +
         "])\n{\n"
         ".reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<16>;\n"
         "ld.param.u64 %rd1, " +
         at(buffer0 + offsetof(BufferArg, data)) +
         ";\n"
         "cvta.to.global.u64 %rd2, %rd1;\n"
         "mov.u32 %r1, %cluster_nctarank;\n"
         "mov.u32 %r2, %dynamic_smem_size;\n"
         "mov.u32 %r3, %tid.x;\n"
         "setp.ne.s32 %p1, %r3, 0;\n"
         "@%p1 bra $done;\n"
         "mov.u32 %r4, %ctaid.x;\n"
         "setp.ne.s32 %p2, %r4, 0;\n"
         "@%p2 bra $rank;\n"
         "ld.param.u64 %rd3, " +
         at(offsetof(KernelArgs, batch)) +
         ";\n"
         "st.global.u64 [%rd2], %rd3;\n"
         "ld.param.u64 %rd4, " +
         at(offsetof(KernelArgs, m)) +
         ";\n"
         "st.global.u64 [%rd2+8], %rd4;\n"
         "ld.param.u64 %rd5, " +
         at(offsetof(KernelArgs, n)) +
         ";\n"
         "st.global.u64 [%rd2+16], %rd5;\n"
         "ld.param.u64 %rd6, " +
         at(offsetof(KernelArgs, k)) +
         ";\n"
         "st.global.u64 [%rd2+24], %rd6;\n"
         "ld.param.s32 %rd7, " +
         at(offsetof(KernelArgs, buffer_count)) +
         ";\n"
         "st.global.u64 [%rd2+32], %rd7;\n"
         "ld.param.u64 %rd8, " +
         at(buffer0 + offsetof(BufferArg, shape) + 2 * sizeof(long long)) +
         ";\n"
         "st.global.u64 [%rd2+40], %rd8;\n"
         "ld.param.u64 %rd9, " +
         at(buffer0 + offsetof(BufferArg, stride) + sizeof(long long)) +
         ";\n"
         "st.global.u64 [%rd2+48], %rd9;\n"
         "cvt.u64.u32 %rd10, %r2;\n"
         "st.global.u64 [%rd2+56], %rd10;\n"
         "$rank:\n"
         "cvt.u64.u32 %rd11, %r1;\n"
         "add.s32 %r5, %r4, 8;\n"
         "mul.wide.u32 %rd12, %r5, 8;\n"
         "add.s64 %rd13, %rd2, %rd12;\n"
         "st.global.u64 [%rd13], %rd11;\n"
         "$done:\n"
         "ret;\n}\n";
}

KernelImage probe_image(unsigned max_shared_bytes) {
  KernelImage image;
  image.entry = "fusedgemm_probe";
  const std::string ptx = probe_ptx();
  // PTX is loaded as text, so the image keeps the terminating NUL.
  image.cubin.assign(ptx.c_str(), ptx.c_str() + ptx.size() + 1);
  image.max_shared_bytes = max_shared_bytes;
  return image;
}

}  // namespace

TEST(CudaDevice, MissingDriverIsUnavailable) {
  auto device = make_cuda_device_from_library("libfusedgemm_no_such_driver.so.1", 3);
  ASSERT_FALSE(device);
  EXPECT_EQ(device.status().code(), ErrorCode::kUnavailable);
  const std::string message = device.status().message();
  EXPECT_TRUE(contains(message, "CUDA device 3: CUDA driver not found: dlopen(")) << message;
  EXPECT_TRUE(contains(message, "libfusedgemm_no_such_driver.so.1")) << message;
}

// A death test only for its fork: the stub's soname is libcuda.so.1, so loading it in this
// process would make every later dlopen("libcuda.so.1") find the stub instead of the driver.
TEST(CudaDeviceDeathTest, StubDriverIsUnavailable) {
  const char* stub = find_stub_driver();
  if (stub == nullptr) GTEST_SKIP() << "no stub libcuda.so in the CUDA toolkit";
  EXPECT_EXIT(
      {
        auto device = make_cuda_device_from_library(stub, 0);
        std::fprintf(stderr, "%s\n", device ? "created" : device.status().message().c_str());
        std::_Exit(!device && device.status().code() == ErrorCode::kUnavailable ? 0 : 1);
      },
      testing::ExitedWithCode(0),
      "CUDA device 0: cuDriverGetVersion failed: CUDA_ERROR_STUB_LIBRARY");
}

TEST(CudaDevice, NoGpuIsUnavailable) {
  auto device = make_cuda_device(0);
  if (device) GTEST_SKIP() << "a GPU is present: " << device.value()->name();
  EXPECT_EQ(device.status().code(), ErrorCode::kUnavailable);
  const std::string message = device.status().message();
  ASSERT_TRUE(contains(message, "CUDA device 0: ")) << message;
  // Either the driver is missing (named with dlerror's reason), or a call named with the
  // driver's error name found no usable device.
  EXPECT_TRUE(contains(message, "CUDA driver not found: dlopen(\"libcuda.so.1\") failed: ") ||
              contains(message, " failed: CUDA_ERROR_") || contains(message, "cuDeviceGetCount"))
      << message;
  // The driver library is opened once; asking again gives the same answer, without crashing.
  auto again = make_cuda_device(0);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.status().message(), message);
}

TEST(CudaDevice, OrdinalOutOfRangeIsUnavailable) {
  auto device = make_cuda_device(1 << 20);
  ASSERT_FALSE(device);
  EXPECT_EQ(device.status().code(), ErrorCode::kUnavailable);
  const std::string message = device.status().message();
  EXPECT_TRUE(contains(message, "CUDA device 1048576: ")) << message;
  if (make_cuda_device(0)) {
    EXPECT_TRUE(contains(message, "ordinal 1048576 is out of range: cuDeviceGetCount reports"))
        << message;
  }
}

// Everything below needs a GPU.
class CudaDeviceGpu : public testing::Test {
 protected:
  void SetUp() override {
    auto device = make_cuda_device(0);
    if (!device) GTEST_SKIP() << device.status().message();
    device_ = std::move(device).value();
    ASSERT_EQ(device_->current_ordinal(), 0);  // binds the primary context, as execute would
  }

  // Device memory released at the end of the test.
  void* allocate(std::size_t bytes) {
    auto data = cuda_test::allocate(*device_, bytes);
    EXPECT_TRUE(data) << data.status().message();
    if (!data) return nullptr;
    buffers_.emplace_back(data.value(),
                          [device = device_](void* p) { (void)cuda_test::release(*device, p); });
    return data.value();
  }

  template <class T>
  std::vector<T> read(const void* data, std::size_t count) {
    std::vector<T> host(count);
    EXPECT_TRUE(cuda_test::synchronize(*device_));
    const auto copied = cuda_test::copy_to_host(*device_, host.data(), data, count * sizeof(T));
    EXPECT_TRUE(copied) << copied.message();
    return host;
  }

  std::shared_ptr<Device> device_;
  std::vector<std::shared_ptr<void>> buffers_;
  KernelArgs empty_args_{};
};

TEST_F(CudaDeviceGpu, NamesTheDevice) {
  const std::string name(device_->name());
  EXPECT_TRUE(name.rfind("cuda:0 ", 0) == 0 && name.size() > 7) << name;
  EXPECT_FALSE(device_->is_host());
  EXPECT_EQ(device_->ordinal(), 0);
}

TEST_F(CudaDeviceGpu, CurrentOrdinalBindsThePrimaryContextOnAFreshThread) {
  int first = -2;
  int second = -2;
  std::thread worker([&] {
    first = device_->current_ordinal();
    second = device_->current_ordinal();
  });
  worker.join();
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 0);
}

TEST_F(CudaDeviceGpu, FillWritesPitchedRows) {
  constexpr std::uint64_t kPitchWords = 16;
  constexpr std::uint64_t kRows = 4;
  void* data = allocate(kPitchWords * kRows * 4);
  ASSERT_NE(data, nullptr);
  const Fill32 background{data, 0, kPitchWords * kRows, 1, 0x11111111u};
  ASSERT_TRUE(device_->fill(background, nullptr));
  const Fill32 rows{data, kPitchWords * 4, 10, 3, 0xdeadbeefu};
  const auto filled = device_->fill(rows, nullptr);
  ASSERT_TRUE(filled) << filled.message();
  const auto words = read<std::uint32_t>(data, kPitchWords * kRows);
  for (std::uint64_t row = 0; row < kRows; ++row) {
    for (std::uint64_t word = 0; word < kPitchWords; ++word) {
      const bool inside = row < 3 && word < 10;
      EXPECT_EQ(words[row * kPitchWords + word], inside ? 0xdeadbeefu : 0x11111111u)
          << "row " << row << " word " << word;
    }
  }
}

TEST_F(CudaDeviceGpu, EmptyFillWritesNothing) {
  EXPECT_TRUE(device_->fill(Fill32{nullptr, 0, 0, 1, 7}, nullptr));
  EXPECT_TRUE(device_->fill(Fill32{nullptr, 64, 4, 0, 7}, nullptr));
}

TEST_F(CudaDeviceGpu, FillNamesTheCallWhenTheDriverRefuses) {
  // Pitch below the row width: the driver refuses before anything is written.
  void* data = allocate(256);
  ASSERT_NE(data, nullptr);
  const auto filled = device_->fill(Fill32{data, 4, 8, 2, 0}, nullptr);
  ASSERT_FALSE(filled);
  EXPECT_EQ(filled.code(), ErrorCode::kDriver);
  EXPECT_TRUE(contains(filled.message(), "cuMemsetD2D32Async failed: CUDA_ERROR_"))
      << filled.message();
}

TEST_F(CudaDeviceGpu, LoadNamesTheCallForAnImageThatIsNotCode) {
  KernelImage image;
  image.entry = "not_code";
  image.cubin = {'n', 'o', 't', ' ', 'c', 'o', 'd', 'e', '\0'};
  auto kernel = device_->load(image);
  ASSERT_FALSE(kernel);
  EXPECT_EQ(kernel.status().code(), ErrorCode::kDriver);
  EXPECT_TRUE(contains(kernel.status().message(), "cuModuleLoadData failed: CUDA_ERROR_"))
      << kernel.status().message();
  EXPECT_TRUE(contains(kernel.status().message(), "'not_code'")) << kernel.status().message();
}

TEST_F(CudaDeviceGpu, LoadNamesAMissingEntry) {
  KernelImage image = probe_image(0);
  image.entry = "no_such_kernel";
  auto kernel = device_->load(image);
  ASSERT_FALSE(kernel);
  EXPECT_EQ(kernel.status().code(), ErrorCode::kDriver);
  EXPECT_TRUE(contains(kernel.status().message(), "cuModuleGetFunction failed: CUDA_ERROR_"))
      << kernel.status().message();
  EXPECT_TRUE(contains(kernel.status().message(), "'no_such_kernel'")) << kernel.status().message();
}

TEST_F(CudaDeviceGpu, LaunchPassesArgsByValueWithSharedAboveTheDefault) {
  // 100 KiB is past the 48 KiB every kernel gets without the attribute load sets.
  constexpr unsigned kSharedBytes = 100 * 1024;
  auto kernel = device_->load(probe_image(kSharedBytes));
  ASSERT_TRUE(kernel) << kernel.status().message();
  auto* out = static_cast<long long*>(allocate(16 * sizeof(long long)));
  ASSERT_NE(out, nullptr);
  ASSERT_TRUE(device_->fill(Fill32{out, 0, 32, 1, 0xffffffffu}, nullptr));
  KernelArgs args{};
  args.batch = 2;
  args.m = 3;
  args.n = 5;
  args.k = 7;
  args.buffer_count = 1;
  args.buffers[0] = {out, {2, 3, 5}, {15, 5, 1}};
  LaunchConfig config;
  config.block[0] = 32;
  config.shared_bytes = kSharedBytes;
  const auto launched = device_->launch(*kernel.value(), config, args, nullptr);
  ASSERT_TRUE(launched) << launched.message();
  const auto seen = read<long long>(out, 16);
  EXPECT_EQ(seen[0], 2);
  EXPECT_EQ(seen[1], 3);
  EXPECT_EQ(seen[2], 5);
  EXPECT_EQ(seen[3], 7);
  EXPECT_EQ(seen[4], 1);
  EXPECT_EQ(seen[5], 5);
  EXPECT_EQ(seen[6], 5);
  EXPECT_EQ(seen[7], static_cast<long long>(kSharedBytes));
  EXPECT_EQ(seen[8], 1);   // no cluster attribute: a cluster of one
  EXPECT_EQ(seen[9], -1);  // one CTA only
}

TEST_F(CudaDeviceGpu, LaunchSetsTheClusterDimension) {
  auto kernel = device_->load(probe_image(0));
  ASSERT_TRUE(kernel) << kernel.status().message();
  auto* out = static_cast<long long*>(allocate(16 * sizeof(long long)));
  ASSERT_NE(out, nullptr);
  KernelArgs args{};
  args.buffer_count = 1;
  args.buffers[0].data = out;
  LaunchConfig config;
  config.grid[0] = 2;
  config.cluster[0] = 2;
  const auto launched = device_->launch(*kernel.value(), config, args, nullptr);
  ASSERT_TRUE(launched) << launched.message();
  const auto seen = read<long long>(out, 16);
  EXPECT_EQ(seen[8], 2);
  EXPECT_EQ(seen[9], 2);
}

TEST_F(CudaDeviceGpu, LaunchRefusesSharedAboveTheLoadLimit) {
  auto kernel = device_->load(probe_image(64 * 1024));
  ASSERT_TRUE(kernel) << kernel.status().message();
  LaunchConfig config;
  config.shared_bytes = 64 * 1024 + 4;
  const auto launched = device_->launch(*kernel.value(), config, empty_args_, nullptr);
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(launched.message(), "shared_bytes 65540 exceeds")) << launched.message();
  EXPECT_TRUE(contains(launched.message(), "max_shared_bytes 65536")) << launched.message();
}

TEST_F(CudaDeviceGpu, LaunchRefusesAKernelOfAnotherDeviceKind) {
  struct HostKernel final : LoadedKernel {};
  const auto launched = device_->launch(HostKernel{}, LaunchConfig{}, empty_args_, nullptr);
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(launched.message(), "not loaded by a CUDA device")) << launched.message();
}

TEST_F(CudaDeviceGpu, LaunchNamesTheCallWhenTheDriverRefuses) {
  auto kernel = device_->load(probe_image(0));
  ASSERT_TRUE(kernel) << kernel.status().message();
  LaunchConfig config;
  config.block[0] = 4096;  // past the 1024 threads a block may have
  const auto launched = device_->launch(*kernel.value(), config, empty_args_, nullptr);
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.code(), ErrorCode::kDriver);
  EXPECT_TRUE(contains(launched.message(), "cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE"))
      << launched.message();
}

TEST_F(CudaDeviceGpu, KernelOutlivesItsDevice) {
  auto kernel = device_->load(probe_image(0));
  ASSERT_TRUE(kernel) << kernel.status().message();
  std::shared_ptr<const LoadedKernel> survivor = std::move(kernel).value();
  buffers_.clear();
  device_.reset();
  survivor.reset();  // unloads in the primary context the kernel still holds
  SUCCEED();
}
