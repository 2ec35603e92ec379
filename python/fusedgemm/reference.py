"""The fp64 reference (the C++ oracle of src/reference) on numpy arrays.

    inputs = reference.random_inputs(graph, seed=7)      # {name: array in declared layout}
    out = {t.name: reference.empty(t) for t in graph.tensors if t.output}
    plan.execute({**inputs, **out})
    expected = reference.evaluate(graph, inputs)
    assert expected.compare(graph.find_tensor("D"), out["D"]).passed

Arrays here have the tensor's declared dims, strides and data type (bf16 and fp8 through
ml_dtypes; without it, their raw bits as uint16 / uint8, which the reference reads alike).
The graph must be validated (build() validates it).
"""

import numpy as np

from . import _fusedgemm
from ._arrays import numpy_dtype

relative_tolerance = _fusedgemm.relative_tolerance
Comparison = _fusedgemm.Comparison


def _dtype(data_type):
    try:
        return numpy_dtype(data_type)
    except ImportError:
        return np.dtype({"bf16": np.uint16}.get(data_type, np.uint8))


def _span(dims, strides):
    if any(d == 0 for d in dims):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(dims, strides))


def empty(tensor, fill_byte=0xFF):
    """An array of the tensor's declared dims, strides and type, every byte `fill_byte`
    (0xFF: NaN in every float type, so an element a kernel skips cannot pass; fp4_e2m1 has
    no NaN and reads each 0xF nibble as -6, a value a skipped element could match)."""
    dtype = _dtype(tensor.data_type)
    storage = np.full(_span(tensor.dims, tensor.strides) * dtype.itemsize, fill_byte, np.uint8)
    return _declared(storage, tensor, dtype)


def _declared(storage, tensor, dtype):
    # np.ndarray, not as_strided: the latter loses ml_dtypes' dtypes on the way.
    return np.ndarray(tuple(tensor.dims), dtype, buffer=storage,
                      strides=tuple(s * dtype.itemsize for s in tensor.strides))


def random_inputs(graph, seed):
    """Random values for every graph input, keyed by tensor name: uniform in [-1, 1] (scales
    in [0.5, 2]), encoded to each input's type, never all zeros."""
    out = {}
    for uid, data, _, _ in _fusedgemm._reference_random_inputs(graph, seed):
        tensor = graph.find_tensor(uid)
        dtype = _dtype(tensor.data_type)
        out[tensor.name] = _declared(np.frombuffer(data, np.uint8).copy(), tensor, dtype)
    return out


def _check_declared(tensor, array):
    dtype = _dtype(tensor.data_type)
    declared = tuple(s * dtype.itemsize for s in tensor.strides)
    if (array.dtype != dtype or tuple(array.shape) != tuple(tensor.dims)
            or tuple(array.strides) != declared):
        raise ValueError(
            f"tensor '{tensor.name}': array {array.dtype} {array.shape}:{array.strides}; the "
            f"reference reads the declared layout {dtype} {tuple(tensor.dims)}:{declared}")
    return array.__array_interface__["data"][0], _span(tensor.dims, tensor.strides) * dtype.itemsize


def _tensor(graph, key):
    return key if isinstance(key, _fusedgemm.Tensor) else graph.find_tensor(key)


class Evaluation:
    """The fp64 values of every output of a graph."""

    def __init__(self, graph, evaluation):
        self._graph = graph
        self._evaluation = evaluation

    def values(self, key):
        """Output `key` (name, uid or Tensor) in fp64, dims [b, rows, cols], before rounding
        to its data type."""
        t = _tensor(self._graph, key)
        return np.frombuffer(self._evaluation.values(t.uid), np.float64).reshape(t.dims)

    def rounded(self, key):
        """The same after rounding to the output's data type."""
        t = _tensor(self._graph, key)
        return np.frombuffer(self._evaluation.rounded(t.uid), np.float64).reshape(t.dims)

    def compare(self, key, array):
        """A Comparison of what `array` (the output's declared layout) holds against the
        reference, with the output type's tolerance (.passed, .relative_error, ...)."""
        t = _tensor(self._graph, key)
        address, nbytes = _check_declared(t, array)
        return self._evaluation.compare(t, address, nbytes)


def evaluate(graph, inputs):
    """Evaluates the graph in fp64 on `inputs` ({name, uid or Tensor: array}, each in its
    tensor's declared layout)."""
    entries = []
    for key, array in inputs.items():
        t = _tensor(graph, key)
        address, nbytes = _check_declared(t, array)
        entries.append((t.uid, address, nbytes))
    return Evaluation(graph, _fusedgemm._reference_evaluate(graph, entries))
