#include "support/call_oracle.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace fusedgemm::test {
namespace {

constexpr std::int64_t kTmaMaxDim = std::int64_t{1} << 32;
constexpr std::int64_t kTmaMaxStrideBytes = (std::int64_t{1} << 40) - 1;
// TMA coordinates are signed 32-bit and a tile is at most 256 wide: below this every tile
// shape fits, far past it none does (the fuzzer draws nothing between).
constexpr std::int64_t kMaxProblemExtent = (std::int64_t{1} << 31) - 512;
// Past this many elements a view is not enumerated: such a call is refused by a limit above.
constexpr std::int64_t kMaxEnumerated = std::int64_t{1} << 22;

int width_bits(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kInt32: return 32;
    case DataType::kBFloat16:
    case DataType::kFloat16: return 16;
    default: return 8;
  }
}

// The view as a rank-3 layout in the order the caller wrote it: a bare address is the
// declaration; a shorter aux view pads leading axes packed.
bool given_layout(const OracleTensor& t, Layout& out, std::string& why) {
  if (!t.given.is_view) {
    out = t.declared;
    return true;
  }
  const auto rank = static_cast<int>(t.given.shape.size());
  const int min_rank = t.kind == OracleKind::kAux ? 1 : 3;
  if (rank < min_rank || rank > 3 || t.given.stride.size() != t.given.shape.size()) {
    why = fmt::format("'{}' has a view of rank {}", t.name, rank);
    return false;
  }
  out = Layout{};
  const int pad = 3 - rank;
  for (int i = 0; i < rank; ++i) {
    out.shape[pad + i] = t.given.shape[i];
    out.stride[pad + i] = t.given.stride[i];
  }
  for (int i = pad - 1; i >= 0; --i) out.stride[i] = out.stride[i + 1] * out.shape[i + 1];
  return true;
}

// DESIGN.md 7.4: walking the axes by increasing stride, each axis of extent > 1 clears the
// span of the axes before it.
bool clears(const Layout& l) {
  std::array<int, 3> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return l.stride[a] < l.stride[b]; });
  std::int64_t covered = 1;
  for (int axis : order) {
    if (l.shape[axis] <= 1) continue;
    if (l.stride[axis] < covered) return false;
    covered += (l.shape[axis] - 1) * l.stride[axis];
  }
  return true;
}

bool intersect(const std::vector<std::uintptr_t>& a, const std::vector<std::uintptr_t>& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return true;
    (a[i] < b[j] ? i : j)++;
  }
  return false;
}

}  // namespace

