// Every flavor on the GPU through the public execute, against the fp64 reference: each
// example graph x both majors of A and B x batch 1 and 3 x shapes with ragged edges. Inputs
// random, outputs poisoned first. Suites named *Gpu* carry the ctest label `gpu` and skip
// without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "reference/compare.h"
#include "reference/graph_reference.h"
#include "reference/resize.h"
#include "runtime/cuda_device.h"
#include "support/device_call.h"

namespace fusedgemm {
namespace {

struct Shape {
  std::int64_t batch, m, n, k;
};

struct Case {
  std::string example;
  Shape shape;
  bool a_k_major;
  bool b_k_major;
};

std::string describe(const Case& c) {
  return c.example + " b" + std::to_string(c.shape.batch) + " " + std::to_string(c.shape.m) + "x" +
         std::to_string(c.shape.n) + "x" + std::to_string(c.shape.k) +
         (c.a_k_major ? " A:K" : " A:M") + (c.b_k_major ? " B:K" : " B:N");
}

// Device memory for every buffer of one call, freed with the test.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  ~DeviceBuffers() {
    for (void* p : owned_) (void)runtime::cuda_test::release(*device_, p);
  }
  void* upload(const std::vector<std::uint8_t>& bytes) {
    auto data = runtime::cuda_test::allocate(*device_, std::max<std::size_t>(bytes.size(), 16));
    if (!data) return nullptr;
    owned_.push_back(data.value());
    if (!bytes.empty()) {
      (void)runtime::cuda_test::copy_to_device(*device_, data.value(), bytes.data(), bytes.size());
    }
    return data.value();
  }
  Status download(void* device_data, std::vector<std::uint8_t>& bytes) {
    FG_TRY(runtime::cuda_test::synchronize(*device_));
    return runtime::cuda_test::copy_to_host(*device_, bytes.data(), device_data, bytes.size());
  }

 private:
  std::shared_ptr<Device> device_;
  std::vector<void*> owned_;
};

enum class Outcome { kCompared, kNotBuilt, kRefused };

// Builds, executes once and compares. A graph the generator does not emit yet (kUnavailable)
// is not built; a call a rule refuses (a contiguous extent of 1, say) must have written
// nothing — either way never a wrong answer.
Outcome run_case(const std::shared_ptr<Device>& device, const Case& c) {
  SCOPED_TRACE(describe(c));
  auto loaded = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/" + c.example + ".json");
  EXPECT_TRUE(loaded) << loaded.status().message();
  if (!loaded) return Outcome::kNotBuilt;
  Graph& graph = loaded.value();
  EXPECT_TRUE(graph.validate());
  const reference::ProblemOverride size{c.shape.batch, c.shape.m,   c.shape.n,
                                        c.shape.k,     c.a_k_major, c.b_k_major};
  if (Status s = reference::resize_graph(graph, size); !s) return Outcome::kNotBuilt;
  auto plan = build(graph, BuildOptions{device});
  if (!plan && (plan.status().code() == ErrorCode::kDeclined ||
                plan.status().code() == ErrorCode::kUnavailable)) {
    std::printf("  not built: %s: %s\n", describe(c).c_str(), plan.status().message().c_str());
    return Outcome::kNotBuilt;
  }
  EXPECT_TRUE(plan) << plan.status().message();
  if (!plan) return Outcome::kNotBuilt;

  auto inputs = reference::make_random_inputs(graph, 7);
  EXPECT_TRUE(inputs) << inputs.status().message();
  if (!inputs) return Outcome::kNotBuilt;
  DeviceBuffers buffers(device);
  VariantPack pack;
  for (auto& [uid, tensor] : inputs.value()) pack.set(uid, buffers.upload(tensor.bytes));
  std::vector<std::pair<Tensor, reference::HostTensor>> outputs;
  std::vector<void*> output_data;
  for (const auto& t : graph.tensors()) {
    if (!t->is_output()) continue;
    auto host = reference::make_host_tensor(*t).value();
    std::fill(host.bytes.begin(), host.bytes.end(), 0xFF);  // NaN in every float type
    output_data.push_back(buffers.upload(host.bytes));
    pack.set(*t->uid(), output_data.back());
    outputs.emplace_back(t, std::move(host));
  }
  std::vector<std::uint8_t> workspace_bytes(plan->workspace_bytes());
  void* workspace = workspace_bytes.empty() ? nullptr : buffers.upload(workspace_bytes);
  const Status executed = plan->execute(pack, {workspace, workspace_bytes.size()}, nullptr);
  if (executed.code() == ErrorCode::kIllegalCall) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      auto& [t, host] = outputs[i];
      std::vector<std::uint8_t> after(host.bytes.size());
      EXPECT_TRUE(buffers.download(output_data[i], after));
      EXPECT_TRUE(std::all_of(after.begin(), after.end(), [](auto b) { return b == 0xFF; }))
          << "a refused call wrote '" << t->name() << "'";
    }
    // Only the rules a shape or major can break may refuse one of these calls.
    const std::string& m = executed.message();
    const std::string rule = m.substr(0, m.find(':'));
    EXPECT_TRUE(rule == "contiguous_extent" || rule == "major" || rule == "stride_alignment")
        << describe(c) << " refused by an unexpected rule: " << m;
    std::printf("  refused: %s: %s\n", describe(c).c_str(), m.c_str());
    return Outcome::kRefused;
  }
  EXPECT_TRUE(executed) << executed.message();
  if (!executed) return Outcome::kNotBuilt;

  auto expected = reference::evaluate(graph, inputs.value());
  EXPECT_TRUE(expected) << expected.status().message();
  if (!expected) return Outcome::kNotBuilt;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    auto& [t, host] = outputs[i];
    EXPECT_TRUE(buffers.download(output_data[i], host.bytes));
    for (const auto& want : expected->outputs()) {
      if (want.uid != *t->uid()) continue;
      const auto cmp = reference::compare(host, want);
      EXPECT_TRUE(cmp.passed()) << "'" << t->name() << "': " << cmp.summary();
    }
  }
  for (const auto& d : plan->deferrals()) EXPECT_EQ(d.count, 0u) << d.rule;
  return Outcome::kCompared;
}

