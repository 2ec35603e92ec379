// build() on several threads: copies of one graph built at once make the plans one build
// makes alone (a copy shared its tensors with the original, and each build's validate()
// rewrote their uids and inferred dims under the others).
#include "fusedgemm/plan.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "example_files.h"
#include "fusedgemm/device.h"
#include "fusedgemm/graph_json.h"

namespace fusedgemm {
namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 25;

TEST(Build, CopiesOfOneGraphBuiltOnSeveralThreadsMakeTheSamePlan) {
  for (const char* example : {"aux_bias.json", "taps.json", "gated_mlp.json"}) {
    SCOPED_TRACE(example);
    Result<Graph> graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/" + example);
    ASSERT_TRUE(graph) << graph.status().message();
    const BuildOptions options{make_host_device()};
    Graph solo = graph.value();
    Result<Plan> alone = build(solo, options);
    ASSERT_TRUE(alone) << alone.status().message();
    const std::string expected = alone->describe();

    std::vector<std::string> described(kThreads * kRounds);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) {
          Graph copy = graph.value();
          Result<Plan> plan = build(copy, options);
          described[t * kRounds + r] = plan ? plan->describe() : plan.status().message();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (const std::string& d : described) EXPECT_EQ(d, expected);
  }
}

}  // namespace
}  // namespace fusedgemm
