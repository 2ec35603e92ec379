"""PyTorch integration (needs torch): fusedgemm plans as ``torch.library`` custom ops.

Each op has a fake kernel, so a model calling it runs under ``torch.compile`` with no graph
break, and its execute launches on PyTorch's current stream with nothing else (no
synchronization, no cudaMalloc: outputs and any workspace come from PyTorch's caching
allocator), so it can be captured in a ``torch.cuda.CUDAGraph``.

    from fusedgemm.torch import fused_linear, gated_mlp
    y = fused_linear(x, weight, bias, activation="gelu")   # gelu(x @ weight.T + bias)
    h = gated_mlp(x, w_gate, w_up)                         # silu(x @ w_gate.T) * (x @ w_up.T)

Both build their plans on first use and keep them in a cache keyed by (data types, layouts,
extent range): the rows M of a call are rounded up to a power of two, and a fused plan
serves every M up to that (a plan on the fallback engine, which runs only its declared
extents, is keyed by the exact M). Build a plan ahead of capture: compile and load are not
capturable. ``custom_op`` registers any plan as an op.
"""

import threading
import atexit
from typing import List, Optional

import torch

import fusedgemm

__all__ = ["ACTIVATIONS", "PlanCache", "custom_op", "fused_linear", "gated_mlp", "plan_cache"]

# fused_linear's and gated_mlp's activation names -> fusedgemm pointwise modes.
ACTIVATIONS = {"relu": "relu", "gelu": "gelu_erf", "gelu_tanh": "gelu_tanh", "silu": "silu"}

_DATA_TYPES = {
    torch.float32: "fp32",
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.int8: "int8",
    torch.int32: "int32",
}
for _name, _type in (("float8_e4m3fn", "fp8_e4m3"), ("float8_e5m2", "fp8_e5m2"),
                     ("float8_e8m0fnu", "e8m0")):
    if hasattr(torch, _name):
        _DATA_TYPES[getattr(torch, _name)] = _type
_TORCH_DTYPES = {v: k for k, v in _DATA_TYPES.items()}


def _data_type(dtype):
    try:
        return _DATA_TYPES[dtype]
    except KeyError:
        raise TypeError(f"{dtype} has no fusedgemm data type; legal: "
                        f"{', '.join(str(d) for d in _DATA_TYPES)}") from None


def _device(t):
    return "host" if t.device.type == "cpu" else f"cuda:{t.device.index}"


def _rows_bucket(m):
    return max(64, 1 << (m - 1).bit_length())


class PlanCache:
    """Plans by key, built on first use. Builds are serialized by one lock; a lookup of a
    plan already built takes no lock."""

    def __init__(self, context=None):
        self._plans = {}
        self._lock = threading.Lock()
        self._context = context

    def _get(self, key, make_graph, device):
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        with self._lock:
            plan = self._plans.get(key)
            if plan is None:
                if self._context is None:
                    self._context = fusedgemm.Context()  # one kernel cache for every build
                plan = fusedgemm.build(make_graph(), device=device, context=self._context)
                self._plans[key] = plan
        return plan

    def plan(self, key, m, make_graph, device):
        """The plan of `key` for a call of `m` rows; `make_graph(rows)` declares a graph."""
        bucket = _rows_bucket(m)
        plan = self._get((*key, bucket), lambda: make_graph(bucket), device)
        if plan.engine == "fallback" and bucket != m:
            plan = self._get((*key, m), lambda: make_graph(m), device)
        return plan

    def __len__(self):
        return len(self._plans)

    def clear(self):
        with self._lock:
            self._plans.clear()


plan_cache = PlanCache()
"""The cache fused_linear and gated_mlp build their plans into."""

# The plans of ops registered by custom_op, by op name. torch.library keeps a registered op
# alive past the interpreter's teardown, so the op looks its plan up here rather than holding
# it, and the plans are released at exit, before the extension module goes.
_op_plans = {}
atexit.register(_op_plans.clear)
atexit.register(plan_cache.clear)


