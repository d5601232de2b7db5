"""Gather and Gatherb: collect elements / DataBlocks of a source at byte offsets read from a uint32 tensor
(pyasc basic/vec_gather.py; AD-API Memory矢量计算/离散与聚合/Gather.md, Gatherb(ISASI).md).

Gather: lane ``i`` of the instruction reads ``src`` at byte ``src_base + src_offset[i]`` (Gather.md
功能说明: ``dst[i] = src[(srcBaseAddr + srcOffset[i]) // sizeof(T)]``). In the split form repeat ``r``
uses offsets ``r * lanes .. r * lanes + lanes - 1`` (the count form is full repeats then a tail whose
offsets start at ``count - tail``: kernel_operator_vec_gather_intf_impl.h), writes ``dst``
contiguously inside a repeat and ``dst_rep_stride`` 32 B blocks between repeats.

Gatherb: repeat ``r`` reads 8 offsets ``offset[8r .. 8r+7]``; DataBlock ``j`` of the repeat is the 32 B at
byte ``offset[8r+j]`` of ``src0``, written to dst block ``r * dst_rep_stride + j * dst_blk_stride``.

What the Trace records: the offsets of the active lanes, and the exact ``src`` bytes gathered,
merged into ranges. The gathered addresses depend on data: they are read from ``src_offset`` when
the instruction is issued (in program order that is what the NPU reads). Recording only those
bytes, rather than the whole of ``src``, keeps the sanitizer from reporting uninitialised reads of
table entries nobody gathers.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..runtime import current
from ..trace import Pipe
from . import overlap
from .iteration import (BLOCK, MASK_INT, MASK_LIST, MAX_REPEAT, MISSING, REPEAT_TIMES, Form, Param, RepeatParams,
                        bind, count_form, iteration)
from .lanes import lanes, merged_ranges
from .spec import Spec, export, register

_TABLE_2201 = frozenset({"int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32"})
GATHER = register(Spec("gather", "Gather", "vec_gather", {"2201": _TABLE_2201, "2002": _TABLE_2201 - {"bfloat16"}},
                       arithmetic=False, source="AD-API Memory矢量计算/离散与聚合/Gather.md",
                       doc="dst[i] = src[(src_base + src_offset[i]) / sizeof(T)]"))
# Gatherb: A2/A3 only (产品支持情况: Atlas 推理系列产品AI Core 不支持); 数据类型 on A2/A3: uint16_t, uint32_t.
GATHERB = register(Spec("gatherb", "Gatherb", "vec_gather", {"2201": frozenset({"uint16", "uint32"})},
                        arithmetic=False, source="AD-API Memory矢量计算/离散与聚合/Gatherb(ISASI).md",
                        doc="dst block j of repeat r = the 32 B of src0 at byte offset[8r + j]"))


def _dst_rep(values, core, op) -> dict:
    rep = values["dst_rep_stride"]
    if not 0 <= rep <= 65535:
        raise core.error(op, f"dst_rep_stride must be in [0, 65535] (a uint16, 32 B blocks; Gather.md), got {rep}")
    return {"dst": (1, int(rep))}


_DST_REP = Param("dst_rep_stride", (int, np.integer), "int")
FORMS = (Form("split", (MASK_INT, REPEAT_TIMES, _DST_REP), _dst_rep),
         Form("split", (MASK_LIST, REPEAT_TIMES, _DST_REP), _dst_rep), count_form(is_set_mask=False))


def _offset_index(it) -> np.ndarray:
    """Element index into the offset tensor of every active lane (repeat r uses offsets r*lanes + k)."""
    if it.contiguous:
        return np.arange(it.count, dtype=np.int64)
    grid = np.arange(it.repeats, dtype=np.int64)[:, None] * it.lanes + np.arange(it.lanes)[None, :]
    return grid[it.active()]


def uint32_offsets(core, op: str, offsets, name: str) -> None:
    if offsets.dtype.name != "uint32":
        raise core.error(op, f"{name} ({offsets.name}) must be a uint32 LocalTensor of byte offsets, got "
                             f"{offsets.dtype.name}", tensor=offsets.name, kind="unsupported")


def _read_offsets(core, op: str, offsets, index: np.ndarray) -> tuple[np.ndarray, tuple]:
    """The offsets of ``index`` (int64) and the UB ranges they occupy; bounds-checked."""
    if index.size:
        last = int(index.max())
        if last >= offsets.length:
            raise core.error(op, f"the instruction reads offset {last} of {offsets.name}, which has {offsets.length} "
                                 "elements: every processed lane needs its offset; lower the count / repeat_times or "
                                 "allocate a larger offset buffer", kind="out-of-bounds", **offsets.describe(last + 1))
    values = offsets.array(offsets.length)[index].astype(np.int64)
    return values, merged_ranges(index, 4, offsets.addr)


def offset_bytes(core, op: str, base, base_name: str, offsets, name: str, it, size: int, page: str):
    """Check a scattered-address operand pair (``*_base`` and a uint32 ``*_offset`` tensor, both in
    bytes and multiples of the element size, ``page`` 约束说明) and read the offsets the active lanes use.

    Returns:
        (offset index per lane, offsets in bytes, their UB byte ranges, base + offsets in bytes).
    """
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or not 0 <= base < 2**32:
        raise core.error(op, f"{base_name} must be a uint32 byte offset, got {base!r}")
    if base % size:
        raise core.error(op, f"{base_name} = {base} B is not a multiple of sizeof(T) = {size}: the NPU moves misplaced "
                             f"data ({page} 约束说明: 地址须按元素位宽对齐)", kind="misaligned")
    o_index = _offset_index(it)
    offs, o_ranges = _read_offsets(core, op, offsets, o_index)
    byte = int(base) + offs
    bad = np.flatnonzero(byte % size)
    if bad.size:
        raise core.error(op, f"{name}[{int(o_index[bad[0]])}] = {int(offs[bad[0]])} B (plus {base_name} {base}) is not a "
                             f"multiple of sizeof(T) = {size} ({page} 约束说明: 偏移须按元素位宽对齐); offsets are in "
                             "bytes, not elements", kind="misaligned", tensor=offsets.name)
    return o_index, offs, o_ranges, byte


@export
def gather(dst=MISSING, src=MISSING, src_offset=MISSING, src_base=MISSING, *args, **kwargs) -> None:
    """``dst[i] = src[(src_base + src_offset[i]) / sizeof(T)]`` for every active lane, on PIPE_V.

    Forms (pyasc vec_gather.py): ``(dst, src, src_offset, src_base, count)``,
    ``(dst, src, src_offset, src_base, mask: int | List[int], repeat_times, dst_rep_stride)``.
    ``src_offset``: uint32 byte offsets relative to ``src + src_base``; ``src_base`` in bytes;
    ``dst_rep_stride`` in 32 B blocks (uint16). dst/src dtypes: Gather.md 数据类型 (bfloat16 on A2/A3 only).

    Raises:
        KernelError: a call form, dtype, alignment (``src_base`` and every offset a multiple of
            sizeof(T): Gather.md 约束说明), bounds (an offset past ``src``), or dst sharing memory with
            ``src`` / ``src_offset`` (Gather.md: 不支持源操作数与目的操作数使用同一块内存地址).
    """
    op = "gather"
    core = current(op)
    form, values = bind(core, op, "dst, src, src_offset, src_base", FORMS, args, kwargs,
                        (dst, src, src_offset, src_base))
    checks.local_operands(core, op, dst, src, src_offset)
    checks.same_dtype(core, op, dst, src)
    checks.dtype_supported(core, GATHER, dst)
    uint32_offsets(core, op, src_offset, "src_offset")
    size = dst.dtype.sizeof()
    values.setdefault("is_set_mask", True)
    it = iteration(core, op, form, values, size)
    d = lanes(core, op, dst, it, "dst")
    d_index = np.arange(it.count, dtype=np.int64) if it.contiguous else d.index
    o_index, offs, o_ranges, byte = offset_bytes(core, op, src_base, "src_base", src_offset, "src_offset", it, size,
                                                  "Gather.md")
    s_index = byte // size
    if s_index.size and int(s_index.max()) >= src.length:
        k = int(np.argmax(s_index))
        raise core.error(op, f"src_offset[{int(o_index[k])}] = {int(offs[k])} B (+ src_base {src_base}) reaches element "
                             f"{int(s_index[k])} of {src.name}, which has {src.length} elements; offsets are bytes from "
                             "src's start plus src_base", kind="out-of-bounds", **src.describe(int(s_index[k]) + 1))
    s_ranges = merged_ranges(s_index, size, src.addr)
    overlap.disjoint(core, op, dst, d.ranges, {src.name: s_ranges, src_offset.name: o_ranges}, "Gather.md")
    base = int(src_base)

    # a closure, not an Effect: the source lanes are addresses read from src_offset when the instruction runs
    def effect():
        # the offsets are read again here: an executor replaying a race applies effects in its own order
        now = (base + src_offset.array(src_offset.length)[o_index].astype(np.int64)) // size
        ok = now < src.length
        dst.array(dst.length)[d_index[ok]] = src.array(src.length)[now[ok]]

    reads = tuple(src_offset.access(a, b) for a, b in o_ranges) + tuple(src.access(a, b) for a, b in s_ranges)
    core.record(op, Pipe.V, reads=reads, writes=d.accesses(dst), count=it.elements, nbytes=it.elements * size,
                dtype=dst.dtype.name, effect=effect, repeats=it.repeats, cost=GATHER.cpp)


class GatherRepeatParams(RepeatParams):
    """pyasc ``asc.GatherRepeatParams(dst_blk_stride=1, dst_rep_stride=8)``: Gatherb's destination strides
    (block stride in 32 B blocks; repeat stride in 32 B blocks, both uint16 as pyasc builds them, core/types.py)."""

    _FIELDS = (("dst_blk_stride", 65535), ("dst_rep_stride", 65535))


export(GatherRepeatParams)


@export
def gatherb(dst=MISSING, src0=MISSING, offset=MISSING, repeat_times=MISSING, repeat_params=MISSING) -> None:
    """Gather 32 B DataBlocks: dst block ``j`` of repeat ``r`` = the 32 B of ``src0`` at byte ``offset[8r + j]``.

    Args (pyasc vec_gather.py ``gatherb``): ``offset`` a uint32 tensor of byte offsets from ``src0``'s
    start, each a multiple of 32 (Gatherb(ISASI).md); ``repeat_times`` in [0, 255]; ``repeat_params`` a
    GatherRepeatParams (dst strides in 32 B blocks). dtypes uint16 / uint32 (A2/A3 only).

    Raises:
        KernelError: dtype / SoC, an offset not 32 B aligned or past ``src0``, dst out of bounds,
            dst sharing memory with a source. A dst_blk_stride of 0 is taken as 1 (表3).
    """
    op = "gatherb"
    core = current(op)
    if MISSING in (dst, src0, offset, repeat_times, repeat_params):
        raise core.error(op, "asc.gatherb(dst, src0, offset, repeat_times, repeat_params: GatherRepeatParams) takes "
                             "five arguments")
    checks.local_operands(core, op, dst, src0, offset)
    checks.same_dtype(core, op, dst, src0)
    checks.dtype_supported(core, GATHERB, dst)
    uint32_offsets(core, op, offset, "offset")
    if not isinstance(repeat_params, GatherRepeatParams):
        raise core.error(op, f"repeat_params must be an asc.GatherRepeatParams, got {type(repeat_params).__name__}")
    if isinstance(repeat_times, bool) or not isinstance(repeat_times, (int, np.integer)) \
            or not 0 <= repeat_times <= MAX_REPEAT:
        raise core.error(op, f"repeat_times must be in [0, {MAX_REPEAT}] (Gatherb(ISASI).md), got {repeat_times!r}")
    strides = repeat_params.checked(core, op)
    blk, rep = strides["dst_blk_stride"] or 1, strides["dst_rep_stride"]  # 表3: dstBlkStride 0 is taken as 1
    size, repeats = dst.dtype.sizeof(), int(repeat_times)
    per = BLOCK // size
    o_index = np.arange(repeats * 8, dtype=np.int64)
    offs, o_ranges = _read_offsets(core, op, offset, o_index)
    bad = np.flatnonzero(offs % BLOCK)
    if bad.size:
        raise core.error(op, f"offset[{int(bad[0])}] = {int(offs[bad[0]])} B is not a multiple of 32: Gatherb reads whole "
                             "DataBlocks (Gatherb(ISASI).md: 偏移后的地址需满足32字节对齐)", kind="misaligned",
                         tensor=offset.name)
    s_index = (offs // size)[:, None] + np.arange(per)[None, :]          # [blocks, per]
    if s_index.size and int(s_index.max()) >= src0.length:
        k = int(np.argmax(s_index.max(axis=1)))
        raise core.error(op, f"offset[{k}] = {int(offs[k])} B makes block {k} end past {src0.name} ({src0.length} "
                             "elements)", kind="out-of-bounds", **src0.describe(int(s_index[k, -1]) + 1))
    blocks = np.arange(repeats, dtype=np.int64)[:, None] * rep + np.arange(8)[None, :] * blk
    d_index = (blocks.reshape(-1, 1) * per + np.arange(per)[None, :])  # [blocks, per]
    if d_index.size and int(d_index.max()) >= dst.length:
        last = int(d_index.max())
        raise core.error(op, f"dst {dst.name} (block stride {blk}, repeat stride {rep} blocks, {repeats} repeats) reaches "
                             f"element {last} but has {dst.length}", kind="out-of-bounds", **dst.describe(last + 1))
    s_ranges = merged_ranges(s_index.ravel(), size, src0.addr)
    d_ranges = merged_ranges(d_index.ravel(), size, dst.addr)
    overlap.disjoint(core, op, dst, d_ranges, {src0.name: s_ranges, offset.name: o_ranges}, "Gatherb(ISASI).md")

    # a closure, not an Effect: the source blocks are addresses read from offset when the instruction runs
    def effect():
        now = offset.array(offset.length)[o_index].astype(np.int64) // size
        idx = now[:, None] + np.arange(per)[None, :]
        ok = idx[:, -1] < src0.length
        dst.array(dst.length)[d_index[ok]] = src0.array(src0.length)[idx[ok]]

    n = repeats * 8 * per
    reads = tuple(offset.access(a, b) for a, b in o_ranges) + tuple(src0.access(a, b) for a, b in s_ranges)
    core.record(op, Pipe.V, reads=reads, writes=tuple(dst.access(a, b) for a, b in d_ranges), count=n,
                nbytes=n * size, dtype=dst.dtype.name, effect=effect, repeats=repeats, cost=GATHERB.cpp)
