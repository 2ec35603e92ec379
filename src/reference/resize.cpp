#include "reference/resize.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "fusion/analyze.h"
#include "graph/checked_math.h"

namespace fusedgemm::reference {
namespace {

using fusion::ProblemShape;

// Dense strides in the declared order of strides: the axis with the smallest stride stays
// the fastest, so a K-major operand stays K-major. Empty when a stride or the span would
// not fit in int64.
std::optional<std::vector<std::int64_t>> dense_strides(const Layout& declared, const Dims& dims) {
  std::array<int, kRank> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return declared.stride[a] < declared.stride[b] ||
           (declared.stride[a] == declared.stride[b] && a > b);
  });
  std::vector<std::int64_t> strides(kRank);
  std::int64_t next = 1;
  for (int axis : order) {
    strides[axis] = next;
    const auto span = checked::mul(next, dims[axis]);
    if (!span) return std::nullopt;
    next = *span;
  }
  return strides;
}

// An extent the graph declared as 1 stays 1 (a broadcast or a reduced axis).
std::int64_t keep_one(std::int64_t declared, std::int64_t extent) {
  return declared == 1 ? 1 : extent;
}

}  // namespace

Status resize_graph(Graph& graph, const ProblemOverride& size) {
  FG_ASSIGN_OR_RETURN(fusion::Analysis analysis, fusion::analyze(graph));
  FG_CHECK(!analysis.decline, ErrorCode::kDeclined,
           fmt::format("resize: {}", analysis.decline ? analysis.decline->message : ""));
  const auto& p = analysis.program;
  const ProblemShape want{size.batch.value_or(p.problem.batch), size.m.value_or(p.problem.m),
                          size.n.value_or(p.problem.n), size.k.value_or(p.problem.k)};
  FG_CHECK(want.batch >= 1 && want.m >= 1 && want.n >= 1 && want.k >= 1,
           ErrorCode::kInvalidArgument,
           fmt::format("resize_extent: batch {}, M {}, N {}, K {}; legal: every extent >= 1",
                       want.batch, want.m, want.n, want.k));

  auto redeclare = [&](int buffer, Dims dims, Layout order = {}) -> Status {
    FG_ASSIGN_OR_RETURN(Tensor t, graph.find_tensor(p.buffers[buffer].uid));
    if (order.shape == Dims{1, 1, 1} && order.stride == Dims{1, 1, 1}) {
      order = p.buffers[buffer].layout;
    }
    if (t->uid_assigned()) t->set_uid(p.buffers[buffer].uid);
    const auto strides = dense_strides(order, dims);
    FG_CHECK(strides, ErrorCode::kInvalidArgument,
             fmt::format("resize_span: tensor '{}': dims {} hold more than 2^63 elements; legal: "
                         "a problem whose every tensor's span fits in int64",
                         t->name(), to_string(dims)));
    t->set_dim({dims[0], dims[1], dims[2]});
    t->set_stride(*strides);
    return Status::ok();
  };
  // A stride order with axis 2 (K-major A, N-major B) or axis 1 fastest.
  auto major_order = [](std::optional<bool> axis2_fastest) -> Layout {
    if (!axis2_fastest) return {};
    return *axis2_fastest ? Layout{{2, 2, 2}, {100, 10, 1}} : Layout{{2, 2, 2}, {100, 1, 10}};
  };
  // In a graph of batch 1 nothing marks a broadcast batch, so inputs follow the new batch;
  // in a batched graph a declared batch of 1 stays a broadcast.
  auto batch_of = [&](int buffer) {
    return p.problem.batch == 1 ? want.batch
                                : keep_one(p.buffers[buffer].layout.shape[0], want.batch);
  };

  for (const auto& op : p.operands) {
    const bool a = op.role == Role::kA;
    // A is [b, M, K]: K-major puts axis 2 fastest. B is [b, K, N]: K-major puts axis 1.
    const std::optional<bool> axis2 =
        a ? size.a_k_major
          : (size.b_k_major ? std::optional<bool>(!*size.b_k_major) : std::nullopt);
    FG_TRY(redeclare(
        op.buffer,
        a ? Dims{batch_of(op.buffer), want.m, want.k} : Dims{batch_of(op.buffer), want.k, want.n},
        major_order(axis2)));
    if (op.block_scale) {
      const auto& s = *op.block_scale;
      const std::int64_t rows = a ? want.m : want.k;
      const std::int64_t cols = a ? want.k : want.n;
      FG_TRY(redeclare(s.scale_buffer,
                       {batch_of(s.scale_buffer), ceil_div(rows, s.block_rows),
                        ceil_div(cols, s.block_cols)}));
    }
  }
  for (const auto& aux : p.aux) {
    const auto& d = p.buffers[aux.buffer].layout.shape;
    FG_TRY(redeclare(aux.buffer,
                     {batch_of(aux.buffer), keep_one(d[1], want.m), keep_one(d[2], want.n)}));
  }
  for (const auto& out : p.outputs) FG_TRY(redeclare(out.buffer, {want.batch, want.m, want.n}));
  for (const auto& tap : p.taps) {
    const auto& d = p.buffers[tap.buffer].layout.shape;
    FG_TRY(redeclare(tap.buffer,
                     {keep_one(d[0], want.batch), keep_one(d[1], want.m), keep_one(d[2], want.n)}));
  }
  for (const auto& q : p.quantized_outputs) {
    FG_TRY(redeclare(q.buffer, {want.batch, want.m, want.n}));
    FG_TRY(redeclare(q.scale_buffer, {want.batch, ceil_div(want.m, q.block_rows),
                                      ceil_div(want.n, q.block_cols)}));
  }
  return graph.validate();
}

}  // namespace fusedgemm::reference
