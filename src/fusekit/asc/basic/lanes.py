"""The index helper: which elements and bytes of an operand an Iteration touches.

Lane k of repeat r of an operand with ``e = 32 / sizeof(T)`` elements per 32 B block, block
stride ``b`` and repeat stride ``s`` (in blocks) is element

    r * s * e + (k // e) * b * e + k % e

(AD-API SIMD计算说明/高维切分.md: a repeat reads 8 DataBlocks ``b`` blocks apart; the same block of
the next repeat is ``s`` blocks further). An operand narrower than the widest one (Cast's half
source beside a float destination) spans fewer blocks: lanes are counted in the widest type
(Cast.md: "计算输入参数以数据类型的字节较大的为准"). The count form maps lane k to element k.

The byte ranges are merged, so a contiguous count-form operand is one Access and a strided or
masked one records exactly the bytes it touches (the sanitizer and the timing model read them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..trace import Access
from .iteration import BLOCK, Iteration
from .memo import Memo


@dataclass(frozen=True)
class Lanes:
    """The elements one operand's active lanes touch.

    Attributes:
        index: element indices into the tensor, one per active lane in lane order (repeat-major);
            a ``slice`` for the count form.
        grid: int64[repeats, lanes], element index of every lane (None for the count form).
        ranges: merged UB byte ranges ``(start, stop)`` of the touched elements.
    """

    index: slice | np.ndarray
    grid: np.ndarray | None
    ranges: tuple[tuple[int, int], ...]

    def accesses(self, tensor) -> tuple[Access, ...]:
        return tuple(tensor.access(start, stop) for start, stop in self.ranges)


def lanes(core, op: str, tensor, it: Iteration, role: str) -> Lanes:
    """Element indices and merged byte ranges of ``tensor`` (operand ``role``) under ``it``.

    Raises:
        KernelError: a touched element lies outside the tensor (kind ``out-of-bounds``).
    """
    size = tensor.dtype.sizeof()
    if it.contiguous:
        start, stop = tensor.span(core, op, it.count)  # bounds-checked, messages of the count form
        return Lanes(slice(0, it.count), None, ((start, stop),))
    return _WALKS.get((it.key(), role, size, tensor.addr, tensor.length),
                      lambda: _frozen(_walk(core, op, tensor, it, role, size)))


_WALKS = Memo()


def _frozen(found: Lanes) -> Lanes:
    """``found`` with read-only arrays: a cached walk is shared by every instruction that repeats it."""
    for a in (found.index, found.grid):
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    return found


def _walk(core, op: str, tensor, it: Iteration, role: str, size: int) -> Lanes:
    """``lanes`` of the split form, computed."""
    per_block = BLOCK // size
    blk, rep = it.stride(role)
    if blk == 1 and rep * per_block == it.lanes and it.count == int(it.repeats) * int(it.lanes):
        return _dense(core, op, tensor, it, role, size)
    k = np.arange(it.lanes)
    offsets = (k // per_block) * (blk * per_block) + k % per_block
    grid = np.arange(it.repeats, dtype=np.int64)[:, None] * (rep * per_block) + offsets[None, :]
    index = grid[it.active()]
    if index.size and int(index.max()) >= tensor.length:
        last = int(index.max())
        raise core.error(op, f"{role} {tensor.name} (block stride {blk}, repeat stride {rep} blocks, {it.repeats} "
                             f"repeats) reaches element {last} but the tensor has {max(tensor.length, 0)} elements; "
                             "lower repeat_times, the strides or the mask, or allocate a larger buffer",
                         kind="out-of-bounds", **tensor.describe(last + 1))
    return Lanes(index, grid, merged_ranges(index, size, tensor.addr))


def _dense(core, op: str, tensor, it: Iteration, role: str, size: int) -> Lanes:
    """``lanes`` when every lane of every repeat is active and the repeats follow one another (lane k of
    repeat r is element r * lanes + k, e.g. ReduceSum's count form over whole repeats): one byte range."""
    repeats, width = int(it.repeats), int(it.lanes)
    n = repeats * width
    grid = np.arange(n, dtype=np.int64).reshape(repeats, width)
    if n and n - 1 >= tensor.length:
        blk, rep = it.stride(role)
        raise core.error(op, f"{role} {tensor.name} (block stride {blk}, repeat stride {rep} blocks, {it.repeats} "
                             f"repeats) reaches element {n - 1} but the tensor has {max(tensor.length, 0)} elements; "
                             "lower repeat_times, the strides or the mask, or allocate a larger buffer",
                         kind="out-of-bounds", **tensor.describe(n))
    ranges = ((tensor.addr, tensor.addr + n * size),) if n else ()
    return Lanes(grid.reshape(-1), grid, ranges)


def merged_ranges(index: np.ndarray, size: int, base: int) -> tuple[tuple[int, int], ...]:
    """Byte ranges of elements ``index`` (any order, repeats allowed), adjacent ones merged."""
    if index.size == 0:
        return ()
    step = np.diff(index)
    if (step == 1).all():  # one run (a count-form or whole-repeat walk): no sort needed
        return ((int(index[0]) * size + base, (int(index[-1]) + 1) * size + base),)
    u = index if (step > 0).all() else np.unique(index)
    breaks = np.flatnonzero(np.diff(u) != 1)
    starts = np.concatenate(([u[0]], u[breaks + 1])) * size + base
    stops = (np.concatenate((u[breaks], [u[-1]])) + 1) * size + base
    return tuple(zip(starts.tolist(), stops.tolist()))
