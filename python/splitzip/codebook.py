"""Codebook: the exponents whose codes replace an element's exponent (paper §3.2-§3.3): 16 with
4-bit codes, or 8 with 3-bit codes (format version 2, docs/FORMAT.md "Code width")."""
from __future__ import annotations

import os
from dataclasses import dataclass

from . import _splitzip, _types, calibration


def _file_path(path: str | os.PathLike) -> str:
    """A path for the C library, which reads it up to its first NUL: refused there, as open() does."""
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if "\0" in p:
        raise ValueError("embedded null character in path")
    return p


@dataclass(frozen=True)
class Codebook:
    """A calibrated codebook for one dtype (``"bf16"``, ``"fp32"``, ``"fp16"``, ``"fp8e5m2"`` or
    ``"fp8e4m3"``).

    ``exponents[i]`` is the biased exponent encoded as code ``i`` (8-bit for bf16/fp32, 5-bit
    for fp16 and fp8 e5m2, 4-bit for fp8 e4m3); 16 of them for 4-bit codes, 8 for 3-bit codes
    (``code_bits``). ``used`` is how many entries calibration saw, the rest being padding.
    Constructing one validates it (InvalidArgumentError says which rule failed).
    """

    dtype: str
    exponents: tuple[int, ...]
    used: int = 16

    def __post_init__(self):
        object.__setattr__(self, "dtype", _types.SHORT_NAME_BY_TYPE[_types.parse(self.dtype)])
        exps = tuple(int(e) for e in self.exponents)
        if len(exps) == 16 and all(e == _UNUSED for e in exps[8:]):  # szCodebook_t's 3-bit form
            exps = exps[:8]
        object.__setattr__(self, "exponents", exps)
        if len(self.exponents) not in (8, 16) or not all(0 <= e <= 255 for e in self.exponents) or \
                not 0 <= self.used <= 255:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(f"a codebook has 16 (4-bit codes) or 8 (3-bit codes) exponents in 0..255 "
                                       f"and used in 1..16, not {self.exponents} with used={self.used}")
        _splitzip.codebook_validate(self._packed)

    @property
    def code_bits(self) -> int:
        """The width of the exponent codes: 4 (16 entries) or 3 (8 entries)."""
        return 4 if len(self.exponents) == 16 else 3

    @classmethod
    def default(cls, dtype: str = "bf16") -> Codebook:
        """The built-in codebook for dtype, calibrated on real KV caches (szCodebookDefault)."""
        return cls._unpack(_splitzip.codebook_default(_types.parse(dtype)))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Codebook:
        """Reads a codebook file (docs/FORMAT.md, "Codebook file"; `splitzip calibrate` writes them)."""
        return cls._unpack(_splitzip.codebook_load(_file_path(path)))

    @classmethod
    def from_data(cls, *arrays: object, dtype: object = None) -> Codebook:
        """Calibrates on arrays or tensors (host or CUDA): see splitzip.calibrate."""
        return cls._unpack(calibration.histogram(*arrays, dtype=dtype).codebook())

    def save(self, path: str | os.PathLike) -> None:
        """Writes the codebook file that Codebook.load and the CLI's --codebook read."""
        _splitzip.codebook_save(self._packed, _file_path(path))

    @property
    def _packed(self) -> bytes:  # szCodebook_t's: a 3-bit codebook's entries 8..15 are SZ_CODEBOOK_UNUSED
        return bytes([_types.parse(self.dtype), self.used, *self.exponents, *[_UNUSED] * (16 - len(self.exponents))])

    @classmethod
    def _unpack(cls, packed: bytes) -> Codebook:
        exps = tuple(packed[2:])
        if all(e == _UNUSED for e in exps[8:]):
            exps = exps[:8]
        return cls(_types.SHORT_NAME_BY_TYPE[packed[0]], exps, packed[1])


_UNUSED = 0xFF  # SZ_CODEBOOK_UNUSED
