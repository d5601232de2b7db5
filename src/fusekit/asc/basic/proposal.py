"""Sorting on the vector core: Sort32, MrgSort, Sort (pyasc basic/proposal.py; AD-API Memory矢量计算/
排序组合（ISASI）/Sort32.md, MrgSort.md, GetMrgSortResult.md; 高阶API/排序操作/Sort.md).

Layout of a sorted element (Sort32.md 功能说明): 8 bytes, the score in the low bytes and the uint32
index in the high 4 bytes; a float score fills the low 4 B, a half score the low 2 B (the 2 B in
between are reserved: fusekit leaves them as they were, and records them as written).
Order: descending score; of equal scores the one earlier in the input comes first (约束说明:
score[i] == score[j], i > j: score[j] first), i.e. a stable descending sort. NaN scores: the pages
do not say; numpy's order (NaN last) is used.

Atlas A2/A3 only (产品支持情况: Atlas 推理系列产品AI Core 不支持 Sort32 / MrgSort); dtypes half, float.
"""

from __future__ import annotations

import numpy as np

from .. import checks, dtypes
from ..effect import Effect, Operand, copy
from ..runtime import current
from ..scalar import typed
from ..tensor import LocalTensor
from ..trace import Pipe
from .iteration import MAX_REPEAT, MISSING
from .lanes import merged_ranges
from .spec import NO_FIGURE, Spec, export, register

_HF = frozenset({"float16", "float32"})
SORT32 = register(Spec("sort32", "Sort32", "proposal", {"2201": _HF}, arithmetic=False,
                       source="AD-API Memory矢量计算/排序组合（ISASI）/Sort32.md",
                       doc="each 32 (score, index) pairs sorted by descending score"))
MRG_SORT = register(Spec("mrg_sort", "MrgSort", "proposal", {"2201": _HF}, arithmetic=False,
                         source="AD-API Memory矢量计算/排序组合（ISASI）/MrgSort.md",
                         doc="merge up to 4 sorted queues of (score, index) into one, descending"))
SORT = register(Spec("sort", "Sort", "proposal", {"2201": _HF}, cost=NO_FIGURE, arithmetic=False,
                     source="AD-API 高阶API/排序操作/Sort.md", doc="(score, index) pairs sorted by descending score"))


def _repeat(core, op: str, value, top: int = MAX_REPEAT) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
        raise core.error(op, f"repeat_time must be an integer in [0, {top}], got {value!r}")
    return int(value)


def _pairs(core, op: str, dst, n: int) -> tuple[int, int]:
    """UB bytes of ``n`` 8-byte sorted elements at the start of dst."""
    per = 8 // dst.dtype.sizeof()
    return dst.span(core, op, n * per, hint=f"{n} sorted elements take 8 B each ({n * per} x {dst.dtype.name})")


def _store_pairs(dst, scores: np.ndarray, index: np.ndarray, first: int = 0) -> None:
    """Write (score, index) 8-byte elements at element ``first`` (8-byte units) of dst."""
    n = scores.size
    raw = dst.core.ub[dst.addr + first * 8:dst.addr + (first + n) * 8].reshape(n, 8)
    size = dst.dtype.sizeof()
    raw[:, :size] = scores.astype(dst.dtype.np).view(np.uint8).reshape(n, size)
    raw[:, 4:] = index.astype(np.uint32).view(np.uint8).reshape(n, 4)


def _load_pairs(t: LocalTensor, n: int) -> tuple[np.ndarray, np.ndarray]:
    raw = t.core.ub[t.addr:t.addr + n * 8].reshape(n, 8)
    size = t.dtype.sizeof()
    scores = raw[:, :size].copy().view(t.dtype.np).ravel()
    return scores, raw[:, 4:].copy().view(np.uint32).ravel()


def _descending(scores: np.ndarray) -> np.ndarray:
    """Stable order by descending score (ties keep input order: the pages' tie rule)."""
    return np.argsort(-scores.astype(np.float64), kind="stable")