std::vector<std::uintptr_t> bytes_reached(const void* base, DataType type, const Layout& l) {
  std::vector<std::uintptr_t> out;
  const std::int64_t w = width_bits(type) / 8;
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  for (std::int64_t i0 = 0; i0 < l.shape[0]; ++i0) {
    for (std::int64_t i1 = 0; i1 < l.shape[1]; ++i1) {
      for (std::int64_t i2 = 0; i2 < l.shape[2]; ++i2) {
        const std::int64_t off = i0 * l.stride[0] + i1 * l.stride[1] + i2 * l.stride[2];
        for (std::int64_t j = 0; j < w; ++j) {
          out.push_back(b + static_cast<std::uintptr_t>(off * w + j));
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

OracleVerdict judge(const OracleCall& call) {
  OracleVerdict v;
  const auto fail = [&](std::string why) {
    v.legal = false;
    v.why = std::move(why);
    return v;
  };
  const auto& ts = call.tensors;
  v.logical.resize(ts.size());
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].given.data == nullptr) return fail(fmt::format("'{}' has no buffer", ts[i].name));
    if (ts[i].given.data_type != DataType::kNotSet && ts[i].given.data_type != ts[i].type) {
      return fail(fmt::format("'{}' view of another data type", ts[i].name));
    }
    if (!given_layout(ts[i], v.logical[i], v.why)) return v;
  }
  // The problem: M and K from A; N from B, read in kernel order (b, N, K) when its view puts
  // K last and not first (DESIGN.md 7.2; the declaration wins where both fit).
  // The first A and the first B fix the problem; the batch is the largest operand batch.
  int a = -1, b = -1;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].kind == OracleKind::kA && a < 0) a = static_cast<int>(i);
    if (ts[i].kind == OracleKind::kB && b < 0) b = static_cast<int>(i);
  }
  v.m = v.logical[a].shape[1];
  v.k = v.logical[a].shape[2];
  v.batch = 1;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    Layout& l = v.logical[i];
    if (ts[i].kind == OracleKind::kB) {
      const bool declared = !ts[i].given.is_view || l == ts[i].declared;
      if (!declared && l.shape[2] == v.k && l.shape[1] != v.k) {
        std::swap(l.shape[1], l.shape[2]);
        std::swap(l.stride[1], l.stride[2]);
      }
    }
    if (ts[i].kind == OracleKind::kA || ts[i].kind == OracleKind::kB) {
      v.batch = std::max(v.batch, l.shape[0]);
    }
  }
  v.n = v.logical[b].shape[2];

  for (std::size_t i = 0; i < ts.size(); ++i) {
    const OracleTensor& t = ts[i];
    const Layout& l = v.logical[i];
    const auto& d = t.declared.shape;
    // Extents, per axis (batch after).
    std::array<std::int64_t, 3> want{};
    switch (t.kind) {
      case OracleKind::kA: want = {0, v.m, v.k}; break;
      case OracleKind::kB: want = {0, v.k, v.n}; break;
      case OracleKind::kAux: want = {0, d[1] == 1 ? 1 : v.m, d[2] == 1 ? 1 : v.n}; break;
      case OracleKind::kOutput: want = {0, v.m, v.n}; break;
      case OracleKind::kTap: want = {0, d[1] == 1 ? 1 : v.m, d[2] == 1 ? 1 : v.n}; break;
    }
    for (int axis = 1; axis < 3; ++axis) {
      if (l.shape[axis] < 1 || l.shape[axis] != want[axis]) {
        return fail(fmt::format("'{}' axis {} extent {}, want {}", t.name, axis, l.shape[axis],
                                want[axis]));
      }
    }
    // Batch: outputs are written per batch; a tap declared over batch 1 reduces it; other
    // roles broadcast where declared 1, or anywhere in a plan declared at batch 1.
    const std::int64_t got_b = l.shape[0];
    bool batch_ok = false;
    if (t.kind == OracleKind::kOutput) {
      batch_ok = got_b == v.batch;
    } else if (t.kind == OracleKind::kTap && d[0] == 1) {
      batch_ok = got_b == 1;
    } else if (call.declared_batch == 1) {
      batch_ok = got_b == 1 || got_b == v.batch;
    } else {
      batch_ok = got_b == (d[0] == 1 ? 1 : v.batch);
    }
    if (!batch_ok) return fail(fmt::format("'{}' batch {}", t.name, got_b));
  }
  if (v.m > kMaxProblemExtent || v.n > kMaxProblemExtent || v.batch > kMaxProblemExtent) {
    return fail("problem past the grid's coordinates");
  }

  for (std::size_t i = 0; i < ts.size(); ++i) {
    const OracleTensor& t = ts[i];
    const Layout& l = v.logical[i];
    const auto addr = reinterpret_cast<std::uintptr_t>(t.given.data);
    const bool operand = t.kind == OracleKind::kA || t.kind == OracleKind::kB;
    const int w = width_bits(t.type) / 8;
    const std::uintptr_t align = operand || t.kind == OracleKind::kOutput ? 16
                                 : t.kind == OracleKind::kTap             ? 4
                                                                          : w;
    if (addr % align != 0) return fail(fmt::format("'{}' base misaligned", t.name));
    if (t.unit_axis >= 0 && l.shape[t.unit_axis] > 1 && l.stride[t.unit_axis] != 1) {
      return fail(fmt::format("'{}' no unit stride on its major axis", t.name));
    }
    if (operand) {
      // A TMA descriptor: 16-byte contiguous extent, non-unit strides positive multiples of
      // 16 bytes (a batch of stride 0 is read as batch 1), dims <= 2^32, strides < 2^40 B.
      if (l.shape[t.unit_axis] % (16 / w) != 0) {
        return fail(fmt::format("'{}' contiguous extent", t.name));
      }
      for (int axis = 0; axis < 3; ++axis) {
        if (l.shape[axis] > kTmaMaxDim) return fail(fmt::format("'{}' TMA dim", t.name));
        if (axis == t.unit_axis || l.shape[axis] <= 1) continue;
        const std::int64_t s = l.stride[axis];
        if (s < 0 || (s == 0 && axis != 0) || s % (16 / w) != 0) {
          return fail(fmt::format("'{}' stride {} on axis {}", t.name, s, axis));
        }
        if (s > kTmaMaxStrideBytes / w) return fail(fmt::format("'{}' TMA stride", t.name));
      }
    }
    if ((t.kind == OracleKind::kOutput || t.kind == OracleKind::kTap) && !clears(l)) {
      return fail(fmt::format("'{}' written layout reaches an element twice", t.name));
    }
  }

  std::vector<std::vector<std::uintptr_t>> bytes(ts.size());
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Layout& l = v.logical[i];
    if (l.shape[0] * l.shape[1] * l.shape[2] > kMaxEnumerated) return fail("too large to check");
    bytes[i] = bytes_reached(ts[i].given.data, ts[i].type, l);
  }
  for (std::size_t w = 0; w < ts.size(); ++w) {
    if (ts[w].kind != OracleKind::kOutput && ts[w].kind != OracleKind::kTap) continue;
    for (std::size_t r = 0; r < ts.size(); ++r) {
      if (r == w) continue;
      const bool in_place = ts[w].kind == OracleKind::kOutput && ts[r].kind == OracleKind::kAux &&
                            ts[w].given.data == ts[r].given.data && ts[w].type == ts[r].type &&
                            v.logical[w] == v.logical[r];
      if (!in_place && intersect(bytes[w], bytes[r])) {
        return fail(fmt::format("'{}' shares a byte with '{}'", ts[w].name, ts[r].name));
      }
    }
  }
  if (call.workspace_needed > 0) {
    const auto ws = reinterpret_cast<std::uintptr_t>(call.workspace);
    if (call.workspace == nullptr || call.workspace_bytes < call.workspace_needed || ws % 16 != 0) {
      return fail("workspace missing, short or misaligned");
    }
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const auto& bi = bytes[i];
      const auto it = std::lower_bound(bi.begin(), bi.end(), ws);
      if (it != bi.end() && *it < ws + call.workspace_needed) {
        return fail(fmt::format("workspace shares a byte with '{}'", ts[i].name));
      }
    }
  }
  v.legal = true;
  return v;
}

}  // namespace fusedgemm::test
