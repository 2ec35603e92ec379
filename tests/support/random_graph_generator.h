// The random graph generator's internals (random_graph.h is the interface): the drawing
// state and the steps of one graph. random_graph.cpp draws the problem, the operands, the
// matmuls, the broken rule, the outputs and the taps; random_graph_epilogue.cpp draws the
// epilogue DAG of pointwise values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fusedgemm/graph.h"
#include "support/random_graph.h"

namespace fusedgemm::test::random_graph_detail {

using Dimv = std::vector<std::int64_t>;

constexpr DataType kFp32 = DataType::kFloat32;
constexpr DataType kBf16 = DataType::kBFloat16;
constexpr DataType kFp16 = DataType::kFloat16;
constexpr DataType kFp8 = DataType::kFp8E4M3;

// The largest magnitude a value may reach, so fp16 roundings and outputs stay finite and a
// product of two values stays far inside fp32's range.
constexpr double kMaxMagnitude = 1000.0;
// What a divisor, a log, rsqrt or reciprocal input and a pow base are at least.
constexpr double kMinPositive = 0.25;
// exp reads values no larger than this (after a tanh when needed).
constexpr double kMaxExpInput = 3.0;
// Kernel parameters kept free for outputs and taps while aux inputs are drawn: up to three
// dense outputs, three taps and the output keep_live may add.
constexpr std::int64_t kReservedBuffers = 7;

// The one rule a declined graph breaks; each is checked against rules.cpp and analyze.cpp
// so that validate passes and the rule is the first the engine meets.
enum class Break : std::uint8_t {
  kNone,
  kChainedGemm,          // (A @ B) @ C, with N == K so that both matmuls share one shape
  kPrologueOp,           // unary(A) @ B
  kOperandMajor,         // A with stride 2 on both M and K
  kTapConsumed,          // a row or column tap read by a later pointwise node
  kAuxShape,             // batch-1 problem, an aux of batch 2 or 3
  kStoreShape,           // a dense output of a scalar aux value
  kDequantizePlacement,  // block-scaled fp8 operands, the dequantized A stored
  kOutputMajor,          // an output with stride 2 on both M and N
  kGemmShapeMismatch,    // one more matmul with another K
  kGemmCount,            // five matmuls
  kOperandDataType,      // bf16 x fp16, fp16 x bf16 or fp8 x fp16
  kLayoutGroupMajor,     // A of matmul 0 K-major, A of matmul 1 M-major
  kOperandMajor8bit,     // fp8 A M-major or fp8 B N-major
  kBlockScaleShape,      // fp8 A block-scaled 1x128, B unscaled
  kContiguousExtent,     // a contiguous extent off the 16-byte granule
  kStrideAlignment,      // an operand pitch off the 16-byte granule
  kAuxDataType,          // an int8 aux
  kOutputDataType,       // an int32 dense output
};

// Raw mt19937_64 words only: std distributions differ between standard libraries.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi] (the modulo bias is far below anything a sweep can see).
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(engine_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool percent(int p) { return between(0, 99) < p; }
  template <class T>
  T pick(std::initializer_list<T> items) {
    return items.begin()[between(0, static_cast<std::int64_t>(items.size()) - 1)];
  }

 private:
  std::mt19937_64 engine_;
};

// Strides of [b, rows, cols] with `contiguous` (1 or 2) at unit stride, the other axis
// padded by `pad` elements and the batch by `batch_pad`.
Dimv strides_of(const Dimv& d, int contiguous, std::int64_t pad, std::int64_t batch_pad);

std::string dims_text(const Dimv& d);

PointwiseAttributes op(PointwiseMode mode);

// One epilogue value (or a caller input among them) with what keeps the graph sane: a rough
// range, and the origins that decide whether two values may meet in one node.
struct Value {
  Tensor tensor;
  Dimv dims;
  double lo = 0.0;
  double hi = 0.0;
  std::set<int> roots;      // accumulators and aux inputs it is computed from (value ids)
  std::set<int> rounds;     // declared rounding points on its paths (value ids)
  std::set<int> ancestors;  // every value it is computed from, itself included
  bool input = false;       // an aux the caller provides
  bool tap = false;         // a reduction output, read by no later node
  bool accumulator = false;
  bool discrete = false;  // a comparison: 0 or 1
  // The same number in fp32 and fp64: an aux input, or computed from exact values by neg,
  // abs, max, min, select, a relu without slope, a cast or a comparison.
  bool exact = false;
  bool declared = false;  // its data type is declared
  int uses = 0;
  double magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

class Generator {
 public:
  Generator(std::uint64_t seed, const RandomGraphOptions& options);

  Result<RandomGraph> run();

 private:
  Graph& g() { return result_.graph; }
  Value& at(int id) { return values_[static_cast<std::size_t>(id)]; }
  Dimv full() const { return {batch_, m_, n_}; }
  static std::int64_t modulus_of(DataType t) { return is_fp8(t) ? 16 : 8; }

  // --- problem and operands -------------------------------------------------------------

  void choose_problem();