def _sort_operands(core, op: str, spec: Spec, dst, src0, src1, n: int):
    checks.local_operands(core, op, dst, src0, src1)
    checks.same_dtype(core, op, dst, src0)
    checks.dtype_supported(core, spec, dst)
    if src1.dtype.name != "uint32":
        raise core.error(op, f"the index tensor {src1.name} must be uint32, got {src1.dtype.name} ({spec.source})",
                         tensor=src1.name, kind="unsupported")
    s0, s1, i0, i1 = *src0.span(core, op, n), *src1.span(core, op, n)
    d0, d1 = _pairs(core, op, dst, n)
    for name, (a, b) in ((src0.name, (s0, s1)), (src1.name, (i0, i1))):
        if n and a < d1 and d0 < b:
            raise core.error(op, f"the destination {dst.name} (UB [{d0}, {d1})) overlaps {name} (UB [{a}, {b})): use "
                                 "separate buffers", tensor=dst.name, kind="partial-overlap")
    return (src0.access(s0, s1), src1.access(i0, i1)) if n else (), ((dst.access(d0, d1),) if n else ())


@export
def sort32(dst=MISSING, src0=MISSING, src1=MISSING, repeat_time=MISSING) -> None:
    """Sort each group of 32 scores (``src0``) with their uint32 indices (``src1``) by descending score, on PIPE_V.

    Repeat ``r`` reads elements ``32r .. 32r+31`` of src0 and src1 and writes 32 sorted 8-byte
    (score, index) elements at byte ``256r`` of dst (Sort32.md 参数说明). ``repeat_time`` in [0, 255].

    Raises:
        KernelError: dtype / SoC, src1 not uint32, bounds, dst overlapping a source.
    """
    op = "sort32"
    core = current(op)
    if MISSING in (dst, src0, src1, repeat_time):
        raise core.error(op, "asc.sort32(dst, src0, src1, repeat_time) takes four arguments")
    repeats = _repeat(core, op, repeat_time)
    n = 32 * repeats
    reads, writes = _sort_operands(core, op, SORT32, dst, src0, src1, n)

    # a closure, not an Effect: where each lane lands depends on the scores (a sort), in (score, index) pairs
    def effect():
        scores, index = src0.array(n).reshape(repeats, 32), src1.array(n).reshape(repeats, 32)
        order = np.argsort(-scores.astype(np.float64), axis=1, kind="stable")
        _store_pairs(dst, np.take_along_axis(scores, order, 1).ravel(), np.take_along_axis(index, order, 1).ravel())

    core.record(op, Pipe.V, reads=reads, writes=writes, count=n, nbytes=n * 8, dtype=dst.dtype.name, effect=effect,
                repeats=repeats, cost=SORT32.cpp)


@export
def sort(dst=MISSING, concat=MISSING, index=MISSING, tmp=MISSING, repeat_time=MISSING, is_full_sort: bool = False):
    """Sort ``32 * repeat_time`` scores with their uint32 indices by descending score (Sort.md), on PIPE_V.

    ``is_full_sort=False``: each group of 32 is sorted on its own (as sort32); True: all of them
    together. dst receives 8-byte (score, index) elements. ``tmp`` (same dtype) is the page's
    temporary space: its first ``32 * repeat_time * 8`` bytes are recorded as left undefined
    (GetSortTmpSize's exact figure is not modelled).

    Raises:
        KernelError: dtype / SoC, index not uint32, bounds, dst overlapping a source.
    """
    op = "sort"
    core = current(op)
    if MISSING in (dst, concat, index, tmp, repeat_time):
        raise core.error(op, "asc.sort(dst, concat, index, tmp, repeat_time, is_full_sort=False) takes five arguments")
    if is_full_sort not in (True, False):
        raise core.error(op, f"is_full_sort must be True or False, got {is_full_sort!r}")
    repeats = _repeat(core, op, repeat_time)
    n = 32 * repeats
    reads, writes = _sort_operands(core, op, SORT, dst, concat, index, n)
    checks.local_operands(core, op, tmp)
    checks.same_dtype(core, op, dst, tmp)
    undefined = ()
    if is_full_sort and repeats > 1:
        t0, t1 = _pairs(core, op, tmp, n)
        undefined = (tmp.access(t0, t1),)
    group = n if is_full_sort else 32

    # a closure, not an Effect: where each lane lands depends on the scores (a sort), in (score, index) pairs
    def effect():
        if not n:
            return
        scores, idx = concat.array(n).reshape(-1, group), index.array(n).reshape(-1, group)
        order = np.argsort(-scores.astype(np.float64), axis=1, kind="stable")
        _store_pairs(dst, np.take_along_axis(scores, order, 1).ravel(), np.take_along_axis(idx, order, 1).ravel())

    core.record(op, Pipe.V, reads=reads, writes=writes, undefined=undefined, count=n, nbytes=n * 8,
                dtype=dst.dtype.name, effect=effect, repeats=repeats, cost=SORT.cpp)


