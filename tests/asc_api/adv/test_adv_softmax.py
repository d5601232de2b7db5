"""asc.adv.softmax (fusekit.asc.adv.softmax) and its host tiling helpers, with our own @asc.jit kernels.

Expected values: (1) a float64 softmax (the page's Python formula, SoftMax.md 功能说明) with the tolerance the
module states; (2) where bit-exactness is claimed, a scalar float32 model written here from the
implementation's documented order (asc-devkit softmax_common_nd_reduce.h: tree inside a repeat, 64-wide
chunks added in order, BigBlockReduceSum past 512), one Python loop per row, no fusekit code. Tiling sizes
come from the formulas of asc-devkit softmax_tiling.cpp, recomputed here by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError

from adv_harness import run_softmax as run

F32 = np.float32


def ref64(x: np.ndarray):
    """SoftMax.md's formula in float64."""
    x = x.astype(np.float64)
    mx = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - mx)
    s = np.sum(e, axis=-1, keepdims=True)
    return e / s, mx[:, 0], s[:, 0]


def ulps(got, want, dtype) -> np.ndarray:
    """|got - want| in units of the dtype's spacing at want."""
    want = np.asarray(want, np.float64)
    return np.abs(np.asarray(got, np.float64) - want) / np.spacing(np.abs(want).astype(dtype)).astype(np.float64)


# ---------------------------------------------------------------- independent scalar model of the sum order

def _tree(vals):
    """Pairwise tree of float32 values padded to a power of two with -0.0 (the reduce instructions' order)."""
    n = 1
    while n < len(vals):
        n *= 2
    level = [F32(v) for v in vals] + [F32(-0.0)] * (n - len(vals))
    while len(level) > 1:
        level = [F32(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def _row_sum(e):
    k = len(e)
    if k < 64:
        return _tree(e)
    nb, tail = divmod(k, 64)
    if k >= 512:
        acc = [_tree(e[64 * r + 8 * b: 64 * r + 8 * b + 8]) for r in range(8) for b in range(8)]
        start = 8
    elif k >= 128:
        acc = [F32(e[i] + e[64 + i]) for i in range(64)]
        start = 2
    else:
        acc, start = [F32(v) for v in e[:64]], 1
    for j in range(start, nb):
        acc = [F32(acc[i] + e[64 * j + i]) for i in range(64)]
    for i in range(tail):
        acc[i] = F32(acc[i] + e[64 * nb + i])
    return _tree(acc)


def model_f32(x: np.ndarray):
    """Row by row: max, x - max (float32), exp (float64 rounded), the documented sum order, e / sum."""
    out, ms, ss = [], [], []
    for row in x.astype(F32):
        mx = max(row)
        e = [F32(np.exp(np.float64(F32(v - mx)))) for v in row]
        s = _row_sum(e)
        out.append([F32(v / s) for v in e])
        ms.append(mx)
        ss.append(s)
    return np.array(out, F32), np.array(ms, F32), np.array(ss, F32)


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("k", [8, 40, 64, 72, 200, 512, 1032])
def test_float_bit_exact_with_documented_order(k):
    rng = np.random.default_rng(k)
    x = (rng.standard_normal((3, k)) * 4).astype(F32)
    y, s, mx, _ = run(x, tmp=asc.adv.get_softmax_max_tmp_size([3, k], 4))
    want, wmx, ws = model_f32(x)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(s, np.repeat(ws[:, None], 8, axis=1))
    np.testing.assert_array_equal(mx, np.repeat(wmx[:, None], 8, axis=1))
    ref, rmx, _ = ref64(x)
    bound = np.abs(x - rmx[:, None]) + 4  # the module's stated tolerance vs the exact softmax, in ulps
    assert (ulps(y, ref, F32) <= bound).all()


def test_page_example():
    """SoftMax.md 调用示例: rows of the example and its printed sums / outputs (float, [8, 8])."""
    x = np.array([[-100, -80, -60, -50, -30, -20, -15, -10], [-9, -8, -7, -6, -5, -4, -3, -2],
                  [-1.5, -1, -0.8, -0.6, -0.5, -0.45, -0.4, -0.35], [-0.3, -0.25, -0.2, -0.15, -0.1, -0.05, -0.01, -0.001],
                  [0, 0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25], [0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8, 1],
                  [1.5, 2, 3, 4, 5, 6, 7, 8], [9, 10, 15, 20, 30, 50, 60, 80]], F32)
    y, s, mx, _ = run(x)
    np.testing.assert_allclose(s[:, 0], [1.0067834, 1.5814459, 5.971886, 7.051223, 6.880514, 5.239974, 1.5820376, 1.0],
                               rtol=1e-6)
    np.testing.assert_array_equal(mx[:, 0], x.max(axis=1))
    np.testing.assert_allclose(y[1], [0.00057661, 0.0015674, 0.00426062, 0.01158158, 0.03148199, 0.08557693,
                                      0.23262219, 0.63233274], rtol=1e-6, atol=5e-9)  # 8 printed decimals


@pytest.mark.parametrize("sum_dtype", [np.float16, np.float32])
def test_half_within_one_ulp(sum_dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 96)) * 3).astype(np.float16)
    y, s, mx, trace = run(x, sum_dtype=sum_dtype)
    ref, rmx, rs = ref64(x)
    assert y.dtype == np.float16 and ulps(y, ref, np.float16).max() <= 1
    assert ulps(s[:, 0], rs, sum_dtype).max() <= (1 if sum_dtype == np.float16 else 64)
    np.testing.assert_array_equal(mx[:, 0], rmx.astype(sum_dtype))
    casts = [i for i in trace if i.cost == "Cast"]
    assert len(casts) == (4 if sum_dtype == np.float16 else 2)  # src, (max, sum,) dst


