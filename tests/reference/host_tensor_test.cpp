#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/graph_reference.h"
#include "runtime/numeric.h"

using namespace fusedgemm;
using reference::HostTensor;

namespace {

Tensor leaf(Graph& g, std::string name, std::vector<std::int64_t> dims, DataType type) {
  return g.tensor(
      TensorAttributes().set_name(std::move(name)).set_dim(std::move(dims)).set_data_type(type));
}

void for_each_index(const HostTensor& t, const std::function<void(int, int, int)>& f) {
  for (int b = 0; b < t.layout.shape[0]; ++b) {
    for (int r = 0; r < t.layout.shape[1]; ++r) {
      for (int c = 0; c < t.layout.shape[2]; ++c) f(b, r, c);
    }
  }
}

}  // namespace

TEST(HostTensor, StorageBytesCountPackedNibbles) {
  EXPECT_EQ(reference::storage_bytes(DataType::kFp4E2M1, Layout::row_major({1, 3, 5})), 8);
  EXPECT_EQ(reference::storage_bytes(DataType::kFp4E2M1, Layout::row_major({1, 2, 4})), 4);
  EXPECT_EQ(reference::storage_bytes(DataType::kBFloat16, Layout::row_major({2, 3, 4})), 48);
  // A strided layout needs its span, not its element count.
  EXPECT_EQ(reference::storage_bytes(DataType::kFloat32, Layout{{1, 2, 2}, {8, 4, 1}}), 24);
}

// Issue 10: span * bits wrapped for A [1, 256, 128]:[1, 1, 9078122083518480], and the
// random fill wrote past a small buffer.
TEST(HostTensor, StorageBytesSaturateRatherThanWrap) {
  const Layout huge{{1, 256, 128}, {1, 1, 9078122083518480}};
  EXPECT_EQ(reference::storage_bytes(DataType::kBFloat16, huge),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(reference::storage_bytes(DataType::kFp4E2M1, huge), 576460752303423608);
  const Layout widest{{1, 1, 2}, {1, 1, std::numeric_limits<std::int64_t>::max()}};
  EXPECT_EQ(reference::storage_bytes(DataType::kFp4E2M1, widest),
            std::numeric_limits<std::int64_t>::max());
}

TEST(HostTensor, RefusesALayoutPastTheHostLimitBeforeAllocating) {
  struct Case {
    Dims strides;
    std::string bytes;
  };
  const std::vector<Case> cases = {{{1, 1, 9078122083518480}, "spans more than 2^63 bytes"},
                                   {{1, std::int64_t{1} << 32, 1}, "spans 2190433321216 bytes"}};
  for (const auto& c : cases) {
    TensorAttributes a;
    a.set_name("A").set_dim({1, 256, 128}).set_stride({c.strides.begin(), c.strides.end()});
    a.set_data_type(DataType::kBFloat16);
    auto host = reference::make_host_tensor(a);
    ASSERT_FALSE(host);
    EXPECT_EQ(host.status().code(), ErrorCode::kInvalidArgument);
    const std::string m = host.status().message();
    EXPECT_TRUE(m.starts_with("host_tensor_bytes: tensor 'A': layout [1, 256, 128]")) << m;
    EXPECT_NE(m.find(c.bytes), std::string::npos) << m;
    EXPECT_NE(m.find("legal: at most 17179869184 bytes"), std::string::npos) << m;
    std::mt19937_64 rng(1);
    EXPECT_FALSE(reference::make_random_host_tensor(a, reference::ValueRange::kSigned, rng));
  }
}

TEST(HostTensor, ReadsAndWritesThroughStrides) {
  Graph g;
  auto b = g.tensor(
      TensorAttributes().set_name("B").set_dim({1, 4, 2}).set_stride({8, 1, 4}).set_data_type(
          DataType::kFp4E2M1));
  auto c = g.matmul(leaf(g, "A", {1, 3, 4}, DataType::kFp4E2M1), b);
  c->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate()) << g.validate().message();
  HostTensor host = reference::make_host_tensor(*b).value();
  ASSERT_EQ(host.bytes.size(), 4u);
  host.set(0, 1, 0, 1.5);  // offset 1: high nibble of byte 0
  host.set(0, 0, 1, -6);   // offset 4: low nibble of byte 2
  EXPECT_EQ(host.bytes[0], 0x30);
  EXPECT_EQ(host.bytes[2], 0x0F);
  EXPECT_EQ(host.at(0, 1, 0), 1.5);
  EXPECT_EQ(host.at(0, 0, 1), -6.0);
  EXPECT_EQ(host.at(0, 0, 0), 0.0);
}

