// Status -> Python exception. The classes live in fusedgemm/_errors.py, imported only when
// an error is raised, so the extension keeps no state of its own.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"

namespace fusedgemm::python {

namespace {

bool is_rule_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Diagnostic parse_diagnostic(std::string_view message) {
  Diagnostic d;
  const std::size_t colon = message.find(':');
  if (colon == std::string_view::npos || colon == 0) return d;
  for (std::size_t i = 0; i < colon; ++i) {
    if (!is_rule_char(message[i])) return d;
  }
  d.rule = std::string(message.substr(0, colon));
  constexpr std::string_view kRole = ": role ";
  if (message.substr(colon, kRole.size()) != kRole) return d;
  const std::size_t role_begin = colon + kRole.size();
  const std::size_t role_end = message.find(' ', role_begin);
  if (role_end == std::string_view::npos) return d;
  d.role = std::string(message.substr(role_begin, role_end - role_begin));
  if (role_end + 1 < message.size() && message[role_end + 1] == '\'') {
    const std::size_t close = message.find('\'', role_end + 2);
    if (close != std::string_view::npos) {
      d.tensor = std::string(message.substr(role_end + 2, close - role_end - 2));
    }
  }
  return d;
}

void raise_status(const Status& status, ErrorDomain domain) {
  const Diagnostic d = parse_diagnostic(status.message());
  nb::object make = nb::module_::import_("fusedgemm._errors").attr("from_status");
  nb::object error = make(std::string(to_string(status.code())), status.message(), d.rule, d.role,
                          d.tensor, domain == ErrorDomain::kGraph);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

DataType parse_data_type(std::string_view name) {
  if (auto t = data_type_from_string(name); t && *t != DataType::kNotSet) return *t;
  std::string legal;
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                     DataType::kFp8E4M3, DataType::kFp8E5M2, DataType::kFp4E2M1, DataType::kE8M0,
                     DataType::kInt8, DataType::kInt32}) {
    legal += legal.empty() ? "" : ", ";
    legal += to_string(t);
  }
  throw nb::value_error(("unknown data type '" + std::string(name) + "'; legal: " + legal).c_str());
}

}  // namespace fusedgemm::python
