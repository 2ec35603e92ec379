#include "support/call_fuzzer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "reference/compare.h"
#include "reference/graph_reference.h"
#include "runtime/numeric.h"
#include "support/call_oracle.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::test {
namespace {

constexpr Flavor kFlavors[] = {Flavor::kPlain,     Flavor::kAuxFull, Flavor::kAuxRow,
                               Flavor::kAuxColumn, Flavor::kTapsRow, Flavor::kGatedMlp};
constexpr int kPlans = 10;
constexpr std::int64_t kHugeK = (std::int64_t{1} << 32) + 64;

struct FuzzPlan {
  FlavorShape shape;
  Flavor flavor = Flavor::kPlain;
  Plan plan;
  FlavorGraph fg;
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t bits() { return g_(); }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(g_() % n); }
  bool chance(int per_mille) { return below(1000) < per_mille; }
  double unit() { return static_cast<double>(g_() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

 private:
  std::mt19937_64 g_;
};

OracleKind kind_of(const std::string& name) {
  if (name == "A") return OracleKind::kA;
  if (name == "B" || name == "B0" || name == "B1") return OracleKind::kB;
  if (name == "aux") return OracleKind::kAux;
  if (name == "D") return OracleKind::kOutput;
  return OracleKind::kTap;
}

int unit_axis(const Layout& l) {
  for (int i = 2; i >= 0; --i) {
    if (l.stride[i] == 1 && l.shape[i] > 1) return i;
  }
  return 2;
}

Result<FuzzPlan> make_plan(Rng& rng, std::shared_ptr<Device> device) {
  const Flavor flavor = kFlavors[rng.below(std::size(kFlavors))];
  const std::int64_t dims[] = {8, 16, 24, 32};
  const FlavorShape shape{.batch = 1 + rng.below(2),
                          .m = dims[rng.below(4)],
                          .n = dims[rng.below(4)],
                          .k = dims[rng.below(4)],
                          .a_major = rng.chance(500) ? Major::kK : Major::kM,
                          .b_major = rng.chance(500) ? Major::kK : Major::kN,
                          .out_major = rng.chance(700) ? Major::kN : Major::kM};
  FG_ASSIGN_OR_RETURN(FlavorGraph fg, make_flavor_graph(flavor, shape));
  FG_ASSIGN_OR_RETURN(Plan plan, build(fg.graph, BuildOptions{std::move(device)}));
  return FuzzPlan{shape, flavor, std::move(plan), std::move(fg)};
}

// One tensor of a call: its view (relative to the arena base until placed) and its bytes.
struct Drawn {
  OracleTensor t;
  std::string mutation;
  BufferView plain;  // the unmutated view at the same place, for minimizing a repro
};

// The call-shape layout of a tensor: declared order, dense with an optional row pad.
Layout call_layout(const OracleTensor& t, std::int64_t b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int64_t pad) {
  Dims shape{};
  const auto& d = t.declared.shape;
  switch (t.kind) {
    case OracleKind::kA: shape = {b, m, k}; break;
    case OracleKind::kB: shape = {b, k, n}; break;
    case OracleKind::kOutput: shape = {b, m, n}; break;
    case OracleKind::kAux:
    case OracleKind::kTap: shape = {d[0] == 1 ? 1 : b, d[1] == 1 ? 1 : m, d[2] == 1 ? 1 : n};
  }
  Layout l;
  l.shape = shape;
  const int unit = t.unit_axis >= 0 ? t.unit_axis : 2;
  const int other = unit == 2 ? 1 : 2;
  l.stride[unit] = 1;
  l.stride[other] = shape[unit] + pad;
  l.stride[0] = l.stride[other] * shape[other] + pad;
  return l;
}

// [low, high) element offsets a layout reaches, relative to its base; saturated, since the
// fuzzer draws strides near INT64_MAX.
std::pair<std::int64_t, std::int64_t> reach(const Layout& l) {
  std::int64_t lo = 0, hi = 0;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t r = saturating_mul(l.shape[i] - 1, l.stride[i]);
    std::int64_t& end = r < 0 ? lo : hi;
    end = saturating_add(end, r);
  }
  return {lo, saturating_add(hi, 1)};
}

std::string describe(const OracleTensor& t) {
  if (!t.given.is_view) return fmt::format("{} bare @{}", t.name, t.given.data);
  return fmt::format("{} [{}]:[{}] @{}", t.name, fmt::join(t.given.shape, ", "),
                     fmt::join(t.given.stride, ", "), t.given.data);
}

int width(DataType t) {
  return t == DataType::kFloat32 ? 4 : 2;
}

class Fuzzer {
 public:
  Fuzzer(std::uint64_t seed, std::shared_ptr<Device> device, const FuzzArena& arena)
      : seed_(seed), rng_(seed), device_(std::move(device)), arena_(arena) {
    storage_.resize(kFuzzArenaBytes + 256);
    base_ = storage_.data() + (256 - reinterpret_cast<std::uintptr_t>(storage_.data()) % 256);
    snapshot_.resize(kFuzzArenaBytes);
  }