class MrgSortSrcList:
    """pyasc ``asc.MrgSortSrcList(dtype, src1, src2, src3=None, src4=None)`` (core/tensor.py): up to 4 sorted
    queues. The dtype may be left out (``MrgSortSrcList(a, b, c, d)``, as pyasc's mrg_sort4 page writes it)."""

    def __init__(self, *args, dtype=None, src1=None, src2=None, src3=None, src4=None):
        if args and not isinstance(args[0], LocalTensor):
            args = args[1:]
        args = args + tuple(t for t in (src1, src2, src3, src4)[len(args):] if t is not None)
        self.queues = tuple(t for t in args if t is not None)
        if not 1 <= len(self.queues) <= 4 or not all(isinstance(t, LocalTensor) for t in self.queues):
            raise TypeError("MrgSortSrcList takes (dtype, src1, src2, src3=None, src4=None): 2 to 4 LocalTensors")

    def __repr__(self) -> str:
        return f"asc.MrgSortSrcList({', '.join(t.name for t in self.queues)})"


class MrgSort4Info:
    """pyasc ``asc.MrgSort4Info(element_lengths, if_exhausted_suspension=False, valid_bit=15, repeat_times=1)``
    (core/types.py; MrgSort.md 表3: lengths in 8-byte elements, each in [0, 4095]; valid_bit 3, 7 or 15)."""

    def __init__(self, element_lengths, if_exhausted_suspension: bool = False, valid_bit: int = 15,
                 repeat_times: int = 1):
        self.element_lengths = list(element_lengths)
        self.if_exhausted_suspension, self.valid_bit, self.repeat_times = if_exhausted_suspension, valid_bit, repeat_times

    def __repr__(self) -> str:
        return (f"asc.MrgSort4Info({self.element_lengths}, {self.if_exhausted_suspension}, {self.valid_bit}, "
                f"{self.repeat_times})")


export(MrgSortSrcList)
export(MrgSort4Info)


def _merge_plan(core, op: str, dst, queues, lengths, suspension: bool) -> tuple[np.ndarray, list[int]]:
    """For the given queues: (order over the concatenation, elements taken from each queue)."""
    scores = [_load_pairs(t, n)[0] for t, n in zip(queues, lengths)]
    for q, s in enumerate(scores):
        if s.size > 1 and np.any(s[1:].astype(np.float64) > s[:-1].astype(np.float64)):
            k = int(np.flatnonzero(s[1:] > s[:-1])[0])
            raise core.error(op, f"queue {q + 1} ({queues[q].name}) is not sorted by descending score (element {k + 1} > "
                                 f"element {k}): MrgSort merges queues that are already sorted (MrgSort.md 功能说明); "
                                 "sort them with sort32 first", tensor=queues[q].name)
    owner = np.concatenate([np.full(n, q) for q, n in enumerate(lengths)]).astype(np.int64)
    order = _descending(np.concatenate(scores)) if owner.size else np.zeros(0, np.int64)
    if suspension and owner.size:
        taken = owner[order]
        ends = [int(np.flatnonzero(taken == q)[-1]) + 1 if n else 0 for q, n in enumerate(lengths)]
        order = order[:min(ends)]  # the instruction stops when the first queue runs out
    counts = [int(np.sum(owner[order] == q)) for q in range(len(lengths))]
    return order, counts