def test_zero_and_denormal_rows():
    tiny = np.float32(2.0 ** -149)
    x = np.array([[0.0] * 16, [tiny, -tiny, 2 * tiny, 0.0] * 4, [-0.0] * 16], F32)
    y, s, mx, _ = run(x)
    np.testing.assert_array_equal(y, np.full((3, 16), F32(1 / 16)))  # exp(~0) = 1 each: 1/16 exactly
    np.testing.assert_array_equal(s[:, 0], [16, 16, 16])
    assert mx[1, 0] == 2 * tiny


@pytest.mark.parametrize("mode", ["inf_nan", "saturation"])
def test_inf_and_nan_under_both_overflow_modes(mode):
    x = np.zeros((3, 16), F32)
    x[0, 3] = np.inf
    x[1, 5] = np.nan
    x[2, :] = np.arange(16)
    x[2, 0] = -np.inf
    y, s, mx, _ = run(x, overflow=mode)
    if mode == "inf_nan":  # inf - inf = NaN poisons the row sum, so every output of the row
        assert np.isnan(y[0]).all() and np.isnan(s[0]).all() and mx[0, 0] == np.inf
        assert np.isnan(y[1]).all()
    else:  # saturation: NaN results become 0: exp(0) = 1 at the inf, -inf - inf saturates, exp -> 0
        np.testing.assert_array_equal(y[0], np.eye(16, dtype=F32)[3])
        assert s[0, 0] == 1
        assert not np.isnan(y).any()
    ref, _, _ = ref64(x[2:])
    assert y[2, 0] == 0 and (ulps(y[2, 1:], ref[0, 1:], F32) <= 15 + 4).all()  # exp(-inf) = 0 in either mode


def test_original_shape_reduces_over_unpadded_columns():
    """Columns [k0, k) are padding: not in max / sum, but dst there gets exp(pad - max) / sum (约束说明)."""
    x = np.zeros((2, 16), F32)
    x[:, :10] = np.arange(10)
    x[:, 10:] = 100.0  # would dominate if reduced
    y, s, mx, _ = run(x, original=(2, 10))
    ref, _, rs = ref64(x[:, :10])
    assert mx[0, 0] == 9 and ulps(s[:, 0], rs, F32).max() <= 2
    assert (ulps(y[:, :10], ref, F32) <= 9 + 4).all()
    assert np.isinf(y[:, 10:]).all()  # exp(91) overflows float32: the padding result, as the page warns


