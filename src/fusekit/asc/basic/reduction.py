"""Numerics of the reduction instructions: the documented order of accumulation, and the first
extreme with its index. Pure numpy functions of lane arrays; the instruction files
(:mod:`.vec_reduce`) gather the lanes and store the results.

Facts (AD = CANN asc-devkit; pages under ``docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算/``):

- **Binary tree inside a repeat / block.** WholeReduceSum, RepeatReduceSum, BlockReduceSum and
  ReduceSum add pairwise: data0+data1, data2+data3, ..., then the pair sums pairwise, and so on
  (pyasc page whole_reduce_sum, 约束说明; ReduceDataBlock.md, 关键特性说明). Each pairwise sum is
  rounded to the operand dtype, so a tree is not ``numpy.sum``.
- **Masked lanes do not take part** (掩码.md: bit 0 = the element is not computed). fusekit gives
  them the additive identity ``-0.0`` (x + -0.0 == x for every x, -0.0 included), so a tree with
  holes equals the tree over the active lanes in place. A tree over ``n`` leaves, n not a power of
  two, is the perfect tree over the next power of two padded with the identity: the hardware's
  tree over a repeat's lanes with a partial mask is exactly that.
- **Saturation.** In saturation mode each pairwise half sum past 65504 is kept as +-65504
  (ReduceDataBlock.md 约束说明: "[60000, 60000, -30000, 100] ... 65504 - 29900 = 35604");
  "float数据类型只支持寄存器非饱和模式": float sums stay IEEE in either mode. pyasc's pages
  state the 65504 rule without naming the mode; the AD page, newer, ties it to saturation mode.
- **Max / min and index.** "如果存在多个最值，该指令会将最小索引写入目的操作数" (ReduceRepeat.md):
  ties give the first index. -0.0 and +0.0 compare equal, so the first of them wins and its own
  bits are returned. NaN: the pages say nothing; fusekit lets the first NaN win (as the Max / Min
  instructions and numpy propagate NaN) -- an assumption.
"""

from __future__ import annotations

import numpy as np

from .. import native, overflow


def _pad_pow2(x: np.ndarray, fill) -> np.ndarray:
    n = x.shape[-1]
    width = 1 << max(n - 1, 0).bit_length()
    if width == n:
        return x
    pad = np.full(x.shape[:-1] + (width - n,), fill, x.dtype)
    return np.concatenate([x, pad], axis=-1)


def tree_sum(x: np.ndarray, active: np.ndarray | None, mode: str) -> np.ndarray:
    """Pairwise binary-tree sum along the last axis, each partial sum rounded to ``x.dtype``.

    Args:
        x: float16 / float32 lanes, shape ``[..., n]``.
        active: bool mask of the same shape (None: all lanes); inactive lanes are the identity -0.0.
        mode: overflow mode (:mod:`fusekit.asc.overflow`); saturation clamps every half partial sum.

    Returns:
        ``[...]`` sums in ``x.dtype``.
    """
    ident = x.dtype.type(-0.0)
    y = x if active is None else np.where(active, x, ident)
    y = _pad_pow2(np.asarray(y, x.dtype), ident)
    saturate = mode == overflow.SATURATION and x.dtype == np.float16
    fast = native.tree_sum(y, saturate)  # float16: the same levels in C
    if fast is not None:
        return fast
    with np.errstate(all="ignore"):
        while y.shape[-1] > 1:
            y = y[..., 0::2] + y[..., 1::2]
            if saturate:
                y = overflow.saturate(y, x.dtype)
    return y[..., 0]


_SCALAR_SUM = (np.dtype(np.float16), np.dtype(np.float32))  # scalar + scalar stays in the dtype


def sequential_sum(sums: np.ndarray, mode: str) -> np.ndarray:
    """``((s0 + s1) + s2) + ...`` along the last axis, each step rounded to ``sums.dtype`` (the
    count form of ReduceSum on A2/A3 accumulates the repeat sums in order: ReduceSum.md 方式一)."""
    saturate = mode == overflow.SATURATION and sums.dtype == np.float16
    acc = sums[..., 0]
    with np.errstate(all="ignore"):
        if sums.ndim == 1 and not saturate and sums.dtype in _SCALAR_SUM:  # one row: numpy scalar adds, each
            for value in sums[1:]:                                          # rounded to the dtype, ~25x faster
                acc = acc + value
            return acc
        for k in range(1, sums.shape[-1]):  # one step per repeat
            acc = (acc + sums[..., k]).astype(sums.dtype)
            if saturate:
                acc = overflow.saturate(acc, sums.dtype)
    return acc


