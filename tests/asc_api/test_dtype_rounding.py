"""float64 -> 16-bit float rounding: one rounding to nearest even, the same bits with every ml_dtypes version.

ml_dtypes before 0.6 casts float64 -> bfloat16 through a float32 rounded to nearest: a double rounding that is
wrong next to bfloat16 midpoints. Expected values come from tests/ieee754_ref.py (exact rationals, one rounding).
"""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ieee754_ref as ref
from fusekit.asc import dtypes
from fusekit.asc.basic.rounding import RoundMode, convert
from fusekit.verify import model

FORMATS = {np.dtype(np.float16): ref.FLOAT16, np.dtype(ml_dtypes.bfloat16): ref.BFLOAT16,
           np.dtype(np.float32): ref.FLOAT32}


def _expected(values, dtype):
    fmt = FORMATS[np.dtype(dtype)]
    return np.array([ref.encode(ref.round_to(Fraction(float(v)), fmt), fmt) for v in values],
                    dtype=ref.UINT[fmt.width])


def _near_midpoints(dtype, n=4000, seed=7):
    """float64 values a few float32 ulps either side of ``dtype``'s rounding midpoints (where double rounding
    through float32 goes wrong), of both signs and many binades."""
    rng = np.random.default_rng(seed)
    fmt = FORMATS[np.dtype(dtype)]
    exps = rng.integers(fmt.emin, fmt.emax, n)
    mant = rng.integers(0, 2 ** (fmt.p - 1), n)
    mid = (1 + (mant + 0.5) / 2 ** (fmt.p - 1)) * np.exp2(exps.astype(np.float64))
    offset = rng.choice([-1, 1], n) * rng.integers(1, 1 << 20, n) * 2.0 ** -52 * mid
    return np.concatenate([mid + offset, -(mid + offset), mid])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32], ids=lambda d: np.dtype(d).name)
def test_nearest_rounds_float64_once(dtype):
    """dtypes.nearest(float64 x) is the IEEE 754 single rounding of x, next to midpoints included."""
    x = _near_midpoints(dtype)
    got = dtypes.nearest(x, dtype).view(FORMATS[np.dtype(dtype)].width == 16 and np.uint16 or np.uint32)
    np.testing.assert_array_equal(got, _expected(x, dtype))


def test_the_double_rounding_trap_of_old_ml_dtypes():
    """1 + 2**-8 + 2**-30 is above bfloat16's midpoint 1 + 2**-8: it rounds up to 1 + 2**-7, not down to 1."""
    x = np.array([1 + 2 ** -8 + 2 ** -30])
    assert float(dtypes.nearest(x, ml_dtypes.bfloat16)[0]) == 1 + 2 ** -7


def test_every_float64_to_bfloat16_path_rounds_once():
    """The Cast model, the verify models, scalar conversion and the generator's reference all round once."""
    x = _near_midpoints(ml_dtypes.bfloat16, n=500)
    want = _expected(x, ml_dtypes.bfloat16)
    bits = lambda a: np.asarray(a, ml_dtypes.bfloat16).view(np.uint16)  # noqa: E731
    np.testing.assert_array_equal(bits(convert(x, dtypes.bfloat16, RoundMode.CAST_RINT)), want)
    np.testing.assert_array_equal(bits(model("exact").result(x, ml_dtypes.bfloat16)), want)
    scalars = [dtypes.to_scalar(float(v), dtypes.bfloat16) for v in x[:50]]
    np.testing.assert_array_equal(bits(np.array(scalars, ml_dtypes.bfloat16)), want[:50])
