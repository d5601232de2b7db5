"""The documented orders of the reduction instructions, written from the Ascend C pages; shares no code with
fusekit.

Every sum is built from one operation, :func:`adder`: the two operands are decoded from their bits into exact
rationals, added exactly and rounded once to the element type (``tests/ieee754_ref.py``: IEEE 754 round to
nearest even), in plain Python loops. numpy only moves bit patterns. A masked lane is ``None``: it takes no
part (掩码.md: a 0 bit means the element is not computed), so ``add(None, v) == v``.

Orders (AD = hicann/asc-devkit ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算/``):

- **Tree inside a repeat or a 32 B block**: data0+data1, data2+data3, ..., then the pair sums pairwise
  (pyasc page whole_reduce_sum 约束说明; AD ReduceDataBlock.md 关键特性说明). WholeReduceSum, RepeatReduceSum:
  one tree per repeat; BlockReduceSum: one tree per block of a repeat, 8 results; PairReduceSum
  (ReducePairElem.md): dst[k] = src[2k] + src[2k+1].
- **ReduceSum** (ReduceSum.md 关键特性说明): 方式一, the trees of the repeats then their sums **in order**, is the
  count form on Atlas A2/A3; 方式二, the repeats' sums **also by a tree**, is the split (high-dimensional) form
  there and every form on Atlas inference (310P). 方式二 as the implementation runs it (AD
  ``impl/basic_api/dav_m200/kernel_operator_vec_reduce_impl.h`` ReduceSumFirstStep / SecondStep / FinalStep):
  one sum per repeat, a WholeReduceSum over each 128 (half) / 64 (float) of those sums, one over the results.
  The 310P count form (same file, ReduceTailCompute): the full repeats as above, the tail repeat alone, then
  the two added.
- **Saturation** (ReduceDataBlock.md 约束说明, the [60000, 60000, -30000, 100] -> 35604 example): in saturation
  mode a half partial sum past 65504 is kept at +-65504; float sums stay IEEE.
- **ReduceMax / ReduceMin**: the first index of the extreme on ties (ReduceRepeat.md: 最小索引).
- **asc.adv.rmsnorm** (AD ``impl/adv_api/detail/normalization/rmsnorm/rmsnorm_common_impl.h``,
  RmsNormReduceSum): in float32, RepeatReduceSum over the row in counter mode (a tree per 64 values), again
  over those sums, until one value is left; basic block: the 64-wide pieces added lane by lane in order
  (``Add(src, src, src[i * 64])``), then one tree of 64.
- **asc.adv.softmax** (AD ``impl/adv_api/detail/activation/softmax/membase/v220/softmax_common_impl/
  softmax_common_nd_reduce.h``, NewReduceSumLastNDImpl): k < 64: one tree; 64 <= k < 128: chunk 0 copied;
  128 <= k < 512: chunk 0 + chunk 1, then the other chunks lane by lane in order; k >= 512: BigBlockReduceSum
  (the first 8 chunks: a tree of each 8-lane block, 64 values), then the other chunks in order; then the tail
  (k % 64) added onto the first lanes, then a tree of 64 (BasicBlockReduceSumImpl). Basic block
  (SoftMaxBasicBlock): the chunks in order whatever k, then a tree of 64.
"""

from __future__ import annotations

import numpy as np

import ieee754_ref as R

BLOCK = 32
REPEAT = 256
FORMAT = {np.dtype(np.float16): R.FLOAT16, np.dtype(np.float32): R.FLOAT32}


# ------------------------------------------------------------------------------------------
# values in and out
# ------------------------------------------------------------------------------------------

def fmt_of(np_dtype) -> R.Format:
    return FORMAT[np.dtype(np_dtype)]


def decode(x: np.ndarray) -> list:
    """The exact values of a float16 / float32 array's elements (flattened)."""
    return R.values(np.asarray(x), fmt_of(np.asarray(x).dtype))


def encode(vals, np_dtype) -> np.ndarray:
    """An array of ``np_dtype`` holding exactly representable values (as :func:`adder` returns)."""
    return R.to_array(list(vals), fmt_of(np_dtype), np_dtype)


def adder(fmt: R.Format, saturate: bool = False):
    """``add(a, b)``: a + b exactly, rounded once to ``fmt``; None (a masked lane) is the identity.
    ``saturate``: a half sum of finite operands that overflows is kept at +-65504."""
    def add(a, b):
        if a is None:
            return b
        if b is None:
            return a
        s = R.round_to(R.add(a, b), fmt)
        finite = all(v not in (R.INF, R.NEG_INF, R.NAN) for v in (a, b))
        if saturate and fmt is R.FLOAT16 and finite and s in (R.INF, R.NEG_INF):
            return -fmt.max_finite if s is R.NEG_INF else fmt.max_finite
        return s
    return add


# ------------------------------------------------------------------------------------------
# the two orders
# ------------------------------------------------------------------------------------------

