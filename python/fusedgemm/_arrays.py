"""Arrays to the buffer views of a call (DESIGN.md section 10).

An array's address, shape, strides (in elements) and element type become the call's view,
which the plan's rule table judges exactly as in C++. Accepted: PyTorch tensors, numpy
arrays (bf16 and fp8 through ml_dtypes), objects with ``__cuda_array_interface__`` (CuPy,
Numba) or ``__dlpack__`` (JAX, ...), and a bare int (an address, read as the declared
layout). The extension calls ``resolve`` and ``workspace``; nothing here is cached.
"""

import ctypes
import functools
import sys

import numpy as np

from ._fusedgemm import _dlpack_data_type

# numpy dtype names (ml_dtypes adds the low-precision ones) -> fusedgemm data types.
_NUMPY_TYPES = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
    "float8_e8m0fnu": "e8m0",
    "int8": "int8",
    "int32": "int32",
}
_DATA_TYPE_NUMPY = {v: k for k, v in _NUMPY_TYPES.items()}

# __cuda_array_interface__ typestr (byte order dropped) -> fusedgemm data types.
_TYPESTR_TYPES = {"f4": "fp32", "f2": "fp16", "i1": "int8", "i4": "int32"}

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST = 1, 2, 3

_LEGAL = "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, e8m0, int8, int32 arrays"
# ... in the machine's byte order: the kernels read and write native values.
_NATIVE = "|<" if sys.byteorder == "little" else "|>"


def numpy_dtype(data_type):
    """The numpy dtype of a fusedgemm data type ('bf16' and fp8 need ml_dtypes)."""
    name = _DATA_TYPE_NUMPY.get(data_type)
    if name is None:
        raise TypeError(f"data type {data_type!r} has no numpy dtype; legal: {_LEGAL}")
    if name in ("float32", "float16", "int8", "int32"):
        return np.dtype(name)
    try:
        import ml_dtypes
    except ImportError as e:
        raise ImportError(f"numpy arrays of {data_type} need ml_dtypes (pip install ml_dtypes)") from e
    return np.dtype(getattr(ml_dtypes, name))


@functools.lru_cache(maxsize=None)
def _torch_types(torch):
    names = {
        "float32": "fp32",
        "float16": "fp16",
        "bfloat16": "bf16",
        "float8_e4m3fn": "fp8_e4m3",
        "float8_e5m2": "fp8_e5m2",
        "float8_e8m0fnu": "e8m0",
        "int8": "int8",
        "int32": "int32",
    }
    return {getattr(torch, n): t for n, t in names.items() if hasattr(torch, n)}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


def _dlpack_versioned(value):
    """Whether `value` exports DLPack 1.x capsules, whose flags say read-only (numpy marks its
    array so); a legacy capsule has no flag, and numpy marks every array from one read-only."""
    try:
        capsule = value.__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    return _capsule_name(capsule) == b"dltensor_versioned"


def _dense_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    return tuple(reversed(strides))