@export
def mrg_sort(dst=MISSING, sort_list=MISSING, *args, **kwargs) -> None:
    """Merge 2-4 queues of 8-byte (score, index) elements, each sorted by descending score, into dst (PIPE_V).

    Forms (pyasc proposal.py): ``(dst, sort_list, params: MrgSort4Info)`` and ``(dst, sort_list,
    element_count_list, sorted_num, valid_bit, repeat_time, is_exhausted_suspension=False)``, where
    ``sorted_num`` (a list) receives the elements taken from each queue. ``valid_bit`` 3 / 7 / 15 =
    the first 2 / 3 / 4 queues. With ``if_exhausted_suspension`` the merge stops when a queue runs out
    (get_mrg_sort_result() gives the counts). ``repeat_times`` > 1 needs 4 equal queues stored one after
    another and no suspension (MrgSort.md 表3); each repeat merges the next 4 queues.

    Raises:
        KernelError: dtype / SoC, a queue not 8 B aligned or not sorted, lengths out of [0, 4095], a bad
            valid_bit, repeat_times > 1 without its conditions, dst overlapping a queue, bounds.
    """
    op = "mrg_sort"
    core = current(op)
    sorted_num = None
    if len(args) + len(kwargs) == 1:
        params = args[0] if args else kwargs.get("params")
        if not isinstance(params, MrgSort4Info):
            raise core.error(op, "asc.mrg_sort(dst, sort_list, params) needs an asc.MrgSort4Info")
        lengths, suspension = params.element_lengths, params.if_exhausted_suspension
        valid, repeats = params.valid_bit, params.repeat_times
    else:
        names = ("element_count_list", "sorted_num", "valid_bit", "repeat_time", "is_exhausted_suspension")
        values = dict(zip(names, args), **kwargs)
        if not set(names[:4]) <= set(values) or not set(values) <= set(names):
            raise core.error(op, "asc.mrg_sort takes (dst, sort_list, params: MrgSort4Info) or (dst, sort_list, "
                                 "element_count_list, sorted_num, valid_bit, repeat_time, is_exhausted_suspension=False)")
        lengths, sorted_num = list(values["element_count_list"]), values["sorted_num"]
        valid, repeats = values["valid_bit"], values["repeat_time"]
        suspension = values.get("is_exhausted_suspension", False)
    if not isinstance(sort_list, MrgSortSrcList):
        raise core.error(op, f"sort_list must be an asc.MrgSortSrcList, got {type(sort_list).__name__}")
    checks.local_operands(core, op, dst)
    checks.dtype_supported(core, MRG_SORT, dst)
    if valid not in (3, 7, 15):
        raise core.error(op, f"valid_bit must be 3, 7 or 15 (the first 2, 3 or 4 queues; MrgSort.md 表3), got {valid!r}")
    nq = {3: 2, 7: 3, 15: 4}[valid]
    queues = sort_list.queues[:nq]
    if len(queues) < nq or len(lengths) < nq:
        raise core.error(op, f"valid_bit {valid} uses {nq} queues but sort_list has {len(sort_list.queues)} and "
                             f"{len(lengths)} lengths were given")
    lengths = [int(v) for v in lengths[:nq]]
    if any(not 0 <= v <= 4095 for v in lengths):
        raise core.error(op, f"queue lengths must be in [0, 4095] 8-byte elements (MrgSort.md 表3), got {lengths}")
    repeats = _repeat(core, op, repeats)
    for t in queues:
        if not isinstance(t, LocalTensor) or t.dtype is not dst.dtype:
            raise core.error(op, f"every queue must be a {dst.dtype.name} LocalTensor like dst")
        if t.addr % 8:
            raise core.error(op, f"queue {t.name} starts at UB byte {t.addr}, not 8 B aligned (MrgSort.md 约束说明)",
                             tensor=t.name, kind="misaligned")
    if repeats > 1:
        contiguous = all(queues[q + 1].addr == queues[q].addr + lengths[q] * 8 for q in range(nq - 1))
        if not (nq == 4 and len(set(lengths)) == 1 and contiguous and not suspension):
            raise core.error(op, "repeat_times > 1 takes effect only with 4 queues of equal length stored one after "
                                 "another, valid_bit 15 and no exhausted suspension (MrgSort.md 表3); merge in "
                                 "separate calls instead")
    per = 8 // dst.dtype.sizeof()
    total = sum(lengths)
    if repeats > 1:  # the 4 queues of every repeat lie one after another from queue 1
        queues[0].span(core, op, total * per * repeats, hint=f"{repeats} repeats of 4 queues of {lengths[0]} elements")
        q_ranges = ((queues[0].addr, queues[0].addr + total * 8 * repeats),)
    else:
        for t, n in zip(queues, lengths):
            t.span(core, op, n * per, hint=f"the queue holds {n} 8-byte elements")
        q_ranges = merged_ranges(np.concatenate([np.arange(n * 8) + t.addr for t, n in zip(queues, lengths)]), 1, 0)
    plans = []
    for r in range(repeats):  # a loop per repeat: each merges its own 4 queues
        shifted = [LocalTensor.at(core, t.addr + r * total * 8, n * per, t.dtype, t.name, space=t.space)
                   for t, n in zip(queues, lengths)]
        plans.append((shifted, *_merge_plan(core, op, dst, shifted, lengths, bool(suspension))))
    written = sum(p[1].size for p in plans)
    d0, d1 = _pairs(core, op, dst, written) if written else (dst.addr, dst.addr)
    for a, b in q_ranges:
        if written and a < d1 and d0 < b:
            raise core.error(op, f"the destination {dst.name} (UB [{d0}, {d1})) overlaps a source queue (UB [{a}, {b})): "
                                 "MrgSort.md 约束说明 forbids it", tensor=dst.name, kind="partial-overlap")
    counts = plans[-1][2] + [0] * (4 - nq) if plans else [0, 0, 0, 0]
    core.mrg_sort_result = counts
    if isinstance(sorted_num, list):
        sorted_num[:] = [typed(c, dtypes.uint32) for c in counts][:max(len(sorted_num), nq)]

    # a closure, not an Effect: a merge of sorted queues, where each lane lands depends on the scores
    def effect():
        first = 0
        for shifted, order, _ in plans:
            pairs = [_load_pairs(t, n) for t, n in zip(shifted, lengths)]
            scores = np.concatenate([p[0] for p in pairs])
            index = np.concatenate([p[1] for p in pairs])
            _store_pairs(dst, scores[order], index[order], first)
            first += order.size

    if repeats > 1:
        reads = tuple(queues[0].access(a, b) for a, b in q_ranges)
    else:
        reads = tuple(t.access(t.addr, t.addr + n * 8) for t, n in zip(queues, lengths) if n)
    core.record(op, Pipe.V, reads=reads, writes=(dst.access(d0, d1),) if written else (), count=written,
                nbytes=written * 8, dtype=dst.dtype.name, effect=effect, repeats=repeats, cost=MRG_SORT.cpp)


