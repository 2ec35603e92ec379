"""Array interfaces other than numpy's, on the host device: __cuda_array_interface__ and
__dlpack__ objects are read through their own protocol, not converted to numpy first. A
__cuda_array_interface__ object is a CUDA device's memory, which a host plan refuses: its
reading is checked here through the view it becomes (fusedgemm._arrays._view)."""

import numpy as np
import pytest

import fusedgemm
from fusedgemm import _arrays, reference


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


def test_dlpack_objects_are_read_at_their_strides(seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    d = np.full((1, 64, 32), np.nan, np.float16)
    plan.execute({"A": DLPackOnly(a), "B": DLPackOnly(b), "D": DLPackOnly(d)})
    want = a.astype(np.float64)[0] @ b.astype(np.float64)[0]
    rel = np.linalg.norm(d[0].astype(np.float64) - want) / np.linalg.norm(want)
    assert rel < reference.relative_tolerance("fp16")


def test_a_cuda_array_interface_is_read_at_its_strides_on_a_cuda_device(seed):
    a, b = _inputs(seed)
    view = _arrays._view(ArrayInterface(b), "B")
    assert view[:5] == (b.__array_interface__["data"][0], (1, 64, 32), (2048, 1, 64), "fp16",
                        "cuda")
    # No strides means C order.
    assert _arrays._view(ArrayInterface(a, strides=False), "A")[2] == (4096, 64, 1)
    # A CUDA device's memory: a host plan does not read it (the CPU would fault on a device
    # address), whatever the pointer.
    _, plan = fp16_plain()
    d = np.full((1, 64, 32), np.nan, np.float16)
    with pytest.raises(TypeError, match="buffer 'D': the array is on cuda; the plan runs on host"):
        plan.execute({"A": a, "B": b, "D": ArrayInterface(d)})
    assert np.isnan(d).all()


@pytest.mark.parametrize("interface, match", [
    ({"typestr": "<f", "shape": (1, 2, 2), "data": (0, False)}, "invalid literal"),
    ({"typestr": "<f2", "shape": (1, 2, 2), "data": None}, "not iterable|cannot unpack"),
    ({"typestr": "<f2", "shape": (1, 2.0, 2), "data": (0, False)}, "2.0 is not an int"),
    ({"typestr": "<f2", "shape": (1, 2, 2)}, "'data'"),
    ({"typestr": "<f0", "shape": (1, 2, 2), "data": (0, False)}, "no element size"),
])
def test_a_malformed_cuda_array_interface_is_a_type_error_naming_the_buffer(interface, match):
    class Malformed:
        __cuda_array_interface__ = interface

    with pytest.raises(TypeError, match=f"buffer 'D': __cuda_array_interface__ .* is malformed "
                                        f"\\(.*({match})"):
        _arrays.resolve({"D": Malformed()}, "cuda:0")


def test_a_byte_order_other_than_the_machines_has_no_data_type(seed):
    _, plan = fp16_plain()
    a, b = _inputs(seed)
    swapped = a.astype(a.dtype.newbyteorder("S"))
    assert np.array_equal(swapped, a)  # the same values, the other byte order
    d = np.full((1, 64, 32), np.nan, np.float16)
    with pytest.raises(TypeError, match="buffer 'A': element type >f2 .* in the machine's byte order"):
        plan.execute({"A": swapped, "B": b, "D": d})
    with pytest.raises(TypeError, match="buffer 'D': element type"):
        plan.execute({"A": a, "B": b, "D": d.astype(d.dtype.newbyteorder("S"))})
    big_endian = ArrayInterface(a)
    big_endian.__cuda_array_interface__["typestr"] = ">f2"
    assert _arrays._view(big_endian, "A")[3] is None
    assert np.isnan(d).all()


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
