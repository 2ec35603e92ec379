// The call rows about the memory a call writes: buffer_overlap, output_aliasing, workspace.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "recipe/call_rules.h"
#include "recipe/call_rules_detail.h"
#include "recipe/range_sweep.h"
#include "recipe/workspace.h"

namespace fusedgemm::recipe::call_rules {

using detail::first_role;
using detail::problem_str;
using detail::seen;
using detail::who;

// --- buffer_overlap ---------------------------------------------------------------------

namespace {

constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// The exact test's work per pair of roles (rows or elements enumerated times the steps of
// each membership test). Past it, two roles whose byte ranges meet are refused as if they
// shared a byte: the one imprecision of buffer_overlap, which only layouts of 2^24 rows (a
// unit-stride run each, against an injective layout) or of millions of elements otherwise,
// interleaved with another buffer, reach.
constexpr std::int64_t kMaxExactSteps = std::int64_t{1} << 24;
// Reaches past this many bytes are past any allocation; such a layout meets every range.
constexpr std::int64_t kMaxExactReach = std::int64_t{1} << 60;

// Which element offsets a layout reaches. Exact for any layout: an injective one (each
// stride clears the span of the axes below it) by peeling the largest strides, any other
// (negative strides, strides that revisit elements) by walking its two smaller extents and
// solving for the largest.
class Reach {
 public:
  explicit Reach(const Layout& layout) noexcept : l_(layout), injective_(layout.is_injective()) {
    for (int i = 1; i < kRank; ++i) {
      for (int j = i; j > 0 && key(order_[j]) > key(order_[j - 1]); --j) {
        std::swap(order_[j], order_[j - 1]);
      }
    }
  }

  // Whether offset `off` is reached; spends `budget` (and answers true once it is spent).
  bool has(std::int64_t off, std::int64_t& budget) const noexcept {
    if (injective_) {
      --budget;
      if (off < 0) return false;
      for (int axis : order_) {
        if (l_.shape[axis] <= 1 || l_.stride[axis] == 0) continue;
        const std::int64_t i = off / l_.stride[axis];
        if (i >= l_.shape[axis]) return false;
        off -= i * l_.stride[axis];
      }
      return off == 0;
    }
    const int c = order_[0];  // the largest extent is solved for
    const int a = order_[1];
    const int b = order_[2];
    budget -= saturating_mul(l_.shape[a], l_.shape[b]);
    if (budget < 0) return true;
    for (std::int64_t i = 0; i < l_.shape[a]; ++i) {
      for (std::int64_t j = 0; j < l_.shape[b]; ++j) {
        const std::int64_t rest = off - i * l_.stride[a] - j * l_.stride[b];
        if (l_.stride[c] == 0 || l_.shape[c] == 1) {
          if (rest == 0) return true;
        } else if (rest % l_.stride[c] == 0 && rest / l_.stride[c] >= 0 &&
                   rest / l_.stride[c] < l_.shape[c]) {
          return true;
        }
      }
    }
    return false;
  }

 private:
  // Injective: by stride, largest first. Otherwise: by extent, largest first.
  std::int64_t key(int axis) const noexcept {
    return injective_ ? l_.stride[axis] : l_.shape[axis];
  }

