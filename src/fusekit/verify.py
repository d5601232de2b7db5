"""Reference arithmetic models and result comparison.

A reference is an operator's formula evaluated under one of three arithmetic **models**:

- ``hardware``: every operation rounded to the tensor dtype (round to nearest even), scalars
  converted to float32 (pyasc passes a Python float as float32) and then to the dtype, as an
  Ascend C kernel computing in the tensor dtype does;
- ``fp32``: inputs and scalars converted to float32, every operation rounded to float32, the
  result rounded once to the dtype, as a kernel that casts to float32 in UB does;
- ``exact``: inputs and the user's scalar as float64, the result rounded once to the dtype.

The simulator's result should equal its model bit for bit and stay within tolerance of ``exact``.

Tolerance: the CANN samples' ``verify_result.py`` (SN, e.g. ``operator/ascendc/0_introduction``)
counts an element as a mismatch when both its absolute error and its relative error (to
``max(|actual|, |expected|) + 1e-9``) exceed ``loss``, and fails when more than ``loss * n``
elements mismatch: ``loss`` = 1e-3 for float16, 1e-4 for float32. No sample covers bfloat16; we use
1.6e-2, the default bfloat16 ``rtol`` of ``torch.testing.assert_close`` (PyTorch documentation).

The samples' absolute bound is ``loss`` itself, which suits their data (asc-devkit's
``examples/02_features/09_unalign/whole_reduce_sum/scripts/gen_data.py`` draws ``np.random.uniform(1,
100)``, others (1, 10) or (1, 4): outputs of order one and more) but lets any output smaller than
``loss`` pass whatever it is: a float16
softmax row of 4096 (every value 1/4096) against zeros, or against 4 times the answer; bfloat16 ``-x``
against ``x``. So the absolute bound here is the samples' scaled to the output's own magnitude,
``atol = loss * min(1, M)`` with ``M`` the largest finite ``|expected|``: the samples' rule unchanged
wherever the reference reaches 1, and a bound that shrinks with the data below it, so that a wrong answer
fails at every magnitude (an all-zero reference then needs zeros; its relative error decides). An
element mismatches when its absolute error exceeds ``atol`` and its relative error exceeds ``loss``. The
relative error is to ``max(|actual|, |expected|)``, which is never zero where the two differ; the
samples' ``+ 1e-9`` is left out, as it would pass every output below about ``1e-9 * loss``.

Non-finite outputs are judged apart, and no tolerance excuses them: an output that is NaN or
infinite where the exact real-number result (before rounding to the output dtype) is finite, or
infinite with the other sign, makes the comparison FAIL however few such elements there are. The
samples' rule assumes finite values (its errors are differences); without this, an output that
overflowed to inf compares equal to a reference that overflowed the same way. The allowed
mismatch count applies to finite outputs only.

Integer and bool outputs compare exactly: asc-devkit's integer-output samples (e.g.
``examples/01_simd_cpp_api/03_basic_api/01_memory_vector_compute/cast/scripts/verify_result.py``, int32;
``.../compare/scripts/verify_result.py``, uint8) call ``np.isclose(output, golden, rtol=1e-6, atol=1e-9)``,
which for integers below 10^6 is equality, and pass when at most ``ERROR_TOL`` = 1e-4 of the elements
differ. ``compare(steps=, rtol=)`` widens the per-element test to numpy.isclose's
``|actual - expected| <= steps + rtol * |expected|``, in quantisation steps (one unit of the integer
grid), for a reference that rounds differently from the kernel (``GeneratedOp.check`` against ``exact``).
The allowed mismatch count is ``floor(loss * n)``; a ``loss`` of 1 or more would let every element be
wrong, so :func:`compare` refuses it. It refuses as well any per-element allowance that accepts an
arbitrary wrong value, a project rule (no sample widens it at all): ``steps`` must be below
:data:`MAX_ALLOWANCE` (1/8) of the dtype's range (``max - min``: int8 at most 31 steps, int4 1) and
``rtol`` below 1/8 (at ``rtol`` 1 zero passes for every value, at 1/2 a halved answer passes); so an
element's window ``|actual - expected| <= steps + rtol * |expected|`` covers less than half of the
dtype's values, and at the least the extreme farther from the expected value fails. A bool has no steps: its ``steps`` and ``rtol`` must be 0. ml_dtypes' integer types (int4,
uint4, int2, ...) compare as integers; complex outputs are refused (neither rule is defined for them).

``compare(bit_exact=True)`` is the verdict against a model the output must equal bit for bit (the
simulator against its own ``hardware`` or ``fp32`` model): every element whose bits differ (NaNs of any
payload are equal) is a mismatch and none is allowed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import ml_dtypes
import numpy as np

from fusekit.asc import dtypes
from fusekit.asc.dtypes import nearest

LOSS = {"float16": 1e-3, "float32": 1e-4, "bfloat16": 1.6e-2}
INTEGER_LOSS = 1e-4  # asc-devkit's integer-output samples' ERROR_TOL (module docstring)
MAX_ALLOWANCE = 1 / 8  # steps < this * (max - min) of an integer dtype, rtol < this (module docstring)
_MINIMUM = 1e-9
MODELS = ("hardware", "fp32", "exact")


@dataclass(frozen=True)
class Model:
    """An arithmetic model: operands are held in ``compute`` (None: the tensor dtype itself)."""

    name: str
    compute: np.dtype | None
    float32_scalars: bool

    def tensor(self, x: np.ndarray) -> np.ndarray:
        return x if self.compute is None else x.astype(self.compute)

    def scalar(self, value: float, dtype: np.dtype):
        """A kernel scalar argument in this model: float32 first if the kernel received it as float32."""
        with np.errstate(over="ignore"):  # a scale beyond the dtype's range becomes inf, as the cast does
            s = np.float32(value) if self.float32_scalars else np.float64(value)
            return np.array(s).astype(self.compute or dtype)[()]

    def result(self, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """Round once to ``dtype`` (:func:`fusekit.asc.dtypes.nearest`)."""
        with np.errstate(over="ignore"):  # overflow to inf is the rounding the model asks for
            return nearest(x, dtype)


def round_once(approx: np.ndarray, dtype, exact: Callable[[np.ndarray], list],
               known_exact: np.ndarray | None = None) -> np.ndarray:
    """Real numbers rounded once to ``dtype``, to nearest even, with float64 doing the work.

    Args:
        approx: float64 values within a few float64 ulps of the real numbers (a short formula
            evaluated in float64).
        dtype: the target dtype (float16, bfloat16, float32).
        exact: gives the exact values (``fractions.Fraction``) of the flat indices it is passed.
        known_exact: True where ``approx`` is known to be the exact value (no float64 rounding
            happened), so that no exact value is needed there.

    Rounding ``approx`` to the dtype gives the right result unless a rounding boundary of the dtype
    (a midpoint between two neighbours, or the overflow threshold) lies within a few float64 ulps
    of it: the float64 evaluation may have rounded onto or across it (double rounding). Those rare
    elements are rounded from their exact values, through float64 rounded to odd, which has the
    p + 2 bits that make the second rounding exact (Boldo and Melquiond, "When double rounding is
    odd", 2005).
    """
    flat = np.asarray(approx, np.float64).reshape(-1)
    out = _to_dtype(flat, dtype)
    wide = out.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        up = np.nextafter(out, np.array(np.inf, out.dtype)).astype(np.float64)
        down = np.nextafter(out, np.array(-np.inf, out.dtype)).astype(np.float64)
        mid = np.where(flat >= wide, (wide + up) / 2, (wide + down) / 2)
        slack = 8 * np.spacing(np.abs(flat))
        near = np.isfinite(flat) & ((np.abs(flat - mid) <= slack)
                                    | (np.abs(np.abs(flat) - overflow_threshold(out.dtype)) <= slack))
    if known_exact is not None:
        near &= ~np.asarray(known_exact, bool).reshape(-1)
    index = np.flatnonzero(near)
    if index.size:
        out[index] = _to_dtype(np.array([_round_to_odd(v) for v in exact(index)], np.float64), dtype)
    return out.reshape(np.shape(approx))


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``a + b`` and its rounding error: ``s + e == a + b`` exactly (Knuth's TwoSum; no overflow)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``a * b`` and its rounding error: ``p + e == a * b`` exactly (Dekker's TwoProduct with
    Veltkamp's split; |a|, |b| < 2^996 and no underflow of ``e``)."""
    p = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * x  # 2^27 + 1
    hi = c - (c - x)
    return hi, x - hi


def _to_dtype(x: np.ndarray, dtype) -> np.ndarray:
    """float64 -> dtype, rounded once to nearest even (:func:`fusekit.asc.dtypes.nearest`)."""
    with np.errstate(over="ignore"):
        return nearest(x, dtype)


def _round_to_odd(value) -> float:
    """An exact rational rounded to float64, to odd: toward zero, then the last bit set if inexact."""
    try:
        f = float(value)  # nearest even
    except OverflowError:
        return math.copysign(math.inf, value)
    if f == value or not math.isfinite(f):
        return f
    if int(np.float64(f).view(np.uint64)) & 1 == 0:  # even: step toward the exact value, onto an odd one
        f = math.nextafter(f, math.inf if value > f else -math.inf)
    return f


def model(name: str) -> Model:
    """The arithmetic model called ``name`` (one of :data:`MODELS`)."""
    try:
        return {
            "hardware": Model("hardware", None, True),
            "fp32": Model("fp32", np.dtype(np.float32), True),
            "exact": Model("exact", np.dtype(np.float64), False),
        }[name]
    except KeyError:
        raise ValueError(f"unknown reference model {name!r}; use one of {MODELS}") from None


class PrecisionWarning(RuntimeWarning):
    """A result or a scale left the range of its dtype: overflow to inf (or NaN) or underflow to
    zero/subnormal. Filter it with ``warnings.filterwarnings("ignore", category=fusekit.PrecisionWarning)``
    or turn it into an error with ``"error"``."""


def warn(message: str) -> None:
    """Issue a :class:`PrecisionWarning` attributed to the first caller outside fusekit."""
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, PrecisionWarning, stacklevel=level)


