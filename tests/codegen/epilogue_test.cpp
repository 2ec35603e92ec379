// generate_epilogue(): the source it writes is pinned by a golden file, is the same on
// every run, keeps one statement per DAG node under a comment naming it, spells constants
// as hex, and compiles for sm_90a without spills (refusals: epilogue_plan_test.cpp).
#include "codegen/epilogue.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>  // getpid: one temp folder per test process

#include <fmt/format.h>

#include "codegen/emit.h"
#include "codegen/epilogue_cases.h"
#include "example_files.h"
#include "fusedgemm/graph.h"

using namespace fusedgemm;

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fusedgemm_test::EpilogueCase example(const std::string& file) {
  auto c = fusedgemm_test::epilogue_case(fs::path(FUSEDGEMM_EXAMPLES_DIR) / file);
  EXPECT_TRUE(c.has_value()) << file << " does not reach the epilogue generator";
  return std::move(*c);
}

std::string generate(const fusedgemm_test::EpilogueCase& c) {
  auto source = codegen::generate_epilogue(*c.program, c.recipe);
  EXPECT_TRUE(source.is_ok()) << source.status().message();
  return source.is_ok() ? source.value() : std::string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : line.substr(first);
}

// --- generated source ---------------------------------------------------------------------

// FUSEDGEMM_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing with it.
TEST(GenerateEpilogue, MatchesGoldenFile) {
  const std::string source = generate(example("taps.json"));
  const fs::path golden = fs::path(FUSEDGEMM_GOLDEN_DIR) / "taps.cuh";
  if (const char* update = std::getenv("FUSEDGEMM_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(golden, std::ios::binary) << source;
  }
  EXPECT_EQ(source, read_text(golden)) << "regenerate with FUSEDGEMM_UPDATE_GOLDEN=1 when the "
                                          "change is intended, and review the diff";
}

TEST(GenerateEpilogue, IsDeterministic) {
  for (const auto& file : fusedgemm_test::example_files()) {
    auto first = fusedgemm_test::epilogue_case(file);
    auto second = fusedgemm_test::epilogue_case(file);
    if (!first) continue;
    EXPECT_EQ(generate(*first), generate(*second)) << file.filename();
  }
}

// Each node i is "// '<name>' = <formula>" followed by "const float v<i> = ...;" — or, for a
// rounded node, "const float v<i>_exact = ...;" and then "const float v<i> = fk::round_to..." —
// in program order, and nothing else defines a value.
TEST(GenerateEpilogue, OneStatementPerNodeUnderItsName) {
  for (const auto& file : fusedgemm_test::example_files()) {
    auto c = fusedgemm_test::epilogue_case(file);
    if (!c) continue;
    SCOPED_TRACE(file.filename().string());
    const auto lines = lines_of(generate(*c));
    std::size_t at = 0;
    int statements = 0;
    for (std::size_t i = 0; i < c->program->epilogue.size(); ++i) {
      const std::string comment =
          fmt::format("// {} = ", codegen::emit_quoted(c->program->epilogue[i].name));
      const std::string statement = fmt::format("const float v{} = ", i);
      const std::string exact = fmt::format("const float v{}_exact = ", i);
      while (at + 1 < lines.size() && trimmed(lines[at]).rfind(comment, 0) != 0) ++at;
      ASSERT_LT(at + 1, lines.size()) << "no comment for node " << i;
      if (trimmed(lines[at + 1]).rfind(exact, 0) == 0) {
        EXPECT_NE(c->program->epilogue[i].round_to, DataType::kFloat32) << lines[at + 1];
        ASSERT_LT(at + 2, lines.size());
        EXPECT_EQ(trimmed(lines[at + 2]).rfind(statement + "fk::round_to<", 0), 0u)
            << lines[at + 2];
      } else {
        EXPECT_EQ(trimmed(lines[at + 1]).rfind(statement, 0), 0u) << lines[at + 1];
      }
      ++at;
    }
    for (const auto& line : lines) {
      const std::string t = trimmed(line);
      if (t.rfind("const float v", 0) == 0 && t.find("_exact = ") == std::string::npos) {
        ++statements;
      }
    }
    EXPECT_EQ(statements, static_cast<int>(c->program->epilogue.size()));
  }
}

TEST(GenerateEpilogue, ScratchBytesFunctionMatchesTheSource) {
  for (const auto& file : fusedgemm_test::example_files()) {
    auto c = fusedgemm_test::epilogue_case(file);
    if (!c) continue;
    auto bytes = codegen::epilogue_scratch_bytes(*c->program, c->recipe);
    ASSERT_TRUE(bytes.is_ok()) << bytes.status().message();
    EXPECT_NE(
        generate(*c).find(fmt::format("constexpr int kEpilogueScratchBytes = {};", bytes.value())),
        std::string::npos)
        << file.filename();
  }
}

Tensor input(Graph& g, const std::string& name, std::vector<std::int64_t> dims, DataType type) {
  return g.tensor(TensorAttributes().set_name(name).set_dim(std::move(dims)).set_data_type(type));
}

// A 256x256x128 bf16 GEMM whose result goes through `pw` into a bf16 output 'D'.
fusedgemm_test::EpilogueCase unary_case(const PointwiseAttributes& pw) {
  Graph g;
  g.set_name("unary");
  auto a = input(g, "A", {1, 256, 128}, DataType::kBFloat16);
  auto b = g.tensor(TensorAttributes()
                        .set_name("B")
                        .set_dim({1, 128, 256})
                        .set_stride({128 * 256, 1, 128})
                        .set_data_type(DataType::kBFloat16));
  auto acc = g.matmul(a, b, MatmulAttributes().set_name("gemm"));
  auto d = g.pointwise(acc, pw);
  d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
  EXPECT_TRUE(g.validate().is_ok());
  auto analysis = fusion::analyze(g);
  auto program = std::make_shared<fusion::FusionProgram>(std::move(analysis->program));
  auto recipe = recipe::make_recipe(program, recipe::choose_kernel_config(*program, 0).value());
  return {program, std::move(recipe.value())};
}

// An output of its value's rounded type stores the value before rounding (the store rounds
// alike; the rounding is then dead code), one of another type the rounded value.
TEST(GenerateEpilogue, AnOutputOfTheRoundedTypeStoresTheValueBeforeRounding) {
  const std::string plain = generate(example("plain.json"));
  EXPECT_NE(plain.find("const float v0 = fk::round_to<fk::Elem::kBF16>(v0_exact);"),
            std::string::npos)
      << plain;
  EXPECT_NE(plain.find("out0_staged.put(i - 1, out0_even, v0_exact);"), std::string::npos) << plain;
  EXPECT_NE(plain.find("out0.store_pair(r, c - 1, out0_even, v0_exact,"), std::string::npos)
      << plain;

  // The accumulator rounded to bf16 feeds an fp32 output through relu: the output stores
  // relu of the rounded value (analysis gives every output node its buffer's type, so
  // stored_value's type check is a guard no graph reaches today).
  Graph g;
  g.set_name("wider");
  auto a = input(g, "A", {1, 256, 128}, DataType::kBFloat16);
  auto b = input(g, "B", {1, 128, 256}, DataType::kBFloat16);
  auto acc = g.matmul(a, b, MatmulAttributes().set_name("gemm"));
  acc->set_data_type(DataType::kBFloat16);
  auto y = g.pointwise(acc, PointwiseAttributes().set_name("relu").set_mode(PointwiseMode::kRelu));
  y->set_name("Y").set_data_type(DataType::kFloat32).set_output(true);
  ASSERT_TRUE(g.validate().is_ok());
  auto analysis = fusion::analyze(g);
  ASSERT_TRUE(analysis.is_ok()) << analysis.status().message();
  auto program = std::make_shared<fusion::FusionProgram>(std::move(analysis->program));
  auto recipe = recipe::make_recipe(program, recipe::choose_kernel_config(*program, 0).value());
  ASSERT_TRUE(recipe.is_ok());
  const std::string wider = generate({program, std::move(recipe.value())});
  EXPECT_NE(wider.find("const float v0 = fk::round_to<fk::Elem::kBF16>(v0_exact);"),
            std::string::npos)
      << wider;
  EXPECT_EQ(wider.find("v1_exact"), std::string::npos) << wider;  // Y itself is fp32
  EXPECT_NE(wider.find("out0.store_pair(r, c - 1, out0_even, v1,"), std::string::npos) << wider;
}

TEST(GenerateEpilogue, ReluClipsAreHexLiterals) {
  const std::string source = generate(unary_case(PointwiseAttributes()
                                                     .set_name("relu")
                                                     .set_mode(PointwiseMode::kRelu)
                                                     .set_relu_lower_clip(-1.5f)
                                                     .set_relu_upper_clip(6.0f)
                                                     .set_relu_lower_clip_slope(0.1f)));
  EXPECT_NE(source.find("fk::relu(v0, (-0x1.8p+0f), 0x1.8p+2f, 0x1.99999ap-4f)"), std::string::npos)
      << source;
  // No decimal float literal anywhere in the generated code.
  EXPECT_EQ(source.find("0.1"), std::string::npos);
  EXPECT_EQ(source.find("6.0"), std::string::npos);
}

TEST(GenerateEpilogue, UnclippedReluUsesInfinityBits) {
  const std::string source =
      generate(unary_case(PointwiseAttributes().set_name("relu").set_mode(PointwiseMode::kRelu)));
  EXPECT_NE(source.find("fk::relu(v0, 0x0p+0f, __uint_as_float(0x7f800000u), 0x0p+0f)"),
            std::string::npos)
      << source;
}

// --- compiling for sm_90a -----------------------------------------------------------------

// The registers a consumer warpgroup runs the epilogue with (kernels/gemm_sm90.cuh,
// kConsumerRegisters).
constexpr int kConsumerRegisters = 232;

struct Compiled {
  std::string name;  // namespace of the case in the translation unit
  int tile_m;
  int tile_n;
};

// The kernel name of one case and tile shape (extern "C", so ptxas reports it as is).
std::string kernel_name(const Compiled& k) {
  return fmt::format("{}_{}x{}", k.name, k.tile_m, k.tile_n);
}

// Wraps one generated epilogue in a 128-thread test kernel per unit shape (one consumer
// warpgroup's half of a CTA tile). The accumulators come from real wgmma.mma_async
// instructions (one per GEMM and 64-row group, operand descriptors read from the
// arguments), so ptxas allocates them as it will after the mainloop: all live when the
// epilogue starts. The unit compiles under the consumer's register budget (-maxrregcount).
std::string wrap(const std::string& ns, const std::string& header, std::size_t gemms,
                 const std::vector<Compiled>& kernels) {
  std::string cu = fmt::format("namespace {} {{\n#include \"{}\"\n}}\n", ns, header);
  for (const auto& k : kernels) {
    const int per_group = k.tile_n / 2;
    cu += fmt::format(
        "extern \"C\" __global__ void __launch_bounds__(128, 1)\n"
        "{}(const __grid_constant__ fusedgemm::kernels::KernelArgs args) {{\n"
        "  __shared__ alignas(16) unsigned char scratch[{}::kEpilogueScratchBytes > 0 ? "
        "{}::kEpilogueScratchBytes : 16];\n"
        "  __shared__ alignas(1024) unsigned char staging[fusedgemm::kernels::kMaxTmaStores * 2 * "
        "fusedgemm::kernels::kStagedBufferBytes];\n"
        "  float acc[{}][fusedgemm::kernels::Fragment<{}, {}>::kCount] = {{}};\n"
        "  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n",
        kernel_name(k), ns, ns, gemms, k.tile_m, k.tile_n);
    for (std::size_t g = 0; g < gemms; ++g) {
      for (int group = 0; group < k.tile_m / 64; ++group) {
        std::vector<std::string> registers;
        std::vector<std::string> operands;
        for (int v = 0; v < per_group; ++v) {
          registers.push_back(fmt::format("%{}", v));
          operands.push_back(fmt::format("\"+f\"(acc[{}][{}])", g, group * per_group + v));
        }
        cu += fmt::format(
            "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n{}k16.f32.bf16.bf16 {{{}}}, %{}, "
            "%{}, 1, 1, 1, 0, 0;\"\n    : {}\n    : \"l\"(args.tma[0].words[{}]), "
            "\"l\"(args.tma[1].words[{}]));\n",
            k.tile_n, fmt::join(registers, ", "), per_group, per_group + 1,
            fmt::join(operands, ", "), 2 * group, 2 * group + 1);
      }
    }
    cu += fmt::format(
        "  asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
        "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
        "  const fusedgemm::kernels::TileCoord tile{{blockIdx.z, blockIdx.y * {}ll, blockIdx.x * "
        "{}ll}};\n"
        "  unsigned aux_parity = 0;\n"
        "  {}::fusedgemm_epilogue_prefetch<{}, {}>(args, tile, "
        "fusedgemm::kernels::ptx::smem_address(staging), aux_parity);\n"
        "  {}::fusedgemm_epilogue<{}, {}>(args, tile, acc, reinterpret_cast<float*>(scratch),\n"
        "      fusedgemm::kernels::ptx::smem_address(staging),\n"
        "      fusedgemm::kernels::ptx::smem_address(staging),  // borrowed: compiled, not run\n"
        "      fusedgemm::kernels::ptx::smem_address(staging), aux_parity);  // aux: likewise\n"
        "  {}::fusedgemm_epilogue_skip<{}, {}>(args, fusedgemm::kernels::ptx::smem_address("
        "staging), aux_parity);\n"
        "}}\n",
        k.tile_m, k.tile_n, ns, k.tile_m, k.tile_n, ns, k.tile_m, k.tile_n, ns, k.tile_m, k.tile_n);
  }
  return cu;
}

// "ptxas info    : Function properties for <name>" then "N bytes stack frame, S bytes spill
// stores, L bytes spill loads": the line after the function's header.
std::string properties_of(const std::string& log, const std::string& mangled) {
  const auto at = log.find("Function properties for " + mangled + "\n");
  if (at == std::string::npos) return "";
  const auto begin = log.find('\n', at) + 1;
  return log.substr(begin, log.find('\n', begin) - begin);
}

std::string registers_of(const std::string& log, const std::string& mangled) {
  const auto at = log.find("Function properties for " + mangled + "\n");
  if (at == std::string::npos) return "";
  const auto used = log.find("Used ", at);
  return log.substr(used, log.find(',', used) - used);
}

// One nvcc run for every example and both tile shapes: each compile costs seconds, so the
// cases share one translation unit, each in its own namespace.
TEST(GenerateEpilogue, CompilesForSm90aWithoutSpills) {
  const std::string nvcc = FUSEDGEMM_NVCC;
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at configure time";
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("fusedgemm_epilogue_test_{}", ::getpid());
  fs::create_directories(dir);
  std::string unit =
      "// Generated epilogues of the example graphs, wrapped in test kernels.\n"
      "#include \"kernels/block_quantize.cuh\"\n#include \"kernels/element_io.cuh\"\n"
      "#include \"kernels/epilogue_access.cuh\"\n"
      "#include \"kernels/epilogue_aux_tiles.cuh\"\n#include \"kernels/epilogue_contract.cuh\"\n"
      "#include \"kernels/epilogue_store.cuh\"\n"
      "#include \"kernels/fragment_slots.cuh\"\n"
      "#include \"kernels/pointwise.cuh\"\n#include \"kernels/tap_commit.cuh\"\n";
  // The slot numbering round-trips for every tile shape the kernels use.
  unit += R"(
template <int TileM, int TileN>
constexpr bool slots_round_trip() {
  using Slots = fusedgemm::kernels::FragmentSlots<TileM, TileN>;
  for (int i = 0; i < fusedgemm::kernels::Fragment<TileM, TileN>::kCount; ++i) {
    if (Slots::index_of(Slots::row_slot(i), Slots::col_slot(i)) != i) return false;
  }
  return true;
}
static_assert(slots_round_trip<64, 64>() && slots_round_trip<128, 128>() &&
              slots_round_trip<64, 256>() && slots_round_trip<256, 128>());
)";
  std::vector<Compiled> expected;
  for (const auto& file : fusedgemm_test::example_files()) {
    auto c = fusedgemm_test::epilogue_case(file);
    if (!c) continue;
    const std::string ns = "case_" + fusedgemm_test::example_name(file);
    const std::string header = ns + ".cuh";
    std::ofstream(dir / header, std::ios::binary) << generate(*c);
    // The unit of the tile the recipe chose (recipe::choose_kernel_config keeps the
    // accumulators and the epilogue's held values within the consumer's registers), plus
    // 64x64.
    std::vector<Compiled> kernels = {{ns, c->recipe.config.unit_m(), c->recipe.config.unit_n()}};
    if (c->recipe.config.unit_m() == 64 && c->recipe.config.unit_n() == 64) kernels.clear();
    bool narrow_ok = true;
    for (const auto& q : c->program->quantized_outputs) narrow_ok &= 64 % q.block_cols == 0;
    // A 64x64 unit has 2 sub-tiles of a bf16 aux: no room for more buffers than that.
    narrow_ok &= c->recipe.config.loaded_aux == 0 || c->recipe.config.aux_buffers <= 2;
    if (narrow_ok) kernels.push_back({ns, 64, 64});
    unit += wrap(ns, header, c->program->gemms.size(), kernels);
    expected.insert(expected.end(), kernels.begin(), kernels.end());
  }
  std::ofstream(dir / "epilogues.cu", std::ios::binary) << unit;
  const fs::path log_path = dir / "ptxas.log";
  const std::string command = fmt::format(
      "\"{}\" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -maxrregcount={} "
      "-Xptxas -v -I\"{}\" -I\"{}\" \"{}\" -o \"{}\" > \"{}\" 2>&1",
      nvcc, kConsumerRegisters, FUSEDGEMM_SOURCE_DIR, dir.string(), (dir / "epilogues.cu").string(),
      (dir / "epilogues.cubin").string(), log_path.string());
  const int rc = std::system(command.c_str());
  const std::string log = read_text(log_path);
  ASSERT_EQ(rc, 0) << command << "\n" << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  for (const auto& k : expected) {
    const std::string mangled = kernel_name(k);
    const std::string properties = properties_of(log, mangled);
    SCOPED_TRACE(fmt::format("{} {}x{}", k.name, k.tile_m, k.tile_n));
    EXPECT_NE(properties.find(" 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"),
              std::string::npos)
        << "'" << properties << "'\n"
        << log;
    std::cout << fmt::format("[ ptxas    ] {} {}x{}: {}\n", k.name, k.tile_m, k.tile_n,
                             registers_of(log, mangled));
  }
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
