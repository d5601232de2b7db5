"""Mmad's numerics and rules (fusekit.asc.cube.mmad; AD-API Mmad.md), through whole kernels: the reference is an
element-by-element loop written here from the order the module documents (C from its initial value, k ascending,
one float32 rounding per addition), not the simulator's code."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fusekit import asc
from fusekit.asc.cube.mmad import to_hf32
from fusekit.sanitizer import sanitize

from cube_kernels import AIC, matmul, run_matmul


def sequential(a: np.ndarray, b: np.ndarray, init: "np.ndarray | None" = None) -> np.ndarray:
    """C[i, j] = init + sum_k a[i, k] b[k, j], added in ascending k with a float32 rounding after each product is
    added (a loop over elements, written from the mmad module docstring)."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.float32) if init is None else init.astype(np.float32).copy()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for i in range(m):
        for j in range(n):
            acc = out[i, j]
            for kk in range(k):
                acc = np.float32(float(acc) + a64[i, kk] * b64[kk, j])
            out[i, j] = acc
    return out


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("shape", [(32, 32, 64), (30, 40, 70), (1 * 16, 16, 16)])
def test_half_and_bfloat16_match_the_documented_order_bit_for_bit(dtype, shape):
    import ml_dtypes

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    m, n, k = shape
    rng = np.random.default_rng(m + n + k)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    c, _ = run_matmul(a, b, np.float32, base_k=32)
    np.testing.assert_array_equal(c.view(np.uint32), sequential(a, b).view(np.uint32))


def test_a_k_split_over_mmads_gives_the_bits_of_one_mmad():
    """L0C keeps float32 between Mmads that accumulate, and the order is k ascending from C: splitting K into
    steps of 16 gives the same bits as one Mmad over all 128 (what the chosen order says)."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((32, 128)) * 100).astype(np.float16)
    b = (rng.standard_normal((128, 48)) * 100).astype(np.float16)
    split, _ = run_matmul(a, b, np.float32, base_k=16)
    whole, _ = run_matmul(a, b, np.float32, base_k=128)
    np.testing.assert_array_equal(split.view(np.uint32), whole.view(np.uint32))
    assert not np.array_equal(whole, (a.astype(np.float32) @ b.astype(np.float32)))  # numpy's order differs


def test_float_inputs_keep_float32_and_hf32_rounds_them():
    """Without HF32 float inputs are multiplied as they are (the official mmad sample's rtol 1e-6 against numpy);
    with set_hf32_mode(True) each input is first rounded to 11 explicit mantissa bits (HF32.md)."""
    rng = np.random.default_rng(3)
    a, b = rng.uniform(1, 10, (16, 16)).astype(np.float32), rng.uniform(1, 10, (16, 16)).astype(np.float32)
    c, _ = run_matmul(a, b, np.float32, base_k=16)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6)
    np.testing.assert_array_equal(c, sequential(a, b))


def test_hf32_rounding_of_ties():
    """11 explicit mantissa bits: 1 + 2^-12 is a tie between 1 and 1 + 2^-11: to even gives 1, away from zero
    1 + 2^-11; 1 + 3 * 2^-12 rounds to 1 + 2^-10 either way."""
    x = np.array([1 + 2**-12, 1 + 3 * 2**-12, -(1 + 2**-12), np.inf], np.float32)
    np.testing.assert_array_equal(to_hf32(x), np.array([1, 1 + 2**-10, -1, np.inf], np.float32))
    np.testing.assert_array_equal(to_hf32(x, round_away=True),
                                  np.array([1 + 2**-11, 1 + 2**-10, -(1 + 2**-11), np.inf], np.float32))


def test_hf32_mode_changes_a_float_matmul():
    a = np.full((16, 8), 1 + 2**-12, np.float32)
    b = np.eye(8, 16, dtype=np.float32)
    plain, _ = run_matmul(a, b, np.float32, base_k=8)
    np.testing.assert_array_equal(plain[:, :8], a)
    rounded, _ = run_matmul(a, b, np.float32, base_k=8, hf32=True)
    np.testing.assert_array_equal(rounded[:, :8], np.ones((16, 8), np.float32))


def test_int8_products_past_int16_stay_exact_in_int32():
    a = np.full((16, 64), 127, np.int8)
    b = np.full((64, 32), -128, np.int8)
    b[:, ::2] = 127
    c, _ = run_matmul(a, b, np.int32, base_k=32)
    expected = a.astype(np.int64) @ b.astype(np.int64)
    assert np.abs(expected).max() > 2**15
    np.testing.assert_array_equal(c, expected)


def test_int32_accumulation_saturates():
    """"对于整数类型只有饱和模式" (Mmad.md): a bias near INT32_MAX plus positive products stays at INT32_MAX."""
    a = np.full((16, 32), 127, np.int8)
    b = np.full((32, 16), 127, np.int8)
    bias = np.full(16, 2**31 - 1000, np.int32)
    c, _ = run_matmul(a, b, np.int32, base_k=32, bias=bias)
    assert (c == 2**31 - 1).all()


@pytest.mark.parametrize("dtype, out", [(np.float16, np.float32), (np.int8, np.int32)])
def test_the_bias_is_added_once_under_split_k(dtype, out):
    rng = np.random.default_rng(11)
    a = rng.integers(-8, 8, (20, 96)).astype(dtype)
    b = rng.integers(-8, 8, (96, 24)).astype(dtype)
    bias = rng.integers(-50, 50, 24).astype(np.float32 if out is np.float32 else np.int32)
    c, _ = run_matmul(a, b, out, base_k=32, bias=bias)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64) + bias)  # small integers: exact


def test_sizes_off_the_fractal_grid_ignore_the_padding():
    """M, N, K not multiples of 16 (int8: K not a multiple of its C0 = 32): the fractals' padding rows are never
    written (L1 keeps fresh bytes, NaN / -1 here) and Mmad ignores them (Mmad.md 约束说明, M=30 K=70 N=40)."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(-100, 100, (30, 70)).astype(np.int8), rng.integers(-100, 100, (70, 40)).astype(np.int8)
    c, result = run_matmul(a, b, np.int32, base_k=64)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    report = sanitize(matmul)[1](a, np.ascontiguousarray(b.T), np.zeros((30, 40), np.int32),
                                 np.zeros(48, np.float32), 30, 40, 70, 64, 0, 0, False, False, True)
    assert report.findings == []


@asc.jit(kernel_type=AIC)
def gemv(x: asc.GlobalAddress, bt: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int],
         k: asc.ConstExpr[int], nd: asc.ConstExpr[bool]):
    """y (1 x n) = x (1 x k) @ B, half, B given transposed; ``nd``: x laid in L0A as one ND row, as GEMV reads it
    (GEMV.md), else as the Zz fractals a matmul with m > 1 takes."""
    xg, bg, yg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    bg.set_global_buffer(bt)
    yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 16 * k)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 32768, n * k)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 16 * k)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, n * k)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 16 * n)
    if nd:
        asc.data_copy(a1, xg, k)
    else:
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 1, k, 0, k, 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, n, k, 0, k, n, 1, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, k // 16 if not nd else k * 2 // 512, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k * n // 256, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c, a2, b2, asc.MmadParams(1, n, k, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(yg, c, asc.FixpipeParamsV220(n, 1, 16, n, asc.QuantModes.NoQuant))


