"""Arrays and tensors as (address, element count, szDataType_t, device): what the extension takes.

Accepted: numpy arrays (ml_dtypes for bf16 / fp8), torch tensors (CPU or CUDA), and any object
with ``__cuda_array_interface__`` or ``__dlpack__`` (CuPy, JAX, ...), which is viewed as a torch
tensor without a copy. Bytes-like objects serve as frames. Nothing is ever copied or made
contiguous behind the caller's back: a buffer SplitZip cannot use as it is raises.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from . import _types
from .errors import DTypeError, InvalidArgumentError


@dataclass(frozen=True)
class Buffer:
    obj: object          # the numpy array or torch tensor; holds the memory while it is in use
    address: int
    count: int           # elements of sz_type
    sz_type: int
    nbytes: int
    device: int | None   # CUDA device index; None for host memory

    @property
    def is_torch(self) -> bool:
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(self.obj, torch.Tensor)


def _torch():
    return sys.modules.get("torch")


def as_array(x: object, what: str):
    """x as a numpy array or a torch tensor, viewing foreign device arrays through torch."""
    if isinstance(x, np.ndarray):
        return x
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
        try:
            import torch
        except ImportError:
            raise InvalidArgumentError(f"{what} is a {type(x).__name__}: device arrays are used through "
                                       "torch, which is not installed") from None
        return torch.as_tensor(x) if hasattr(x, "__cuda_array_interface__") else torch.from_dlpack(x)
    raise InvalidArgumentError(f"{what} is a {type(x).__name__}: pass a numpy array or a torch tensor")


def describe(x: object, dtype: object = None, *, writable: bool = False, what: str = "x") -> Buffer:
    """The Buffer of array or tensor x. ``dtype`` as in splitzip.encode; ``writable`` for outputs."""
    a = as_array(x, what)
    if isinstance(a, np.ndarray):
        if not a.flags.c_contiguous:
            raise InvalidArgumentError(f"{what} is not C-contiguous (shape {a.shape}, strides {a.strides}): "
                                       "pass np.ascontiguousarray(...) of it")
        if writable and not a.flags.writeable:
            raise InvalidArgumentError(f"{what} is read-only")
        if a.dtype.hasobject or a.dtype.fields is not None or a.dtype.subdtype is not None:
            raise DTypeError(f"{what} has dtype {a.dtype}: SplitZip takes plain element arrays, not "
                             "structured or object ones")
        if not a.dtype.isnative:
            raise DTypeError(f"{what} has non-native byte order ({a.dtype.str}): pass "
                             f"a.astype(a.dtype.newbyteorder('=')) of it")
        # Raw bits of another type: integers and plain bytes ('V2'); ml_dtypes' floats (bfloat16,
        # float8_*, also of kind 'V') are their own type only.
        raw_bits = a.dtype.kind in "iu" or (a.dtype.kind == "V" and a.dtype.name.startswith("void"))
        sz_type = _types.resolve(a.dtype.name, a.itemsize, raw_bits, dtype, what)
        return _make(a, a.ctypes.data, a.nbytes, sz_type, None, what)
    if not a.is_contiguous():
        raise InvalidArgumentError(f"{what} is not contiguous (shape {tuple(a.shape)}, strides {a.stride()}): "
                                   "pass .contiguous() of it")
    if a.device.type == "cuda":
        device = a.device.index if a.device.index is not None else 0
    elif a.device.type == "cpu":
        device = None
    else:
        raise InvalidArgumentError(f"{what} is on device {a.device}: SplitZip takes CPU and CUDA tensors")
    name = str(a.dtype).removeprefix("torch.")
    is_integer = not a.dtype.is_floating_point and not a.dtype.is_complex and a.dtype != _torch().bool
    sz_type = _types.resolve(name, a.element_size(), is_integer, dtype, what)
    return _make(a, a.data_ptr(), a.numel() * a.element_size(), sz_type, device, what)


def _make(obj, address: int, nbytes: int, sz_type: int, device: int | None, what: str) -> Buffer:
    from ._splitzip import type_size
    size = type_size(sz_type)
    if nbytes % size:
        raise InvalidArgumentError(f"{what} holds {nbytes} bytes, not a whole number of "
                                   f"{_types.SHORT_NAME_BY_TYPE[sz_type]} elements")
    return Buffer(obj, address, nbytes // size, sz_type, nbytes, device)


def frame_bytes(frame: object) -> Buffer:
    """A frame: bytes-like (bytes, bytearray, memoryview), or a uint8 numpy array / torch tensor."""
    if isinstance(frame, (bytes, bytearray, memoryview)):
        frame = np.frombuffer(frame, dtype=np.uint8)
    return describe(frame, "uint8", what="frame")


def current_stream(device: int | None) -> int:
    """cudaStream_t of torch's current stream on `device` (0 for host buffers, which ignore it)."""
    if device is None:
        return 0
    import torch
    return torch.cuda.current_stream(device).cuda_stream
