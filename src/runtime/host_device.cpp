#include "runtime/host_device.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "recipe/tma_global.h"
#include "runtime/host_math.h"
#include "runtime/host_matmul.h"
#include "runtime/numeric.h"

namespace fusedgemm::runtime {
namespace {

using fusion::EpilogueOp;
using kernels::BufferArg;
using recipe::ParamKind;

// For each list of the fusion program, the kernel parameter that carries each entry.
struct ParamIndex {
  std::vector<int> operand, operand_scale, aux, output, tap, quantized, quantized_scale;
};

class HostKernel final : public LoadedKernel {
 public:
  HostKernel(std::shared_ptr<const fusion::FusionProgram> p, std::vector<KernelParam> params)
      : program(std::move(p)) {
    const auto& prog = *program;
    index.operand.assign(prog.operands.size(), -1);
    index.operand_scale.assign(prog.operands.size(), -1);
    index.aux.assign(prog.aux.size(), -1);
    index.output.assign(prog.outputs.size(), -1);
    index.tap.assign(prog.taps.size(), -1);
    index.quantized.assign(prog.quantized_outputs.size(), -1);
    index.quantized_scale.assign(prog.quantized_outputs.size(), -1);
    for (std::size_t i = 0; i < params.size(); ++i) {
      list(params[i].kind)[params[i].index] = static_cast<int>(i);
    }
  }

  std::vector<int>& list(ParamKind kind) {
    switch (kind) {
      case ParamKind::kOperand: return index.operand;
      case ParamKind::kOperandScale: return index.operand_scale;
      case ParamKind::kAux: return index.aux;
      case ParamKind::kOutput: return index.output;
      case ParamKind::kTap: return index.tap;
      case ParamKind::kQuantized: return index.quantized;
      case ParamKind::kQuantizedScale: return index.quantized_scale;
      case ParamKind::kBuffer: break;  // fallback plans never load a host kernel
    }
    return index.operand;
  }

  std::shared_ptr<const fusion::FusionProgram> program;
  ParamIndex index;
};

std::int64_t offset(const BufferArg& arg, std::int64_t i0, std::int64_t i1, std::int64_t i2) {
  return i0 * arg.stride[0] + i1 * arg.stride[1] + i2 * arg.stride[2];
}

// An integer tap (an int32 reduction of integer values) accumulates in int32, wrapping as
// the kernel's 32-bit integer atomics do; avg and norm2 are fp32 only (validate).
std::int32_t combine_int(ReductionMode mode, std::int32_t acc, std::int32_t v) {
  const auto wrap = [](std::int64_t x) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x));
  };
  switch (mode) {
    case ReductionMode::kMax: return std::max(acc, v);
    case ReductionMode::kMin: return std::min(acc, v);
    case ReductionMode::kAmax: return std::max(acc, v < 0 ? wrap(-std::int64_t{v}) : v);
    case ReductionMode::kMul: return wrap(std::int64_t{acc} * v);
    case ReductionMode::kNorm1: return wrap(std::int64_t{acc} + (v < 0 ? -std::int64_t{v} : v));
    case ReductionMode::kAdd:
    case ReductionMode::kAvg:
    case ReductionMode::kNorm2: return wrap(std::int64_t{acc} + v);
  }
  return acc;
}

// Where a tap's reduction starts: its mode's identity, in fp32 or (an integer tap) int32.
std::uint32_t identity_bits(ReductionMode mode, DataType type) {
  const bool integer = type == DataType::kInt32;
  switch (mode) {
    case ReductionMode::kMax:
      return integer ? std::bit_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::min())
                     : std::bit_cast<std::uint32_t>(-std::numeric_limits<float>::infinity());
    case ReductionMode::kMin:
      return integer ? std::bit_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())
                     : std::bit_cast<std::uint32_t>(std::numeric_limits<float>::infinity());
    case ReductionMode::kMul: return integer ? 1u : std::bit_cast<std::uint32_t>(1.0f);
    case ReductionMode::kAdd:
    case ReductionMode::kAmax:
    case ReductionMode::kAvg:
    case ReductionMode::kNorm1:
    case ReductionMode::kNorm2: return 0;
  }
  return 0;
}

class Interpreter {
 public:
  Interpreter(const HostKernel& kernel, kernels::KernelArgs& args, std::uint64_t max_panel_bytes)
      : p_(*kernel.program), ix_(kernel.index), args_(args), max_panel_bytes_(max_panel_bytes) {}

