"""asc.adv.rmsnorm (fusekit.asc.adv.norm) and its host tiling helpers, with our own @asc.jit kernels.

Expected values: a float64 RmsNorm (RmsNorm.md formula: x / sqrt(mean(x^2) + eps) * gamma, checked against the
page's example) with the module's stated tolerance, and a scalar float32 model written here from the
implementation's steps (asc-devkit rmsnorm_common_impl.h: Mul, RepeatReduceSum trees of 64, Muls by the
tiling's reciprocal, Adds eps, Ln, Muls -0.5, Exp, Muls, Mul by gamma) for bit-exactness. Tiling values are
recomputed by hand from rmsnorm_tiling_impl.cpp's formulas.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError

from adv_harness import rmsnorm_kernel as _kernel, run_rmsnorm as run

F32 = np.float32


def ref64(x, gamma, eps, h0=None):
    x = x.astype(np.float64)
    h0 = h0 or x.shape[-1]
    ms = np.mean(x[..., :h0] ** 2, axis=-1, keepdims=True)
    return x / np.sqrt(ms + eps) * gamma.astype(np.float64)


def _tree(vals):
    n = 1
    while n < len(vals):
        n *= 2
    level = [F32(v) for v in vals] + [F32(-0.0)] * (n - len(vals))
    while len(level) > 1:
        level = [F32(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def model_f32(x, gamma, eps, h0=None):
    """Step by step in float32 (module docstring order); rows of [.., H]."""
    h = x.shape[-1]
    h0 = h0 or h
    recip = F32(1.0 / float(F32(h0)))
    e = F32(x.dtype.type(eps))
    out = []
    for row in x.reshape(-1, h).astype(F32):
        level = [F32(v * v) for v in row[:h0]]
        while len(level) > 1:
            level = [_tree(level[i:i + 64]) for i in range(0, len(level), 64)]
        v = F32(F32(level[0] * recip) + e)
        rs = F32(np.exp(np.float64(F32(F32(np.log(np.float64(v))) * F32(-0.5)))))
        out.append([F32(F32(a * rs) * F32(g)) for a, g in zip(row, gamma.astype(F32))])
    return np.array(out, F32).reshape(x.shape)


# ---------------------------------------------------------------- values

def test_page_example():
    """RmsNorm.md 示例结果: src = gamma = 0..15, shape [1, 1, 16]."""
    x = np.arange(16, dtype=F32).reshape(1, 1, 16)
    y, _ = run(x, np.arange(16, dtype=F32), eps=1e-5)
    np.testing.assert_allclose(y.reshape(-1)[[1, 2, 8, 15]], [0.11359233, 0.4543693, 7.269909, 25.558275], rtol=1e-6)


@pytest.mark.parametrize("h", [8, 64, 72, 200, 4160])
def test_float_bit_exact_with_documented_steps(h):
    rng = np.random.default_rng(h)
    x = rng.standard_normal((1, 2, h) if h > 1000 else (2, 3, h)).astype(F32)
    g = rng.uniform(0.5, 2, h).astype(F32)
    y, _ = run(x, g, eps=1e-6)
    np.testing.assert_array_equal(y, model_f32(x, g, 1e-6))
    np.testing.assert_allclose(y, ref64(x, g, 1e-6), rtol=5e-7 * 4, atol=1e-30)  # the module's stated tolerance


def test_half_within_one_ulp():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 48)).astype(np.float16)
    g = rng.uniform(0.5, 2, 48).astype(np.float16)
    y, trace = run(x, g, eps=1e-3)
    want = ref64(x, g, float(np.float16(1e-3)))
    err = np.abs(y.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    assert y.dtype == np.float16 and err.max() <= 1
    assert [i.cost for i in trace][:3] == ["Cast", "Mul", "RepeatReduceSum"]


def test_original_h_and_padding():
    """H0 < H: the mean is over H0 (reciprocal_of_h_length = 1 / H0); padded columns are scaled too."""
    x = np.zeros((1, 2, 16), F32)
    x[..., :10] = np.arange(1, 11)
    x[..., 10:] = 3.0
    g = np.ones(16, F32)
    y, _ = run(x, g, eps=0.0, h0=10)
    want = ref64(x, g, 0.0, h0=10)
    np.testing.assert_allclose(y, want, rtol=2e-6)
    assert y[0, 0, 12] == pytest.approx(3 / math.sqrt(38.5), rel=2e-6)


def test_zero_denormal_rows_and_both_overflow_modes():
    tiny = F32(2.0 ** -149)
    x = np.array([[[0.0] * 8, [tiny] * 8]], F32)
    g = np.ones(8, F32)
    y, _ = run(x, g, eps=0.0)  # 0 / sqrt(0): ln 0 = -inf, exp(+inf) = inf, 0 * inf = NaN
    assert np.isnan(y[0, 0]).all()
    ys, _ = run(x, g, eps=0.0, overflow="saturation")  # each step saturated: NaN -> 0, inf -> max
    assert not np.isnan(ys).any() and (ys[0, 0] == 0).all()
    y1, _ = run(x, g, eps=1.0)  # eps dominates: x / 1
    np.testing.assert_array_equal(y1, x)


@pytest.mark.parametrize("mode", ["inf_nan", "saturation"])
def test_inf_nan_inputs(mode):
    x = np.ones((1, 2, 8), F32)
    x[0, 0, 2] = np.inf
    x[0, 1, 3] = np.nan
    y, _ = run(x, np.ones(8, F32), overflow=mode)
    if mode == "inf_nan":
        assert np.isnan(y[0, 1]).all() and np.isnan(y[0, 0, 2]) and (y[0, 0, [0, 1, 3]] == 0).all()
    else:  # inf^2 saturates to FLT_MAX, NaN^2 to 0: the rows stay finite
        assert np.isfinite(y).all()


def test_dst_may_be_src():
    x = np.random.default_rng(1).standard_normal((1, 4, 16)).astype(F32)
    g = np.full(16, 2, F32)
    y, _ = run(x, g, same=True)
    np.testing.assert_array_equal(y, model_f32(x, g, 1e-5))


def test_basic_block_order():
    """basic_block: the 64-wide pieces of x^2 added in order, then one tree of 64 (RmsNormReduceSum)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 8, 192)).astype(F32)
    g = np.ones(192, F32)
    y, _ = run(x, g, basic=True)
    np.testing.assert_allclose(y, ref64(x, g, 1e-5), rtol=2e-6)
    with pytest.raises(KernelError, match="basic_block"):
        run(np.ones((1, 3, 192), F32), g, basic=True, tiling=asc.adv.get_rms_norm_tiling_info(
            [1, 3, 192], [1, 3, 192], 10 ** 6, 4))