using ExecuteGpu = test::OnGpu<>;

std::vector<std::string> fused_examples() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(FUSEDGEMM_EXAMPLES_DIR)) {
    if (e.path().extension() == ".json" && e.path().stem() != "fallback_only") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Every flavor x A and B majors x batch 1 and 3 x three shapes: ragged against every tile
// (200 x 144 x 272: multiples of 16 so fp8 roles pass their contiguous-extent rule),
// decode-time M = 1, and N = 16 (one narrow tile column), all small enough for the fp64
// reference. Each case computes the reference or is refused by a layout rule (M-major A at
// M = 1 has a contiguous extent of 1) with nothing written.
TEST_F(ExecuteGpu, EveryFlavorEveryMajorBatchOneAndThree) {
  int compared = 0;
  for (const auto& example : fused_examples()) {
    for (const Shape& mnk :
         {Shape{1, 200, 144, 272}, Shape{1, 1, 256, 512}, Shape{1, 256, 16, 128}}) {
      for (const std::int64_t batch : {1, 3}) {
        for (const bool a_k : {true, false}) {
          for (const bool b_k : {true, false}) {
            const Case c{example, {batch, mnk.m, mnk.n, mnk.k}, a_k, b_k};
            compared += run_case(device_, c) == Outcome::kCompared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 0) << "no case ran on the GPU";
}

// The shapes: a square with ragged edges, decode-time M of 1, and N of 1.
TEST_F(ExecuteGpu, PlainAtLargeAndSkinnyShapes) {
  int compared = 0;
  for (const Shape& shape : {Shape{1, 1000, 1000, 1000}, Shape{1, 1, 4096, 4096},
                             Shape{1, 4096, 1, 512}, Shape{3, 1, 4096, 4096}}) {
    compared += run_case(device_, {"plain", shape, true, true}) == Outcome::kCompared;
    compared += run_case(device_, {"plain", shape, false, false}) == Outcome::kCompared;
  }
  EXPECT_GT(compared, 0) << "no case ran on the GPU";
}

// Quantized outputs are stored element by element, so N need not be a multiple of 16: 200
// (a ragged last block of 72) and 45 (a block of 45), batch 1 and 3, each major.
TEST_F(ExecuteGpu, QuantizedOutputAtAnyN) {
  int compared = 0;
  for (const Shape& shape : {Shape{1, 200, 200, 144}, Shape{3, 40, 45, 64}}) {
    for (const bool k_major : {true, false}) {
      compared +=
          run_case(device_, {"quantized_output", shape, k_major, k_major}) == Outcome::kCompared;
    }
  }
  EXPECT_GT(compared, 0) << "no case ran on the GPU";
}

}  // namespace
}  // namespace fusedgemm