  // Fails as the CUDA device's encode would, for an operand no descriptor can describe.
  Status run() {
    FG_TRY(read_operands_through_tma());
    values_.resize(p_.epilogue.size());
    accumulators_.resize(p_.gemms.size());
    quantize_input_.resize(p_.quantized_outputs.size());
    for (auto& q : quantize_input_) q.resize(args_.batch * args_.m * args_.n);
    start_taps();
    const bool panels = panels_fit();
    for (std::int64_t b = 0; b < args_.batch; ++b) {
      if (panels) accumulate(b);
      for (std::int64_t m = 0; m < args_.m; ++m) {
        for (std::int64_t n = 0; n < args_.n; ++n) point(b, m, n, panels);
      }
    }
    finish_taps();
    quantize();
    return Status::ok();
  }

 private:
  const BufferArg& arg(int param) const { return args_.buffers[param]; }

  // Operands are read as the GPU's TMA reads them: through the descriptor's dims and
  // strides (recipe::tma_global, shared with the CUDA device's encode), batch coordinate 0
  // where the batch is 1, elements past a dim read as zero (OOB_FILL_NONE).
  struct TmaRead {
    recipe::TmaGlobal global;
    std::array<int, 3> axes{};
  };

  Status read_operands_through_tma() {
    tma_.resize(p_.operands.size());
    for (std::size_t o = 0; o < p_.operands.size(); ++o) {
      const BufferArg& a = arg(ix_.operand[o]);
      Layout layout;
      for (int axis = 0; axis < kRank; ++axis) {
        layout.shape[axis] = a.shape[axis];
        layout.stride[axis] = a.stride[axis];
      }
      tma_[o].axes = recipe::tma_axes(p_.operands[o].major == fusion::Major::kK ? 2 : 1);
      tma_[o].global =
          recipe::tma_global(layout, tma_[o].axes, bits_of(type_of(p_.operands[o].buffer)));
      if (tma_[o].global.fault != recipe::TmaFault::kNone) {
        return Status(ErrorCode::kInternal,
                      fmt::format("host device: operand '{}': TMA dimension {} of {} cannot be "
                                  "encoded; the call rules should have refused it",
                                  p_.buffers[p_.operands[o].buffer].name, tma_[o].global.fault_dim,
                                  to_string(layout)));
      }
    }
    return Status::ok();
  }

  // Operand `o` at kernel index (b, mn, k), as TMA delivers it.
  double operand_at(int o, std::int64_t b, std::int64_t mn, std::int64_t k) const {
    const TmaRead& t = tma_[o];
    const std::int64_t index[3] = {t.global.dims[2] == 1 ? 0 : b, mn, k};
    std::int64_t off = 0;
    for (int j = 0; j < 3; ++j) {
      const std::int64_t c = index[t.axes[j]];
      if (c >= t.global.dims[j]) return 0.0;
      off += c * t.global.stride_elems[j];
    }
    return numeric::load_double(type_of(p_.operands[o].buffer), arg(ix_.operand[o]).data, off);
  }

  DataType type_of(int buffer) const { return p_.buffers[buffer].data_type; }

  // Block scales multiply each product; both operands of a GEMM are scaled or neither is.
  double scale(int operand, std::int64_t b, std::int64_t mn, std::int64_t k) const {
    const auto& op = p_.operands[operand];
    if (!op.block_scale) return 1.0;
    const auto& s = *op.block_scale;
    const BufferArg& a = arg(ix_.operand_scale[operand]);
    // A's scales are (b, M/rows, K/cols); B's, declared (b, K/rows, N/cols), are read in
    // kernel order (b, N/cols, K/rows).
    const bool is_a = op.role == Role::kA;
    const std::int64_t i1 = is_a ? mn / s.block_rows : mn / s.block_cols;
    const std::int64_t i2 = is_a ? k / s.block_cols : k / s.block_rows;
    return numeric::load_double(s.scale_type, a.data, offset(a, b, i1, i2));
  }

  float dot(int gemm, std::int64_t b, std::int64_t m, std::int64_t n) const {
    const auto& g = p_.gemms[gemm];
    double sum = 0.0;
    for (std::int64_t k = 0; k < args_.k; ++k) {
      // Each operand times its scale first, as accumulate()'s panels hold them.
      sum += (operand_at(g.a, b, m, k) * scale(g.a, b, m, k)) *
             (operand_at(g.b, b, n, k) * scale(g.b, b, n, k));
    }
    return static_cast<float>(sum);
  }

  // Operand panels and accumulator planes for one batch: what accumulate() allocates.
  bool panels_fit() const {
    const double k = static_cast<double>(args_.k);
    double bytes = 0.0;
    for (const auto& op : p_.operands) {
      bytes += (op.role == Role::kA ? args_.m : args_.n) * k * sizeof(double);
    }
    bytes += static_cast<double>(p_.gemms.size()) * args_.m * args_.n * sizeof(float);
    return bytes <= static_cast<double>(max_panel_bytes_);
  }

