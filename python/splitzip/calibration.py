"""Exponent histograms of arrays and tensors (paper §3.3): what calibration counts, on the host
or, for CUDA tensors, on the device. Below Codebook and the codec, which both build on it."""
from __future__ import annotations

from . import _buffers, _splitzip, _types
from .errors import InvalidArgumentError


def histogram_of(b: _buffers.Buffer, hist) -> None:
    if b.device is None:
        hist.accumulate(b.address, b.count)
        return
    import torch
    with torch.cuda.device(b.device):
        counts = torch.zeros(256, dtype=torch.int64, device=b.obj.device)  # unsigned long long
        _splitzip.histogram_async(b.address, b.count, b.sz_type, counts.data_ptr(),
                                  _buffers.current_stream(b.device))
        hist.add(counts.cpu().tolist())


def histogram(*arrays, dtype=None):
    """The exponent histogram (a _splitzip.Histogram) of arrays / tensors of one compressible
    dtype. Raises DTypeError (mixed or incompressible dtypes), InvalidArgumentError (no arrays, or
    no elements in them: a codebook of nothing would be padding, as the CLI's calibrate says)."""
    if not arrays:
        raise InvalidArgumentError("calibrate needs at least one array")
    buffers = [_buffers.describe(a, dtype, what=f"arrays[{i}]") for i, a in enumerate(arrays)]
    if len({b.sz_type for b in buffers}) != 1:
        from .errors import DTypeError
        raise DTypeError("calibrate takes arrays of one dtype, not "
                         f"{sorted({_types.SHORT_NAME_BY_TYPE[b.sz_type] for b in buffers})}")
    hist = _splitzip.Histogram(buffers[0].sz_type)
    for b in buffers:
        histogram_of(b, hist)
    if not any(hist.counts):
        raise InvalidArgumentError("no elements to calibrate from: the arrays are empty")
    return hist
