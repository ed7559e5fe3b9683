"""SplitZip: lossless KV-cache compression (BF16, FP8 E5M2, FP32) and an NCCL-style
point-to-point communicator that fuses the codec into its transfers (arXiv 2605.01708).

    import splitzip
    frame = splitzip.encode(kv)              # numpy / ml_dtypes arrays, torch tensors (CPU, CUDA)
    assert (splitzip.decode(frame) == kv.ravel()).all()

See splitzip.codec, splitzip.comm and the repository's README.md.
"""
from ._splitzip import HAVE_CUDA, VERSION_CODE
from .codebook import Codebook
from .codec import ExponentStats, FrameInfo, calibrate, decode, encode, frame_info, stats
from .comm import Communicator, get_unique_id, group
from .errors import (CorruptFrameError, CudaError, DTypeError, InProgressError, InternalError,
                     InvalidArgumentError, InvalidUsageError, OperationTimeoutError, RemoteError, Result,
                     SplitZipError, SystemCallError)

__version__ = f"{VERSION_CODE // 10000}.{VERSION_CODE // 100 % 100}.{VERSION_CODE % 100}"

__all__ = ["HAVE_CUDA", "Codebook", "Communicator", "CorruptFrameError", "CudaError", "DTypeError",
           "ExponentStats", "FrameInfo", "InProgressError", "InternalError", "InvalidArgumentError",
           "InvalidUsageError", "OperationTimeoutError", "RemoteError", "Result", "SplitZipError",
           "SystemCallError", "calibrate", "decode", "encode", "frame_info", "get_unique_id", "group",
           "stats"]
