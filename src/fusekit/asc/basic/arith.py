"""Numeric semantics shared by several instruction families: fused multiply-add, ReLU, shifts.

Each function takes and returns numpy arrays of lanes; the caller's store rounds the result once
to the destination dtype (:mod:`.execute`).
"""

from __future__ import annotations

import numpy as np


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0) in x's dtype (AD-API Relu.md: "结果和0对比取较大值")."""
    return np.maximum(x, np.zeros((), x.dtype))


def fused_multiply_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` exactly, as float64 rounded to odd, so that the store's one rounding to half or
    float is the correctly rounded result (rounding to odd keeps a second rounding exact when the
    first format has >= p + 2 bits: Boldo and Melquiond, "When double rounding is odd", 2005).

    ``a * b`` is exact in float64 for half and float operands (<= 48 significand bits); the sum's
    rounding error comes from TwoSum (Knuth), and an inexact even sum steps one ulp toward it.
    """
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = np.asarray(p + c)
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    even = (s.view(np.uint64) & 1) == 0
    nudge = (err != 0) & even & np.isfinite(s)
    return np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def shift_left(x: np.ndarray, n: int) -> np.ndarray:
    """ShiftLeft.md: unsigned types shift logically; signed types shift arithmetically, keeping the
    sign bit and dropping the bit below it (int16 1010101010101010 << 3 = 1101010101010000)."""
    bits = x.dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    keep = np.uint64((1 << bits) - 1)
    shifted = (unsigned << np.uint64(n)) & keep if n < bits else np.zeros_like(unsigned)
    if x.dtype.kind == "i":
        sign = np.uint64(1 << (bits - 1))
        shifted = (shifted & (sign - np.uint64(1))) | (unsigned & sign)
    return shifted.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


def shift_right(x: np.ndarray, n: int) -> np.ndarray:
    """ShiftRight.md: unsigned types shift logically (zeros in); signed types arithmetically (the
    sign bit is copied in: int16 1010101010101010 >> 3 = 1111010101010101). Shifting by the full
    width leaves 0, or -1 for a negative signed value."""
    if x.dtype.kind == "i":
        return (x.astype(np.int64) >> np.int64(n)).astype(x.dtype)
    if n >= x.dtype.itemsize * 8:
        return np.zeros_like(x)
    return (x.astype(np.uint64) >> np.uint64(n)).astype(x.dtype)