def _byte_strides_to_elements(byte_strides, itemsize, what):
    out = []
    for s in byte_strides:
        if s % itemsize:
            raise TypeError(f"{what}: a stride of {s} bytes is not a whole number of "
                            f"{itemsize}-byte elements")
        out.append(s // itemsize)
    return tuple(out)


def _dlpack_view(value, what):
    device_type, device_id = value.__dlpack_device__()
    if device_type in (_DL_CPU, _DL_CUDA_HOST):
        view = _numpy_view(np.from_dlpack(value), what)
        # numpy's read-only flag is the producer's only where a versioned capsule carried it.
        return view if _dlpack_versioned(value) else view[:-1] + (False,)
    try:
        capsule = value.__dlpack__(stream=-1)  # -1: no synchronization (DLPack spec)
    except TypeError:
        capsule = value.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _dense_strides(shape)
    type_ = _dlpack_data_type(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    where = f"cuda:{t.device.device_id}" if t.device.device_type == _DL_CUDA else None
    # The capsule is not consumed: the producer's array keeps the memory alive. (A legacy
    # DLTensor carries no read-only flag.)
    return (t.data or 0) + t.byte_offset, shape, strides, type_, where, t.dtype.bits // 8, False, False


@functools.lru_cache(maxsize=None)
def _numpy_type(dtype):
    # Keyed by the dtype object: dtype.name builds a string on every call (~1 us). A swapped
    # byte order has no data type: its bytes read as other values.
    return _NUMPY_TYPES.get(dtype.name) if dtype.isnative else None


def _numpy_view(value, what):
    itemsize = value.itemsize
    return (
        value.__array_interface__["data"][0],
        value.shape,
        _byte_strides_to_elements(value.strides, itemsize, what),
        _numpy_type(value.dtype),
        "host",
        itemsize,
        False,
        not value.flags.writeable,
    )


def _cuda_interface_view(cai, what):
    # The protocol's memory is a CUDA device's, which one it does not say ("cuda").
    try:
        typestr = cai["typestr"]
        itemsize = int(typestr[2:])
        if itemsize <= 0:
            raise ValueError(f"typestr {typestr!r} has no element size")
        shape = tuple(_integer(extent) for extent in cai["shape"])
        byte_strides = cai.get("strides")
        if byte_strides is not None:
            byte_strides = tuple(_integer(stride) for stride in byte_strides)
        address, read_only = cai["data"]
        address = _integer(address)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise TypeError(f"{what}: __cuda_array_interface__ {cai!r} is malformed ({e}); legal: "
                        "version 2 or 3 of the protocol: typestr, shape of ints, strides of "
                        "ints or None, data (address, read-only)") from None
    strides = (_dense_strides(shape) if byte_strides is None else
               _byte_strides_to_elements(byte_strides, itemsize, what))
    type_ = _TYPESTR_TYPES.get(typestr[1:]) if typestr[:1] in _NATIVE else None
    return address, shape, strides, type_, "cuda", itemsize, False, bool(read_only)


def _integer(value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an int")
    return value


def _view(value, what):
    """(address, shape, strides, data type or None, device or None, itemsize, is_torch,
    read_only)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        index = value.get_device()
        where = "host" if index < 0 else f"cuda:{index}"
        return (value.data_ptr(), tuple(value.shape), value.stride(),
                _torch_types(torch).get(value.dtype), where, value.element_size(), True, False)
    if isinstance(value, np.ndarray):
        return _numpy_view(value, what)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return _cuda_interface_view(cai, what)
    if hasattr(value, "__dlpack__"):
        return _dlpack_view(value, what)
    raise TypeError(f"{what}: {type(value).__name__} is not an array; legal: PyTorch tensors, "
                    "numpy arrays, __cuda_array_interface__ or __dlpack__ objects, an int address")


class _Subject:
    """"buffer '<key>'" for messages, formatted only when one is raised."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        name = getattr(self.key, "name", None)
        return f"buffer '{name}'" if name is not None else f"buffer {self.key!r}"


def _check_device(where, device, what):
    # "cuda": a CUDA device's memory, which one unknown (__cuda_array_interface__).
    if where is None or where == device or (where == "cuda" and device.startswith("cuda:")):
        return
    raise TypeError(f"{what}: the array is on {where}; the plan runs on {device}")


def host_workspace(nbytes, stream):
    array = np.empty(nbytes, dtype=np.uint8)
    return array.__array_interface__["data"][0], array


def _torch_workspace(torch, index, nbytes, stream):
    # PyTorch's caching allocator, on the current stream; a call on another stream marks the
    # block in use there too, so it is not handed out again before that stream is done.
    t = torch.empty(nbytes, dtype=torch.uint8, device=index)
    if stream != _torch_stream_getter(torch)(index):
        t.record_stream(torch.cuda.ExternalStream(stream, device=index))
    return t.data_ptr(), t


def _torch_stream_getter(torch):
    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if getter is not None:
        return getter
    return lambda index: torch.cuda.current_stream(index).cuda_stream


def resolve(buffers, device):
    """Entries (key, address, shape, strides, data type, read-only) of a buffers dict, and
    what the call needs from Python: the arrays to keep alive, the current-stream getter and
    its argument, and the workspace allocator (each None where there is none)."""
    if not isinstance(buffers, dict):
        raise TypeError(f"buffers: a dict from tensor names, uids or Tensors to arrays, not "
                        f"{type(buffers).__name__}")
    # A snapshot first: it keeps every array alive however the dict changes meanwhile (an
    # address read from an array the dict then dropped would point at freed memory).
    keepalive = list(dict.items(buffers))
    entries = []
    uses_torch = False
    for key, value in keepalive:
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            entries.append((key, value, None, None, None, False))
            continue
        what = _Subject(key)
        address, shape, strides, type_, where, _, is_torch, read_only = _view(value, what)
        _check_device(where, device, what)
        if type_ is None:
            dtype = getattr(value, "dtype", None)
            raise TypeError(f"{what}: element type {dtype} has no fusedgemm data type; legal: "
                            f"{_LEGAL}, in the machine's byte order")
        uses_torch = uses_torch or is_torch
        entries.append((key, address, shape, strides, type_, read_only))
    if device == "host":
        return entries, keepalive, None, None, host_workspace
    if uses_torch:
        return (entries, keepalive, *torch_context(device)[:3])
    return entries, keepalive, None, None, None


def torch_context(device):
    """(current-stream getter, its argument, workspace allocator, torch.Tensor) of a call with
    PyTorch tensors on `device` ("cuda:N"). The extension reads a dict of tensors through
    DLPack's C exchange table (PyTorch >= 2.10) without calling resolve, and takes the
    workspace allocator from here when the arrays are torch.Tensors."""
    torch = sys.modules["torch"]
    index = int(device.split(":")[1])
    return (_torch_stream_getter(torch), index, functools.partial(_torch_workspace, torch, index),
            torch.Tensor)


def workspace(value, device):
    """(address, bytes) of a workspace array: the bytes its layout spans."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise TypeError("workspace: an array (its size is the workspace's), not an address")
    address, shape, strides, _, where, itemsize, _, read_only = _view(value, "workspace")
    if read_only:
        raise TypeError("workspace: a read-only array; legal: writable memory (the call writes "
                        "its workspace)")
    _check_device(where, device, "workspace")
    if any(extent == 0 for extent in shape):
        return address, 0
    if any(stride < 0 for stride in strides):
        raise TypeError(f"workspace: strides {tuple(strides)} go backwards; legal: an array "
                        "with non-negative strides (a dense one)")
    span = 1 + sum((extent - 1) * stride for extent, stride in zip(shape, strides))
    return address, span * itemsize
