"""Cast rules fusekit.asc enforces: round modes, saturation, unsupported pairs.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fusekit import asc

from support import assert_bits_equal, gm_view, raises_at, ub_buf

RM = asc.RoundMode


# ---------------------------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------------------------

@asc.jit
def cast_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, xg.dtype, N)
    b = ub_buf(pipe, yg.dtype, N)
    asc.data_copy(a, xg, N)
    asc.cast(b, a, MODE, N)  # <cast>
    asc.data_copy(yg, b, N)


def run_cast(x, dst_dtype, mode):
    y = np.zeros(x.size, dst_dtype)
    cast_kernel[1](x, y, mode, x.size)
    return y


def f16_reference(v: float, mode: asc.RoundMode) -> np.float16:
    """Independent float32 -> float16 rounding with exact rational arithmetic (finite results only)."""
    x = Fraction(v)
    if x == 0:
        return np.float16(v)
    sign = -1 if x < 0 else 1
    _, e = math.frexp(abs(v))                   # |v| = m * 2**e, m in [0.5, 1)
    ulp = Fraction(2) ** (max(e - 1, -14) - 10)  # 11-bit significand; subnormals below 2**-14
    q = abs(x) / ulp
    lo, frac = math.floor(q), q - math.floor(q)
    if frac == 0:
        k = lo
    elif mode in (RM.CAST_RINT, RM.CAST_NONE):
        k = lo + 1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2) else lo
    elif mode is RM.CAST_ROUND:
        k = lo + 1 if frac >= Fraction(1, 2) else lo
    elif mode is RM.CAST_TRUNC:
        k = lo
    elif mode is RM.CAST_FLOOR:
        k = lo if sign > 0 else lo + 1
    elif mode is RM.CAST_CEIL:
        k = lo + 1 if sign > 0 else lo
    else:  # CAST_ODD
        k = lo if lo % 2 else lo + 1
    r = k * ulp
    if r > 65504:
        return np.float16(sign * np.inf)
    return np.float16(math.copysign(float(r), sign))


CAST_VALUES = np.array(
    [1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-12, 1 + 2**-11 + 2**-22, 2.5 + 2**-10, 2049.0, 2051.0, 2050.5,
     2**-25, 3 * 2**-25, 2**-26, 5 * 2**-26, 2**-14 + 2**-25, 0.1, 1 / 3, 2 / 3, 65504.0, 65519.0, 65519.996,
     1.0, 0.0, 2**-30, 1234.567, 7.0009765625],
    dtype=np.float32)


@pytest.mark.parametrize("mode", list(RM), ids=[m.name for m in RM])
def test_cast_float32_to_float16_all_round_modes(mode, rng):
    x = np.concatenate([CAST_VALUES, -CAST_VALUES])
    x = np.concatenate([x, rng.uniform(-60000, 60000, 64 - x.size).astype(np.float32)])
    x[-8:] = rng.uniform(-1e-3, 1e-3, 8).astype(np.float32)
    expected = np.array([f16_reference(float(v), mode) for v in x], np.float16)
    assert_bits_equal(run_cast(x, np.float16, mode), expected)


def test_cast_reference_sanity():
    # the ties really are ties, and the modes disagree where they should
    tie = float(np.float32(1 + 2**-11))
    assert {m: float(f16_reference(tie, m)) for m in (RM.CAST_RINT, RM.CAST_ROUND, RM.CAST_FLOOR, RM.CAST_ODD)} == {
        RM.CAST_RINT: 1.0, RM.CAST_ROUND: 1 + 2**-10, RM.CAST_FLOOR: 1.0, RM.CAST_ODD: 1 + 2**-10}
    assert float(f16_reference(-float(np.float32(2**-25)), RM.CAST_TRUNC)) == 0.0
    assert math.copysign(1, float(f16_reference(-float(np.float32(2**-25)), RM.CAST_TRUNC))) == -1


def test_cast_float32_to_bfloat16_rint_matches_ml_dtypes(rng):
    x = np.concatenate([rng.standard_normal(40).astype(np.float32) * 1000,
                        np.array([1 + 2**-8, 1 + 3 * 2**-8, -1 - 2**-8, 1 + 2**-9, 3e38, 1e-40], np.float32)])
    x = np.concatenate([x, rng.uniform(-1, 1, 64 - x.size).astype(np.float32)])
    for mode in (RM.CAST_RINT,):  # float -> bfloat16 takes no CAST_NONE (Cast.md A2 table)
        assert_bits_equal(run_cast(x, ml_dtypes.bfloat16, mode), x.astype(ml_dtypes.bfloat16))


FLOAT_TO_INT = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6, 2.6, 7.0, -7.0, 0.0])
INT_EXPECTED = {
    RM.CAST_FLOOR: [-3, -2, -1, 0, 1, 2, 2, -3, 2, 7, -7, 0],
    RM.CAST_CEIL: [-2, -1, 0, 1, 2, 3, 3, -2, 3, 7, -7, 0],
    RM.CAST_TRUNC: [-2, -1, 0, 0, 1, 2, 2, -2, 2, 7, -7, 0],
    RM.CAST_ROUND: [-3, -2, -1, 1, 2, 3, 2, -3, 3, 7, -7, 0],
    RM.CAST_RINT: [-2, -2, 0, 0, 2, 2, 2, -3, 3, 7, -7, 0],
}


@pytest.mark.parametrize("src", [np.float16, np.float32])
@pytest.mark.parametrize("mode", list(INT_EXPECTED), ids=[m.name for m in INT_EXPECTED])
def test_cast_float_to_int32(src, mode):
    x = np.resize(FLOAT_TO_INT, 64).astype(src)
    assert np.array_equal(run_cast(x, np.int32, mode), np.resize(INT_EXPECTED[mode], 64).astype(np.int32))


def test_cast_float_to_int32_saturates():
    x = np.resize(np.array([3e9, -3e9, np.inf, -np.inf, np.nan], np.float32), 64)
    assert np.array_equal(run_cast(x, np.int32, RM.CAST_RINT)[:5], [2**31 - 1, -2**31, 2**31 - 1, -2**31, 0])


def test_cast_float32_to_int64_saturates():
    x = np.resize(np.array([1e30, -1e30, np.inf, 3e9], np.float32), 64)
    assert np.array_equal(run_cast(x, np.int64, RM.CAST_RINT)[:4], [2**63 - 1, -2**63, 2**63 - 1, 3000000000])


@pytest.mark.parametrize("src, dst, soc", [
    (np.float16, ml_dtypes.bfloat16, None), (np.int16, np.int32, None),
    (np.float32, ml_dtypes.bfloat16, "Ascend310P3"),
])
def test_cast_unsupported_pair_raises(src, dst, soc):
    src_name, dst_name = np.dtype(src).name, np.dtype(dst).name
    launch = {"soc": soc} if soc else {}
    with raises_at(cast_kernel, "cast", rf"Cast {src_name} -> {dst_name} is not available on {soc or 'Ascend910B1'}"):
        cast_kernel[1](np.zeros(64, src), np.zeros(64, dst), RM.CAST_RINT, 64, **launch)


def test_cast_to_the_same_dtype_points_at_data_copy():
    with raises_at(cast_kernel, "cast", "cast from float16 to itself: copy within UB with data_copy"):
        cast_kernel[1](np.zeros(64, np.float16), np.zeros(64, np.float16), RM.CAST_RINT, 64)


def test_cast_bad_round_mode_raises():
    with raises_at(cast_kernel, "cast", r"round_mode must be an asc\.RoundMode"):
        cast_kernel[1](np.zeros(64, np.float32), np.zeros(64, np.float16), "rint", 64)
