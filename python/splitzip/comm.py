"""Communicator: NCCL-semantics point-to-point transfers with the codec in the pipeline (paper §4).

Stream semantics follow torch's NCCL process group: an operation on CUDA tensors is enqueued on
torch's current stream of the tensor's device and the call returns; the stream (and whatever
runs after it) sees the data once the operation completes there. Operations on host arrays
(numpy, CPU tensors) block until complete. Calls to one peer are matched in order, each send
with a receive of the same element count and dtype (checked: both sides raise otherwise).
"""
from __future__ import annotations

import contextlib
import numbers
import os
import threading
import time
from typing import Iterator, Sequence

from . import _buffers, _splitzip, _types
from .codebook import Codebook
from .errors import InvalidArgumentError, InvalidUsageError, Result, from_code

_CODECS = {"off": 0, "on": 1, "auto": 2}


def _integer(value, name: str, low: int = -(1 << 31), high: int = (1 << 31) - 1) -> int:
    """value as an int within [low, high], else InvalidArgumentError (not a binding's TypeError)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise InvalidArgumentError(f"{name} must be an integer in {low}..{high}, not {value!r}")
    return int(value)


def get_unique_id() -> bytes:
    """A new unique id (szGetUniqueId, 128 bytes): call it on one rank and hand the bytes to every
    rank. It starts the rendezvous listener in this process. With SZ_COMM_ID=host:port set it
    names that address instead (rank 0 then listens there), the same on every process."""
    return _splitzip.get_unique_id()


# Groups are per thread, as szGroupStart/End are. Buffers handed to operations inside a group
# are only enqueued at the outermost group end, so they are held until then.
_group_state = threading.local()


def _held() -> list | None:
    return getattr(_group_state, "held", None)


@contextlib.contextmanager
def group() -> Iterator[None]:
    """szGroupStart/End as a context manager: operations issued inside progress together (a rank
    can send to and receive from a peer at once without deadlock). Leaving the outermost group
    blocks until host operations are complete and device operations enqueued. Groups nest."""
    outermost = _held() is None
    if outermost:
        _group_state.held = []
    _splitzip.group_start()
    try:
        yield
    finally:
        try:
            _splitzip.group_end()
        finally:
            if outermost:
                _group_state.held = None


class Communicator:
    """One rank of a SplitZip communicator (szCommInitRankConfig).

    rank, nranks: this rank (0..nranks-1) and the communicator's size; every rank calls this
      with the same unique_id (from get_unique_id on one rank).
    wire: "tcp", "ipc", "nccl" or "ib" for every pair of ranks; None: SZ_WIRE, else chosen per
      pair at init as szCommInitRankConfig does (tcp where either rank has no GPU or two processes
      share one, ipc between GPUs of one node, else nccl). Host buffers travel over tcp on every
      wire but ib, which carries them by RDMA from host slots of its own.
    codec: "on", "off" (a plain pipelined wire), "auto" (compress where it pays), or None:
      SZ_CODEC (default auto).
    codebook: the Codebook compressed slices use; None: the built-in default.
    slice_bytes, pipeline_depth: 0 for SZ_SLICE_BYTES (512 KiB) and SZ_PIPELINE_DEPTH (4).
    timeout_ms: an operation with no progress this long raises OperationTimeoutError; 0 for
      SZ_TIMEOUT_MS (60000). A peer that dies is seen at once (RemoteError).
    crc: CRC32C on every slice; None for SZ_CRC.
    blocking: False returns at once while the rendezvous runs on its own thread: wait_ready()
      (or poll ready()) before the first operation.
    """

    def __init__(self, rank: int, nranks: int, unique_id: bytes, *, wire: str | None = None,
                 codec: str | None = None, codebook: Codebook | None = None, slice_bytes: int = 0,
                 pipeline_depth: int = 0, timeout_ms: int = 0, crc: bool | None = None,
                 blocking: bool = True):
        if codec is not None and codec not in _CODECS:
            raise InvalidArgumentError(f"codec is one of {', '.join(_CODECS)} or None, not {codec!r}")
        rank, nranks = _integer(rank, "rank"), _integer(nranks, "nranks")
        slice_bytes = _integer(slice_bytes, "slice_bytes", 0, (1 << 63) - 1)
        pipeline_depth = _integer(pipeline_depth, "pipeline_depth", 0)
        timeout_ms = _integer(timeout_ms, "timeout_ms", 0)
        self._comm = _splitzip.Comm(nranks, bytes(unique_id), rank, wire, -1 if codec is None else _CODECS[codec],
                                    None if codebook is None else codebook._packed, slice_bytes,
                                    pipeline_depth, blocking, timeout_ms, -1 if crc is None else int(crc))
        self._rank, self._nranks = rank, nranks

    @classmethod
    def from_env(cls, **config) -> Communicator:
        """The rank named by SZ_RANK of SZ_NRANKS processes meeting at SZ_COMM_ID=host:port (as
        NCCL_COMM_ID), every rank with the same SZ_COMM_SECRET: without a secret the id's key would
        come from the address alone and any process that reaches it could join, so from_env
        refuses that, as the perf tools do (README, "Processes started without MPI"; or share a
        unique id: from_torch_distributed). `config` as for Communicator()."""
        missing = [v for v in ("SZ_COMM_ID", "SZ_RANK", "SZ_NRANKS") if not os.environ.get(v)]
        if missing:
            raise InvalidArgumentError(f"Communicator.from_env needs {', '.join(missing)} set")
        if not os.environ.get("SZ_COMM_SECRET"):
            raise InvalidUsageError(
                "Communicator.from_env: SZ_COMM_ID without SZ_COMM_SECRET: give every rank the same secret "
                "(e.g. SZ_COMM_SECRET=$(openssl rand -hex 16) shared by the launcher), or share a unique id "
                "(Communicator.from_torch_distributed, or get_unique_id() sent to every rank); without one, any "
                "process that reaches the address can join")
        try:
            rank, nranks = int(os.environ["SZ_RANK"]), int(os.environ["SZ_NRANKS"])
        except ValueError:
            raise InvalidArgumentError(f"SZ_RANK={os.environ['SZ_RANK']!r} and SZ_NRANKS={os.environ['SZ_NRANKS']!r} "
                                       "must be integers") from None
        return cls(rank, nranks, get_unique_id(), **config)

    @classmethod
    def from_torch_distributed(cls, group=None, **config) -> Communicator:
        """One rank per rank of a torch.distributed process group (default: the world), the
        unique id made on the group's rank 0 and broadcast through the group (gloo, nccl, ...),
        so a torchrun-started job needs nothing else. Collective over the group."""
        import torch.distributed as dist
        if not dist.is_initialized():
            raise InvalidUsageError("torch.distributed is not initialized: call init_process_group first")
        rank, nranks = dist.get_rank(group), dist.get_world_size(group)
        holder = [get_unique_id() if rank == 0 else None]
        dist.broadcast_object_list(holder, src=dist.get_global_rank(group, 0) if group is not None else 0,
                                   group=group)
        return cls(rank, nranks, holder[0], **config)

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def nranks(self) -> int:
        return self._nranks

    def ready(self) -> bool:
        """False while a non-blocking init is still running; raises its error if it failed, or
        the communicator's asynchronous error."""
        code, message = self._comm.async_error()
        if code == Result.IN_PROGRESS:
            return False
        if code != Result.SUCCESS:
            raise from_code(code, message)
        return True

    def wait_ready(self, timeout: float | None = None) -> None:
        """Waits for a non-blocking init (polling ready()); TimeoutError after `timeout` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.ready():
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"the communicator was not ready within {timeout} s")
            time.sleep(0.001)

    def send(self, x, peer: int, dtype=None) -> None:
        """Sends array / tensor x (contiguous, any shape, any SplitZip dtype: bf16, fp16, fp8 e4m3,
        fp8 e5m2 and fp32 compress, others travel raw) to rank `peer`, which receives it with recv of the same
        element count and dtype. CUDA tensors: enqueued on the current stream; x must not be
        modified until that stream passes this point. Host arrays: returns once the peer has
        the data (inside a group: at the group's end). dtype: as in splitzip.encode (None: from x;
        e.g. "bf16" sends a uint16 view of BF16 bits as BF16, so that it compresses)."""
        b = self._buffer(x, "x", dtype=dtype)
        self._comm.send(b.address, b.count, b.sz_type, _integer(peer, "peer"), self._stream(b))

    def recv(self, out, peer: int, dtype=None) -> None:
        """Receives into array / tensor `out` (writable, contiguous; the element count and dtype
        of the matching send; raw-bits integer dtypes such as uint16 are not interchangeable with
        bf16 here: both sides must name the same type) from rank `peer`. CUDA tensors: enqueued
        on the current stream, which sees the data once it passes this point. Host arrays:
        returns once `out` holds the data (inside a group: at the group's end). dtype: as in send."""
        b = self._buffer(out, "out", writable=True, dtype=dtype)
        self._comm.recv(b.address, b.count, b.sz_type, _integer(peer, "peer"), self._stream(b))

    def send_blocks(self, blocks: Sequence, peer: int, dtype=None) -> None:
        """Sends a list of arrays / tensors (e.g. a request's KV blocks, per layer K and V) as
        one message through one pipeline (szSendv), in list order. All blocks share one dtype
        and one device (or are all host); shapes may differ. The receiver's recv_blocks list must
        hold the same total element count; its split into blocks may differ. dtype: as in send."""
        buffers = self._blocks(blocks, "blocks", writable=False, dtype=dtype)
        self._comm.sendv([b.address for b in buffers], [b.count for b in buffers], buffers[0].sz_type,
                         _integer(peer, "peer"), self._stream(buffers[0]))

    def recv_blocks(self, blocks: Sequence, peer: int, dtype=None) -> None:
        """Receives one send_blocks message into a list of writable arrays / tensors (szRecvv),
        filled in list order. Same rules as send_blocks."""
        buffers = self._blocks(blocks, "blocks", writable=True, dtype=dtype)
        self._comm.recvv([b.address for b in buffers], [b.count for b in buffers], buffers[0].sz_type,
                         _integer(peer, "peer"), self._stream(buffers[0]))

    group = staticmethod(group)

    def stats(self) -> dict[str, int | float]:
        """This rank's counters since init (szCommGetStats): raw_bytes and wire_bytes sent,
        escapes, slices, compressed_slices, recalibrations (codebook switches on drift),
        escape_rate (escapes per element of the compressed frames sent), recv_raw_bytes,
        recv_wire_bytes and recv_slices received, and the seconds spent in each stage."""
        return self._comm.stats()

    def abort(self) -> None:
        """Frees the communicator, failing outstanding operations (szCommAbort); safe after any
        error. Operations on it afterwards raise InvalidUsageError. Called from another thread
        while a send or recv blocks on this communicator, it waits for that call to return (by
        the timeout at most) before freeing; a non-blocking init still running is waited for
        too (at most the timeout)."""
        self._comm.abort()

    def close(self) -> None:
        """Waits for outstanding device operations, then frees the communicator (szCommFinalize,
        szCommDestroy); raises the communicator's error if it had one. Calls blocked on it in
        other threads are waited for, as with abort."""
        self._comm.close()

    def __enter__(self) -> Communicator:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._comm.closed:
            return
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _buffer(self, x, what: str, writable: bool = False, dtype=None) -> _buffers.Buffer:
        b = _buffers.describe(x, dtype, writable=writable, what=what)
        held = _held()
        if held is not None:
            held.append(b.obj)
        return b

    def _blocks(self, blocks: Sequence, what: str, writable: bool, dtype=None) -> list[_buffers.Buffer]:
        if len(blocks) == 0:
            raise InvalidArgumentError(f"{what} is empty")
        buffers = [self._buffer(x, f"{what}[{i}]", writable, dtype) for i, x in enumerate(blocks)]
        first = buffers[0]
        for i, b in enumerate(buffers):
            if b.sz_type != first.sz_type:
                raise InvalidArgumentError(f"{what}[{i}] is {_types.SHORT_NAME_BY_TYPE[b.sz_type]}, {what}[0] "
                                           f"{_types.SHORT_NAME_BY_TYPE[first.sz_type]}: one message has one dtype")
            if b.device != first.device:
                raise InvalidArgumentError(f"{what}[{i}] and {what}[0] are on different devices")
        return buffers

    @staticmethod
    def _stream(b: _buffers.Buffer) -> int:
        if b.device is None:
            return 0
        import torch
        stream = torch.cuda.current_stream(b.device)
        # The caching allocator must not hand x's memory to other streams before the operation
        # has passed on this one (as torch's NCCL process group records its tensors).
        b.obj.record_stream(stream)
        return stream.cuda_stream
