// The fp64 reference (src/reference) for the Python tests and users who check a plan's
// outputs: random inputs, the evaluation, and the comparison with its per-type tolerance.
// fusedgemm/reference.py turns the raw bytes here into numpy arrays.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bindings.h"
#include "fusedgemm/graph.h"
#include "reference/compare.h"
#include "reference/graph_reference.h"

namespace fusedgemm::python {

namespace {

using DimList = std::vector<std::int64_t>;

DimList to_list(const Dims& d) {
  return {d.begin(), d.end()};
}

// The tensor `uid` of a validated graph, read from `nbytes` at `address` in its declared
// type and layout (the caller has checked the array matches them).
reference::HostTensor host_tensor(const TensorAttributes& t, std::uintptr_t address,
                                  std::uint64_t nbytes) {
  reference::HostTensor h = value_or_raise(reference::make_host_tensor(t));
  if (nbytes < h.bytes.size()) {
    throw nb::value_error(("tensor '" + t.name() + "': " + std::to_string(nbytes) +
                           " bytes given; its declared layout needs " +
                           std::to_string(h.bytes.size()))
                              .c_str());
  }
  if (!h.bytes.empty())
    std::memcpy(h.bytes.data(), reinterpret_cast<const void*>(address), h.bytes.size());
  return h;
}

void require_validated(const Graph& graph) {
  if (!graph.is_validated()) {
    check(Status(ErrorCode::kInvalidGraph, "reference: validate() the graph first"),
          ErrorDomain::kGraph);
  }
}

nb::bytes values_bytes(std::span<const double> v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

}  // namespace

void bind_reference(nb::module_& m) {
  nb::class_<reference::Comparison>(m, "Comparison", "A stored output against the fp64 reference.")
      .def_ro("relative_error", &reference::Comparison::relative_error,
              "||out - ref|| / ||ref|| over every element.")
      .def_ro("tolerance", &reference::Comparison::tolerance,
              "The largest relative error the output's data type accepts.")
      .def_ro("nonfinite_mismatches", &reference::Comparison::nonfinite_mismatches,
              "Elements where a NaN or an inf of the output and the reference differ.")
      .def_ro("order_dependent", &reference::Comparison::order_dependent,
              "Elements accepted as some fp32 combine order of a mul reduction gives them (inf, "
              "or past fp32's normal range part-way), left out of the relative error.")
      .def_ro("element_count", &reference::Comparison::element_count, "Elements compared.")
      .def_prop_ro("passed", &reference::Comparison::passed,
                   "No non-finite mismatch and the relative error within tolerance.")
      .def("__repr__", &reference::Comparison::summary);

  nb::class_<reference::Evaluation>(m, "_Evaluation", "The fp64 values of every output.")
      .def(
          "values",
          [](const reference::Evaluation& e, std::int64_t uid) {
            return values_bytes(value_or_raise(e.values(uid)));
          },
          "uid"_a, "fp64 bytes of output `uid`, dense [b, rows, cols], before rounding.")
      .def(
          "rounded",
          [](const reference::Evaluation& e, std::int64_t uid) {
            return values_bytes(value_or_raise(e.rounded(uid)));
          },
          "uid"_a, "The same after rounding to the output's data type.")
      .def(
          "compare",
          [](const reference::Evaluation& e, const TensorAttributes& t, std::uintptr_t address,
             std::uint64_t nbytes) {
            if (!t.uid()) throw nb::value_error("compare: the tensor has no uid; validate() first");
            for (const auto& out : e.outputs()) {
              if (out.uid == *t.uid())
                return reference::compare(host_tensor(t, address, nbytes), out);
            }
            throw nb::key_error(("compare: '" + t.name() + "' is not an output").c_str());
          },
          "tensor"_a, "address"_a, "nbytes"_a,
          "Compares what was stored at `address` (the tensor's declared layout) with the "
          "reference.");

  m.def(
      "_reference_random_inputs",
      [](const Graph& graph, std::uint64_t seed) {
        require_validated(graph);
        std::vector<std::tuple<std::int64_t, nb::bytes, DimList, DimList>> out;
        for (auto& [uid, h] : value_or_raise(reference::make_random_inputs(graph, seed))) {
          out.emplace_back(uid,
                           nb::bytes(reinterpret_cast<const char*>(h.bytes.data()), h.bytes.size()),
                           to_list(h.layout.shape), to_list(h.layout.stride));
        }
        return out;
      },
      "graph"_a, "seed"_a,
      "Random stored bytes for every graph input (uid, bytes, dims, strides), never all zeros.");
  m.def(
      "_reference_evaluate",
      [](const Graph& graph,
         const std::vector<std::tuple<std::int64_t, std::uintptr_t, std::uint64_t>>& inputs) {
        require_validated(graph);
        reference::HostTensors tensors;
        for (const auto& [uid, address, nbytes] : inputs) {
          const Tensor t = value_or_raise(graph.find_tensor(uid));
          tensors.emplace(uid, host_tensor(*t, address, nbytes));
        }
        reference::Evaluation e = value_or_raise(reference::evaluate(graph, tensors));
        return e;
      },
      "graph"_a, "inputs"_a, "Evaluates the graph in fp64 on (uid, address, nbytes) inputs.");
  m.def(
      "relative_tolerance",
      [](const std::string& type) { return reference::relative_tolerance(parse_data_type(type)); },
      "data_type"_a, "The largest relative error accepted for an output of `data_type`.");
}

}  // namespace fusedgemm::python
