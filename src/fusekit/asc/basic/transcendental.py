"""The one numeric model of every transcendental function fusekit evaluates (simulator and references).

Why: numpy picks a SIMD implementation of exp, log, sin, tanh, power ... by CPU feature at import
(AVX-512F / AVX512_SKX / AVX512FP16 paths, NPY_DISABLE_CPU_FEATURES), for float16, float32 *and*
float64, and the paths differ in the last bits (float16 exp(0.007298): 1.007 on one machine, 1.008
on another). A model that calls numpy's ufuncs is therefore a model of the host CPU, not of the NPU.

The model, for a result of element type T (float16, bfloat16, float32):

    f(x) = RNE_T(F(x))

``F`` is the real function on the exact inputs (half, bfloat16 and float inputs are exact in
float64) and ``RNE_T`` one rounding to nearest, ties to even (IEEE 754-2019 4.3.1), computed directly
from float64 (bfloat16: via float32 rounded to odd, which keeps the second rounding exact: Boldo and
Melquiond 2005). So the result is the correctly rounded value of F, whichever machine runs it (given
float64 functions within 2**-41 of F, which numpy's and the C library's are by far):

- the float64 value comes from numpy (fast; its dispatch paths are within a few ulp of float64:
  numpy 1.22 release notes, SVML), and every lane whose float64 value lies within a relative
  2**-40 (2**12 ulp of float64) of a rounding boundary of T is recomputed with :func:`real`. Outside
  that band every float64 implementation within 2**-41 of F rounds to the same T value, so numpy's
  dispatch cannot change a bit; inside it the C library's function decides (measured: no half input
  with a half result, and no bfloat16 input with a bfloat16 result, of any function here falls in
  the band; 0 to 34 of the 65,536 bfloat16 inputs with a float32 result do, e.g. exp(2**-24) =
  1 + 2**-24 + 2**-49; tests/asc_api/basic/test_vec_transcendental.py checks the bits under several dispatch settings);
- a NaN result is T's positive quiet NaN (the NPU's NaN payload is not documented).

The NPU's own algorithms are not documented bit-exactly: AD-API Exp.md / Ln.md (基础算术) give no
accuracy, and the adv math pages (高阶API/数学计算) describe polynomial decompositions in float
without an error bound. Expect the device to differ from this model by about one ulp of T on
ordinary inputs (half ~1e-3, float ~2e-7 relative), more where the adv module docstring says so.

Functions without a numpy ufunc (erf, erfc, lgamma, digamma) are evaluated per element with Python's
``math`` (the C library), which numpy's dispatch does not touch either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

from .. import dtypes
from ..dtypes import nearest

_BAND = 2.0 ** -40  # relative half-width of the band around a rounding boundary recomputed by real()
_BF16 = np.dtype(ml_dtypes.bfloat16)
_TARGETS = (np.dtype(np.float16), _BF16, np.dtype(np.float32))


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # C99 Annex F: lgamma(0) = lgamma(-n) = +inf (a pole)
        return math.inf


# digamma: recurrence up to x >= 10, then the asymptotic series ln x - 1/2x - sum B2k / (2k x^2k) (7 terms, < 1e-17
# relative at 10); reflection psi(1 - x) - pi / tan(pi x) below 0.5
_DIGAMMA_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return x
    if x == 0:
        return -math.copysign(math.inf, x)  # ASSUMPTION: the limit from x's side (the pages give no value)
    if x < 0 and x == math.floor(x):
        return math.nan  # ASSUMPTION: a pole at a negative integer
    if x < 0.5:
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10:
        acc -= 1 / x
        x += 1
    inv2 = 1 / (x * x)
    series, power = 0.0, inv2
    for b in _DIGAMMA_B:
        series += b * power
        power *= inv2
    return acc + math.log(x) - 0.5 / x - series


@dataclass(frozen=True)
class Function:
    """One real function: its C-library scalar form and numpy's (possibly dispatch-dependent) ufunc."""

    name: str
    scalar: Callable[..., float]
    ufunc: np.ufunc | None = None

    @property
    def arity(self) -> int:
        return self.ufunc.nin if self.ufunc is not None else 1