def _operand_b(g, name, k, n, k_major, data_type):
    strides = [k * n, 1, k] if k_major else [k * n, n, 1]
    return g.tensor(name=name, dims=[1, k, n], strides=strides, data_type=data_type)


def _linear_graph(x_type, w_type, bias_type, activation, m, n, k, k_major):
    g = fusedgemm.Graph("fused_linear")
    a = g.tensor(name="A", dims=[1, m, k], strides=[m * k, k, 1], data_type=x_type)
    y = g.matmul(a, _operand_b(g, "B", k, n, k_major, w_type), name="gemm")
    if bias_type is not None:
        bias = g.tensor(name="bias", dims=[1, 1, n], data_type=bias_type)
        y = g.pointwise(y, bias, mode="add", name="bias_add")
    if activation is not None:
        y = g.pointwise(y, mode=ACTIVATIONS[activation], name="activation")
    y.set_output(True).set_name("D").set_data_type(x_type).set_dim([1, m, n])
    y.set_stride([m * n, n, 1])
    return g


def _gated_graph(x_type, w_type, activation, m, n, k, k_major):
    g = fusedgemm.Graph("gated_mlp")
    a = g.tensor(name="A", dims=[1, m, k], strides=[m * k, k, 1], data_type=x_type)
    gate = g.matmul(a, _operand_b(g, "B_gate", k, n, k_major, w_type), name="gemm_gate")
    up = g.matmul(a, _operand_b(g, "B_up", k, n, k_major, w_type), name="gemm_up")
    act = g.pointwise(gate, mode=ACTIVATIONS[activation], name="activation")
    y = g.pointwise(act, up, mode="mul", name="gate_mul")
    y.set_output(True).set_name("D").set_data_type(x_type).set_dim([1, m, n])
    y.set_stride([m * n, n, 1])
    return g


def _rows(x):
    """x as [M, K] with unit stride along K and rows packed."""
    k = x.shape[-1]
    x2 = x.reshape(-1, k)
    if x2.stride(-1) != 1 or (x2.shape[0] > 1 and x2.stride(0) != k):
        x2 = x2.contiguous()
    return x2


def _weight(w):
    """(w as a B operand [1, K, N] view, K-major?) of a [N, K] weight: its own memory when
    one of its axes has unit stride, else a contiguous copy."""
    n, k = w.shape
    if w.stride(1) == 1 and (n == 1 or w.stride(0) == k):
        return w.as_strided((1, k, n), (k * n, 1, k)), True
    if w.stride(0) == 1 and (k == 1 or w.stride(1) == n):
        return w.as_strided((1, k, n), (k * n, n, 1)), False
    return _weight(w.contiguous())


def _check_activation(activation, allow_none):
    if activation is None and allow_none:
        return
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r}; legal: "
                         f"{'None, ' if allow_none else ''}{', '.join(ACTIVATIONS)}")


@torch.library.custom_op("fusedgemm::fused_linear", mutates_args=())
def _fused_linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                  activation: Optional[str]) -> torch.Tensor:
    x2 = _rows(x)
    m, k = x2.shape
    n = weight.shape[0]
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m == 0:
        return out.reshape(*x.shape[:-1], n)
    b, k_major = _weight(weight)
    device = _device(x)
    bias_type = None if bias is None else _data_type(bias.dtype)
    key = ("fused_linear", x.dtype, weight.dtype, bias_type, activation, n, k, k_major, device)
    plan = plan_cache.plan(
        key, m,
        lambda rows: _linear_graph(_data_type(x.dtype), _data_type(weight.dtype), bias_type,
                                   activation, rows, n, k, k_major), device)
    buffers = {
        "A": x2.as_strided((1, m, k), (m * k, k, 1)),
        "B": b,
        "D": out.as_strided((1, m, n), (m * n, n, 1)),
    }
    if bias is not None:
        buffers["bias"] = bias.contiguous()
    plan.execute(buffers)
    return out.reshape(*x.shape[:-1], n)