  // Every GEMM's accumulators at batch b into planes_ (M x N each): each operand decoded once
  // into a panel of rows (M or N) x K exactly as dot() reads it (through the TMA reads, times
  // its block scales), then each accumulator summed over k in order in double by
  // multiply_panels (runtime/host_matmul.h): the same value dot() gives.
  void accumulate(std::int64_t b) {
    const std::int64_t k_extent = args_.k;
    panels_.resize(p_.operands.size());
    for (std::size_t o = 0; o < p_.operands.size(); ++o) {
      const int op = static_cast<int>(o);
      const std::int64_t rows = p_.operands[o].role == Role::kA ? args_.m : args_.n;
      panels_[o].assign(static_cast<std::size_t>(rows * k_extent), 0.0);
      for (std::int64_t r = 0; r < rows; ++r) {
        double* row = panels_[o].data() + r * k_extent;
        for (std::int64_t k = 0; k < k_extent; ++k) {
          row[k] = operand_at(op, b, r, k) * scale(op, b, r, k);
        }
      }
    }
    planes_.resize(p_.gemms.size());
    for (std::size_t g = 0; g < p_.gemms.size(); ++g) {
      planes_[g].resize(static_cast<std::size_t>(args_.m * args_.n));
      multiply_panels(panels_[p_.gemms[g].a].data(), panels_[p_.gemms[g].b].data(),
                      planes_[g].data(), args_.m, args_.n, k_extent);
    }
  }

  void point(std::int64_t b, std::int64_t m, std::int64_t n, bool panels) {
    for (std::size_t g = 0; g < p_.gemms.size(); ++g) {
      accumulators_[g] = panels ? planes_[g][m * args_.n + n] : dot(static_cast<int>(g), b, m, n);
    }
    for (std::size_t i = 0; i < p_.epilogue.size(); ++i) {
      const auto& node = p_.epilogue[i];
      float v = 0.0f;
      switch (node.op) {
        case EpilogueOp::kAccumulator: v = accumulators_[node.gemm]; break;
        case EpilogueOp::kAuxLoad: {
          const BufferArg& a = arg(ix_.aux[node.aux]);
          v = numeric::load(type_of(p_.aux[node.aux].buffer), a.data, offset(a, b, m, n));
          break;
        }
        case EpilogueOp::kPointwise: {
          float in[3] = {0.0f, 0.0f, 0.0f};
          for (std::size_t j = 0; j < node.inputs.size() && j < 3; ++j) {
            in[j] = values_[node.inputs[j]];
          }
          v = apply(node.pointwise, in);
          break;
        }
      }
      values_[i] = node.round_to == DataType::kFloat32 ? v : numeric::round_to(node.round_to, v);
    }
    for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
      const auto& o = p_.outputs[i];
      const BufferArg& a = arg(ix_.output[i]);
      numeric::store(type_of(o.buffer), a.data, offset(a, b, m, n), values_[o.value]);
    }
    for (std::size_t i = 0; i < p_.taps.size(); ++i) {
      const auto& t = p_.taps[i];
      const BufferArg& a = arg(ix_.tap[i]);
      if (type_of(t.buffer) == DataType::kInt32) {
        auto* word = static_cast<std::int32_t*>(a.data) + offset(a, b, m, n);
        const auto v =
            static_cast<std::int32_t>(numeric::encode(DataType::kInt32, values_[t.value]));
        *word = combine_int(t.mode, *word, v);
        continue;
      }
      auto* word = static_cast<float*>(a.data) + offset(a, b, m, n);
      *word = combine(t.mode, *word, values_[t.value], inv_count(a));
    }
    for (std::size_t i = 0; i < p_.quantized_outputs.size(); ++i) {
      quantize_input_[i][(b * args_.m + m) * args_.n + n] = values_[p_.quantized_outputs[i].value];
    }
  }

  // 1 / (points reduced into one tap element): avg adds v / count, needing no second pass.
  float inv_count(const BufferArg& tap) const {
    double count = 1.0;
    const std::int64_t extents[3] = {args_.batch, args_.m, args_.n};
    for (int axis = 0; axis < 3; ++axis) {
      if (tap.shape[axis] == 1) count *= static_cast<double>(extents[axis]);
    }
    return static_cast<float>(1.0 / count);
  }

  // Calls every element of every tap with `f(tap index, element address)`.
  template <class F>
  void for_each_tap_element(F f) {
    for (std::size_t i = 0; i < p_.taps.size(); ++i) {
      const BufferArg& a = arg(ix_.tap[i]);
      for (std::int64_t i0 = 0; i0 < a.shape[0]; ++i0) {
        for (std::int64_t i1 = 0; i1 < a.shape[1]; ++i1) {
          for (std::int64_t i2 = 0; i2 < a.shape[2]; ++i2) {
            f(i, static_cast<std::uint32_t*>(a.data) + offset(a, i0, i1, i2));
          }
        }
      }
    }
  }

  // Nothing seeds a tap before the launch: it starts at its mode's identity here, as the
  // kernel's partials do.
  void start_taps() {
    for_each_tap_element([&](std::size_t i, std::uint32_t* word) {
      *word = identity_bits(p_.taps[i].mode, type_of(p_.taps[i].buffer));
    });
  }

  void finish_taps() {
    for_each_tap_element([&](std::size_t i, std::uint32_t* word) {
      if (p_.taps[i].mode != ReductionMode::kNorm2) return;
      *word = std::bit_cast<std::uint32_t>(std::sqrt(std::bit_cast<float>(*word)));
    });
  }

  // Per block of block_cols values along N: scale = amax / max_finite(type) (1 when the
  // block is all zeros), values stored as v / scale.
  void quantize() {
    for (std::size_t i = 0; i < p_.quantized_outputs.size(); ++i) {
      const auto& q = p_.quantized_outputs[i];
      const BufferArg& y = arg(ix_.quantized[i]);
      const BufferArg& s = arg(ix_.quantized_scale[i]);
      const DataType ty = type_of(q.buffer);
      const DataType ts = type_of(q.scale_buffer);
      const auto& in = quantize_input_[i];
      for (std::int64_t b = 0; b < args_.batch; ++b) {
        for (std::int64_t m = 0; m < args_.m; ++m) {
          for (std::int64_t n0 = 0; n0 < args_.n; n0 += q.block_cols) {
            const std::int64_t n1 = std::min<std::int64_t>(args_.n, n0 + q.block_cols);
            const float* row = &in[(b * args_.m + m) * args_.n];
            float amax = 0.0f;
            for (std::int64_t n = n0; n < n1; ++n) amax = std::fmax(amax, std::fabs(row[n]));
            float sc = amax == 0.0f ? 1.0f : static_cast<float>(amax / numeric::max_finite(ty));
            sc = numeric::round_to(ts, sc);
            numeric::store(ts, s.data, offset(s, b, m / q.block_rows, n0 / q.block_cols), sc);
            for (std::int64_t n = n0; n < n1; ++n) {
              numeric::store(ty, y.data, offset(y, b, m, n), row[n] / sc);
            }
          }
        }
      }
    }
  }

  const fusion::FusionProgram& p_;
  const ParamIndex& ix_;
  kernels::KernelArgs& args_;
  std::vector<float> values_;
  std::vector<float> accumulators_;
  std::vector<std::vector<float>> quantize_input_;
  std::vector<TmaRead> tma_;
  std::vector<std::vector<double>> panels_;  // per operand, at the batch accumulate() ran for
  std::vector<std::vector<float>> planes_;   // per GEMM
  const std::uint64_t max_panel_bytes_;      // HostDevice's: past it, dot() per product
};

}  // namespace

