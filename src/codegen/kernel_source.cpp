#include "codegen/kernel_source.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "codegen/embedded_headers.h"
#include "kernels/kernel_args.h"
#include "recipe/kernel_config.h"
#include "recipe/limits.h"
#include "recipe/tma_global.h"

namespace fusedgemm::codegen {
namespace {

using fusion::FusionProgram;
using fusion::Major;

// Mirrors kernels/gemm_sm90_config.cuh (GemmSm90Layout) with recipe::kernel_shared_bytes;
// the generated source static_asserts that both sides agree, so a drift fails the compile,
// not the launch.
constexpr int kSwizzleBytes = 128;  // one K row per stage; TMA's and wgmma's 128B swizzle
// A producer warpgroup and two consumer warpgroups (kernels/gemm_sm90.cuh).
constexpr int kThreads = 128 * (1 + recipe::KernelConfig::kConsumers);

// A name from the graph inside a // comment: printable ASCII only, so no name can end the
// comment or change the code.
std::string comment_text(std::string_view name) {
  std::string out;
  for (char c : name) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

// A name from the graph as part of an identifier or file name.
std::string identifier_text(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += alnum ? c : '_';
  }
  return out.empty() ? "graph" : out;
}

std::string_view mma_type(DataType type) {
  switch (type) {
    case DataType::kBFloat16: return "kBf16";
    case DataType::kFloat16: return "kF16";
    case DataType::kFp8E4M3: return "kE4M3";
    case DataType::kFp8E5M2: return "kE5M2";
    default: return "";
  }
}

struct OperandFacts {
  int param = -1;  // recipe role index of this operand
  DataType type = DataType::kNotSet;
  std::string name;
  int element_bytes = 2;
  int scale_param = -1;  // recipe role index of its block scales, or -1
};

class SourceBuilder {
 public:
  SourceBuilder(const recipe::Recipe& recipe, const EpilogueCode& epilogue,
                const KernelSourceOptions& options)
      : recipe_(recipe), p_(*recipe.program), epilogue_(epilogue), options_(options) {}

  Result<KernelSource> run() {
    FG_TRY(check_operands());
    FG_TRY(check_config());
    plan_tma();
    FG_TRY(plan_shared_memory());
    emit();
    return std::move(out_);
  }

 private:
  bool block_scaled() const { return p_.operands[0].block_scale.has_value(); }

  std::string role_text(int o) const {
    return fmt::format("role {} '{}'", to_string(p_.operands[o].role), operands_[o].name);
  }