@_fused_linear.register_fake
def _fused_linear_fake(x, weight, bias, activation):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@torch.library.custom_op("fusedgemm::gated_mlp", mutates_args=())
def _gated_mlp(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor,
               activation: str) -> torch.Tensor:
    x2 = _rows(x)
    m, k = x2.shape
    n = w_gate.shape[0]
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m == 0:
        return out.reshape(*x.shape[:-1], n)
    b_gate, gate_k_major = _weight(w_gate)
    b_up, up_k_major = _weight(w_up)
    if gate_k_major != up_k_major:  # both weights of one plan share one layout
        (b_gate, gate_k_major), (b_up, up_k_major) = _weight(w_gate.contiguous()), _weight(
            w_up.contiguous())
    device = _device(x)
    key = ("gated_mlp", x.dtype, w_gate.dtype, activation, n, k, gate_k_major, device)
    plan = plan_cache.plan(
        key, m,
        lambda rows: _gated_graph(_data_type(x.dtype), _data_type(w_gate.dtype), activation,
                                  rows, n, k, gate_k_major), device)
    plan.execute({
        "A": x2.as_strided((1, m, k), (m * k, k, 1)),
        "B_gate": b_gate,
        "B_up": b_up,
        "D": out.as_strided((1, m, n), (m * n, n, 1)),
    })
    return out.reshape(*x.shape[:-1], n)


@_gated_mlp.register_fake
def _gated_mlp_fake(x, w_gate, w_up, activation):
    return x.new_empty((*x.shape[:-1], w_gate.shape[0]))


def fused_linear(x, weight, bias=None, activation=None):
    """activation(x @ weight.T + bias) in one fused kernel, as torch.nn.functional.linear
    lays out its arguments: x [..., K], weight [N, K], bias [N] or None; activation None,
    'relu', 'gelu', 'gelu_tanh' or 'silu'. The result has x's dtype and shape [..., N]."""
    _check_activation(activation, allow_none=True)
    return torch.ops.fusedgemm.fused_linear(x, weight, bias, activation)


def gated_mlp(x, w_gate, w_up, activation="silu"):
    """activation(x @ w_gate.T) * (x @ w_up.T) in one fused kernel (both GEMMs read x once):
    x [..., K], w_gate and w_up [N, K]; activation 'relu', 'gelu', 'gelu_tanh' or 'silu'."""
    _check_activation(activation, allow_none=False)
    return torch.ops.fusedgemm.gated_mlp(x, w_gate, w_up, activation)


def custom_op(name, graph, plan):
    """Registers `plan` (built from `graph`) as the op ``fusedgemm::<name>``: it takes the
    graph's inputs (graph.inputs order) as tensors and returns its outputs (graph.tensors
    order) as new tensors of their declared dims, strides and data types. The inputs are
    judged by the plan's rules; a name can be registered once per process."""
    input_names = [t.name for t in graph.inputs]
    outputs = [(t.name, tuple(t.dims), tuple(t.strides), _TORCH_DTYPES[t.data_type])
               for t in graph.tensors if t.output]

    def allocate(device):
        return [torch.empty_strided(dims, strides, dtype=dtype, device=device)
                for _, dims, strides, dtype in outputs]

    @torch.library.custom_op(f"fusedgemm::{name}", mutates_args=())
    def op(inputs: List[torch.Tensor]) -> List[torch.Tensor]:
        if len(inputs) != len(input_names):
            raise ValueError(f"fusedgemm::{name}: {len(inputs)} inputs; legal: "
                             f"{len(input_names)} ({', '.join(input_names)})")
        results = allocate(inputs[0].device)
        buffers = dict(zip(input_names, inputs))
        buffers.update((o[0], r) for o, r in zip(outputs, results))
        _op_plans[name].execute(buffers)
        return results

    @op.register_fake
    def _(inputs):
        return allocate(inputs[0].device)

    _op_plans[name] = plan
    return op