def test_src_and_dst_may_be_the_same_tensor():
    x = np.linspace(-3, 3, 64, dtype=F32).reshape(2, 32)
    y, _, _, _ = run(x, same=True)
    np.testing.assert_array_equal(y, model_f32(x)[0])


# ---------------------------------------------------------------- temporary space, tiling

def test_host_helpers_follow_softmax_tiling_cpp():
    # GetSoftMaxMaxTmpSize = m (32/size + k + 64) 4, Min = (32/size + k + 64) 4
    assert asc.adv.get_softmax_max_tmp_size([320, 64], 2) == 320 * (16 + 64 + 64) * 4
    assert asc.adv.get_softmax_min_tmp_size([4, 5, 64], 4) == (8 + 64 + 64) * 4
    t = asc.adv.softmax_tiling_func([320, 64], 2, 100 * (16 + 64 + 64) * 4)
    # baseM = 100 -> floor 8 = 96 -> divides 320? no: 88, 80 -> 80 (80 x 64 < 16384)
    assert (t.split_m, t.range_m, t.tail_m, t.reduce_k, t.out_max_size) == (80, 4, 0, 16, 320 * 16)
    t = asc.adv.softmax_tiling_func([30, 40], 4, 20 * (8 + 40 + 64) * 4)  # not a basic block: 16, tail 14
    assert (t.split_m, t.range_m, t.tail_m, t.tail_split_size) == (16, 1, 14, 14 * 40)
    with pytest.raises(ValueError, match="32 B aligned"):
        asc.adv.get_softmax_min_tmp_size([4, 12], 2)
    with pytest.raises(ValueError, match="below"):
        asc.adv.softmax_tiling_func([4, 64], 4, (8 + 64 + 64) * 4 - 1)


def test_given_tiling_is_used_and_chunks_the_trace():
    x = np.random.default_rng(2).standard_normal((20, 64)).astype(F32)
    space = 6 * (8 + 64 + 64) * 4  # 6 rows a pass -> split 6 ... tail 2
    tiling = asc.adv.softmax_tiling_func([20, 64], 4, space)
    y, _, _, trace = run(x, tmp=space, tiling=tiling)
    np.testing.assert_array_equal(y, model_f32(x)[0])
    assert tiling.split_m == 6 and len([i for i in trace if i.cost == "Exp"]) == 4  # 6 + 6 + 6 + 2 rows
    assert [i.count for i in trace if i.cost == "Exp"] == [384, 384, 384, 128]


def test_trace_reads_and_writes_every_operand():
    x = np.ones((2, 16), np.float16)
    _, _, _, trace = run(x, tmp=asc.adv.get_softmax_min_tmp_size([2, 16], 2))
    costs = [i.cost for i in trace]
    one = ["Cast", "WholeReduceMax", "Cast", "Sub", "Exp", "WholeReduceSum", "Cast", "Div", "Cast"]
    assert costs == one * 2  # the minimum space holds one row: two passes
    assert trace[-1].undefined and all(i.pipe is asc.Pipe.V for i in trace)
    written = {b for i in trace for a in i.writes for b in range(a.start, a.stop)}
    read = {b for i in trace for a in i.reads for b in range(a.start, a.stop)}
    # TPipe lays the buffers out in order: src [0, 64), dst [64, 128), sum [128, 192), max [192, 256), tmp after
    assert set(range(64, 256)) <= written and set(range(0, 64)) <= read and not set(range(0, 64)) & written
    assert min(b for b in written if b >= 256) == 256  # the temp buffer