@export
def get_mrg_sort_result():
    """The elements the core's last mrg_sort took from each of its 4 queues: a tuple of 4 uint16
    scalars (GetMrgSortResult.md; meaningful after an exhausted-suspension merge). PIPE_S.

    Raises:
        KernelError: no mrg_sort ran on this core yet.
    """
    op = "get_mrg_sort_result"
    core = current(op)
    counts = core.mrg_sort_result
    if counts is None:
        raise core.error(op, "no mrg_sort has run on this core yet; call asc.mrg_sort first")
    core.record(op, Pipe.S)
    return tuple(typed(c, dtypes.uint16) for c in counts)


def _sort_units(op: str, value) -> int:
    """``value * elements-of-float-per-sorted-element`` as a uint32, the way ``GetSortLen<float>`` /
    ``GetSortOffset<float>`` compute it (pyasc OpProposal.td emits both with ``T = float``).

    asc-devkit kernel_operator_proposal_intf_impl.h: on Atlas A2/A3 (``__NPU_ARCH__ == 2201``) a sorted
    element is 8 B = 2 floats (``floatSortedDataSize``); elsewhere (310P, region proposals) a proposal is
    8 floats (``regionProposalDataSize``). The page (高阶API/排序操作/GetSortLen.md) calls the result
    bytes; the code returns a count of T elements, which is what kernels index LocalTensors with.
    """
    core = current(op)
    n = typed(value, dtypes.uint32, f"asc.{op}({value!r})")  # pyasc materialises the argument as uint32
    per = 2 if core.soc.arch == "2201" else 8
    return typed((int(n) * per) & 0xFFFFFFFF, dtypes.uint32)  # uint32 arithmetic wraps