  const Layout& l_;
  bool injective_;
  std::array<int, kRank> order_{0, 1, 2};
};

// Whether an injective layout with non-negative strides reaches an element offset in
// [lo, hi]: the largest offset it reaches at or below hi, digit by digit from the largest
// stride (each stride clears the span of the axes below it, so offsets order as their
// index tuples), is at least lo.
bool injective_reaches(const Layout& l, std::int64_t lo, std::int64_t hi) noexcept {
  if (hi < 0 || hi < lo) return false;
  std::array<int, kRank> order{0, 1, 2};
  for (int i = 1; i < kRank; ++i) {
    for (int j = i; j > 0 && l.stride[order[j]] > l.stride[order[j - 1]]; --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  std::int64_t left = hi;
  for (int axis : order) {
    if (l.shape[axis] <= 1 || l.stride[axis] == 0) continue;
    left -= std::min(left / l.stride[axis], l.shape[axis] - 1) * l.stride[axis];
  }
  return hi - left >= lo;
}

// share_bytes for a larger layout that is injective and a smaller one with a unit-stride
// axis: each run of the smaller layout along that axis is one interval of bytes, and one
// injective_reaches asks whether any element of the larger one has a byte in it. Rows, not
// elements, spend the budget: two 4096 x 4096 outputs interleaved column by column in one
// allocation cost 4096 steps. std::nullopt where the budget runs out.
std::optional<bool> share_bytes_by_rows(std::int64_t bits_s, const Layout& small, int unit,
                                        std::int64_t bits_l, const Layout& large, std::int64_t diff,
                                        std::int64_t budget) noexcept {
  const int p = unit == 0 ? 1 : 0;
  const int q = unit == 2 ? 1 : 2;
  if (saturating_mul(small.shape[p], small.shape[q]) > budget) return std::nullopt;
  for (std::int64_t ip = 0; ip < small.shape[p]; ++ip) {
    for (std::int64_t iq = 0; iq < small.shape[q]; ++iq) {
      const std::int64_t o = ip * small.stride[p] + iq * small.stride[q];
      // The run's bytes [lo, hi), from the larger layout's base; then the larger layout's
      // elements with a byte in them: c * bits_l < 8 hi and (c + 1) * bits_l > 8 lo.
      const std::int64_t lo = diff + floor_div(o * bits_s, 8);
      const std::int64_t hi = diff + floor_div((o + small.shape[unit]) * bits_s + 7, 8);
      if (injective_reaches(large, floor_div(lo * 8, bits_l),
                            floor_div(hi * 8 + bits_l - 1, bits_l) - 1)) {
        return true;
      }
    }
  }
  return false;
}

// A layout as runs of whole bytes, one per row, the rows one arithmetic progression: a
// unit-stride axis, the other axes of extent > 1 nested densely (the larger stride the
// smaller's times its extent). Bytes from the layout's base.
struct ByteRows {
  std::int64_t count = 0;  // rows
  std::int64_t pitch = 0;  // bytes from one row's start to the next's
  std::int64_t width = 0;  // bytes of a row
};

std::optional<ByteRows> byte_rows(const Layout& l, std::int64_t bits) noexcept {
  if (bits % 8 != 0) return std::nullopt;  // fp4: rows may start mid-byte
  int unit = -1;
  for (int i = kRank - 1; i >= 0 && unit < 0; --i) {
    if (l.stride[i] == 1 && l.shape[i] > 1) unit = i;
  }
  if (unit < 0) return std::nullopt;
  std::array<int, 2> outer{};
  int n = 0;
  for (int i = 0; i < kRank; ++i) {
    if (i != unit && l.shape[i] > 1) outer[n++] = i;
  }
  if (n == 2 && l.stride[outer[0]] < l.stride[outer[1]]) std::swap(outer[0], outer[1]);
  // outer[n - 1]: the row axis (smaller stride); outer[0] of two: nested over it.
  const std::int64_t row_stride = n == 0 ? 0 : l.stride[outer[n - 1]];
  if (n == 2 && l.stride[outer[0]] != row_stride * l.shape[outer[1]]) return std::nullopt;
  const std::int64_t rows = n == 0   ? 1
                            : n == 1 ? l.shape[outer[0]]
                                     : l.shape[outer[0]] * l.shape[outer[1]];
  return ByteRows{rows, row_stride * bits / 8, l.shape[unit] * bits / 8};
}

// share_bytes for two layouts of rows of the same pitch, each row narrower than the pitch
// (an fp32 and an fp16 part of every row of one allocation, say): small row r starts at
// diff + r * pitch, large row j at j * pitch, so whether they meet depends on k = j - r
// alone, and at most three k do. std::nullopt where the layouts are not so.
std::optional<bool> share_bytes_by_row_pitch(std::int64_t bits_s, const Layout& small,
                                             std::int64_t bits_l, const Layout& large,
                                             std::int64_t diff) noexcept {
  const auto s = byte_rows(small, bits_s);
  const auto l = byte_rows(large, bits_l);
  if (!s || !l || s->count < 2 || l->count < 2 || s->pitch != l->pitch || s->pitch <= 0 ||
      s->width > s->pitch || l->width > l->pitch) {
    return std::nullopt;
  }
  const std::int64_t pitch = s->pitch;
  // Rows r and j = r + k meet where diff + r pitch < j pitch + width_l and
  // j pitch < diff + r pitch + width_s: -width_s < diff - k pitch < width_l.
  for (std::int64_t k = floor_div(diff - l->width, pitch) + 1; k * pitch < diff + s->width; ++k) {
    if (diff - k * pitch >= l->width) continue;
    // Some r in [0, rows_s) with r + k in [0, rows_l).
    if (std::max<std::int64_t>(0, -k) < std::min(s->count, l->count - k)) return true;
  }
  return false;
}

// Whether two layouts' elements share a byte: `a` of `bits_a`-bit elements at `base_a`, `b`
// likewise. Rows of one pitch are decided at once; otherwise it enumerates the smaller
// layout's elements (or its contiguous runs, against an injective larger layout) and asks
// the larger one for the few offsets whose bytes could meet each (elements of different
// widths, bases that differ by part of an element, fp4 nibbles sharing a byte: all exact).
bool share_bytes(int bits_a, const Layout& a, std::intptr_t base_a, int bits_b, const Layout& b,
                 std::intptr_t base_b) noexcept {
  const bool a_small = a.element_count() <= b.element_count();
  const Layout& small = a_small ? a : b;
  const Layout& large = a_small ? b : a;
  const std::int64_t bits_s = a_small ? bits_a : bits_b;
  const std::int64_t bits_l = a_small ? bits_b : bits_a;
  if (bits_s <= 0 || bits_l <= 0) return true;
  const ByteReach rs = byte_reach(DataType::kInt8, small);
  const ByteReach rl = byte_reach(DataType::kInt8, large);
  if (std::max({-rs.low, rs.high, -rl.low, rl.high}) > kMaxExactReach / 8) return true;
  const std::int64_t diff = a_small ? base_a - base_b : base_b - base_a;  // small - large
  if (auto shared = share_bytes_by_row_pitch(bits_s, small, bits_l, large, diff)) return *shared;
  if (large.is_injective()) {
    for (int unit = kRank - 1; unit >= 0; --unit) {
      if (small.stride[unit] != 1 || small.shape[unit] <= 1) continue;
      if (auto shared =
              share_bytes_by_rows(bits_s, small, unit, bits_l, large, diff, kMaxExactSteps)) {
        return *shared;
      }
      break;
    }
  }
  std::int64_t budget = kMaxExactSteps;
  const Reach reach(large);
  for (std::int64_t i0 = 0; i0 < small.shape[0]; ++i0) {
    for (std::int64_t i1 = 0; i1 < small.shape[1]; ++i1) {
      for (std::int64_t i2 = 0; i2 < small.shape[2]; ++i2) {
        const std::int64_t o = i0 * small.stride[0] + i1 * small.stride[1] + i2 * small.stride[2];
        // The element's bytes, from the larger layout's base.
        const std::int64_t lo = diff + floor_div(o * bits_s, 8);
        const std::int64_t hi = diff + floor_div((o + 1) * bits_s + 7, 8);
        for (std::int64_t c = floor_div(lo * 8, bits_l); c * bits_l < hi * 8; ++c) {
          if (floor_div((c + 1) * bits_l + 7, 8) <= lo) continue;
          if (reach.has(c, budget)) return true;
        }
        if (--budget < 0) return true;
      }
    }
  }
  return false;
}

std::intptr_t address(const void* p) noexcept {
  return static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(p));
}

// [lo, hi) in addresses, saturating at the ends of the address space.
ByteRange range_of(const void* data, const ByteReach& reach, int role) noexcept {
  const auto base = reinterpret_cast<std::uintptr_t>(data);
  const auto down = static_cast<std::uintptr_t>(-reach.low);
  const auto up = static_cast<std::uintptr_t>(reach.high);
  return {down > base ? 0 : base - down, up > UINTPTR_MAX - base ? UINTPTR_MAX : base + up, role};
}

bool ranges_meet(const ByteRange& a, const ByteRange& b) noexcept {
  return a.lo < b.hi && b.lo < a.hi;
}

// An aux read in place of a dense output of the same layout is fine: each element is read
// by the thread that then writes it. Not so a tap or a quantized output, whose elements are
// written after the whole reduction or block was read. The fallback engine's outputs (kind
// kBuffer) are stored after its last read of any input (fallback/program.cpp), so the same
// call is legal on either engine.
bool in_place(const RoleFacts& w, const RoleLayout& lw, const void* dw, const RoleFacts& r,
              const RoleLayout& lr, const void* dr) noexcept {
  const bool dense_output =
      w.role == Role::kOutput && (w.kind == ParamKind::kOutput || w.kind == ParamKind::kBuffer);
  return dense_output && r.role == Role::kAux && dw == dr && w.data_type == r.data_type &&
         lw.kernel == lr.kernel;
}

// The first role whose memory written role `w` meets, or -1. Address ranges first, over
// one compact array: the exact test runs only for ranges that meet.
int overlapped_by(const Recipe& recipe, const CallView& view, int w) noexcept {
  const auto& reach = view.layout->reach;
  const ByteRange rw = range_of(view.data[w], reach[w], w);
  for (int r = 0; r < view.layout->role_count; ++r) {
    if (r == w || view.data[r] == nullptr) continue;
    if (!ranges_meet(rw, range_of(view.data[r], reach[r], r))) continue;
    const auto& fw = recipe.roles[w];
    const auto& fr = recipe.roles[r];
    if (fr.slot == fw.slot) continue;
    const auto& lw = view.layout->roles[w];
    const auto& lr = view.layout->roles[r];
    if (in_place(fw, lw, view.data[w], fr, lr, view.data[r])) continue;
    if (share_bytes(bits_of(fw.data_type), lw.given, address(view.data[w]), bits_of(fr.data_type),
                    lr.given, address(view.data[r]))) {
      return r;
    }
  }
  return -1;
}

}  // namespace

// Runs every call, so the pairwise search (each written role against every role) runs only
// for the roles whose address ranges meet another's, found by one sort and sweep over the
// given buffers (range_sweep.h): apart buffers cost no exact test. Same verdict as the
// pairwise search over all roles: a role whose range meets none is overlapped by none, and
// the candidates are tried in role order. execute_bound/taps went from 206-233 ns to
// 153-171 ns (2-core CPU host, loaded, 2026-12-02).
int buffer_overlap_violation(const Recipe& recipe, const CallView& view) noexcept {
  static_assert(kMaxRoles <= 32,
                "meeting_roles keeps one bit per role: widen its mask for more than 32 roles");
  std::array<ByteRange, kMaxRoles> ranges;
  std::size_t count = 0;
  for (int i = 0; i < view.layout->role_count; ++i) {
    if (view.data[i] == nullptr) continue;  // never overlaps: the pairwise search skips it
    ranges[count++] = range_of(view.data[i], view.layout->reach[i], i);
  }
  for (std::uint32_t candidates = meeting_roles(std::span(ranges.data(), count)); candidates != 0;
       candidates &= candidates - 1) {
    const int i = std::countr_zero(candidates);
    if (recipe.roles[i].written && overlapped_by(recipe, view, i) >= 0) return i;
  }
  return -1;
}

std::string buffer_overlap_explain(const Recipe& recipe, const CallView& view, int role) {
  const int other = overlapped_by(recipe, view, role);
  return fmt::format(
      "buffer_overlap: {}: {} at {} shares memory with {} {} at {}; legal: "
      "written buffers share no byte with any other buffer, read or written (an aux may "
      "alias a dense output of the same layout, read in place)",
      who(recipe.roles[role]), seen(view.layout->roles[role]), view.data[role],
      who(recipe.roles[other]), seen(view.layout->roles[other]), view.data[other]);
}

// --- workspace_overlap ------------------------------------------------------------------

namespace {
// The workspace bytes this call's kernel reads and writes, as a layout of bytes.
Layout workspace_bytes_layout(std::uint64_t bytes) noexcept {
  const auto n = static_cast<std::int64_t>(bytes);
  return {{1, 1, n}, {n, n, 1}};
}
}  // namespace

int workspace_overlap_violation(const Recipe& recipe, const CallView& view) noexcept {
  const std::uint64_t needed =
      used_workspace_bytes(view.layout->workspace, view.workspace, view.workspace_bytes);
  if (needed == 0 || view.workspace == nullptr || needed > view.workspace_bytes ||
      needed > static_cast<std::uint64_t>(kMaxExactReach)) {
    return -1;  // none is used, or the workspace rule refused it
  }
  const Layout ws = workspace_bytes_layout(needed);
  const ByteRange rws = range_of(view.workspace, {0, static_cast<std::int64_t>(needed)}, 0);
  return first_role(view, [&](int i) {
    if (view.data[i] == nullptr) return false;
    if (!ranges_meet(rws, range_of(view.data[i], view.layout->reach[i], i))) return false;
    return share_bytes(8, ws, address(view.workspace), bits_of(recipe.roles[i].data_type),
                       view.layout->roles[i].given, address(view.data[i]));
  });
}

std::string workspace_overlap_explain(const Recipe& recipe, const CallView& view, int role) {
  return fmt::format(
      "workspace_overlap: {}: {} at {} shares memory with the workspace's {} bytes at {}; "
      "legal: a workspace that shares no byte with any buffer of the call",
      who(recipe.roles[role]), seen(view.layout->roles[role]), view.data[role],
      used_workspace_bytes(view.layout->workspace, view.workspace, view.workspace_bytes),
      view.workspace);
}

// --- output_aliasing --------------------------------------------------------------------

int output_aliasing_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return recipe.roles[i].written && !view.layout->roles[i].given.is_injective();
  });
}