OVERFLOW = "exceeds"  # reason kinds of invalid outputs, see Comparison.reasons
NAN = "nan"
WRONG_SIGN = "sign"
NOT_NAN = "inf-not-nan"
SATURATED = "saturated"


@dataclass(frozen=True)
class Comparison:
    """Result of comparing an output with a reference (errors in the output's units).

    Attributes:
        reference: reference model name.
        n: elements compared.
        max_abs_err, max_rel_err: largest absolute and relative error over the finite outputs.
        mismatches: finite outputs whose absolute error exceeds ``atol`` and relative error exceeds ``loss``
            (with ``bit_exact``: elements whose bits differ).
        allowed: most mismatches that still pass (``floor(loss * n)``).
        first_mismatch: index (in the output's shape) of the first mismatch or invalid output, or None.
        bit_identical: every element has the same bits as the reference (NaNs equal to NaNs).
        loss: the tolerance used.
        invalid: outputs that are NaN or infinite where the exact result is finite, or infinite with
            the other sign, or finite where the exact result is beyond the dtype's range; any one of
            them fails the comparison.
        reasons: the invalid outputs by cause: ``"exceeds"`` (the exact result is finite but beyond
            the dtype's range: it rounds to inf, see :func:`overflow_threshold`), ``"nan"`` (NaN where the
            exact result is a number), ``"sign"`` (an infinity of the other sign), ``"inf"`` (inf
            where the exact result is finite and within range), ``"inf-not-nan"`` (inf where the exact
            result is NaN), ``"saturated"`` (finite where the exact result is beyond the dtype's range).
        dtype: the output's dtype name.
        steps: for an integer or bool output, the per-element allowance in quantisation steps
            (``|actual - expected| <= steps + rtol * |expected|``); None for a float output.
        rtol: the relative part of that allowance.
        atol: for a float output, the absolute bound used, ``loss * min(1, max finite |expected|)``
            (module docstring); None for an integer output.
        bit_exact: the reference is a model the output must equal bit for bit (none allowed to differ).
    """

    reference: str
    n: int
    max_abs_err: float
    max_rel_err: float
    mismatches: int
    allowed: int
    first_mismatch: tuple[int, ...] | None
    bit_identical: bool
    loss: float
    invalid: int = 0
    reasons: tuple[tuple[str, int], ...] = ()
    dtype: str = ""
    steps: int | None = None
    rtol: float = 0.0
    atol: float | None = None
    bit_exact: bool = False

    @property
    def passed(self) -> bool:
        return self.invalid == 0 and self.mismatches <= self.allowed

    def reason(self) -> str:
        """Why the comparison failed, in one sentence ("" if it passed)."""
        if self.passed:
            return ""
        parts = []
        limit = _largest(self.dtype)
        for kind, count in self.reasons:
            parts.append({
                OVERFLOW: f"{count} output(s) are inf because the exact result exceeds {self.dtype}'s range "
                          f"(largest finite value {limit:g})",
                NAN: f"{count} output(s) are NaN where the exact result is a number",
                WRONG_SIGN: f"{count} output(s) are infinite with the other sign from the exact result",
                "inf": f"{count} output(s) are infinite where the exact result is finite and within {self.dtype}'s "
                       "range",
                NOT_NAN: f"{count} output(s) are infinite where the exact result is NaN",
                SATURATED: f"{count} output(s) are finite where the exact result exceeds {self.dtype}'s range (largest "
                           f"finite value {limit:g}; a saturating SoC clamps to it)",
            }[kind])
        if self.mismatches > self.allowed:
            first = "" if self.first_mismatch is None else f", first at index {list(self.first_mismatch)}"
            parts.append(f"{self.mismatches} {self._criterion()} (allowed {self.allowed}){first}")
        return "; ".join(parts)

    def _criterion(self) -> str:
        """What a mismatch is: ``finite output(s) differ by more than loss 0.001`` or, for an integer
        output, ``output(s) differ by more than 1 step(s) + 0.001 * |expected|``; against a bit-exact model,
        ``output(s) differ from the hardware model in their bits``."""
        if self.bit_exact:
            return f"output(s) differ from the {self.reference} model in their bits"
        if self.steps is None:
            absolute = "" if self.atol is None or self.atol == self.loss else \
                f" (absolute error beyond {self.atol:.3g}, loss x the largest |expected|)"
            return f"finite output(s) differ by more than loss {self.loss:g}{absolute}"
        rel = f" + {self.rtol:g} * |expected|" if self.rtol else ""
        return f"output(s) differ by more than {self.steps} step(s){rel}"

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        bits = "bit-identical" if self.bit_identical else "not bit-identical"
        first = "" if self.first_mismatch is None else f", first at index {list(self.first_mismatch)}"
        invalid = f"; {self.invalid} invalid output(s) (NaN, inf or out of range)" if self.invalid else ""
        within = "" if self.steps is None or self.bit_exact else f", beyond {self.steps} step(s)" + \
            (f" + {self.rtol:g} * |expected|" if self.rtol else "")
        if self.bit_exact:
            allowance = "bit for bit, allowed 0"
        else:
            absolute = "" if self.atol is None or self.atol == self.loss else f", abs {self.atol:.3g}"
            allowance = f"allowed {self.allowed} at loss {self.loss:g}{absolute}"
        return (f"vs {self.reference:<8} {verdict}  {bits}; max abs err {self.max_abs_err:.3g}, max rel err "
                f"{self.max_rel_err:.3g}; {self.mismatches}/{self.n} mismatches{within} ({allowance}){invalid}{first}")