  Status make_plans() {
    for (int i = 0; i < kPlans; ++i) {
      FG_ASSIGN_OR_RETURN(FuzzPlan p, make_plan(rng_, device_));
      plans_.push_back(std::move(p));
    }
    return Status::ok();
  }

  void run(std::int64_t calls, std::int64_t only_call, FuzzFigures& f) {
    for (std::int64_t c = 0; c < calls; ++c) {
      Rng rng(seed_ ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(c + 1)));
      if (only_call >= 0 && c != only_call) continue;
      one_call(rng, c, f);
    }
  }

 private:
  // The plan's explain of `call`, or "" where it agrees with the oracle.
  std::string disagreement(FuzzPlan& p, const OracleCall& call) {
    VariantPack pack;
    for (const OracleTensor& t : call.tensors) {
      BufferView v = t.given;
      v.data = v.data == nullptr ? nullptr : on_device(v.data);
      pack.set(t.name, v);
    }
    auto bound = p.plan.bind(pack);
    if (!bound) return bound.status().message();
    const Workspace ws{call.workspace == nullptr ? nullptr : on_device(call.workspace),
                       call.workspace_bytes};
    const Verdict planned = p.plan.explain(bound.value(), ws);
    return planned.legal() == judge(call).legal ? "" : planned.message;
  }

  // Each tensor's view set back to its unmutated one, one at a time, kept while the plan and
  // the oracle still disagree: what remains are the mutations the mismatch needs.
  OracleCall minimized(FuzzPlan& p, OracleCall call, const std::vector<BufferView>& plain) {
    for (std::size_t i = 0; i < call.tensors.size(); ++i) {
      OracleCall trial = call;
      trial.tensors[i].given = plain[i];
      if (!disagreement(p, trial).empty()) {
        call = std::move(trial);
        if (!mutations_[i].empty()) mutations_[i] = " (mutation undone)";
      }
    }
    return call;
  }

  // Where a host arena address was before the call (an in-place aux is overwritten by it).
  const void* before(const void* host) const {
    return snapshot_.data() + (static_cast<const std::uint8_t*>(host) - base_);
  }

  // A device address for a host arena address.
  void* on_device(const void* host) const {
    if (arena_.device_base == nullptr) return const_cast<void*>(host);
    return arena_.device_base + (static_cast<const std::uint8_t*>(host) - base_);
  }

