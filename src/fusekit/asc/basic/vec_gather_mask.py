"""GatherMask: keep the source elements a bit pattern selects, packed at the start of dst
(pyasc basic/vec_gather_mask.py; AD-API Memory矢量计算/比较与选择/GatherMask.md).

Semantics (GatherMask.md 功能说明, figures 1-3): repeat ``r`` reads the 256 B of ``src0`` that the
高维切分 layout gives (``src0_block_stride``, ``src0_repeat_stride`` in 32 B blocks); lane ``k`` is
kept when bit ``k`` of the repeat's pattern is 1; kept elements are written one after another from
``dst[0]``, repeat after repeat; the count is returned (``rsvdCnt``) and kept for
``get_gather_mask_remain_count()``.

- Built-in patterns ``src1_pattern`` 1..7 (1: even lanes, 2: odd lanes, 3-6: lane 0/1/2/3 of every
  four, 7: all; 310P takes 1..6). Lane ``k`` <-> bit ``k`` counted from the least significant bit
  (pattern 1 = ...0101 keeps the even lanes; 0x9999 = ...1001 keeps lanes 0 and 3 of every four).
- User pattern: a uint16 tensor for 16-bit T, uint32 for 32-bit T, consumed bit by bit within a
  repeat; repeat ``r``'s bits start ``r * src1_repeat_stride`` 32 B blocks into the tensor.
- ``reduce_mode=False`` (Normal): every repeat processes all 256 B, ``mask`` is ignored.
  ``reduce_mode=True`` (Counter): on A2/A3 ``mask`` elements in each of ``repeat_times`` repeats
  (配置方式一); on 310P ``mask`` elements in all, repeat_times ignored (配置方式二).
- Afterwards the mask register is in Normal mode (约束说明) holding ``(high 0, low mask)``: the
  implementation writes the mask argument into it in both modes (dav_c220 GatherMaskImpl).

The pattern's bits are read from UB when the instruction is issued, to know which bytes of dst it
writes and the count it returns.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import checks, dtypes
from ..runtime import current
from ..scalar import typed
from ..tensor import LocalTensor
from ..trace import Pipe
from .iteration import BLOCK, MISSING, Iteration
from .lanes import lanes as lanes_of, merged_ranges
from .mask import MaskMode, write
from .spec import Spec, export, register

_TABLE_2201 = frozenset({"float16", "bfloat16", "uint16", "int16", "float32", "uint32", "int32"})
SPEC = register(Spec("gather_mask", "GatherMask", "vec_gather_mask",
                     {"2201": _TABLE_2201, "2002": _TABLE_2201 - {"bfloat16"}}, arithmetic=False,
                     source="AD-API Memory矢量计算/比较与选择/GatherMask.md",
                     doc="dst[0:n] = src0 lanes whose pattern bit is 1, packed; returns n"))
_BUILTIN_TOP = {"2201": 7, "2002": 6}  # 功能说明: A2/A3 modes 1-7, Atlas inference AI Core modes 1-6


class GatherMaskMode(enum.IntEnum):
    """pyasc ``asc.GatherMaskMode`` (core/enums.py): only DEFAULT exists."""

    DEFAULT = 0


class GatherMaskParams:
    """pyasc ``asc.GatherMaskParams(src0_block_stride=1, repeat_times=1, src0_repeat_stride=0, src1_repeat_stride=0)``
    (core/types.py: uint8, uint16, uint16, uint8; strides in 32 B blocks, GatherMask.md 表3)."""

    _FIELDS = (("src0_block_stride", 255), ("repeat_times", 65535), ("src0_repeat_stride", 65535),
               ("src1_repeat_stride", 255))

    def __init__(self, src0_block_stride: int = 1, repeat_times: int = 1, src0_repeat_stride: int = 0,
                 src1_repeat_stride: int = 0):
        self.src0_block_stride, self.repeat_times = src0_block_stride, repeat_times
        self.src0_repeat_stride, self.src1_repeat_stride = src0_repeat_stride, src1_repeat_stride

    def checked(self, core, op: str) -> dict[str, int]:
        out = {}
        for name, top in self._FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
                raise core.error(op, f"GatherMaskParams.{name} must be an integer in [0, {top}], got {value!r}")
            out[name] = int(value)
        return out

    def __repr__(self) -> str:
        return "asc.GatherMaskParams(" + ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._FIELDS) + ")"


export(GatherMaskMode)
export(GatherMaskParams)


def _builtin_bits(mode: int, lanes: int) -> np.ndarray:
    k = np.arange(lanes)
    if mode == 7:
        return np.ones(lanes, bool)
    if mode in (1, 2):
        return k % 2 == mode - 1
    return k % 4 == mode - 3


def _pattern_bits(pattern: LocalTensor, repeats: int, lanes: int, src1_rep: int) -> np.ndarray:
    """bool[repeats, lanes] from a user pattern tensor (LSB first, repeat r at r * src1_rep blocks)."""
    raw = pattern.core.ub[pattern.addr:pattern.addr + pattern.length * pattern.dtype.sizeof()]
    starts = np.arange(repeats) * src1_rep * BLOCK
    width = -(-lanes // 8)
    rows = raw[starts[:, None] + np.arange(width)[None, :]] if repeats else np.zeros((0, width), np.uint8)
    return np.unpackbits(rows, axis=1, bitorder="little")[:, :lanes].astype(bool)


@export
def gather_mask(dst=MISSING, src0=MISSING, src1_pattern=MISSING, reduce_mode=MISSING, mask=MISSING, params=MISSING,
                gather_mask_mode=GatherMaskMode.DEFAULT):
    """Pack the ``src0`` elements the pattern selects into ``dst[0:n]``; returns n (a uint64 scalar), on PIPE_V.

    Args (pyasc ``gather_mask``): ``src1_pattern`` an int 1..7 (built-in) or a uint16 / uint32
    LocalTensor (user); ``reduce_mode`` False (Normal) / True (Counter); ``mask`` the Counter-mode
    count (ignored in Normal mode); ``params`` a GatherMaskParams. dtypes: GatherMask.md 数据类型
    (bfloat16 on A2/A3 only).

    Raises:
        KernelError: dtype / SoC, a built-in pattern out of range, a user pattern whose dtype does not
            match T, Counter-mode mask out of range, an operand out of bounds, dst partially
            overlapping a source.
    """
    op = "gather_mask"
    core = current(op)
    if MISSING in (dst, src0, src1_pattern, reduce_mode, mask, params):
        raise core.error(op, "asc.gather_mask(dst, src0, src1_pattern, reduce_mode, mask, params: GatherMaskParams, "
                             "gather_mask_mode=GatherMaskMode.DEFAULT) takes six arguments")
    checks.local_operands(core, op, dst, src0)
    checks.same_dtype(core, op, dst, src0)
    checks.dtype_supported(core, SPEC, dst)
    if not isinstance(params, GatherMaskParams):
        raise core.error(op, f"params must be an asc.GatherMaskParams, got {type(params).__name__}")
    if gather_mask_mode != GatherMaskMode.DEFAULT:
        raise core.error(op, "gather_mask_mode takes only GatherMaskMode.DEFAULT (GatherMask.md: mode 预留参数)")
    size = dst.dtype.sizeof()
    lanes = 256 // size
    p = params.checked(core, op)
    user = isinstance(src1_pattern, LocalTensor)
    if user:
        checks.local_operands(core, op, src1_pattern)
        want = "uint16" if size == 2 else "uint32"
        if src1_pattern.dtype.name != want:
            raise core.error(op, f"a user pattern for {dst.dtype.name} must be a {want} tensor, got "
                                 f"{src1_pattern.dtype.name} (GatherMask.md 数据类型: src1Pattern)",
                             tensor=src1_pattern.name, kind="unsupported")
    else:
        top = _BUILTIN_TOP[core.soc.arch]
        if isinstance(src1_pattern, bool) or not isinstance(src1_pattern, (int, np.integer)) \
                or not 1 <= src1_pattern <= top:
            raise core.error(op, f"a built-in src1_pattern must be an integer in [1, {top}] on {core.soc.name} "
                                 f"(GatherMask.md 功能说明), got {src1_pattern!r}")
    if not isinstance(reduce_mode, (bool, np.bool_)):
        raise core.error(op, f"reduce_mode must be a bool (False: Normal, True: Counter), got {reduce_mode!r}")
    if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or not 0 <= mask < 2**32:
        raise core.error(op, f"mask must be a uint32, got {mask!r}")
    strides = {"src0": (p["src0_block_stride"], p["src0_repeat_stride"])}
    if reduce_mode:
        if mask < 1:
            raise core.error(op, "in Counter mode (reduce_mode=True) mask must be in [1, 2**32 - 1] (GatherMask.md)")
        if core.soc.arch == "2002":  # 配置方式二: mask elements in all
            it = Iteration("split", lanes, -(-int(mask) // lanes), count=int(mask), strides=strides)
        else:  # 配置方式一: mask elements in each repeat, more than 256 B of them too (the page's own example and the
            # gather sample's scenario 2: mask 70 of uint32, src0RepeatStride 4, the repeats' elements overlapping)
            width = max(lanes, int(mask))
            it = Iteration("split", width, p["repeat_times"], bits=np.arange(width) < mask, strides=strides)
    else:
        it = Iteration("split", lanes, p["repeat_times"], bits=np.ones(lanes, bool), strides=strides)
    s = lanes_of(core, op, src0, it, "src0")
    src1_rep = p["src1_repeat_stride"]
    reads = list(s.accesses(src0))
    per_repeat = -(-it.lanes // 8)  # pattern bytes one repeat reads
    if user:
        need = (it.repeats - 1) * src1_rep * BLOCK + per_repeat if it.repeats else 0
        nbytes = src1_pattern.length * src1_pattern.dtype.sizeof()
        if need > nbytes:
            raise core.error(op, f"the pattern {src1_pattern.name} ({nbytes} B) is read up to byte {need}: {it.repeats} "
                             f"repeats of {per_repeat} B, {src1_rep} blocks apart", kind="out-of-bounds",
                             **src1_pattern.describe(-(-need // src1_pattern.dtype.sizeof())))
        byte_idx = (np.arange(it.repeats)[:, None] * src1_rep * BLOCK + np.arange(per_repeat)[None, :]).ravel()
        p_ranges = merged_ranges(byte_idx, 1, src1_pattern.addr)
        reads += [src1_pattern.access(a, b) for a, b in p_ranges]
        bits = _pattern_bits(src1_pattern, it.repeats, it.lanes, src1_rep)
    else:
        bits = np.broadcast_to(np.resize(_builtin_bits(int(src1_pattern), lanes), it.lanes), (it.repeats, it.lanes))
    keep = it.active() & bits
    n = int(keep.sum())
    d0, d1 = dst.span(core, op, n, hint="dst receives every kept element, packed")
    for a in reads:
        if n and a.start < d1 and d0 < a.stop and not (a.start == d0 and src0.addr == dst.addr):
            raise core.error(op, f"the destination {dst.name} (UB [{d0}, {d1})) partially overlaps a source (UB "
                                 f"[{a.start}, {a.stop})) (通用说明和约束.md, 通用地址重叠约束); use separate buffers",
                             tensor=dst.name, kind="partial-overlap")
    write(core, mode=MaskMode.NORMAL, high=0, low=int(mask))  # GatherMaskImpl: set_vector_mask(0, mask), SetMaskNorm
    core.gather_mask_remain = n
    grid, pattern, builtin, width = s.grid, src1_pattern, (None if user else bits), it.lanes

    # a closure, not an Effect: which lanes it keeps, and so where each lands, depends on the pattern's bits in UB
    def effect():
        now = builtin if builtin is not None else _pattern_bits(pattern, it.repeats, width, src1_rep)
        picked = grid[it.active() & now] if grid is not None else np.zeros(0, np.int64)
        values = src0.array(src0.length)[picked]  # gathered before the store: dst may be src0
        dst.array(values.size)[:] = values

    core.record(op, Pipe.V, reads=tuple(reads), writes=(dst.access(d0, d1),) if n else (), count=it.elements,
                nbytes=n * size, dtype=dst.dtype.name, effect=effect, repeats=it.repeats, cost=SPEC.cpp)
    return typed(n, dtypes.uint64)


@export
def get_gather_mask_remain_count():
    """The element count the core's last gather_mask kept (GetGatherMaskRemainCount.md), a uint64 scalar;
    a register read on PIPE_S.

    Raises:
        KernelError: no gather_mask ran on this core yet (the register holds nothing defined).
    """
    op = "get_gather_mask_remain_count"
    core = current(op)
    n = core.gather_mask_remain
    if n is None:
        raise core.error(op, "no gather_mask has run on this core yet, so the count register is undefined; call "
                             "asc.gather_mask first (or use its return value)")
    core.record(op, Pipe.S)
    return typed(n, dtypes.uint64)
