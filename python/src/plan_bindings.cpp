// fusedgemm.build, Plan, BoundPack, Verdict and Context. Arrays become buffer views in
// fusedgemm/_arrays.py (numpy, DLPack, __cuda_array_interface__, PyTorch); everything after
// that — binding, the rule table, the launch — is the C++ execute path, called with the GIL
// released. A bound pack executes without calling back into Python except for PyTorch's
// current stream.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "fusedgemm/context.h"
#include "fusedgemm/device.h"
#include "fusedgemm/graph_json.h"
#include "fusedgemm/plan.h"
#include "py_plan.h"
#include "runtime/device.h"

namespace fusedgemm::python {

std::uint64_t BoundPackCache::fingerprint_of(const VariantPack& views) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (const auto& e : views.entries()) {
    mix(static_cast<std::uint64_t>(e.uid));
    mix(std::hash<std::string>{}(e.name));
    mix(reinterpret_cast<std::uintptr_t>(e.buffer.data));
    for (const std::int64_t x : e.buffer.shape) mix(static_cast<std::uint64_t>(x));
    for (const std::int64_t x : e.buffer.stride) mix(static_cast<std::uint64_t>(x));
    mix(static_cast<std::uint64_t>(e.buffer.data_type));
  }
  return h;
}

std::shared_ptr<const BoundPack> BoundPackCache::find(const VariantPack& views,
                                                      std::uint64_t fingerprint) {
  for (Entry& e : entries_) {
    if (e.fingerprint == fingerprint && e.views == views) {
      e.last_use = ++clock_;
      return e.pack;
    }
  }
  return nullptr;
}

void BoundPackCache::insert(std::uint64_t fingerprint, VariantPack views,
                            std::shared_ptr<const BoundPack> pack) {
  Entry entry{fingerprint, std::move(views), std::move(pack), ++clock_};
  if (entries_.size() < kEntries) {
    entries_.push_back(std::move(entry));
    return;
  }
  *std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.last_use < b.last_use;
  }) = std::move(entry);
}

void* StreamSource::current() const {
  if (api != nullptr) {
    void* stream = nullptr;
    if (api->current_work_stream(dlpack::kCuda, ordinal, &stream) != 0) throw nb::python_error();
    return stream;
  }
  if (!getter.is_valid() || getter.is_none()) return nullptr;
  return reinterpret_cast<void*>(nb::cast<std::uintptr_t>(getter(arg)));
}

