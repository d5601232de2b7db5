"""Rounding of conversions: ``RoundMode`` and ``convert`` (AD-API 类型转换/Cast.md; 数据结构/precision_conversion.md).

Shared by Cast and the instructions that end in a conversion (MulCast, AddReluCast, SubReluCast).
A value beyond the destination's range saturates (precision_conversion.md: "溢出默认按照饱和模式处理")
for integer destinations; float destinations overflow to inf, which the overflow mode handles.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import dtypes, native


class RoundMode(enum.Enum):
    """Rounding of ``cast`` (AD-API Cast.md). CAST_NONE rounds to nearest even when precision is lost."""

    CAST_NONE = "none"
    CAST_RINT = "rint"    # to nearest, ties to even
    CAST_FLOOR = "floor"  # toward -inf
    CAST_CEIL = "ceil"    # toward +inf
    CAST_ROUND = "round"  # to nearest, ties away from zero
    CAST_TRUNC = "trunc"  # toward zero
    CAST_ODD = "odd"      # to odd (von Neumann)


def convert(x: np.ndarray, dtype: dtypes.DataType, mode: RoundMode = RoundMode.CAST_RINT) -> np.ndarray:
    """Convert array ``x`` to ``dtype`` with rounding ``mode``, as the Cast instruction does."""
    if dtype.is_float:
        return _to_float(x, dtype.np, mode)
    rounded = {
        RoundMode.CAST_FLOOR: np.floor, RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
        RoundMode.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
    }.get(mode, np.rint)(x.astype(np.float64))
    info = np.iinfo(dtype.np)
    # float64(info.max) may round up past the range (2**63 for int64): saturate by comparison
    out = np.where(np.isnan(rounded) | (rounded >= float(info.max)) | (rounded <= float(info.min)), 0, rounded)
    out = out.astype(dtype.np)
    out[rounded >= float(info.max)] = info.max
    out[rounded <= float(info.min)] = info.min
    return out


def integral(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Round float ``x`` to an integral value in its own dtype (Cast float -> float,
    precision_conversion.md "float → float": 0.5 gives 0 / 0 / 1 / 1 under RINT / FLOOR / CEIL / ROUND).
    inf and NaN pass through; the sign of a zero result is kept."""
    if mode is RoundMode.CAST_ROUND:  # ties away from zero; |x| + 0.5 is exact in float64 for float32 x
        return np.copysign(np.floor(np.abs(x).astype(np.float64) + 0.5), x).astype(x.dtype)
    op = {RoundMode.CAST_FLOOR: np.floor, RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc}.get(mode, np.rint)
    return op(x)


def _exact_minus(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``x - v`` exactly, as float64, for ``v`` (float64 holding a target-dtype value) within a few ulps of
    ``x``. float64 keeps 53 bits, so a 64-bit integer is split into ``a * 2**32 + b`` first: ``a * 2**32 - v``
    is exact (both are multiples of the coarser ulp and the result has < 41 significant bits) and adding
    ``b < 2**32`` keeps it under 2**53."""
    if x.dtype.kind in "iu" and x.dtype.itemsize == 8:
        a = (x >> 32).astype(np.float64) * 2.0 ** 32
        b = (x & 0xFFFFFFFF).astype(np.float64)
        return (a - v) + b
    return x.astype(np.float64) - v


def _to_float(x: np.ndarray, target: np.dtype, mode: RoundMode) -> np.ndarray:
    near = native.nearest(x, target)  # round to nearest even (one correctly rounded conversion; half <-> float in C)
    if mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT) or x.dtype.itemsize <= target.itemsize and x.dtype.kind == "f":
        return near
    with np.errstate(invalid="ignore"):
        above = _exact_minus(x, near.astype(np.float64))      # > 0: x lies above the nearest value
    inexact = (above != 0) & ~np.isnan(above)
    toward = np.where(above > 0, np.inf, -np.inf).astype(target)
    other = np.nextafter(near, toward)  # the representable neighbour on x's side
    negative = np.signbit(near)
    if mode is RoundMode.CAST_FLOOR:
        pick = inexact & (above < 0)
    elif mode is RoundMode.CAST_CEIL:
        pick = inexact & (above > 0)
    elif mode is RoundMode.CAST_TRUNC:  # nearest is farther from zero than x
        pick = inexact & np.where(negative, above > 0, above < 0)
    elif mode is RoundMode.CAST_ROUND:  # a tie resolved to even that should go away from zero
        with np.errstate(invalid="ignore"):
            tie = inexact & (np.abs(above) == np.abs(_exact_minus(x, other.astype(np.float64))))
        pick = tie & (np.abs(other.astype(np.float64)) > np.abs(near.astype(np.float64)))
    else:  # CAST_ODD: inexact results take the candidate whose last significand bit is 1
        bits = near.view(np.uint16 if target.itemsize == 2 else np.uint32)
        pick = inexact & (bits & 1 == 0)
    return np.where(pick, other, near)