std::string output_aliasing_explain(const Recipe& recipe, const CallView& view, int role) {
  const Layout& given = view.layout->roles[role].given;
  const int axis = given.overlapping_axis();
  // A negative stride reaches no element twice by itself, but outputs take none.
  const std::string what =
      axis >= 0 && given.stride[axis] < 0
          ? fmt::format("has the negative stride {} on axis {}", given.stride[axis], axis)
          : std::string("reaches one element from two index tuples");
  return fmt::format(
      "output_aliasing: {}: layout {} {}; legal: non-negative strides, each axis's clearing "
      "the span of the axes below it",
      who(recipe.roles[role]), seen(view.layout->roles[role]), what);
}

// --- workspace --------------------------------------------------------------------------

int workspace_violation(const Recipe&, const CallView& view) noexcept {
  const WorkspaceLayout& needed = view.layout->workspace;
  if (needed.required_bytes == 0) return -1;  // a split K's part is optional
  const bool fits =
      view.workspace != nullptr && view.workspace_bytes >= needed.required_bytes &&
      reinterpret_cast<std::uintptr_t>(view.workspace) % kWorkspaceAlignmentBytes == 0;
  // A larger group would carry its count into the counter's epoch (kernels/epoch_counter.cuh).
  const bool groups_fit =
      needed.largest_group_ctas <= static_cast<std::uint64_t>(kernels::kCounterMaxGroup);
  return fits && groups_fit ? -1 : 0;
}

