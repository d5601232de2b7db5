"""Reductions (issue 9 item 3) against models written here from the pages, element by element in
Python (no code shared with fusekit.asc.basic.reduction):

- the pairwise tree inside a repeat / block (pyasc page whole_reduce_sum; AD-API 归约计算/ReduceDataBlock.md),
  masked lanes left out, each pairwise sum rounded to the dtype, half sums clamped to +-65504 in
  saturation mode (the pages' [60000, 60000, -30000, 100] -> 35604 example);
- ReduceSum: count form = tree per repeat, repeat sums added in order (A2/A3, 方式一); split form = tree per
  repeat, then a tree over each 128 (64) repeat sums, then a tree over those (方式二, as the AD
  implementation runs it) -- the test model builds that three-level structure literally;
- max / min: first index on ties (ReduceRepeat.md), the index stored in the dtype's bits.

Worked examples from the pages are checked with their printed numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import lane_mask, run

RNG = np.random.default_rng(77)
NP = {"float16": np.float16, "float32": np.float32}
LANES = {"float16": 128, "float32": 64}


# --------------------------------------------------------------------------------------------
# independent models
# --------------------------------------------------------------------------------------------

def add(a, b, t, sat):
    with np.errstate(all="ignore"):
        s = t(a) + t(b)
    if sat and t is np.float16 and np.isinf(s):
        s = t(65504.0) if s > 0 else t(-65504.0)
    return s


def tree(values, t, sat=False):
    """Pairwise tree over ``values`` (None = masked lane, left out)."""
    level = list(values)
    while len(level) > 1:
        if len(level) % 2:
            level.append(None)
        level = [b if a is None else a if b is None else add(a, b, t, sat) for a, b in zip(level[0::2], level[1::2])]
    return level[0]


def repeat_lanes(x, repeats, lanes, mask, blk=1, rep=8):
    """Per repeat, the lane values (None where masked), 高维切分.md layout."""
    per = 32 // x.dtype.itemsize
    on = lane_mask(mask, lanes)
    rows = []
    for r in range(repeats):
        row = []
        for k in range(lanes):
            e = (r * rep + (k // per) * blk) * per + k % per
            row.append(x[e] if on[k] else None)
        rows.append(row)
    return rows


def first_extreme(values, largest):
    """(value, index) of the first max / min among the non-None values."""
    best, at = None, None
    for i, v in enumerate(values):
        if v is None:
            continue
        if best is None or (v > best if largest else v < best):
            best, at = v, i
    return best, at


# --------------------------------------------------------------------------------------------
# the pages' worked examples
# --------------------------------------------------------------------------------------------

SAT_EXAMPLE = np.array([60000, 60000, -30000, 100], np.float16)


@pytest.mark.parametrize("call", [
    lambda d, s: asc.whole_reduce_sum(d, s, 4, 1, 1, 1, 8),
    lambda d, s: asc.repeat_reduce_sum(d, s, 1, 4, 0, 1, 1, 8),
    lambda d, s: asc.block_reduce_sum(d, s, 1, 4, 8, 1, 8),
])
def test_saturation_example_of_the_pages(call):
    """60000 + 60000 -> 65504, -30000 + 100 = -29900, 65504 - 29900 = 35604 (saturation mode), and IEEE inf
    in the A2 default INF/NaN mode. The page's decimals are before rounding: in half -29900 is -29904 and
    65504 - 29904 = 35600 rounds (ties to even, spacing 32) to 35584."""
    out, _ = run(lambda d, s0, s1: call(d, s0), np.zeros(16, np.float16), SAT_EXAMPLE, overflow="saturation")
    assert out[0] == tree(list(SAT_EXAMPLE), np.float16, sat=True) == np.float16(35584)
    assert abs(float(out[0]) - 35604) < 32
    out, _ = run(lambda d, s0, s1: call(d, s0), np.zeros(16, np.float16), SAT_EXAMPLE)
    assert np.isinf(out[0]) and out[0] > 0


def test_reduce_sum_examples_8320_and_288():
    """ReduceSum.md: 8320 ones, mask 128, 65 repeats -> 8320 (tmp 80 elements); first 288 ones -> 288."""
    out, ins = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 128, 65, 8), np.zeros(16, np.float16),
                   np.ones(8320, np.float16), np.zeros(80, np.float16))
    assert out[0] == 8320 and ins[-1].cost == "ReduceSum" and ins[-1].repeats == 65
    out, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 288), np.zeros(16, np.float16), np.ones(288, np.float16),
                 np.zeros(16, np.float16))
    assert out[0] == 288


def test_block_reduce_examples():
    """ReduceDataBlock.md: blocks of 1s, 2s, ..., 3s sum to 16, 32, ..., 48; the max example gives [2, 3, ..., 4]."""
    x = np.repeat(np.array([1, 2, 5, 1, 2, 7, 2, 3], np.float16), 16)
    out, _ = run(lambda d, s0, s1: asc.block_reduce_sum(d, s0, 1, [2**64 - 1, 2**64 - 1], 1, 1, 8),
                 np.zeros(16, np.float16), x)
    assert out[:8].tolist() == (16 * np.array([1, 2, 5, 1, 2, 7, 2, 3])).tolist()
    x = np.ones(128, np.float16)
    x[10], x[29], x[-13] = 2, 3, 4
    out, _ = run(lambda d, s0, s1: asc.block_reduce_max(d, s0, 1, 128, 1, 1, 8), np.zeros(16, np.float16), x)
    assert out[0] == 2 and out[1] == 3 and out[7] == 4


def test_pair_reduce_example():
    """ReducePairElem.md: [1, 1, 1, -1, 2, 2, -1, 2, 3, 3, 3, -1, 4, 4, -2, 4] -> [2, 0, 4, 1, 6, 2, 8, 2]."""
    x = np.array([1, 1, 1, -1, 2, 2, -1, 2, 3, 3, 3, -1, 4, 4, -2, 4], np.float16)
    out, _ = run(lambda d, s0, s1: asc.pair_reduce_sum(d, s0, 1, 16, 1, 1, 8), np.zeros(64, np.float16), x)
    assert out[:8].tolist() == [2, 0, 4, 1, 6, 2, 8, 2]


def test_whole_reduce_max_index_reads_as_the_page_says():
    """WholeReduceMax page: a half index is stored as its uint16 bits, e.g. index 90 prints as 5.364e-06."""
    x = np.zeros(128, np.float16)
    x[90] = np.float16(0.998)
    out, _ = run(lambda d, s0, s1: asc.whole_reduce_max(d, s0, 128, 1, 1, 1, 8), np.zeros(16, np.float16), x)
    assert out[0] == np.float16(0.998)
    assert out[1:2].view(np.uint16)[0] == 90 and abs(float(out[1]) - 5.364e-06) < 1e-8


# --------------------------------------------------------------------------------------------
# order of accumulation: not numpy.sum
# --------------------------------------------------------------------------------------------

def test_tree_is_not_sequential_sum():
    """[2048, 1, 1, 1] in half: the tree gives (2048 + 1) + (1 + 1) = 2050; adding in order gives 2048."""
    x = np.array([2048, 1, 1, 1], np.float16)
    out, _ = run(lambda d, s0, s1: asc.whole_reduce_sum(d, s0, 4, 1, 1, 1, 8), np.zeros(16, np.float16), x)
    assert out[0] == tree(list(x), np.float16) == 2050


def test_reduce_sum_count_form_adds_repeats_in_order_split_form_as_a_tree():
    """Repeat sums 2048, 1, 1, 1: count form (in order) 2048; split form (tree) 2050 (ReduceSum.md 方式一 / 方式二)."""
    x = np.zeros(512, np.float16)
    x[0], x[128], x[256], x[384] = 2048, 1, 1, 1
    count, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 512), np.zeros(16, np.float16), x, np.zeros(16, np.float16))
    split, _ = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 128, 4, 8), np.zeros(16, np.float16), x,
                   np.zeros(16, np.float16))
    assert count[0] == 2048 and split[0] == 2050


def reduce_sum_split_model(x, repeats, lanes, mask, rep, t):
    rows = repeat_lanes(x, repeats, lanes, mask, 1, rep)
    sums = [tree(r, t) for r in rows]
    chunks = [tree(sums[i:i + lanes] + [None] * (lanes - len(sums[i:i + lanes])), t) for i in range(0, len(sums), lanes)]
    return tree(chunks + [None] * (lanes - len(chunks)), t) if len(chunks) > 1 else chunks[0]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("repeats,mask,rep", [(1, 128, 8), (3, [0xF0F0F0F0F0F0F0F0, 0x1], 8), (255, 100, 8),
                                              (130, 128, 4), (7, 5, 0)])
def test_reduce_sum_split_form(dtype, repeats, mask, rep):
    t, lanes = NP[dtype], LANES[dtype]
    if isinstance(mask, int):
        mask = min(mask, lanes)
    elif lanes == 64:
        mask = mask[:1]
    per = 32 // np.dtype(t).itemsize
    n = (max(repeats - 1, 0) * rep * per + lanes)
    x = (RNG.standard_normal(n) * 100).astype(t)
    tmp = np.zeros(-(-repeats // per) * per, t)
    out, ins = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, mask, repeats, rep), np.zeros(16, t), x, tmp)
    assert out[0] == reduce_sum_split_model(x, repeats, lanes, mask, rep, t)
    assert ins[-1].writes[0].stop - ins[-1].writes[0].start == tmp.nbytes  # the passes write the buffer
    assert ins[-1].writes[-1].stop - ins[-1].writes[-1].start == np.dtype(t).itemsize  # dst[0]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_reduce_sum_count_form_edges(dtype, delta):
    """Counts one short of, at, and one past a repeat, and two repeats + 1."""
    t, lanes = NP[dtype], LANES[dtype]
    for count in (lanes + delta, 2 * lanes + delta + 1, 1):
        x = (RNG.standard_normal(count) * 10).astype(t)
        out, ins = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, count), np.zeros(16, t), x, np.zeros(16, t))
        rows = [list(x[i:i + lanes]) + [None] * (lanes - len(x[i:i + lanes])) for i in range(0, count, lanes)]
        acc = tree(rows[0], t)
        for r in rows[1:]:
            acc = add(acc, tree(r, t), t, False)
        assert out[0] == acc, count
        assert all(a.tensor != "buf" or a.stop - a.start != 32 for a in ins[-1].writes[:-1])  # no tmp on A2
        assert len(ins[-1].writes) == 1  # count form on A2: the temporary buffer is not used (方式一)


def test_counts_zero_are_nops():
    d0 = np.full(16, 7, np.float16)
    for call in (lambda d, s0, s1: asc.reduce_sum(d, s0, s1, 0), lambda d, s0, s1: asc.reduce_max(d, s0, s1, 0, True),
                 lambda d, s0, s1: asc.whole_reduce_sum(d, s0, 128, 0, 1, 1, 8),
                 lambda d, s0, s1: asc.block_reduce_min(d, s0, 0, 128, 1, 1, 8)):
        out, ins = run(call, d0.copy(), np.ones(128, np.float16), np.zeros(16, np.float16))
        assert (out == 7).all() and not ins[-1].writes


# --------------------------------------------------------------------------------------------
# per-repeat instructions: masks with holes, strides, repeat 255
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("repeats,mask,blk,rep,dst_rep", [
    (1, 1, 1, 8, 1), (4, 127, 1, 8, 1), (2, [0x8000000000000001, 0x00FF00FF00FF00FF], 2, 16, 3),
    (255, 64, 1, 8, 1), (3, 33, 1, 4, 2),
])
def test_whole_reduce_sum_split(dtype, repeats, mask, blk, rep, dst_rep):
    t, lanes = NP[dtype], LANES[dtype]
    if lanes == 64 and isinstance(mask, list):
        mask = mask[:1]
    if isinstance(mask, int):
        mask = min(mask, lanes)
    per = 32 // np.dtype(t).itemsize
    n = (repeats - 1) * rep * per + 7 * blk * per + per
    x = (RNG.standard_normal(n) * 1000).astype(t)
    d0 = np.full(repeats * dst_rep + 16, -5, t)
    out, ins = run(lambda d, s0, s1: asc.whole_reduce_sum(d, s0, mask, repeats, dst_rep, blk, rep), d0.copy(), x)
    want = d0.copy()
    for r, row in enumerate(repeat_lanes(x, repeats, lanes, mask, blk, rep)):
        want[r * dst_rep] = tree(row, t)
    np.testing.assert_array_equal(out, want)
    i = ins[-1]
    assert (i.op, i.cost, i.repeats) == ("whole_reduce_sum", "WholeReduceSum", repeats)
    on = lane_mask(mask, lanes)
    assert i.count == on.sum() * repeats
    touched = {e for row in range(repeats) for k in range(lanes) if on[k]
               for e in [(row * rep + (k // per) * blk) * per + k % per]}
    assert sum(a.stop - a.start for a in i.reads) == len(touched) * np.dtype(t).itemsize


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("order", list(asc.ReduceOrder))
@pytest.mark.parametrize("largest", [True, False])
def test_whole_reduce_max_min_orders(dtype, order, largest):
    t, lanes = NP[dtype], LANES[dtype]
    repeats, mask = 5, [0xFFFF0000FFFF0F0F, 0xFFFFFFFF00000001]
    mask = mask[:1] if lanes == 64 else mask
    x = RNG.integers(-20, 20, repeats * lanes).astype(t)  # small integers: many ties
    fn = asc.whole_reduce_max if largest else asc.whole_reduce_min
    rec = {asc.ReduceOrder.ORDER_ONLY_VALUE: 1, asc.ReduceOrder.ORDER_ONLY_INDEX: 4 // np.dtype(t).itemsize}.get(order, 2)
    out, ins = run(lambda d, s0, s1: fn(d, s0, mask, repeats, 1, 1, 8, order=order), np.zeros(64, t), x)
    for r, row in enumerate(repeat_lanes(x, repeats, lanes, mask)):
        value, index = first_extreme(row, largest)
        got = out[r * rec:(r + 1) * rec]
        if order is asc.ReduceOrder.ORDER_ONLY_INDEX:
            assert got.view(np.uint32)[0] == index
            continue
        raw = got.view(np.uint16 if t is np.float16 else np.uint32)
        if order is asc.ReduceOrder.ORDER_VALUE_INDEX:
            assert got[0] == value and raw[1] == index
        elif order is asc.ReduceOrder.ORDER_INDEX_VALUE:
            assert raw[0] == index and got[1] == value
        else:
            assert got[0] == value
    assert ins[-1].writes[0].stop - ins[-1].writes[0].start == repeats * rec * np.dtype(t).itemsize


def test_orders_refused_on_atlas_inference():
    """ReduceRepeat.md: Atlas inference AI Core takes ORDER_VALUE_INDEX and ORDER_INDEX_VALUE only."""
    x = np.ones(128, np.float16)
    run(lambda d, s0, s1: asc.whole_reduce_max(d, s0, 128, 1, 1, 1, 8, order=asc.ReduceOrder.ORDER_INDEX_VALUE),
        np.zeros(16, np.float16), x, soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match="ORDER_ONLY_VALUE is not supported on Ascend310P3"):
        run(lambda d, s0, s1: asc.whole_reduce_max(d, s0, 128, 1, 1, 1, 8, order=asc.ReduceOrder.ORDER_ONLY_VALUE),
            np.zeros(16, np.float16), x, soc="Ascend310P3")


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_block_reduce_with_holes(kind, dtype):
    """One result per 32 B block; a block without an active lane keeps dst (ReduceDataBlock.md, A2/A3)."""
    t, lanes = NP[dtype], LANES[dtype]
    per = 32 // np.dtype(t).itemsize
    mask = [0x00000000FFFF0001, 0xFFFF000000000000][:1 if lanes == 64 else 2]
    repeats = 3
    x = (RNG.standard_normal(repeats * lanes * 2) * 50).astype(t)
    fn = {"sum": asc.block_reduce_sum, "max": asc.block_reduce_max, "min": asc.block_reduce_min}[kind]
    d0 = np.full(64, 9, t)
    out, _ = run(lambda d, s0, s1: fn(d, s0, repeats, mask, 2, 1, 16), d0.copy(), x)
    want = d0.copy()
    for r, row in enumerate(repeat_lanes(x, repeats, lanes, mask, 1, 16)):
        for j in range(8):
            blk = row[j * per:(j + 1) * per]
            if all(v is None for v in blk):
                continue
            want[r * 16 + j] = tree(blk, t) if kind == "sum" else first_extreme(blk, kind == "max")[0]
    np.testing.assert_array_equal(out, want)


def test_pair_reduce_half_masked_pairs():
    """A pair with one masked lane gives the other; both masked: dst unchanged (ReducePairElem.md)."""
    x = np.arange(64, dtype=np.float32)
    out, _ = run(lambda d, s0, s1: asc.pair_reduce_sum(d, s0, 1, 62, 1, 1, 8), np.full(32, -1, np.float32), x)
    assert out[:30].tolist() == [2 * k + 2 * k + 1 for k in range(30)] and out[30] == 60 + 61 and out[31] == -1
    out, _ = run(lambda d, s0, s1: asc.pair_reduce_sum(d, s0, 1, 63, 1, 1, 8), np.full(32, -1, np.float32), x)
    assert out[31] == 62


# --------------------------------------------------------------------------------------------
# ReduceMax / ReduceMin
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("count_offset", [-1, 0, 1, 200])
@pytest.mark.parametrize("largest", [True, False])
def test_reduce_max_min_count_form(dtype, count_offset, largest):
    t, lanes = NP[dtype], LANES[dtype]
    count = lanes + count_offset
    x = RNG.integers(-9, 9, count).astype(t)
    fn = asc.reduce_max if largest else asc.reduce_min
    out, _ = run(lambda d, s0, s1: fn(d, s0, s1, count, True), np.zeros(16, t), x, np.zeros(256, t))
    value, index = first_extreme(list(x), largest)
    assert out[0] == value
    assert out[1:2].view(np.uint16 if t is np.float16 else np.uint32)[0] == index
    out, _ = run(lambda d, s0, s1: fn(d, s0, s1, count), np.full(16, 3, t), x, np.zeros(256, t))
    assert out[0] == value and out[1] == 3  # without cal_index only the value is written


def test_reduce_max_split_index_is_the_element_offset():
    """With src_rep_stride 16 (blocks) the index counts src elements, gaps included (AD ReduceImplThirdStep)."""
    x = np.zeros(128 * 2 * 3, np.float16)
    x[256 * 2 + 5] = 7
    out, _ = run(lambda d, s0, s1: asc.reduce_max(d, s0, s1, 128, 3, 16, cal_index=True), np.zeros(16, np.float16),
                 x, np.zeros(64, np.float16))
    assert out[0] == 7 and out[1:2].view(np.uint16)[0] == 517


def test_negative_zero_tie_keeps_the_first():
    x = np.array([-0.0, 0.0] + [-1.0] * 62, np.float32)
    out, _ = run(lambda d, s0, s1: asc.reduce_max(d, s0, s1, 64, True), np.zeros(8, np.float32), x, np.zeros(16, np.float32))
    assert np.signbit(out[0]) and out[1:2].view(np.uint32)[0] == 0


def test_nan_wins_max_assumption():
    """Not on the pages: fusekit lets the first NaN win (as the Max instruction propagates NaN)."""
    x = np.array([1, np.nan, 5, np.nan] + [0] * 60, np.float32)
    out, _ = run(lambda d, s0, s1: asc.whole_reduce_max(d, s0, 64, 1, 1, 1, 8), np.zeros(8, np.float32), x)
    assert np.isnan(out[0]) and out[1:2].view(np.uint32)[0] == 1


# --------------------------------------------------------------------------------------------
# rules
# --------------------------------------------------------------------------------------------

def test_tmp_buffer_too_small():
    """ReduceMax.md formula with index, 4 repeats of half: 2*4 -> 16, second pass 2 -> 16: 32 elements."""
    x = np.ones(512, np.float16)
    run(lambda d, s0, s1: asc.reduce_max(d, s0, s1, 128, 4, 8, True), np.zeros(16, np.float16), x, np.zeros(32, np.float16))
    with pytest.raises(asc.KernelError, match="needs 32"):
        run(lambda d, s0, s1: asc.reduce_max(d, s0, s1[16:], 128, 4, 8, True), np.zeros(16, np.float16), x,
            np.zeros(32, np.float16))
    assert asc.basic.vec_reduce.tmp_elements("reduce_sum", "2201", 2, 65, False, False) == 80  # ReduceSum.md: 80


@pytest.mark.parametrize("fn", [lambda d, s: asc.whole_reduce_sum(d, s, 16, 1, 1, 1, 8),
                                lambda d, s: asc.block_reduce_max(d, s, 1, 16, 1, 1, 8),
                                lambda d, s: asc.pair_reduce_sum(d, s, 1, 16, 1, 1, 8)])
def test_int16_refused(fn):
    with pytest.raises(asc.KernelError, match="does not support int16"):
        run(lambda d, s0, s1: fn(d, s0), np.zeros(16, np.int16), np.ones(128, np.int16))


def test_destination_alignment():
    """BlockReduce dst 16 B (half); WholeReduceMax value+index 4 B (half); WholeReduceSum 2 B (half)."""
    x = np.ones(128, np.float16)
    with pytest.raises(asc.KernelError, match="not 16-byte aligned"):
        run(lambda d, s0, s1: asc.block_reduce_sum(d[4:], s0, 1, 128, 1, 1, 8), np.zeros(32, np.float16), x)
    with pytest.raises(asc.KernelError, match="not 4-byte aligned"):
        run(lambda d, s0, s1: asc.whole_reduce_max(d[1:], s0, 128, 1, 1, 1, 8), np.zeros(32, np.float16), x)
    out, _ = run(lambda d, s0, s1: asc.whole_reduce_sum(d[1:], s0, 128, 1, 1, 1, 8), np.zeros(32, np.float16), x)
    assert out[1] == 128


def test_in_place_block_reduce_that_overwrites_later_sources():
    """In place is allowed while the results do not overwrite sources still to be reduced (BlockReduceSum page):
    dst at src's start is fine; dst at src[128:] gets repeat 0's results in the bytes repeat 1 reads."""
    x = np.ones(256, np.float16)
    run(lambda d, s0, s1: asc.block_reduce_sum(s0, s0, 2, 128, 1, 1, 8), np.zeros(16, np.float16), x)
    with pytest.raises(asc.KernelError, match="earlier repeat wrote"):
        run(lambda d, s0, s1: asc.block_reduce_sum(s0[128:], s0, 2, 128, 1, 1, 8), np.zeros(16, np.float16), x)


def test_half_index_past_65535_refused():
    x = np.ones(65600, np.float16)
    with pytest.raises(asc.KernelError, match="65535"):
        run(lambda d, s0, s1: asc.reduce_max(d, s0, s1, 65600, True), np.zeros(16, np.float16), x, np.zeros(2048, np.float16))


def test_bad_call_form_lists_forms():
    with pytest.raises(asc.KernelError, match="Accepted forms"):
        run(lambda d, s0, s1: asc.whole_reduce_sum(d, s0, 128, 1, 1, 1), np.zeros(16, np.float16), np.ones(128, np.float16))


def test_reduce_sum_count_form_on_atlas_inference():
    """310P (方式二 for the count form, AD dav_m200 ReduceSum): a tree over the full repeats, a tree over the
    tail, then their sum; the temporary buffer is written (ceil(R / 16) * 16 elements)."""
    for count in (3 * 128 + 5, 100, 256):
        x = (RNG.standard_normal(count) * 300).astype(np.float16)
        out, ins = run(lambda d, s0, s1: asc.reduce_sum(d, s0, s1, count), np.zeros(16, np.float16), x,
                       np.zeros(16, np.float16), soc="Ascend310P3")
        body = count // 128 * 128 if count >= 128 else count
        rows = [list(x[i:i + 128]) for i in range(0, body, 128)]
        rows[-1] += [None] * (128 - len(rows[-1]))
        want = tree([tree(r, np.float16, True) for r in rows], np.float16, True)
        if count > body:
            want = add(want, tree(list(x[body:]), np.float16, True), np.float16, True)
        assert out[0] == want, count
        assert len(ins[-1].writes) == 2  # shared_tmp_buffer and dst


def test_whole_reduce_sum_with_the_mask_register_in_counter_mode():
    """is_set_mask=False in Counter mode: the register's count spans the repeats (掩码.md)."""
    x = (RNG.standard_normal(256) * 10).astype(np.float32)

    def body(d, s0, s1):
        asc.set_mask_count()
        asc.set_vector_mask(0, 70, dtype=asc.float32, mode=asc.MaskMode.COUNTER)
        asc.whole_reduce_sum(d, s0, 0, 1, 1, 1, 8, is_set_mask=False)
        asc.set_mask_norm()

    out, _ = run(body, np.full(8, -1, np.float32), x)
    assert out[0] == tree(list(x[:64]), np.float32) and out[1] == tree(list(x[64:70]) + [None] * 58, np.float32)
    assert out[2] == -1
