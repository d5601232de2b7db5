"""Reductions (pyasc ``basic/vec_reduce.py``; AD-API ``Memory矢量计算/归约计算/``).

Per-repeat instructions (one hardware instruction, split form only):

- ``whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride, is_set_mask=True)``
  and ``repeat_reduce_sum(dst, src, repeat_time, mask: int, dst_blk_stride, src_blk_stride, dst_rep_stride,
  src_rep_stride, is_set_mask=True)``: one sum per repeat, a binary tree (ReduceRepeat.md; dst_blk_stride
  is ignored, pyasc page repeat_reduce_sum). dst of repeat r at element ``r * dst_rep_stride``.
- ``whole_reduce_max / whole_reduce_min(..., order=ReduceOrder.ORDER_VALUE_INDEX, is_set_mask=True)``: the
  extreme of each repeat and its index inside the repeat (the lane), stored as ``order`` says
  (ReduceRepeat.md 表3): [value, index], [index, value], [value], or [index as uint32]; a half index is
  a uint16 in a half slot. dst_rep_stride unit = that record's size.
- ``block_reduce_sum / max / min(dst, src, repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride)``:
  one result per 32 B block, 8 per repeat, a tree inside each block (ReduceDataBlock.md); a block with no
  active lane is not written (A2/A3). dst_rep_stride unit = 8 elements (16 B half / 32 B float).
- ``pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
  is_set_mask=True)``: dst[k] = src[2k] + src[2k+1]; a pair with both lanes masked is not written
  (ReducePairElem.md). dst_rep_stride unit = 128 B (half a repeat).

Whole-tensor instructions (Ascend C emulates them with several instructions and a shared temporary
buffer; ReduceSum.md / ReduceMax.md and AD ``impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h``):

- ``reduce_sum(dst, src, shared_tmp_buffer, count)`` or ``(..., mask, repeat_time, src_rep_stride)``: dst[0] =
  the sum. Order: a tree inside each repeat; across repeats **in order** for the count form on A2/A3
  (方式一; the temporary buffer is not used) and a **tree** for the split form (方式二; the whole
  computation is one perfect binary tree over the lanes). Atlas inference (2002) uses 方式二 for the count
  form too: tree over the full repeats, tree over the tail, then their sum.
- ``reduce_max / reduce_min(dst, src, shared_tmp_buffer, count | mask, repeat_time, src_rep_stride,
  cal_index=False)``: dst[0] = the extreme, dst[1] = its first index (an element offset into src) when
  ``cal_index``; a half index is a uint16 (indices past 65535 are refused, ReduceMax.md).
  Temporary buffer sizes: the pages' formulas (:func:`tmp_elements`).

Each Instr's ``cost`` is the Ascend C name and ``repeats`` the repeats of its first pass. A count or
repeat of 0, or a mask of 0, is a NOP (the pages, 约束说明, A2/A3).
"""

from __future__ import annotations

import enum

import numpy as np

from .. import checks, overflow
from ..effect import strided
from ..runtime import current
from ..tensor import LocalTensor
from . import mask as maskreg
from . import overlap
from .iteration import (BLOCK, IS_SET_MASK, MASK_INT, MASK_LIST, REPEAT, REQUIRED, Form, Iteration, Param, bind,
                        iteration)
from .lanes import lanes, merged_ranges
from .memo import Memo
from .reduction import first_extreme, index_bits, reduce_sum_order, tree_sum
from .spec import F16_F32, NO_FIGURE, Spec, export, register, same_on_all

_PAGE = "AD-API Memory矢量计算/归约计算/{}.md"
_U16 = 65535


@export
class ReduceOrder(enum.IntEnum):
    """pyasc ``asc.ReduceOrder`` (core/enums.py): where WholeReduceMax/Min put value and index."""

    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


# ReduceRepeat.md: A2/A3 take every order; Atlas inference (AI Core) VALUE_INDEX and INDEX_VALUE.
_ORDERS = {"2201": frozenset(ReduceOrder), "2002": frozenset({ReduceOrder.ORDER_VALUE_INDEX,
                                                               ReduceOrder.ORDER_INDEX_VALUE})}


