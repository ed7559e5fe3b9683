"""Exceptions: every failure of the C library becomes a SplitZipError carrying its szResult_t.

Each code has its own subclass, which also derives from the builtin a Python caller would catch
for that kind of failure (ValueError for bad arguments, TimeoutError for szTimeout, ...).
"""
from __future__ import annotations

import enum


class Result(enum.IntEnum):
    """szResult_t (include/splitzip.h)."""

    SUCCESS = 0
    UNHANDLED_CUDA_ERROR = 1
    SYSTEM_ERROR = 2
    INTERNAL_ERROR = 3
    INVALID_ARGUMENT = 4
    INVALID_USAGE = 5
    REMOTE_ERROR = 6
    IN_PROGRESS = 7
    CORRUPT_FRAME = 8
    TIMEOUT = 9


# The C enumerators' names, so messages read like the library's logs and docs.
_C_NAMES = {
    Result.SUCCESS: "szSuccess",
    Result.UNHANDLED_CUDA_ERROR: "szUnhandledCudaError",
    Result.SYSTEM_ERROR: "szSystemError",
    Result.INTERNAL_ERROR: "szInternalError",
    Result.INVALID_ARGUMENT: "szInvalidArgument",
    Result.INVALID_USAGE: "szInvalidUsage",
    Result.REMOTE_ERROR: "szRemoteError",
    Result.IN_PROGRESS: "szInProgress",
    Result.CORRUPT_FRAME: "szCorruptFrame",
    Result.TIMEOUT: "szTimeout",
}


class SplitZipError(Exception):
    """A SplitZip call failed. ``code`` is the szResult_t, ``message`` the library's detail
    (szGetLastError)."""

    code: Result = Result.INTERNAL_ERROR

    def __init__(self, message: str, code: int | None = None):
        if code is not None:
            self.code = Result(code)
        self.message = message
        super().__init__(f"{_C_NAMES[self.code]}: {message}")


class CudaError(SplitZipError, RuntimeError):
    """A CUDA call failed, there is no CUDA device, or the library was built without CUDA."""

    code = Result.UNHANDLED_CUDA_ERROR


class SystemCallError(SplitZipError, OSError):
    """A system call failed (file, socket, memory allocation)."""

    code = Result.SYSTEM_ERROR


class InternalError(SplitZipError, RuntimeError):
    """A bug in SplitZip: please report it."""

    code = Result.INTERNAL_ERROR


class InvalidArgumentError(SplitZipError, ValueError):
    """A bad argument: wrong dtype, non-contiguous or read-only buffer, too-small output."""

    code = Result.INVALID_ARGUMENT


class DTypeError(InvalidArgumentError, TypeError):
    """An array or tensor whose dtype SplitZip cannot use as asked."""


class InvalidUsageError(SplitZipError, RuntimeError):
    """A call that is not valid now (a mismatched send/recv pair, a closed communicator, ...)."""

    code = Result.INVALID_USAGE


class RemoteError(SplitZipError, ConnectionError):
    """The peer failed or went away."""

    code = Result.REMOTE_ERROR


class InProgressError(SplitZipError, RuntimeError):
    """A non-blocking initialization has not finished."""

    code = Result.IN_PROGRESS


class CorruptFrameError(SplitZipError, ValueError):
    """A frame failed validation: truncated, a bad field, a CRC mismatch."""

    code = Result.CORRUPT_FRAME


class OperationTimeoutError(SplitZipError, TimeoutError):
    """No progress for the communicator's timeout (a silent or stuck peer)."""

    code = Result.TIMEOUT


_BY_CODE = {cls.code: cls for cls in (CudaError, SystemCallError, InternalError, InvalidArgumentError,
                                      InvalidUsageError, RemoteError, InProgressError, CorruptFrameError,
                                      OperationTimeoutError)}


def from_code(code: int, message: str) -> SplitZipError:
    """The exception for a szResult_t (used by the extension's exception translator)."""
    try:
        cls = _BY_CODE[Result(code)]
    except (ValueError, KeyError):
        return InternalError(f"unexpected szResult_t {code}: {message}")
    return cls(message)