namespace {

struct PyContext {
  std::shared_ptr<Context> context;
};

// A buffers dict as the C++ API sees it, plus what the call needs from Python: the arrays
// kept alive, where its stream comes from, and the workspace allocator (or None).
struct Resolved {
  VariantPack pack;
  nb::object keepalive;
  StreamSource stream;
  nb::object allocator;
};

struct PyVerdict {
  std::optional<std::string> rule;
  std::string message;
  std::optional<std::string> role;
  std::optional<std::string> tensor;
};

std::optional<std::string> non_empty(std::string s) {
  if (s.empty()) return std::nullopt;
  return s;
}

PyVerdict to_verdict(const std::string& rule, const std::string& message) {
  if (rule.empty()) return {std::nullopt, message, std::nullopt, std::nullopt};
  const Diagnostic d = parse_diagnostic(message);
  return {rule, message, non_empty(d.role), non_empty(d.tensor)};
}

// nb::cast<T>, or a TypeError naming `what`, the value and what would be legal (nanobind's
// own error reads "std::bad_cast").
template <class T>
T cast_arg(nb::handle value, const std::string& what, const char* legal) {
  try {
    return nb::cast<T>(value);
  } catch (const nb::cast_error&) {
    throw nb::type_error(
        (what + ": " + nb::cast<std::string>(nb::repr(value)) + "; legal: " + legal).c_str());
  }
}

void* as_pointer(nb::handle value) {
  return reinterpret_cast<void*>(
      cast_arg<std::uintptr_t>(value, "address", "an integer from 0 to 2^64 - 1"));
}

void add_entry(VariantPack& pack, nb::handle key, BufferView view) {
  if (nb::isinstance<nb::str>(key)) {
    pack.set(cast_arg<std::string>(key, "buffers: key", "a tensor name in UTF-8"), std::move(view));
  } else if (nb::isinstance<TensorAttributes>(key)) {
    pack.set(nb::cast<Tensor>(key), std::move(view));
  } else if (PyLong_Check(key.ptr()) && !PyBool_Check(key.ptr())) {
    pack.set(cast_arg<std::int64_t>(key, "buffers: key", "a tensor uid from 0 to 2^63 - 1"),
             std::move(view));
  } else {
    throw nb::type_error("buffers: keys are tensor names (str), uids (int) or Tensors");
  }
}

nb::object checked(PyObject* result) {
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

// The exchange table and workspace allocator of arrays of `type`, looked up when the type
// differs from the last call's.
const ArrayTypeCache& array_type(const PyPlan& plan, PyTypeObject* type) {
  ArrayTypeCache& cache = plan.array_type;
  if (cache.type.ptr() == reinterpret_cast<PyObject*>(type)) return cache;
  cache = ArrayTypeCache{nb::borrow(reinterpret_cast<PyObject*>(type)), dlpack::exchange_api(type),
                         nb::none()};
  if (cache.api == nullptr) return cache;
  if (plan.device == "host") {
    cache.allocator = plan.arrays.attr("host_workspace");
    return cache;
  }
  const nb::object torch = nb::steal(PyImport_GetModule(nb::str("torch").ptr()));
  if (!torch.is_valid()) {
    PyErr_Clear();
    return cache;
  }
  if (!plan.torch_context.is_valid()) {
    plan.torch_context = plan.arrays.attr("torch_context")(plan.device);
  }
  const nb::tuple context = nb::borrow<nb::tuple>(plan.torch_context);
  if (PyType_IsSubtype(type, reinterpret_cast<PyTypeObject*>(context[3].ptr()))) {
    cache.allocator = nb::borrow(context[2]);
  }
  return cache;
}

// A dict whose every value offers DLPack's C exchange table (PyTorch tensors) and lies on
// the plan's device, read with no Python frame per array: a dict of tensors is the hot call
// of a Python user. Anything else (another array, an array elsewhere, a type fusedgemm has
// not) goes to resolve, which also words the refusals.
std::optional<Resolved> resolve_exchange(const PyPlan& plan, nb::handle buffers) {
  if (!PyDict_Check(buffers.ptr())) return std::nullopt;
  const bool host = plan.device == "host";
  Resolved out;
  out.allocator = nb::none();
  out.pack.reserve(static_cast<std::size_t>(PyDict_Size(buffers.ptr())));
  bool first = true;
  // A snapshot of the items holds every key and array while they are read, however the dict
  // changes meanwhile (a producer's call may run Python).
  const nb::object items = checked(PyDict_Items(buffers.ptr()));
  const Py_ssize_t count = PyList_GET_SIZE(items.ptr());
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = PyList_GET_ITEM(items.ptr(), i);
    PyObject* key = PyTuple_GET_ITEM(item, 0);
    PyObject* value = PyTuple_GET_ITEM(item, 1);
    if (value == Py_None) continue;
    const ArrayTypeCache& cache = array_type(plan, Py_TYPE(value));
    if (cache.api == nullptr) return std::nullopt;
    dlpack::Tensor t{};
    if (cache.api->tensor_from_py_object(value, &t) != 0) {
      PyErr_Clear();  // resolve reads the array again and says what is wrong with it
      return std::nullopt;
    }
    const bool here =
        host ? t.device.type == dlpack::kCpu || t.device.type == dlpack::kCudaHost
             : t.device.type == dlpack::kCuda && t.device.id == plan.plan.device().ordinal();
    const DataType type = dlpack::data_type_of(t.type);
    // A rank past any view's, or extents it does not give, is the array protocols' to word.
    const bool readable =
        t.ndim >= 0 && t.ndim <= dlpack::kMaxRank && (t.ndim == 0 || t.shape != nullptr);
    if (!here || type == DataType::kNotSet || !readable) return std::nullopt;
    const auto rank = static_cast<std::size_t>(t.ndim);
    std::vector<std::int64_t> shape(t.shape, t.shape + rank);
    std::vector<std::int64_t> strides(rank);
    std::int64_t step = 1;  // compact row-major where the producer gives no strides
    for (std::size_t i = rank; i-- > 0;) {
      strides[i] = t.strides != nullptr ? t.strides[i] : step;
      if (t.strides == nullptr &&
          __builtin_mul_overflow(step, std::max<std::int64_t>(shape[i], 1), &step)) {
        return std::nullopt;  // extents past int64: the array protocols refuse them by name
      }
    }
    add_entry(out.pack, key,
              BufferView::view(static_cast<char*>(t.data) + t.byte_offset, std::move(shape),
                               std::move(strides), type));
    if (first) {
      // The first array's producer names the stream and lends the workspace.
      first = false;
      out.stream.api = host ? nullptr : cache.api;
      out.stream.ordinal = plan.plan.device().ordinal();
      out.allocator = cache.allocator;
    }
  }
  out.keepalive = items;
  return out;
}

// `buffers` (a dict) through fusedgemm._arrays.resolve: entries of (key, address, shape,
// strides, data type), shape None for a bare address.
Resolved resolve(const PyPlan& plan, nb::handle buffers) {
  if (auto fast = resolve_exchange(plan, buffers)) return std::move(*fast);
  nb::tuple r = nb::cast<nb::tuple>(plan.arrays.attr("resolve")(buffers, plan.device));
  Resolved out;
  for (nb::handle e : r[0]) {
    nb::tuple entry = nb::borrow<nb::tuple>(e);
    void* data = as_pointer(entry[1]);
    if (entry[2].is_none()) {
      add_entry(out.pack, entry[0], BufferView::address(data));
      continue;
    }
    const DataType type =
        entry[4].is_none() ? DataType::kNotSet : parse_data_type(nb::cast<std::string>(entry[4]));
    const std::string what = "buffer " + nb::cast<std::string>(nb::repr(entry[0]));
    constexpr const char* kExtents = "integers from -2^63 to 2^63 - 1";
    BufferView view = BufferView::view(
        data, cast_arg<std::vector<std::int64_t>>(entry[2], what + ": shape", kExtents),
        cast_arg<std::vector<std::int64_t>>(entry[3], what + ": strides", kExtents), type);
    view.read_only = nb::cast<bool>(entry[5]);
    add_entry(out.pack, entry[0], std::move(view));
  }
  out.keepalive = nb::borrow(r[1]);
  out.stream.getter = nb::borrow(r[2]);
  out.stream.arg = nb::borrow(r[3]);
  out.allocator = nb::borrow(r[4]);
  return out;
}

void* resolve_stream(nb::handle stream, const StreamSource& source) {
  if (stream.is_none()) return source.current();
  if (PyLong_Check(stream.ptr())) return as_pointer(stream);
  if (nb::hasattr(stream, "cuda_stream")) return as_pointer(stream.attr("cuda_stream"));
  throw nb::type_error("stream: an int (a CUstream) or an object with a cuda_stream attribute");
}

struct CallWorkspace {
  Workspace workspace;
  nb::object holder;  // whatever owns the memory, kept until the call returns
};

// The caller's workspace array, or `needed` bytes from the allocator (PyTorch's caching
// allocator on CUDA, numpy on the host), or none (the workspace rule then judges).
CallWorkspace resolve_workspace(const PyPlan& plan, nb::handle workspace, std::uint64_t needed,
                                nb::handle allocator, void* stream) {
  CallWorkspace out;
  if (!workspace.is_none()) {
    nb::tuple r = nb::cast<nb::tuple>(plan.arrays.attr("workspace")(workspace, plan.device));
    out.workspace = {as_pointer(r[0]), nb::cast<std::uint64_t>(r[1])};
    out.holder = nb::borrow(workspace);
    return out;
  }
  if (needed == 0 || allocator.is_none()) return out;
  nb::tuple r = nb::cast<nb::tuple>(allocator(needed, reinterpret_cast<std::uintptr_t>(stream)));
  out.workspace = {as_pointer(r[0]), needed};
  out.holder = nb::borrow(r[1]);
  return out;
}

void run(const Plan& plan, const BoundPack& pack, const Workspace& workspace, void* stream) {
  Status status;
  {
    nb::gil_scoped_release release;
    status = plan.execute(pack, workspace, stream);
  }
  check(status);
}

void execute(const PyPlan& self, nb::handle buffers, nb::handle workspace, nb::handle stream) {
  if (nb::isinstance<PyBound>(buffers)) {
    const PyBound& b = nb::cast<const PyBound&>(buffers);
    void* s = resolve_stream(stream, b.stream);
    CallWorkspace ws = resolve_workspace(self, workspace, b.workspace_bytes, b.allocator, s);
    run(self.plan, b.pack, ws.workspace, s);
    return;
  }
  Resolved r = resolve(self, buffers);
  const std::uint64_t fingerprint = BoundPackCache::fingerprint_of(r.pack);
  std::shared_ptr<const BoundPack> bound = self.bound_packs.find(r.pack, fingerprint);
  if (!bound) {
    bound = std::make_shared<const BoundPack>(value_or_raise(self.plan.bind(r.pack)));
    self.bound_packs.insert(fingerprint, std::move(r.pack), bound);
  }
  const std::uint64_t needed = value_or_raise(self.plan.workspace_bytes(*bound));
  void* s = resolve_stream(stream, r.stream);
  CallWorkspace ws = resolve_workspace(self, workspace, needed, r.allocator, s);
  run(self.plan, *bound, ws.workspace, s);
}

PyVerdict explain(const PyPlan& self, nb::handle buffers, nb::handle workspace) {
  const PyBound* b =
      nb::isinstance<PyBound>(buffers) ? &nb::cast<const PyBound&>(buffers) : nullptr;
  std::optional<Resolved> r;
  std::optional<BoundPack> bound;
  if (b == nullptr) {
    r = resolve(self, buffers);
    auto bound_or = self.plan.bind(r->pack);
    if (!bound_or) {
      const std::string m = bound_or.status().message();
      return to_verdict(parse_diagnostic(m).rule, m);
    }
    bound = std::move(bound_or).value();
  }
  const BoundPack& pack = b ? b->pack : *bound;
  const std::uint64_t needed =
      b ? b->workspace_bytes : value_or_raise(self.plan.workspace_bytes(pack));
  // The workspace execute would take, allocated for the stream execute would launch on.
  void* stream = (b ? b->stream : r->stream).current();
  CallWorkspace ws =
      resolve_workspace(self, workspace, needed, b ? b->allocator : r->allocator, stream);
  const Verdict v = self.plan.explain(pack, ws.workspace);
  return to_verdict(v.rule, v.message);
}

PyBound bind(const PyPlan& self, nb::handle buffers) {
  Resolved r = resolve(self, buffers);
  BoundPack pack = value_or_raise(self.plan.bind(r.pack));
  const std::uint64_t needed = value_or_raise(self.plan.workspace_bytes(pack));
  return PyBound{self.plan, std::move(pack), needed, r.keepalive, r.stream, r.allocator};
}

std::shared_ptr<Device> make_device(nb::handle device) {
  if (device.is_none()) return default_device();
  if (PyLong_Check(device.ptr())) {
    return value_or_raise(
        make_cuda_device(cast_arg<int>(device, "device", "an ordinal from 0 to 2^31 - 1")));
  }
  const std::string spelling = nb::cast<std::string>(nb::str(device));
  if (spelling == "host") return make_host_device();
  if (spelling == "cuda") return value_or_raise(make_cuda_device(0));
  if (spelling.rfind("cuda:", 0) == 0) {
    // The whole rest a decimal ordinal ("cuda:0x" is no device); else reported below.
    int ordinal = -1;
    const char* first = spelling.data() + 5;
    const char* last = spelling.data() + spelling.size();
    const auto [end, error] = std::from_chars(first, last, ordinal);
    if (error == std::errc() && end == last && first != last) {
      return value_or_raise(make_cuda_device(ordinal));
    }
  }
  throw nb::value_error(("device '" + spelling +
                         "'; legal: None (CUDA when present, else host), 'host', 'cuda', "
                         "'cuda:N' or an ordinal")
                            .c_str());
}

KernelTuning make_tuning(const nb::dict& tuning) {
  KernelTuning t;
  for (auto [key, value] : tuning) {
    const std::string k = cast_arg<std::string>(key, "tuning: key", "a string");
    const std::string what = "tuning '" + k + "'";
    const auto integer = [&] { return cast_arg<int>(value, what, "an integer of 32 bits"); };
    const auto flag = [&] { return cast_arg<bool>(value, what, "True or False"); };
    if (k == "tile_m")
      t.tile_m = integer();
    else if (k == "tile_n")
      t.tile_n = integer();
    else if (k == "split_n")
      t.split_n = flag();
    else if (k == "ping_pong")
      t.ping_pong = flag();
    else if (k == "cluster_m")
      t.cluster_m = integer();
    else if (k == "cluster_n")
      t.cluster_n = integer();
    else if (k == "stages")
      t.stages = integer();
    else if (k == "staging_buffers")
      t.staging_buffers = integer();
    else if (k == "borrow_staging")
      t.borrow_staging = flag();
    else if (k == "aux_buffers")
      t.aux_buffers = integer();
    else if (k == "dependent_launch")
      t.dependent_launch = flag();
    else {
      throw nb::value_error(("tuning: unknown key '" + k +
                             "'; legal: tile_m, tile_n, split_n, ping_pong, cluster_m, "
                             "cluster_n, stages, staging_buffers, borrow_staging, "
                             "aux_buffers, dependent_launch")
                                .c_str());
    }
  }
  return t;
}

PyPlan build_plan(Graph& graph, nb::handle device, std::optional<std::string> engine,
                  const PyContext* context, std::optional<nb::dict> tuning) {
  BuildOptions options{make_device(device), context ? context->context : nullptr};
  if (engine) {
    if (*engine == "fused")
      options.engine = Engine::kFused;
    else if (*engine == "fallback")
      options.engine = Engine::kFallback;
    else
      throw nb::value_error(("engine '" + *engine + "'; legal: None, 'fused', 'fallback'").c_str());
  }
  if (tuning) options.tuning = make_tuning(*tuning);
  nb::object arrays = nb::module_::import_("fusedgemm._arrays");
  // build() validates its graph in place. That happens here, with the GIL held, so threads
  // building from one Graph (or changing it) never race on it; the build itself, kernel
  // compiles and all, runs on a private copy with the GIL released.
  check(graph.validate());
  Graph copy = value_or_raise(graph_from_json(graph_to_json(graph)));
  std::optional<Result<Plan>> plan;
  {
    nb::gil_scoped_release release;
    plan.emplace(build(copy, options));
  }
  Plan p = value_or_raise(std::move(*plan));
  const Device& d = p.device();
  std::string spelling = d.is_host() ? "host" : "cuda:" + std::to_string(d.ordinal());
  return PyPlan{std::move(p), std::move(spelling), std::move(arrays),
                nb::object(), ArrayTypeCache{},    BoundPackCache{}};
}

}  // namespace