def test_stale_sum_when_original_h_is_one():
    """H0 = 1: the reduce loop does not run and the stale temporary float is used (rmsnorm_common_impl.h)."""
    x = np.full((1, 1, 8), 2.0, F32)
    y, trace = run(x, np.ones(8, F32), h0=1, eps=0.0)
    assert np.isnan(y).all()  # the never-written temporary float: fusekit's poisoned UB (NaN), garbage on the NPU
    assert "RepeatReduceSum" not in [i.cost for i in trace]
    from fusekit.sanitizer import sanitize
    tiling = asc.adv.get_rms_norm_tiling_info([1, 1, 8], [1, 1, 1], 10 ** 4, 4)
    report = sanitize(_kernel)[1](x.reshape(-1), np.ones(8, F32), np.zeros(8, F32), 8, 8, 0.0, tiling, 0, False, 0,
                                  False)
    assert any(f.tool == "initcheck" and f.ops[-1] == "rmsnorm" for f in report.findings), report.findings


# ---------------------------------------------------------------- tiling, temporary space

def test_host_helpers_follow_rmsnorm_tiling_impl():
    assert asc.adv.get_rms_norm_max_min_tmp_size([2, 16, 64], 2) == ((2 * 16 * 64 * 2 + 32) * 4, (64 * 2 + 8) * 4)
    assert asc.adv.get_rms_norm_max_min_tmp_size([1, 3, 64], 4) == ((3 * 64 + 8) * 4, (64 + 8) * 4)
    t = asc.adv.get_rms_norm_tiling_info([2, 16, 64], [2, 16, 60], (5 * 64 * 2 + 8) * 4, 2)
    # bs grows while total >= (bs+1) h 2 + align8(bs+1): total = 648 -> bs = 5 (6 rows need 776)
    assert (t.main_bs_length, t.main_bsh_length, t.main_bs_length_align, t.loop_round, t.tail_bs_length) == \
        (5, 320, 8, 6, 2)
    assert t.input_tail_pos == 6 * 320 and t.reciprocal_of_h_length == pytest.approx(1 / 60)
    with pytest.raises(ValueError, match="below the minimum"):
        asc.adv.get_rms_norm_tiling_info([1, 1, 64], [1, 1, 64], (64 + 8) * 4 - 4, 4)
    with pytest.raises(ValueError, match="32 B aligned"):
        asc.adv.get_rms_norm_tiling_info([1, 1, 12], [1, 1, 12], 10 ** 5, 2)