Result<std::shared_ptr<const LoadedKernel>> HostDevice::load(const KernelImage& image) {
  FG_CHECK(image.program != nullptr, ErrorCode::kInvalidArgument,
           fmt::format("host device: kernel '{}' has no fusion program to interpret", image.entry));
  return std::shared_ptr<const LoadedKernel>(
      std::make_shared<HostKernel>(image.program, image.params));
}

Status HostDevice::fill(const Fill32& f, Stream) noexcept {
  auto* base = static_cast<std::uint8_t*>(f.data);
  for (std::uint64_t row = 0; row < f.height; ++row) {
    auto* words = reinterpret_cast<std::uint32_t*>(base + row * f.pitch_bytes);
    for (std::uint64_t i = 0; i < f.width_words; ++i) words[i] = f.word;
  }
  return Status::ok();
}

Status HostDevice::launch(const LoadedKernel& kernel, const LaunchConfig&,
                          kernels::KernelArgs& args, Stream) noexcept {
  const auto* host = dynamic_cast<const HostKernel*>(&kernel);
  if (host == nullptr) {
    return Status(ErrorCode::kInvalidArgument,
                  "host device: launch of a kernel another device loaded");
  }
  try {
    return Interpreter(*host, args, max_panel_bytes_).run();
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kUnavailable, "host device: out of host memory for the launch");
  }
}

}  // namespace fusedgemm::runtime

namespace fusedgemm {

std::shared_ptr<Device> make_host_device() {
  return std::make_shared<runtime::HostDevice>();
}

std::shared_ptr<Device> default_device() {
  auto cuda = make_cuda_device(0);
  if (cuda) return cuda.value();
  return make_host_device();
}

}  // namespace fusedgemm
