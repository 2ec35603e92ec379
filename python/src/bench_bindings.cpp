// For bench/python_host_cost.py: the host cost of a raw cuLaunchKernelEx of a bound pack's
// kernel, of Plan::execute of the bound pack from C++, and of Plan::execute of the same
// buffers as a VariantPack keyed by name (what a Python dict becomes), timed in this process
// exactly as bench/gpu_bench.cpp times them (a burst from a drained stream, the minimum over
// bursts, the two interleaved), so the Python figures have their C++ baselines beside them.
#include <dlfcn.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <tuple>

#include "bindings.h"
#include "fusedgemm/plan.h"
#include "py_plan.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_driver.h"
#include "runtime/plan_state.h"

namespace fusedgemm::python {

namespace {

using Clock = std::chrono::steady_clock;

struct Driver {
  decltype(&cuLaunchKernelEx) launch = nullptr;
  decltype(&cuStreamSynchronize) synchronize = nullptr;
};

Driver open_driver() {
  const runtime::DriverLibrary& lib = runtime::system_driver();
  if (lib.handle == nullptr) throw nb::value_error(("no CUDA driver: " + lib.error).c_str());
  Driver d;
  d.launch = reinterpret_cast<decltype(&cuLaunchKernelEx)>(dlsym(lib.handle, "cuLaunchKernelEx"));
  d.synchronize =
      reinterpret_cast<decltype(&cuStreamSynchronize)>(dlsym(lib.handle, "cuStreamSynchronize"));
  if (!d.launch || !d.synchronize) throw nb::value_error("the CUDA driver lacks cuLaunchKernelEx");
  return d;
}

template <class F>
double burst_us(const Driver& d, CUstream stream, int burst, F f) {
  d.synchronize(stream);
  const auto t0 = Clock::now();
  for (int i = 0; i < burst; ++i) f();
  const auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / burst;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def(
      "_bench_cpp_host_cost",
      [](const PyPlan& py_plan, const PyBound& py_bound, std::uintptr_t workspace,
         std::uint64_t workspace_bytes, std::uintptr_t stream, int burst, int bursts) {
        const Plan& plan = py_plan.plan;
        const BoundPack& bound = py_bound.pack;
        const auto& state = runtime::PlanAccess::state(plan);
        if (state.device->is_host() || !state.kernel) {
          throw nb::value_error("a fused plan on a CUDA device is needed");
        }
        const Driver d = open_driver();
        auto* s = reinterpret_cast<CUstream>(stream);
        const Workspace ws{reinterpret_cast<void*>(workspace), workspace_bytes};
        check(plan.execute(bound, ws, s));
        // The raw launch reuses execute's own arguments, TMA descriptors already encoded.
        const auto& call = runtime::PlanAccess::call(bound);
        kernels::KernelArgs args = call.args;
        for (int i = 0; i < args.buffer_count; ++i) {
          args.buffers[i].data = bound[state.recipe.roles[i].slot].data;
        }
        args.workspace = ws.data;
        check(state.device->launch(*state.kernel, call.launch, args, s));
        auto function = static_cast<CUfunction>(runtime::cuda_test::function_of(*state.kernel));
        CUlaunchConfig config{};
        config.gridDimX = call.launch.grid[0];
        config.gridDimY = call.launch.grid[1];
        config.gridDimZ = call.launch.grid[2];
        config.blockDimX = call.launch.block[0];
        config.blockDimY = call.launch.block[1];
        config.blockDimZ = call.launch.block[2];
        config.sharedMemBytes = call.launch.shared_bytes;
        config.hStream = s;
        CUlaunchAttribute cluster{};
        if (call.launch.cluster[0] > 1) {
          cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
          cluster.value.clusterDim.x = call.launch.cluster[0];
          cluster.value.clusterDim.y = 1;
          cluster.value.clusterDim.z = 1;
          config.attrs = &cluster;
          config.numAttrs = 1;
        }
        void* params[] = {&args};
        // The bound buffers as the name-keyed views the extension makes of a buffers dict.
        VariantPack pack;
        for (std::size_t slot = 0; slot < bound.size(); ++slot) {
          const BoundPack::Buffer& b = bound[slot];
          pack.set(state.recipe.slots[slot].name,
                   b.is_view ? BufferView::view(b.data, {b.shape, b.shape + b.rank},
                                                {b.stride, b.stride + b.rank}, b.data_type)
                             : BufferView::address(b.data));
        }
        check(plan.execute(pack, ws, s));
        double raw = 1e30, execute = 1e30, execute_pack = 1e30;
        {
          nb::gil_scoped_release release;
          for (int i = 0; i < bursts; ++i) {
            raw = std::min(
                raw, burst_us(d, s, burst, [&] { d.launch(&config, function, params, nullptr); }));
            execute =
                std::min(execute, burst_us(d, s, burst, [&] { (void)plan.execute(bound, ws, s); }));
            execute_pack = std::min(
                execute_pack, burst_us(d, s, burst, [&] { (void)plan.execute(pack, ws, s); }));
          }
          d.synchronize(s);
        }
        return std::make_tuple(raw, execute, execute_pack);
      },
      "plan"_a, "bound"_a, "workspace"_a, "workspace_bytes"_a, "stream"_a, "burst"_a, "bursts"_a,
      "(raw cuLaunchKernelEx us, Plan::execute of the bound pack us, Plan::execute of a "
      "name-keyed VariantPack us) per call: the minimum over `bursts` bursts of "
      "`burst` calls from a drained stream (benchmarks only).");
}

}  // namespace fusedgemm::python