FUNCTIONS = {f.name: f for f in (
    Function("exp", math.exp, np.exp), Function("log", math.log, np.log),
    Function("sin", math.sin, np.sin), Function("cos", math.cos, np.cos), Function("tan", math.tan, np.tan),
    Function("sinh", math.sinh, np.sinh), Function("cosh", math.cosh, np.cosh), Function("tanh", math.tanh, np.tanh),
    Function("asin", math.asin, np.arcsin), Function("acos", math.acos, np.arccos),
    Function("atan", math.atan, np.arctan), Function("asinh", math.asinh, np.arcsinh),
    Function("acosh", math.acosh, np.arccosh), Function("atanh", math.atanh, np.arctanh),
    Function("pow", math.pow, np.power),
    Function("erf", math.erf), Function("erfc", math.erfc), Function("lgamma", _lgamma), Function("digamma", _digamma),
)}


def _ieee(fn: Function) -> Callable[..., float]:
    """fn.scalar, with the IEEE 754 special results where Python's math raises instead (exp(1000) = inf,
    log(0) = -inf, log(-1) = NaN, pow(0, -1) = inf): those are exact, so numpy's are the same everywhere,
    except a NaN's sign (numpy's paths give +NaN or -NaN): a NaN is math.nan."""
    def one(*args):
        try:
            return fn.scalar(*args)
        except (ValueError, OverflowError):
            r = float(fn.ufunc(*args)) if fn.ufunc is not None else math.nan
            return math.nan if math.isnan(r) else r
    return one


def real(name: str, *xs) -> np.ndarray:
    """float64 values of the real function ``name`` (a key of :data:`FUNCTIONS`; pow takes two arrays) on
    ``xs`` (array-likes, broadcast), element by element with Python's ``math`` (the C library: < 1 ulp for
    glibc's exp, log, pow, sin, cos), independent of numpy's CPU dispatch. IEEE special values as C99 Annex F.

    Raises:
        KeyError: ``name`` is not a modelled function.
    """
    fn = FUNCTIONS[name]
    args = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in xs))
    with np.errstate(all="ignore"):  # the C library's overflow / invalid flags: the IEEE result is the answer
        out = np.frompyfunc(_ieee(fn), fn.arity, 1)(*args)
    return np.asarray(out, np.float64).reshape(args[0].shape)


def _near_boundary(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Lanes of float64 ``v`` within the relative band of a rounding boundary of ``dtype``."""
    lo = nearest(v * (1 - _BAND), dtype)
    hi = nearest(v * (1 + _BAND), dtype)
    bits = np.dtype(f"u{dtype.itemsize}")
    return lo.view(bits) != hi.view(bits)


def rounded(name: str, dtype, *xs) -> np.ndarray:
    """``name`` (a key of :data:`FUNCTIONS`) of ``xs`` (float arrays, broadcast) correctly rounded to ``dtype``
    (float16, bfloat16 or float32), the same bits on every machine (module docstring).

    Raises:
        KeyError: ``name`` is not a modelled function.
        ValueError: ``dtype`` is not float16, bfloat16 or float32.
    """
    dt = np.dtype(dtype)
    if dt not in _TARGETS:
        raise ValueError(f"transcendental results are float16, bfloat16 or float32, not {dt}")
    fn = FUNCTIONS[name]
    args = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in xs))
    with np.errstate(all="ignore"):
        v = fn.ufunc(*args) if fn.ufunc is not None else real(name, *args)
        near = _near_boundary(np.asarray(v, np.float64), dt)
        if near.any():
            v = np.array(v, np.float64)
            v[near] = real(name, *(a[near] for a in args))
        out = nearest(v, dt)
    return np.where(np.isnan(out), dt.type(np.nan), out).astype(dt, copy=False)


def elementwise(name: str) -> Callable[..., np.ndarray]:
    """``fn(*xs)``: :func:`rounded` into the first operand's dtype (a vector instruction's dst = src dtype)."""
    def fn(*xs):
        return rounded(name, np.asarray(xs[0]).dtype, *xs)

    fn.__name__ = fn.__qualname__ = name
    return fn