  Tensor operand_a(bool k_major, std::int64_t k);

  Tensor operand_b(std::int64_t k);

  // An fp32 block-scale input of `x` and the dequantize node reading both.
  Tensor dequantize(const Tensor& x, std::int64_t rows, std::int64_t cols);

  int add_accumulator(const Tensor& a, const Tensor& b, std::int64_t k);

  void make_gemms();

  // --- values ---------------------------------------------------------------------------

  int add_value(const Tensor& t, Dimv dims, const std::vector<int>& inputs);

  // A pointwise node over `inputs` whose result lies in [lo, hi].
  int emit(PointwiseAttributes attrs, const std::vector<int>& inputs, double lo, double hi,
           std::string label = {});

  static bool exact_op(const PointwiseAttributes& a);

  int monotone(PointwiseMode mode, int v, double (*f)(double));

  int tanh_of(int v);

  int squash(int v, double limit) { return at(v).magnitude() > limit ? tanh_of(v) : v; }

  int abs_of(int v);

  int exp_of(int v);

  // A value >= kMinPositive computed from `v`: exp(tanh(v)) lies in [0.37, 2.72].
  int positive(int v);

  // Two values may meet in a node unless they share an origin through different rounding
  // points: their difference would be a rounding error, which fp32 and fp64 round apart.
  bool compatible(int u, int w);

  int new_aux(DataType type = kFp32, bool random_type = true);

  std::vector<int> ids_where(const std::function<bool(const Value&, int)>& pred);

  int pick_id(const std::vector<int>& ids);

  // The input of the next op: the latest full value (a chain) or any full one (fan-out).
  int primary();

  // Kernel parameters taken so far: operands, aux inputs, outputs and taps (scales only
  // come with declines). A fused plan has at most kernels::kMaxKernelBuffers of them.
  std::int64_t buffers_used();

  bool crowded();

  // A second input for `v`: an earlier value (fan-in) or an aux input, old or new. Once
  // the aux inputs would crowd out the outputs and taps, an old one is taken where it can.
  int partner(int v);

  // --- ops ------------------------------------------------------------------------------

  int relu(int v);

  int unary(int v);

  // [lo, hi] of f over the corners of two ranges (f monotone in each argument).
  template <class F>
  std::pair<double, double> corners(int u, int w, F f) {
    const double c[4] = {f(at(u).lo, at(w).lo), f(at(u).lo, at(w).hi), f(at(u).hi, at(w).lo),
                         f(at(u).hi, at(w).hi)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }

  int arithmetic(PointwiseMode mode, int u, int w);

  int binary(int v);

  // An exact value other than `avoid`: an old one, or a new aux input.
  int exact_value(int avoid);

  // 0 or 1 from two exact values. A comparison of computed values would flip wherever
  // fp32 and fp64 land on either side of a tie (one flip in a stored mask of thousands of
  // elements breaks fp32's tolerance), so masks come from aux inputs and are then applied
  // to the accumulators by mul and select. eq and ne compare relu of both, which are equal
  // exactly where both are <= 0.
  int compare();

  int select(int v);

  void declare(int id, DataType type);

  // Sometimes the new value is declared bf16 or fp16: a rounding point.
  void maybe_round(int id);

  void random_op();

  // Several accumulators first meet in one value (sum, difference, gated product, ...).
  void combine_accumulators();

  // --- breaks, outputs, taps ------------------------------------------------------------

  void mark_output(int id, DataType type, int contiguous, std::int64_t pad, std::int64_t batch_pad,
                   Dimv strides = {});

  // The breaks made after the epilogue: each adds a node (and an output keeping it live).
  void late_break();

  void choose_outputs();

  // exp(tanh(v) / 2^k), as k square roots of exp(tanh(v)), with 2^k >= elements / 40: a
  // product of `elements` such factors lies in [e^-40, e^40], inside fp32's range whatever
  // the distribution of v.
  int near_one(int v, std::int64_t elements);

  void choose_taps();

  // Every value a break hangs on reaches an output (a dead node declines nothing), and a
  // fusable graph stores something computed from an accumulator (else no_matmul).
  void keep_live();

  Rng rng_;
  RandomGraphOptions options_;
  RandomGraph result_;
  Break brk_ = Break::kNone;
  std::int64_t batch_ = 1, m_ = 1, n_ = 1, k_ = 1;
  DataType a_type_ = kBf16, b_type_ = kBf16;
  std::int64_t mod_ = 8;
  bool a_k_major_ = true, b_k_major_ = true;
  bool a_batch_one_ = false, b_batch_one_ = false;
  std::int64_t a_pad_ = 0, a_batch_pad_ = 0, b_pad_ = 0, b_batch_pad_ = 0;
  std::vector<Tensor> a_list_, b_list_;
  std::vector<Value> values_;
  std::vector<int> accs_, outputs_, taps_, must_live_;
  std::vector<std::string> parts_;
  int node_count_ = 0, aux_count_ = 0, tap_count_ = 0;
};

}  // namespace fusedgemm::test::random_graph_detail
