"""The codec on arrays and tensors: encode, decode, frame_info, stats, calibrate (paper §3).

Host inputs (numpy arrays, CPU tensors) use the CPU codec; CUDA tensors use the device codec on
torch's current stream of their device, zero-copy. Frames are byte-identical either way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _buffers, _splitzip, _types
from .calibration import histogram_of
from .codebook import Codebook
from .errors import CorruptFrameError, InvalidArgumentError


@dataclass(frozen=True)
class FrameInfo:
    """What a frame's header says (szFrameGetInfo)."""

    dtype: str
    count: int              # elements
    frame_bytes: int
    escapes: int
    raw: bool               # payload stored raw (incompressible type or data)
    crc: bool               # carries CRC32C checksums
    codebook: Codebook | None


@dataclass(frozen=True)
class ExponentStats:
    """Exponent statistics of one tensor (paper Table 1) and the frame SplitZip makes of it."""

    dtype: str
    count: int
    histogram: tuple[int, ...]   # elements per biased exponent (256 entries)
    entropy_bits: float
    distinct: int
    top8_coverage: float         # share of elements whose exponent is among the 8 most frequent
    top16_coverage: float
    codebook: Codebook
    escapes: int                 # under `codebook`, counted by actually encoding
    escape_rate: float
    frame_bytes: int
    ratio: float                 # raw bytes / frame bytes


def _codebook_arg(codebook: Codebook | str | None) -> bytes | None:
    if codebook is None:
        return None
    if not isinstance(codebook, Codebook):
        codebook = Codebook.load(codebook)
    return codebook._packed


def encode(x, dtype=None, codebook: Codebook | str | None = None, *, crc: bool = False,
           calibrate: bool = False):
    """Compresses x into one SplitZip frame (docs/FORMAT.md).

    x: a C-contiguous numpy array or a contiguous torch tensor, any shape (the frame keeps only
      the element count). bf16, fp32, fp16, fp8 e5m2 and fp8 e4m3 compress, on the host and on
      CUDA tensors alike (the GPU codec's frames are the CPU codec's, byte for byte); other dtypes
      are stored raw. On a CUDA tensor calibrate=True stores fp16 and fp8 e4m3 raw: pass a
      Codebook from calibrate() instead.
    dtype: None (from x: torch.bfloat16 / float8_e5m2 / float8_e4m3fn / float16 / float32,
      ml_dtypes.bfloat16 / float8_e5m2, np.float32, ...) or "bf16" / "fp8e5m2" / "fp8e4m3" /
      "fp16" / "fp32" (or any SplitZip type name)
      for raw bits in an integer array of the same element size, e.g. bf16 as uint16.
    codebook: a Codebook, a codebook file path, or None for the built-in default (or, with
      calibrate=True, one computed from x itself).
    crc: store CRC32C checksums, verified by decode (host codec only).

    Returns bytes for host x. For a CUDA tensor, a uint8 CUDA tensor on x's device, encoded on
    torch's current stream; learning the frame size synchronizes that stream once.
    Raises DTypeError, InvalidArgumentError (non-contiguous x, a codebook of another dtype),
    CudaError.
    """
    b = _buffers.describe(x, dtype)
    flags = (_splitzip.ENCODE_CRC if crc else 0) | (_splitzip.ENCODE_CALIBRATE if calibrate else 0)
    packed = _codebook_arg(codebook)
    if b.device is None:
        return _splitzip.encode(b.address, b.count, b.sz_type, packed, flags)
    return _encode_device(b, packed, flags)


def _encode_device(b: _buffers.Buffer, packed: bytes | None, flags: int):
    import torch
    with torch.cuda.device(b.device):
        stream = _buffers.current_stream(b.device)
        capacity = _splitzip.encode_max_size(b.count, b.sz_type)
        temp_bytes = _splitzip.encode_temp_size(b.count, b.sz_type)
        out = torch.empty(capacity, dtype=torch.uint8, device=b.obj.device)
        temp = torch.empty(max(temp_bytes, 1), dtype=torch.uint8, device=b.obj.device)
        size = torch.zeros(1, dtype=torch.int64, device=b.obj.device)  # written as a uint64_t
        _splitzip.encode_async(b.address, b.count, b.sz_type, packed, flags, out.data_ptr(), capacity,
                               size.data_ptr(), temp.data_ptr(), temp_bytes, stream)
        return out[: int(size.item())]


def frame_info(frame) -> FrameInfo:
    """Parses and validates a frame's header. frame: bytes-like, or a uint8 array / tensor (a
    CUDA tensor's header is copied to the host, synchronizing the current stream).
    Raises CorruptFrameError."""
    b = _buffers.frame_bytes(frame)
    if b.device is None:
        return _info(_splitzip.frame_info(b.address, b.nbytes))
    if b.nbytes < _splitzip.FRAME_HEADER_BYTES:
        raise CorruptFrameError(f"a frame has a {_splitzip.FRAME_HEADER_BYTES}-byte header; this one holds "
                                f"{b.nbytes} bytes")
    header = bytes(b.obj[: _splitzip.FRAME_HEADER_BYTES].cpu().numpy())
    return _info(_splitzip.frame_header_info(header, b.nbytes))


def _info(d: dict) -> FrameInfo:
    cb = Codebook._unpack(d["codebook"]) if d["codebook"] is not None else None
    return FrameInfo(_types.SHORT_NAME_BY_TYPE[d["type"]], d["count"], d["frame_bytes"], d["escapes"],
                     d["raw"], d["crc"], cb)