def reduce_sum_order(x: np.ndarray, active: np.ndarray | None, count: int | None, arch: str, mode: str):
    """ReduceSum's documented order of accumulation: the one composition of it (the instruction,
    :mod:`.vec_reduce`, and the generator's hardware model, ``fusekit.gen.reference``, call it).

    ReduceSum.md 关键特性说明: the split form (``count`` None) is one perfect binary tree over all the
    lanes; the count form on A2/A3 (``arch`` "2201", 方式一) a tree inside each repeat, then the repeat
    sums in order; on Atlas inference ("2002", 方式二, AD dav_m200 ReduceSum) a tree over the full
    repeats, a tree over the tail, then their sum.

    Args:
        x: float16 / float32 lanes ``[..., repeats, lanes]``, one repeat (256 B) per row of the last two axes.
        active: bool of ``x``'s shape (None: all lanes); inactive lanes are the identity -0.0 (:func:`tree_sum`).
        count: the count form's element count (the active lanes are the first ``count`` of each
            ``[repeats * lanes]``), or None for the split form.
        arch: ``SoC.arch``.
        mode: overflow mode (:mod:`fusekit.asc.overflow`).

    Returns:
        ``[...]`` sums in ``x.dtype``.
    """
    flat_x = x.reshape(*x.shape[:-2], -1)  # [..., repeats * lanes]
    flat_a = None if active is None else active.reshape(flat_x.shape)
    if count is None:  # the split form: one tree over every lane
        return tree_sum(flat_x, flat_a, mode)
    if arch == "2201":  # 方式一: tree inside each repeat, repeats in order
        return sequential_sum(tree_sum(x, active, mode), mode)
    epr = x.shape[-1]  # 方式二: the full repeats' tree, the tail's tree, their sum
    body = max(count // epr, 1) * epr if count >= epr else count
    total = tree_sum(flat_x[..., :body], None if flat_a is None else flat_a[..., :body], mode)
    if count > body:
        tail = tree_sum(flat_x[..., body:], None if flat_a is None else flat_a[..., body:], mode)
        total = tree_sum(np.stack([total, tail], axis=-1).astype(x.dtype, copy=False), None, mode)
    return total


_NUMPY_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def first_extreme(x: np.ndarray, active: np.ndarray | None, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The max (``largest``) or min along the last axis and the index of its first occurrence.

    Returns:
        (values in ``x.dtype``, int64 indices); a row without active lanes gets index 0 and the
        value of lane 0 (callers do not write such rows).
    """
    if active is None and x.dtype in _NUMPY_FLOATS:  # numpy's argmax / argmin: the first extreme, a NaN first
        index = np.argmax(x, axis=-1) if largest else np.argmin(x, axis=-1)
        return np.take_along_axis(x, index[..., None], axis=-1)[..., 0], index
    act = np.ones(x.shape, bool) if active is None else active
    xf = x.astype(np.float64)
    nan = np.isnan(xf) & act
    worst = -np.inf if largest else np.inf
    key = np.where(act & ~nan, xf, worst)
    best = key.max(axis=-1) if largest else key.min(axis=-1)
    hit = act & (xf == best[..., None])
    hit = np.where(nan.any(axis=-1)[..., None], nan, hit)
    index = np.argmax(hit, axis=-1)
    values = np.take_along_axis(x, index[..., None], axis=-1)[..., 0]
    return values, index


def index_bits(index: np.ndarray, dtype: np.dtype, width: int | None = None) -> np.ndarray:
    """The index stored "按照dst的数据类型" (ReduceRepeat.md 关键特性说明): its low ``width`` bytes
    (default the dtype's size: uint16 for half, uint32 for float) seen as ``dtype`` elements."""
    width = width or np.dtype(dtype).itemsize
    raw = index.astype(np.uint64).astype(np.dtype(f"u{width}"))
    return raw.view(np.dtype(dtype)) if width == np.dtype(dtype).itemsize else raw
