// The fusedgemm extension module; the package (python/fusedgemm) re-exports its names.
#include "bindings.h"

NB_MODULE(_fusedgemm, m) {
  m.doc() =
      "fusedgemm: a fused GEMM graph compiled into one Hopper kernel, every call checked "
      "against the plan's rules before anything is written.";
  m.attr("__version__") = FUSEDGEMM_VERSION;
  fusedgemm::python::bind_graph(m);
  fusedgemm::python::bind_plan(m);
  fusedgemm::python::bind_reference(m);
  fusedgemm::python::bind_bench(m);
}