def test_m_1_is_gemv_and_reads_a_as_one_nd_row():
    rng = np.random.default_rng(2)
    x = rng.integers(-4, 4, (1, 256)).astype(np.float16)
    b = rng.integers(-4, 4, (256, 32)).astype(np.float16)
    y = np.zeros((1, 32), np.float32)
    gemv[1](x, np.ascontiguousarray(b.T), y, 32, 256, True)
    np.testing.assert_array_equal(y, x.astype(np.float32) @ b.astype(np.float32))
    wrong = np.zeros((1, 32), np.float32)
    gemv[1](x, np.ascontiguousarray(b.T), wrong, 32, 256, False)
    assert not np.array_equal(wrong, y)  # Zz rows 1..15 of fresh L1 are read as part of the ND row


def _errors(**kw):
    base = dict(dst=(asc.float32, asc.TPosition.CO1), fm=(asc.float16, asc.TPosition.A2),
                filter=(asc.float16, asc.TPosition.B2), m=16)
    base.update(kw)

    @asc.jit(kernel_type=AIC)
    def kernel():
        tensors = [asc.LocalTensor(t, p, 0, 256) for t, p in (base["dst"], base["fm"], base["filter"])]
        asc.mmad(*tensors, asc.MmadParams(base["m"], 16, 16, 0, False, True))

    return kernel


@pytest.mark.parametrize("change, message", [
    (dict(dst=(asc.int32, asc.TPosition.CO1)), r"float16 x float16 -> int32 is not a Mmad of Ascend910B1.*Mmad.md 表7"),
    (dict(fm=(asc.float16, asc.TPosition.B2)), r"fm must be in L0A \(TPosition.A2\), got L0B"),
    (dict(fm=(asc.int8, asc.TPosition.A2)), r"int8 x float16 -> float32 is not a Mmad"),
    (dict(m=4096), r"MmadParams.m=4096 outside \[0, 4095\] \(Mmad.md 表4\)"),
])
def test_refusals_name_the_rule(change, message):
    with pytest.raises(asc.KernelError, match=message):
        _errors(**change)[1]()


