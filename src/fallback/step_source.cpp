#include "fallback/step_source.h"

#include <fmt/format.h>

#include "codegen/device_terms.h"
#include "codegen/embedded_headers.h"
#include "codegen/emit.h"
#include "codegen/pointwise_expr.h"
#include "runtime/host_math.h"

namespace fusedgemm::fallback {
namespace {

Result<std::string> elem(DataType type, std::string_view what) {
  auto e = codegen::device_elem(type);
  FG_CHECK(e.has_value(), ErrorCode::kInternal,
           fmt::format("fallback_step_type: {} has no element type", what));
  return std::string(*e);
}

// A reduction's combine of two partials, and what one point contributes.
std::string combine_of(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kMax:
    case ReductionMode::kAmax: return "fmaxf(a, b)";
    case ReductionMode::kMin: return "fminf(a, b)";
    case ReductionMode::kMul: return "__fmul_rn(a, b)";
    default: return "__fadd_rn(a, b)";  // add, avg, norm1, norm2
  }
}

std::string contribution_of(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::kAvg: return "__fmul_rn(v, inv)";
    case ReductionMode::kAmax:
    case ReductionMode::kNorm1: return "fabsf(v)";
    case ReductionMode::kNorm2: return "__fmul_rn(v, v)";
    default: return "v";  // add, max, min, mul
  }
}

class Generator {
 public:
  explicit Generator(const Program& p) : p_(p) {}