def tolerance(dtype) -> float:
    """Default ``loss`` for a dtype (see module doc for sources): float16 1e-3, float32 1e-4, bfloat16
    1.6e-2; integer and bool dtypes :data:`INTEGER_LOSS` (1e-4), the fraction of elements that may differ.

    Raises:
        ValueError: a dtype with no default (float64, float8), or one :func:`compare` refuses (complex)."""
    if _is_integer(dtype):
        return INTEGER_LOSS
    _refuse_unordered(dtype)
    name = _name(dtype)
    if name not in LOSS:
        raise ValueError(f"no default tolerance for {name}; pass loss= explicitly")
    return LOSS[name]


def _is_integer(dtype) -> bool:
    """Integer or bool, numpy's or ml_dtypes' (int4, uint4, int2, ...: numpy kind "V", as bfloat16's):
    compared in steps of the integer grid."""
    return np.dtype(dtype).kind in "biu" or _ml_integer(dtype)


def _ml_integer(dtype) -> bool:
    """An ml_dtypes integer type (int4, uint4, int2, uint2, ...)."""
    if np.dtype(dtype).kind != "V":
        return False
    try:
        ml_dtypes.iinfo(dtype)
    except (TypeError, ValueError):
        return False
    return True


def _range(dtype) -> int:
    """``max - min`` of an integer dtype (bool: 1), as a Python int."""
    if np.dtype(dtype) == np.bool_:
        return 1
    info = ml_dtypes.iinfo(dtype) if _ml_integer(dtype) else np.iinfo(dtype)
    return int(info.max) - int(info.min)


