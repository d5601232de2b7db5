"""asc.adv elementwise math functions (fusekit.asc.adv.math), with our own @asc.jit kernels.

Expected values come from an independent model: Python's scalar ``math`` library in float64 (C99 Annex F
special values where ``math`` raises instead: log(0) = -inf, atanh(+-1) = +-inf, overflow = inf), then one
rounding to the dtype. Inputs are edge values: +-0, the smallest subnormal and a larger one, +-inf, NaN, huge
magnitudes, and ordinary values including .5 ties.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusekit import asc

import ieee754_ref as ref
from adv_harness import MODELS, assert_ulps, expected_math, math_edges, run_math



@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_function_edges(name, dtype):
    x = math_edges(dtype)
    if name == "exp":
        body = lambda d, a, b, t: asc.adv.exp(d, a, x.size, 0, temp_buffer=t)  # noqa: E731
    else:
        body = lambda d, a, b, t: getattr(asc.adv, name)(d, a, count=x.size, temp_buffer=t)  # noqa: E731
    got, instrs = run_math(body, x)
    want = expected_math(name, x)
    if name in ("ceil", "floor", "trunc", "round", "sign", "frac"):
        np.testing.assert_array_equal(got, want)  # exact functions: bit-equal (NaN == NaN here)
        if name != "sign":  # a zero keeps its sign (IEEE 754 roundToIntegral)
            zeros = want == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    else:
        assert_ulps(got, want, 1)
    (instr,) = instrs
    # the temp buffer is marked used unless the helper says the function needs none (floor / frac float, log)
    needs = asc.adv.max_min_tmp_size(name, x.size, x.dtype.itemsize)[0] > 0
    assert instr.cost.lower() == name and instr.count == x.size and bool(instr.undefined) == needs


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_power_edges(dtype):
    x = np.array([2, 0, 0, -2, 4, np.nan, 1, 10, -0.0, np.inf, 0.5, -8], dtype)
    y = np.array([10, -1, 0, 3, 0.5, 0, np.nan, 30, -3, -1, -2, 1 / 3], dtype)
    got, (instr,) = run_math(lambda d, a, b, t: asc.adv.power(d, a, b), x, y)

    def model(a, b):  # C99 Annex F pow special cases, else math.pow in float64
        if b == 0 or a == 1:
            return 1.0
        if math.isnan(a) or math.isnan(b):
            return math.nan
        if a == 0 and b < 0:
            return math.copysign(math.inf, a) if float(b).is_integer() and int(b) % 2 else math.inf
        try:
            return math.pow(a, b)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf
    with np.errstate(over="ignore"):  # 10 ** 30 overflows half: inf, as the one rounding gives
        want = np.array([model(float(a), float(b)) for a, b in zip(x, y)], np.float64).astype(dtype)
    assert_ulps(got, want, 1)
    assert instr.cost == "Power" and len(instr.reads) == 2


def test_saturation_mode_clamps_inf_and_nan():
    x = np.array([np.inf, -np.inf, np.nan, 20.0], np.float16)
    got, _ = run_math(lambda d, a, b, t: asc.adv.exp(d, a, x.size, 0), x, overflow="saturation")
    # saturation (overflow.py): +inf -> max, NaN -> 0; exp(20) overflows half -> max
    np.testing.assert_array_equal(got, np.array([65504, 0, 0, 65504], np.float16))


def test_refused_dtype_is_kernel_error():
    x = np.arange(16, dtype=np.int32)
    with pytest.raises(asc.KernelError, match=r"half or float"):
        run_math(lambda d, a, b, t: asc.adv.tanh(d, a, count=16), x)


def test_tmp_buffer_must_be_uint8_and_disjoint():
    x = np.ones(16, np.float32)
    with pytest.raises(asc.KernelError, match="overlap"):  # Sin.md 约束说明: sharedTmpBuffer apart from src/dst
        run_math(lambda d, a, b, t: asc.adv.sin(d, a, count=16, temp_buffer=a.reinterpret_cast(asc.uint8)), x)
    with pytest.raises(asc.KernelError, match="uint8"):  # sharedTmpBuffer is LocalTensor<uint8_t>
        run_math(lambda d, a, b, t: asc.adv.sin(d, a, count=16, temp_buffer=b), x)


def test_trace_records_reads_writes_and_undefined_tmp():
    x = np.ones(40, np.float16)
    _, (instr,) = run_math(lambda d, a, b, t: asc.adv.tanh(d, a, count=40, temp_buffer=t), x, tmp=1024)
    (read,), (write,), (tmp,) = instr.reads, instr.writes, instr.undefined
    assert (read.stop - read.start, write.stop - write.start, tmp.stop - tmp.start) == (80, 80, 1024)
    # repeats: Tanh's 9 vector instructions x one 256 B pass over 40 float temporaries (math.py _OPS, an assumption)
    assert instr.pipe == asc.Pipe.V and instr.cost == "Tanh" and instr.repeats == 9 and instr.nbytes == 80


def test_dst_src_overlap_and_count_past_end():
    x = np.ones(16, np.float32)
    with pytest.raises(asc.KernelError, match="overlap"):
        run_math(lambda d, a, b, t: asc.adv.cos(a, a, count=16), x)
    with pytest.raises(asc.KernelError, match="out-of-bounds|elements"):
        run_math(lambda d, a, b, t: asc.adv.cos(d, a, count=17), x)


def test_error_names_kernel_line():
    x = np.ones(16, np.int16)
    with pytest.raises(asc.KernelError) as err:
        run_math(lambda d, a, b, t: asc.adv.erf(d, a), x)
    assert "test_adv_math.py" in str(err.value)


def test_exp_taylor_level_range():
    x = np.ones(16, np.float32)
    with pytest.raises(asc.KernelError, match="taylor_expand_level"):
        run_math(lambda d, a, b, t: asc.adv.exp(d, a, 16, 256), x)


def test_unsimulated_names():
    assert callable(asc.adv.softmax) and "softmax" in asc.adv.__all__  # simulated now (adv/softmax.py)
    assert callable(asc.adv.Matmul)  # simulated now (adv/matmul.py)
    with pytest.raises(AttributeError, match=r"not simulated yet \(cube unit\)"):
        asc.adv.MatmulQuantParams  # noqa: B018


@pytest.mark.parametrize("name, dtype, minimum", [("tanh", np.float16, 1024), ("tanh", np.float32, 256),
                                                   ("erf", np.float16, 2048), ("erf", np.float32, 768)])
def test_tmp_buffer_minimum(name, dtype, minimum):
    """minValue of GetTanhMaxMinTmpSize / GetErfMaxMinTmpSize: factor x 256 B (asc-devkit tanh_tiling_impl.cpp:
    TANH_HALF_CALC_PROC 4, TANH_FLOAT_CALC_PROC 1; erf_tiling_impl.cpp: ERF_HALF 8, ERF_FLOAT 3)."""
    x = math_edges(dtype)
    body = lambda d, a, b, t: getattr(asc.adv, name)(d, a, count=x.size, temp_buffer=t)  # noqa: E731
    got, _ = run_math(body, x, tmp=minimum)  # the smallest legal buffer works
    assert_ulps(got, expected_math(name, x), 1)
    with pytest.raises(asc.KernelError, match=f"at least {minimum}"):
        run_math(body, x, tmp=minimum - 32)  # one 32 B block short
    assert asc.adv.max_min_tmp_size(name, 1024, np.dtype(dtype).itemsize)[1] == minimum
    # tests/api/adv_api/tiling/test_tiling.cpp calls GetTanhMaxMinTmpSize({128}, 4) -> max = 1 * 512
    assert asc.adv.max_min_tmp_size("tanh", 128, 4) == (512, 256)


def _axpy_model(src, dst, scalar, src_fmt, dst_fmt):
    """axpy_common_impl.h order: Cast to float (exact), Muls in float, Add in float, Cast back (RINT)."""
    s_val = ref.values(np.array([scalar], np.float16), ref.FLOAT16)[0]  # the scalar is a half (U = half)
    out = []
    for x, d in zip(ref.values(src, src_fmt), ref.values(dst, dst_fmt)):
        product = ref.round_to(ref.mul(x, s_val), ref.FLOAT32)
        total = ref.round_to(ref.add(product, d), ref.FLOAT32)
        out.append(ref.round_to(total, dst_fmt))
    return out


@pytest.mark.parametrize("dst_dtype", [np.float16, np.float32])
def test_axpy_half_source_muls_then_add_in_float(dst_dtype):
    rng = np.random.default_rng(5)
    src = np.concatenate([math_edges(np.float16), rng.standard_normal(100).astype(np.float16)])
    dst0 = np.concatenate([np.array([1e-3, -0.0, 2.0 ** -24, 5, 6e4, 1, np.inf, 0, 65504, -65504, 3, 2049, -1,
                                     2.0 ** -14, 7, 0.25, 1, 2, 3, 4, 5, 6, 7], dst_dtype)[:math_edges(np.float16).size],
                           rng.standard_normal(100).astype(dst_dtype)])
    scalar = 1.1  # a half: 1.099609375; src * scalar is not exact in half, and the float sum then rounds once more
    got, (instr,) = run_math(lambda d, a, b, t: asc.adv.axpy(d, a, scalar, count=src.size, temp_buffer=t), src,
                         dst=dst0)
    fmt = ref.FLOAT16 if dst_dtype == np.float16 else ref.FLOAT32
    want = ref.to_array(_axpy_model(src, dst0, scalar, ref.FLOAT16, fmt), fmt, dst_dtype)
    assert ref.same_bits(got, want, fmt).all(), list(zip(got[~ref.same_bits(got, want, fmt)],
                                                        want[~ref.same_bits(got, want, fmt)]))
    assert instr.cost == "Axpy" and len(instr.reads) == 2 and instr.undefined


def test_axpy_refusals():
    x = np.ones(16, np.float16)
    with pytest.raises(asc.KernelError, match="needs a uint8 temp_buffer"):  # a half source needs the tmp buffer
        run_math(lambda d, a, b, t: asc.adv.axpy(d, a, 2.0, count=16), x)
    # GetAxpyMaxMinTmpSize minValue for a half source: AXPY_HALF_CALC_PROC 4 x 256 B (axpy_tiling_impl.cpp)
    run_math(lambda d, a, b, t: asc.adv.axpy(d, a, 2.0, count=16, temp_buffer=t), x, tmp=1024)
    with pytest.raises(asc.KernelError, match="at least 1024"):  # one byte short (SetSize on the TBuf's tensor)
        run_math(lambda d, a, b, t: (t.set_size(1023), asc.adv.axpy(d, a, 2.0, count=16, temp_buffer=t)), x, tmp=1024)
    with pytest.raises(asc.KernelError, match="combination"):  # float src -> half dst is not a pair of the page
        run_math(lambda d, a, b, t: asc.adv.axpy(d, a, 2.0, count=16, temp_buffer=t), x.astype(np.float32), dst=x)


def test_axpy_float_is_the_basic_instruction():
    x = np.array([1.5, -2.0, 3.0, 0.0] * 4, np.float32)
    got, (instr,) = run_math(lambda d, a, b, t: asc.adv.axpy(d, a, 2.0, count=16), x, dst=np.ones(16, np.float32))
    np.testing.assert_array_equal(got, x * 2 + 1)  # exact in float
    assert instr.op == "axpy" and instr.cost == "Axpy"