def test_a_cube_position_on_an_aiv_kernel_names_the_kernel_type():
    @asc.jit
    def kernel():
        asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)

    with pytest.raises(asc.KernelError, match=r"on aiv\(0\).*TPosition.A2 is the AIC's L0A, which an AIV core does not "
                                              r"have: declare the kernel @asc.jit\(kernel_type=config.KernelType.AIC_ONLY\)"):
        kernel[1]()


@asc.jit(kernel_type=AIC)
def back_to_back(x: asc.GlobalAddress, m: asc.ConstExpr[int], n: asc.ConstExpr[int], barrier: asc.ConstExpr[bool]):
    """Two Mmads of k = 16 into one L0C from operands already in L0A / L0B, the second accumulating: nothing but a
    PipeBarrier<PIPE_M> (or the hardware, for large m x n) orders them."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, m * 32)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, n * 32)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, m * 32)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, n * 32)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m * n)
    asc.data_copy(a1, xg, m * 32)
    asc.data_copy(b1, xg, n * 32)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, m * 32 // 256, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, n * 32 // 256, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c, a2, b2, asc.MmadParams(m, n, 16, 0, False, True))
    if barrier:
        asc.pipe_barrier(asc.PipeID.PIPE_M)
    asc.mmad(c, a2[m * 16:], b2[n * 16:], asc.MmadParams(m, n, 16, 0, False, False))


def test_mmads_into_one_l0c_need_pipe_m_when_small():
    """Mmad.md, 同步优化说明: with (m/16)(n/16) < 10 the second Mmad on the same L0C needs PipeBarrier<PIPE_M>;
    from 10 fractals on the hardware orders them."""
    def findings(m, n, barrier):
        report = sanitize(back_to_back)[1](np.ones(4096, np.float16), m, n, barrier)
        return {(f.tool, f.kind, f.mem, f.pipes) for f in report.findings}

    assert ("racecheck", "RAW", "L0C", ("M", "M")) in findings(32, 32, False)
    assert findings(32, 32, True) == set()
    assert findings(64, 48, False) == set()  # 4 x 3 = 12 fractals: ordered by the hardware



@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 70), base_k=st.sampled_from([16, 32, 64]),
       seed=st.integers(0, 2**16))
def test_any_shape_and_k_split_matches_the_documented_order(m, n, k, base_k, seed):
    """Shapes off the fractal grid, a K split into steps of base_k: the same bits as the element loop (m = 1 is
    GEMV, whose ND row this kernel does not lay out, so it starts at 2)."""
    m = max(m, 2)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c, _ = run_matmul(a, b, np.float32, base_k=base_k)
    np.testing.assert_array_equal(c.view(np.uint32), sequential(a, b).view(np.uint32))


@pytest.mark.parametrize("wide", [True, False], ids=["float-inputs", "b16-inputs"])
@pytest.mark.parametrize("simd", [True, False], ids=["avx2", "portable"])
@pytest.mark.parametrize("shape", [(16, 64, 128), (13, 24, 40), (5, 17, 13), (3, 9, 37), (2, 1, 8),
                                   (7, 300, 24), (64, 256, 141)])  # K in two chunks; two threads, each half with a tail
def test_the_c_accumulation_loops_take_the_documented_steps(wide, simd, shape):
    """fusekit.asc._native.mmad (both its loops) against the documented steps written here in numpy, on data with
    NaN, inf, denormals and negative zeros; the two loops name NaN alike (payloads are not modelled)."""
    from fusekit.asc import _native, native

    if native._ext is None:
        pytest.skip("the C extension is not built (FUSEKIT_NO_NATIVE or no compiler): numpy computes these steps")
    lanes, (m, k, n) = 3, shape
    rng = np.random.default_rng(7)
    acc0 = rng.standard_normal((lanes, m, n)).astype(np.float32)
    a, b = rng.standard_normal((lanes, m, k)).astype(np.float32), rng.standard_normal((1, k, n)).astype(np.float32)
    if not wide:  # half inputs: products exact in float32
        a, b = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    a.ravel()[::7], b.ravel()[::11], a.ravel()[::13], b.ravel()[::5] = np.nan, np.inf, 1e-40, -0.0
    want = acc0.copy()
    for kk in range(k):
        step = want.astype(np.float64) + a[..., kk:kk + 1].astype(np.float64) * b[..., kk:kk + 1, :] if wide else \
            want + a[..., kk:kk + 1] * b[..., kk:kk + 1, :]
        want = step.astype(np.float32)
    before = _native.set_simd(simd)
    try:
        got = acc0.copy()
        with np.errstate(invalid="ignore"):
            assert native.mmad(got, a, b, wide)
    finally:
        _native.set_simd(before)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