  Status check_operands() {
    FG_CHECK(!p_.gemms.empty() && static_cast<int>(p_.gemms.size()) <= recipe::kMaxGemms,
             ErrorCode::kUnavailable,
             fmt::format("kernel_gemm_count: graph '{}' has {} GEMMs; legal: 1 to {}",
                         p_.graph_name, p_.gemms.size(), recipe::kMaxGemms));
    FG_CHECK(static_cast<int>(p_.operands.size()) <= kernels::kMaxTmaDescriptors,
             ErrorCode::kUnavailable,
             fmt::format("kernel_tma_descriptors: graph '{}' reads {} distinct operands; legal: "
                         "at most {} (one TMA descriptor each)",
                         p_.graph_name, p_.operands.size(), kernels::kMaxTmaDescriptors));
    for (std::size_t o = 0; o < p_.operands.size(); ++o) {
      const auto& op = p_.operands[o];
      OperandFacts f;
      f.name = p_.buffers[op.buffer].name;
      f.type = p_.buffers[op.buffer].data_type;
      f.element_bytes = std::max(1, bits_of(f.type) / 8);
      f.param = kernel_param(recipe::ParamKind::kOperand, static_cast<int>(o));
      f.scale_param = kernel_param(recipe::ParamKind::kOperandScale, static_cast<int>(o));
      operands_.push_back(f);
      const int i = static_cast<int>(o);
      FG_CHECK(f.param >= 0, ErrorCode::kInternal,
               fmt::format("kernel_argument_plan: {}: no kernel parameter reads it", role_text(i)));
      FG_CHECK(!op.block_scale || f.scale_param >= 0, ErrorCode::kInternal,
               fmt::format("kernel_argument_plan: {}: no kernel parameter reads its block scales",
                           role_text(i)));
      // One mainloop per kernel: with block scales (every operand) or without (none).
      FG_CHECK(op.block_scale.has_value() == p_.operands[0].block_scale.has_value(),
               ErrorCode::kUnavailable,
               fmt::format("kernel_block_scale: {}: {} next to {}, {}; legal: every operand of one "
                           "kernel block-scaled, or none",
                           role_text(i), op.block_scale ? "block-scaled" : "not block-scaled",
                           role_text(0),
                           p_.operands[0].block_scale ? "block-scaled" : "not block-scaled"));
      FG_CHECK(!mma_type(f.type).empty(), ErrorCode::kUnavailable,
               fmt::format("kernel_operand_type: {}: {} operands are not generated yet; legal: "
                           "bf16, fp16, fp8_e4m3, fp8_e5m2",
                           role_text(i), to_string(f.type)));
      FG_CHECK(!is_fp8(f.type) || op.major == Major::kK, ErrorCode::kUnavailable,
               fmt::format("kernel_operand_major: {}: {} {}; legal: fp8 operands K-major "
                           "(wgmma reads fp8 K-major only)",
                           role_text(i), to_string(f.type), fusion::to_string(op.major)));
      FG_CHECK(
          f.element_bytes == operands_[0].element_bytes, ErrorCode::kUnavailable,
          fmt::format("kernel_operand_width: {}: {} next to {} {}; legal: operands of one "
                      "kernel share one element width",
                      role_text(i), to_string(f.type), role_text(0), to_string(operands_[0].type)));
    }
    // Two fp32 fragments per GEMM (kernels/gemm_sm90_block_scale.cuh) fit 128 registers
    // at a 64x64 tile for at most two GEMMs.
    FG_CHECK(!block_scaled() || p_.gemms.size() <= 2, ErrorCode::kUnavailable,
             fmt::format("kernel_block_scale: graph '{}': {} block-scaled GEMMs; legal: at most "
                         "2 block-scaled GEMMs in one kernel",
                         p_.graph_name, p_.gemms.size()));
    for (const auto& gemm : p_.gemms) {
      const DataType a = operands_[gemm.a].type;
      const DataType b = operands_[gemm.b].type;
      FG_CHECK(
          is_fp8(a) || a == b, ErrorCode::kUnavailable,
          fmt::format("kernel_operand_type: {}: {} times {} {} in GEMM '{}'; legal: 16-bit "
                      "operands of one GEMM share one type",
                      role_text(gemm.a), to_string(a), role_text(gemm.b), to_string(b), gemm.name));
    }
    return Status::ok();
  }

  Status check_config() {
    const auto& c = recipe_.config;
    if (const auto why = recipe::config_violation(p_, c)) {
      return Status(ErrorCode::kInternal,
                    fmt::format("kernel_config: graph '{}': {}", p_.graph_name, *why));
    }
    FG_CHECK(c.staged_outputs == static_cast<int>(recipe::tma_store_outputs(p_).size()),
             ErrorCode::kInternal,
             fmt::format("kernel_config: graph '{}': the config was chosen for {} TMA-stored "
                         "outputs, the program has {}",
                         p_.graph_name, c.staged_outputs, recipe::tma_store_outputs(p_).size()));
    FG_CHECK(c.loaded_aux == 0 || c.loaded_aux == static_cast<int>(recipe::tma_load_aux(p_).size()),
             ErrorCode::kInternal,
             fmt::format("kernel_config: graph '{}': the config was chosen for {} TMA-loaded aux, "
                         "the program has {}; legal: none or all",
                         p_.graph_name, c.loaded_aux, recipe::tma_load_aux(p_).size()));
    FG_CHECK(c.tile_k * operands_[0].element_bytes == kSwizzleBytes && c.threads == kThreads,
             ErrorCode::kInternal,
             fmt::format("kernel_config: graph '{}': tile K {} of {}-byte elements, {} threads; "
                         "legal: tile K of 128 bytes, {} threads",
                         p_.graph_name, c.tile_k, operands_[0].element_bytes, c.threads, kThreads));
    return Status::ok();
  }

