"""Brcb: broadcast each of 8 source elements to a whole 32 B DataBlock of the destination
(pyasc basic/vec_brcb.py; AD-API Memory矢量计算/数据填充/Brcb.md).

Repeat ``r`` reads ``src0[8r .. 8r+7]`` (the source is always read contiguously: 关键特性说明) and
fills destination block ``r * dst_rep_stride + j * dst_blk_stride`` (32 B blocks) with ``src0[8r + j]``
(Brcb.md 功能说明 pseudo-code).

Not modelled: on Atlas inference (310P) the page asks the kernel to leave 8 KB of UB free as the
instruction's scratch area; fusekit does not reserve or check it.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..effect import Effect, Operand, copy
from ..runtime import current
from ..trace import Pipe
from . import overlap
from .iteration import BLOCK, MAX_REPEAT, MISSING, RepeatParams
from .lanes import merged_ranges
from .spec import Spec, export, register

_TABLE_2201 = frozenset({"int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32"})
SPEC = register(Spec("brcb", "Brcb", "vec_brcb", {"2201": _TABLE_2201, "2002": _TABLE_2201 - {"bfloat16"}},
                     arithmetic=False, source="AD-API Memory矢量计算/数据填充/Brcb.md",
                     doc="dst block (r, j) = src0[8r + j] repeated"))


class BrcbRepeatParams(RepeatParams):
    """pyasc ``asc.BrcbRepeatParams(dst_blk_stride=1, dst_rep_stride=8)``: destination strides in 32 B
    blocks (uint16 as pyasc builds them, core/types.py; Brcb.md 表3)."""

    _FIELDS = (("dst_blk_stride", 65535), ("dst_rep_stride", 65535))


export(BrcbRepeatParams)


@export
def brcb(dst=MISSING, src0=MISSING, repeat_times=MISSING, repeat_params=MISSING) -> None:
    """Fill destination DataBlock ``(r, j)`` with ``src0[8r + j]`` for r < repeat_times, j < 8, on PIPE_V.

    Args (pyasc ``brcb(dst, src0, repeat_times, repeat_params: BrcbRepeatParams)``): ``repeat_times``
    in [0, 255] (0: a NOP); ``src0`` needs ``8 * repeat_times`` elements. dtypes: Brcb.md 数据类型
    (bfloat16 on A2/A3 only).

    Raises:
        KernelError: dtype / SoC, dst_blk_stride 0 (Brcb.md 约束说明: undefined), an operand out of
            bounds, src0 sharing memory with dst (约束说明: 不支持源操作数与目的操作数使用同一块内存地址).
    """
    op = "brcb"
    core = current(op)
    if MISSING in (dst, src0, repeat_times, repeat_params):
        raise core.error(op, "asc.brcb(dst, src0, repeat_times, repeat_params: BrcbRepeatParams) takes four arguments")
    checks.local_operands(core, op, dst, src0)
    checks.same_dtype(core, op, dst, src0)
    checks.dtype_supported(core, SPEC, dst)
    if not isinstance(repeat_params, BrcbRepeatParams):
        raise core.error(op, f"repeat_params must be an asc.BrcbRepeatParams, got {type(repeat_params).__name__}")
    if isinstance(repeat_times, bool) or not isinstance(repeat_times, (int, np.integer)) \
            or not 0 <= repeat_times <= MAX_REPEAT:
        raise core.error(op, f"repeat_times must be in [0, {MAX_REPEAT}] (Brcb.md), got {repeat_times!r}")
    v = repeat_params.checked(core, op)
    blk, rep, repeats = v["dst_blk_stride"], v["dst_rep_stride"], int(repeat_times)
    if blk == 0:
        raise core.error(op, "BrcbRepeatParams.dst_blk_stride is 0, which the NPU leaves undefined (Brcb.md 约束说明: "
                             "dstBlkStride不支持设置为0); use 1 for consecutive blocks")
    size = dst.dtype.sizeof()
    per = BLOCK // size
    n_src = repeats * 8
    s0, s1 = src0.span(core, op, n_src, hint=f"each repeat reads 8 elements: {repeats} repeats need {n_src}")
    blocks = (np.arange(repeats, dtype=np.int64)[:, None] * rep + np.arange(8)[None, :] * blk).ravel()
    d_index = blocks[:, None] * per + np.arange(per)[None, :]        # [8 * repeats, per]
    if d_index.size and int(d_index.max()) >= dst.length:
        last = int(d_index.max())
        raise core.error(op, f"dst {dst.name} (block stride {blk}, repeat stride {rep} blocks, {repeats} repeats) reaches "
                             f"element {last} but has {dst.length}; lower repeat_times or the strides",
                         kind="out-of-bounds", **dst.describe(last + 1))
    d_ranges = merged_ranges(d_index.ravel(), size, dst.addr)
    reads = ((s0, s1),) if n_src else ()
    overlap.disjoint(core, op, dst, d_ranges, {src0.name: reads}, "Brcb.md")

    # a move: destination lane (block b, element k) takes source element b, every lane of a block the same one
    effect = Effect(SPEC, Operand(dst, d_index.reshape(-1)), {"src0": Operand(src0, np.repeat(np.arange(n_src), per))},
                    copy)
    n = n_src * per
    core.record(op, Pipe.V, reads=tuple(src0.access(a, b) for a, b in reads),
                writes=tuple(dst.access(a, b) for a, b in d_ranges), count=n, nbytes=n * size, dtype=dst.dtype.name,
                effect=effect, repeats=repeats, cost=SPEC.cpp)
