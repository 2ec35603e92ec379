// fusedgemm.Graph and fusedgemm.Tensor: the C++ builder (include/fusedgemm/graph.h) with
// keyword arguments for the attribute setters, and the graph's JSON form.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bindings.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/graph_print.h"
#include "graph/checked_math.h"

namespace fusedgemm::python {

namespace {

using Dims = std::vector<std::int64_t>;
using BlockSize = std::tuple<std::int64_t, std::int64_t>;

PointwiseMode parse_pointwise_mode(const std::string& name) {
  if (auto mode = pointwise_mode_from_string(name)) return *mode;
  std::string legal;
  for (PointwiseMode m : all_pointwise_modes()) {
    legal += legal.empty() ? "" : ", ";
    legal += to_string(m);
  }
  throw nb::value_error(("unknown pointwise mode '" + name + "'; legal: " + legal).c_str());
}

ReductionMode parse_reduction_mode(const std::string& name) {
  if (auto mode = reduction_mode_from_string(name)) return *mode;
  std::string legal;
  for (ReductionMode m : all_reduction_modes()) {
    legal += legal.empty() ? "" : ", ";
    legal += to_string(m);
  }
  throw nb::value_error(("unknown reduction mode '" + name + "'; legal: " + legal).c_str());
}

// A pointwise attribute as fp32, refused past fp32's range as graph JSON refuses it.
std::optional<float> fp32_attribute(std::optional<double> value, const char* name) {
  if (!value) return std::nullopt;
  const std::optional<float> fp32 = checked::fp32(*value);
  if (!fp32) {
    throw nb::value_error((std::string("pointwise: ") + name + " " +
                           nb::cast<std::string>(nb::repr(nb::float_(*value))) +
                           " is out of fp32 range; legal: a number within fp32 range, or inf, "
                           "-inf, nan")
                              .c_str());
  }
  return fp32;
}

std::optional<std::string> data_type_name(const TensorAttributes& t) {
  if (t.data_type() == DataType::kNotSet) return std::nullopt;
  return std::string(to_string(t.data_type()));
}

std::string tensor_repr(const TensorAttributes& t) {
  std::string s = "Tensor('" + t.name() + "'";
  if (t.uid()) s += ", uid=" + std::to_string(*t.uid());
  if (!t.dims().empty()) {
    s += ", dims=[";
    for (std::size_t i = 0; i < t.dims().size(); ++i) {
      s += (i ? ", " : "") + std::to_string(t.dims()[i]);
    }
    s += "]";
  }
  if (auto type = data_type_name(t)) s += ", data_type='" + *type + "'";
  if (t.is_output()) s += ", output=True";
  return s + ")";
}

Tensor find(const Graph& graph, const std::variant<std::int64_t, std::string>& key) {
  if (const auto* uid = std::get_if<std::int64_t>(&key)) {
    return value_or_raise(graph.find_tensor(*uid));
  }
  return value_or_raise(graph.find_tensor(std::get<std::string>(key)));
}

}  // namespace

void bind_graph(nb::module_& m) {
  nb::class_<TensorAttributes>(
      m, "Tensor",
      "A tensor of a graph: dims, strides (in elements), data type, uid and name. Ops take "
      "tensors and return their output tensor; setters return the tensor, so they chain.")
      .def_prop_rw(
          "name", [](const TensorAttributes& t) { return t.name(); },
          [](TensorAttributes& t, std::string name) { t.set_name(std::move(name)); },
          "The tensor's name; validate() names unnamed tensors '<node>::<port>'.")
      .def_prop_rw(
          "uid", [](const TensorAttributes& t) { return t.uid(); },
          [](TensorAttributes& t, std::int64_t uid) { t.set_uid(uid); },
          "The tensor's uid, or None until validate() assigns one.")
      .def_prop_rw(
          "dims", [](const TensorAttributes& t) { return t.dims(); },
          [](TensorAttributes& t, Dims dims) { t.set_dim(std::move(dims)); },
          "Extents [batch, rows, columns]; inferred by validate() when not declared.")
      .def_prop_rw(
          "strides", [](const TensorAttributes& t) { return t.strides(); },
          [](TensorAttributes& t, Dims strides) { t.set_stride(std::move(strides)); },
          "Strides in elements, one per dim; inferred by validate() when not declared.")
      .def_prop_rw(
          "data_type", [](const TensorAttributes& t) { return data_type_name(t); },
          [](TensorAttributes& t, const std::string& type) {
            t.set_data_type(parse_data_type(type));
          },
          "The element type ('fp32', 'bf16', 'fp8_e4m3', ...), or None when not set.")
      .def_prop_rw(
          "output", [](const TensorAttributes& t) { return t.is_output(); },
          [](TensorAttributes& t, bool output) { t.set_output(output); },
          "True when the tensor is stored to memory; other computed tensors stay in the kernel.")
      .def(
          "set_name",
          [](TensorAttributes& t, std::string name) -> TensorAttributes& {
            return t.set_name(std::move(name));
          },
          "name"_a, nb::rv_policy::reference, "Sets the name; returns the tensor.")
      .def(
          "set_uid",
          [](TensorAttributes& t, std::int64_t uid) -> TensorAttributes& { return t.set_uid(uid); },
          "uid"_a, nb::rv_policy::reference, "Sets the uid; returns the tensor.")
      .def(
          "set_dim",
          [](TensorAttributes& t, Dims dims) -> TensorAttributes& {
            return t.set_dim(std::move(dims));
          },
          "dims"_a, nb::rv_policy::reference, "Sets the dims; returns the tensor.")
      .def(
          "set_stride",
          [](TensorAttributes& t, Dims strides) -> TensorAttributes& {
            return t.set_stride(std::move(strides));
          },
          "strides"_a, nb::rv_policy::reference, "Sets the strides; returns the tensor.")
      .def(
          "set_data_type",
          [](TensorAttributes& t, const std::string& type) -> TensorAttributes& {
            return t.set_data_type(parse_data_type(type));
          },
          "data_type"_a, nb::rv_policy::reference, "Sets the data type; returns the tensor.")
      .def(
          "set_output",
          [](TensorAttributes& t, bool output) -> TensorAttributes& {
            return t.set_output(output);
          },
          "output"_a = true, nb::rv_policy::reference,
          "Marks the tensor an output (or not); returns the tensor.")
      .def("__repr__", &tensor_repr);

  nb::class_<Graph>(m, "Graph",
                    "A GEMM graph: tensors plus matmul, pointwise, reduction and block-scale "
                    "nodes. Nothing is checked until validate() (build() validates).")
      .def(
          "__init__",
          [](Graph* g, std::string name) {
            new (g) Graph();
            g->set_name(std::move(name));
          },
          "name"_a = "", "An empty graph called `name`.")
      .def_prop_rw(
          "name", [](const Graph& g) { return g.name(); },
          [](Graph& g, std::string name) { g.set_name(std::move(name)); }, "The graph's name.")
      .def(
          "tensor",
          [](Graph& g, std::optional<std::string> name, std::optional<Dims> dims,
             std::optional<Dims> strides, std::optional<std::string> data_type,
             std::optional<std::int64_t> uid, bool output) {
            TensorAttributes a;
            if (name) a.set_name(std::move(*name));
            if (dims) a.set_dim(std::move(*dims));
            if (strides) a.set_stride(std::move(*strides));
            if (data_type) a.set_data_type(parse_data_type(*data_type));
            if (uid) a.set_uid(*uid);
            a.set_output(output);
            return g.tensor(a);
          },
          "name"_a = nb::none(), "dims"_a = nb::none(), "strides"_a = nb::none(),
          "data_type"_a = nb::none(), "uid"_a = nb::none(), "output"_a = false,
          "A tensor the caller provides (an operand, an aux input, a scale). Every tensor is "
          "rank 3: A [b, M, K], B [b, K, N], aux [1|b, 1|M, 1|N].")
      .def(
          "matmul",
          [](Graph& g, const Tensor& a, const Tensor& b, std::string name) {
            return g.matmul(a, b, MatmulAttributes().set_name(std::move(name)));
          },
          "a"_a, "b"_a, nb::kw_only(), "name"_a = "",
          "The product a @ b ([b, M, K] x [b, K, N] -> [b, M, N]), accumulated in fp32.")
      .def(
          "pointwise",
          [](Graph& g, const Tensor& in0, const std::optional<Tensor>& in1,
             const std::optional<Tensor>& in2, const std::string& mode, std::string name,
             std::optional<double> relu_lower_clip_slope, std::optional<double> relu_lower_clip,
             std::optional<double> relu_upper_clip, std::optional<double> swish_beta) {
            PointwiseAttributes a;
            a.set_mode(parse_pointwise_mode(mode)).set_name(std::move(name));
            a.relu_lower_clip_slope =
                fp32_attribute(relu_lower_clip_slope, "relu_lower_clip_slope");
            a.relu_lower_clip = fp32_attribute(relu_lower_clip, "relu_lower_clip");
            a.relu_upper_clip = fp32_attribute(relu_upper_clip, "relu_upper_clip");
            a.swish_beta = fp32_attribute(swish_beta, "swish_beta");
            if (in2) return g.pointwise(in0, in1.value_or(nullptr), *in2, a);
            if (in1) return g.pointwise(in0, *in1, a);
            return g.pointwise(in0, a);
          },
          "in0"_a, "in1"_a = nb::none(), "in2"_a = nb::none(), nb::kw_only(), "mode"_a,
          "name"_a = "", "relu_lower_clip_slope"_a = nb::none(), "relu_lower_clip"_a = nb::none(),
          "relu_upper_clip"_a = nb::none(), "swish_beta"_a = nb::none(),
          "A pointwise op on fp32 values: unary (relu, gelu_erf, gelu_tanh, silu, sigmoid, tanh, "
          "exp, log, abs, neg, sqrt, rsqrt, reciprocal, square, identity), binary (add, sub, "
          "mul, div, max, min, pow, cmp_*) or ternary (select: in2 != 0 ? in0 : in1).")
      .def(
          "reduction",
          [](Graph& g, const Tensor& in, const std::string& mode, std::optional<Dims> dims,
             std::string name) {
            Tensor out = g.reduction(
                in, ReductionAttributes().set_mode(parse_reduction_mode(mode)).set_name(name));
            if (dims) out->set_dim(std::move(*dims));
            return out;
          },
          "x"_a, nb::kw_only(), "mode"_a, "dims"_a = nb::none(), "name"_a = "",
          "A reduction tap (add, max, min, amax, avg, mul, norm1, norm2) over the axes where "
          "`dims` has extent 1: [b, M, 1] reduces N, [b, 1, N] reduces M, [1, 1, 1] all.")
      .def(
          "block_scale_dequantize",
          [](Graph& g, const Tensor& x, const Tensor& scale, BlockSize block, std::string name) {
            return g.block_scale_dequantize(
                x, scale,
                BlockScaleDequantizeAttributes()
                    .set_block_size(std::get<0>(block), std::get<1>(block))
                    .set_name(std::move(name)));
          },
          "x"_a, "scale"_a, nb::kw_only(), "block_size"_a = BlockSize{1, 128}, "name"_a = "",
          "x * scale per block of block_size (rows, cols): (1, 128) for activations, "
          "(128, 128) for weights.")
      .def(
          "block_scale_quantize",
          [](Graph& g, const Tensor& x, BlockSize block, std::string name) {
            auto [y, scale] = g.block_scale_quantize(
                x, BlockScaleQuantizeAttributes()
                       .set_block_size(std::get<0>(block), std::get<1>(block))
                       .set_name(std::move(name)));
            return std::make_tuple(y, scale);
          },
          "x"_a, nb::kw_only(), "block_size"_a = BlockSize{1, 128}, "name"_a = "",
          "Quantizes x per block: returns (y, scale); set y's data type (fp8 or fp4) and mark "
          "both outputs.")
      .def(
          "validate", [](Graph& g) { check(g.validate(), ErrorDomain::kGraph); },
          "Infers dims, strides and types, names and numbers every tensor; raises GraphError "
          "listing every error with the tensor's name and the numbers.")
      .def_prop_ro("is_validated", &Graph::is_validated,
                   "True after a successful validate() and no builder call since.")
      .def_prop_ro(
          "tensors", [](const Graph& g) { return g.tensors(); },
          "Every tensor of the graph, in creation order.")
      .def_prop_ro(
          "inputs",
          [](const Graph& g) {
            std::vector<Tensor> out;
            for (const Tensor& t : g.tensors()) {
              bool computed = false, consumed = false;
              for (const Node& n : g.nodes()) {
                for (const Tensor& o : n.outputs) computed = computed || o == t;
                for (const Tensor& i : n.inputs) consumed = consumed || i == t;
              }
              if (consumed && !computed) out.push_back(t);
            }
            return out;
          },
          "The tensors the caller provides (consumed by a node, computed by none), in creation "
          "order.")
      .def("find_tensor", &find, "key"_a, "The tensor of a uid or a name; KeyError if none.")
      .def(
          "to_json", [](const Graph& g) { return graph_to_json(g); },
          "The graph as JSON (docs/graph-json.md); graph_from_json reads it back unchanged.")
      .def(
          "save",
          [](const Graph& g, const std::filesystem::path& path) {
            check(save_graph(g, path.string()));
          },
          "path"_a, "Writes to_json() to `path` (a str or os.PathLike).")
      .def("__str__", [](const Graph& g) { return to_string(g); })
      .def("__repr__", [](const Graph& g) {
        return "Graph('" + g.name() + "', " + std::to_string(g.tensors().size()) + " tensors, " +
               std::to_string(g.nodes().size()) + " nodes)";
      });

  m.def(
      "graph_from_json",
      [](const std::string& text) {
        return value_or_raise(graph_from_json(text), ErrorDomain::kGraph);
      },
      "text"_a, "Reads a graph from JSON text; GraphError when it is malformed.");
  m.def(
      "load_graph",
      [](const std::filesystem::path& path) {
        return value_or_raise(load_graph(path.string()), ErrorDomain::kGraph);
      },
      "path"_a,
      "Reads a graph from a JSON file (a str or os.PathLike); OSError when unreadable, "
      "GraphError when malformed.");
}

}  // namespace fusedgemm::python