  void one_call(Rng& rng, std::int64_t index, FuzzFigures& f) {
    FuzzPlan& p = plans_[rng.below(static_cast<std::int64_t>(plans_.size()))];
    const FlavorShape& s = p.shape;
    std::int64_t b = s.batch, m = s.m, n = s.n, k = s.k;
    if (rng.chance(500)) {
      const std::int64_t dims[] = {8, 16, 24, 32, 40};
      m = rng.chance(200) ? 1 + rng.below(40) : dims[rng.below(5)];
      n = rng.chance(200) ? 1 + rng.below(40) : dims[rng.below(5)];
      k = rng.chance(200) ? 1 + rng.below(40) : dims[rng.below(5)];
      b = 1 + rng.below(2);
    }
    const bool huge_k = rng.chance(10);
    const bool huge_n = !huge_k && rng.chance(10);
    std::vector<Drawn> drawn;
    for (const Tensor& t : p.fg.graph.tensors()) {
      if (!t->is_output() && std::none_of(p.fg.inputs.begin(), p.fg.inputs.end(),
                                          [&](const Tensor& i) { return i->name() == t->name(); }))
        continue;
      Drawn d;
      d.t.name = t->name();
      d.t.kind = kind_of(d.t.name);
      d.t.type = t->data_type();
      d.t.declared = t->layout();
      const bool strided = d.t.kind != OracleKind::kAux && d.t.kind != OracleKind::kTap;
      d.t.unit_axis = strided ? unit_axis(d.t.declared) : -1;
      drawn.push_back(std::move(d));
    }
    // Views, then mutations around the boundary.
    for (Drawn& d : drawn) {
      OracleTensor& t = d.t;
      const std::int64_t pad = rng.chance(300) ? 8 : 0;
      Layout l = call_layout(t, b, m, n, k, pad);
      if (huge_k && (t.kind == OracleKind::kA || t.kind == OracleKind::kB)) {
        l.shape[t.kind == OracleKind::kA ? 2 : 1] = kHugeK;
        d.mutation += " huge K";
      }
      if (huge_n && (t.kind == OracleKind::kB || t.kind == OracleKind::kOutput)) {
        l.shape[2] = INT64_MAX;
        d.mutation += " huge N";
      }
      const int axis = static_cast<int>(rng.below(3));
      switch (rng.below(24)) {
        case 0:
          l.stride[axis] = 0;
          d.mutation += fmt::format(" zero stride {}", axis);
          break;
        case 1:
          l.stride[axis] = -l.stride[axis];
          d.mutation += " negative stride";
          break;
        case 2:
          l.stride[axis] = saturating_add(l.stride[axis], 1 + rng.below(7));
          d.mutation += " stride +";
          break;
        case 3:
          std::swap(l.stride[1], l.stride[2]);
          d.mutation += " strides swapped";
          break;
        case 4:
          l.shape[axis] = saturating_add(l.shape[axis], rng.chance(500) ? 1 : -1);
          d.mutation += " extent +-1";
          break;
        case 5:
          l.stride[0] = std::int64_t{1} << (38 + rng.below(4));
          d.mutation += " huge";
          break;
        case 6:
          l.shape[0] = 2;
          l.stride[0] = 0;
          d.mutation += " batch broadcast";
          break;
        default: break;
      }
      const Layout unmutated = call_layout(t, b, m, n, k, pad);
      const std::pair<std::int64_t, std::int64_t> r = reach(l);
      const std::int64_t w = width(t.type);
      const std::int64_t need =
          saturating_mul(saturating_add(r.second, saturating_mul(r.first, -1)), w);
      std::int64_t off = 0;
      if (need > 0 && need < static_cast<std::int64_t>(kFuzzArenaBytes)) {
        off = rng.below(static_cast<std::int64_t>(kFuzzArenaBytes) - need + 1) / 16 * 16;
        off -= r.first * w;
      }
      if (rng.chance(30)) {
        off += 2 * (1 + rng.below(7));
        d.mutation += " misaligned";
      }
      t.given.data = base_ + off;
      t.given.is_view = true;
      if (rng.chance(150) && !huge_k && !huge_n) {
        t.given.is_view = false;
        l = t.declared;
        d.mutation += " bare";
        const std::pair<std::int64_t, std::int64_t> rd = reach(l);
        t.given.data = base_ + rng.below(static_cast<std::int64_t>(kFuzzArenaBytes) -
                                         (rd.second - rd.first) * w) /
                                   16 * 16;
      }
      t.given.shape.assign(l.shape.begin(), l.shape.end());
      t.given.stride.assign(l.stride.begin(), l.stride.end());
      d.plain = BufferView::view(
          base_ + std::clamp<std::int64_t>(off, 0, static_cast<std::int64_t>(kFuzzArenaBytes)) /
                      16 * 16,
          {unmutated.shape.begin(), unmutated.shape.end()},
          {unmutated.stride.begin(), unmutated.stride.end()});
      if (t.kind == OracleKind::kB && t.given.is_view && rng.chance(150)) {
        std::swap(t.given.shape[1], t.given.shape[2]);
        std::swap(t.given.stride[1], t.given.stride[2]);
        d.mutation += " kernel order";
      }
      if (t.kind == OracleKind::kAux && t.given.is_view && rng.chance(200)) {
        t.given.shape.erase(t.given.shape.begin());
        t.given.stride.erase(t.given.stride.begin());
        d.mutation += " rank 2";
      }
      if (rng.chance(8)) {
        t.given.data_type = DataType::kFloat16;
        d.mutation += " wrong type";
      }
      if (rng.chance(5)) {
        t.given.data = nullptr;
        d.mutation += " null";
      }
    }
    // Aliasing: a tensor placed at (or next to) another's base.
    if (rng.chance(150)) {
      Drawn& x = drawn[rng.below(static_cast<std::int64_t>(drawn.size()))];
      const Drawn& y = drawn[rng.below(static_cast<std::int64_t>(drawn.size()))];
      if (x.t.given.data != nullptr && y.t.given.data != nullptr) {
        x.t.given.data = static_cast<std::uint8_t*>(y.t.given.data) + 2 * rng.below(4) * 16 / 2;
        x.mutation += " aliases " + y.t.name;
      }
    }

    mutations_.clear();
    for (const Drawn& d : drawn) mutations_.push_back(d.mutation);
    OracleCall call;
    call.declared_batch = s.batch;
    VariantPack pack;
    for (const Drawn& d : drawn) {
      call.tensors.push_back(d.t);
      BufferView v = d.t.given;
      v.data = v.data == nullptr ? nullptr : on_device(v.data);
      pack.set(d.t.name, v);
    }
    auto bound = p.plan.bind(pack);
    if (!bound) {
      record(f, index, p, call, "bind failed: " + bound.status().message(), "");
      return;
    }
    const auto needed_or = p.plan.workspace_bytes(bound.value());
    const std::uint64_t needed = needed_or ? needed_or.value() : 0;
    call.workspace_needed = needed;
    if (needed > 0) {
      std::int64_t ws_off = rng.below(static_cast<std::int64_t>(kFuzzArenaBytes) / 2) / 16 * 16;
      call.workspace = base_ + ws_off;
      call.workspace_bytes = needed;
      if (rng.chance(30)) call.workspace_bytes = needed - 16;
      if (rng.chance(30)) call.workspace = base_ + ws_off + 8;
      if (ws_off + static_cast<std::int64_t>(needed) > static_cast<std::int64_t>(kFuzzArenaBytes)) {
        call.workspace = nullptr;
      }
    }
    const OracleVerdict verdict = judge(call);
    Workspace ws{call.workspace == nullptr ? nullptr : on_device(call.workspace),
                 call.workspace_bytes};
    // explain first: a call the plan would wrongly accept may reach past the arena, so it is
    // recorded, never executed.
    const Verdict planned = p.plan.explain(bound.value(), ws);
    ++f.calls;
    if (planned.legal() != verdict.legal) {
      ++f.decision_mismatches;
      std::vector<BufferView> plain;
      for (const Drawn& d : drawn) plain.push_back(d.plain);
      const OracleCall small = minimized(p, call, plain);
      const OracleVerdict sv = judge(small);
      record(f, index, p, small, sv.legal ? "oracle: legal" : "oracle: " + sv.why,
             "plan: " + disagreement(p, small));
      return;
    }

    // Inputs random, written elements poisoned (bytes a read role reaches kept: an in-place
    // aux), everything else the canary; the arena snapshotted.
    for (std::size_t i = 0; i < kFuzzArenaBytes; ++i)
      base_[i] = static_cast<std::uint8_t>(i * 0x5A + 0xC3);
    std::vector<std::uintptr_t> read_bytes;
    std::vector<std::uintptr_t> written_bytes;
    if (verdict.legal) {
      for (std::size_t i = 0; i < call.tensors.size(); ++i) {
        const OracleTensor& t = call.tensors[i];
        const Layout& l = verdict.logical[i];
        const bool written = t.kind == OracleKind::kOutput || t.kind == OracleKind::kTap;
        auto bytes = bytes_reached(t.given.data, t.type, l);
        (written ? written_bytes : read_bytes)
            .insert((written ? written_bytes : read_bytes).end(), bytes.begin(), bytes.end());
      }
      std::sort(read_bytes.begin(), read_bytes.end());
      const auto lo = reinterpret_cast<std::uintptr_t>(base_);
      const auto hi = lo + kFuzzArenaBytes;
      for (const auto* set : {&read_bytes, &written_bytes}) {
        if (!set->empty() && (*std::min_element(set->begin(), set->end()) < lo ||
                              *std::max_element(set->begin(), set->end()) >= hi)) {
          --f.calls;
          ++f.skipped;  // legal, but the draw placed it past the arena
          return;
        }
      }
      for (std::size_t i = 0; i < call.tensors.size(); ++i) {
        const OracleTensor& t = call.tensors[i];
        const Layout& l = verdict.logical[i];
        if (t.kind == OracleKind::kOutput || t.kind == OracleKind::kTap) continue;
        for (std::int64_t i0 = 0; i0 < l.shape[0]; ++i0)
          for (std::int64_t i1 = 0; i1 < l.shape[1]; ++i1)
            for (std::int64_t i2 = 0; i2 < l.shape[2]; ++i2) {
              numeric::store_double(t.type, t.given.data,
                                    i0 * l.stride[0] + i1 * l.stride[1] + i2 * l.stride[2],
                                    rng.unit());
            }
      }
      for (std::uintptr_t a : written_bytes) {
        if (!std::binary_search(read_bytes.begin(), read_bytes.end(), a)) {
          *reinterpret_cast<std::uint8_t*>(a) = 0xFF;
        }
      }
      std::sort(written_bytes.begin(), written_bytes.end());
    }
    std::memcpy(snapshot_.data(), base_, kFuzzArenaBytes);
    if (arena_.upload) (void)arena_.upload(base_, kFuzzArenaBytes);
    const Status status = p.plan.execute(bound.value(), ws, nullptr);
    if (arena_.download) (void)arena_.download(base_, kFuzzArenaBytes);
    const bool accepted = status.is_ok();
    (accepted ? f.accepted : f.refused) += 1;
    if (accepted != verdict.legal) {
      ++f.decision_mismatches;
      record(f, index, p, call, "explain and execute disagree", status.message());
      return;
    }
    if (!accepted) {
      if (status.code() != ErrorCode::kIllegalCall ||
          std::memcmp(snapshot_.data(), base_, kFuzzArenaBytes) != 0) {
        ++f.wrong_results;
        record(f, index, p, call, "refused call wrote to the arena", status.message());
      }
      return;
    }
    const std::string wrong = check_result(p, call, verdict, written_bytes);
    if (!wrong.empty()) {
      ++f.wrong_results;
      record(f, index, p, call, wrong, "");
    }
  }