@pytest.mark.parametrize("dtype,k", [(F32, 40), (np.float16, 48)])
def test_temp_buffer_minimum_and_one_below(dtype, k):
    x = np.ones((4, k), dtype)
    need = asc.adv.get_softmax_min_tmp_size([4, k], np.dtype(dtype).itemsize)
    assert need == (32 // np.dtype(dtype).itemsize + k + 64) * 4
    y, _, _, _ = run(x, tmp=need)
    np.testing.assert_array_equal(y, np.full(x.shape, 1 / k, dtype))
    with pytest.raises(KernelError, match=f"at least GetSoftMaxMinTmpSize.*{need} B"):
        run(x, tmp=need - 32)


def test_largest_k_for_a_temp_buffer_and_one_past_it():
    tmp = 1024  # bytes: (8 + k + 64) x 4 <= 1024 -> k <= 184, 32 B aligned for float -> 184; next legal k is 192
    run(np.zeros((2, 184), F32), tmp=tmp)
    with pytest.raises(KernelError, match="GetSoftMaxMinTmpSize"):
        run(np.zeros((2, 192), F32), tmp=tmp)


def test_stack_space_after_tpipe():
    """Without temp_buffer the API takes the UB after TPipe's buffers (PopStackBuffer)."""
    x = np.ones((2, 64), F32)
    ub = 192 * 1024
    used = 2 * (2 * 64 * 4) + 2 * (2 * 8 * 4)
    need = (8 + 64 + 64) * 4
    run(x, stack=ub - used - need)  # exactly the minimum left
    with pytest.raises(KernelError, match="UB left after TPipe"):
        run(x, stack=ub - used - need + 32)


def test_inconsistent_tiling_and_too_large_split_are_refused():
    x = np.ones((8, 64), F32)
    bad = asc.adv.softmax_tiling_func([8, 64], 4, 10 ** 6)
    bad.range_m = 3
    with pytest.raises(KernelError, match="range_m"):
        run(x, tiling=bad)
    big = asc.adv.softmax_tiling_func([8, 64], 4, 10 ** 6)  # split 8 rows, but only one row of space
    with pytest.raises(KernelError, match="split_m = 8"):
        run(x, tiling=big, tmp=(8 + 64 + 64) * 4)


# ---------------------------------------------------------------- refusals

def test_refusals():
    x = np.ones((2, 16), F32)
    with pytest.raises(KernelError, match="no ShapeInfo"):
        run(x, set_shape=False)
    with pytest.raises(KernelError, match="32 B aligned"):
        run(np.ones((2, 12), F32))
    with pytest.raises(KernelError, match="half/half/half/half"):
        run(x, sum_dtype=np.float16)
    with pytest.raises(KernelError, match="uint8"):
        _bad_tmp_kernel[1](x.reshape(-1), np.zeros(32, F32))


@asc.jit
def _bad_tmp_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress):
    pipe = asc.TPipe()
    bufs = []
    for n in (32, 32, 16, 16, 256):
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=n * 4)
        bufs.append(b.get(asc.float32))
    src, dst, sm, mt, tmp = bufs
    src.set_shape_info(asc.ShapeInfo(asc.array(asc.int32, (2, 16))))
    asc.adv.softmax(dst, sm, mt, src, asc.adv.SoftmaxTiling(), temp_buffer=tmp)


def test_atlas_inference_divides_by_multiplying_with_the_reciprocal():
    """On 2002 (Ascend310P3) the division is Duplicate 1 / Div / Mul (TransDivToMulImpl): two roundings."""
    x = np.random.default_rng(11).standard_normal((2, 24)).astype(F32)
    y, s, _, _ = run(x, soc="Ascend310P3")
    _, _, ws = model_f32(x)
    e = np.array([[F32(np.exp(np.float64(F32(v - max(r))))) for v in r] for r in x], F32)
    want = np.array([[F32(v * F32(F32(1) / t)) for v in row] for row, t in zip(e, ws)], F32)
    np.testing.assert_array_equal(s[:, 0], ws)
    np.testing.assert_array_equal(y, want)


def test_timing_model_costs_each_step():
    from fusekit.timing.params import load
    from fusekit.timing.schedule import vector_cycles
    _, _, _, trace = run(np.ones((8, 256), F32))
    p = load("Ascend910B1")
    cycles = {i.cost: vector_cycles(i, p) for i in trace}
    assert set(cycles) == {"WholeReduceMax", "Sub", "Exp", "WholeReduceSum", "Div"}
    assert all(c > p.vector_startup_cycles for c in cycles.values())
    assert cycles["Exp"] > cycles["Sub"]  # the throughput table's 32 vs 64 floats a cycle (Vector指令理论性能汇总.md)


