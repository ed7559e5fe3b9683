"""Element types: SplitZip's szDataType_t and the numpy / ml_dtypes / torch dtypes that map to it.

numpy (with ml_dtypes) and torch name their dtypes alike (``bfloat16``, ``float8_e5m2``,
``float32``, ...), so one table keyed by that name serves both.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import DTypeError

# szDataType_t by the array libraries' dtype name.
TYPE_BY_DTYPE_NAME = {
    "int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5,
    "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9, "float8_e4m3fn": 10, "float8_e5m2": 11,
}
DTYPE_NAME_BY_TYPE = {t: name for name, t in TYPE_BY_DTYPE_NAME.items()}

# The names users pass as ``dtype=``: SplitZip's short ones first (the ones used in messages).
SHORT_NAME_BY_TYPE = {0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64",
                      6: "fp16", 7: "fp32", 8: "fp64", 9: "bf16", 10: "fp8e4m3", 11: "fp8e5m2"}
TYPE_BY_USER_NAME = {**TYPE_BY_DTYPE_NAME, **{n: t for t, n in SHORT_NAME_BY_TYPE.items()}}

# The codec's; the communicator compresses all five on host and device buffers.
COMPRESSIBLE = ("bf16", "fp8e5m2", "fp32", "fp16", "fp8e4m3")


def parse(dtype: object) -> int:
    """szDataType_t of a user's ``dtype=``: a name (``"bf16"``), a numpy/ml_dtypes dtype or a
    torch dtype."""
    name = dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.")
    if not isinstance(dtype, str):
        try:
            name = np.dtype(dtype).name  # numpy and ml_dtypes dtypes, and their scalar types
        except TypeError:
            pass
    try:
        return TYPE_BY_USER_NAME[name]
    except KeyError:
        raise DTypeError(f"unknown SplitZip dtype {dtype!r}: use one of "
                         f"{', '.join(SHORT_NAME_BY_TYPE.values())}") from None


def numpy_dtype(sz_type: int) -> np.dtype:
    name = DTYPE_NAME_BY_TYPE[sz_type]
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def torch_dtype(sz_type: int):
    import torch
    return getattr(torch, DTYPE_NAME_BY_TYPE[sz_type])


def resolve(dtype_name: str, itemsize: int, is_integer: bool, requested: object, what: str) -> int:
    """The szDataType_t of an array with dtype ``dtype_name``, given the user's ``dtype=``.

    Without ``requested`` the array's own dtype decides. With it the array must be of that
    type, or hold raw bits in an integer dtype of the same size (bf16 as uint16, fp8 as uint8).
    """
    own = TYPE_BY_DTYPE_NAME.get(dtype_name)
    if requested is None:
        if own is None:
            raise DTypeError(f"{what} has dtype {dtype_name}, which SplitZip has no type for; if it holds "
                             f"raw bits of {', '.join(COMPRESSIBLE)}, say which with dtype=")
        return own
    sz_type = parse(requested)
    from ._splitzip import type_size
    if own == sz_type or (is_integer and itemsize == type_size(sz_type)):
        return sz_type
    raise DTypeError(f"{what} has dtype {dtype_name} ({itemsize} bytes per element), which cannot hold "
                     f"{SHORT_NAME_BY_TYPE[sz_type]} elements ({type_size(sz_type)} bytes): pass an array of "
                     f"that dtype or its raw bits as an unsigned integer array of that size")