void bind_plan(nb::module_& m) {
  nb::class_<Decline>(m, "Decline", "Why the fused engine refused a graph at build.")
      .def_ro("rule", &Decline::rule, "The rule's stable snake_case id.")
      .def_ro("message", &Decline::message, "The diagnostic: rule, role, tensor, numbers.")
      .def("__repr__", [](const Decline& d) { return "Decline(" + d.message + ")"; });

  nb::class_<PyVerdict>(m, "Verdict",
                        "What explain says of a call: legal, or the first broken rule.")
      .def_ro("rule", &PyVerdict::rule, "The broken rule's id, or None when legal.")
      .def_ro("message", &PyVerdict::message, "The diagnostic, or 'legal'.")
      .def_ro("role", &PyVerdict::role, "The role the rule names (A, B, aux, ...), or None.")
      .def_ro("tensor", &PyVerdict::tensor, "The tensor the rule names, or None.")
      .def_prop_ro(
          "legal", [](const PyVerdict& v) { return !v.rule.has_value(); },
          "True when every rule passed.")
      .def("__bool__", [](const PyVerdict& v) { return !v.rule.has_value(); })
      .def("__repr__", [](const PyVerdict& v) { return "Verdict(" + v.message + ")"; });

  nb::class_<PyContext>(m, "Context",
                        "The kernel cache (memory in front of a directory) and debug settings "
                        "that builds share; read from FUSEDGEMM_* variables unless overridden.")
      .def(
          "__init__",
          [](PyContext* self, std::optional<std::string> cache_dir,
             std::optional<bool> disable_cache, std::optional<std::string> dump_dir,
             std::optional<bool> verbose, bool read_environment) {
            ContextOptions o;
            o.read_environment = read_environment;
            if (cache_dir) o.cache_dir = *cache_dir;
            o.disable_cache = disable_cache;
            if (dump_dir) o.dump_dir = *dump_dir;
            o.verbose = verbose;
            new (self) PyContext{value_or_raise(Context::create(o))};
          },
          "cache_dir"_a = nb::none(), "disable_cache"_a = nb::none(), "dump_dir"_a = nb::none(),
          "verbose"_a = nb::none(), "read_environment"_a = true)
      .def_prop_ro(
          "cache_dir", [](const PyContext& c) { return c.context->settings().cache_dir.string(); },
          "The cache directory in use ('' when none).")
      .def_prop_ro(
          "counters",
          [](const PyContext& c) {
            const ContextCounters k = c.context->counters();
            nb::dict d;
            d["compiles"] = k.compiles;
            d["disk_hits"] = k.disk_hits;
            d["memory_hits"] = k.memory_hits;
            d["corrupt_entries"] = k.corrupt_entries;
            d["cache_write_failures"] = k.cache_write_failures;
            return d;
          },
          "Compiles and cache hits so far.");

  nb::class_<PyBound>(m, "BoundPack",
                      "A buffers dict resolved to the plan's order once, for hot loops: pass it "
                      "to Plan.execute. Keeps its arrays alive; their addresses and layouts are "
                      "fixed, and every execute still checks every rule.")
      .def_ro("workspace_bytes", &PyBound::workspace_bytes,
              "The workspace this call's problem needs (0 without taps).");

  nb::class_<PyPlan>(m, "Plan",
                     "What build() returns: an engine, a kernel and the rules every call is "
                     "checked against. Immutable; safe to execute from several threads.")
      .def_prop_ro(
          "engine", [](const PyPlan& p) { return std::string(to_string(p.plan.engine())); },
          "'fused' (one generated kernel) or 'fallback' (unfused).")
      .def_prop_ro(
          "declined", [](const PyPlan& p) { return p.plan.declined(); },
          "Why the fused engine refused the graph (a Decline), or None.")
      .def_ro("device", &PyPlan::device, "'host' or 'cuda:N'.")
      .def(
          "describe", [](const PyPlan& p) { return p.plan.describe(); },
          "The readable recipe: engine, roles, shape rules, argument plan, kernel choice.")
      .def(
          "deferrals",
          [](const PyPlan& p) {
            nb::dict d;
            for (const auto& c : p.plan.deferrals())
              d[nb::str(c.rule.data(), c.rule.size())] = c.count;
            return d;
          },
          "Refused calls per rule since build, in rule-table order.")
      .def(
          "workspace_bytes",
          [](const PyPlan& p, nb::handle buffers) -> std::uint64_t {
            if (buffers.is_none()) return p.plan.workspace_bytes();
            // A bound pack of another plan is refused (bound_pack), as in C++.
            if (nb::isinstance<PyBound>(buffers))
              return value_or_raise(p.plan.workspace_bytes(nb::cast<const PyBound&>(buffers).pack));
            Resolved r = resolve(p, buffers);
            return value_or_raise(p.plan.workspace_bytes(value_or_raise(p.plan.bind(r.pack))));
          },
          "buffers"_a = nb::none(),
          "The workspace a call needs: for the declared problem, or for the problem of "
          "`buffers` (a dict or a BoundPack). 0 without taps.")
      .def("bind", &bind, "buffers"_a,
           "Resolves a buffers dict once (keys: names, uids or Tensors) into a BoundPack.")
      .def("execute", &execute, "buffers"_a, "workspace"_a = nb::none(), "stream"_a = nb::none(),
           "Checks every rule, then launches on `stream` (default: PyTorch's current stream for "
           "PyTorch tensors, else the default stream). `buffers` maps names, uids or Tensors to "
           "arrays (DLPack, __cuda_array_interface__, PyTorch on CUDA; numpy on the host), or "
           "is a BoundPack. The workspace, when omitted and needed, comes from PyTorch's "
           "caching allocator (numpy on the host). A refused call raises IllegalCall and "
           "writes nothing.")
      .def("explain", &explain, "buffers"_a, "workspace"_a = nb::none(),
           "The same rules as execute, launching nothing: a Verdict.")
      .def("__repr__", [](const PyPlan& p) {
        return "Plan(engine='" + std::string(to_string(p.plan.engine())) + "', device='" +
               p.device + "')";
      });

  m.def(
      "_dlpack_data_type",
      [](int code, int bits, int lanes) -> std::optional<std::string> {
        const DataType t =
            dlpack::data_type_of({static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                                  static_cast<std::uint16_t>(lanes)});
        if (t == DataType::kNotSet) return std::nullopt;
        return std::string(to_string(t));
      },
      "code"_a, "bits"_a, "lanes"_a,
      "The fusedgemm data type of a DLPack element type (code, bits, lanes), or None.");

  m.attr("_BOUND_PACK_CACHE_ENTRIES") = BoundPackCache::kEntries;
  m.def(
      "_bench_dict_path",
      [](const PyPlan& plan, nb::handle buffers, int iterations) {
        using Clock = std::chrono::steady_clock;
        const auto per_call = [iterations](auto f) {
          const auto t0 = Clock::now();
          for (int i = 0; i < iterations; ++i) f();
          return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                 std::max(1, iterations);
        };
        const Resolved r = resolve(plan, buffers);
        const double read = per_call([&] { (void)resolve(plan, buffers); });
        const double exchange = per_call([&] {
          PyObject* key = nullptr;
          PyObject* value = nullptr;
          Py_ssize_t position = 0;
          while (PyDict_Next(buffers.ptr(), &position, &key, &value)) {
            const dlpack::ExchangeApi* api = array_type(plan, Py_TYPE(value)).api;
            dlpack::Tensor t{};
            if (api == nullptr || api->tensor_from_py_object(value, &t) != 0) PyErr_Clear();
          }
        });
        const double bind = per_call([&] { (void)plan.plan.bind(r.pack); });
        const double stream = per_call([&] { (void)r.stream.current(); });
        const double cached = per_call(
            [&] { (void)plan.bound_packs.find(r.pack, BoundPackCache::fingerprint_of(r.pack)); });
        return std::make_tuple(read, exchange, bind, stream, cached);
      },
      "plan"_a, "buffers"_a, "iterations"_a,
      "(read the dict, of which the producers' exchange calls, Plan::bind, the current "
      "stream, a bound-pack cache lookup) in us per call of the dict path's steps "
      "(benchmarks only).");

  m.def("build", &build_plan, "graph"_a, "device"_a = nb::none(), "engine"_a = nb::none(),
        "context"_a.none() = nb::none(), "tuning"_a = nb::none(),
        "Validates, analyzes and compiles `graph` into a Plan on `device` ('cuda', 'cuda:N', "
        "'host'; default CUDA when present, else host). `engine` forces 'fused' or "
        "'fallback'; `tuning` (tile_m, tile_n, split_n, ping_pong, cluster_m, cluster_n, "
        "stages, staging_buffers, borrow_staging, aux_buffers, dependent_launch) overrides the "
        "kernel choice. Raises GraphError for a malformed graph, Declined when engine='fused' and "
        "the "
        "fused engine refuses it.");
}

}  // namespace fusedgemm::python