  Result<StepSource> run() {
    std::string& code = out_.source.code;
    code = fmt::format(
        "// fusedgemm fallback steps of {}\n"
        "#include \"kernels/fallback_steps.cuh\"\n#include \"kernels/pointwise.cuh\"\n"
        "namespace fk = fusedgemm::kernels;\nnamespace ff = fusedgemm::kernels::fallback;\n",
        codegen::emit_comment_text(p_.graph_name));
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
      const Step& s = p_.steps[i];
      if (s.kind == StepKind::kMatmul) {
        out_.entries.emplace_back();
        continue;
      }
      const std::string entry = codegen::emit_identifier("fallback_step_", static_cast<int>(i));
      out_.entries.push_back(entry);
      FG_ASSIGN_OR_RETURN(std::string body, step_body(s));
      code += fmt::format(
          "\n// {} ({})\nextern \"C\" __global__ void __launch_bounds__(ff::kStepThreads) "
          "{}(const fk::KernelArgs args) {{\n{}}}\n",
          to_string(s.kind), codegen::emit_comment_text(s.node), entry, body);
    }
    out_.source.name = "fusedgemm_fallback.cu";
    for (const auto& h : codegen::embedded_kernel_headers()) {
      out_.source.headers.emplace_back(std::string(h.name), std::string(h.contents));
    }
    return std::move(out_);
  }

 private:
  Result<std::string> read_elem(int v) { return elem(storage_type(p_, v), p_.values[v].name); }
  Result<std::string> round_elem(int v) { return elem(p_.values[v].type, p_.values[v].name); }

  Result<std::string> step_body(const Step& s) {
    switch (s.kind) {
      case StepKind::kPointwise: return pointwise(s);
      case StepKind::kDequantize: return dequantize(s);
      case StepKind::kReduction: return reduction(s);
      case StepKind::kQuantize: return quantize(s);
      case StepKind::kStore: return store(s);
      case StepKind::kMatmul: break;
    }
    return Status(ErrorCode::kInternal, "fallback_step_kind: a matmul has no kernel");
  }

  Result<std::string> pointwise(const Step& s) {
    std::string loads;
    std::vector<std::string> vars, names;
    for (std::size_t j = 0; j < s.in.size(); ++j) {
      FG_ASSIGN_OR_RETURN(std::string e, read_elem(s.in[j]));
      vars.push_back(fmt::format("x{}", j));
      names.push_back(codegen::emit_comment_text(p_.values[s.in[j]].name));
      loads += fmt::format("    const float x{} = ff::read<{}>(args.buffers[{}], b, r, c);\n", j, e,
                           j + 1);
    }
    const codegen::PointwiseText text = codegen::pointwise_text(s.pointwise, vars, names);
    FG_ASSIGN_OR_RETURN(std::string out, round_elem(s.out));
    return fmt::format(
        "  ff::for_each_element(args, [&](long long b, long long r, long long c) {{\n{}"
        "    // {}\n"
        "    ff::write<fk::Elem::kF32>(args.buffers[0], b, r, c, fk::round_to<{}>({}));\n"
        "  }});\n",
        loads, text.formula, out, text.expr);
  }

  Result<std::string> dequantize(const Step& s) {
    FG_ASSIGN_OR_RETURN(std::string x, read_elem(s.in[0]));
    FG_ASSIGN_OR_RETURN(std::string scale, read_elem(s.in[1]));
    FG_ASSIGN_OR_RETURN(std::string out, round_elem(s.out));
    return fmt::format(
        "  ff::for_each_element(args, [&](long long b, long long r, long long c) {{\n"
        "    const float x = ff::read<{}>(args.buffers[1], b, r, c);\n"
        "    const float s = ff::read<{}>(args.buffers[2], b, r / {}, c / {});\n"
        "    ff::write<fk::Elem::kF32>(args.buffers[0], b, r, c, fk::round_to<{}>(__fmul_rn(x, "
        "s)));\n"
        "  }});\n",
        x, scale, codegen::emit_int(s.block_rows), codegen::emit_int(s.block_cols), out);
  }

  Result<std::string> reduction(const Step& s) {
    FG_ASSIGN_OR_RETURN(std::string in, read_elem(s.in[0]));
    FG_ASSIGN_OR_RETURN(std::string out, round_elem(s.out));
    const Value& x = p_.values[s.in[0]];
    const Value& y = p_.values[s.out];
    std::int64_t reduced[3];
    for (int axis = 0; axis < 3; ++axis) reduced[axis] = y.dims[axis] == 1 ? x.dims[axis] : 1;
    const std::int64_t points = reduced[0] * reduced[1] * reduced[2];
    // avg adds v * (1 / points), the host's formula: 1 / points in double, rounded once.
    const std::string inv =
        s.reduction == ReductionMode::kAvg
            ? fmt::format("  const float inv = {};\n",
                          codegen::emit_f32(static_cast<float>(1.0 / static_cast<double>(points))))
            : "";
    return fmt::format(
        "{}  ff::reduce<{}, {}, {}, {}, {}, {}, {}>(args, {}, {},\n"
        "      [&](float v) {{ return {}; }},\n"
        "      [](float a, float b) {{ return {}; }});\n",
        inv, in, out, y.dims[1], y.dims[2], reduced[0], reduced[1], reduced[2],
        codegen::emit_f32(runtime::reduction_identity(s.reduction)),
        s.reduction == ReductionMode::kNorm2 ? "true" : "false", contribution_of(s.reduction),
        combine_of(s.reduction));
  }

  Result<std::string> quantize(const Step& s) {
    FG_ASSIGN_OR_RETURN(std::string x, read_elem(s.in[0]));
    FG_ASSIGN_OR_RETURN(std::string y, round_elem(s.out));
    FG_ASSIGN_OR_RETURN(std::string scale, round_elem(s.out2));
    return fmt::format("  ff::quantize<{}, {}, {}>(args, {}, {});\n", x, y, scale,
                       codegen::emit_int(s.block_rows), codegen::emit_int(s.block_cols));
  }

  Result<std::string> store(const Step& s) {
    const Buffer& b = p_.buffers[s.buffer];
    FG_ASSIGN_OR_RETURN(std::string out, elem(b.type, b.name));
    return fmt::format(
        "  ff::for_each_element(args, [&](long long b, long long r, long long c) {{\n"
        "    ff::write<{}>(args.buffers[0], b, r, c, ff::read<fk::Elem::kF32>(args.buffers[1], b, "
        "r, c));\n"
        "  }});\n",
        out);
  }

  const Program& p_;
  StepSource out_;
};

}  // namespace

DataType storage_type(const Program& program, int v) {
  const Value& value = program.values[v];
  return value.in_workspace() ? DataType::kFloat32 : program.buffers[value.buffer].type;
}

Result<StepSource> generate_step_source(const Program& program) {
  return Generator(program).run();
}

}  // namespace fusedgemm::fallback