  // K-major: one box {tile_k, rows, 1} over axes (K, M or N, batch). M-/N-major: rows / 64
  // boxes {64, tile_k, 1} over axes (M or N, K, batch), 64 = one 128-byte swizzle row. An
  // operand the cluster shares is loaded in cluster_ctas parts, a K-major part one box of
  // rows / cluster_ctas rows.
  void plan_tma() {
    const auto& c = recipe_.config;
    for (std::size_t o = 0; o < p_.operands.size(); ++o) {
      const auto& op = p_.operands[o];
      const OperandFacts& f = operands_[o];
      const int rows = op.role == Role::kA ? c.tile_m : c.tile_n;
      const bool shared = op.role == Role::kA ? c.cluster_n > 1 : c.cluster_m > 1;
      const int load_rows = shared ? rows / c.cluster_ctas() : rows;
      TmaPlan plan;
      plan.param = f.param;
      plan.slot = static_cast<int>(o);
      plan.element_bytes = static_cast<std::uint32_t>(f.element_bytes);
      plan.swizzle_bytes = kSwizzleBytes;
      plan.axes = recipe::tma_axes(op.major == Major::kK ? 2 : 1);
      if (op.major == Major::kK) {
        plan.box = {static_cast<std::uint32_t>(c.tile_k), static_cast<std::uint32_t>(load_rows), 1};
      } else {
        const int box_mn = kSwizzleBytes / f.element_bytes;
        plan.box = {static_cast<std::uint32_t>(box_mn), static_cast<std::uint32_t>(c.tile_k), 1};
      }
      out_.tma.push_back(plan);
    }
    // A TMA-stored output: sub-tiles of one 128-byte swizzled row (64 where a unit's row is
    // no whole number of 128 bytes), kernels/epilogue_store.cuh.
    const std::vector<int> staged = recipe::tma_store_outputs(p_);
    for (std::size_t k = 0; k < staged.size(); ++k) {
      const int element_bytes = bits_of(p_.buffers[p_.outputs[staged[k]].buffer].data_type) / 8;
      out_.tma.push_back(tile_plan(
          kernel_param(recipe::ParamKind::kOutput, staged[k]),
          kernels::kMaxTmaDescriptors + static_cast<int>(k), element_bytes,
          kernels::staged_row_bytes(recipe_.config.unit_n() * element_bytes), static_cast<int>(k)));
    }
    staged_outputs_ = static_cast<int>(staged.size());
    // A TMA-loaded aux: sub-tiles of 64 bytes in the 64-byte swizzle,
    // kernels/epilogue_aux_tiles.cuh.
    const std::vector<int> loaded = recipe::loaded_aux(p_, recipe_.config);
    for (std::size_t k = 0; k < loaded.size(); ++k) {
      out_.tma.push_back(tile_plan(kernel_param(recipe::ParamKind::kAux, loaded[k]),
                                   kernels::kTmaAuxSlot + static_cast<int>(k),
                                   bits_of(p_.buffers[p_.aux[loaded[k]].buffer].data_type) / 8,
                                   kernels::kAuxRowBytes,
                                   kernels::kMaxTmaStores + static_cast<int>(k)));
    }
  }

  // The kernel parameter of role (kind, index), or -1.
  int kernel_param(recipe::ParamKind kind, int index) const {
    for (std::size_t i = 0; i < recipe_.roles.size(); ++i) {
      const auto& role = recipe_.roles[i];
      if (role.kind == kind && role.index == index) return static_cast<int>(i);
    }
    return -1;
  }

  // An epilogue tile's descriptor: boxes of one 64-row group x `row_bytes` of a row, in TMA's
  // swizzle of that span, over axes (N, M, batch); bit `tile_bit` of KernelArgs::tma_tiles.
  static TmaPlan tile_plan(int param, int slot, int element_bytes, int row_bytes, int tile_bit) {
    TmaPlan plan;
    plan.param = param;
    plan.slot = slot;
    plan.element_bytes = static_cast<std::uint32_t>(element_bytes);
    plan.swizzle_bytes = static_cast<std::uint32_t>(row_bytes);
    plan.axes = recipe::tma_axes(2);
    plan.box = {static_cast<std::uint32_t>(row_bytes / element_bytes),
                static_cast<std::uint32_t>(kernels::kStagedRows), 1};
    plan.tile_bit = tile_bit;
    return plan;
  }

  // The layout of kernels/gemm_sm90_config.cuh (recipe::kernel_shared_bytes).
  Status plan_shared_memory() {
    const std::int64_t total =
        recipe::kernel_shared_bytes(p_, recipe_.config, epilogue_.scratch_bytes);
    FG_CHECK(total <= recipe::kMaxSharedBytes, ErrorCode::kInternal,
             fmt::format("kernel_shared_memory: graph '{}': {} bytes ({} stages of {}, epilogue "
                         "scratch {} per consumer); legal: at most {}",
                         p_.graph_name, total, recipe_.config.stages,
                         recipe::stage_bytes(p_, recipe_.config), epilogue_.scratch_bytes,
                         recipe::kMaxSharedBytes));
    out_.shared_bytes = static_cast<std::uint32_t>(total);
    return Status::ok();
  }