def decode(frame, out=None, *, like=None):
    """Decompresses a frame, bit-exact.

    frame: bytes-like, or a uint8 numpy array / torch tensor (CPU or CUDA).
    like: without out, the kind of array to return: "torch" or a torch tensor (e.g. the tensor
      that was encoded: encode of a CPU tensor returns bytes) for a torch tensor, "numpy" or a
      numpy array for numpy; None: the frame's own kind.
    out: None, or a writable contiguous array / tensor of exactly the frame's element count, of
      the frame's dtype or an integer dtype of its size (uint16 for bf16), on the frame's device
      (any shape: elements fill it in C order).
    Returns out, or a new 1-D array: numpy (bf16 and fp8 as ml_dtypes) for a bytes-like or numpy
    frame, a torch tensor on the frame's device for a tensor frame. A CUDA frame decodes on
    torch's current stream; its header is read on the host and the decoder's verdict checked,
    each synchronizing that stream.
    Raises CorruptFrameError (nothing is read or written out of bounds), InvalidArgumentError
    (out of the wrong size, dtype, device, or read-only), DTypeError.
    """
    fb = _buffers.frame_bytes(frame)
    info = frame_info(fb.obj)
    sz_type = _types.parse(info.dtype)
    if out is None:
        out = _new_output(fb, sz_type, info.count, _wants_torch(like, fb))
    ob = _buffers.describe(out, _types.SHORT_NAME_BY_TYPE[sz_type], writable=True, what="out")
    if ob.count != info.count:
        raise InvalidArgumentError(f"out holds {ob.count} {info.dtype} elements ({ob.nbytes} bytes); the frame "
                                   f"decodes to {info.count}")
    if ob.device != fb.device:
        where = lambda d: "host memory" if d is None else f"cuda:{d}"  # noqa: E731
        raise InvalidArgumentError(f"out is in {where(ob.device)}, the frame in {where(fb.device)}")
    if fb.device is None:
        _splitzip.decode(fb.address, fb.nbytes, ob.address, ob.nbytes)
    else:
        _decode_device(fb, ob)
    return out


def _wants_torch(like, fb: _buffers.Buffer) -> bool:
    if like is None:
        return fb.is_torch
    if isinstance(like, str):
        if like not in ("torch", "numpy"):
            raise InvalidArgumentError(f"like={like!r}: use \"torch\", \"numpy\", an array or a tensor")
        wants = like == "torch"
    else:
        wants = type(like).__module__.split(".")[0] == "torch"
        if not wants and not isinstance(like, np.ndarray):
            raise InvalidArgumentError(f"like is a {type(like).__name__}: use \"torch\", \"numpy\", an array or a tensor")
    if not wants and fb.device is not None:
        raise InvalidArgumentError("like asks for numpy, but the frame is in CUDA memory")
    return wants


def _new_output(fb: _buffers.Buffer, sz_type: int, count: int, as_torch: bool):
    if not as_torch:
        return np.empty(count, dtype=_types.numpy_dtype(sz_type))
    import torch
    device = fb.obj.device if fb.is_torch else "cpu"
    return torch.empty(count, dtype=_types.torch_dtype(sz_type), device=device)


def _decode_device(fb: _buffers.Buffer, ob: _buffers.Buffer) -> None:
    import torch
    with torch.cuda.device(fb.device):
        status = torch.zeros(1, dtype=torch.int32, device=fb.obj.device)
        _splitzip.decode_async(fb.address, fb.nbytes, ob.address, ob.nbytes, status.data_ptr(),
                               _buffers.current_stream(fb.device))
        verdict = int(status.item())
    if verdict != 0:
        from .errors import Result, from_code
        raise from_code(verdict, "a compressed bf16, fp32 or fp8 e5m2 frame with 3-bit codes: the GPU decoder "
                                 "does not read it; decode the frame's bytes on the host"
                        if verdict == Result.INVALID_USAGE else "the device decoder rejected the frame")


def calibrate(*arrays, dtype=None) -> Codebook:
    """A codebook from the exponent histogram of one or more arrays / tensors (host or CUDA) of
    one compressible dtype: the most frequent exponents, 16 with 4-bit codes or for fp16 and fp8
    e4m3 8 with 3-bit codes where that predicts the smaller frame (paper §3.3; szCodebookFromHistogram).
    Raises DTypeError (mixed or incompressible dtypes), InvalidArgumentError (no arrays, or
    only empty ones)."""
    return Codebook.from_data(*arrays, dtype=dtype)


def stats(x, dtype=None, codebook: Codebook | str | None = None) -> ExponentStats:
    """Exponent statistics of x (paper Table 1: histogram, entropy, top-8 / top-16 coverage) and
    the escapes, frame size and ratio under `codebook` (default: the built-in one), from an
    actual encode. x, dtype as in encode; x must be of a compressible dtype."""
    b = _buffers.describe(x, dtype)
    hist = _splitzip.Histogram(b.sz_type)
    histogram_of(b, hist)
    counts = tuple(int(c) for c in hist.counts)
    cb = Codebook.default(_types.SHORT_NAME_BY_TYPE[b.sz_type]) if codebook is None else (
        codebook if isinstance(codebook, Codebook) else Codebook.load(codebook))
    info = frame_info(encode(x, dtype, cb))
    ordered = sorted(counts, reverse=True)
    n = max(b.count, 1)
    entropy = -sum(c / n * math.log2(c / n) for c in counts if c)
    return ExponentStats(_types.SHORT_NAME_BY_TYPE[b.sz_type], b.count, counts, entropy,
                         sum(1 for c in counts if c), sum(ordered[:8]) / n, sum(ordered[:16]) / n, cb,
                         info.escapes, info.escapes / n, info.frame_bytes,
                         b.nbytes / info.frame_bytes)
