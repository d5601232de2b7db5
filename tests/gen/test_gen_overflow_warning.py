"""A float16 row sum that overflows inside a generated kernel is reported (Trace.overflows) and warned about
(fusekit.PrecisionWarning), though the output itself may be finite (rsqrt(inf) = 0)."""

import warnings

import numpy as np
import pytest

import fusekit
from fusekit import asc
from fusekit.gen import catalogue as cat

F16_MAX = float(np.finfo(np.float16).max)


def _rows(scale: float, rows: int = 4, width: int = 1024):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((rows, width)) * scale).astype(np.float16)
    return x, x.copy(), np.ones(width, np.float16)


def _sum_of_squares(x, r) -> np.ndarray:
    s = x.astype(np.float64) + r.astype(np.float64)
    return (s * s).sum(axis=-1)


def test_native_float16_rms_norm_overflow_warns():
    x, r, g = _rows(6.0)
    assert (_sum_of_squares(x, r) > F16_MAX).all()  # independent: the float16 accumulation must overflow
    with pytest.warns(fusekit.PrecisionWarning, match="reduce_sum at .*overflowed float16.*precision='fp32'"):
        y, _ = cat.get("add_rms_norm")(x, r, g)
    assert np.isfinite(y).all()  # the silent failure the warning is for: rsqrt(inf) = 0


@pytest.mark.parametrize("scale, precision", [(0.05, "native"), (6.0, "fp32")])
def test_no_warning_when_nothing_overflows(scale, precision):
    x, r, g = _rows(scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fusekit.PrecisionWarning)
        y, _ = cat.get("add_rms_norm")(x, r, g, precision=precision)
    assert np.isfinite(y).all()


@asc.jit
def _row_sum(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4096)
    t = buf.get(asc.float16)
    out = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=out, num=64)
    o = out.get(asc.float16)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tmp, num=512)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 16)
    asc.data_copy(t, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.reduce_sum(o, t, tmp.get(asc.float16), n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(yg, o, 16)


@pytest.mark.parametrize("values, flagged", [
    (np.full(1024, 100.0), True),          # 102400 > 65504 from finite elements
    (np.full(1024, 1.0), False),
    (np.r_[np.inf, np.ones(1023)], False),  # inf in, inf out: not an overflow of the sum
])
def test_trace_overflows_records_the_reduce_sum(values, flagged):
    x = values.astype(np.float16)
    y = np.zeros(16, np.float16)
    result = _row_sum[1](x, y, x.size)
    assert [i.op for i in result.trace.overflows] == (["reduce_sum"] if flagged else [])
    assert np.isinf(y[0]) == (flagged or not np.isfinite(x).all())


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32])
def test_non_finite_counts_by_exponent_bits_as_numpy_does_in_float64(dtype):
    from fusekit.gen.op import _non_finite

    dt = np.dtype(dtype) if dtype != "bfloat16" else __import__("ml_dtypes").bfloat16
    x = np.array([1, np.inf, -np.inf, np.nan, -np.nan, 65504, 0, -0.0, 6e-8], dtype=dt)
    assert _non_finite(x) == int((~np.isfinite(x.astype(np.float64))).sum()) == 4
    assert _non_finite(x[::2]) == int((~np.isfinite(x[::2].astype(np.float64))).sum())  # strided views too


def test_a_row_sum_after_a_matmul_that_overflows_warns():
    """The epilogue of a mix kernel is watched like a vector operator's: its row sum's overflow is named."""
    @fusekit.op(dtypes=("float16",))
    def mm_center(a, b):
        z = fusekit.matmul(a, b)
        return z - fusekit.mean(z, axis=-1, keepdims=True)
    a, b = np.ones((1, 33), np.float16), np.full((33, 64), 60, np.float16)
    assert 64 * 33 * 60 > F16_MAX  # independent: the row of 64 values of 1980 sums past float16's range
    with pytest.warns(fusekit.PrecisionWarning, match=r"reduce_sum at .*\.py:\d+ overflowed float16"):
        mm_center.run(a, b, precision="native")