def tree(vals, add):
    """Pairwise binary tree: (v0 + v1), (v2 + v3), ..., then those pairwise; None where nothing is active."""
    level = list(vals)
    while len(level) > 1:
        if len(level) % 2:
            level.append(None)
        level = [add(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0] if level else None


def in_order(vals, add):
    """((v0 + v1) + v2) + ...: the repeats of ReduceSum's count form on A2/A3 (方式一)."""
    acc = None
    for v in vals:
        acc = add(acc, v)
    return acc


# ------------------------------------------------------------------------------------------
# repeat layout (AD SIMD计算说明/高维切分.md, 掩码.md)
# ------------------------------------------------------------------------------------------

def mask_bits(mask, lanes: int) -> list[bool]:
    """Lanes a continuous (int) or bit ([low, high]) mask selects."""
    if isinstance(mask, int):
        return [k < mask for k in range(lanes)]
    value = mask[0] | ((mask[1] if len(mask) > 1 else 0) << 64)
    return [(value >> k) & 1 == 1 for k in range(lanes)]


def repeats_of(vals, size: int, repeats: int, mask, blk: int = 1, rep: int = 8) -> list[list]:
    """Per repeat, its lanes' values (None where masked): lane k of repeat r is element
    ``(r * rep + (k // per_block) * blk) * per_block + k % per_block``; strides count 32 B blocks."""
    per, lanes = BLOCK // size, REPEAT // size
    on = mask_bits(mask, lanes)
    return [[vals[(r * rep + (k // per) * blk) * per + k % per] if on[k] else None for k in range(lanes)]
            for r in range(repeats)]


def _rows(vals, size: int) -> list[list]:
    """A dense count-form operand cut into repeats (the last one padded with masked lanes)."""
    lanes = REPEAT // size
    return [list(vals[i:i + lanes]) + [None] * (lanes - len(vals[i:i + lanes])) for i in range(0, len(vals), lanes)]


# ------------------------------------------------------------------------------------------
# per-repeat instructions
# ------------------------------------------------------------------------------------------

def whole_reduce_sum(rows, add) -> list:
    """WholeReduceSum / RepeatReduceSum: one tree per repeat."""
    return [tree(r, add) for r in rows]


def block_reduce_sum(rows, size: int, add) -> list[list]:
    """BlockReduceSum: per repeat, a tree per 32 B block (None: a block without an active lane, not written)."""
    per = BLOCK // size
    return [[tree(r[j * per:(j + 1) * per], add) for j in range(8)] for r in rows]


def pair_reduce_sum(rows, add) -> list[list]:
    """PairReduceSum: per repeat, src[2k] + src[2k + 1] (None: both lanes masked, not written)."""
    return [[add(r[2 * k], r[2 * k + 1]) for k in range(len(r) // 2)] for r in rows]


# ------------------------------------------------------------------------------------------
# ReduceSum / ReduceMax / ReduceMin
# ------------------------------------------------------------------------------------------

def _tree_of_repeat_sums(sums, lanes: int, add):
    """方式二 across repeats: a WholeReduceSum over each ``lanes`` repeat sums, then one over their results."""
    firsts = [tree(sums[i:i + lanes], add) for i in range(0, len(sums), lanes)]
    return firsts[0] if len(firsts) == 1 else tree(firsts, add)


def reduce_sum_split(rows, size: int, add):
    """ReduceSum's split form (方式二 on every SoC): trees of the repeats, a tree across them."""
    return _tree_of_repeat_sums(whole_reduce_sum(rows, add), REPEAT // size, add)


def reduce_sum_count(vals, size: int, arch: str, add):
    """ReduceSum's count form over ``vals``: 方式一 on A2/A3 (``arch`` "2201"); on 310P ("2002") the full
    repeats by 方式二, the tail repeat's tree, then their sum."""
    lanes = REPEAT // size
    rows = _rows(vals, size)
    if arch == "2201":
        return in_order(whole_reduce_sum(rows, add), add)
    body = len(vals) // lanes
    if body == 0:
        return tree(rows[0], add)
    total = reduce_sum_split(rows[:body], size, add)
    return add(total, tree(rows[body], add)) if len(rows) > body else total


def _key(v):
    return float("-inf") if v is R.NEG_INF else float("inf") if v is R.INF else (0 if isinstance(v, R.Zero) else v)


def first_extreme(vals, largest: bool):
    """(value, index) of the first max / min among the non-None values (ReduceRepeat.md: ties give the smallest
    index; -0 and +0 are equal). NaN is not documented: callers pass none."""
    best, at = None, None
    for i, v in enumerate(vals):
        if v is None:
            continue
        if best is None or (_key(v) > _key(best) if largest else _key(v) < _key(best)):
            best, at = v, i
    return best, at


# ------------------------------------------------------------------------------------------
# the adv APIs' float32 row sums
# ------------------------------------------------------------------------------------------

F32_LANES = REPEAT // 4


def _lanewise(acc, chunk, add) -> list:
    return [add(a, b) for a, b in zip(acc, chunk)]


def rmsnorm_row_sum(vals, add, basic: bool = False):
    """RmsNormReduceSum of one float32 row of squares (module docstring); a row of one value is returned as is
    (the loop runs while more than one value is left)."""
    if basic:
        acc = list(vals[:F32_LANES])
        for i in range(F32_LANES, len(vals), F32_LANES):
            acc = _lanewise(acc, vals[i:i + F32_LANES], add)
        return tree(acc, add)
    level = list(vals)
    while len(level) > 1:
        level = [tree(level[i:i + F32_LANES], add) for i in range(0, len(level), F32_LANES)]
    return level[0]


def softmax_row_sum(vals, add, basic: bool = False):
    """NewReduceSumLastNDImpl (or SoftMaxBasicBlock's sum) of one float32 row (module docstring)."""
    k = len(vals)
    if k < F32_LANES:
        return tree(vals, add)
    nb, tail = divmod(k, F32_LANES)
    chunks = [list(vals[j * F32_LANES:(j + 1) * F32_LANES]) for j in range(nb)]
    if k >= 8 * F32_LANES and not basic:  # BigBlockReduceSum: a tree per 8-lane block of the first 8 chunks
        first = [v for c in chunks[:8] for v in c]
        acc, start = [tree(first[8 * b:8 * b + 8], add) for b in range(F32_LANES)], 8
    else:
        acc, start = chunks[0], 1
    for c in chunks[start:]:
        acc = _lanewise(acc, c, add)
    acc = _lanewise(acc[:tail], vals[nb * F32_LANES:], add) + acc[tail:]
    return tree(acc, add)