@export
def get_sort_len(elem_count):
    """``GetSortLen<float>(elem_count)``: the size of ``elem_count`` sorted elements, in float elements
    (2 per element on Atlas A2/A3, 8 per region proposal on 310P). A uint32 scalar; no instruction.

    Raises:
        KernelError: ``elem_count`` does not fit a uint32.
    """
    return _sort_units("get_sort_len", elem_count)


@export
def get_sort_offset(elem_offset):
    """``GetSortOffset<float>(elem_offset)``: where sorted element ``elem_offset`` starts, in float
    elements (same units as :func:`get_sort_len`). A uint32 scalar; no instruction.

    Raises:
        KernelError: ``elem_offset`` does not fit a uint32.
    """
    return _sort_units("get_sort_offset", elem_offset)


# --------------------------------------------------------------------------------------------
# Region Proposals (Atlas inference / 310P): ProposalConcat.md, ProposalExtract.md, RpSort16.md,
# MrgSort4.md. A proposal is 8 elements of T: [x1, y1, x2, y2, score, label, reserved, reserved]
# (ProposalConcat.md 功能说明); A2/A3 do not have these instructions (产品支持情况).
# --------------------------------------------------------------------------------------------

_RP = {"2002": _HF}
_ISA = "AD-API Memory矢量计算/排序组合（ISASI）/"
CONCAT = register(Spec("proposal_concat", "ProposalConcat", "proposal", _RP, cost=NO_FIGURE, arithmetic=False,
                       source=_ISA + "ProposalConcat.md", doc="field mode_number of proposal 16r+j = src[16r+j]"))
EXTRACT = register(Spec("proposal_extract", "ProposalExtract", "proposal", _RP, cost=NO_FIGURE, arithmetic=False,
                        source=_ISA + "ProposalExtract.md", doc="dst[16r+j] = field mode_number of proposal 16r+j"))
RP_SORT16 = register(Spec("rp_sort16", "RpSort16", "proposal", _RP, cost=NO_FIGURE, arithmetic=False,
                          source=_ISA + "RpSort16.md", doc="each 16 Region Proposals sorted by descending score"))
MRG_SORT4 = register(Spec("mrg_sort4", "MrgSort4", "proposal", _RP, cost=NO_FIGURE, arithmetic=False,
                          source=_ISA + "MrgSort4.md", doc="merge up to 4 sorted Region Proposal queues"))
_SCORE = 4  # position of the score in a proposal


def _field_op(op: str, spec: Spec, dst, src, repeat_time, mode_number, into_proposals: bool) -> None:
    core = current(op)
    checks.local_operands(core, op, dst, src)
    checks.same_dtype(core, op, dst, src)
    checks.dtype_supported(core, spec, dst)
    repeats = _repeat(core, op, repeat_time)
    if isinstance(mode_number, bool) or not isinstance(mode_number, (int, np.integer)) or not 0 <= mode_number <= 5:
        raise core.error(op, f"mode_number must be 0..5 (x1, y1, x2, y2, score, label; {spec.source}), got "
                             f"{mode_number!r}")
    n = 16 * repeats
    props, flat = (dst, src) if into_proposals else (src, dst)
    p_index = np.arange(n, dtype=np.int64) * 8 + int(mode_number)
    if n and 8 * n - 8 + int(mode_number) >= props.length:
        raise core.error(op, f"{props.name} holds {props.length // 8} proposals; {repeats} repeats need {n}",
                         kind="out-of-bounds", **props.describe(8 * n))
    f0, f1 = flat.span(core, op, n, hint=f"{repeats} repeats use 16 elements each")
    size = dst.dtype.sizeof()
    p_ranges = merged_ranges(p_index, size, props.addr)
    p_acc = tuple(props.access(a, b) for a, b in p_ranges)
    f_acc = (flat.access(f0, f1),) if n else ()
    _check_no_overlap(core, op, dst, [(a.start, a.stop) for a in (p_acc if into_proposals else f_acc)],
                      [(a.start, a.stop) for a in (f_acc if into_proposals else p_acc)])

    # a move: field mode_number of proposal i <-> element i of the flat tensor
    lane = np.arange(n, dtype=np.int64)
    d_index, s_index = (p_index, lane) if into_proposals else (lane, p_index)
    effect = Effect(spec, Operand(dst, d_index), {"src": Operand(src, s_index)}, copy)

    core.record(op, Pipe.V, reads=f_acc if into_proposals else p_acc, writes=p_acc if into_proposals else f_acc,
                count=n, nbytes=n * size, dtype=dst.dtype.name, effect=effect, repeats=repeats, cost=spec.cpp)