TEST(HostTensor, RandomInputsAreQuantizedInRangeAndSeeded) {
  Graph g;
  auto a = leaf(g, "A", {1, 8, 32}, DataType::kFp8E4M3);
  auto a_scale = leaf(g, "A_scale", {1, 8, 1}, DataType::kFloat32);
  auto w = leaf(g, "W", {1, 32, 16}, DataType::kBFloat16);
  auto e8 = leaf(g, "W_scale", {1, 1, 1}, DataType::kE8M0);
  auto w8 = leaf(g, "W8", {1, 32, 16}, DataType::kFp8E4M3);
  auto x =
      g.block_scale_dequantize(a, a_scale, BlockScaleDequantizeAttributes().set_block_size(1, 32));
  auto v =
      g.block_scale_dequantize(w8, e8, BlockScaleDequantizeAttributes().set_block_size(32, 16));
  auto c = g.pointwise(g.matmul(x, w), g.matmul(x, v),
                       PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  c->set_output(true).set_data_type(DataType::kBFloat16);
  ASSERT_TRUE(g.validate()) << g.validate().message();

  auto inputs = reference::make_random_inputs(g, 42);
  ASSERT_TRUE(inputs) << inputs.status().message();
  EXPECT_EQ(inputs->size(), 5u);
  for (const auto& t : {a, w, w8}) {
    const HostTensor& h = inputs->at(*t->uid());
    EXPECT_EQ(h.type, t->data_type());
    bool any_negative = false;
    for_each_index(h, [&](int b, int r, int c) {
      const double value = h.at(b, r, c);
      EXPECT_LE(std::fabs(value), 1.0) << t->name();
      EXPECT_EQ(numeric::round_to_double(h.type, value), value);
      any_negative = any_negative || value < 0;
    });
    EXPECT_TRUE(any_negative) << t->name();
  }
  for (const auto& t : {a_scale, e8}) {
    const HostTensor& h = inputs->at(*t->uid());
    for_each_index(h, [&](int b, int r, int c) {
      EXPECT_GE(h.at(b, r, c), 0.5) << t->name();
      EXPECT_LE(h.at(b, r, c), 2.0) << t->name();
    });
  }
  auto again = reference::make_random_inputs(g, 42);
  auto other = reference::make_random_inputs(g, 43);
  ASSERT_TRUE(again && other);
  EXPECT_EQ(again->at(*w->uid()).bytes, inputs->at(*w->uid()).bytes);
  EXPECT_NE(other->at(*w->uid()).bytes, inputs->at(*w->uid()).bytes);
}

// int8 draws from [-1, 1] round to 0 half the time; a one-element tensor must still never
// be all zeros.
TEST(HostTensor, RandomTensorIsNeverAllZeros) {
  Graph g;
  auto t = leaf(g, "t", {1, 1, 1}, DataType::kInt8);
  auto out = g.pointwise(t, PointwiseAttributes().set_mode(PointwiseMode::kNeg));
  out->set_output(true).set_data_type(DataType::kFloat32);
  ASSERT_TRUE(g.validate());
  int ones = 0;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    std::mt19937_64 rng(seed);
    HostTensor h =
        reference::make_random_host_tensor(*t, reference::ValueRange::kSigned, rng).value();
    EXPECT_NE(h.at(0, 0, 0), 0.0) << seed;
    ones += h.at(0, 0, 0) == 1.0;
  }
  EXPECT_GT(ones, 32);  // the forced 1 plus the drawn ones
}

TEST(HostTensor, RandomInputsNeedAValidatedGraph) {
  Graph g;
  auto t = leaf(g, "t", {1, 1, 1}, DataType::kFloat32);
  g.pointwise(t, PointwiseAttributes().set_mode(PointwiseMode::kNeg))->set_output(true);
  auto inputs = reference::make_random_inputs(g, 1);
  ASSERT_FALSE(inputs);
  EXPECT_EQ(inputs.status().code(), ErrorCode::kInvalidGraph);
}