std::string workspace_explain(const Recipe& recipe, const CallView& view, int) {
  const WorkspaceLayout& needed = view.layout->workspace;
  if (recipe.engine_workspace_bytes > 0) {  // an unfused engine's: no taps, no split
    return fmt::format(
        "workspace: workspace of {} bytes at {}; needed: {} bytes, where the fallback engine "
        "keeps the graph's intermediate values; legal: at least {} bytes "
        "(Plan::workspace_bytes(pack) gives it), {}-byte aligned",
        view.workspace_bytes, view.workspace, needed.required_bytes, needed.required_bytes,
        kWorkspaceAlignmentBytes);
  }
  std::string taps;
  for (int t = 0; t < needed.tap_count; ++t) {
    const auto& tap = needed.taps[t];
    taps += fmt::format("{}'{}' {} group(s) of {} unit(s)", t == 0 ? "" : ", ",
                        recipe.roles[tap.role].name, tap.groups, tap.group_ctas);
  }
  const std::string split =
      needed.bytes > needed.required_bytes
          ? fmt::format(
                " (Plan::workspace_bytes(pack) gives {}: with {} more the call splits K "
                "{} ways)",
                needed.bytes, needed.bytes - needed.required_bytes, needed.split.splits)
          : std::string(" (Plan::workspace_bytes(pack) gives it)");
  return fmt::format(
      "workspace: workspace of {} bytes at {} for a call of {} (taps: {}); needed: {} bytes; "
      "legal: at least {} bytes{}, {}-byte aligned, with at most {} epilogue units (consumer "
      "warpgroup tiles) per tap reduction group",
      view.workspace_bytes, view.workspace, problem_str(view.layout->problem), taps,
      needed.required_bytes, needed.required_bytes, split, kWorkspaceAlignmentBytes,
      kernels::kCounterMaxGroup);
}

}  // namespace fusedgemm::recipe::call_rules