def _spec(name: str, cpp: str, page: str, doc: str, cost: str = "") -> Spec:
    # half / float on A2/A3 and Atlas inference AI Core (each page's 数据类型 section). The throughput page
    # names its rows as the AD-API pages are named, after the newer interfaces (接口变更说明.md: BlockReduce* ->
    # ReduceDataBlock, WholeReduce* and RepeatReduceSum -> ReduceRepeat, PairReduceSum -> ReducePairElem).
    return register(Spec(name, cpp, "vec_reduce", same_on_all(F16_F32), cost=cost or page, source=_PAGE.format(page),
                         doc=doc))


# --------------------------------------------------------------------------------------------
# operands and forms
# --------------------------------------------------------------------------------------------

def _operand(core, op: str, t, role: str, align: int, rule: str) -> None:
    """``t`` is a UB LocalTensor whose start is ``align``-byte aligned (the page's rule ``rule``)."""
    if not isinstance(t, LocalTensor):
        raise core.error(op, f"{role} must be a LocalTensor in UB, got {type(t).__name__}: copy GM data into UB with "
                             "data_copy first (and check the argument order: destination first)")
    if t.addr % align:
        raise core.error(op, f"{role} {t.name} starts at UB byte {t.addr}, not {align}-byte aligned ({rule}); use an "
                             f"offset that is a multiple of {align // t.dtype.sizeof() or 1} elements",
                         tensor=t.name, kind="misaligned")


def _dtypes(core, spec: Spec, dst, *others) -> None:
    checks.dtype_supported(core, spec, dst)
    checks.same_dtype(core, spec.name, dst, *others)


def _int(name: str, default=None) -> Param:
    return Param(name, (int, np.integer), "int", REQUIRED if default is None else default)


def _ranged(core, op: str, values: dict, names, top: int = 65535) -> None:
    for name in names:
        v = values[name]
        if not 0 <= v <= top:
            raise core.error(op, f"{name} must be in [0, {top}] (ReduceRepeat.md: 取值范围为[0, 2^16-1]), got {v}")


def _strides(values, core, op) -> dict:
    _ranged(core, op, values, ("dst_rep_stride", "src_blk_stride", "src_rep_stride"))
    return {"dst": (1, 0), "src": (int(values["src_blk_stride"]), int(values["src_rep_stride"]))}


def _forms(lead: tuple, tail: tuple = (IS_SET_MASK,)) -> tuple[Form, Form]:
    """The int-mask and list-mask forms; ``lead`` lists the params with a placeholder ``None`` for mask."""
    out = []
    for mask in (MASK_INT, MASK_LIST):
        out.append(Form("split", tuple(mask if p is None else p for p in lead) + tail, _strides))
    return tuple(out)


_STRIDES = (_int("dst_rep_stride"), _int("src_blk_stride"), _int("src_rep_stride"))
_ORDER = Param("order", (ReduceOrder,), "ReduceOrder", ReduceOrder.ORDER_VALUE_INDEX)
WHOLE_FORMS = _forms((None, _int("repeat_time"), *_STRIDES))
WHOLE_MAXMIN_FORMS = _forms((None, _int("repeat_time"), *_STRIDES), (_ORDER, IS_SET_MASK))
PAIR_FORMS = _forms((_int("repeat_time"), None, *_STRIDES))
BLOCK_FORMS = _forms((_int("repeat"), None, *_STRIDES), ())


def _repeat_forms_strides(values, core, op) -> dict:
    _ranged(core, op, values, ("dst_blk_stride", "dst_rep_stride", "src_blk_stride", "src_rep_stride"))
    return {"dst": (1, 0), "src": (int(values["src_blk_stride"]), int(values["src_rep_stride"]))}


REPEAT_FORMS = (Form("split", (_int("repeat_time"), MASK_INT, _int("dst_blk_stride"), _int("src_blk_stride"),
                                _int("dst_rep_stride"), _int("src_rep_stride"), IS_SET_MASK), _repeat_forms_strides),)


def _iteration(core, op: str, form: Form, values: dict, width: int) -> Iteration:
    values = dict(values)
    for name in ("repeat_time", "repeat"):
        if name in values:
            values["repeat_times"] = values.pop(name)
    values.setdefault("is_set_mask", True)
    return iteration(core, op, form, values, width)


# --------------------------------------------------------------------------------------------
# per-repeat instructions: one shared executor
# --------------------------------------------------------------------------------------------

def _gather(src, grid: np.ndarray, active: np.ndarray) -> np.ndarray:
    """src values at ``grid`` ([repeats, lanes]); inactive lanes read element 0 (never used)."""
    whole = src.array(src.length)  # [..., n]: a lockstep group's cores come first (fusekit.asc.lockstep)
    view = strided(whole, grid)
    return whole[..., np.where(active, grid, 0)] if view is None else view.reshape(whole.shape[:-1] + grid.shape)


