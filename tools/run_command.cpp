// run GRAPH|FOLDER: build each graph, execute it once on random inputs with poisoned
// outputs, and judge every output and tap against the fp64 reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "commands.h"
#include "fusedgemm/context.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "reference/compare.h"
#include "reference/graph_reference.h"
#include "reference/resize.h"
#include "runtime/cuda_device.h"
#include "runtime/device.h"

namespace fusedgemm::tool {

namespace {

// Every byte 0xFF: NaN in each float type, so an element the kernel skipped cannot pass.
constexpr std::uint8_t kPoison = 0xFF;

enum class Outcome { kPassed, kFailed, kDeclined, kError };

// A status the run cannot go on from: a refused call (the plan's rules said no to a call the
// tool built from the graph) is a failed check, anything else an error.
Outcome stop(Output& out, const Status& status) {
  return out.error(status) == kExitFailed ? Outcome::kFailed : Outcome::kError;
}

const char* outcome_text(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailed: return "failed";
    case Outcome::kDeclined: return "declined";
    case Outcome::kError: return "error";
  }
  return "?";
}

// Where a call's buffers live: the host vectors themselves on the host device; device
// copies on a GPU, uploaded when placed and read back by fetch().
class CallMemory {
 public:
  explicit CallMemory(const Device& device) : device_(device) {}
  CallMemory(const CallMemory&) = delete;
  CallMemory& operator=(const CallMemory&) = delete;
  ~CallMemory() {
    for (auto& [data, host] : placed_) (void)runtime::cuda_test::release(device_, data);
  }

  Result<void*> place(std::vector<std::uint8_t>& bytes) {
    if (device_.is_host()) return static_cast<void*>(bytes.data());
    FG_ASSIGN_OR_RETURN(
        void* data, runtime::cuda_test::allocate(device_, std::max<std::size_t>(bytes.size(), 16)));
    placed_.emplace_back(data, &bytes);
    if (!bytes.empty()) {
      FG_TRY(runtime::cuda_test::copy_to_device(device_, data, bytes.data(), bytes.size()));
    }
    return data;
  }

  Status fetch() {
    if (device_.is_host()) return Status::ok();
    FG_TRY(runtime::cuda_test::synchronize(device_));
    for (auto& [data, host] : placed_) {
      FG_TRY(runtime::cuda_test::copy_to_host(device_, host->data(), data, host->size()));
    }
    return Status::ok();
  }

  Status synchronize() {
    return device_.is_host() ? Status::ok() : runtime::cuda_test::synchronize(device_);
  }