  template <class... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out_.source), format, std::forward<Args>(args)...);
    out_.source += '\n';
  }

  void emit() {
    const auto& c = recipe_.config;
    out_.program_name = fmt::format("fusedgemm_{}.cu", identifier_text(p_.graph_name));
    out_.entry = "fusedgemm_kernel";
    out_.block_threads = kThreads;
    out_.tile_m = c.tile_m;
    out_.tile_n = c.tile_n;
    out_.cluster_ctas = c.cluster_ctas();
    for (const auto& h : embedded_kernel_headers()) out_.headers.push_back({h.name, h.contents});

    line("// Generated by fusedgemm (src/codegen/kernel_source.cpp) for graph '{}'; do not edit.",
         comment_text(p_.graph_name));
    line("// {}; {} threads, {} bytes of dynamic shared memory.", recipe::describe(c), kThreads,
         out_.shared_bytes);
    line("// Grid: a persistent 1-D grid of at most the resident CTAs, a multiple of {}.",
         c.cluster_ctas());
    line("#define FUSEDGEMM_KERNEL_DEBUG {}", options_.debug ? 1 : 0);
    line("#include \"kernels/{}\"", block_scaled() ? "gemm_sm90_block_scale.cuh" : "gemm_sm90.cuh");
    line("");
    line("struct FusedgemmConfig {{");
    line("  static constexpr int kTileM = {};", c.tile_m);
    line("  static constexpr int kTileN = {};", c.tile_n);
    line(
        "  static constexpr fusedgemm::kernels::ConsumerSplit kSplit = "
        "fusedgemm::kernels::ConsumerSplit::{};",
        c.split == recipe::ConsumerSplit::kM   ? "kM"
        : c.split == recipe::ConsumerSplit::kN ? "kN"
                                               : "kPingPong");
    line("  static constexpr int kClusterM = {};", c.cluster_m);
    line("  static constexpr int kClusterN = {};", c.cluster_n);
    line("  static constexpr int kStages = {};", c.stages);
    line("  static constexpr bool kDependentLaunch = {};", c.dependent_launch);
    line("  static constexpr int kOperandCount = {};", p_.operands.size());
    line("  // {{kernel parameter, TMA slot, role, major, type}}");
    line("  static constexpr fusedgemm::kernels::OperandSpec kOperands[kOperandCount] = {{");
    for (std::size_t o = 0; o < p_.operands.size(); ++o) {
      const auto& op = p_.operands[o];
      const OperandFacts& f = operands_[o];
      const TmaPlan& t = out_.tma[o];
      line(
          "      // operand {}: {} '{}', {}, {}; TMA box {{{}, {}, {}}} over axes ({}, {}, "
          "{})",
          o, to_string(op.role), comment_text(f.name), to_string(f.type),
          fusion::to_string(op.major), t.box[0], t.box[1], t.box[2], t.axes[0], t.axes[1],
          t.axes[2]);
      line(
          "      {{{}, {}, fusedgemm::kernels::OperandRole::{}, "
          "fusedgemm::kernels::OperandMajor::{},",
          f.param, t.slot, op.role == Role::kA ? "kA" : "kB", op.major == Major::kK ? "kK" : "kMN");
      line("       fusedgemm::kernels::ptx::MmaType::{}}},", mma_type(f.type));
    }
    line("  }};");
    line("  static constexpr int kGemmCount = {};", p_.gemms.size());
    for (std::size_t g = 0; g < p_.gemms.size(); ++g) {
      line("  // GEMM {} '{}': operand {} times operand {}", g, comment_text(p_.gemms[g].name),
           p_.gemms[g].a, p_.gemms[g].b);
    }
    std::string gemm_a, gemm_b;
    for (const auto& gemm : p_.gemms) {
      gemm_a += fmt::format("{}{}", gemm_a.empty() ? "" : ", ", gemm.a);
      gemm_b += fmt::format("{}{}", gemm_b.empty() ? "" : ", ", gemm.b);
    }
    line("  static constexpr int kGemmA[kGemmCount] = {{{}}};", gemm_a);
    line("  static constexpr int kGemmB[kGemmCount] = {{{}}};", gemm_b);
    if (block_scaled()) {
      std::string scale_params;
      for (const auto& f : operands_) {
        scale_params += fmt::format("{}{}", scale_params.empty() ? "" : ", ", f.scale_param);
      }
      line("  // kernel parameter of each operand's fp32 block scales");
      line("  static constexpr int kOperandScaleParam[kOperandCount] = {{{}}};", scale_params);
    }
    line("  // per consumer warpgroup");
    line("  static constexpr int kEpilogueScratchBytes = {};", epilogue_.scratch_bytes);
    line("  static constexpr int kStagedOutputs = {};  // staged for TMA stores", staged_outputs_);
    line("  static constexpr int kStagedBuffers = {};  // per staged output", c.staging_buffers);
    line("  static constexpr int kBorrowedBuffers = {};  // per consumer, from a ring stage",
         c.borrowed_buffers);
    line("  static constexpr int kStoresAfterBorrowed = {};  // a unit's, after its borrowed ones",
         recipe::stores_after_borrowed(p_, c));
    line("  static constexpr int kLoadedAux = {};  // full aux loaded through TMA", c.loaded_aux);
    line("  static constexpr int kAuxBuffers = {};  // per loaded aux", c.aux_buffers);
    line("}};");
    line("");
    line("// The host's plan (launch attribute, TMA boxes) must match the kernel's layout.");
    line("using FusedgemmLayout = fusedgemm::kernels::GemmSm90Layout<FusedgemmConfig>;");
    line("static_assert(FusedgemmLayout::kDynamicBytes == {},", out_.shared_bytes);
    line("              \"host and kernel disagree on shared memory: fix the host mirror in \"");
    line("              \"codegen/kernel_source.cpp\");");
    line("static_assert(FusedgemmLayout::kStageBytes == {},",
         recipe::stage_bytes(p_, recipe_.config));
    line("              \"the TMA boxes of a stage differ from its layout: fix plan_tma in \"");
    line("              \"codegen/kernel_source.cpp\");");
    line("static_assert(FusedgemmLayout::kTileK == {},", c.tile_k);
    line("              \"tile K differs from KernelConfig::tile_k: fix choose_kernel_config\");");
    line("static_assert(FusedgemmLayout::kUnitM == {} && FusedgemmLayout::kUnitN == {},",
         c.unit_m(), c.unit_n());
    line("              \"the epilogue unit differs from KernelConfig's: fix the host mirror\");");
    line("");
    line("// ---- epilogue ----");
    out_.source += epilogue_.text;
    if (!epilogue_.text.empty() && epilogue_.text.back() != '\n') out_.source += '\n';
    line("// ---- entry ----");
    line("struct FusedgemmEpilogue {{");
    line("  template <int TileM, int TileN, int G>");
    line("  __device__ static void run(const fusedgemm::kernels::KernelArgs& args,");
    line("                             const fusedgemm::kernels::TileCoord& unit,");
    line(
        "                             float (&acc)[G][fusedgemm::kernels::Fragment<TileM, "
        "TileN>::kCount],");
    line("                             float* scratch, unsigned staging, unsigned borrowed,");
    line("                             unsigned aux, unsigned& aux_parity) {{");
    line(
        "    fusedgemm_epilogue<TileM, TileN>(args, unit, acc, scratch, staging, borrowed, aux, "
        "aux_parity);");
    line("  }}");
    line("  template <int TileM, int TileN>");
    line("  __device__ static void prefetch(const fusedgemm::kernels::KernelArgs& args,");
    line("                                  const fusedgemm::kernels::TileCoord& unit,");
    line("                                  unsigned aux, unsigned aux_parity) {{");
    line("    fusedgemm_epilogue_prefetch<TileM, TileN>(args, unit, aux, aux_parity);");
    line("  }}");
    line("  template <int TileM, int TileN>");
    line("  __device__ static void skip(const fusedgemm::kernels::KernelArgs& args, unsigned aux,");
    line("                              unsigned& aux_parity) {{");
    line("    fusedgemm_epilogue_skip<TileM, TileN>(args, aux, aux_parity);");
    line("  }}");
    line("}};");
    line("extern \"C\" __global__ void __launch_bounds__({}, 1)", kThreads);
    line("fusedgemm_kernel(const __grid_constant__ fusedgemm::kernels::KernelArgs args) {{");
    line("  extern __shared__ __align__(1024) unsigned char fusedgemm_smem[];");
    line(
        "  fusedgemm::kernels::GemmSm90<FusedgemmConfig, FusedgemmEpilogue, "
        "fusedgemm::kernels::{}>::run(args, fusedgemm_smem);",
        block_scaled() ? "PromoteBlockScales" : "AccumulateStages");
    line("}}");
  }

  const recipe::Recipe& recipe_;
  const FusionProgram& p_;
  const EpilogueCode& epilogue_;
  const KernelSourceOptions& options_;
  std::vector<OperandFacts> operands_;
  int staged_outputs_ = 0;
  KernelSource out_;
};

}  // namespace

Result<KernelSource> generate_kernel_source(const recipe::Recipe& recipe,
                                            const EpilogueCode& epilogue,
                                            const KernelSourceOptions& options) {
  FG_CHECK(recipe.program != nullptr, ErrorCode::kInternal,
           "kernel_source: the recipe has no fusion program");
  return SourceBuilder(recipe, epilogue, options).run();
}

}  // namespace fusedgemm::codegen
