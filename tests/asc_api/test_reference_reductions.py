"""Reductions, bit for bit, against ``tests/reduction_ref.py``: the documented orders written from the pages,
one exact add and one rounding at a time (``tests/ieee754_ref.py``), sharing no code with fusekit.

Checked: the instructions (WholeReduceSum, RepeatReduceSum, BlockReduceSum, PairReduceSum, ReduceSum's count
and split forms on Atlas A2 and 310P, ReduceMax / ReduceMin with their index), the adv APIs built on them
(asc.adv.rmsnorm, asc.adv.softmax: their row sums), and the generator's row reductions (sum, mean, max, min),
both the generated kernel and its ``hardware`` / ``fp32`` model. The expected values never come from
fusekit's summation code, so a change of order in the simulator (a sequential sum, another pairing) fails
here even where the generator's model would follow it. The issue's example: a float16 row of 4096 ones sums to
4096 (adding in order stops at 2048, where 2048 + 1 rounds back to 2048).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ieee754_ref as R
import reduction_ref as ref
from fusekit import asc, gen
from adv_harness import run_rmsnorm, run_softmax
from vector_harness import run

HYP = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = [np.float16, np.float32]
SOCS = {"2201": "Ascend910B1", "2002": "Ascend310P3"}  # 310P: saturation mode by default
SAT = {"2201": False, "2002": True}


def add_of(t, saturate=False):
    return ref.adder(ref.fmt_of(t), saturate)


def values(seed: int, n: int, t, scale: float = 100.0) -> np.ndarray:
    """n values of dtype ``t`` spread over several binades (so that the order shows in the last bits)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * np.exp2(rng.integers(-4, 4, n)) * scale).astype(t)


def written(out: np.ndarray, before: np.ndarray, results, t) -> np.ndarray:
    """``before`` with every non-None result written at its index (the instruction leaves the others)."""
    want = before.copy()
    for i, v in results:
        if v is not None:
            want[i] = ref.encode([v], t)[0]
    return want


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bit patterns, or NaN in both: the tests feed no NaN, but sums that overflow to inf of
    both signs make one, and its sign and payload are not documented (ieee754_ref.same_bits)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    unsigned = f"u{a.itemsize}"
    both_nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32)) if a.dtype.kind == "f" \
        or a.dtype == ml_dtypes.bfloat16 else False
    return bool(((a.view(unsigned) == b.view(unsigned)) | both_nan).all())


# ------------------------------------------------------------------------------------------
# the example: 4096 ones in half
# ------------------------------------------------------------------------------------------

def test_the_reference_sums_4096_half_ones_to_4096_and_in_order_to_2048():
    """The reference's orders on the example (the count form's repeats in order give 4096; one long
    sequential sum gives 2048), so the tests below can tell the two apart."""
    ones, add = ref.decode(np.ones(4096, np.float16)), add_of(np.float16)
    assert ref.reduce_sum_count(ones, 2, "2201", add) == 4096 == ref.reduce_sum_count(ones, 2, "2002", add)
    assert ref.tree(ones, add) == 4096 and ref.in_order(ones, add) == 2048


@pytest.mark.parametrize("arch", ["2201", "2002"])
def test_reduce_sum_of_4096_half_ones_is_4096(arch):
    """ReduceSum, count form and split form (mask 128, 32 repeats), on A2 and 310P."""
    x, tmp = np.ones(4096, np.float16), np.zeros(64, np.float16)
    count, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 4096), np.zeros(16, np.float16), x, tmp, soc=SOCS[arch])
    split, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 128, 32, 8), np.zeros(16, np.float16), x, tmp,
                   soc=SOCS[arch])
    assert count[0] == 4096 and split[0] == 4096


@pytest.mark.parametrize("arch", ["2201", "2002"])
@pytest.mark.parametrize("expr", ["x * 0 + sum(x, axis=-1, keepdims=True)",
                                  "x * 0 + mean(x, axis=-1, keepdims=True) * 4096"])
