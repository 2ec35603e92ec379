// Shared by the binding files of the fusedgemm extension: how a Status becomes a Python
// exception, and the registration function of each file.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>

#include "fusedgemm/data_type.h"
#include "fusedgemm/status.h"

namespace fusedgemm::python {

namespace nb = nanobind;
using namespace nanobind::literals;

// Which exception a kInvalidArgument names: inside graph reading it is a malformed graph.
enum class ErrorDomain { kGeneral, kGraph };

// The parts of a diagnostic "<rule>: role <Role> '<tensor>': ..." (STYLE.md rule 5); each
// empty where the message lacks it.
struct Diagnostic {
  std::string rule;
  std::string role;
  std::string tensor;
};
Diagnostic parse_diagnostic(std::string_view message);

// Raises the Python exception of `status` (fusedgemm._errors maps codes to classes) by
// nanobind's error path: the Python error is set, and nanobind's own python_error unwinds
// to the binding boundary, where it is returned to Python as that error.
[[noreturn]] void raise_status(const Status& status, ErrorDomain domain = ErrorDomain::kGeneral);

template <class T>
T value_or_raise(Result<T> result, ErrorDomain domain = ErrorDomain::kGeneral) {
  if (!result) raise_status(result.status(), domain);
  return std::move(result).value();
}

inline void check(const Status& status, ErrorDomain domain = ErrorDomain::kGeneral) {
  if (!status) raise_status(status, domain);
}

// "bf16" -> DataType::kBFloat16; ValueError listing the spellings for anything else.
DataType parse_data_type(std::string_view name);

void bind_graph(nb::module_& m);
void bind_plan(nb::module_& m);
void bind_reference(nb::module_& m);
void bind_bench(nb::module_& m);

}  // namespace fusedgemm::python
