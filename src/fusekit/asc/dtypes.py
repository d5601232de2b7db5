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

    def __init__(self, name: str, np_dtype) -> None:
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

_FLOAT_NAMES = frozenset({"float16", "float32", "bfloat16"})
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


def to_scalar(value, dtype: DataType) -> np.generic:
    """Convert a scalar to ``dtype`` the way the hardware's ``static_cast`` does.

    Floats round to nearest even; integers wrap modulo 2**bits; a float converted to an integer
    truncates toward zero.
    """
    if dtype.is_float:
        with np.errstate(over="ignore"):  # out of range becomes inf, as static_cast does
            return np.array(value, dtype=np.float64).astype(dtype.np)[()]
    if isinstance(value, (float, np.floating)):
        value = int(value)
    bits = dtype.np.itemsize * 8
    wrapped = int(value) & ((1 << bits) - 1)
    return np.array(wrapped, dtype=np.uint64).astype(dtype.np)[()]
