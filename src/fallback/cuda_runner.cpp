#include "fallback/cuda_runner.h"

#include <algorithm>

#include "fallback/cublaslt.h"
#include "fallback/step_args.h"
#include "fallback/step_source.h"
#include "jit/context.h"

namespace fusedgemm::fallback {
namespace {

constexpr unsigned kThreads = 256;         // kernels/fallback_steps.cuh kStepThreads
constexpr std::int64_t kMaxBlocks = 8192;  // the step kernels loop over what is left

// A step's launch: one thread per element, or one block per reduced element.
runtime::LaunchConfig step_launch(const Step& step, const kernels::KernelArgs& args) {
  const std::int64_t count = args.batch * args.m * args.n;
  const std::int64_t blocks =
      step.kind == StepKind::kReduction ? count : (count + kThreads - 1) / kThreads;
  runtime::LaunchConfig launch;
  launch.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, kMaxBlocks));
  launch.block[0] = kThreads;
  return launch;
}

class CudaRunner final : public runtime::Runner {
 public:
  CudaRunner(std::shared_ptr<const Program> program, std::shared_ptr<runtime::Device> device)
      : p_(std::move(program)), device_(std::move(device)) {}

  Status prepare(Context& context) {
    FG_ASSIGN_OR_RETURN(StepSource source, generate_step_source(*p_));
    FG_ASSIGN_OR_RETURN(jit::CompileResult compiled,
                        context.compile(source.source, jit::CompileOptions{}));
    kernels_.resize(p_->steps.size());
    gemms_.resize(p_->steps.size());
    for (std::size_t i = 0; i < p_->steps.size(); ++i) {
      const Step& s = p_->steps[i];
      if (s.kind != StepKind::kMatmul) {
        runtime::KernelImage image;
        image.entry = source.entries[i];
        image.cubin = compiled.kernel->cubin;
        FG_ASSIGN_OR_RETURN(kernels_[i], device_->load(image));
        continue;
      }
      if (!lt_) {
        FG_ASSIGN_OR_RETURN(lt_, CublasLt::open());
      }
      const Dims& a = p_->values[s.in[0]].dims;
      const Dims& b = p_->values[s.in[1]].dims;
      const Dims& d = p_->values[s.out].dims;
      FG_ASSIGN_OR_RETURN(gemms_[i],
                          lt_->plan_gemm(d[0], d[1], d[2], a[2], a[0] != d[0], b[0] != d[0]));
    }
    return Status::ok();
  }

  Status run(const recipe::CallView& view, runtime::Stream stream) const noexcept override {
    for (std::size_t i = 0; i < p_->steps.size(); ++i) {
      const Step& s = p_->steps[i];
      kernels::KernelArgs args = step_args(*p_, view, s);
      if (s.kind == StepKind::kMatmul) {
        FG_TRY(gemms_[i]->run(args.buffers[1].data, args.buffers[2].data, args.buffers[0].data,
                              stream));
        continue;
      }
      FG_TRY(device_->launch(*kernels_[i], step_launch(s, args), args, stream));
    }
    return Status::ok();
  }

  std::string describe() const override { return to_string(*p_); }

 private:
  std::shared_ptr<const Program> p_;
  std::shared_ptr<runtime::Device> device_;
  std::shared_ptr<const CublasLt> lt_;
  std::vector<std::shared_ptr<const runtime::LoadedKernel>> kernels_;
  std::vector<std::unique_ptr<const Gemm>> gemms_;
};

}  // namespace

Result<std::shared_ptr<const runtime::Runner>> make_cuda_runner(
    std::shared_ptr<const Program> program, std::shared_ptr<runtime::Device> device,
    Context& context) {
  auto runner = std::make_shared<CudaRunner>(std::move(program), std::move(device));
  FG_TRY(runner->prepare(context));
  return std::shared_ptr<const runtime::Runner>(std::move(runner));
}

}  // namespace fusedgemm::fallback
