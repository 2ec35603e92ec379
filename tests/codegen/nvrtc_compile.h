// Compiles a generated kernel for sm_90a with NVRTC, as the JIT will, and reads ptxas's
// resource report (-Xptxas=-v) from the log. Test-only: the library's JIT layer (src/jit)
// owns the real compile and its cache.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"

#if FUSEDGEMM_TEST_NVRTC
#include <nvrtc.h>
#endif

namespace fusedgemm_test {

struct PtxasReport {
  bool compiled = false;
  std::string log;
  int registers = -1;
  int stack_frame_bytes = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  bool wgmma_serialized = false;  // a ptxas C75xx warning: wgmma or setmaxnreg lost
};

// nullopt when this build has no NVRTC (FUSEDGEMM_TEST_NVRTC is 0).
#if FUSEDGEMM_TEST_NVRTC

namespace detail {

inline int match_int(const std::string& log, const std::regex& re) {
  std::smatch m;
  return std::regex_search(log, m, re) ? std::stoi(m[1].str()) : -1;
}

}  // namespace detail

inline std::optional<PtxasReport> compile_sm90a(const fusedgemm::codegen::KernelSource& source) {
  std::vector<std::string> names;
  std::vector<std::string> contents;
  for (const auto& h : source.headers) {
    names.emplace_back(h.name);
    contents.emplace_back(h.contents);
  }
  std::vector<const char*> name_ptrs;
  std::vector<const char*> content_ptrs;
  for (std::size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    content_ptrs.push_back(contents[i].c_str());
  }
  PtxasReport report;
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, source.source.c_str(), source.program_name.c_str(),
                         static_cast<int>(names.size()), content_ptrs.data(),
                         name_ptrs.data()) != NVRTC_SUCCESS) {
    report.log = "nvrtcCreateProgram failed";
    return report;
  }
  const char* options[] = {"-arch=sm_90a", "-std=c++17", "-Xptxas=-v"};
  const nvrtcResult result = nvrtcCompileProgram(program, 3, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  report.log.resize(log_size);
  if (log_size > 0) nvrtcGetProgramLog(program, report.log.data());
  nvrtcDestroyProgram(&program);
  report.compiled = result == NVRTC_SUCCESS;
  report.registers = detail::match_int(report.log, std::regex(R"(Used (\d+) registers)"));
  report.stack_frame_bytes =
      detail::match_int(report.log, std::regex(R"((\d+) bytes stack frame)"));
  report.spill_store_bytes =
      detail::match_int(report.log, std::regex(R"((\d+) bytes spill stores)"));
  report.spill_load_bytes = detail::match_int(report.log, std::regex(R"((\d+) bytes spill loads)"));
  // Any C75xx warning: wgmma serialized (C7510, C7515, C7520), setmaxnreg ignored (C7508).
  report.wgmma_serialized = report.log.find("Potential Performance Loss") != std::string::npos;
  return report;
}

#else

inline std::optional<PtxasReport> compile_sm90a(const fusedgemm::codegen::KernelSource&) {
  return std::nullopt;
}

#endif

}  // namespace fusedgemm_test