def _per_repeat(core, spec: Spec, it: Iteration, dst, src, *, unit: int, rep_stride: int, written: np.ndarray,
                compute, trim: bool = False) -> None:
    """Record and run a per-repeat reduction.

    Args:
        unit: dst elements of one repeat's output record; dst_rep_stride counts these.
        written: bool[repeats, k]: output k of repeat r is written (at element r*rep_stride*unit + k).
        compute: (values [..., R, lanes], active of that shape, mode) -> outputs [..., R, k] in dst's dtype (the
            leading axes: the cores of a lockstep group, fusekit.asc.lockstep).
        trim: ``compute`` is a tree or a first extreme over each repeat's lanes, so where every repeat's active lanes
            are its first m it gets those m lanes and None for active (the masked lanes, the identity of a tree
            or never the extreme, change nothing; numpy's argmax then finds the first extreme).

    Raises:
        KernelError: dst out of bounds, or a repeat reads src bytes that an earlier repeat wrote.
    """
    s = lanes(core, spec.name, src, it, "src")
    key = (spec.name, it.key(), unit, rep_stride, written.shape, written.tobytes(), trim, dst.addr, dst.length,
           dst.dtype.name, src.addr, src.length, src.dtype.name)
    active, out_index, targets, ranges, distinct, prefix = _PLANS.get(
        key, lambda: _plan(core, spec.name, it, dst, src, s, unit, rep_stride, written, trim))
    mode = overflow.mode_of(core)
    size = dst.dtype.sizeof()
    writes = tuple(dst.access(a, b) for a, b in ranges)

    # a closure, not an Effect: each result is a reduction tree over a repeat's lanes, rounded at every level
    def effect():
        if not targets.size:
            return
        with np.errstate(all="ignore"):
            x = _gather(src, s.grid, active)  # [cores of a lockstep group..., repeats, lanes]
            out = compute(x[..., :prefix], None, mode) if prefix else compute(x, np.broadcast_to(active, x.shape), mode)
        if distinct:
            whole = dst.array(dst.length)
            view = strided(whole, targets, write=True)
            if view is None:
                whole[..., targets] = out[..., written]
            else:
                view[...] = out[..., written].reshape(view.shape)
            return
        order = np.argsort(out_index[written], kind="stable")  # with dst_rep_stride 0 the last repeat wins
        flat_idx, flat_val = out_index[written][order], out[..., written][..., order]
        last = np.unique(flat_idx[::-1], return_index=True)[1]
        keep = flat_idx.size - 1 - last
        dst.array(dst.length)[..., flat_idx[keep]] = flat_val[..., keep]

    core.record(spec.name, spec.pipe, reads=s.accesses(src), writes=writes, count=it.elements,
                nbytes=targets.size * size, dtype=dst.dtype.name, effect=effect, repeats=it.repeats, cost=spec.cpp)


_PLANS = Memo()


def _plan(core, op: str, it: Iteration, dst, src, s, unit: int, rep_stride: int, written: np.ndarray, trim: bool):
    """What :func:`_per_repeat` needs besides the numbers: (active lanes, output index [repeats, k], written
    targets, merged dst byte ranges, whether the targets are distinct, the uniform active prefix or 0).

    Raises:
        KernelError: dst out of bounds, or a repeat reads src bytes that an earlier repeat wrote.
    """
    active = it.active() if it.repeats else np.zeros((0, it.lanes), bool)
    k = written.shape[1]
    out_index = (np.arange(it.repeats)[:, None] * (rep_stride * unit) + np.arange(k)[None, :])
    targets = out_index[written]
    if targets.size and int(targets.max()) >= dst.length:
        last = int(targets.max())
        raise core.error(op, f"dst {dst.name} (dst_rep_stride {rep_stride}, {it.repeats} repeats) is written up to "
                             f"element {last} but has {dst.length} elements; allocate a larger destination or lower "
                             "dst_rep_stride", kind="out-of-bounds", **dst.describe(last + 1))
    _check_reads_after_writes(core, op, dst, src, s.grid, active, out_index, written)
    ranges = merged_ranges(targets, dst.dtype.sizeof(), dst.addr)
    distinct = rep_stride * unit >= k or it.repeats <= 1  # no two repeats write one element
    prefix = 0
    if trim and active.size:
        width = int(active[0].sum())
        if width and active[:, :width].all() and not active[:, width:].any():
            prefix = width
    for a in (active, out_index, targets):
        a.flags.writeable = False  # shared by every call with the key
    return active, out_index, targets, ranges, distinct, prefix


