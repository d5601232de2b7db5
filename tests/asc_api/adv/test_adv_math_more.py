"""asc.adv lgamma, digamma, xor and the temporary-buffer rules of every asc.adv math function, with our own kernels.

References: Python's math.lgamma (float64) with C99 Annex F's pole value (+inf); a digamma written here with a
different method from fusekit's (shift to x + 40, three asymptotic terms, math.fsum of the recurrence); numpy's
bitwise_xor; the result examples printed on the pages (Lgamma.md, Digamma.md 调用示例); the temporary-buffer minima of
asc-devkit impl/adv_api/tiling/math/*_tiling*.cpp, typed in below from those files.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusekit import asc

from adv_harness import MODELS, assert_ulps, expected_math, math_edges, math_kernel, run_math


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _digamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0:
        return -math.copysign(math.inf, x)
    if x < 0 and x.is_integer():
        return math.nan
    if x < 0:
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    shift = 40
    z = x + shift
    series = math.log(z) - 1 / (2 * z) - 1 / (12 * z ** 2) + 1 / (120 * z ** 4) - 1 / (252 * z ** 6)
    return series - math.fsum(1 / (x + j) for j in range(shift))


def _expect(fn, x, mode="inf_nan"):
    with np.errstate(over="ignore"):
        want = np.array([fn(float(v)) for v in x], np.float64).astype(x.dtype)
    if mode == "saturation":  # overflow.py: +-inf -> +-max, NaN -> 0
        big = np.finfo(x.dtype).max
        want = np.where(np.isnan(want), 0, np.where(np.isinf(want), np.sign(want) * big, want)).astype(x.dtype)
    return want


def _gamma_edges(dtype):
    x = math_edges(dtype)
    extra = [-1.0, -2.0, -3.5, -0.25, 1.0e-3, 2.0, 0.01, 0.02, 0.03, 0.04, 5.3675685, 0.26528683, -2.872628,
             2.9387941, 9.001339, 30.0, -10.3]
    return np.concatenate([x, np.array(extra, dtype)])


@pytest.mark.parametrize("mode", ["inf_nan", "saturation"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name, model", [("lgamma", _lgamma), ("digamma", _digamma)])
def test_gamma_functions_on_edges(name, model, dtype, mode):
    x = _gamma_edges(dtype)
    got, (instr,) = run_math(lambda d, a, b, t: getattr(asc.adv, name)(d, a, count=x.size, temp_buffer=t), x,
                         overflow=mode)
    # digamma near its poles (x = -2.872628 and the like) loses a few ulp in any float64 evaluation: 2 ulp of the dtype
    assert_ulps(got, _expect(model, x, mode), 2 if name == "digamma" else 1)
    assert instr.cost == name.capitalize() and instr.count == x.size


def test_page_examples():
    """Lgamma.md 结果示例 (half inputs 0, 0.01 ... 0.04) and Digamma.md 结果示例 (float)."""
    x = np.array([0.0, 0.01, 0.02, 0.03, 0.04], np.float16)
    got, _ = run_math(lambda d, a, b, t: asc.adv.lgamma(d, a, count=5, temp_buffer=t), x)
    assert got[0] == np.inf
    np.testing.assert_allclose(got[1:].astype(np.float64), [4.599480, 3.900805, 3.489971, 3.197078], rtol=2e-3)
    y = np.array([5.3675685, 0.26528683, -2.872628, 2.9387941, 9.001339], np.float32)
    got, _ = run_math(lambda d, a, b, t: asc.adv.digamma(d, a, count=5, temp_buffer=t), y)
    np.testing.assert_allclose(got, [1.5843406, -3.978809, -6.2081366, 0.8983184, 2.1407988], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_xor_exact(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(9)
    a = np.concatenate([[0, info.max, info.min, 3, -1 % (info.max + 1) if info.min == 0 else -1],
                        rng.integers(info.min, info.max, 60, endpoint=True)]).astype(dtype)
    b = np.concatenate([[0, info.min, info.max, 5, 7],
                        rng.integers(info.min, info.max, 60, endpoint=True)]).astype(dtype)
    got, (instr,) = run_math(lambda d, x, y, t: asc.adv.xor(d, x, y, count=a.size, temp_buffer=t), a, b)
    np.testing.assert_array_equal(got, np.bitwise_xor(a, b))
    assert got[3] == 6  # Xor-82.md: 3 ^ 5 = 6
    # And, Or, Not, And per pass (xor_membase_impl.h); 65 int16 = 130 B: one 256 B repeat
    assert (instr.cost, instr.repeats, len(instr.reads)) == ("Xor", 4, 2)


def test_xor_rules():
    x = np.arange(32, dtype=np.int16)
    with pytest.raises(asc.KernelError, match="int16 or uint16"):
        run_math(lambda d, a, b, t: asc.adv.xor(d, a, b), x.astype(np.float16))
    with pytest.raises(asc.KernelError, match="at least 256"):  # GetXorMaxMinTmpSize min: XOR_CALC_FAC x 256
        run_math(lambda d, a, b, t: (t.set_size(255), asc.adv.xor(d, a, b, count=32, temp_buffer=t)), x)
    run_math(lambda d, a, b, t: (t.set_size(256), asc.adv.xor(d, a, b, count=32, temp_buffer=t)), x)


# (half min, float min) in bytes on Atlas A2 (arch 2201): the files' CALC factors x 256 B
MINIMA = {
    "acos": (1536, 512), "acosh": (512, 256), "asin": (1536, 512), "asinh": (768, 768), "atan": (3072, 1280),
    "atanh": (1024, 256), "ceil": (512, 256), "cos": (2048, 768), "cosh": (1536, 512), "digamma": (4096, 1792),
    "erf": (2048, 768), "erfc": (4096, 1792), "exp": (1024, 768), "floor": (512, 0), "frac": (1024, 0),
    "lgamma": (6656, 2048), "log": (0, 0), "round": (256, 0), "sign": (768, 768), "sin": (2048, 768),
    "sinh": (1024, 256), "tan": (2560, 1024), "tanh": (1024, 256), "trunc": (512, 256), "power": (2048, 1280),
}


def _call(name, n):
    if name == "exp":
        return lambda d, a, b, t: asc.adv.exp(d, a, n, 0, temp_buffer=t)
    if name == "power":
        return lambda d, a, b, t: asc.adv.power(d, a, b, count=n, temp_buffer=t)
    return lambda d, a, b, t: getattr(asc.adv, name)(d, a, count=n, temp_buffer=t)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name", sorted(MINIMA))
def test_tmp_buffer_minimum_and_one_byte_short(name, dtype):
    minimum = MINIMA[name][dtype == np.float32]
    x = np.linspace(0.1, 0.9, 32).astype(dtype)
    assert asc.adv.max_min_tmp_size(name, 32, np.dtype(dtype).itemsize)[1] == minimum
    call = _call(name, x.size)
    run_math(lambda d, a, b, t: (t.set_size(minimum), call(d, a, b, t)), x)  # the smallest legal buffer
    if minimum:
        with pytest.raises(asc.KernelError, match=f"at least {minimum}"):
            run_math(lambda d, a, b, t: (t.set_size(minimum - 1), call(d, a, b, t)), x)


@pytest.mark.parametrize("name, dtype, n, most", [
    ("tanh", np.float16, 1024, 4 * 2048), ("acosh", np.float32, 1024, 1 * 4096), ("exp", np.float16, 1024, 4 * 4096),
    ("sin", np.float32, 1024, 3 * 4096), ("power", np.float32, 1024, 4 * 4096 + 256)])
def test_largest_used_tmp_is_the_helpers_max(name, dtype, n, most):
    """Bytes past Get<Name>MaxMinTmpSize's maxValue are not used ("超出该值的空间不会被该接口使用"): a bigger buffer
    is marked written only up to the max."""
    x = np.linspace(0.1, 0.9, n).astype(dtype)
    assert asc.adv.max_min_tmp_size(name, n, np.dtype(dtype).itemsize)[0] == most
    _, (instr,) = run_math(_call(name, n), x, tmp=most + 4096)
    (tmp,) = instr.undefined
    assert tmp.nbytes == most


def test_arch_dependent_minima_on_310p():
    """power_tiling_impl.cpp POW_TILING_PARAM_V200 (half 16, float 5) and round_tiling_impl.cpp DAV_2002 (float 1)."""
    x = np.linspace(0.1, 0.9, 32).astype(np.float32)
    for name, minimum in (("power", 5 * 256 + 256), ("round", 256)):
        call = _call(name, 32)
        with pytest.raises(asc.KernelError, match=f"at least {minimum}"):
            run_math(lambda d, a, b, t: (t.set_size(minimum - 1), call(d, a, b, t)), x, soc="Ascend310P3",
                 overflow="saturation")
        run_math(lambda d, a, b, t: (t.set_size(minimum), call(d, a, b, t)), x, soc="Ascend310P3", overflow="saturation")


def test_exp_not_offered_on_310p():
    x = np.ones(16, np.float32)
    with pytest.raises(asc.KernelError, match="not offered"):  # Exp-81.md: Atlas 推理系列产品AI Core：不支持
        run_math(lambda d, a, b, t: asc.adv.exp(d, a, 16, 0), x, soc="Ascend310P3", overflow="saturation")


def test_reuse_source_lowers_the_minimum_and_leaves_src_undefined():
    """cos_tiling_impl.cpp: float 3 x 256 B, 2 x 256 B with isReuseSource (src then holds temporaries)."""
    x = np.linspace(-3, 3, 32).astype(np.float32)
    body = lambda d, a, b, t: (t.set_size(512), asc.adv.cos(d, a, count=32, temp_buffer=t,  # noqa: E731
                                                              is_reuse_source=True))
    got, (instr,) = run_math(body, x)
    assert_ulps(got, np.cos(x.astype(np.float64)).astype(np.float32), 1)
    assert any(acc.start == instr.reads[0].start for acc in instr.undefined)
    with pytest.raises(asc.KernelError, match="at least 768"):
        run_math(lambda d, a, b, t: (t.set_size(512), asc.adv.cos(d, a, count=32, temp_buffer=t)), x)


def test_cost_is_the_decomposition():
    """repeats = instructions per pass (math.py _OPS, an assumption) x 256 B float repeats: 1000 halves = 16 repeats."""
    x = np.ones(1000, np.float16)
    _, (instr,) = run_math(lambda d, a, b, t: asc.adv.erf(d, a, count=1000, temp_buffer=t), x, tmp=16384)
    assert instr.repeats == 27 * 16


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_saturation_mode_on_edges(name, dtype):
    """Every function on the edge inputs (0, -0, subnormals, +-inf, NaN, huge) under the saturation overflow mode:
    the inf_nan result (test_adv_math's model) with +-inf -> +-max and NaN -> 0 (overflow.py)."""
    x = math_edges(dtype)
    got, _ = run_math(_call(name, x.size), x, overflow="saturation")
    want = expected_math(name, x)
    big = np.finfo(dtype).max
    with np.errstate(invalid="ignore"):
        want = np.where(np.isnan(want), 0, np.where(np.isinf(want), np.sign(want) * big, want)).astype(dtype)
    assert not np.isnan(got).any() and not np.isinf(got).any()
    assert_ulps(got, want, 1)


def test_int32_power_exact_with_wraparound():
    """Power.md: int32 is a supported type on A2/A3 and 310P. Model: Python's exact integer pow, reduced modulo 2**32
    to int32 (the int32 Mul of power_int_impl.h wraps; products modulo 2**32 commute with that reduction); a negative
    exponent gives trunc(1 / x**|e|): 1 or -1 for x**|e| = +-1, else 0 (HandleNegativeExpPowerI); 0 ** 0 = 1."""
    base = np.array([2, -3, 0, 0, 7, -1, -1, 1, 5, 12345, 2, -2, 3, 0, 46341, 2] * 2, np.int32)
    exp = np.array([10, 3, 0, 5, 0, 7, -3, -9, -2, 3, 31, 31, 40, -1, 2, 32] * 2, np.int32)

    def model(x, e):
        r = pow(int(x), abs(int(e)))
        r = (r + 2 ** 31) % 2 ** 32 - 2 ** 31
        if e < 0:
            return r if r in (1, -1) else 0
        return r

    got, (instr,) = run_math(lambda d, a, b, t: asc.adv.power(d, a, b, count=base.size, temp_buffer=t), base, exp)
    np.testing.assert_array_equal(got, np.array([model(x, e) for x, e in zip(base, exp)], np.int32))
    # GetPowerMaxMinTmpSize int32 tensor ** tensor on A2: POW_TENSOR_TENSOR_INT_CALC_PROC 6 x 256 B
    assert asc.adv.max_min_tmp_size("power", 32, 4, is_int=True)[1] == 1536
    with pytest.raises(asc.KernelError, match="at least 1536"):
        run_math(lambda d, a, b, t: (t.set_size(1535), asc.adv.power(d, a, b, count=base.size, temp_buffer=t)),
             base, exp)


def test_without_temp_buffer_the_stack_after_tpipe_must_hold_the_minimum():
    """PopStackBuffer: the UB after TPipe's buffers (workspace.py). 16 floats: src, src1, dst take 3 x 64 B; a TBuf
    leaving 256 B free is too little for Lgamma's 2048 B (float), enough for Tanh's 256 B."""
    x = np.linspace(0.5, 4, 16).astype(np.float32)
    leave_256 = 192 * 1024 - 3 * 64 - 256
    with pytest.raises(asc.KernelError, match="below the 2048 bytes Lgamma needs"):
        run_math(lambda d, a, b, t: asc.adv.lgamma(d, a, count=16), x, tmp=leave_256)
    got, (instr,) = run_math(lambda d, a, b, t: asc.adv.tanh(d, a, count=16), x, tmp=leave_256)
    assert_ulps(got, np.tanh(x.astype(np.float64)).astype(np.float32), 1)
    ((start, stop),) = [(acc.start, acc.stop) for acc in instr.undefined]
    assert (start, stop) == (192 * 1024 - 256, 192 * 1024)


def test_sanitizer_flags_reading_src_after_is_reuse_source():
    """Cos.md isReuseSource: the float path may use src as scratch; reading src afterwards is an initcheck finding."""
    import fusekit

    x = np.linspace(0.5, 4, 16).astype(np.float32)

    def body(d, a, b, t):
        asc.adv.cos(d, a, count=16, temp_buffer=t, is_reuse_source=True)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.adds(b, a, 1.0, 16)  # reads src again

    report = fusekit.sanitize(math_kernel)[1](x, x.copy(), np.zeros(16, np.float32), body, 16, 8192)
    assert [(f.tool, f.kind) for f in report.findings] == [("initcheck", "undefined read")]
    assert "cos left undefined" in report.findings[0].message
