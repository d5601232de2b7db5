"""Remembered instruction analyses (``fusekit.asc.basic.memo``): an instruction repeated with one part of its key
changed gets its own lane walk, overlap verdict and reduction plan, and a broken rule raises on every call.

Expected values come from the layout model of 高维切分.md (``vector_harness.split_elements``) over small integers,
exact in float32 whatever the order of the adds.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc import KernelError
from fusekit.asc.basic.memo import Memo
from vector_harness import lane_mask, run, split_elements

N = 8 * 64  # float32 elements: 64 blocks of 32 B, room for every variant's strides

# each variant differs from the first in one part of the instruction's key
ADD_VARIANTS = [
    dict(mask=64, repeats=2, dst=(1, 8), src0=(1, 8), src1=(1, 8)),
    dict(mask=40, repeats=2, dst=(1, 8), src0=(1, 8), src1=(1, 8)),                    # the mask
    dict(mask=[0x00FF_00F0_0F0F_8001], repeats=2, dst=(1, 8), src0=(1, 8), src1=(1, 8)),  # a bit mask
    dict(mask=64, repeats=3, dst=(1, 8), src0=(1, 8), src1=(1, 8)),                    # repeat_times
    dict(mask=64, repeats=2, dst=(2, 16), src0=(1, 8), src1=(1, 8)),                   # dst strides
    dict(mask=64, repeats=2, dst=(1, 8), src0=(3, 24), src1=(1, 8)),                   # src0 strides
    dict(mask=64, repeats=2, dst=(1, 8), src0=(1, 8), src1=(0, 1)),                    # src1 strides
    dict(mask=64, repeats=2, dst=(1, 8), src0=(1, 8), src1=(1, 8)),                    # the first again
]


def _ints(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-500, 500, N).astype(np.float32)


def test_a_repeated_add_with_one_key_part_changed_gets_its_own_walk():
    x, y = _ints(1), _ints(2)
    for v in ADD_VARIANTS:
        d = _ints(3)
        p = asc.BinaryRepeatParams(v["dst"][0], v["src0"][0], v["src1"][0], v["dst"][1], v["src0"][1], v["src1"][1])
        out, _ = run(lambda t_d, t_x, t_y, v=v, p=p: asc.add(t_d, t_x, t_y, v["mask"], v["repeats"], p), d, x, y)
        active = lane_mask(v["mask"], 64)
        idx = [split_elements(v["repeats"], 64, 4, *v[role], active) for role in ("dst", "src0", "src1")]
        want = d.copy()
        for r in range(v["repeats"]):
            for di, xi, yi in zip(*(i[r] for i in idx)):
                want[di] = x[xi] + y[yi]
        assert np.array_equal(out, want), v


@pytest.mark.parametrize("dst_rep_stride", [1, 3, 1])  # the first stride again after another
def test_a_repeated_reduction_with_another_dst_stride_gets_its_own_plan(dst_rep_stride):
    x = _ints(4)
    d = np.full(N, -7.0, np.float32)
    mask, repeats = 48, 5
    out, _ = run(lambda t_d, t_x, _y: asc.whole_reduce_sum(t_d, t_x, mask, repeats, dst_rep_stride, 1, 8), d, x)
    want = d.copy()
    for r, lanes in enumerate(split_elements(repeats, 64, 4, 1, 8, lane_mask(mask, 64))):
        want[r * dst_rep_stride] = x[lanes].sum()  # integers: exact in any order
    assert np.array_equal(out, want)


def _add_in_place(src0_blk_stride: int):
    p = asc.BinaryRepeatParams(1, src0_blk_stride, 1, 8, 8 * src0_blk_stride, 8)
    return lambda t_d, t_x, t_y: asc.add(t_d, t_d, t_y, 64, 1, p)


def test_a_broken_overlap_rule_raises_on_every_call():
    """src0 = dst read every other block: within the repeat the operands share half their bytes, which
    通用地址重叠约束 (单次迭代内) forbids; the same operands lane for lane (block stride 1) are allowed."""
    d, y = _ints(5), _ints(6)
    for stride, broken in ((2, True), (1, False), (2, True), (2, True)):
        if broken:
            with pytest.raises(KernelError) as err:
                run(_add_in_place(stride), d, d, y)
            assert err.value.kind == "partial-overlap"
        else:
            out, _ = run(_add_in_place(stride), d, d, y)
            assert np.array_equal(out[:64], d[:64] + y[:64])


def test_a_compute_that_raises_stores_nothing_and_a_full_memo_starts_again():
    memo, calls = Memo(size=2), []

    def fails():
        calls.append("x")
        raise KernelError("add", "a broken rule")

    for _ in range(2):
        with pytest.raises(KernelError):
            memo.get("bad", fails)
    assert calls == ["x", "x"]
    assert memo.get("a", lambda: 1) == 1 and memo.get("a", lambda: 2) == 1
    memo.get("b", lambda: 3)
    assert memo.get("c", lambda: 4) == 4 and memo.get("a", lambda: 5) == 5  # full: emptied, then refilled