def _check_reads_after_writes(core, op, dst, src, grid, active, out_index, written) -> None:
    """A repeat must not read src bytes an earlier repeat wrote to dst (通用地址重叠约束, 多次迭代间:
    :func:`.overlap.late_reads`; BlockReduceSum page: dst "不能覆盖未参与计算的源操作数"), said in the
    reduction's words: the NPU would reduce overwritten data."""
    if grid is None or not written.any() or not active.any():
        return
    d0, d1 = dst.addr, dst.addr + dst.length * dst.dtype.sizeof()
    s0, s1 = src.addr, src.addr + src.length * src.dtype.sizeof()
    if d1 <= s0 or s1 <= d0:
        return
    if overlap.late_reads(*overlap.lane_bytes(dst, out_index, written), *overlap.lane_bytes(src, grid, active)).size:
        raise core.error(op, f"a repeat reads src {src.name} bytes that an earlier repeat wrote to dst {dst.name}: the "
                             "NPU would reduce overwritten data (通用说明和约束.md, 通用地址重叠约束; BlockReduceSum: the "
                             "destination must not overwrite sources not yet reduced); use separate buffers or move "
                             "dst",
                         tensor=dst.name, kind="partial-overlap")


def _whole_sum(spec: Spec, forms, operands: str):
    def instr(dst, src, *args, **kwargs) -> None:
        op = spec.name
        core = current(op)
        form, values = bind(core, op, operands, forms, args, kwargs)
        _operand(core, op, src, "src", BLOCK, "src 32 B")
        _operand(core, op, dst, "dst", dst.dtype.sizeof() if isinstance(dst, LocalTensor) else 1,
                 "ReduceRepeat.md 表3: SUM dst 2 B (half) / 4 B (float)")
        _dtypes(core, spec, dst, src)
        it = _iteration(core, op, form, values, src.dtype.sizeof())
        written = np.ones((it.repeats, 1), bool)

        def compute(x, act, mode):
            total = tree_sum(x, act, mode)
            left = ~np.isfinite(total)
            if left.any():  # a sum left the dtype's range from finite lanes (Trace.overflows, as ReduceSum's)
                lanes = x if act is None else np.where(act, x, 0)
                core.note_overflow(len(core.instrs) - 1, (left & np.isfinite(lanes).all(axis=-1)).any(axis=-1))
            return total[..., None]

        _per_repeat(core, spec, it, dst, src, unit=1, rep_stride=int(values["dst_rep_stride"]), written=written,
                    compute=compute, trim=True)

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` ({spec.cpp}, {spec.source}), on PIPE_V. Form: ({operands}, "
                     f"{', '.join(map(str, forms[0].params))}); mask may also be a [low, high] bit mask"
                     f"{'' if len(forms) > 1 else ' (not for this instruction)'}. dtypes: half, float.\n\n"
                     "Raises:\n    KernelError: a call form, dtype, alignment, bounds, stride or overlap rule is "
                     "broken.")
    return export(instr)


whole_reduce_sum = _whole_sum(_spec("whole_reduce_sum", "WholeReduceSum", "ReduceRepeat",
                                    "dst[r] = binary-tree sum of repeat r's active lanes"),
                              WHOLE_FORMS, "dst, src")
repeat_reduce_sum = _whole_sum(_spec("repeat_reduce_sum", "RepeatReduceSum", "ReduceRepeat",
                                     "dst[r] = binary-tree sum of repeat r's first mask lanes"),
                               REPEAT_FORMS, "dst, src")


def _record_layout(order: ReduceOrder, size: int) -> tuple[int, int, int]:
    """(dst elements per record, alignment in bytes, index width in bytes) for ``order`` (ReduceRepeat.md 表3;
    ORDER_ONLY_INDEX stores a uint32 on A2/A3: 关键特性说明)."""
    if order is ReduceOrder.ORDER_ONLY_VALUE:
        return 1, size, size
    if order is ReduceOrder.ORDER_ONLY_INDEX:
        return 4 // size, 4, 4
    return 2, 2 * size, size


def _whole_extreme(spec: Spec, largest: bool):
    def instr(dst, src, *args, **kwargs) -> None:
        op = spec.name
        core = current(op)
        form, values = bind(core, op, "dst, src", WHOLE_MAXMIN_FORMS, args, kwargs)
        order = values["order"]
        _operand(core, op, src, "src", BLOCK, "src 32 B")
        if isinstance(dst, LocalTensor):
            _dtypes(core, spec, dst, src)
        if order not in _ORDERS.get(core.soc.arch, ()):
            ok = ", ".join(o.name for o in sorted(_ORDERS.get(core.soc.arch, ())))
            raise core.error(op, f"{order.name} is not supported on {core.soc.name} (ReduceRepeat.md 约束说明: {ok})",
                             kind="unsupported")
        size = src.dtype.sizeof()
        unit, align, width = _record_layout(order, size)
        _operand(core, op, dst, "dst", align, f"ReduceRepeat.md 表3: {order.name} with {src.dtype.name}")
        it = _iteration(core, op, form, values, size)
        written = np.ones((it.repeats, unit), bool)
        np_dtype = dst.dtype.np

        def compute(x, act, mode):
            value, index = first_extreme(x, act, largest)
            if order is ReduceOrder.ORDER_ONLY_VALUE:
                return value[..., None]
            if order is ReduceOrder.ORDER_ONLY_INDEX:
                return index.astype(np.uint32).view(np_dtype).reshape(index.shape + (unit,))
            idx = index_bits(index, np_dtype)
            pair = (value, idx) if order is ReduceOrder.ORDER_VALUE_INDEX else (idx, value)
            return np.stack(pair, axis=-1)

        _per_repeat(core, spec, it, dst, src, unit=unit, rep_stride=int(values["dst_rep_stride"]), written=written,
                    compute=compute, trim=True)

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` ({spec.cpp}, {spec.source}), on PIPE_V. Forms: (dst, src, mask, repeat_time, "
                     "dst_rep_stride, src_blk_stride, src_rep_stride, order=ReduceOrder.ORDER_VALUE_INDEX, "
                     "is_set_mask=True); the index is the lane inside the repeat, first one on ties, stored in the "
                     "value's dtype (half: uint16 bits; ORDER_ONLY_INDEX: a uint32). dtypes: half, float.\n\n"
                     "Raises:\n    KernelError: a call form, dtype, order, alignment, bounds or overlap rule is "
                     "broken.")
    return export(instr)