def test_generated_row_sum_of_4096_half_ones_is_4096(arch, expr):
    """A generated op's row sum (and mean) of a float16 row of 4096 ones: 4096 (and 1), kernel and model."""
    op = gen.define_op(expr, name="ones_total")
    x = np.ones((2, 4096), np.float16)
    got = op(x, soc=SOCS[arch])
    model = op.reference("hardware", x, soc=SOCS[arch])["y"]
    assert (got == 4096).all() and (model == 4096).all()


# ------------------------------------------------------------------------------------------
# per-repeat instructions
# ------------------------------------------------------------------------------------------

def mask_strategy(lanes: int):
    """A continuous mask in [1, lanes] or a non-zero bit mask ([low, high] for 128 lanes, [low] for 64)."""
    words = 2 if lanes == 128 else 1
    bits = st.lists(st.integers(0, 2**64 - 1), min_size=words, max_size=words).filter(any)
    return st.one_of(st.integers(1, lanes), bits)


def layout_strategy():
    """(dtype, repeats, mask, src_blk_stride, src_rep_stride, seed)."""
    return st.sampled_from(DTYPES).flatmap(lambda t: st.tuples(
        st.just(t), st.integers(1, 6), mask_strategy(256 // np.dtype(t).itemsize), st.integers(1, 3),
        st.integers(0, 24), st.integers(0, 2**32 - 1)))


def _source(t, repeats, blk, rep, seed):
    per = 32 // np.dtype(t).itemsize
    return values(seed, (repeats - 1) * rep * per + 7 * blk * per + per, t)


@HYP
@given(layout_strategy(), st.booleans())
def test_whole_and_repeat_reduce_sum(layout, repeat_form):
    """WholeReduceSum (any mask) and RepeatReduceSum (continuous mask): one tree per repeat, dst_rep_stride 2."""
    t, repeats, mask, blk, rep, seed = layout
    if repeat_form and not isinstance(mask, int):
        mask = 1 + mask[0] % (256 // np.dtype(t).itemsize)
    x, size = _source(t, repeats, blk, rep, seed), np.dtype(t).itemsize
    d0 = np.full(2 * repeats + 16, -5, t)
    if repeat_form:
        body = lambda d, s0, s1: asc.repeat_reduce_sum(d, s0, repeats, mask, 0, blk, 2, rep)  # noqa: E731
    else:
        body = lambda d, s0, s1: asc.whole_reduce_sum(d, s0, mask, repeats, 2, blk, rep)  # noqa: E731
    out, _ = run(body, d0.copy(), x)
    sums = ref.whole_reduce_sum(ref.repeats_of(ref.decode(x), size, repeats, mask, blk, rep), add_of(t))
    assert same_bits(out, written(out, d0, [(2 * r, s) for r, s in enumerate(sums)], t))


@HYP
@given(layout_strategy())
def test_block_reduce_sum(layout):
    """BlockReduceSum: a tree per 32 B block, 8 results per repeat; a block without active lanes keeps dst."""
    t, repeats, mask, blk, rep, seed = layout
    x, size = _source(t, repeats, blk, rep, seed), np.dtype(t).itemsize
    d0 = np.full(8 * repeats + 16, 9, t)
    out, _ = run(lambda d, s0, s1: asc.block_reduce_sum(d, s0, repeats, mask, 1, blk, rep), d0.copy(), x)
    sums = ref.block_reduce_sum(ref.repeats_of(ref.decode(x), size, repeats, mask, blk, rep), size, add_of(t))
    assert same_bits(out, written(out, d0, [(8 * r + j, s) for r, row in enumerate(sums) for j, s in enumerate(row)],
                                  t))


@HYP
@given(layout_strategy())
def test_pair_reduce_sum(layout):
    """PairReduceSum: src[2k] + src[2k + 1] per repeat; a pair with both lanes masked keeps dst."""
    t, repeats, mask, blk, rep, seed = layout
    x, size = _source(t, repeats, blk, rep, seed), np.dtype(t).itemsize
    half = 128 // size
    d0 = np.full(half * repeats + 16, 9, t)
    out, _ = run(lambda d, s0, s1: asc.pair_reduce_sum(d, s0, repeats, mask, 1, blk, rep), d0.copy(), x)
    sums = ref.pair_reduce_sum(ref.repeats_of(ref.decode(x), size, repeats, mask, blk, rep), add_of(t))
    assert same_bits(out, written(out, d0, [(half * r + k, s) for r, row in enumerate(sums) for k, s in enumerate(row)],
                                  t))


def test_saturation_example_in_a_whole_reduce_sum():
    """ReduceDataBlock.md's [60000, 60000, -30000, 100]: 60000 + 60000 kept at 65504 in saturation mode, the
    page's 35604 before rounding (35584 in half), and inf in INF/NaN mode."""
    x = np.array([60000, 60000, -30000, 100], np.float16)
    for mode, saturate in (("saturation", True), ("inf_nan", False)):
        out, _ = run(lambda d, s0, s1: asc.whole_reduce_sum(d, s0, 4, 1, 1, 1, 8), np.zeros(16, np.float16), x,
                     overflow=mode)
        want = ref.tree(ref.decode(x), add_of(np.float16, saturate))
        assert same_bits(out[:1], ref.encode([want], np.float16))
    assert want is R.INF and ref.tree(ref.decode(x), add_of(np.float16, True)) == 35584


# ------------------------------------------------------------------------------------------
# ReduceSum / ReduceMax / ReduceMin
# ------------------------------------------------------------------------------------------

@HYP
@given(st.sampled_from(DTYPES), st.sampled_from(["2201", "2002"]), st.integers(1, 1600), st.integers(0, 2**32 - 1))
def test_reduce_sum_count_form(t, arch, count, seed):
    """Count form: repeats in order on A2 (方式一), a tree of the full repeats plus the tail on 310P."""
    x, size = values(seed, count, t), np.dtype(t).itemsize
    out, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, count), np.zeros(16, t), x, np.zeros(64, t),
                 soc=SOCS[arch])
    want = ref.reduce_sum_count(ref.decode(x), size, arch, add_of(t, SAT[arch]))
    assert same_bits(out[:1], ref.encode([want], t))