def _refuse_unordered(dtype) -> None:
    """Complex (and other non-real) outputs: neither the float rule nor the integer one is defined for them."""
    if np.dtype(dtype).kind == "c":
        raise ValueError(f"cannot compare {_name(dtype)} outputs: fusekit's verdicts are defined for real float, "
                         "integer and bool outputs; compare the real and imaginary parts (x.real, x.imag) apart")
    if np.dtype(dtype).kind not in "fV" or (np.dtype(dtype).kind == "V" and not _ml_float(dtype)):
        raise ValueError(f"cannot compare {_name(dtype)} outputs: fusekit's verdicts are defined for float, integer "
                         "and bool outputs")


def _ml_float(dtype) -> bool:
    try:
        ml_dtypes.finfo(dtype)
    except (TypeError, ValueError):
        return False
    return True


def compare(actual: np.ndarray, expected: np.ndarray, *, reference: str = "reference",
            loss: float | None = None, exact: "np.ndarray | Callable[[slice], np.ndarray] | None" = None,
            progress: Callable[[int], object] | None = None, steps: int | None = None,
            rtol: float = 0.0, bit_exact: bool = False, scale: float | None = None) -> Comparison:
    """Compare ``actual`` with ``expected`` (same shape and dtype) under the samples' criterion, its absolute
    bound scaled to the output's magnitude (module docstring).

    Args:
        actual, expected: the output and the reference, rounded to the output dtype (float16, bfloat16,
            float32, or an integer or bool dtype).
        reference: the reference's name, for the summary.
        loss: the tolerance, in [0, 1) (default :func:`tolerance` of the dtype): for a float output the
            per-element bound on relative error, the absolute bound ``loss * min(1, max finite |expected|)``
            and the fraction of elements allowed beyond them; for an integer output the fraction only.
        exact: the exact real-number result before rounding to the dtype (float64, same number of
            elements), or a function giving it for a slice of the flattened elements, so that an
            output that overflowed like the rounded reference is still caught. Default: ``expected``.
            Float outputs only (an integer output has no NaN or inf to judge).
        progress: called with the number of elements done after each chunk.
        steps, rtol: integer and bool outputs only: an element mismatches when
            ``|actual - expected| > steps + rtol * |expected|`` (numpy.isclose's rule, in quantisation
            steps; default 0 and 0: exact, as the integer samples, module docstring). ``steps`` must be below
            :data:`MAX_ALLOWANCE` of the dtype's range and ``rtol`` below it; bool: both 0.
        bit_exact: ``expected`` is a model the output must equal bit for bit: any element whose bits differ
            (NaNs of any payload are equal) fails, none allowed; ``loss``, ``steps`` and ``rtol`` do not apply.
        scale: float outputs: the magnitude of the computation the output comes from, for an output whose exact
            value cancels to (nearly) zero, e.g. a gradient that is 0 in exact arithmetic, where both sides are
            rounding noise of the terms summed: the absolute bound becomes ``loss * min(1, scale)``. Default:
            the output's own largest finite ``|expected|``. Must be positive.

    Works through the arrays in chunks of ``CHUNK`` elements, so memory stays bounded for large outputs.

    Raises:
        ValueError: shapes or dtypes differ; a complex output; ``loss`` outside [0, 1), negative ``steps`` /
            ``rtol``, or an integer allowance that accepts an arbitrary wrong value (a verdict that could not
            fail, or never pass); ``steps`` or ``rtol`` for a float output; ``bit_exact`` with a tolerance.
    """
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise ValueError(f"cannot compare {actual.dtype}{list(actual.shape)} with {expected.dtype}{list(expected.shape)}")
    if not _is_integer(actual.dtype):
        _refuse_unordered(actual.dtype)
    if bit_exact:
        if loss or steps or rtol:
            raise ValueError("bit_exact=True allows no difference: loss=, steps= and rtol= do not apply")
        loss = 0.0
    loss = tolerance(actual.dtype) if loss is None else loss
    if not 0 <= loss < 1:
        raise ValueError(f"loss={loss!r} must be in [0, 1): it is also the fraction of elements allowed to mismatch, "
                         "and at 1 every element may be wrong")
    if _is_integer(actual.dtype):
        return _compare_integers(actual, expected, reference, loss, 0 if steps is None else steps, rtol, progress,
                                 bit_exact)
    if steps is not None or rtol:
        raise ValueError(f"steps= and rtol= apply to integer outputs; a {_name(actual.dtype)} output is judged by "
                         "loss= (the samples' absolute and relative error)")
    flat_a, flat_e = actual.reshape(-1), expected.reshape(-1)
    exact_of = _exact_source(exact, flat_e)
    limit = overflow_threshold(actual.dtype)
    n = flat_a.size
    if scale is not None and not scale > 0:
        raise ValueError(f"scale={scale!r} must be a positive magnitude (the computation's, for outputs near zero)")
    atol = loss * min(1.0, _largest_finite(flat_e) if scale is None else scale)
    max_abs = max_rel = 0.0
    mismatches, first, identical = 0, None, True
    reasons: dict[str, int] = {}
    for lo in range(0, n, CHUNK):
        part = slice(lo, min(lo + CHUNK, n))
        a, e = flat_a[part].astype(np.float64), flat_e[part].astype(np.float64)
        identical = identical and _bit_identical(flat_a[part], flat_e[part])
        bad_kinds = _invalid(a, np.asarray(exact_of(part), np.float64), limit)
        counted = np.isfinite(a) & ~bad_kinds[SATURATED]  # the outputs the tolerance and the allowance apply to
        err, rel = _errors(a[counted], e[counted])
        bad = np.zeros(a.size, bool)
        if bit_exact:
            bad = _bits_differ(flat_a[part], flat_e[part])
        else:
            bad[counted] = (err > atol) & (rel > loss)
        mismatches += int(bad.sum())
        for kind, mask in bad_kinds.items():
            reasons[kind] = reasons.get(kind, 0) + int(mask.sum())
            bad |= mask
        if first is None and bad.any():
            first = lo + int(np.argmax(bad))
        max_abs, max_rel = max(max_abs, float(err.max(initial=0.0))), max(max_rel, float(rel.max(initial=0.0)))
        if progress is not None:
            progress(part.stop - part.start)
    index = None if first is None else tuple(int(i) for i in np.unravel_index(first, actual.shape))
    reasons = {k: v for k, v in reasons.items() if v}
    return Comparison(reference, n, max_abs, max_rel, mismatches, math.floor(loss * n), index, identical, loss,
                      sum(reasons.values()), tuple(reasons.items()), _name(actual.dtype), atol=atol,
                      bit_exact=bit_exact)


