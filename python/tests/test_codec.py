"""The codec on host arrays and tensors: bit-exact round trips, frame info, codebooks, stats,
and hostile inputs that must raise clear exceptions."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import splitzip as sz
from conftest import bits, require_cuda

RNG = np.random.default_rng(15)


def kv_like(n: int, dtype) -> np.ndarray:
    """Activations shaped like KV values (mostly |x| < 4), plus the hard cases: zeros, signed
    zeros, subnormals, huge values, infinities and NaNs, whose exponents escape the codebook."""
    x = RNG.standard_normal(n).astype(np.float32) * 0.7
    x[:: 97] = 0.0
    x[1:: 101] = -0.0
    x[2:: 103] = 1e-39
    x[3:: 107] = 3e30
    x[4:: 109] = np.inf
    x[5:: 113] = np.nan
    return x.astype(dtype)


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 300_001])
def test_bf16_ml_dtypes_round_trip(n):
    x = kv_like(n, ml_dtypes.bfloat16)
    frame = sz.encode(x)
    assert isinstance(frame, bytes)
    y = sz.decode(frame)
    assert y.dtype == ml_dtypes.bfloat16 and y.shape == (n,)
    assert (bits(y) == bits(x)).all()
    if n >= 1000:
        assert len(frame) < x.nbytes  # it compresses


def test_bf16_as_uint16_needs_dtype_and_matches_ml_dtypes():
    x = kv_like(5000, ml_dtypes.bfloat16)
    raw = x.view(np.uint16)
    with pytest.raises(sz.DTypeError, match="uint16"):
        sz.encode(raw)
    frame = sz.encode(raw, dtype="bf16")
    assert frame == sz.encode(x)
    out = np.empty_like(raw)
    assert sz.decode(frame, out=out) is out
    assert (out == raw).all()


@pytest.mark.parametrize("dtype,raw", [(ml_dtypes.float8_e5m2, np.uint8), (np.float32, np.uint32)])
def test_fp8_and_fp32_round_trip(dtype, raw):
    x = kv_like(20_000, dtype)
    frame = sz.encode(x)
    assert sz.frame_info(frame).dtype == {np.uint8: "fp8e5m2", np.uint32: "fp32"}[raw]
    assert (bits(sz.decode(frame)) == bits(x)).all()
    name = sz.frame_info(frame).dtype
    assert sz.encode(x.view(raw), dtype=name) == frame


@pytest.mark.parametrize("dtype,name", [(np.float16, "fp16"), (ml_dtypes.float8_e4m3fn, "fp8e4m3")])
def test_fp16_and_e4m3_compress_with_calibrated_widths(dtype, name):
    # Format version 2 (docs/FORMAT.md "Code width"): the host codec compresses both; calibration
    # picks 3-bit codes where the top 8 exponents cover the data.
    x = RNG.standard_normal(200_000).astype(np.float32) * 0.7  # no zeros: E4M3's default has no code for them
    if name == "fp8e4m3":  # an FP8 KV cache's per-tensor scale: amax -> 448 (the default codebook's)
        x = x * (448 / np.abs(x).max())
    x = x.astype(dtype)
    frame = sz.encode(x)
    info = sz.frame_info(frame)
    assert info.dtype == name and not info.raw
    assert (bits(sz.decode(frame)) == bits(x)).all()
    cb = sz.calibrate(x)
    assert cb.dtype == name and cb.code_bits in (3, 4) and len(cb.exponents) == 2 ** cb.code_bits
    if name == "fp8e4m3":
        assert cb.code_bits == 3 and sz.Codebook.default(name).code_bits == 3
        # szCodebook_t's form of a 3-bit codebook (entries 8..15 SZ_CODEBOOK_UNUSED) is the same codebook
        assert sz.Codebook(name, cb.exponents + (0xFF,) * 8, cb.used) == cb
    tight = sz.encode(x, calibrate=True)
    assert len(tight) <= len(frame) and frame[4] == 2 and tight[4] == 2  # version 2 frames
    assert (bits(sz.decode(tight)) == bits(x)).all()
    assert sz.frame_info(tight).codebook == cb


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_incompressible_types_travel_raw(dtype):
    x = (RNG.standard_normal(999) * 50).astype(dtype)
    frame = sz.encode(x)
    info = sz.frame_info(frame)
    assert info.raw and info.count == 999 and info.codebook is None
    y = sz.decode(frame)
    assert y.dtype == np.dtype(dtype) and (bits(y) == bits(x)).all()


def test_shape_is_not_kept_but_out_gives_it():
    x = kv_like(2 * 3 * 40, ml_dtypes.bfloat16).reshape(2, 3, 40)
    out = np.empty((2, 3, 40), ml_dtypes.bfloat16)
    sz.decode(sz.encode(x), out=out)
    assert (bits(out) == bits(x)).all()
    assert sz.decode(sz.encode(x)).shape == (240,)


def test_crc_frames_and_corruption():
    x = kv_like(10_000, ml_dtypes.bfloat16)
    frame = bytearray(sz.encode(x, crc=True))
    assert sz.frame_info(frame).crc
    assert (bits(sz.decode(frame)) == bits(x)).all()
    frame[len(frame) // 2] ^= 0x40
    with pytest.raises(sz.CorruptFrameError, match="CRC") as e:
        sz.decode(frame)
    assert e.value.code == sz.Result.CORRUPT_FRAME and isinstance(e.value, ValueError)


def test_truncated_and_garbage_frames():
    frame = sz.encode(kv_like(10_000, ml_dtypes.bfloat16))
    for bad in (frame[:10], frame[:-1], b"\0" * 200, bytes(RNG.integers(0, 256, 500, dtype=np.uint8))):
        with pytest.raises(sz.CorruptFrameError):
            sz.decode(bad)


def test_frames_in_numpy_and_memoryview():
    x = kv_like(3000, ml_dtypes.bfloat16)
    frame = sz.encode(x)
    for f in (np.frombuffer(frame, np.uint8), memoryview(frame), bytearray(frame)):
        assert (bits(sz.decode(f)) == bits(x)).all()


def test_hostile_inputs_raise_clearly():
    x = kv_like(1000, ml_dtypes.bfloat16)
    with pytest.raises(sz.InvalidArgumentError, match="not C-contiguous"):
        sz.encode(x[::2])
    with pytest.raises(sz.DTypeError, match="cannot hold bf16"):
        sz.encode(x.astype(np.float16), dtype="bf16")
    with pytest.raises(sz.DTypeError, match="cannot hold fp32"):
        sz.encode(x.view(np.uint16), dtype="fp32")
    with pytest.raises(sz.DTypeError, match="unknown SplitZip dtype"):
        sz.encode(x, dtype="bf17")
    with pytest.raises(sz.DTypeError, match="no type for"):
        sz.encode(np.zeros(4, np.complex64))
    with pytest.raises(sz.InvalidArgumentError, match="pass a numpy array"):
        sz.encode([1.0, 2.0])
    frame = sz.encode(x)
    with pytest.raises(sz.InvalidArgumentError, match="decodes to 1000"):
        sz.decode(frame, out=np.empty(999, ml_dtypes.bfloat16))
    with pytest.raises(sz.DTypeError):
        sz.decode(frame, out=np.empty(1000, np.float16))
    with pytest.raises(sz.InvalidArgumentError, match="read-only"):
        sz.decode(frame, out=np.frombuffer(bytes(2000), ml_dtypes.bfloat16))
    with pytest.raises(sz.InvalidArgumentError, match="not C-contiguous"):
        sz.decode(frame, out=np.empty(2000, ml_dtypes.bfloat16)[::2])
    with pytest.raises(sz.InvalidArgumentError):  # the library's own check: a codebook of fp32
        sz.encode(x, codebook=sz.Codebook.default("fp32"))


def test_arrays_whose_bytes_are_not_their_elements_are_refused(tmp_path):
    # Object and structured dtypes (an object field's bytes are pointers: decoding into one
    # crashed), non-native byte order (encoded byte-swapped), and one float type's ml_dtypes
    # array standing for another's bits (decoded to other values) all raise DTypeError; raw
    # bits still travel in integer arrays of the same size.
    frame = sz.encode(np.arange(1, 3, dtype=np.uint64) * 12345)
    for out in (np.empty(2, dtype=[("a", "O")]), np.empty(2, dtype=[("a", "<u8")]), np.empty(2, dtype=object)):
        with pytest.raises(sz.DTypeError):
            sz.decode(frame, out=out)
    with pytest.raises(sz.DTypeError):
        sz.encode(np.array([(1,), ("x",)], dtype=[("a", "O")]), dtype="uint64")
    big = np.linspace(1, 2, 64).astype(">f4")
    with pytest.raises(sz.DTypeError, match="byte order"):
        sz.encode(big)
    with pytest.raises(sz.DTypeError, match="byte order"):
        sz.encode(np.arange(8, dtype=">u2"), dtype="bf16")
    with pytest.raises(sz.DTypeError, match="byte order"):
        sz.decode(sz.encode(big.astype("<f4")), out=np.empty(64, ">f4"))
    assert np.array_equal(sz.decode(sz.encode(big.astype("=f4"))), big.astype("=f4"))
    half = np.array([1.0, 2.0, -3.5], np.float16)
    with pytest.raises(sz.DTypeError):
        sz.decode(sz.encode(half), out=np.empty(3, ml_dtypes.bfloat16))
    with pytest.raises(sz.DTypeError):
        sz.encode(half.astype(ml_dtypes.bfloat16), dtype="fp16")
    with pytest.raises(sz.DTypeError):
        sz.decode(sz.encode(np.arange(4, dtype=np.uint8)), out=np.empty(4, ml_dtypes.float8_e4m3fn))
    back = sz.decode(sz.encode(half), out=np.empty(3, np.uint16))  # raw bits: still fine
    assert np.array_equal(back, half.view(np.uint16))
    # A path with a NUL was cut at it by the C library: refused as open() refuses it.
    with pytest.raises(ValueError, match="null"):
        sz.Codebook.default("bf16").save(str(tmp_path / "x\0.codebook"))
    with pytest.raises(ValueError, match="null"):
        sz.Codebook.load(str(tmp_path / "x\0.codebook"))
    assert not (tmp_path / "x").exists()


def test_codebook_default_validation_and_files(tmp_path):
    cb = sz.Codebook.default("bf16")
    assert cb.dtype == "bf16" and len(cb.exponents) == 16 and cb.used == 16
    path = tmp_path / "kv.codebook"
    cb.save(path)
    assert sz.Codebook.load(path) == cb
    with pytest.raises(sz.InvalidArgumentError, match="appears twice"):
        sz.Codebook("bf16", (127,) * 16)
    with pytest.raises(sz.InvalidArgumentError):
        sz.Codebook("fp8e5m2", tuple(range(100, 116)))  # fp8 exponents are 5-bit
    with pytest.raises(sz.InvalidArgumentError):
        sz.Codebook("int32", tuple(range(16)))
    (tmp_path / "bad.codebook").write_text("not a codebook\n")
    with pytest.raises(sz.InvalidArgumentError):
        sz.Codebook.load(tmp_path / "bad.codebook")
    with pytest.raises(sz.SystemCallError):
        sz.Codebook.load(tmp_path / "missing.codebook")


def test_calibrate_and_encode_with_the_codebook(tmp_path):
    # Data whose exponents sit far from the default codebook's: calibration must find them.
    x = (kv_like(50_000, np.float32) * 1e-6).astype(ml_dtypes.bfloat16)
    cb = sz.calibrate(x)
    assert cb == sz.Codebook.from_data(x[:25_000], x[25_000:])
    default, tuned = sz.encode(x), sz.encode(x, codebook=cb)
    assert len(tuned) < len(default)
    assert sz.frame_info(tuned).codebook == cb
    assert sz.encode(x, calibrate=True) == tuned
    cb.save(tmp_path / "c")
    assert sz.encode(x, codebook=str(tmp_path / "c")) == tuned
    assert (bits(sz.decode(tuned)) == bits(x)).all()
    with pytest.raises(sz.DTypeError, match="one dtype"):
        sz.calibrate(x, x.astype(np.float32))
    with pytest.raises(sz.InvalidArgumentError):
        sz.calibrate(np.zeros(10, np.int32))
    with pytest.raises(sz.InvalidArgumentError, match="no elements"):  # was a codebook of padding
        sz.calibrate(np.empty(0, ml_dtypes.bfloat16), np.empty((0, 4), ml_dtypes.bfloat16))


def test_stats():
    x = kv_like(100_000, ml_dtypes.bfloat16)
    s = sz.stats(x)
    assert s.count == 100_000 and sum(s.histogram) == 100_000 and s.dtype == "bf16"
    assert 0 < s.top8_coverage <= s.top16_coverage <= 1 and 0 < s.entropy_bits < 8
    assert s.frame_bytes == len(sz.encode(x)) and s.ratio == pytest.approx(x.nbytes / s.frame_bytes)
    assert s.escapes == sz.frame_info(sz.encode(x)).escapes and s.escape_rate < 0.1


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    for dtype in (torch.bfloat16, torch.float8_e5m2, torch.float32, torch.int64, torch.float16):
        t = torch.from_numpy(kv_like(4096, np.float32)).to(dtype)
        frame = sz.encode(t)
        assert isinstance(frame, bytes)
        framed = torch.frombuffer(bytearray(frame), dtype=torch.uint8)
        y = sz.decode(framed)
        assert isinstance(y, torch.Tensor) and y.dtype == dtype and (bits(y) == bits(t)).all()
        out = torch.empty(64, 64, dtype=dtype)
        sz.decode(frame, out=out)
        assert (bits(out) == bits(t)).all()
        for like in ("torch", t):  # bytes from a CPU tensor decode back to a tensor
            y = sz.decode(frame, like=like)
            assert isinstance(y, torch.Tensor) and y.dtype == dtype and (bits(y) == bits(t)).all()
        assert isinstance(sz.decode(framed, like="numpy"), np.ndarray)
    with pytest.raises(sz.InvalidArgumentError, match="like"):
        sz.decode(frame, like="jax")
    t = torch.randn(64, 64, dtype=torch.bfloat16)
    assert sz.encode(t.view(torch.int16), dtype="bf16") == sz.encode(t)
    with pytest.raises(sz.InvalidArgumentError, match="not contiguous"):
        sz.encode(t.t())
    with pytest.raises(sz.DTypeError):
        sz.encode(t.view(torch.int16))
    assert sz.calibrate(t) == sz.calibrate(t.float().numpy().astype(ml_dtypes.bfloat16))


def test_cuda_fp16_and_e4m3_frames_are_the_hosts():
    # The GPU codec's format version 2 frames (kernels/encode_narrow.cu): byte for byte the CPU
    # codec's, with the calibrated codebook (3-bit codes where they win), and decoded on the GPU.
    torch = require_cuda()
    g = torch.Generator().manual_seed(5)
    h = (torch.randn(1 << 16, generator=g) * 0.5).to(torch.float16)
    for x in (h, h.float().clamp(-448, 448).to(torch.float8_e4m3fn)):
        cb = sz.calibrate(x)
        host = sz.encode(x, codebook=cb)
        assert not sz.frame_info(host).raw and host[4] == 2  # compressed, version 2
        dev = sz.encode(x.cuda(), codebook=cb)
        assert dev.is_cuda and bytes(dev.cpu().numpy()) == host
        back = sz.decode(dev)
        assert back.is_cuda and back.dtype == x.dtype
        assert torch.equal(back.cpu().view(torch.uint8), x.view(torch.uint8))


def test_cuda_tensors_on_the_current_stream():
    torch = require_cuda()
    t = torch.randn(1 << 20, dtype=torch.bfloat16, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        frame = sz.encode(t)
        assert frame.is_cuda and frame.dtype == torch.uint8
        y = sz.decode(frame)
    stream.synchronize()
    assert torch.equal(y.view(torch.int16), t.view(torch.int16))
    host = sz.encode(t.cpu())
    assert bytes(frame.cpu().numpy()) == host  # the device and host codecs write the same frames
    assert sz.calibrate(t) == sz.calibrate(t.cpu())
    bad = frame.clone()
    bad[: sz._splitzip.FRAME_HEADER_BYTES] = 0
    with pytest.raises(sz.CorruptFrameError):
        sz.decode(bad)
