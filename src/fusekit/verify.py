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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fusekit.asc import dtypes
from fusekit.asc.vector import RoundMode, convert

LOSS = {"float16": 1e-3, "float32": 1e-4, "bfloat16": 1.6e-2}
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
        """Round once to ``dtype``. float64 -> bfloat16 goes through float32 rounded to odd, which
        keeps the double rounding exact (float32 has >= p + 2 bits for bfloat16's p = 8)."""
        with np.errstate(over="ignore"):  # overflow to inf is the rounding the model asks for
            if x.dtype == np.float64 and dtypes.from_numpy(dtype).name == "bfloat16":
                x = convert(x, dtypes.float32, RoundMode.CAST_ODD)
            return x.astype(dtype)


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


@dataclass(frozen=True)
class Comparison:
    """Result of comparing an output with a reference (errors in the output's units).

    Attributes:
        reference: reference model name.
        n: elements compared.
        max_abs_err, max_rel_err: largest absolute and relative error (NaN/inf mismatches count as inf).
        mismatches: elements whose absolute and relative error both exceed ``loss``.
        allowed: most mismatches that still pass (``floor(loss * n)``).
        first_mismatch: index (in the output's shape) of the first mismatch, or None.
        bit_identical: every element has the same bits as the reference (NaNs equal to NaNs).
        loss: the tolerance used.
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

    @property
    def passed(self) -> bool:
        return self.mismatches <= self.allowed

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        bits = "bit-identical" if self.bit_identical else "not bit-identical"
        first = "" if self.first_mismatch is None else f", first at index {list(self.first_mismatch)}"
        return (f"vs {self.reference:<8} {verdict}  {bits}; max abs err {self.max_abs_err:.3g}, max rel err "
                f"{self.max_rel_err:.3g}; {self.mismatches}/{self.n} mismatches (allowed {self.allowed} at loss "
                f"{self.loss:g}){first}")


def tolerance(dtype) -> float:
    """Default ``loss`` for a dtype (see module doc for sources)."""
    name = dtypes.as_dtype(dtype).name
    if name not in LOSS:
        raise ValueError(f"no default tolerance for {name}; pass loss= explicitly")
    return LOSS[name]


def compare(actual: np.ndarray, expected: np.ndarray, *, reference: str = "reference",
            loss: float | None = None) -> Comparison:
    """Compare ``actual`` with ``expected`` (same shape and dtype) under the samples' criterion.

    Works through the arrays in chunks of ``CHUNK`` elements, so memory stays bounded for large outputs.

    Raises:
        ValueError: shapes or dtypes differ.
    """
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise ValueError(f"cannot compare {actual.dtype}{list(actual.shape)} with {expected.dtype}{list(expected.shape)}")
    loss = tolerance(actual.dtype) if loss is None else loss
    flat_a, flat_e = actual.reshape(-1), expected.reshape(-1)
    n = flat_a.size
    max_abs = max_rel = 0.0
    mismatches, first, identical = 0, None, True
    for lo in range(0, n, CHUNK):
        a, e = flat_a[lo:lo + CHUNK], flat_e[lo:lo + CHUNK]
        identical = identical and _bit_identical(a, e)
        err, rel = _errors(a.astype(np.float64), e.astype(np.float64))
        bad = (err > loss) & (rel > loss)
        count = int(bad.sum())
        if count and first is None:
            first = lo + int(np.argmax(bad))
        mismatches += count
        max_abs, max_rel = max(max_abs, float(err.max(initial=0.0))), max(max_rel, float(rel.max(initial=0.0)))
    index = None if first is None else tuple(int(i) for i in np.unravel_index(first, actual.shape))
    return Comparison(reference, n, max_abs, max_rel, mismatches, math.floor(loss * n), index, identical, loss)


CHUNK = 1 << 22


def _bit_identical(a: np.ndarray, e: np.ndarray) -> bool:
    if np.array_equal(a.view(np.uint8), e.view(np.uint8)):
        return True
    wa, we = a.astype(np.float64), e.astype(np.float64)  # NaNs with other payloads still count as equal
    return bool(np.array_equal(wa, we, equal_nan=True) and np.array_equal(np.signbit(wa), np.signbit(we)))


def _errors(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Absolute and relative error per element; equal values (NaN with NaN, inf with inf) have none."""
    with np.errstate(all="ignore"):
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        err = np.where(same, 0.0, np.abs(a - e))
        err = np.where(np.isnan(err), np.inf, err)
        rel = np.where(same, 0.0, err / (np.maximum(np.abs(a), np.abs(e)) + _MINIMUM))
        rel = np.where(np.isnan(rel), np.inf, rel)
    return err, rel
