// The hand-written device headers (src/kernels/**/*.cuh and *.h), compiled into the library
// at build time (cmake/embed_kernel_headers.cmake), so NVRTC gets exactly the headers the
// library was built with and nothing reads src/ at run time.
#pragma once

#include <span>
#include <string_view>

namespace fusedgemm::codegen {

struct EmbeddedHeader {
  std::string_view name;      // the include name, relative to src/: "kernels/gemm_sm90.cuh"
  std::string_view contents;  // the file's bytes
};

// Every embedded header, sorted by name.
std::span<const EmbeddedHeader> embedded_kernel_headers();

}  // namespace fusedgemm::codegen