CHUNK = 1 << 22


def _largest_finite(flat: np.ndarray) -> float:
    """The largest finite ``|x|`` of a float array (0 if none), chunk by chunk."""
    top = 0.0
    for lo in range(0, flat.size, CHUNK):
        x = np.abs(flat[lo:lo + CHUNK].astype(np.float64))
        top = max(top, float(x[np.isfinite(x)].max(initial=0.0)))
    return top


def _bits_differ(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per element: the bits of ``a`` and ``e`` differ, NaNs of any payload counting as equal."""
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    differ = a.view(width) != e.view(width)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(a.astype(np.float64)) & np.isnan(e.astype(np.float64))
    return differ & ~both_nan


def _check_allowance(dtype, steps, rtol) -> int:
    """``steps`` as an int, or a ValueError for an integer allowance under which some wrong value of every
    element passes (module docstring: below :data:`MAX_ALLOWANCE` of the range; bool: none)."""
    name = _name(dtype)
    if not (float(steps).is_integer() and steps >= 0 and rtol >= 0):
        raise ValueError(f"steps={steps!r} must be a whole number >= 0 and rtol={rtol!r} >= 0")
    steps = int(steps)
    if np.dtype(dtype) == np.bool_:
        if steps or rtol:
            raise ValueError(f"steps={steps}, rtol={rtol!r} for a bool output: a bool has no steps, and one step "
                             "accepts every element inverted; bool outputs compare exactly (steps=0, rtol=0)")
        return 0
    span = _range(dtype)
    bound = Fraction(MAX_ALLOWANCE) * span  # exact (1/8 is a binary fraction) for 64-bit ranges
    if not steps < bound:
        raise ValueError(f"steps={steps} for {name} outputs: the allowance must stay below 1/8 of the range "
                         f"({span} steps), at most {math.ceil(bound) - 1}, or a wrap, a sign flip or "
                         "a wrong scale could pass (fusekit.verify)")
    if not rtol < MAX_ALLOWANCE:
        raise ValueError(f"rtol={rtol!r} for {name} outputs: it must be below 1/8, or a wrong answer could pass "
                         "(at rtol 1 zero passes for every value, at 1/2 a halved answer does; fusekit.verify)")
    return steps


def _compare_integers(actual: np.ndarray, expected: np.ndarray, reference: str, loss: float, steps: int,
                      rtol: float, progress, bit_exact: bool = False) -> Comparison:
    """:func:`compare` for integer and bool outputs: a mismatch is an element farther than
    ``steps + rtol * |expected|`` from ``expected``, counted exactly for every width up to 64 bits."""
    steps = _check_allowance(actual.dtype, steps, rtol)
    name = _name(actual.dtype)
    if _ml_integer(actual.dtype):  # int4, uint4, ...: every value is exact in int8 / uint8
        wide = np.int8 if int(ml_dtypes.iinfo(actual.dtype).min) < 0 else np.uint8
        actual, expected = actual.astype(wide), expected.astype(wide)
    flat_a, flat_e = actual.reshape(-1), expected.reshape(-1)
    n = flat_a.size
    max_abs = max_rel = 0.0
    mismatches, first = 0, None
    for lo in range(0, n, CHUNK):
        part = slice(lo, min(lo + CHUNK, n))
        a, e = flat_a[part], flat_e[part]
        dist = _distance(a, e)
        bad = dist > _allowance(steps, rtol, e)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.maximum(np.abs(a.astype(np.float64)), np.abs(e.astype(np.float64))) + _MINIMUM
            rel = np.where(dist == 0, 0.0, dist / scale)
        mismatches += int(bad.sum())
        if first is None and bad.any():
            first = lo + int(np.argmax(bad))
        max_abs = max(max_abs, float(dist.max(initial=0)))
        max_rel = max(max_rel, float(rel.max(initial=0.0)))
        if progress is not None:
            progress(part.stop - part.start)
    index = None if first is None else tuple(int(i) for i in np.unravel_index(first, actual.shape))
    identical = bool(np.array_equal(actual, expected))
    return Comparison(reference, n, max_abs, max_rel, mismatches, math.floor(loss * n), index, identical, loss,
                      dtype=name, steps=steps, rtol=rtol, bit_exact=bit_exact)


def _distance(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``|a - e|`` of two integer (or bool) arrays of one dtype, exactly, as uint64: the larger minus the
    smaller, modulo 2^64 (two's complement makes that the true distance for every width up to 64 bits)."""
    if a.dtype == np.bool_:
        a, e = a.view(np.uint8), e.view(np.uint8)
    return np.maximum(a, e).astype(np.uint64) - np.minimum(a, e).astype(np.uint64)


def _allowance(steps: int, rtol: float, e: np.ndarray) -> np.ndarray:
    """``floor(steps + rtol * |e|)`` as uint64, saturated at 2^64 - 1: exact when ``rtol`` is 0, so a 64-bit
    distance is never rounded before it is compared."""
    top = np.uint64(2**64 - 1)
    base = np.uint64(min(steps, 2**64 - 1))
    if not rtol:
        return base
    extra = np.minimum(np.floor(rtol * np.abs(e.astype(np.float64))), 2.0**63).astype(np.uint64)
    return np.where(extra > top - base, top, base + extra)


def _exact_source(exact, flat_expected: np.ndarray) -> Callable[[slice], np.ndarray]:
    if exact is None:
        return lambda part: flat_expected[part]
    if callable(exact):
        return exact
    flat = np.asarray(exact).reshape(-1)
    if flat.size != flat_expected.size:
        raise ValueError(f"exact has {flat.size} elements but the output has {flat_expected.size}")
    return lambda part: flat[part]


def _name(dtype) -> str:
    try:
        return dtypes.as_dtype(dtype).name
    except (TypeError, ValueError):
        return str(dtype)


def _largest(dtype) -> float:
    """The dtype's largest finite value (float16 65504, bfloat16 about 3.39e38, float32 about 3.40e38)."""
    try:
        return float(ml_dtypes.finfo(dtype).max)
    except (TypeError, ValueError):
        return math.inf


def overflow_threshold(dtype) -> float:
    """The smallest magnitude that rounds to infinity in ``dtype`` under round to nearest even:
    the largest finite value plus half its ulp (IEEE 754-2019 section 7.4: overflow is a rounded
    result, with the exponent unbounded, beyond the largest finite number). float16: 65520."""
    try:
        info = ml_dtypes.finfo(dtype)
    except (TypeError, ValueError):
        return math.inf
    top = float(info.max)
    return top + (top - float(np.nextafter(np.array(info.max, dtype), np.array(0, dtype)))) / 2


def _invalid(a: np.ndarray, exact: np.ndarray, limit: float) -> dict[str, np.ndarray]:
    """Outputs the exact result does not excuse, by cause (see Comparison.reasons); ``limit``: the
    dtype's :func:`overflow_threshold`.

    An output NaN is right only where the exact result is NaN (a NaN input, inf - inf); an output
    infinity only where the exact result is the same infinity; and no finite output stands for an
    exact result beyond the dtype's range (a saturating SoC's largest finite value is not it)."""
    exact_nan, exact_inf = np.isnan(exact), np.isinf(exact)
    with np.errstate(invalid="ignore"):
        out_nan = np.isnan(a) & ~exact_nan
        out_inf = np.isinf(a)
        wrong_sign = out_inf & exact_inf & (np.sign(a) != np.sign(exact))
        finite_exact = out_inf & ~exact_inf & ~exact_nan
        beyond = finite_exact & (np.abs(exact) >= limit)
        saturated = np.isfinite(a) & ~exact_nan & (np.abs(exact) >= limit)
        return {NAN: out_nan, WRONG_SIGN: wrong_sign, OVERFLOW: beyond, "inf": finite_exact & ~beyond,
                NOT_NAN: out_inf & exact_nan, SATURATED: saturated}


def _bit_identical(a: np.ndarray, e: np.ndarray) -> bool:
    if np.array_equal(a.view(np.uint8), e.view(np.uint8)):
        return True
    wa, we = a.astype(np.float64), e.astype(np.float64)  # NaNs with other payloads still count as equal
    return bool(np.array_equal(wa, we, equal_nan=True) and np.array_equal(np.signbit(wa), np.signbit(we)))


def _errors(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Absolute and relative error per element; equal values (NaN with NaN, inf with inf) have none. The
    relative error is to ``max(|a|, |e|)``, without the samples' ``+ 1e-9`` (module docstring)."""
    with np.errstate(all="ignore"):
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        err = np.where(same, 0.0, np.abs(a - e))
        err = np.where(np.isnan(err), np.inf, err)
        rel = np.where(same, 0.0, err / np.maximum(np.abs(a), np.abs(e)))  # > 0 wherever they differ
        rel = np.where(np.isnan(rel), np.inf, rel)
    return err, rel