def test_shape_info_and_array():
    info = asc.ShapeInfo(asc.array(asc.int32, (2, 3, 16)))
    assert info.dims == (2, 3, 16) and info.original_dims == (2, 3, 16) and asc.get_shape_size(info) == 96
    assert asc.ShapeInfo().dims == () and asc.array(asc.float32, 3, 1.5) == (1.5, 1.5, 1.5)
    with pytest.raises(ValueError, match="at most 8"):
        asc.ShapeInfo(asc.array(asc.int32, (1,) * 9))
    with pytest.raises(ValueError, match="positive"):
        asc.array(asc.int32, 0)


def _row_sum_in_order(e):
    """SoftMaxBasicBlock's sum: chunk 0 + chunk 1, then each further chunk added in order, then a tree of 64."""
    acc = [F32(v) for v in e[:64]]
    for j in range(1, len(e) // 64):
        acc = [F32(acc[i] + e[64 * j + i]) for i in range(64)]
    return _tree(acc)


def test_basic_block_sums_chunks_in_order_past_512():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 640)) * 3).astype(F32)
    y, s, _, _ = run(x, tiling=None, basic=True)
    e = [[F32(np.exp(np.float64(F32(v - max(r))))) for v in r] for r in x]
    want = np.array([_row_sum_in_order(row) for row in e], F32)
    np.testing.assert_array_equal(s[:, 0], want)
    with pytest.raises(KernelError, match="basic_block"):
        run(np.ones((3, 64), F32), basic=True)


@asc.jit
def _auto_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, M: asc.ConstExpr, K: asc.ConstExpr):
    """As pyasc's insert_sync softmax sample: LocalTensorAuto, no syncs written, an all-zero tiling."""
    xv, yv = asc.GlobalTensor(), asc.GlobalTensor()
    xv.set_global_buffer(x, M * K)
    yv.set_global_buffer(y, M * K)
    src = asc.LocalTensorAuto(x.dtype, M * K)
    sm = asc.LocalTensorAuto(x.dtype, M * 8)
    mt = asc.LocalTensorAuto(x.dtype, M * 8)
    asc.data_copy(src, xv, count=M * K)
    src.set_shape_info(asc.ShapeInfo(asc.array(asc.int32, (M, K))))
    asc.adv.softmax(src, sm, mt, src, asc.adv.SoftmaxTiling())
    asc.data_copy(yv, src, count=M * K)


def test_auto_synced_kernel_gets_its_syncs_around_softmax():
    x = np.random.default_rng(8).standard_normal((4, 64)).astype(F32)
    y = np.zeros(x.size, F32)
    result = _auto_kernel[1](x.reshape(-1), y, 4, 64)
    np.testing.assert_array_equal(y.reshape(4, 64), model_f32(x)[0])
    ops = [i.op for i in result.trace]
    first, last = ops.index("softmax"), len(ops) - 1 - ops[::-1].index("softmax")
    assert "auto_wait_flag" in ops[:first] and "auto_wait_flag" in ops[last:]  # MTE2 -> V, then V -> MTE3


def test_given_tiling_tail_fields_are_read_only_when_the_tail_runs():
    """SoftMaxNDExtImpl breaks before the tail's sizes when tail_m = 0; with a tail, tail_reduce_size counts."""
    x = np.random.default_rng(9).standard_normal((8, 64)).astype(F32)
    want = run(x, tiling=asc.adv.softmax_tiling_func([8, 64], 4, 10 ** 6))[0]
    loose = asc.adv.softmax_tiling_func([8, 64], 4, 10 ** 6)  # tail_m = 0
    loose.tail_split_size, loose.tail_reduce_size = 5, 3
    np.testing.assert_array_equal(run(x, tiling=loose)[0], want)
    tailed = asc.adv.softmax_tiling_func([10, 64], 4, (8 + 64) * 4 * 8)  # 8-row chunks, a 2-row tail
    assert tailed.tail_m == 2
    tailed.tail_reduce_size = 1
    with pytest.raises(KernelError, match="tail_reduce_size"):
        run(np.ones((10, 64), F32), tiling=tailed)