def _check_no_overlap(core, op: str, dst, writes, reads) -> None:
    for w0, w1 in writes:
        for r0, r1 in reads:
            if w0 < r1 and r0 < w1:
                raise core.error(op, f"the destination {dst.name} (UB [{w0}, {w1})) overlaps a source (UB [{r0}, {r1})): "
                                     "use separate buffers", tensor=dst.name, kind="partial-overlap")


@export
def proposal_concat(dst, src, repeat_time, mode_number) -> None:
    """Write 16 consecutive ``src`` elements per repeat into field ``mode_number`` (0 x1 .. 5 label) of 16
    Region Proposals of ``dst`` (8 elements each); the other fields keep their values. 310P only; half / float.

    Raises:
        KernelError: dtype / SoC, mode_number outside 0..5, repeat_time outside [0, 255], bounds, overlap.
    """
    _field_op("proposal_concat", CONCAT, dst, src, repeat_time, mode_number, into_proposals=True)


@export
def proposal_extract(dst, src, repeat_time, mode_number) -> None:
    """Read field ``mode_number`` of 16 Region Proposals of ``src`` per repeat into 16 consecutive ``dst``
    elements (ProposalExtract.md). 310P only; half / float.

    Raises:
        KernelError: dtype / SoC, mode_number outside 0..5, repeat_time outside [0, 255], bounds, overlap.
    """
    _field_op("proposal_extract", EXTRACT, dst, src, repeat_time, mode_number, into_proposals=False)


@export
def rp_sort16(dst, src, repeat_time) -> None:
    """Sort each group of 16 Region Proposals by descending score, equal scores in input order (RpSort16.md
    约束说明), on PIPE_V. 310P only; half / float; ``repeat_time`` in [0, 255].

    Raises:
        KernelError: dtype / SoC, bounds, dst partially overlapping src.
    """
    op = "rp_sort16"
    core = current(op)
    checks.local_operands(core, op, dst, src)
    checks.same_dtype(core, op, dst, src)
    checks.dtype_supported(core, RP_SORT16, dst)
    repeats = _repeat(core, op, repeat_time)
    n = 16 * repeats
    d0, d1 = dst.span(core, op, 8 * n, hint="a Region Proposal is 8 elements; each repeat sorts 16")
    s0, s1 = src.span(core, op, 8 * n, hint="a Region Proposal is 8 elements; each repeat sorts 16")
    if n and (d0, d1) != (s0, s1):
        _check_no_overlap(core, op, dst, [(d0, d1)], [(s0, s1)])

    # a closure, not an Effect: where each proposal lands depends on its score (a sort)
    def effect():
        props = src.array(8 * n).reshape(repeats, 16, 8)
        order = np.argsort(-props[:, :, _SCORE].astype(np.float64), axis=1, kind="stable")
        dst.array(8 * n)[:] = np.take_along_axis(props, order[:, :, None], 1).ravel()  # a copy: in place works

    core.record(op, Pipe.V, reads=(src.access(s0, s1),) if n else (), writes=(dst.access(d0, d1),) if n else (),
                count=n, nbytes=8 * n * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect, repeats=repeats,
                cost=RP_SORT16.cpp)


