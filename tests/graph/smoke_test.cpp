#include <gtest/gtest.h>

#include "fusedgemm/graph.h"
#include "fusion/analyze.h"
#include "fusion/print.h"
#include "recipe/support_gate.h"

using namespace fusedgemm;

TEST(Smoke, GatedMlp) {
  Graph g;
  g.set_name("gated");
  auto a = g.tensor(TensorAttributes().set_name("A").set_dim({1, 256, 128}).set_data_type(DataType::kBFloat16));
  auto b0 = g.tensor(TensorAttributes().set_name("B0").set_dim({1, 128, 512}).set_stride({128 * 512, 1, 128}).set_data_type(DataType::kBFloat16));
  auto b1 = g.tensor(TensorAttributes().set_name("B1").set_dim({1, 128, 512}).set_stride({128 * 512, 1, 128}).set_data_type(DataType::kBFloat16));
  auto bias = g.tensor(TensorAttributes().set_name("bias").set_dim({1, 1, 512}).set_data_type(DataType::kBFloat16));
  auto c0 = g.matmul(a, b0);
  auto c1 = g.matmul(a, b1);
  auto s = g.pointwise(g.pointwise(c0, bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd)), PointwiseAttributes().set_mode(PointwiseMode::kSilu));
  auto d = g.pointwise(s, c1, PointwiseAttributes().set_mode(PointwiseMode::kMul));
  d->set_output(true).set_data_type(DataType::kBFloat16).set_name("D");
  auto r = g.reduction(d, ReductionAttributes().set_mode(ReductionMode::kAmax));
  r->set_dim({1, 256, 1}).set_output(true).set_name("row_amax");
  ASSERT_TRUE(g.validate()) << g.validate().message();
  auto an = fusion::analyze(g);
  ASSERT_TRUE(an);
  ASSERT_FALSE(an->decline) << an->decline->message;
  std::printf("%s", fusion::to_string(an->program).c_str());
  EXPECT_FALSE(recipe::check_support(an->program));
}