def test_chunks_in_the_trace():
    x = np.ones((1, 10, 16), F32)
    space = (3 * 16 + 8) * 4  # 3 rows a pass: 3 + 3 + 3 + 1
    y, trace = run(x, np.ones(16, F32), tmp=space)
    assert [i.count for i in trace if i.cost == "Exp"] == [3, 3, 3, 1]
    assert trace[-1].undefined


@pytest.mark.parametrize("dtype", [F32, np.float16])
def test_temp_buffer_minimum_and_one_below(dtype):
    h = 64
    x = np.ones((1, 2, h), dtype)
    size = np.dtype(dtype).itemsize
    need = asc.adv.get_rms_norm_max_min_tmp_size([1, 2, h], size)[1]
    assert need == (h * (2 if size == 2 else 1) + 8) * 4
    tiling = asc.adv.get_rms_norm_tiling_info([1, 2, h], [1, 2, h], need, size)
    y, _ = run(x, np.ones(h, dtype), tmp=need, tiling=tiling, eps=0.0)
    np.testing.assert_array_equal(y, np.ones_like(x))
    with pytest.raises(KernelError, match="RmsNorm needs"):
        run(x, np.ones(h, dtype), tmp=need - 32, tiling=tiling)


def test_largest_h_for_a_temp_buffer_and_one_past_it():
    tmp = 1024  # float: (H + 8) x 4 <= 1024 -> H <= 248 (a multiple of 8); 256 is one past
    g = np.ones(256, F32)
    run(np.ones((1, 1, 248), F32), g[:248], tmp=tmp, tiling=asc.adv.get_rms_norm_tiling_info(
        [1, 1, 248], [1, 1, 248], tmp, 4))
    big = asc.adv.get_rms_norm_tiling_info([1, 1, 256], [1, 1, 256], 4096, 4)
    with pytest.raises(KernelError, match="RmsNorm needs"):
        run(np.ones((1, 1, 256), F32), g, tmp=tmp, tiling=big)


def test_stack_space_after_tpipe():
    x = np.ones((1, 1, 64), F32)
    used = 64 * 4 * 2 + 64 * 4
    need = (64 + 8) * 4
    tiling = asc.adv.get_rms_norm_tiling_info([1, 1, 64], [1, 1, 64], need, 4)
    run(x, np.ones(64, F32), tiling=tiling, stack=192 * 1024 - used - need)
    with pytest.raises(KernelError, match="UB left after TPipe"):
        run(x, np.ones(64, F32), tiling=tiling, stack=192 * 1024 - used - need + 32)


def test_refusals():
    x = np.ones((1, 2, 16), F32)
    g = np.ones(16, F32)
    with pytest.raises(KernelError, match="computes nothing"):
        run(x, g, tiling=asc.adv.RmsNormTiling())
    t = asc.adv.get_rms_norm_tiling_info([1, 2, 16], [1, 2, 16], 10 ** 4, 4)
    t.loop_round = 5  # five chunks of 2 rows reach past src's 2 rows (b x s x h is not what the kernel reads)
    with pytest.raises(KernelError, match=r"elements \[0, 160\) but the tensor has 32"):
        run(x, g, tiling=t)
    t = asc.adv.get_rms_norm_tiling_info([1, 4, 16], [1, 4, 16], 10 ** 4, 4)  # 4 rows but src holds 2
    with pytest.raises(KernelError, match="out-of-bounds|elements"):
        run(x, g, tiling=t)