@export
def mrg_sort4(dst, src, params) -> None:
    """Merge up to 4 sorted Region Proposal queues into dst by descending score (MrgSort4.md), on PIPE_V.

    ``src`` a MrgSortSrcList, ``params`` a MrgSort4Info (lengths in proposals, [0, 4095]; valid_bit 3 / 7 /
    15; exhausted suspension; repeat_times > 1 only with 4 equal contiguous queues). Equal scores: the
    earlier queue / position first. 310P only; half / float.

    Raises:
        KernelError: dtype / SoC, an unsorted queue, a bad valid_bit or length, bounds, overlap.
    """
    op = "mrg_sort4"
    core = current(op)
    if not isinstance(src, MrgSortSrcList) or not isinstance(params, MrgSort4Info):
        raise core.error(op, "asc.mrg_sort4(dst, src: MrgSortSrcList, params: MrgSort4Info)")
    checks.local_operands(core, op, dst)
    checks.dtype_supported(core, MRG_SORT4, dst)
    valid = params.valid_bit
    if valid not in (3, 7, 15):
        raise core.error(op, f"valid_bit must be 3, 7 or 15 (MrgSort4.md), got {valid!r}")
    nq = {3: 2, 7: 3, 15: 4}[valid]
    queues, lengths = src.queues[:nq], [int(v) for v in params.element_lengths[:nq]]
    if len(queues) < nq or len(lengths) < nq or any(not 0 <= v <= 4095 for v in lengths):
        raise core.error(op, f"valid_bit {valid} needs {nq} queues and lengths in [0, 4095], got {len(queues)} queues, "
                             f"lengths {params.element_lengths}")
    repeats = _repeat(core, op, params.repeat_times)
    suspension = bool(params.if_exhausted_suspension)
    total = sum(lengths)
    if repeats > 1:
        contiguous = all(queues[q + 1].addr == queues[q].addr + lengths[q] * 8 * dst.dtype.sizeof()
                         for q in range(nq - 1))
        if not (nq == 4 and len(set(lengths)) == 1 and contiguous and not suspension):
            raise core.error(op, "repeat_times > 1 takes effect only with 4 equal queues stored one after another, "
                                 "valid_bit 15 and no exhausted suspension (MrgSort4.md); merge in separate calls")
    for t in queues:
        if t.dtype is not dst.dtype:
            raise core.error(op, f"queue {t.name} is {t.dtype.name}, dst is {dst.dtype.name}")
        checks.local_operands(core, op, t)
    plans, reads = [], []
    for r in range(repeats):
        shifted = [t[r * total * 8:] if r else t for t in queues]
        scores = []
        for t, n in zip(shifted, lengths):
            t.span(core, op, 8 * n, hint=f"the queue holds {n} proposals of 8 elements")
            scores.append(t.array(8 * n).reshape(n, 8)[:, _SCORE].copy())
            if n:
                reads.append(t.access(t.addr, t.addr + 8 * n * t.dtype.sizeof()))
        for q, s in enumerate(scores):
            if s.size > 1 and np.any(s[1:].astype(np.float64) > s[:-1].astype(np.float64)):
                raise core.error(op, f"queue {q + 1} ({shifted[q].name}) is not sorted by descending score: MrgSort4 "
                                     "merges sorted queues (MrgSort4.md 功能说明); sort them with rp_sort16 first")
        owner = np.concatenate([np.full(n, q) for q, n in enumerate(lengths)]).astype(np.int64)
        order = _descending(np.concatenate(scores)) if owner.size else np.zeros(0, np.int64)
        if suspension and owner.size:
            taken = owner[order]
            order = order[:min(int(np.flatnonzero(taken == q)[-1]) + 1 if n else 0 for q, n in enumerate(lengths))]
        plans.append((shifted, order, [int(np.sum(owner[order] == q)) for q in range(nq)]))
    written = sum(p[1].size for p in plans)
    d0, d1 = dst.span(core, op, 8 * written, hint="each merged proposal takes 8 elements")
    _check_no_overlap(core, op, dst, [(d0, d1)] if written else [], [(a.start, a.stop) for a in reads])
    core.mrg_sort_result = plans[-1][2] + [0] * (4 - nq) if plans else [0, 0, 0, 0]

    # a closure, not an Effect: a merge of sorted proposal queues, where each proposal lands depends on its score
    def effect():
        first = 0
        for shifted, order, _ in plans:
            props = np.concatenate([t.array(8 * n).reshape(n, 8) for t, n in zip(shifted, lengths)])
            dst.array(8 * (first + order.size))[8 * first:] = props[order].ravel()
            first += order.size

    core.record(op, Pipe.V, reads=tuple(reads), writes=(dst.access(d0, d1),) if written else (), count=written,
                nbytes=8 * written * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect, repeats=repeats,
                cost=MRG_SORT4.cpp)
