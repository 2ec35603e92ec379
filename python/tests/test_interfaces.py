"""Array interfaces other than numpy's, on the host device: __cuda_array_interface__ and
__dlpack__ objects are read through their own protocol, not converted to numpy first."""

import numpy as np
import pytest

import fusedgemm
from fusedgemm import reference


def fp16_plain():
    g = fusedgemm.Graph("plain_fp16")
    a = g.tensor(name="A", dims=[1, 64, 64], strides=[64 * 64, 64, 1], data_type="fp16")
    b = g.tensor(name="B", dims=[1, 64, 32], strides=[64 * 32, 1, 64], data_type="fp16")
    g.matmul(a, b).set_output(True).set_name("D").set_data_type("fp16")
    return g, fusedgemm.build(g, device="host")


class ArrayInterface:
    """Only __cuda_array_interface__, pointing at host memory (the host device reads it)."""

    def __init__(self, array, strides=True):
        self.array = array
        self.__cuda_array_interface__ = {
            "data": (array.__array_interface__["data"][0], False),
            "shape": array.shape,
            "typestr": array.dtype.str,
            "strides": array.strides if strides else None,
            "version": 3,
        }


class DLPackOnly:
    """Only the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (1, 64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (1, 32, 64)).astype(np.float16).transpose(0, 2, 1)  # K-major B
    return a, b


@pytest.mark.parametrize("wrap", [ArrayInterface, DLPackOnly], ids=["cuda_array_interface", "dlpack"])
def test_protocol_objects_are_read_at_their_strides(wrap, seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    d = np.full((1, 64, 32), np.nan, np.float16)
    plan.execute({"A": wrap(a), "B": wrap(b), "D": wrap(d)})
    want = a.astype(np.float64)[0] @ b.astype(np.float64)[0]
    rel = np.linalg.norm(d[0].astype(np.float64) - want) / np.linalg.norm(want)
    assert rel < reference.relative_tolerance("fp16")


def test_a_cuda_array_interface_without_strides_is_dense(seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    d = np.full((1, 64, 32), np.nan, np.float16)
    # A dense [1, 64, 64] A and D: no strides means C order.
    plan.execute({"A": ArrayInterface(a, strides=False), "B": b, "D": ArrayInterface(d, False)})
    assert not np.isnan(d).any()


def test_a_bare_address_is_read_as_the_declared_layout(seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    d = np.full((1, 64, 32), np.nan, np.float16)
    plan.execute({"A": a.__array_interface__["data"][0], "B": b, "D": d})
    want = a.astype(np.float64)[0] @ b.astype(np.float64)[0]
    rel = np.linalg.norm(d[0].astype(np.float64) - want) / np.linalg.norm(want)
    assert rel < reference.relative_tolerance("fp16")


class VersionedDLPack:
    """DLPack 1.x: its capsule carries the producer's read-only flag."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_a_read_only_output_through_versioned_dlpack_is_refused(seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    d = np.full((1, 64, 32), np.nan, np.float16)
    d.flags.writeable = False
    with pytest.raises(fusedgemm.IllegalCall) as info:
        plan.execute({"A": a, "B": b, "D": VersionedDLPack(d)})
    assert info.value.rule == "read_only"
    assert np.isnan(d).all()
    # Writable, the same wrapper is written.
    d = np.full((1, 64, 32), np.nan, np.float16)
    plan.execute({"A": VersionedDLPack(a), "B": b, "D": VersionedDLPack(d)})
    assert not np.isnan(d).any()