 private:
  const Device& device_;
  std::vector<std::pair<void*, std::vector<std::uint8_t>*>> placed_;
};

// Multiply-adds of one call: every GEMM of the problem the outputs were declared at.
double flops_of(const Graph& graph) {
  double flops = 0;
  for (const auto& node : graph.nodes()) {
    if (node.kind != NodeKind::kMatmul) continue;
    const auto& out = node.outputs[0]->dims();
    flops += 2.0 * static_cast<double>(out[0] * out[1] * out[2]) *
             static_cast<double>(node.inputs[0]->dims()[2]);
  }
  return flops;
}

// build() with a line on stderr for every kernel it compiled (0.3-1.5 s each when the cache
// misses, issue 12) and a progress line on a terminal while it works.
Result<Plan> build_noting(Output& out, Graph& graph, const BuildOptions& options,
                          const std::string& path) {
  const std::int64_t before = options.context->counters().compiles;
  out.progress(fmt::format("building {}", path));
  const auto start = std::chrono::steady_clock::now();
  Result<Plan> plan = build(graph, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::int64_t compiled = options.context->counters().compiles - before;
  out.done();
  if (compiled > 0) {
    out.note(
        fmt::format("fusedgemm: {}: compiled {} kernel(s) in {:.2f} s", path, compiled, seconds));
  }
  return plan;
}

Outcome run_one(Output& out, const std::string& path, const RunOptions& options,
                const std::shared_ptr<Context>& context) {
  out.text("== {}\n", path);
  auto loaded = load_graph(path);
  if (!loaded) return stop(out, loaded.status());
  Graph& graph = loaded.value();
  if (Status s = graph.validate(); !s) return stop(out, s);

  const reference::ProblemOverride size{options.batch, options.m, options.n, options.k, {}, {}};
  BuildOptions build_options{default_device(), context};
  if (!options.engine.empty()) {
    build_options.engine = options.engine == "fused" ? Engine::kFused : Engine::kFallback;
  }
  auto plan = build_noting(out, graph, build_options, path);
  if (!plan && plan.status().code() == ErrorCode::kUnavailable &&
      !build_options.device->is_host()) {
    out.text("note: {}; running on the host device\n", plan.status().message());
    build_options.device = make_host_device();
    plan = build_noting(out, graph, build_options, path);
  }
  if (!plan && plan.status().code() == ErrorCode::kDeclined) {
    out.text("DECLINED by the fused engine (forced): {}\n", plan.status().message());
    out.at()["declined"] = plan.status().message();
    return Outcome::kDeclined;
  }
  if (!plan) return stop(out, plan.status());
  if (plan->declined()) {
    out.text("  fallback engine: the fused engine declined: {}\n", plan->declined()->message);
    out.at()["declined"] = plan->declined()->message;
  }
  if (size.any()) {
    // A fused plan serves other problem sizes: re-declare the buffers, keep the plan. The
    // fallback engine runs the declared dims, so it is built again for the new ones. The
    // sizes are those of the fusion program's one problem, which a graph the fused engine
    // declines by a structure rule has not (a chained GEMM has two Ks): such a graph runs
    // at its declared dims.
    if (Status s = reference::resize_graph(graph, size); !s) {
      if (s.code() != ErrorCode::kDeclined) return stop(out, s);
      return stop(out,
                  Status(ErrorCode::kInvalidArgument,
                         fmt::format("run_resize: --batch/--m/--n/--k resize the graph's one GEMM "
                                     "problem, which a graph of this structure has not ({}); "
                                     "legal: run it at its declared dims",
                                     s.message())));
    }
    if (plan->engine() == Engine::kFallback) plan = build_noting(out, graph, build_options, path);
    if (!plan) return stop(out, plan.status());
  }

  auto inputs = reference::make_random_inputs(graph, options.seed);
  if (!inputs) return stop(out, inputs.status());
  // Bare addresses read as the plan's declared layouts; a resized call passes views.
  auto buffer = [&](const TensorAttributes& t, void* data) {
    return size.any() ? BufferView::view(data, t.dims(), t.strides()) : BufferView::address(data);
  };
  CallMemory memory(plan->device());
  VariantPack pack;
  for (auto& [uid, tensor] : inputs.value()) {
    auto t = graph.find_tensor(uid);
    if (!t) return stop(out, t.status());
    auto data = memory.place(tensor.bytes);
    if (!data) return stop(out, data.status());
    pack.set(uid, buffer(*t.value(), data.value()));
  }
  std::vector<std::pair<Tensor, reference::HostTensor>> outputs;
  for (const auto& t : graph.tensors()) {
    if (!t->is_output()) continue;
    auto host = reference::make_host_tensor(*t);
    if (!host) return stop(out, host.status());
    std::fill(host->bytes.begin(), host->bytes.end(), kPoison);
    outputs.emplace_back(t, std::move(host).value());
  }
  for (auto& [t, host] : outputs) {
    auto data = memory.place(host.bytes);
    if (!data) return stop(out, data.status());
    pack.set(*t->uid(), buffer(*t, data.value()));
  }

  auto bound = plan->bind(pack);
  if (!bound) return stop(out, bound.status());
  // The workspace for this call's problem (taps' and a split K's partials); its contents need
  // no initialization.
  auto workspace_bytes = plan->workspace_bytes(bound.value());
  if (!workspace_bytes) return stop(out, workspace_bytes.status());
  if (workspace_bytes.value() > static_cast<std::uint64_t>(reference::kMaxHostTensorBytes)) {
    return stop(out, Status(ErrorCode::kInvalidArgument,
                            fmt::format("run_workspace_bytes: the call needs a workspace of {} "
                                        "bytes; legal: at most {} (2^34) on the host",
                                        workspace_bytes.value(), reference::kMaxHostTensorBytes)));
  }
  std::vector<std::uint8_t> workspace(workspace_bytes.value(), kPoison);
  Workspace ws;
  if (!workspace.empty()) {
    auto data = memory.place(workspace);
    if (!data) return stop(out, data.status());
    ws = {data.value(), workspace.size()};
  }
  out.progress(fmt::format("executing {} on the {} device", path, plan->device().name()));
  if (Status s = plan->execute(bound.value(), ws, nullptr); !s) {
    return stop(out, s);
  }
  std::string timing;
  out.at()["engine"] = std::string(to_string(plan->engine()));
  out.at()["device"] = std::string(plan->device().name());
  if (!plan->device().is_host() && options.timed_calls > 0) {
    // Warm calls (the first ones pay for module loads and cold caches; issue 12 saw 7.6-41
    // us between examples of one size from a cold clock), then a burst from a drained
    // stream: host time of the calls, then device time per call.
    constexpr int kWarmCalls = 10;
    const int calls = options.timed_calls;
    for (int i = 0; i < kWarmCalls; ++i) (void)plan->execute(bound.value(), ws, nullptr);
    if (Status s = memory.synchronize(); !s) return stop(out, s);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) (void)plan->execute(bound.value(), ws, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    if (Status s = memory.synchronize(); !s) return stop(out, s);
    const auto t2 = std::chrono::steady_clock::now();
    const double host_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
    const double device_s = std::chrono::duration<double>(t2 - t0).count() / calls;
    timing = fmt::format("; host {:.2f} us/call, {:.1f} us/call end to end, {:.0f} TFLOP/s",
                         host_us, device_s * 1e6, flops_of(graph) / device_s / 1e12);
    out.at()["host_us_per_call"] = host_us;
    out.at()["device_us_per_call"] = device_s * 1e6;
  }
  if (Status s = memory.fetch(); !s) return stop(out, s);
  out.progress(fmt::format("evaluating {} in fp64 on the host", path));
  auto expected = reference::evaluate(graph, inputs.value());
  out.done();
  if (!expected) return stop(out, expected.status());

  bool all_passed = true;
  auto& checked = out.at()["outputs"] = nlohmann::json::array();
  for (const auto& [t, host] : outputs) {
    const auto* want = [&]() -> const reference::OutputValues* {
      for (const auto& o : expected->outputs()) {
        if (o.uid == *t->uid()) return &o;
      }
      return nullptr;
    }();
    if (want == nullptr) continue;
    const auto cmp = reference::compare(host, *want);
    all_passed = all_passed && cmp.passed();
    out.text("  {} {:<22} {:<8} {}\n", cmp.passed() ? "PASS" : "FAIL",
             fmt::format("'{}'", t->name()), to_string(t->data_type()), cmp.summary());
    checked.push_back({{"name", t->name()},
                       {"type", std::string(to_string(t->data_type()))},
                       {"passed", cmp.passed()},
                       {"rel_err", cmp.relative_error},
                       {"tolerance", cmp.tolerance},
                       {"nonfinite_mismatches", cmp.nonfinite_mismatches},
                       {"order_dependent", cmp.order_dependent},
                       {"elements", cmp.element_count}});
  }
  std::uint64_t deferrals = 0;
  for (const auto& d : plan->deferrals()) deferrals += d.count;
  out.at()["deferrals"] = deferrals;
  out.text("  {} engine on the {} device{}; deferrals: {}\n", to_string(plan->engine()),
           plan->device().name(), timing,
           deferrals == 0 ? std::string("none") : fmt::format("{}", deferrals));
  return all_passed ? Outcome::kPassed : Outcome::kFailed;
}

}  // namespace

int run_command(Output& out, const RunOptions& options) {
  const std::vector<std::string> paths = graph_files(options.path);
  if (paths.empty()) return no_graph_files(out, options.path);
  // One Context for every build: one kernel cache, and a bad FUSEDGEMM_* value fails here
  // on every device (docs/ENVIRONMENT.md).
  auto context = Context::create();
  if (!context) return out.error(context.status());
  int passed = 0, failed = 0, declined = 0, errors = 0;
  for (const auto& path : paths) {
    out.begin_graph(path);
    const Outcome outcome = run_one(out, path, options, context.value());
    out.at()["outcome"] = outcome_text(outcome);
    switch (outcome) {
      case Outcome::kPassed: ++passed; break;
      case Outcome::kFailed: ++failed; break;
      case Outcome::kDeclined: ++declined; break;
      case Outcome::kError: ++errors; break;
    }
    std::fflush(stdout);
  }
  out.text("\n{} graphs: {} passed, {} failed, {} declined, {} errors\n", paths.size(), passed,
           failed, declined, errors);
  out.top()["summary"] = {
      {"passed", passed}, {"failed", failed}, {"declined", declined}, {"errors", errors}};
  // A graph the forced fused engine declines ran nothing: not a success.
  if (errors != 0) return kExitCannotRun;
  return failed + declined == 0 ? kExitOk : kExitFailed;
}

}  // namespace fusedgemm::tool
