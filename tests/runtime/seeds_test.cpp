// Seeds (DESIGN.md section 7.4): a tap's layout collapses into the fewest pitched 32-bit
// fills, and issuing them writes exactly the layout's elements.
#include "runtime/seeds.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "runtime/host_device.h"
#include "support/call_harness.h"

namespace fusedgemm::runtime {
namespace {

using test::GuardedBuffer;
using test::kCanary;

constexpr std::uint32_t kWord = 0x3F800000;  // 1.0f, the mul seed

struct SeedCase {
  const char* what;
  Layout layout;
  // The expected plan: one fill of height x width_words at pitch_bytes, repeated.
  std::uint64_t width_words;
  std::uint64_t height;
  std::uint64_t pitch_bytes;  // checked when height > 1
  std::uint64_t repeat[2];
  std::int64_t repeat_stride_bytes[2];  // checked where repeat > 1
};

const std::vector<SeedCase>& cases() {
  static const std::vector<SeedCase> kCases = {
      {"dense row tap [1, 64, 1]", {{1, 64, 1}, {64, 1, 1}}, 64, 1, 0, {1, 1}, {0, 0}},
      {"dense batched [3, 4, 8] is one run", {{3, 4, 8}, {32, 8, 1}}, 96, 1, 0, {1, 1}, {0, 0}},
      {"padded rows [1, 4, 8]:[40, 10, 1]", {{1, 4, 8}, {40, 10, 1}}, 8, 4, 40, {1, 1}, {0, 0}},
      {"row tap [1, 6, 1] with stride 2 on M", {{1, 6, 1}, {12, 2, 1}}, 1, 6, 8, {1, 1}, {0, 0}},
      {"row tap [2, 6, 1] with stride 3 on M, batch dense after it",
       {{2, 6, 1}, {18, 3, 1}},
       1,
       12,
       12,
       {1, 1},
       {0, 0}},
      {"padded batches repeat the fill", {{3, 4, 8}, {50, 10, 1}}, 8, 4, 40, {3, 1}, {200, 0}},
      {"M-major [2, 4, 8]:[32, 1, 4] is one run",
       {{2, 4, 8}, {32, 1, 4}},
       64,
       1,
       0,
       {1, 1},
       {0, 0}},
      {"M-major padded [2, 4, 8]:[48, 1, 6]: columns then batches share the pitch",
       {{2, 4, 8}, {48, 1, 6}},
       4,
       16,
       24,
       {1, 1},
       {0, 0}},
      {"M-major padded batches [2, 4, 8]:[50, 1, 6]",
       {{2, 4, 8}, {50, 1, 6}},
       4,
       8,
       24,
       {2, 1},
       {200, 0}},
      {"extent-1 axes are ignored [1, 1, 8]:[999, 777, 1]",
       {{1, 1, 8}, {999, 777, 1}},
       8,
       1,
       0,
       {1, 1},
       {0, 0}},
      {"scalar tap [1, 1, 1]", {{1, 1, 1}, {1, 1, 1}}, 1, 1, 0, {1, 1}, {0, 0}},
      {"per-batch scalar [3, 1, 1]:[5, 1, 1]", {{3, 1, 1}, {5, 1, 1}}, 1, 3, 20, {1, 1}, {0, 0}},
      {"no unit stride: the tallest axis is the height [1, 4, 1000]:[0, 2, 10]",
       {{1, 4, 1000}, {0, 2, 10}},
       1,
       1000,
       40,
       {4, 1},
       {8, 0}},
      {"padded rows and batches [3, 2, 8]:[24, 10, 1]: 3 batches the height, 2 rows repeat",
       {{3, 2, 8}, {24, 10, 1}},
       8,
       3,
       96,
       {2, 1},
       {40, 0}},
      {"no unit stride, three axes [2, 3, 4]:[100, 30, 2]",
       {{2, 3, 4}, {100, 30, 2}},
       1,
       4,
       8,
       {3, 2},
       {120, 400}},
  };
  return kCases;
}

TEST(PlanSeed, CollapsesEachLayoutIntoTheFewestPitchedFills) {
  std::uint8_t base[16];
  for (const SeedCase& c : cases()) {
    SCOPED_TRACE(fmt::format("{}: {}", c.what, to_string(c.layout)));
    ASSERT_TRUE(c.layout.is_injective());
    const SeedPlan plan = plan_seed(base, c.layout, kWord);
    EXPECT_EQ(plan.fill.data, base);
    EXPECT_EQ(plan.fill.word, kWord);
    EXPECT_EQ(plan.fill.width_words, c.width_words);
    EXPECT_EQ(plan.fill.height, c.height);
    if (c.height > 1) {
      EXPECT_EQ(plan.fill.pitch_bytes, c.pitch_bytes);
    }
    EXPECT_EQ(plan.repeat[0], c.repeat[0]);
    EXPECT_EQ(plan.repeat[1], c.repeat[1]);
    for (int r = 0; r < 2; ++r) {
      if (c.repeat[r] > 1) {
        EXPECT_EQ(plan.repeat_stride_bytes[r], c.repeat_stride_bytes[r]);
      }
    }
    EXPECT_EQ(plan.fill_count(), c.repeat[0] * c.repeat[1]);
    // Every element is covered once: the fills hold exactly element_count() words.
    EXPECT_EQ(plan.fill.width_words * plan.fill.height * plan.fill_count(),
              static_cast<std::uint64_t>(c.layout.element_count()));
  }
}

// The host device's fill stands in for cuMemsetD2D32Async: issuing a plan writes the word
// into every element of the layout and into no other byte of the allocation.
TEST(IssueSeed, WritesExactlyTheLayoutsElements) {
  HostDevice device;
  for (const SeedCase& c : cases()) {
    SCOPED_TRACE(fmt::format("{}: {}", c.what, to_string(c.layout)));
    const std::size_t bytes = static_cast<std::size_t>(c.layout.span()) * 4;
    GuardedBuffer buffer(bytes);
    for (std::size_t i = 0; i < buffer.whole_size(); ++i) buffer.whole()[i] = kCanary[i % 4];
    const SeedPlan plan = plan_seed(buffer.data(), c.layout, kWord);
    ASSERT_TRUE(issue_seed(device, plan, nullptr));

    const auto mask = test::element_bytes(DataType::kFloat32, c.layout, bytes);
    std::int64_t wrong_elements = 0;
    std::int64_t stray_bytes = 0;
    for (std::size_t i = 0; i < buffer.whole_size(); ++i) {
      const bool payload =
          i >= GuardedBuffer::kGuardBytes && i < GuardedBuffer::kGuardBytes + bytes;
      if (payload && mask[i - GuardedBuffer::kGuardBytes]) continue;
      stray_bytes += buffer.whole()[i] != kCanary[i % 4];
    }
    for (std::int64_t b = 0; b < c.layout.shape[0]; ++b) {
      for (std::int64_t r = 0; r < c.layout.shape[1]; ++r) {
        for (std::int64_t col = 0; col < c.layout.shape[2]; ++col) {
          const std::int64_t e =
              b * c.layout.stride[0] + r * c.layout.stride[1] + col * c.layout.stride[2];
          std::uint32_t word = 0;
          std::memcpy(&word, buffer.data() + e * 4, 4);
          wrong_elements += word != kWord;
        }
      }
    }
    EXPECT_EQ(wrong_elements, 0);
    EXPECT_EQ(stray_bytes, 0);
  }
}

}  // namespace
}  // namespace fusedgemm::runtime
