// An independent statement of which calls a fused plan must accept (issue 10), written from
// DESIGN.md sections 3 and 7 and the hardware's limits, sharing no code with src/recipe/: per
// role, the bytes it reads or writes are enumerated from its view, and a call is legal iff
// every view is one the kernel reads as the graph means, written roles share no byte with
// any other role (an aux read in place of a dense output of the same layout excepted), the
// workspace shares no byte with any role, and alignment and hardware limits hold. Slow on
// purpose: plain loops over small shapes.
//
// Scope: the flavors the call fuzzer draws (one matmul of bf16 operands of either major,
// an optional bf16 aux of any broadcast mode, bf16 dense outputs of either major, fp32
// taps). The workspace size is the plan's (Plan::workspace_bytes of the call): it is a plan
// parameter, not a legality statement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedgemm/data_type.h"
#include "fusedgemm/layout.h"
#include "fusedgemm/variant_pack.h"

namespace fusedgemm::test {

enum class OracleKind : std::uint8_t { kA, kB, kAux, kOutput, kTap };

struct OracleTensor {
  std::string name;
  OracleKind kind = OracleKind::kA;
  DataType type = DataType::kNotSet;
  Layout declared;     // declared order
  int unit_axis = -1;  // declared axis of unit stride (operands, outputs), else -1
  BufferView given;    // the call's buffer
};

struct OracleCall {
  std::vector<OracleTensor> tensors;
  std::int64_t declared_batch = 1;  // the plan's
  const void* workspace = nullptr;
  std::uint64_t workspace_bytes = 0;
  std::uint64_t workspace_needed = 0;  // Plan::workspace_bytes for this call
};

struct OracleVerdict {
  bool legal = false;
  std::string why;  // the condition broken, for a repro
  std::int64_t batch = 0, m = 0, n = 0, k = 0;
  // Per tensor, the view in declared axis order (B re-labelled when given in kernel order,
  // short aux views padded), as the kernel must read it.
  std::vector<Layout> logical;
};

OracleVerdict judge(const OracleCall& call);

// The byte addresses of every element of `layout` of `type` at `base`, sorted, unique.
std::vector<std::uintptr_t> bytes_reached(const void* base, DataType type, const Layout& layout);

}  // namespace fusedgemm::test
