// The engine's own share of a call: Plan::execute against a device that does nothing, per
// flavor (every example graph). Target: under 150 ns a call (issue 3); docs/PERF.md.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "runtime/device.h"

namespace {

using namespace fusedgemm;

class NullKernel final : public runtime::LoadedKernel {};

// Accepts every fill and launch and does nothing, so only the execute path is timed.
class NullDevice final : public runtime::Device {
 public:
  std::string_view name() const noexcept override { return "null"; }
  bool is_host() const noexcept override { return true; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 0; }
  Result<std::shared_ptr<const runtime::LoadedKernel>> load(const runtime::KernelImage&) override {
    return std::shared_ptr<const runtime::LoadedKernel>(std::make_shared<NullKernel>());
  }
  Status fill(const runtime::Fill32&, runtime::Stream) noexcept override { return Status::ok(); }
  Status launch(const runtime::LoadedKernel&, const runtime::LaunchConfig&,
                kernels::KernelArgs& args, runtime::Stream) noexcept override {
    benchmark::DoNotOptimize(&args);
    return Status::ok();
  }
};

struct Flavor {
  Plan plan;
  BoundPack bound;
  VariantPack pack;
  Workspace workspace;
};

// Addresses the null device never reads, aligned for every rule.
void* fake_address(std::size_t slot) {
  return reinterpret_cast<void*>(std::uintptr_t{0x7f0000000000} + slot * 0x100000000);
}

std::unique_ptr<Flavor> make_flavor(const std::string& path) {
  auto graph = load_graph(path);
  if (!graph) return nullptr;
  auto plan = build(graph.value(), BuildOptions{std::make_shared<NullDevice>()});
  // A fallback plan's host runner would run its steps over the fake addresses; the figure
  // here is the fused engine's one-launch path.
  if (!plan || plan->engine() != Engine::kFused) return nullptr;
  VariantPack pack;
  std::size_t slot = 0;
  for (const auto& t : graph->tensors()) {
    if (plan->slot_of(*t->uid())) pack.set(*t->uid(), fake_address(slot++));
  }
  auto bound = plan->bind(pack);
  if (!bound) return nullptr;
  const Workspace workspace{fake_address(slot), plan->workspace_bytes()};
  return std::make_unique<Flavor>(Flavor{plan.value(), bound.value(), pack, workspace});
}

void execute_bound(benchmark::State& state, std::shared_ptr<Flavor> flavor) {
  for (auto _ : state) {
    Status s = flavor->plan.execute(flavor->bound, flavor->workspace, nullptr);
    if (!s) state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(s);
  }
}

void execute_pack(benchmark::State& state, std::shared_ptr<Flavor> flavor) {
  for (auto _ : state) {
    Status s = flavor->plan.execute(flavor->pack, flavor->workspace, nullptr);
    if (!s) state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(FUSEDGEMM_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::shared_ptr<Flavor> flavor = make_flavor(file.string());
    if (!flavor) continue;  // declined graphs run on the fallback engine, not timed here
    const std::string name = file.stem().string();
    benchmark::RegisterBenchmark(("execute_bound/" + name).c_str(), execute_bound, flavor);
    benchmark::RegisterBenchmark(("execute_pack/" + name).c_str(), execute_pack, flavor);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