  // The outputs against the fp64 reference of the call-shape graph, inputs read from the
  // arena through the oracle's reading of each view; and no byte outside the outputs and the
  // workspace moved (the workspace is the plan's scratch: the CUDA kernel leaves its tap
  // counters and partials there, the host device does not).
  std::string check_result(const FuzzPlan& p, const OracleCall& call, const OracleVerdict& v,
                           const std::vector<std::uintptr_t>& written) {
    const auto* ws = static_cast<const std::uint8_t*>(call.workspace);
    const auto scratch = [&](const std::uint8_t* byte) {
      return ws != nullptr && byte >= ws && byte < ws + call.workspace_bytes;
    };
    for (std::size_t i = 0; i < kFuzzArenaBytes; ++i) {
      const auto a = reinterpret_cast<std::uintptr_t>(base_ + i);
      if (base_[i] != snapshot_[i] && !scratch(base_ + i) &&
          !std::binary_search(written.begin(), written.end(), a)) {
        return fmt::format("byte {} outside every written element changed", i);
      }
    }
    FlavorShape cs = p.shape;
    cs.batch = v.batch;
    cs.m = v.m;
    cs.n = v.n;
    cs.k = v.k;
    // The flavor graphs give every B one batch: a gated MLP whose B0 and B1 differ in it has
    // no reference graph here, and only its decision is checked.
    int b_batches = 0;
    for (std::size_t i = 0; i < call.tensors.size(); ++i) {
      const bool one = v.logical[i].shape[0] == 1 && v.batch > 1;
      if (call.tensors[i].kind == OracleKind::kA) cs.a_batch_one = one;
      if (call.tensors[i].kind == OracleKind::kB) b_batches |= one ? 1 : 2;
      if (call.tensors[i].kind == OracleKind::kAux) cs.aux_batch_one = one;
    }
    if (b_batches == 3) return "";
    cs.b_batch_one = b_batches == 1;
    auto fg = make_flavor_graph(p.flavor, cs);
    if (!fg) return "reference graph: " + fg.status().message();
    auto inputs = reference::make_random_inputs(fg->graph, 1);
    if (!inputs) return inputs.status().message();
    const auto find = [&](const std::string& name) -> int {
      for (std::size_t i = 0; i < call.tensors.size(); ++i) {
        if (call.tensors[i].name == name) return static_cast<int>(i);
      }
      return -1;
    };
    for (const Tensor& t : fg->graph.tensors()) {
      auto it = inputs->find(*t->uid());
      if (it == inputs->end()) continue;
      const int i = find(t->name());
      const Layout& l = v.logical[i];
      auto& h = it->second;
      for (std::int64_t i0 = 0; i0 < h.layout.shape[0]; ++i0)
        for (std::int64_t i1 = 0; i1 < h.layout.shape[1]; ++i1)
          for (std::int64_t i2 = 0; i2 < h.layout.shape[2]; ++i2) {
            const std::int64_t off =
                (l.shape[0] == 1 ? 0 : i0) * l.stride[0] + i1 * l.stride[1] + i2 * l.stride[2];
            h.set(i0, i1, i2,
                  numeric::load_double(h.type, before(call.tensors[i].given.data), off));
          }
    }
    auto expected = reference::evaluate(fg->graph, inputs.value());
    if (!expected) return expected.status().message();
    for (const auto& out : expected->outputs()) {
      std::string name;
      for (const Tensor& t : fg->graph.tensors()) {
        if (*t->uid() == out.uid) name = t->name();
      }
      const int i = find(name);
      const Layout& l = v.logical[i];
      // A tap declared over batch 1 reduces the batch of a batched call too; the flavor
      // graphs have no such tap to evaluate, so only the plan's other outputs are compared.
      if (l.shape[0] != out.dims[0]) continue;
      double num = 0.0, den = 0.0;
      for (std::int64_t i0 = 0; i0 < out.dims[0]; ++i0)
        for (std::int64_t i1 = 0; i1 < out.dims[1]; ++i1)
          for (std::int64_t i2 = 0; i2 < out.dims[2]; ++i2) {
            const double got =
                numeric::load_double(out.type, call.tensors[i].given.data,
                                     i0 * l.stride[0] + i1 * l.stride[1] + i2 * l.stride[2]);
            const double want = out.rounded[reference::dense_index(out.dims, i0, i1, i2)];
            if (!std::isfinite(got) && std::isfinite(want)) {
              return fmt::format("'{}' non-finite at [{}, {}, {}]", name, i0, i1, i2);
            }
            num += (got - want) * (got - want);
            den += want * want;
          }
      const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
      if (rel > reference::relative_tolerance(out.type)) {
        return fmt::format("'{}' rel_err {:.2e}", name, rel);
      }
    }
    return "";
  }

