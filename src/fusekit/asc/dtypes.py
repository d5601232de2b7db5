"""Data types of the Ascend C programming model, named as pyasc names them.

``bfloat16`` is a simulator extension: pyasc 1.1.1 has no bfloat16 (``docs/pyasc-api.md``), Ascend C
does (``bfloat16_t``). It is backed by ``ml_dtypes.bfloat16``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class DataType:
    """An element type: a name, its numpy dtype and its size in bytes (``sizeof()``)."""

    __slots__ = ("name", "np", "_size")

    def __new__(cls, name: str, np_dtype=None):
        """``asc.DataType("int32")`` (pyasc's spelling, name only) is the existing ``asc.int32``."""
        if np_dtype is None:
            known = {**_BY_NAME, "float64": float64, "double": float64, "int_": int32, "half": float16,
                     "float_": float32, "void": void}
            if name not in known:
                raise TypeError(f"asc.DataType({name!r}): no such type; use one of: {', '.join(sorted(known))}")
            return known[name]
        return super().__new__(cls)

    def __init__(self, name: str, np_dtype=None) -> None:
        if np_dtype is None:  # an existing type, returned by __new__
            return
        self.name = name
        self.np = np.dtype(np_dtype)
        self._size = self.np.itemsize

    def sizeof(self) -> int:
        """Size of one element in bytes, like C++ ``sizeof(T)``."""
        return self._size

    @property
    def is_float(self) -> bool:
        return self.name in _FLOAT_NAMES

    def __repr__(self) -> str:
        return f"asc.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


float16 = half = DataType("float16", np.float16)
float32 = float_ = DataType("float32", np.float32)
bfloat16 = DataType("bfloat16", ml_dtypes.bfloat16)
int8 = DataType("int8", np.int8)
int16 = DataType("int16", np.int16)
int32 = DataType("int32", np.int32)
int64 = DataType("int64", np.int64)
uint8 = DataType("uint8", np.uint8)
uint16 = DataType("uint16", np.uint16)
uint32 = DataType("uint32", np.uint32)
uint64 = DataType("uint64", np.uint64)

# pyasc's scalar-only names (core/dtype.py): ``int_`` is int32; ``float64`` / ``double`` and ``void`` type kernel
# scalars and pointers, never a tensor's elements (no vector instruction or DataCopy takes them), so they stay out of
# ALL: a float64 numpy argument is still refused as a GM buffer (from_numpy)
int_ = int32
float64 = double = DataType("float64", np.float64)
void = DataType("void", np.void)

_FLOAT_NAMES = frozenset({"float16", "float32", "bfloat16", "float64"})
ALL = (float16, float32, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
_BY_NAME = {dt.name: dt for dt in ALL}
_BY_NP = {dt.np: dt for dt in ALL}


def from_name(name: str) -> DataType:
    """The DataType called ``name`` (``"float16"``, ``"bfloat16"``, ...); KeyError if none."""
    return _BY_NAME[name]


def from_numpy(np_dtype) -> DataType:
    """The DataType of a numpy dtype (either byte order).

    Raises:
        TypeError: the dtype has no Ascend C counterpart (float64, complex, bool, object, ...).
    """
    dt = _BY_NP.get(np.dtype(np_dtype).newbyteorder("="))
    if dt is None:
        names = ", ".join(_BY_NAME)
        raise TypeError(f"numpy dtype {np.dtype(np_dtype)} has no Ascend C counterpart; use one of: {names}")
    return dt


def as_dtype(value) -> DataType:
    """Accept an asc DataType, a numpy dtype or a dtype name."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value == "half":
        return float16
    return from_numpy(value)


def number(value, dtype: DataType):
    """pyasc's ``asc.number(v, dtype)``: a scalar of ``dtype``, returned as a Python number."""
    return to_scalar(value, dtype).item()


def nearest(x, dtype) -> np.ndarray:
    """Array ``x`` rounded once to nearest, ties to even, into numpy ``dtype``, the same bits with every
    ml_dtypes version.

    float64 -> bfloat16 goes through float32 rounded to odd, which keeps the second rounding exact (float32
    has at least p + 2 bits for bfloat16's p = 8: Boldo and Melquiond, "When double rounding is odd", 2005):
    ml_dtypes before 0.6 casts float64 through a float32 rounded to nearest, a double rounding that is wrong
    near bfloat16 midpoints (1 + 2**-8 + 2**-30 gives 1, not 1 + 2**-7)."""
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if dtype == bfloat16.np and x.dtype == np.float64:
        x = _float32_rounded_to_odd(x)
    return x.astype(dtype)


def _float32_rounded_to_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd: an inexact result takes the neighbour whose last bit is 1."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        inexact = (f.astype(np.float64) != x) & ~np.isnan(x)
        even = (f.view(np.uint32) & 1) == 0
        toward = np.where(x > f.astype(np.float64), np.float32(np.inf), np.float32(-np.inf))
        return np.where(inexact & even, np.nextafter(f, toward), f)


def to_scalar(value, dtype: DataType) -> np.generic:
    """Convert a scalar to ``dtype`` the way the hardware's ``static_cast`` does.

    Floats round to nearest even; integers wrap modulo 2**bits; a float converted to an integer
    truncates toward zero.
    """
    if dtype.is_float:
        with np.errstate(over="ignore"):  # out of range becomes inf, as static_cast does
            return nearest(np.array(value, dtype=np.float64), dtype.np)[()]
    if isinstance(value, (float, np.floating)):
        value = int(value)
    bits = dtype.np.itemsize * 8
    wrapped = int(value) & ((1 << bits) - 1)
    return np.array(wrapped, dtype=np.uint64).astype(dtype.np)[()]
