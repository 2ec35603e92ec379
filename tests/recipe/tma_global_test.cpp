// The TMA descriptor computation shared by the rules, the CUDA device and the host device,
// and the per-call choice of a TMA-stored output (recipe::tma_storable): exactly the layouts
// cuTensorMapEncodeTiled takes are stored through TMA, every other one directly.
#include "recipe/tma_global.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace fusedgemm::recipe {
namespace {

Layout layout(std::array<std::int64_t, 3> shape, std::array<std::int64_t, 3> stride) {
  Layout l;
  for (int axis = 0; axis < kRank; ++axis) {
    l.shape[axis] = shape[axis];
    l.stride[axis] = stride[axis];
  }
  return kernel_arg_layout(l);
}

struct StoreCase {
  const char* what;
  Layout arg;
  std::uintptr_t address;
  int bits;
  bool storable;
};

TEST(TmaGlobal, StoresThroughTmaExactlyTheLayoutsTheDriverEncodes) {
  constexpr std::uintptr_t kAligned = 0x7f0000001000;
  const std::vector<StoreCase> cases = {
      {"dense bf16", layout({2, 100, 64}, {6400, 64, 1}), kAligned, 16, true},
      {"dense fp32, ragged M", layout({1, 77, 32}, {2464, 32, 1}), kAligned, 32, true},
      {"row pitch past N (padded rows)", layout({1, 64, 56}, {4096, 64, 1}), kAligned, 16, true},
      {"rows of 38 bf16 (76 bytes) 40 apart: the last piece would spill past N",
       layout({1, 24, 38}, {912, 40, 1}), kAligned, 16, false},
      {"address 8 bytes past 16", layout({1, 64, 64}, {4096, 64, 1}), kAligned + 8, 16, false},
      {"row pitch of 60 bf16 (120 bytes)", layout({1, 64, 60}, {3840, 60, 1}), kAligned, 16, false},
      {"batch pitch of 12 bytes past 16", layout({2, 8, 8}, {70, 8, 1}), kAligned, 16, false},
      {"M-major output", layout({1, 64, 64}, {4096, 1, 64}), kAligned, 16, false},
      {"N strided by 2", layout({1, 64, 64}, {8192, 128, 2}), kAligned, 16, false},
      {"negative row stride", layout({1, 64, 64}, {4096, -64, 1}), kAligned, 16, false},
      {"one column (stride ignored, rows of 2 bytes)", layout({1, 64, 1}, {64, 1, 1}), kAligned, 16,
       false},
      {"one column of fp32 rows 16 bytes apart (rows of 4 bytes)", layout({1, 8, 1}, {32, 4, 1}),
       kAligned, 32, false},
      {"four columns of fp32 (16 bytes) in rows 32 bytes apart", layout({1, 8, 4}, {64, 8, 1}),
       kAligned, 32, true},
      {"one row (M of 1: packed stride)", layout({1, 1, 64}, {64, 64, 1}), kAligned, 16, true},
      {"row pitch past 2^40 bytes", layout({1, 2, 64}, {1, std::int64_t{1} << 40, 1}), kAligned, 16,
       false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(tma_storable(c.arg, c.address, c.bits), c.storable) << c.what;
  }
}

}  // namespace
}  // namespace fusedgemm::recipe