@asc.jit
def _reads_tmp_after(x: asc.GlobalAddress, y: asc.GlobalAddress, TILING: asc.ConstExpr):
    pipe = asc.TPipe()
    bufs = []
    for n, dt in ((16, asc.float32), (16, asc.float32), (16, asc.float32), (128, asc.uint8)):
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=n * (4 if dt is asc.float32 else 1))
        bufs.append(b.get(dt))
    src, gamma, dst, tmp = bufs
    xv, yv = asc.GlobalTensor(), asc.GlobalTensor()
    xv.set_global_buffer(x, 16)
    yv.set_global_buffer(y, 32)
    asc.data_copy(src, xv, 16)
    asc.data_copy(gamma, xv, 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adv.rmsnorm(dst, src, gamma, 1e-5, TILING, temp_buffer=tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yv, tmp.reinterpret_cast(asc.float32), 32)  # the API left it undefined


def test_sanitizer_sees_the_temporary_space_left_undefined():
    from fusekit.sanitizer import sanitize
    tiling = asc.adv.get_rms_norm_tiling_info([1, 1, 16], [1, 1, 16], 128, 4)
    report = sanitize(_reads_tmp_after)[1](np.ones(16, F32), np.zeros(32, F32), tiling)
    found = [f for f in report.findings if f.tool == "initcheck"]
    assert found and found[0].ops[0] == "rmsnorm", report.findings  # the undefined bytes were left by rmsnorm


# ---------------------------------------------------------------- hand-built tilings: each field as the kernel reads it

def _hand(rows: int, h: int, align: int, **fields) -> "asc.adv.RmsNormTiling":
    """One chunk of ``rows`` rows, no tail, the squares at float offset ``align`` (fields override)."""
    t = dict(b_length=1, s_length=rows, h_length=h, original_h_length=h, reciprocal_of_h_length=1.0 / h,
             main_bsh_length=rows * h, main_bs_length=rows, main_bs_length_align=align, loop_round=1,
             input_tail_pos=rows * h, tail_bsh_length=0, tail_bs_length=0)
    t.update(fields)
    return asc.adv.RmsNormTiling(**t)


@pytest.mark.parametrize("align", [8, 16, 64])
def test_main_bs_length_align_is_an_offset_any_multiple_of_8_past_the_rows(align):
    """rmsnorm_common_impl.h reads main_bs_length_align only as the squares' offset: 16 (the sample's) gives 8's bits."""
    rng = np.random.default_rng(align)
    x = rng.standard_normal((1, 8, 64)).astype(F32)
    g = rng.uniform(0.5, 2, 64).astype(F32)
    y, _ = run(x, g, eps=1e-6, tiling=_hand(8, 64, align), tmp=(align + 8 * 64) * 4)
    np.testing.assert_array_equal(y, model_f32(x, g, 1e-6))


@pytest.mark.parametrize("align, why", [(4, "rows of every chunk"), (12, "multiple of 8")])
def test_main_bs_length_align_that_would_break_the_layout_is_refused(align, why):
    """Below the rows the row sums run into the squares; off 8 floats the squares' operand is not 32 B aligned."""
    x = np.ones((1, 8, 64), F32)
    with pytest.raises(KernelError, match=why):
        run(x, np.ones(64, F32), tiling=_hand(8, 64, align))


def test_fields_the_kernel_does_not_read_are_not_checked():
    """b_length / s_length, and the tail's fields when tail_bs_length = 0, do not change the result."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 32)).astype(F32)
    g = np.ones(32, F32)
    y, _ = run(x, g, eps=1e-6, tiling=_hand(8, 32, 8, b_length=0, s_length=0, input_tail_pos=7, tail_bsh_length=3))
    np.testing.assert_array_equal(y, model_f32(x, g, 1e-6))


def test_tail_chunk_fields_are_checked_when_the_tail_runs():
    """With a tail: its bsh = bs x H, it fits the main chunk's layout, and it starts 32 B aligned."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 6, 32)).astype(F32)
    g = np.ones(32, F32)
    ok = dict(main_bsh_length=4 * 32, main_bs_length=4, loop_round=1, input_tail_pos=4 * 32, tail_bsh_length=2 * 32,
              tail_bs_length=2)
    y, _ = run(x, g, eps=1e-6, tiling=_hand(6, 32, 8, **ok))
    np.testing.assert_array_equal(y, model_f32(x, g, 1e-6))
    for change, why in ((dict(tail_bsh_length=3 * 32), "tail_bsh_length == tail_bs_length"),
                        (dict(input_tail_pos=4 * 32 + 4), "input_tail_pos x sizeof"),
                        (dict(loop_round=0, main_bsh_length=32, main_bs_length=1, tail_bs_length=6,
                              tail_bsh_length=6 * 32, input_tail_pos=0), "tail_bsh_length <= main_bsh_length")):
        with pytest.raises(KernelError, match=why):
            run(x, g, tiling=_hand(6, 32, 8, **{**ok, **change}))
