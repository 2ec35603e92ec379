#include "fallback/host_runner.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "fallback/step_args.h"
#include "fallback/step_source.h"
#include "runtime/host_device.h"
#include "runtime/host_math.h"
#include "runtime/host_matmul.h"
#include "runtime/numeric.h"

namespace fusedgemm::fallback {
namespace {

// One BufferArg of a step with the type it is stored in.
struct Access {
  const kernels::BufferArg* arg = nullptr;
  DataType type = DataType::kFloat32;

  std::int64_t index(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return b * arg->stride[0] + r * arg->stride[1] + c * arg->stride[2];
  }
  float read(std::int64_t b, std::int64_t r, std::int64_t c) const {
    return numeric::load(type, arg->data, index(b, r, c));
  }
  void write(std::int64_t b, std::int64_t r, std::int64_t c, float v) const {
    numeric::store(type, arg->data, index(b, r, c), v);
  }
};

template <class F>
void for_each(std::int64_t batch, std::int64_t m, std::int64_t n, F f) {
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t r = 0; r < m; ++r) {
      for (std::int64_t c = 0; c < n; ++c) f(b, r, c);
    }
  }
}

class HostRunner final : public runtime::Runner {
 public:
  explicit HostRunner(std::shared_ptr<const Program> program) : p_(std::move(program)) {}

  Status run(const recipe::CallView& view, runtime::Stream) const noexcept override {
    try {
      for (const Step& s : p_->steps) {
        const kernels::KernelArgs args = step_args(*p_, view, s);
        run_step(s, args);
      }
    } catch (const std::bad_alloc&) {
      return Status(ErrorCode::kUnavailable, "host runner: out of host memory for the call");
    }
    return Status::ok();
  }

  std::string describe() const override { return to_string(*p_); }

 private:
  // Inputs follow the result (and quantize's scales) in the arguments.
  Access input(const Step& s, const kernels::KernelArgs& args, std::size_t j) const {
    const std::size_t first = s.out2 >= 0 ? 2 : 1;
    return {&args.buffers[first + j], storage_type(*p_, s.in[j])};
  }