  void record(FuzzFigures& f, std::int64_t index, const FuzzPlan& p, const OracleCall& call,
              const std::string& a, const std::string& b) {
    if (f.repros.size() >= 8) return;
    std::string views;
    for (std::size_t i = 0; i < call.tensors.size(); ++i) {
      views += "\n    " + describe(call.tensors[i]) +
               (i < mutations_.size() ? mutations_[i] : std::string());
    }
    f.repros.push_back(fmt::format(
        "replay: seed {} call {} (FUSEDGEMM_CALL_FUZZ_SEED={} FUSEDGEMM_CALL_FUZZ_ONLY={})\n"
        "  plan: {} {}\n  views (arena base {}):{}\n  workspace {} of {} bytes (needs {})\n  "
        "{}\n  {}",
        seed_, index, seed_, index, to_string(p.flavor), to_string(p.shape),
        static_cast<const void*>(base_), views, call.workspace, call.workspace_bytes,
        call.workspace_needed, a, b));
  }

  std::uint64_t seed_;
  Rng rng_;
  std::shared_ptr<Device> device_;
  FuzzArena arena_;
  std::vector<FuzzPlan> plans_;
  std::vector<std::uint8_t> storage_;
  std::uint8_t* base_ = nullptr;
  std::vector<std::uint8_t> snapshot_;
  std::vector<std::string> mutations_;  // per tensor of the current call, for its repro
};

}  // namespace

FuzzFigures fuzz_calls(std::uint64_t seed, std::int64_t calls, std::shared_ptr<Device> device,
                       const FuzzArena& arena, std::int64_t only_call) {
  FuzzFigures f;
  Fuzzer fuzzer(seed, std::move(device), arena);
  if (Status s = fuzzer.make_plans(); !s) {
    f.repros.push_back("plans: " + s.message());
    ++f.wrong_results;
    return f;
  }
  fuzzer.run(calls, only_call, f);
  return f;
}

}  // namespace fusedgemm::test
