// The fallback engine's program: a validated graph as an ordered list of unfused steps.
// Every tensor is a value; a value the graph computes lives in the workspace as dense fp32
// in declared [b, rows, cols] order (already rounded to its declared type), a graph input
// is read where the caller's buffer is. Each step computes one node (quantize: two
// values); stores then copy every output into its caller buffer, last, so a call writes
// nothing of the caller's until every computation is done.
//
//   Graph graph = ...;  FG_TRY(graph.validate());
//   FG_ASSIGN_OR_RETURN(fallback::Program program, fallback::plan_program(graph));
//
// Matmul operands are always workspace values (a caller's operand is converted first, by an
// identity step), so one fp32 GEMM (cuBLASLt on CUDA) serves every operand type and major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/layout.h"
#include "fusedgemm/role.h"
#include "fusedgemm/status.h"

namespace fusedgemm::fallback {

struct Value {
  std::string name;
  Dims dims{1, 1, 1};
  DataType type = DataType::kFloat32;  // declared; the type every result rounds to
  int buffer = -1;                     // graph inputs: the caller buffer it is read from
  std::int64_t offset = -1;            // computed values: byte offset in the workspace

  bool in_workspace() const { return buffer < 0; }
  std::int64_t count() const { return dims[0] * dims[1] * dims[2]; }
};

// A caller buffer: a graph input or output, one per tensor.
struct Buffer {
  std::int64_t uid = 0;
  std::string name;
  Role role = Role::kAux;  // A or B for matmul operands, scale for dequantize scales
  DataType type = DataType::kNotSet;
  Layout declared;
  bool written = false;
  int value = -1;
};

enum class StepKind : std::uint8_t {
  kPointwise,   // out = op(in...), inputs broadcast per axis
  kMatmul,      // out = in[0] @ in[1], both workspace values; batch 1 broadcasts
  kReduction,   // out = reduce(in[0]) over the axes where out has extent 1
  kDequantize,  // out = in[0] * in[1][b, r / block_rows, c / block_cols]
  kQuantize,    // out (values), out2 (scales) = block_scale_quantize(in[0])
  kStore,       // caller buffer `buffer` = in[0], encoded to the buffer's type
};

std::string_view to_string(StepKind kind);

struct Step {
  StepKind kind = StepKind::kPointwise;
  std::string node;  // the graph node, for describe()
  std::vector<int> in;
  int out = -1;
  int out2 = -1;    // kQuantize: the scales
  int buffer = -1;  // kStore
  PointwiseAttributes pointwise;
  ReductionMode reduction = ReductionMode::kAdd;
  std::int64_t block_rows = 1;
  std::int64_t block_cols = 1;
};

struct Program {
  std::string graph_name;
  std::vector<Value> values;
  std::vector<Buffer> buffers;  // inputs and outputs, in the graph's tensor order
  std::vector<Step> steps;
  std::int64_t batch = 1;  // the largest batch of any tensor
  std::uint64_t workspace_bytes = 0;
};

// Workspace values start on this boundary (a cuBLASLt operand wants 16 bytes; 256 keeps
// every value on its own cache lines).
inline constexpr std::int64_t kValueAlignment = 256;

// @pre graph is validated.
Result<Program> plan_program(const Graph& graph);

// One line per step, for Plan::describe.
std::string to_string(const Program& program);

}  // namespace fusedgemm::fallback
