"""An arithmetic reference that shares no code with the simulator: IEEE 754 from its definition.

Values are decoded from their bit patterns into exact rationals (``fractions.Fraction``), the
operation is done exactly, and the result is rounded once into the destination format by
:func:`round_to`, written from IEEE 754-2019 section 4.3 (rounding-direction attributes), 7.4
(overflow) and 3.4 (binary interchange encoding: subnormals, signed zeros, infinities). numpy is
used only to move bit patterns in and out of arrays (``ndarray.view``), never for arithmetic.

Cast's round modes are those of the asc-devkit page "精度转换" (``docs/zh/api/SIMD-API/基础API/数据结构/
precision_conversion.md``, table 1): CAST_RINT (to nearest, ties to even), CAST_FLOOR, CAST_CEIL,
CAST_ROUND (to nearest, ties away from zero), CAST_TRUNC, CAST_ODD (inexact results take the odd
neighbour: "若待舍入部分不全为0：非舍入部分的末位为1，则不进位；为0，则进位") and CAST_NONE (= CAST_RINT
when precision is lost). Float -> integer conversions saturate on overflow (same page: "溢出默认按照
饱和模式处理"; half -> int8 of 2^7 - 0.5 under CAST_RINT gives 2^7 - 1).

Special values are the Python objects ``NAN`` and ``INF``/``NEG_INF``; a zero carries its sign as
:class:`Zero`. Everything else is a non-zero ``Fraction``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

RINT, FLOOR, CEIL, ROUND, TRUNC, ODD = "rint", "floor", "ceil", "round", "trunc", "odd"
MODES = (RINT, FLOOR, CEIL, ROUND, TRUNC, ODD)


@dataclass(frozen=True)
class Format:
    """A binary floating-point interchange format: ``p`` significand bits (with the hidden one),
    ``ebits`` exponent bits."""

    name: str
    p: int
    ebits: int

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        return self.bias

    @property
    def width(self) -> int:
        return 1 + self.ebits + self.p - 1

    @property
    def max_finite(self) -> Fraction:
        return Fraction((1 << self.p) - 1) * Fraction(2) ** (self.emax - self.p + 1)


FLOAT16 = Format("float16", 11, 5)
BFLOAT16 = Format("bfloat16", 8, 8)
FLOAT32 = Format("float32", 24, 8)
FORMATS = {f.name: f for f in (FLOAT16, BFLOAT16, FLOAT32)}
UINT = {16: np.uint16, 32: np.uint32}


@dataclass(frozen=True)
class Zero:
    negative: bool


class _Special:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


NAN, INF, NEG_INF = _Special("NaN"), _Special("+inf"), _Special("-inf")
POS_ZERO, NEG_ZERO = Zero(False), Zero(True)


# ------------------------------------------------------------------------------------------
# encoding
# ------------------------------------------------------------------------------------------

def decode(bits: int, fmt: Format):
    """The value of a bit pattern: Fraction, Zero, INF, NEG_INF or NAN."""
    frac_bits = fmt.p - 1
    sign = bits >> (fmt.width - 1) & 1
    exp = bits >> frac_bits & ((1 << fmt.ebits) - 1)
    frac = bits & ((1 << frac_bits) - 1)
    if exp == (1 << fmt.ebits) - 1:
        return NAN if frac else (NEG_INF if sign else INF)
    if exp == 0 and frac == 0:
        return Zero(bool(sign))
    if exp == 0:                                   # subnormal: 0.frac * 2^emin
        mag = Fraction(frac) * Fraction(2) ** (fmt.emin - frac_bits)
    else:
        mag = Fraction(frac + (1 << frac_bits)) * Fraction(2) ** (exp - fmt.bias - frac_bits)
    return -mag if sign else mag


def encode(value, fmt: Format) -> int:
    """Bit pattern of a value that ``fmt`` represents exactly (as :func:`round_to` returns)."""
    frac_bits = fmt.p - 1
    top = fmt.width - 1
    if value is NAN:
        return ((1 << fmt.ebits) - 1) << frac_bits | 1 << (frac_bits - 1)   # a quiet NaN
    if value is INF or value is NEG_INF:
        return (value is NEG_INF) << top | ((1 << fmt.ebits) - 1) << frac_bits
    if isinstance(value, Zero):
        return value.negative << top
    sign, mag = int(value < 0), abs(value)
    e = max(_floor_log2(mag), fmt.emin)
    m = mag / Fraction(2) ** (e - frac_bits)
    assert m.denominator == 1 and m < 1 << fmt.p and e <= fmt.emax, (value, fmt)
    m = int(m)
    if m < 1 << frac_bits:                          # subnormal
        return sign << top | m
    return sign << top | (e + fmt.bias) << frac_bits | (m - (1 << frac_bits))


def _floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for a positive rational, exactly."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    elif Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


# ------------------------------------------------------------------------------------------
# rounding
# ------------------------------------------------------------------------------------------

def _round_integer(q: Fraction, negative: bool, mode: str) -> int:
    """Round the non-negative rational ``q`` (a magnitude) to an integer; ``negative`` is the sign of
    the value whose magnitude it is (FLOOR and CEIL depend on it)."""
    n = math.floor(q)
    rest = q - n
    if rest == 0:
        return n
    half = Fraction(1, 2)
    up = {
        RINT: rest > half or (rest == half and n % 2 == 1),
        ROUND: rest >= half,
        TRUNC: False,
        FLOOR: negative,
        CEIL: not negative,
        ODD: n % 2 == 0,
    }[mode]
    return n + 1 if up else n


def round_to(value, fmt: Format, mode: str = RINT):
    """Round an exact value (Fraction, Zero, int or a special) into ``fmt`` with ``mode``.

    Overflow (IEEE 754 7.4): to nearest (RINT, ROUND) goes to infinity; a direction that points
    toward zero (TRUNC, FLOOR of a positive, CEIL of a negative) gives the largest finite value;
    ODD gives the largest finite value too (it is odd, and truncation never exceeds it).
    A result that rounds to zero keeps the sign of the exact value.
    """
    if value is NAN or value is INF or value is NEG_INF or isinstance(value, Zero):
        return value
    value = Fraction(value)
    if value == 0:
        return POS_ZERO
    negative, mag = value < 0, abs(value)
    e = max(_floor_log2(mag), fmt.emin)
    quantum = Fraction(2) ** (e - fmt.p + 1)
    n = _round_integer(mag / quantum, negative, mode)
    if n == 0:
        return Zero(negative)
    rounded = n * quantum
    if rounded > fmt.max_finite:
        to_max = mode in (TRUNC, ODD) or (mode == FLOOR and not negative) or (mode == CEIL and negative)
        if not to_max:
            return NEG_INF if negative else INF
        rounded = fmt.max_finite
    return -rounded if negative else rounded


def round_to_int(value, lo: int, hi: int, mode: str = RINT) -> int:
    """Float -> integer conversion: round to an integer with ``mode`` (ODD is not defined for it),
    then saturate to ``[lo, hi]`` (infinities saturate too). NaN has no documented result."""
    if value is NAN:
        raise ValueError("the documents give no integer result for NaN")
    if value is INF:
        return hi
    if value is NEG_INF:
        return lo
    if isinstance(value, Zero):
        return 0
    n = _round_integer(abs(value), value < 0, mode)
    return min(max(-n if value < 0 else n, lo), hi)


# ------------------------------------------------------------------------------------------
# exact operations on decoded values (IEEE 754 section 6: infinities, NaN, signs of zero)
# ------------------------------------------------------------------------------------------

def _is_inf(v) -> bool:
    return v is INF or v is NEG_INF


def _negative(v) -> bool:
    return v is NEG_INF or (v.negative if isinstance(v, Zero) else (not _is_inf(v) and v < 0))


def _inf(negative: bool):
    return NEG_INF if negative else INF


def _num(v) -> Fraction:
    return Fraction(0) if isinstance(v, Zero) else v


def add(a, b):
    """a + b exactly. x + (-x) is +0 (round to nearest); -0 + -0 is -0."""
    if a is NAN or b is NAN:
        return NAN
    if _is_inf(a) and _is_inf(b):
        return a if a is b else NAN
    if _is_inf(a) or _is_inf(b):
        return a if _is_inf(a) else b
    if isinstance(a, Zero) and isinstance(b, Zero):
        return Zero(a.negative and b.negative)
    total = _num(a) + _num(b)
    return total if total != 0 else POS_ZERO


def neg(a):
    if a is NAN:
        return NAN
    if _is_inf(a):
        return _inf(a is INF)
    if isinstance(a, Zero):
        return Zero(not a.negative)
    return -a


def sub(a, b):
    return add(a, neg(b))


def mul(a, b):
    """a * b exactly; 0 * inf is NaN; the sign is the exclusive or of the signs."""
    if a is NAN or b is NAN:
        return NAN
    negative = _negative(a) != _negative(b)
    zero = isinstance(a, Zero) or isinstance(b, Zero)
    if _is_inf(a) or _is_inf(b):
        return NAN if zero else _inf(negative)
    if zero:
        return Zero(negative)
    return a * b


def div(a, b):
    """a / b exactly; x / 0 is a signed infinity, 0 / 0 and inf / inf are NaN."""
    if a is NAN or b is NAN:
        return NAN
    negative = _negative(a) != _negative(b)
    if _is_inf(a):
        return NAN if _is_inf(b) else _inf(negative)
    if _is_inf(b):
        return Zero(negative)
    if isinstance(b, Zero):
        return NAN if isinstance(a, Zero) else _inf(negative)
    if isinstance(a, Zero):
        return Zero(negative)
    return a / b


def _order_key(v):
    return (-math.inf if v is NEG_INF else math.inf if v is INF else _num(v))


def maximum(a, b):
    """max of two non-NaN values (NaN operands and max(+0, -0) are not documented)."""
    return a if _order_key(a) >= _order_key(b) else b


def minimum(a, b):
    return a if _order_key(a) <= _order_key(b) else b


def sqrt_rounded(a, fmt: Format, mode: str = RINT):
    """sqrt(a) correctly rounded into ``fmt``. sqrt(-0) = -0, sqrt(negative) = NaN.

    The exact root is bracketed by integers s <= 2^k * sqrt(a) < s + 1 with k far finer than the
    format's last place; an inexact root is replaced by the midpoint (2s + 1) / 2^(k+1), which lies
    in the same open interval between grid points and therefore rounds the same way in every mode.
    """
    if a is NAN or a is NEG_INF or (not isinstance(a, Zero) and not _is_inf(a) and a < 0):
        return NAN
    if a is INF or isinstance(a, Zero):
        return a
    k = fmt.p + 2 - fmt.emin + 200           # far below the last place of any result
    scaled = a * Fraction(4) ** k
    n = scaled.numerator // scaled.denominator
    s = math.isqrt(n)
    exact = s * s == n and scaled.denominator == 1
    root = Fraction(s, 2 ** k) if exact else Fraction(2 * s + 1, 2 ** (k + 1))
    return round_to(root, fmt, mode)


# ------------------------------------------------------------------------------------------
# arrays
# ------------------------------------------------------------------------------------------

def values(array: np.ndarray, fmt: Format) -> list:
    """Decode every element of a float array of ``fmt``'s width (flattened in C order)."""
    raw = np.ascontiguousarray(array).view(UINT[fmt.width]).reshape(-1)
    return [decode(int(b), fmt) for b in raw]


def to_array(vals, fmt: Format, np_dtype) -> np.ndarray:
    """Array of ``np_dtype`` holding the bit patterns of exactly representable values."""
    raw = np.array([encode(v, fmt) for v in vals], dtype=UINT[fmt.width])
    return raw.view(np_dtype)


def integer_value(v) -> Fraction:
    """Exact value of a Python or numpy integer, as a Fraction."""
    return Fraction(int(v))


def same_bits(actual: np.ndarray, expected: np.ndarray, fmt: Format) -> np.ndarray:
    """Elementwise: equal bit patterns, or both NaN (the NaN payload is not documented)."""
    a = np.ascontiguousarray(actual).view(UINT[fmt.width]).reshape(-1)
    e = np.ascontiguousarray(expected).view(UINT[fmt.width]).reshape(-1)
    a_nan = np.array([decode(int(x), fmt) is NAN for x in a], bool)
    e_nan = np.array([decode(int(x), fmt) is NAN for x in e], bool)
    return (a == e) | (a_nan & e_nan)
