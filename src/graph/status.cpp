#include "fusedgemm/status.h"

namespace fusedgemm {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidGraph: return "invalid_graph";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kDeclined: return "declined";
    case ErrorCode::kIllegalCall: return "illegal_call";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kDriver: return "driver";
    case ErrorCode::kCompile: return "compile";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

}  // namespace fusedgemm