  void run_step(const Step& s, const kernels::KernelArgs& args) const {
    const DataType rounding =
        s.kind == StepKind::kStore ? DataType::kFloat32 : p_->values[s.out].type;
    const Access out{&args.buffers[0],
                     s.kind == StepKind::kStore ? p_->buffers[s.buffer].type : DataType::kFloat32};
    switch (s.kind) {
      case StepKind::kPointwise:
        for_each(args.batch, args.m, args.n, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
          float x[3] = {0, 0, 0};
          for (std::size_t j = 0; j < s.in.size(); ++j) x[j] = input(s, args, j).read(b, r, c);
          out.write(b, r, c, numeric::round_to(rounding, runtime::apply(s.pointwise, x)));
        });
        return;
      case StepKind::kMatmul: return matmul(s, args, out);
      case StepKind::kReduction: return reduction(s, args, out, rounding);
      case StepKind::kDequantize: {
        const Access x = input(s, args, 0);
        const Access scale = input(s, args, 1);
        for_each(args.batch, args.m, args.n, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
          const float v = x.read(b, r, c) * scale.read(b, r / s.block_rows, c / s.block_cols);
          out.write(b, r, c, numeric::round_to(rounding, v));
        });
        return;
      }
      case StepKind::kQuantize: return quantize(s, args);
      case StepKind::kStore: {
        const Access in = input(s, args, 0);
        for_each(args.batch, args.m, args.n, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
          out.write(b, r, c, in.read(b, r, c));
        });
        return;
      }
    }
  }

  // fp32 operands, fp64 sums in k order (cuBLASLt's fp32 sums differ from these by rounding
  // only): each batch's A rows and B columns decoded once into panels and multiplied on the
  // cores by runtime::multiply_panels, the same bits as a loop per element, which stays for
  // panels past the host device's budget (nothing it allocates grows with K).
  void matmul(const Step& s, const kernels::KernelArgs& args, const Access& out) const {
    const Access a = input(s, args, 0);
    const Access b = input(s, args, 1);
    const double panel_bytes =
        static_cast<double>(args.m + args.n) * static_cast<double>(args.k) * sizeof(double) +
        static_cast<double>(args.m) * static_cast<double>(args.n) * sizeof(float);
    if (panel_bytes > static_cast<double>(runtime::HostDevice::kMaxPanelBytes)) {
      for_each(args.batch, args.m, args.n, [&](std::int64_t batch, std::int64_t m, std::int64_t n) {
        double acc = 0;
        for (std::int64_t k = 0; k < args.k; ++k) {
          acc += static_cast<double>(a.read(batch, m, k)) * b.read(batch, k, n);
        }
        out.write(batch, m, n, static_cast<float>(acc));
      });
      return;
    }
    std::vector<double> pa(static_cast<std::size_t>(args.m * args.k));
    std::vector<double> pb(static_cast<std::size_t>(args.n * args.k));
    std::vector<float> plane(static_cast<std::size_t>(args.m * args.n));
    for (std::int64_t batch = 0; batch < args.batch; ++batch) {
      for (std::int64_t m = 0; m < args.m; ++m) {
        for (std::int64_t k = 0; k < args.k; ++k) pa[m * args.k + k] = a.read(batch, m, k);
      }
      for (std::int64_t k = 0; k < args.k; ++k) {
        for (std::int64_t n = 0; n < args.n; ++n) pb[n * args.k + k] = b.read(batch, k, n);
      }
      runtime::multiply_panels(pa.data(), pb.data(), plane.data(), args.m, args.n, args.k);
      for (std::int64_t m = 0; m < args.m; ++m) {
        for (std::int64_t n = 0; n < args.n; ++n) out.write(batch, m, n, plane[m * args.n + n]);
      }
    }
  }

  // Each output element's points in one fixed order. The extents are the plan's, as the CUDA
  // runner's (fallback/step_source.cpp): a declared batch-1 input given as a stride-0 view of
  // the call's batch (PyTorch's expand) still has one batch to reduce.
  void reduction(const Step& s, const kernels::KernelArgs& args, const Access& out,
                 DataType rounding) const {
    const Access in = input(s, args, 0);
    const Dims& x = p_->values[s.in[0]].dims;
    const Dims& y = p_->values[s.out].dims;
    std::int64_t reduced[3];
    for (int axis = 0; axis < 3; ++axis) reduced[axis] = y[axis] == 1 ? x[axis] : 1;
    const auto inv =
        static_cast<float>(1.0 / static_cast<double>(reduced[0] * reduced[1] * reduced[2]));
    for_each(args.batch, args.m, args.n, [&](std::int64_t ob, std::int64_t orow, std::int64_t oc) {
      float acc = runtime::reduction_identity(s.reduction);
      for_each(reduced[0], reduced[1], reduced[2],
               [&](std::int64_t jb, std::int64_t jr, std::int64_t jc) {
                 const float v = in.read(reduced[0] > 1 ? jb : ob, reduced[1] > 1 ? jr : orow,
                                         reduced[2] > 1 ? jc : oc);
                 acc = runtime::combine(s.reduction, acc, v, inv);
               });
      if (s.reduction == ReductionMode::kNorm2) acc = std::sqrt(acc);
      out.write(ob, orow, oc, numeric::round_to(rounding, acc));
    });
  }

  void quantize(const Step& s, const kernels::KernelArgs& args) const {
    const Access values{&args.buffers[0], DataType::kFloat32};
    const Access scales{&args.buffers[1], DataType::kFloat32};
    const Access x = input(s, args, 0);
    const DataType y_type = p_->values[s.out].type;
    const DataType s_type = p_->values[s.out2].type;
    for_each(args.batch, args.m, args.n, [&](std::int64_t b, std::int64_t i, std::int64_t j) {
      const std::int64_t r0 = i * s.block_rows;
      const std::int64_t c0 = j * s.block_cols;
      const std::int64_t r1 = std::min<std::int64_t>(r0 + s.block_rows, x.arg->shape[1]);
      const std::int64_t c1 = std::min<std::int64_t>(c0 + s.block_cols, x.arg->shape[2]);
      float amax = 0.0f;
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) amax = std::fmax(amax, std::fabs(x.read(b, r, c)));
      }
      float scale = amax == 0.0f ? 1.0f : static_cast<float>(amax / numeric::max_finite(y_type));
      scale = numeric::round_to(s_type, scale);
      scales.write(b, i, j, scale);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          values.write(b, r, c, numeric::round_to(y_type, x.read(b, r, c) / scale));
        }
      }
    });
  }

  std::shared_ptr<const Program> p_;
};

}  // namespace

std::shared_ptr<const runtime::Runner> make_host_runner(std::shared_ptr<const Program> program) {
  return std::make_shared<HostRunner>(std::move(program));
}

}  // namespace fusedgemm::fallback
