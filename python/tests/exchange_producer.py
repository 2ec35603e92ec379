"""A numpy-backed array type that offers DLPack's C exchange table
(``__dlpack_c_exchange_api__``, DLPack 1.3) as PyTorch does from 2.10, written with ctypes so
the extension's exchange path runs on the host device in CI, where PyTorch is not installed.
It also speaks ``__dlpack__``, so whatever the exchange path hands back to
fusedgemm._arrays is read there."""

import ctypes

import numpy as np

# DLPack's DLTensor as fusedgemm._arrays declares it for its own __dlpack__ reads.
from fusedgemm._arrays import _DLDataType, _DLDevice, _DLTensor


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _Header(ctypes.Structure):
    pass


_Header._fields_ = [("version", _Version), ("previous", ctypes.POINTER(_Header))]

_FROM_PY_OBJECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_DLTensor))
_CURRENT_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                   ctypes.POINTER(ctypes.c_void_p))


class _ExchangeApi(ctypes.Structure):
    _fields_ = [
        ("header", _Header),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object", ctypes.c_void_p),
        ("managed_tensor_to_py_object", ctypes.c_void_p),
        ("tensor_from_py_object", _FROM_PY_OBJECT),
        ("current_work_stream", _CURRENT_STREAM),
    ]


# numpy dtype name -> DLPack (code, bits); float64 has no fusedgemm data type.
_CODES = {
    "float32": (2, 32),
    "float16": (2, 16),
    "float64": (2, 64),
    "bfloat16": (4, 16),
    "float8_e4m3fn": (10, 8),
    "float8_e5m2": (12, 8),
    "int8": (0, 8),
    "int32": (0, 32),
}

class ExchangeArray:
    """Wraps a numpy array; `reads` counts the arrays read through the table, `fail` makes
    the table refuse this array, `lie` makes it hand out a hostile DLTensor: "rank" claims 2^30
dimensions, "no_shape" gives no extents, "huge" gives no strides and extents whose product
overflows int64."""

    reads = 0

    def __init__(self, array, fail=False, lie=None):
        self.array = array
        self.fail = fail
        self.lie = lie
        self._shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self._strides = (ctypes.c_int64 * array.ndim)(*(s // array.itemsize for s in array.strides))

    @property
    def dtype(self):
        return self.array.dtype

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _tensor_from_py_object(address, out):
    value = ctypes.cast(address, ctypes.py_object).value
    ExchangeArray.reads += 1
    if value.fail:
        # DLPack asks for a Python error set with the -1; a ctypes callback cannot leave one
        # set on return, and the extension clears whatever there is either way.
        return -1
    array = value.array
    code, bits = _CODES[array.dtype.name]
    t = out.contents
    t.data = array.__array_interface__["data"][0]
    t.device = _DLDevice(1, 0)  # kDLCPU
    t.ndim = array.ndim
    t.dtype = _DLDataType(code, bits, 1)
    t.shape = ctypes.cast(value._shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(value._strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    if value.lie == "rank":
        t.ndim = 1 << 30
    elif value.lie == "no_shape":
        t.shape = None
    elif value.lie == "huge":
        value._shape[:] = [1 << 40] * array.ndim
        t.strides = None
    return 0


def _current_work_stream(device_type, device_id, out):
    out[0] = None
    return 0


# The table and its functions live as long as the process, as DLPack requires.
_TABLE = _ExchangeApi(_Header(_Version(1, 3), None), None, None, None,
                      _FROM_PY_OBJECT(_tensor_from_py_object),
                      _CURRENT_STREAM(_current_work_stream))
_NAME = b"dlpack_exchange_api"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_new.restype = ctypes.py_object
ExchangeArray.__dlpack_c_exchange_api__ = _capsule_new(ctypes.addressof(_TABLE), _NAME, None)


def wrap(buffers, **kwargs):
    """The same buffers dict with every numpy array wrapped."""
    return {k: ExchangeArray(v, **kwargs) if isinstance(v, np.ndarray) else v
            for k, v in buffers.items()}