whole_reduce_max = _whole_extreme(_spec("whole_reduce_max", "WholeReduceMax", "ReduceRepeat",
                                        "dst[r] = (max, index) of repeat r"), largest=True)
whole_reduce_min = _whole_extreme(_spec("whole_reduce_min", "WholeReduceMin", "ReduceRepeat",
                                        "dst[r] = (min, index) of repeat r"), largest=False)


def _block(spec: Spec, kind: str):
    def instr(dst, src, *args, **kwargs) -> None:
        op = spec.name
        core = current(op)
        form, values = bind(core, op, "dst, src", BLOCK_FORMS, args, kwargs)
        _operand(core, op, src, "src", BLOCK, "src 32 B")
        if isinstance(dst, LocalTensor):
            _dtypes(core, spec, dst, src)
        _operand(core, op, dst, "dst", 8 * src.dtype.sizeof(), "ReduceDataBlock.md: dst 16 B (half) / 32 B (float)")
        it = _iteration(core, op, form, values, src.dtype.sizeof())
        per = BLOCK // src.dtype.sizeof()
        blocks = it.active().reshape(it.repeats, 8, per).any(axis=2) if it.repeats else np.zeros((0, 8), bool)

        def compute(x, act, mode):
            xb, ab = x.reshape(x.shape[:-1] + (8, per)), act.reshape(x.shape[:-1] + (8, per))
            if kind == "sum":
                return tree_sum(xb, ab, mode)
            return first_extreme(xb, ab, kind == "max")[0]

        _per_repeat(core, spec, it, dst, src, unit=8, rep_stride=int(values["dst_rep_stride"]), written=blocks,
                    compute=compute)

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` ({spec.cpp}, {spec.source}), on PIPE_V. Forms: (dst, src, repeat, mask, "
                     "dst_rep_stride, src_blk_stride, src_rep_stride); 8 results per repeat (one per 32 B block; "
                     "a block without active lanes is left as it was). dtypes: half, float.\n\n"
                     "Raises:\n    KernelError: a call form, dtype, alignment, bounds or overlap rule is broken.")
    return export(instr)


block_reduce_sum = _block(_spec("block_reduce_sum", "BlockReduceSum", "ReduceDataBlock",
                                "dst[8r + j] = binary-tree sum of block j of repeat r"), "sum")
block_reduce_max = _block(_spec("block_reduce_max", "BlockReduceMax", "ReduceDataBlock",
                                "dst[8r + j] = max of block j of repeat r"), "max")
block_reduce_min = _block(_spec("block_reduce_min", "BlockReduceMin", "ReduceDataBlock",
                                "dst[8r + j] = min of block j of repeat r"), "min")

_PAIR = _spec("pair_reduce_sum", "PairReduceSum", "ReducePairElem", "dst[k] = src[2k] + src[2k + 1]")


@export
def pair_reduce_sum(dst, src, *args, **kwargs) -> None:
    """``dst[k] = src[2k] + src[2k + 1]`` per repeat (PairReduceSum, AD-API 归约计算/ReducePairElem.md), on
    PIPE_V. Form: (dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride, src_rep_stride,
    is_set_mask=True); dst_rep_stride counts 128 B (half a repeat). A pair with one masked lane gives the
    other lane's value; a pair with both masked is not written (A2/A3, 310P). dtypes: half, float.

    Raises:
        KernelError: a call form, dtype, alignment (32 B), bounds or overlap rule is broken.
    """
    op = _PAIR.name
    core = current(op)
    form, values = bind(core, op, "dst, src", PAIR_FORMS, args, kwargs)
    _operand(core, op, src, "src", BLOCK, "src 32 B")
    _operand(core, op, dst, "dst", BLOCK, "ReducePairElem.md: 32 B")
    _dtypes(core, _PAIR, dst, src)
    it = _iteration(core, op, form, values, src.dtype.sizeof())
    half = it.lanes // 2
    pairs = it.active().reshape(it.repeats, half, 2).any(axis=2) if it.repeats else np.zeros((0, half), bool)
    _per_repeat(core, _PAIR, it, dst, src, unit=half, rep_stride=int(values["dst_rep_stride"]), written=pairs,
                compute=lambda x, act, mode: tree_sum(x.reshape(x.shape[:-1] + (half, 2)),
                                                      act.reshape(x.shape[:-1] + (half, 2)), mode))


# --------------------------------------------------------------------------------------------
# ReduceSum / ReduceMax / ReduceMin: whole tensor, shared temporary buffer
# --------------------------------------------------------------------------------------------

_TMP = Param("shared_tmp_buffer", (LocalTensor,), "LocalTensor")


def _whole_forms(with_index: bool) -> tuple[Form, ...]:
    extra = (Param("cal_index", (bool, np.bool_), "bool", False),) if with_index else ()
    return (Form("count", (_int("count"), *extra)),
            Form("split", (MASK_INT, _int("repeat_time"), _int("src_rep_stride"), *extra)),
            Form("split", (MASK_LIST, _int("repeat_time"), _int("src_rep_stride"), *extra)))


SUM_FORMS = _whole_forms(False)
EXTREME_FORMS = _whole_forms(True)


def _ceil_to(n: int, k: int) -> int:
    return -(-n // k) * k


def tmp_elements(op: str, arch: str, size: int, first_repeats: int, count_form: bool, cal_index: bool) -> int:
    """Elements ``shared_tmp_buffer`` needs (the pages' formulas, 关键特性说明).

    ReduceSum: split form (and the count form on 2002) ``ceil(R / per_block) * per_block``; the count form on
    A2/A3 does not use it (0). ReduceMax / ReduceMin: without index the first pass (``2R`` rounded up to
    a block), with index every pass kept (ReduceMax.md). ``first_repeats`` = repeat_time, or
    count / elements per repeat (at least 1) for the count form.
    """
    epb, epr = BLOCK // size, REPEAT // size
    r = max(int(first_repeats), 1)
    if op == "reduce_sum":
        return 0 if (count_form and arch == "2201") else _ceil_to(r, epb)
    iter1 = 2 * r
    if not cal_index:
        return _ceil_to(iter1, epb)
    start2 = _ceil_to(iter1, epb)
    iter2 = -(-iter1 // epr) * 2
    end2 = _ceil_to(iter2, epb)
    if iter2 <= 2:
        return start2 + end2
    iter3 = -(-iter2 // epr) * 2
    return start2 + end2 + _ceil_to(iter3, epb)


def _whole_iteration(core, op: str, form: Form, values: dict, size: int) -> tuple[Iteration, int]:
    """The lanes ReduceSum/Max/Min read, and the repeats of their first pass."""
    epr = REPEAT // size
    if form.kind == "count":
        count = values["count"]
        if not 0 <= count <= core.soc.ub_bytes // size:
            raise core.error(op, f"count must be in [0, {core.soc.ub_bytes // size}] (at most UB's size, "
                                 "ReduceSum.md), "
                                 f"got {count}")
        repeats = -(-count // epr)
        return Iteration("count", epr, repeats, count=int(count), contiguous=False, strides={"src": (1, 8)}), \
            max(count // epr, 1)
    repeat, rep = values["repeat_time"], values["src_rep_stride"]
    if not 0 <= repeat <= 2**31 - 1:
        raise core.error(op, f"repeat_time must be in [0, 2^31 - 1] (ReduceSum.md: 不超过int32_t最大值), got {repeat}")
    if not 0 <= rep <= 65535:
        raise core.error(op, f"src_rep_stride must be in [0, 65535] (32 B blocks), got {rep}")
    mask = values["mask"]
    if isinstance(mask, (list, tuple)):
        need = 2 if epr > 64 else 1
        if len(mask) not in (need, 2) or any(isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                             or not 0 <= v <= maskreg.FULL for v in mask) or not any(mask):
            raise core.error(op, f"a bit mask for {epr}-lane repeats is {need} uint64 value(s), not all 0 (掩码.md); "
                                 f"got {mask!r}")
        high, low = (int(mask[1]) if len(mask) == 2 and epr > 64 else 0), int(mask[0])
    else:
        if not 1 <= mask <= epr:
            raise core.error(op, f"a continuous mask must be in [1, {epr}] for {size}-byte elements (掩码.md), "
                                 f"got {mask}")
        high, low = maskreg.continuous_bits(int(mask), epr)
    maskreg.write(core, high=high, low=low)  # the first pass writes the mask register (AscendCUtils::SetMask)
    bits = maskreg.lane_bits(high, low, epr)
    return Iteration("split", epr, int(repeat), bits=bits, strides={"src": (1, int(rep))}), int(repeat)


def _whole_tensor(spec: Spec, forms, kind: str):
    def instr(dst, src, shared_tmp_buffer, *args, **kwargs) -> None:
        op = spec.name
        core = current(op)
        form, values = bind(core, op, "dst, src, shared_tmp_buffer", forms, args, kwargs)
        cal_index = bool(values.get("cal_index", False))
        tmp = shared_tmp_buffer
        _operand(core, op, src, "src", BLOCK, "src 32 B")
        _operand(core, op, tmp, "shared_tmp_buffer", BLOCK, "sharedTmpBuffer 32 B")
        if isinstance(dst, LocalTensor):
            _dtypes(core, spec, dst, src, tmp)
        size = src.dtype.sizeof()
        outputs = 2 if cal_index else 1
        _operand(core, op, dst, "dst", outputs * size, "ReduceRepeat.md 表3 (ReduceSum/Max/Min dst)")
        it, first = _whole_iteration(core, op, form, values, size)
        count_form = form.kind == "count"
        if it.elements == 0:  # count, repeat_time or mask 0: a NOP (约束说明)
            core.record(op, spec.pipe, count=0, dtype=dst.dtype.name, repeats=0, cost=spec.cpp)
            if count_form and core.soc.arch == "2201":
                maskreg.write(core, mode=maskreg.MaskMode.NORMAL, high=maskreg.FULL, low=maskreg.FULL)
            return
        need = tmp_elements(op, core.soc.arch, size, first, count_form, cal_index)
        if tmp.length < need:
            raise core.error(op, f"shared_tmp_buffer {tmp.name} has {tmp.length} elements but {spec.cpp} needs {need} "
                                 f"here ({spec.source}, 关键特性说明: the sharedTmpBuffer formula); allocate at least "
                                 f"{need * size} bytes", kind="out-of-bounds", **tmp.describe(need))
        if cal_index and size == 2 and (it.count or 0) > _U16 + 1:
            raise core.error(op, f"cal_index with half returns indices up to 65535 only ({spec.source}: "
                                 f"只支持获取最大不超过65535的索引值); {it.count} elements were given: reduce in float or in "
                                 "chunks", kind="unsupported")
        dst.span(core, op, outputs)  # bounds
        s = lanes(core, op, src, it, "src")
        if cal_index and size == 2 and s.grid is not None and int(s.grid[it.active()].max()) > _U16:
            raise core.error(op, f"cal_index with half returns indices up to 65535 only ({spec.source}); this call "
                                 "reads elements past 65535", kind="unsupported")
        mode = overflow.mode_of(core)
        arch = core.soc.arch
        np_dtype = dst.dtype.np
        tmp_access = (tmp.access(*tmp.span(core, op, need)),) if need else ()
        # the count form walks src densely (repeat stride = one repeat): a reshaped copy gives the same active
        # lanes as the gather (inactive ones are never used), without the index arrays; when every lane is
        # active, A2/A3's sum (a tree per repeat, tree_sum) needs no mask either
        rows, width = int(it.repeats), int(it.lanes)
        dense = count_form and rows * width <= src.length
        full = dense and kind == "sum" and arch == "2201" and it.count == rows * width
        active = None if full else it.active()
        count = it.count if count_form else None  # ReduceSum's order: None is the split form's one tree

        # a closure, not an Effect: one result from every lane, in the documented order, with rounding at every step
        # Shapes have the cores of a lockstep group in front (``lead``: () on one core; fusekit.asc.lockstep)
        def effect():
            with np.errstate(all="ignore"):
                values = src.array(rows * width)
                lead = values.shape[:-1]
                x = values.reshape(lead + (rows, width)).copy() if dense else _gather(src, s.grid, active)
                if kind == "sum":
                    act = active if active is None or not lead else np.broadcast_to(active, x.shape)
                    total = np.asarray(reduce_sum_order(x, act, count, arch, mode), np_dtype)  # ReduceSum.md order
                    result = total[..., None]
                    left = ~np.isfinite(total)
                    if left.any():  # the sum left the dtype's range, from finite lanes
                        lanes = (x if active is None else x[..., active]).reshape(lead + (-1,))
                        core.note_overflow(len(core.instrs) - 1, left & np.isfinite(lanes).all(axis=-1))
                else:
                    flat = x.reshape(lead + (1, -1))
                    value, index = first_extreme(flat, np.broadcast_to(active.reshape(1, -1), flat.shape),
                                                 kind == "max")
                    value, index = value[..., 0], index[..., 0]
                    result = np.asarray(value, np_dtype)[..., None]
                    if cal_index:
                        element = s.grid.reshape(-1)[index]
                        result = np.concatenate([result, index_bits(np.asarray(element)[..., None], np_dtype)], axis=-1)
            dst.array(outputs)[...] = result

        # the passes write partial results into the buffer and read them back; only the writes are recorded
        # (the reads are of bytes this instruction wrote), and the buffer's contents after it are left as they were
        writes = tmp_access + (dst.access(*dst.span(core, op, outputs)),)
        reads = s.accesses(src)
        core.record(op, spec.pipe, reads=reads, writes=writes, count=it.elements, nbytes=outputs * size,
                    dtype=dst.dtype.name, effect=effect, repeats=it.repeats, cost=spec.cpp)
        if count_form and arch == "2201":
            maskreg.write(core, mode=maskreg.MaskMode.NORMAL, high=maskreg.FULL, low=maskreg.FULL)

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` ({spec.cpp}, {spec.source}), on PIPE_V. Forms: (dst, src, shared_tmp_buffer, "
                     f"count{', cal_index=False' if kind != 'sum' else ''}) or (dst, src, shared_tmp_buffer, mask, "
                     f"repeat_time, src_rep_stride{', cal_index=False' if kind != 'sum' else ''}); mask int or "
                     "[low, high]. shared_tmp_buffer: at least tmp_elements(...) elements. dtypes: half, float.\n\n"
                     "Raises:\n    KernelError: a call form, dtype, alignment, bounds or buffer-size rule is broken.")
    return export(instr)


reduce_sum = _whole_tensor(_spec("reduce_sum", "ReduceSum", "ReduceSum", "dst[0] = sum of all active elements",
                                 NO_FIGURE), SUM_FORMS, "sum")
reduce_max = _whole_tensor(_spec("reduce_max", "ReduceMax", "ReduceMax", "dst[0] = max (dst[1] = its index)",
                                 NO_FIGURE), EXTREME_FORMS, "max")
reduce_min = _whole_tensor(_spec("reduce_min", "ReduceMin", "ReduceMin", "dst[0] = min (dst[1] = its index)",
                                 NO_FIGURE), EXTREME_FORMS, "min")

__all__ = ["ReduceOrder", "tmp_elements"]
