// The fusion program: what analyze() makes of a valid graph, and what the kernel generator,
// the recipe and the host device consume. It knows tensors only as buffers (uid, name,
// declared layout, data type); the graph builder stays behind this line.
//
// Mainloop: the GEMMs of one problem shape, their operands (deduplicated by identity, so
// matmul(A, A) is one buffer in two roles) with role, major and block scaling.
// Epilogue: a DAG in topological order over the accumulators, aux loads and pointwise ops;
// then the stores: dense outputs, reduction taps and block-quantized outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/layout.h"
#include "fusedgemm/ops.h"
#include "fusedgemm/role.h"

namespace fusedgemm::fusion {

struct ProblemShape {
  std::int64_t batch = 1;
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  bool operator==(const ProblemShape&) const = default;
};

// Which problem axis is contiguous in memory. A: kK or kM; B: kK or kN; outputs: kN or kM.
enum class Major : std::uint8_t { kK, kM, kN };
std::string_view to_string(Major major);

// How an aux input covers the [batch, M, N] problem, from its declared dims.
enum class Broadcast : std::uint8_t {
  kScalar,  // [*, 1, 1]
  kRow,     // [*, M, 1]: one value per row
  kColumn,  // [*, 1, N]: one value per column
  kFull,    // [*, M, N]
};
std::string_view to_string(Broadcast broadcast);

// A tensor the caller binds at execute: an operand, aux, scale, output or tap.
struct Buffer {
  std::int64_t uid = 0;
  std::string name;
  DataType data_type = DataType::kNotSet;
  Layout layout;  // as declared in the graph
};

struct BlockScale {
  int scale_buffer = -1;
  DataType scale_type = DataType::kFloat32;
  std::int64_t block_rows = 1;  // in the operand's declared [batch, rows, columns] axes
  std::int64_t block_cols = 128;
};

// One (buffer, role) pair the mainloop reads.
struct Operand {
  int buffer = -1;
  Role role = Role::kA;  // kA or kB
  Major major = Major::kK;
  bool batch_broadcast = false;  // batch 1 while the problem's batch is larger
  std::optional<BlockScale> block_scale;
};

struct Gemm {
  std::string name;
  int a = -1;  // index into operands
  int b = -1;
};

struct AuxLoad {
  int buffer = -1;
  Broadcast broadcast = Broadcast::kFull;
  bool batch_broadcast = false;
};

enum class EpilogueOp : std::uint8_t { kAccumulator, kAuxLoad, kPointwise };

// One value of the epilogue DAG, computed in fp32.
struct EpilogueNode {
  std::string name;  // the tensor this value is
  EpilogueOp op = EpilogueOp::kPointwise;
  int gemm = -1;                  // kAccumulator
  int aux = -1;                   // kAuxLoad
  PointwiseAttributes pointwise;  // kPointwise
  std::vector<int> inputs;        // indices of earlier epilogue nodes
  // A declared data type other than fp32 rounds the running value here.
  DataType round_to = DataType::kFloat32;
};

struct DenseOutput {
  int buffer = -1;
  int value = -1;  // epilogue node stored
  Major major = Major::kN;
};

struct Tap {
  int buffer = -1;
  int value = -1;
  ReductionMode mode = ReductionMode::kAdd;
  bool reduce_batch = false;
  bool reduce_m = false;
  bool reduce_n = false;
};

// A block-scaled quantized output: values plus one scale per block, written by the epilogue.
struct QuantizedOutput {
  int buffer = -1;        // the quantized values
  int scale_buffer = -1;  // the block scales
  int value = -1;
  std::int64_t block_rows = 1;
  std::int64_t block_cols = 128;
  Major major = Major::kN;
};

struct FusionProgram {
  std::string graph_name;
  ProblemShape problem;
  std::vector<Buffer> buffers;
  std::vector<Operand> operands;
  std::vector<Gemm> gemms;
  std::vector<AuxLoad> aux;
  std::vector<EpilogueNode> epilogue;
  std::vector<DenseOutput> outputs;
  std::vector<Tap> taps;
  std::vector<QuantizedOutput> quantized_outputs;

  // The role each buffer plays first: A or B for operands, aux, scale, output, tap.
  Role role_of(int buffer) const;
};

}  // namespace fusedgemm::fusion