@HYP
@given(st.sampled_from(DTYPES), st.sampled_from(["2201", "2002"]), st.integers(1, 300), st.integers(1, 8),
       st.integers(0, 2**32 - 1), st.data())
def test_reduce_sum_split_form(t, arch, repeats, rep, seed, data):
    """Split form: a tree per repeat and a tree across them (方式二), more than one WholeReduceSum of repeat
    sums past 128 (half) / 64 (float) repeats."""
    size = np.dtype(t).itemsize
    mask = data.draw(mask_strategy(256 // size))
    per = 32 // size
    x = values(seed, (repeats - 1) * rep * per + 8 * per, t)
    tmp = np.zeros(-(-repeats // per) * per, t)
    out, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, mask, repeats, rep), np.zeros(16, t), x, tmp,
                 soc=SOCS[arch])
    rows = ref.repeats_of(ref.decode(x), size, repeats, mask, 1, rep)
    assert same_bits(out[:1], ref.encode([ref.reduce_sum_split(rows, size, add_of(t, SAT[arch]))], t))


@HYP
@given(st.sampled_from(DTYPES), st.sampled_from(["2201", "2002"]), st.integers(1, 700), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_reduce_max_min_count_form_with_index(t, arch, count, largest, seed):
    """ReduceMax / ReduceMin: the extreme and the first index of it (small integers: many ties)."""
    x = np.random.default_rng(seed).integers(-6, 7, count).astype(t)
    fn = asc.reduce_max if largest else asc.reduce_min
    out, _ = run(lambda d, s0, s1: fn(d, s0, s1, count, True), np.zeros(16, t), x, np.zeros(512, t), soc=SOCS[arch])
    value, index = ref.first_extreme(ref.decode(x), largest)
    assert same_bits(out[:1], ref.encode([value], t))
    assert out[1:2].view(np.uint16 if t is np.float16 else np.uint32)[0] == index


# ------------------------------------------------------------------------------------------
# adv APIs
# ------------------------------------------------------------------------------------------

F32 = R.FLOAT32


def _r32(v):
    return R.round_to(v, F32)


def _f32(v) -> np.float32:
    return ref.encode([v], np.float32)[0]


def _from_f32(x) -> Fraction:
    return ref.decode(np.array([x], np.float32))[0]


def _exp_log(fn, v):
    """Exp / Ln as fusekit's adv APIs document them: the real function rounded once to float32 (the C library's
    float64 value through Python's math, then :func:`ieee754_ref.round_to`; the NPU's algorithm is not
    documented)."""
    return _r32(Fraction(fn(0.0 if isinstance(v, R.Zero) else float(v))))


@pytest.mark.parametrize("k, basic", [(40, False), (64, False), (72, False), (200, False), (512, False),
                                      (1032, False), (128, True), (576, True)])
def test_softmax_row_sum_and_result(k, basic):
    """asc.adv.softmax (float): the row sum output in NewReduceSumLastNDImpl's order (SoftMaxBasicBlock's for
    basic_block), and dst = e / sum, from exp(x - max) rounded as the module documents."""
    m = 8
    x = np.random.default_rng(k).standard_normal((m, k)).astype(np.float32)  # e over about 2^-8 .. 1: sums of many
    y, s, mx, _ = run_softmax(x, basic=basic)
    add = add_of(np.float32)
    for i, row in enumerate(x):
        vals = ref.decode(row)
        best = ref.first_extreme(vals, True)[0]
        e = [_exp_log(math.exp, _r32(R.sub(v, best))) for v in vals]
        total = ref.softmax_row_sum(e, add, basic)
        assert same_bits(s[i], ref.encode([total] * s.shape[1], np.float32)), (i, k)
        assert same_bits(mx[i], ref.encode([best] * mx.shape[1], np.float32))
        assert same_bits(y[i], ref.encode([_r32(R.div(v, total)) for v in e], np.float32)), (i, k)


@pytest.mark.parametrize("h, basic", [(8, False), (72, False), (200, False), (4160, False), (128, True),
                                      (320, True)])
def test_rmsnorm_in_its_sum_order(h, basic):
    """asc.adv.rmsnorm (float), each step rounded once (module docstring): squares, the RmsNormReduceSum
    order, * 1/H, + eps, exp(-0.5 ln v), x * it, * gamma."""
    shape = (1, 8, h) if basic else (1, 2, h)
    x = values(h, int(np.prod(shape)), np.float32, scale=1.0).reshape(shape)
    g = values(h + 1, h, np.float32, scale=1.0)
    y, _ = run_rmsnorm(x, g, eps=1e-6, basic=basic)
    add, mul = add_of(np.float32), lambda a, b: _r32(R.mul(a, b))
    recip, eps, gamma = _from_f32(np.float32(1.0 / h)), _from_f32(np.float32(1e-6)), ref.decode(g)
    for row, got in zip(x.reshape(-1, h), y.reshape(-1, h)):
        vals = ref.decode(row)
        total = ref.rmsnorm_row_sum([mul(v, v) for v in vals], add, basic)
        shifted = add(mul(total, recip), eps)
        rs = _exp_log(math.exp, mul(_exp_log(math.log, shifted), Fraction(-1, 2)))
        assert same_bits(got, ref.encode([mul(mul(v, rs), w) for v, w in zip(vals, gamma)], np.float32))


# ------------------------------------------------------------------------------------------
# the generator's row reductions
# ------------------------------------------------------------------------------------------

ROW_OPS = {"sum": "x * 0 + sum(x, axis=-1, keepdims=True)", "mean": "x * 0 + mean(x, axis=-1, keepdims=True)",
           "max": "x * 0 + max(x, axis=-1, keepdims=True)", "min": "x * 0 + min(x, axis=-1, keepdims=True)"}
# (GM dtype, precision, compute dtype)
GEN_MODES = [(np.float16, "native", np.float16), (np.float32, "native", np.float32),
             (np.float16, "fp32", np.float32), (ml_dtypes.bfloat16, "fp32", np.float32)]
GEN_FMT = {np.dtype(np.float16): R.FLOAT16, np.dtype(np.float32): R.FLOAT32, np.dtype(ml_dtypes.bfloat16): R.BFLOAT16}


def gen_row_value(kind: str, row, compute, arch: str, out_dtype):
    """One row of a generated reduction: ReduceSum / ReduceMax / ReduceMin's count form in the compute dtype
    (lower.py: an exact cast in fp32 precision), mean = sum * (1/C as a float32 argument rounded to the compute
    dtype), then ``x * 0 + r`` (= r) rounded once to the output dtype (CAST_RINT)."""
    cfmt, size = ref.fmt_of(compute), np.dtype(compute).itemsize
    vals = R.values(np.asarray(row), GEN_FMT[np.dtype(row.dtype)])  # exact in the compute dtype
    if kind in ("max", "min"):
        r = ref.first_extreme(vals, kind == "max")[0]
    else:
        r = ref.reduce_sum_count(vals, size, arch, ref.adder(cfmt, SAT[arch]))
        if kind == "mean":
            inv = R.round_to(_from_f32(np.float32(1.0 / len(vals))), cfmt)
            r = R.round_to(R.mul(r, inv), cfmt)
    return R.round_to(r, GEN_FMT[np.dtype(out_dtype)])


def order_revealing_rows(t) -> np.ndarray:
    """Two rows of 4 repeats and 5: (a) repeat sums big, 1, 1, 1; (b) lanes big, 1, 1, 1 in one repeat, where
    big + 1 rounds back to big (2048 in half, 2^24 in float): in order big, by a tree big + 2."""
    lanes, big = 256 // np.dtype(t).itemsize, 2048.0 if t is np.float16 else 2.0**24
    rows = np.zeros((2, 4 * lanes + 5), t)
    rows[0, [0, lanes, 2 * lanes, 3 * lanes]] = big, 1, 1, 1
    rows[1, :4] = big, 1, 1, 1
    return rows


@pytest.mark.parametrize("arch", ["2201", "2002"])
@pytest.mark.parametrize("t", DTYPES)
def test_order_revealing_rows_in_reduce_sum_and_generated_sums(t, arch):
    """ReduceSum's count form and a generated row sum on rows whose sum depends on the order: across repeats
    in order on A2 (big), by a tree on 310P (big + 2); inside a repeat a tree on both (big + 2)."""
    x = order_revealing_rows(t)
    big = float(x[0, 0])
    want = [big if arch == "2201" else big + 2, big + 2]
    for row, value in zip(x, want):
        out, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, row.size), np.zeros(16, t), row, np.zeros(64, t),
                     soc=SOCS[arch])
        assert out[0] == value == float(ref.encode([ref.reduce_sum_count(ref.decode(row), np.dtype(t).itemsize, arch,
                                                                          add_of(t, SAT[arch]))], t)[0])
    op = gen.define_op(ROW_OPS["sum"], name="row_sum")
    assert op(x, soc=SOCS[arch])[:, 0].tolist() == want
    assert op.reference("hardware", x, soc=SOCS[arch])["y"][:, 0].tolist() == want


@HYP
@given(st.sampled_from(sorted(ROW_OPS)), st.sampled_from(range(len(GEN_MODES))), st.sampled_from(["2201", "2002"]),
       st.integers(1, 3), st.integers(1, 1100), st.integers(0, 2**32 - 1))
def test_generated_row_reductions(kind, mode, arch, n, c, seed):
    """fusekit.gen's sum / mean / max / min over the last axis: the kernel and its hardware / fp32 model both
    give ReduceSum's (ReduceMax's, ReduceMin's) documented order, bit for bit."""
    t, precision, compute = GEN_MODES[mode]
    if arch == "2002" and t is ml_dtypes.bfloat16:
        t, compute = np.float16, np.float32  # 310P has no bfloat16
    x = values(seed, n * c, np.float32, scale=10.0).astype(t).reshape(n, c)
    op = gen.define_op(ROW_OPS[kind], name=f"row_{kind}")
    got = op(x, soc=SOCS[arch], precision=precision)
    model = op.reference("hardware" if precision == "native" else "fp32", x, soc=SOCS[arch])["y"]
    column = R.to_array([gen_row_value(kind, row, compute, arch, t) for row in x], GEN_FMT[np.dtype(t)], t)
    expected = np.repeat(column[:, None], c, axis=1)
    assert same_bits(got, expected), (kind, t, precision, arch, n, c)
    assert same_bits(model, expected), (kind, t, precision, arch, n, c)
