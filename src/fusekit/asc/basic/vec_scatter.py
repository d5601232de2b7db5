"""Scatter: write source elements to byte offsets of the destination read from a uint32 tensor
(pyasc basic/vec_scatter.py; AD-API Memory矢量计算/离散与聚合/Scatter(ISASI).md).

``dst[(dst_base + dst_offset[i]) / sizeof(T)] = src[i]`` for every processed lane. In the split form
repeat ``r`` reads ``src`` contiguously inside the repeat, ``src_rep_stride`` 32 B blocks between
repeats, and uses offsets ``r * lanes .. r * lanes + lanes - 1`` (as Gather does with its offsets).
Only Atlas inference (310P) AI Core has it among the SoCs fusekit simulates (产品支持情况: A2/A3
不支持); dtypes uint16, half, uint32, float. The scattered addresses are read from ``dst_offset`` when
the instruction is issued, and only those dst bytes are recorded as written.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..runtime import current
from ..trace import Pipe
from . import overlap
from .iteration import MASK_INT, MASK_LIST, MISSING, REPEAT_TIMES, Form, Param, bind, count_form, iteration
from .lanes import lanes, merged_ranges
from .spec import NO_FIGURE, Spec, export, register
from .vec_gather import offset_bytes, uint32_offsets

SPEC = register(Spec("scatter", "Scatter", "vec_scatter", {"2002": frozenset({"uint16", "float16", "uint32", "float32"})},
                     cost=NO_FIGURE, arithmetic=False, source="AD-API Memory矢量计算/离散与聚合/Scatter(ISASI).md",
                     doc="dst[(dst_base + dst_offset[i]) / sizeof(T)] = src[i]"))


def _src_rep(values, core, op) -> dict:
    rep = values["src_rep_stride"]
    if not 0 <= rep <= 255:
        raise core.error(op, f"src_rep_stride must be in [0, 255] (a uint8, 32 B blocks; Scatter(ISASI).md), got {rep}")
    return {"dst": (1, 8), "src": (1, int(rep))}


_SRC_REP = Param("src_rep_stride", (int, np.integer), "int")
FORMS = (Form("split", (MASK_INT, REPEAT_TIMES, _SRC_REP), _src_rep),
         Form("split", (MASK_LIST, REPEAT_TIMES, _SRC_REP), _src_rep), count_form(is_set_mask=False))


@export
def scatter(dst=MISSING, src=MISSING, dst_offset=MISSING, dst_base=MISSING, *args, **kwargs) -> None:
    """``dst[(dst_base + dst_offset[i]) / sizeof(T)] = src[i]`` for every active lane, on PIPE_V.

    Forms (pyasc vec_scatter.py): ``(dst, src, dst_offset, dst_base, count)``,
    ``(dst, src, dst_offset, dst_base, mask: int | List[int], repeat_times, src_rep_stride)``.

    Raises:
        KernelError: a call form, dtype / SoC (A2/A3 have no Scatter), ``dst_base`` or an offset not
            a multiple of sizeof(T), an offset past dst, two lanes with the same offset (Scatter.md
            约束说明: 偏移地址不能有相同值), dst overlapping src / dst_offset.
    """
    op = "scatter"
    core = current(op)
    form, values = bind(core, op, "dst, src, dst_offset, dst_base", FORMS, args, kwargs,
                        (dst, src, dst_offset, dst_base))
    checks.local_operands(core, op, dst, src, dst_offset)
    checks.same_dtype(core, op, dst, src)
    checks.dtype_supported(core, SPEC, dst)
    uint32_offsets(core, op, dst_offset, "dst_offset")
    size = dst.dtype.sizeof()
    values.setdefault("is_set_mask", True)
    it = iteration(core, op, form, values, size)
    s = lanes(core, op, src, it, "src")
    s_index = np.arange(it.count, dtype=np.int64) if it.contiguous else s.index
    o_index, offs, o_ranges, byte = offset_bytes(core, op, dst_base, "dst_base", dst_offset, "dst_offset", it, size,
                                                  "Scatter(ISASI).md")
    d_index = byte // size
    if d_index.size and int(d_index.max()) >= dst.length:
        k = int(np.argmax(d_index))
        raise core.error(op, f"dst_offset[{int(o_index[k])}] = {int(offs[k])} B (+ dst_base {dst_base}) reaches element "
                             f"{int(d_index[k])} of {dst.name}, which has {dst.length}", kind="out-of-bounds",
                         **dst.describe(int(d_index[k]) + 1))
    if np.unique(d_index).size != d_index.size:
        raise core.error(op, "two lanes scatter to the same dst element: the result is unpredictable (Scatter(ISASI).md "
                             "约束说明: 偏移地址不能有相同值)", tensor=dst_offset.name)
    d_ranges = merged_ranges(d_index, size, dst.addr)
    overlap.disjoint(core, op, dst, d_ranges, {src.name: s.ranges, dst_offset.name: o_ranges}, "通用地址重叠约束")
    base = int(dst_base)

    # a closure, not an Effect: the destination lanes are addresses read from dst_offset when the instruction runs
    def effect():
        now = (base + dst_offset.array(dst_offset.length)[o_index].astype(np.int64)) // size
        ok = now < dst.length
        dst.array(dst.length)[now[ok]] = src.array(src.length)[s_index[ok]]

    reads = tuple(dst_offset.access(a, b) for a, b in o_ranges) + s.accesses(src)
    core.record(op, Pipe.V, reads=reads, writes=tuple(dst.access(a, b) for a, b in d_ranges), count=it.elements,
                nbytes=it.elements * size, dtype=dst.dtype.name, effect=effect, repeats=it.repeats, cost=SPEC.cpp)
