"""Data movement between GM and UB: ``data_copy`` and ``data_copy_pad``.

Rules:
- ``DataCopy(dst, src, count)``: destination first; the UB address is 32 B aligned; ``count *
  sizeof(T)`` must be a multiple of 32 B. On the NPU a non-multiple is silently rounded down; the
  CPU debug build asserts (AD-API DataCopy（GM与UB连续数据搬运）.md; AD
  ``kernel_operator_data_copy_intf_impl.h``). GM -> UB runs on MTE2, UB -> GM on MTE3, UB -> UB
  on V.
- ``DataCopyPad`` (AD-API DataCopyPad（GMToUB非对齐数据搬运）.md, （UBToGM…）.md; CCE intrinsic
  ``copy_gm_to_ubuf_align``): ``block_count`` blocks of ``block_len`` bytes. GM -> UB: each block
  lands at a 32 B boundary as ``left_padding`` elements, the data, ``right_padding`` elements and
  dummy bytes up to the next 32 B; ``src_stride`` is a GM gap in bytes, ``dst_stride`` a UB gap in
  32 B blocks. Pad and dummy bytes hold ``padding_value`` when ``is_pad``; otherwise they are
  undefined on the NPU (a copy of each block's first element) and poisoned here. UB -> GM:
  ``src_stride`` in 32 B blocks, ``dst_stride`` in bytes, exactly ``block_len`` bytes written per
  block. Not available on arch 2002 (310P). Its DataCopyParams form (``DataCopyPadParams``) is the
  same copy with uint16_t fields and the pad value given as a bit pattern.
- ``DataCopy`` with ``SliceInfo`` (AD-API DataCopy（GM与UB切片数据搬运）.md): a multi-dimensional slice,
  copied as bursts of whole 32 B DataBlocks; see ``_data_copy_slice``.
- Count 0: a copy that moves no bytes touches no memory, so its operands' bounds and UB alignment
  are not checked (its types, direction and parameters are). DataCopyPad states it: blockCount or
  blockLen 0 is a NOP on A2/A3 (AD-API DataCopyPad 约束说明, "该接口将被视为NOP"). DataCopy's page
  gives no special case: count * sizeof(T) = 0 B is a 32 B multiple and moves nothing, and a count
  the NPU rounds down to 0 B moves nothing either, so the same rule applies.
"""

from __future__ import annotations

import enum

import numpy as np

from fusekit.machine import (BLOCKS, COUNT, FIXPIPE, HANDLERS, LOAD2D, ND2NZ, PAD, POISON, SLICE, DataPath, copy_handler,
                             path_between, space_named)

from . import atomic, corestate, dtypes
from .effect import Effect, Operand, copy
from .runtime import KernelError, current
from .tensor import GlobalTensor, LocalTensor, check_ub_aligned
from .trace import Pipe

BLOCK = 32  # bytes: the UB data block and DataCopy granularity
MAX_BLOCK_COUNT = 4095
MAX_BLOCK_LEN = 2097151  # bytes (21-bit field)


class DataCopyExtParams:
    """``DataCopyExtParams{blockCount, blockLen (bytes), srcStride, dstStride, rsv}``."""

    __slots__ = ("block_count", "block_len", "src_stride", "dst_stride", "rsv")

    def __init__(self, block_count: int = 0, block_len: int = 0, src_stride: int = 0, dst_stride: int = 0, rsv: int = 0):
        # plain ints: the fields are unsigned C fields, and byte arithmetic on them must not be
        # checked as a kernel's int32 scalar arithmetic (fusekit.asc.scalar)
        self.block_count, self.block_len = _field(block_count), _field(block_len)
        self.src_stride, self.dst_stride, self.rsv = _field(src_stride), _field(dst_stride), _field(rsv)


class DataCopyPadExtParams:
    """``DataCopyPadExtParams<T>{isPad, leftPadding, rightPadding (elements, each <= 32 B), paddingValue}``."""

    __slots__ = ("dtype", "is_pad", "left_padding", "right_padding", "padding_value")

    def __init__(self, dtype=None, is_pad: bool = False, left_padding: int = 0, right_padding: int = 0,
                 padding_value=0):
        self.dtype, self.is_pad = dtype, is_pad
        self.left_padding, self.right_padding = _field(left_padding), _field(right_padding)
        self.padding_value = padding_value


MAX_BLOCK_LEN_BLOCKS = 65535  # DataCopyParams.blockLen / srcGap / dstGap: uint16, in 32 B blocks


class DataCopyParams:
    """``DataCopyParams{blockCount, blockLen, srcGap, dstGap}`` (pyasc: block_count=1, block_len,
    src_stride, dst_stride): ``block_count`` blocks of ``block_len`` 32 B DataBlocks, the strides
    the gap in 32 B DataBlocks between one block's end and the next one's start, on both the GM
    and the UB side (AD-API DataCopy（GM与UB高维切分数据搬运）.md 表3)."""

    __slots__ = ("block_count", "block_len", "src_stride", "dst_stride")

    def __init__(self, block_count: int = 1, block_len: int = 0, src_stride: int = 0, dst_stride: int = 0):
        self.block_count, self.block_len = _field(block_count), _field(block_len)
        self.src_stride, self.dst_stride = _field(src_stride), _field(dst_stride)


class BlockMode(enum.IntEnum):
    """pyasc ``asc.BlockMode`` (core/enums.py)."""

    BLOCK_MODE_NORMAL = 0
    BLOCK_MODE_MATRIX = 1
    BLOCK_MODE_VECTOR = 2
    BLOCK_MODE_SMALL_CHANNEL = 3
    BLOCK_MODE_DEPTHWISE = 4


class DeqScale(enum.IntEnum):
    """pyasc ``asc.DeqScale`` (core/enums.py)."""

    DEQ_NONE = 0
    DEQ = 1
    VDEQ = 2
    DEQ8 = 3
    VDEQ8 = 4
    DEQ16 = 5
    VDEQ16 = 6


class pad_t(enum.IntEnum):  # noqa: N801 - pyasc's spelling
    """pyasc ``asc.pad_t`` (core/enums.py)."""

    PAD_NONE = 0
    PAD_MODE1 = 1
    PAD_MODE2 = 2
    PAD_MODE3 = 3
    PAD_MODE4 = 4
    PAD_MODE5 = 5
    PAD_MODE6 = 6
    PAD_MODE7 = 7
    PAD_MODE8 = 8


class DataCopyEnhancedParams:
    """pyasc ``DataCopyEnhancedParams(block_mode, deq_scale, deq_value_in, sid_store_mode_in, is_relu_in,
    pad_mode_in, pad_value_in)``. Between GM and UB only the defaults mean anything here (normal
    block mode, no dequantisation, no ReLU, no padding): the other settings drive the cube-side
    paths (L0C / CO1 / CO2), which fusekit does not simulate, so they are refused."""

    __slots__ = ("block_mode", "deq_scale", "deq_value_in", "sid_store_mode_in", "is_relu_in", "pad_mode_in",
                 "pad_value_in")

    def __init__(self, block_mode=BlockMode.BLOCK_MODE_NORMAL, deq_scale=DeqScale.DEQ_NONE, deq_value_in: int = 0,
                 sid_store_mode_in: int = 0, is_relu_in: bool = False, pad_mode_in=pad_t.PAD_NONE,
                 pad_value_in: int = 0):
        self.block_mode, self.deq_scale, self.deq_value_in = block_mode, deq_scale, deq_value_in
        self.sid_store_mode_in, self.is_relu_in = sid_store_mode_in, is_relu_in
        self.pad_mode_in, self.pad_value_in = pad_mode_in, pad_value_in

    def unsupported(self) -> list[str]:
        """The settings that are not the GM <-> UB defaults."""
        defaults = DataCopyEnhancedParams()
        return [f"{k}={getattr(self, k)!r}" for k in self.__slots__
                if k not in ("deq_value_in", "sid_store_mode_in", "pad_value_in") and getattr(self, k) != getattr(defaults, k)]


def _data_copy_blocks(dst, src, p: DataCopyParams, enhanced: "DataCopyEnhancedParams | None") -> None:
    """The DataCopyParams form (AD-API DataCopy（GM与UB高维切分数据搬运）.md, （UBToUB高维切分数据搬运）.md).

    Block b reads ``block_len * 32`` bytes starting ``b * (block_len + src_stride) * 32`` bytes
    after ``src``'s start and writes them ``b * (block_len + dst_stride) * 32`` bytes after
    ``dst``'s start. blockCount or blockLen 0 is a NOP (约束说明): recorded, nothing checked.
    A UB -> GM copy accumulates under store atomics (``fusekit.asc.atomic``).
    """
    core, op = current("data_copy"), "data_copy"
    path = _path(core, op, dst, src, BLOCKS)
    _takes(core, op, path, BLOCKS, dst, src)
    pipe = path.pipe
    _same_dtype(core, op, dst, src)
    for name, value, top in (("block_count", p.block_count, MAX_BLOCK_COUNT), ("block_len", p.block_len,
                             MAX_BLOCK_LEN_BLOCKS), ("src_stride", p.src_stride, MAX_BLOCK_LEN_BLOCKS),
                             ("dst_stride", p.dst_stride, MAX_BLOCK_LEN_BLOCKS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise core.error(op, f"DataCopyParams.{name}={value!r} outside [0, {top}] (DataCopy（GM与UB高维切分数据搬运）"
                                 ".md 表4; block_len and the strides count 32 B DataBlocks)")
    bad = enhanced.unsupported() if enhanced is not None else []
    if bad:
        raise core.error(op, f"DataCopyEnhancedParams({', '.join(bad)}) configures the cube-side copy paths (L0C, "
                             "CO1/CO2), which fusekit does not simulate; between GM and UB pass the defaults or "
                             "use the DataCopyParams form", kind="unsupported")
    if p.block_count == 0 or p.block_len == 0:
        core.record(op, pipe, dtype=dst.dtype.name)
        return
    for t in (dst, src):
        if isinstance(t, LocalTensor):
            check_ub_aligned(core, op, t)
    size = dst.dtype.sizeof()
    n = p.block_len * BLOCK // size  # elements per block
    if BLOCK % size:
        raise core.error(op, f"{dst.dtype.name} does not divide a 32 B DataBlock", kind="unsupported")
    s_step, d_step = (p.block_len + p.src_stride) * BLOCK // size, (p.block_len + p.dst_stride) * BLOCK // size
    hint = "; block_len and the strides count 32 B DataBlocks, not elements or bytes"
    mode = atomic.store_mode(core, op, dst) if path.store_atomics else None
    copies = []
    for b in range(p.block_count):
        d0, d1 = dst.span(core, op, n, first=b * d_step, hint=hint)
        s0, s1 = src.span(core, op, n, first=b * s_step, hint=hint)
        copies.append((d0, d1, s0, s1))
    effect = _move(dst, src, [b * d_step for b in range(p.block_count)], [b * s_step for b in range(p.block_count)], n,
                   mode, copies)
    reads = tuple(src.access(a, z) for a, z in _merge([(c[2], c[3]) for c in copies]))
    writes = tuple(atomic.mark(dst.access(a, z), mode) for a, z in _merge([(c[0], c[1]) for c in copies]))
    core.record(op, pipe, reads=reads + atomic.gm_reads(writes), writes=writes, count=p.block_count * n,
                nbytes=p.block_count * n * size, dtype=dst.dtype.name, effect=effect)


def _move(dst, src, d_first: list[int], s_first: list[int], n: int, mode, copies: list) -> Effect:
    """The Effect of a copy in blocks of ``n`` elements: block k from element ``s_first[k]`` of ``src`` to element
    ``d_first[k]`` of ``dst`` (from each tensor's first element), each destination lane taking its source lane's bits,
    or combined with GM under the store atomics ``mode`` (None: off). ``copies``: the blocks' byte ranges
    ``(d0, d1, s0, s1)``, for the order rule below.

    The tensors are taken as they are now: a copy an executor holds back lands where it was issued to, even if the
    kernel moves or resizes the tensor in between (``set_addr_with_offset``, ``set_global_buffer``, ``set_size``)."""
    dst, src = as_issued(dst), as_issued(src)
    combine = atomic.combiner(mode)
    compute, reads_dst = (copy, False) if combine is None else (combine, True)
    if d_first == [0] and s_first == [0]:  # one block from the start of both: the count form
        return Effect(None, Operand(dst, n), {"src": Operand(src, n)}, compute, (), reads_dst)
    lane = np.arange(n)
    d_index = (np.asarray(d_first, np.int64)[:, None] + lane).reshape(-1)
    s_index = (np.asarray(s_first, np.int64)[:, None] + lane).reshape(-1)
    # the DMA moves the blocks one after another: where a later block reads what an earlier one wrote (UB -> UB in one
    # arena), they run in order; the destination blocks never overlap (their strides are >= 0)
    shared = dst.space is src.space and not dst.space.is_global and \
        min(c[0] for c in copies) < max(c[3] for c in copies) and min(c[2] for c in copies) < max(c[1] for c in copies)
    return Effect(None, Operand(dst, d_index), {"src": Operand(src, s_index)}, compute, (), reads_dst,
                  (n,) * len(d_first) if shared else ())


def as_issued(t):
    """A copy of tensor ``t`` as it is now (the same memory, address, length and dtype), for a held-back effect."""
    if isinstance(t, LocalTensor):
        return LocalTensor.at(t.core, t.addr, t.length, t.dtype, t.name, t.owner, t.space)
    return t[0]


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges in order, touching ones joined (a copy with zero gaps is one Access)."""
    out: list[list[int]] = []
    for a, z in ranges:
        if out and a == out[-1][1]:
            out[-1][1] = z
        else:
            out.append([a, z])
    return [(a, z) for a, z in out]


def set_pad_value(padding_value, pos=None) -> None:
    """pyasc ``set_pad_value(padding_value, pos=TPosition.MAX)``: the value DataCopyPad GM -> UB writes
    into pad bytes when ``is_pad`` is False (SetPadValue(ISASI).md: its example pads with isPad=false).
    Converted to the copy's dtype when the copy runs. PIPE_S. A2/A3 only.

    Raises:
        KernelError: on a SoC without SetPadValue, a value that is not a number, or ``pos`` other
            than VECIN / VECOUT / MAX.
    """
    core, op = current("set_pad_value"), "set_pad_value"
    if not core.soc.data_copy_pad:
        raise core.error(op, f"SetPadValue does not exist on {core.soc.name} (SetPadValue(ISASI).md 产品支持情况)",
                         kind="unsupported")
    if isinstance(padding_value, bool) or not isinstance(padding_value, (int, float, np.integer, np.floating)):
        raise core.error(op, f"padding_value must be a number, got {padding_value!r}")
    if pos is not None and getattr(pos, "name", "") not in ("VECIN", "VECOUT", "MAX"):
        raise core.error(op, f"pos must be TPosition.VECIN, VECOUT or MAX (GM -> VECIN / VECOUT), got {pos!r}")
    corestate.write(core, "pad_value", padding_value)
    core.record(op, Pipe.S)


class InitConstValueParams:
    """pyasc ``InitConstValueParams(repeat_times, block_num, dst_gap, init_value)`` of ``init_const_value`` (Fill.md
    表3; the fill itself is the cube's: ``fusekit.asc.cube.copy_in``)."""

    __slots__ = ("repeat_times", "block_num", "dst_gap", "init_value")

    def __init__(self, repeat_times: int = 0, block_num: int = 0, dst_gap: int = 0, init_value=0):
        self.repeat_times, self.block_num, self.dst_gap = _field(repeat_times), _field(block_num), _field(dst_gap)
        self.init_value = init_value


def data_copy(dst, src, *args, **kwargs) -> None:
    """pyasc ``data_copy``: ``(dst, src, count)``, ``(dst, src, repeat_params: DataCopyParams)``,
    ``(dst, src, intri_params: DataCopyParams, enhanced_params: DataCopyEnhancedParams)`` or
    ``(dst, src, slice_list1: list[SliceInfo], slice_list2: list[SliceInfo], dim_value=1)``
    (:func:`_data_copy_slice`).

    Raises:
        KernelError: arguments that fit none of these forms (the cube-side forms, Nd2Nz / Nz2Nd /
            CO12 parameters are not simulated), or the form's own errors.
    """
    if (args and isinstance(args[0], (list, tuple))) or "slice_list1" in kwargs:
        return _data_copy_slice(dst, src, args, kwargs)
    handler = _handler(dst, src, args)
    if handler is not None:  # a path whose copy reorders or converts (the cube's: fusekit.asc.cube)
        return handler(dst, src, *args, **kwargs)
    names = ("count",) if args and not isinstance(args[0], DataCopyParams) else ("repeat_params", "enhanced_params")
    named = {("repeat_params" if k == "intri_params" else k): v for k, v in kwargs.items()}
    values = dict(zip(names, args))
    fits = (len(args) <= len(names) and not set(named) & set(values)
            and set(named) <= {"count", "repeat_params", "enhanced_params"})
    values.update(named)
    if not fits:
        values = {}
    if set(values) == {"count"}:
        return _data_copy_count(dst, src, values["count"])
    if "repeat_params" in values and set(values) <= {"repeat_params", "enhanced_params"} and \
            isinstance(values["repeat_params"], DataCopyParams) and \
            isinstance(values.get("enhanced_params", DataCopyEnhancedParams()), DataCopyEnhancedParams):
        return _data_copy_blocks(dst, src, values["repeat_params"], values.get("enhanced_params"))
    core = current("data_copy")
    given = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    raise core.error("data_copy", f"data_copy(dst, src, {given}) fits none of the forms fusekit simulates: (dst, src, "
                                  "count: int), (dst, src, repeat_params: asc.DataCopyParams), (dst, src, intri_params: "
                                  "asc.DataCopyParams, enhanced_params: asc.DataCopyEnhancedParams), (dst, src, slice_list1, "
                                  "slice_list2, dim_value). pyasc also has the "
                                  "Nd2NzParams, Nz2NdParamsFull and DataCopyCO12DstParams forms (cube side); "
                                  "fusekit does not simulate them yet")


# parameter struct -> the copy form it selects, for forms a path's handler runs (fusekit.asc.cube registers
# Nd2NzParams -> ND2NZ)
PARAM_FORMS: dict[type, str] = {DataCopyParams: BLOCKS}


def _handler(dst, src, args: tuple):
    """The handler registered for this copy's path and form (``fusekit.machine.copy_handler``), or None for the byte
    copies of this module.

    Raises:
        KernelError: a struct whose form the tensors' path does not take (Nd2NzParams between UB and GM).
    """
    form = PARAM_FORMS.get(type(args[0]), COUNT) if args else COUNT
    key = (getattr(src, "space", None), getattr(dst, "space", None), form)
    handler = HANDLERS.get(key)
    if handler is None and form not in (COUNT, BLOCKS):
        core = current("data_copy")
        path = _path(core, "data_copy", dst, src, form)
        _takes(core, "data_copy", path, form, dst, src)
    return handler


def _data_copy_count(dst, src, count: int) -> None:
    """Copy ``count`` elements from ``src`` to ``dst`` (GM->UB, UB->GM or UB->UB).

    A count of 0 (or one rounded down to 0 B) is a no-op: it is recorded, but neither tensor's
    bounds or alignment are checked, since no byte moves (module doc, "Count 0").

    Raises:
        KernelError: ``count * sizeof`` not a multiple of 32 B (unless the launch has strict=False,
            which rounds down as the NPU does), unaligned UB address, dtype mismatch, or an access
            outside either tensor.
    """
    core, op = current("data_copy"), "data_copy"
    path = _path(core, op, dst, src, COUNT)
    _takes(core, op, path, COUNT, dst, src)
    pipe = path.pipe
    _same_dtype(core, op, dst, src)
    count = _count(core, op, count)
    size = dst.dtype.sizeof()
    if count * size % BLOCK:
        aligned = count * size // BLOCK * BLOCK // size
        if core.strict:
            gm = src if isinstance(src, GlobalTensor) else dst
            raise core.error(op, f"count * sizeof({dst.dtype.name}) = {count} * {size} = {count * size} B is not a "
                                 f"multiple of 32 B ({src.name} -> {dst.name}). The NPU would silently round it down to "
                                 f"{aligned} elements and leave the rest uncopied; copy an unaligned tail with "
                                 f"data_copy_pad, or launch with strict=False (fusekit check --no-strict) to reproduce the "
                                 "round-down",
                             **gm.describe(count), kind="unaligned-length")
        count = aligned
    if count == 0:
        core.record(op, pipe, dtype=dst.dtype.name)
        return
    for t in (dst, src):
        if isinstance(t, LocalTensor):
            check_ub_aligned(core, op, t)
    if core.collecting and _clipped(core, op, pipe, dst, src, count):
        return
    d0, d1 = dst.span(core, op, count)
    s0, s1 = src.span(core, op, count)
    mode = atomic.store_mode(core, op, dst) if path.store_atomics else None  # UB -> GM may accumulate
    writes = (atomic.mark(dst.access(d0, d1), mode),)
    core.record(op, pipe, reads=(src.access(s0, s1),) + atomic.gm_reads(writes), writes=writes, count=count,
                nbytes=d1 - d0, dtype=dst.dtype.name, effect=_move(dst, src, [0], [0], count, mode, [(d0, d1, s0, s1)]))


def _clipped(core, op: str, pipe: Pipe, dst, src, count: int) -> bool:
    """Under the sanitizer, a copy that leaves either tensor: collect the fault(s) and copy what lies
    inside both; the destination elements whose source lies outside get garbage (poison), as on the
    NPU the transfer reads whatever memory is there; destination elements outside are not written.
    Returns False when the copy is in bounds (the caller copies as usual)."""
    faulty = False
    for t in (dst, src):
        try:
            t.span(core, op, count)
        except KernelError as exc:
            core.fault(exc)  # raises unless it is an access fault the sanitizer collects
            faulty = True
    if not faulty:
        return False
    size = dst.dtype.sizeof()
    d_lo, d_hi = _inside(core, dst, count)
    s_lo, s_hi = _inside(core, src, count)
    if d_lo >= d_hi:
        return True  # nothing of the destination is inside: the copy is skipped
    lo, hi = max(d_lo, s_lo), min(d_hi, s_hi)
    to, frm = _memory(core, dst), _memory(core, src)
    d_at, s_at = _byte(dst, 0), _byte(src, 0)
    reads = (src.access(s_at + lo * size, s_at + hi * size),) if lo < hi else ()

    # a closure, not an Effect: the destination elements whose source lies outside get poison, not a source lane
    def effect():
        to[d_at + d_lo * size:d_at + d_hi * size] = POISON
        if lo < hi:
            to[d_at + lo * size:d_at + hi * size] = frm[s_at + lo * size:s_at + hi * size]

    core.record(op, pipe, reads=reads, writes=(dst.access(d_at + d_lo * size, d_at + d_hi * size),),
                count=d_hi - d_lo, nbytes=(d_hi - d_lo) * size, dtype=dst.dtype.name, effect=effect)
    return True


def _inside(core, t, count: int) -> tuple[int, int]:
    """Elements ``[lo, hi)`` of ``[0, count)`` from ``t``'s start that lie inside ``t`` (its view and buffer)."""
    if isinstance(t, LocalTensor):
        return (0, min(count, max(t.length, 0))) if t.core is core else (0, 0)
    first, last = max(t.base, 0), min(t.base + t.size, t.gm.length)
    lo, hi = max(first - t.offset, 0), min(last - t.offset, count)
    return (lo, hi) if lo < hi else (0, 0)


def _byte(t, k: int) -> int:
    """Byte address of element ``k`` from ``t``'s start (UB address or GM buffer offset)."""
    return (t.addr if isinstance(t, LocalTensor) else t.offset * t.dtype.sizeof()) + k * t.dtype.sizeof()


def data_copy_pad(dst, src, data_copy_params: DataCopyExtParams, pad_params: DataCopyPadExtParams | None = None) -> None:
    """Copy ``block_count`` blocks of ``block_len`` bytes with 32 B padding in UB (see module doc).
    ``data_copy_params`` may also be an ``asc.DataCopyParams`` (uint16_t fields, block_len in bytes) with
    ``pad_params`` an ``asc.DataCopyPadParams`` (pyasc's older form; :func:`_pad_params_from_legacy`).

    ``block_count`` or ``block_len`` 0 is a NOP (AD-API DataCopyPad 约束说明): recorded, with no bounds
    or alignment check. An access outside a tensor names the strides' units (``src_stride`` is in
    bytes and ``dst_stride`` in 32 B blocks for GM -> UB; the reverse for UB -> GM).

    Raises:
        KernelError: unsupported SoC, parameters out of range, unaligned UB address, or an access
            outside either tensor.
    """
    core, op = current("data_copy_pad"), "data_copy_pad"
    if not core.soc.data_copy_pad:
        raise core.error(op, f"DataCopyPad does not exist on {core.soc.name} (arch {core.soc.arch}); copy whole 32 B "
                             "blocks with data_copy and pad the GM buffers on the host", kind="unsupported")
    path = _path(core, op, dst, src, PAD)
    pipe = path.pipe
    if PAD not in path.forms:
        raise core.error(op, f"{path.src.name} -> {path.dst.name} is not a data_copy_pad path: use data_copy")
    _same_dtype(core, op, dst, src)
    if isinstance(data_copy_params, DataCopyParams):  # the DataCopyParams / DataCopyPadParams form
        data_copy_params, pad_params = _pad_params_from_legacy(core, op, dst, data_copy_params, pad_params)
    p = data_copy_params
    if not isinstance(p, DataCopyExtParams):
        raise core.error(op, f"third argument must be asc.DataCopyExtParams or asc.DataCopyParams, got {type(p).__name__}")
    size = dst.dtype.sizeof()
    if not 0 <= p.block_count <= MAX_BLOCK_COUNT:
        raise core.error(op, f"block_count={p.block_count} outside [0, {MAX_BLOCK_COUNT}]")
    if not 0 <= p.block_len <= MAX_BLOCK_LEN or p.block_len % size:
        raise core.error(op, f"block_len={p.block_len} must be a byte count in [0, {MAX_BLOCK_LEN}] and a multiple of "
                             f"sizeof({dst.dtype.name}) = {size} (block_len is in BYTES, not elements)")
    if min(p.src_stride, p.dst_stride) < 0:
        raise core.error(op, "strides must be >= 0")
    gm_stride = p.src_stride if path.src.is_global else p.dst_stride
    if gm_stride % size:
        name = "src_stride" if path.src.is_global else "dst_stride"
        raise core.error(op, f"the GM stride of {gm_stride} bytes puts blocks at GM addresses not aligned to "
                             f"sizeof({dst.dtype.name}) = {size}: GM addresses must be element-aligned. The unit of "
                             f"{name} is the byte on the GM side: {name} is counted in BYTES on the GM side; if you "
                             f"meant {gm_stride} blocks of 32 B, pass {name}={gm_stride * BLOCK}", kind="misaligned")
    if p.block_count == 0 or p.block_len == 0:
        core.record(op, pipe, dtype=dst.dtype.name)
        return
    HANDLERS[(path.src, path.dst, PAD)](core, op, dst, src, p, pad_params)


# DataCopyPad's two pages are one path each, named by their spaces: DataCopyPad（GMToUB非对齐数据搬运）.md, （UBToGM…）.md
@copy_handler(space_named("GM"), space_named("UB"), PAD)
def _pad_in(core, op: str, dst: LocalTensor, src: GlobalTensor, p: DataCopyExtParams,
            pad: "DataCopyPadExtParams | None") -> None:
    """GM -> UB: each block lands at a 32 B boundary between its pads (module doc)."""
    pad = pad or DataCopyPadExtParams()
    size = dst.dtype.sizeof()
    if not isinstance(pad, DataCopyPadExtParams):
        raise core.error(op, f"fourth argument must be asc.DataCopyPadExtParams, got {type(pad).__name__}")
    left, right = pad.left_padding * size, pad.right_padding * size
    if not (0 <= left <= BLOCK and 0 <= right <= BLOCK):
        raise core.error(op, f"left_padding={pad.left_padding} / right_padding={pad.right_padding} elements: each pad "
                             "must be at most 32 B")
    check_ub_aligned(core, op, dst)
    footprint = -(-(left + p.block_len + right) // BLOCK) * BLOCK
    ub_step = footprint + p.dst_stride * BLOCK
    gm_step = p.block_len + p.src_stride
    last_elem = ((p.block_count - 1) * ub_step + footprint) // size
    hint = _ub_stride_hint("dst_stride", p.dst_stride, p, footprint, footprint, size, dst.length)
    u0, _ = dst.span(core, op, last_elem, hint=hint)  # bounds of the whole UB footprint
    if not pad.is_pad and footprint > p.block_len:  # pad bytes with set_pad_value's value
        corestate.read(core, "pad_value", op)
    value = pad.padding_value if pad.is_pad else core.pad_value  # set_pad_value's, for is_pad=False
    fill = None if value is None else np.frombuffer(dtypes.to_scalar(value, dst.dtype).tobytes(), np.uint8)
    reads, writes, undefined = [], [], []
    g_first = _gm_blocks(core, op, src, p.block_count, p.block_len // size, gm_step // size,
                         _gm_stride_hint("src_stride", p.src_stride))
    pads = [(left_at, z - left_at) for left_at, z in ((0, left), (left + p.block_len, footprint)) if left_at < z]
    for b in range(p.block_count):
        g0, ub0 = g_first + b * gm_step, u0 + b * ub_step
        reads.append(src.access(g0, g0 + p.block_len))
        writes.append(dst.access(ub0 + left, ub0 + left + p.block_len))
        for at, n in pads:
            (undefined if fill is None else writes).append(dst.access(ub0 + at, ub0 + at + n))

    to, frm = _memory(core, dst), _memory(core, src)

    # a closure, not an Effect: besides the copied lanes it writes the pad bytes, a fill value or poison; every
    # block at once, as strided views of the bytes
    def effect():
        _byte_runs(to, u0 + left, ub_step, p.block_count, p.block_len)[...] = \
            _byte_runs(frm, g_first, gm_step, p.block_count, p.block_len)
        for at, n in pads:
            _byte_runs(to, u0 + at, ub_step, p.block_count, n)[...] = POISON if fill is None else np.resize(fill, n)

    core.record(op, Pipe.MTE2, reads=tuple(reads), writes=tuple(writes), undefined=tuple(undefined),
                count=p.block_count * p.block_len // size, nbytes=p.block_count * p.block_len, dtype=dst.dtype.name,
                effect=effect)


@copy_handler(space_named("UB"), space_named("GM"), PAD)
def _pad_out(core, op: str, dst: GlobalTensor, src: LocalTensor, p: DataCopyExtParams, pad=None) -> None:
    """UB -> GM: exactly ``block_len`` bytes per block, under the store atomics; ``pad`` is accepted and unused
    (nothing is padded on the way out, module doc)."""
    size = src.dtype.sizeof()
    check_ub_aligned(core, op, src)
    ub_step = -(-p.block_len // BLOCK) * BLOCK + p.src_stride * BLOCK
    gm_step = p.block_len + p.dst_stride
    copies, reads, writes = [], [], []
    ub_hint = _ub_stride_hint("src_stride", p.src_stride, p, ub_step - p.src_stride * BLOCK, p.block_len, size,
                              src.length)
    gm_hint = _gm_stride_hint("dst_stride", p.dst_stride)
    mode = atomic.store_mode(core, op, dst)
    for b in range(p.block_count):
        u0, u1 = src.span(core, op, p.block_len // size, first=b * ub_step // size, hint=ub_hint)
        g0, g1 = dst.span(core, op, p.block_len // size, first=b * gm_step // size, hint=gm_hint)
        copies.append((g0, g1, u0, u1))
        reads.append(src.access(u0, u1))
        writes.append(atomic.mark(dst.access(g0, g1), mode))
    effect = _move(dst, src, [b * gm_step // size for b in range(p.block_count)],
                   [b * ub_step // size for b in range(p.block_count)], p.block_len // size, mode, copies)
    core.record(op, Pipe.MTE3, reads=tuple(reads) + atomic.gm_reads(writes), writes=tuple(writes),
                count=p.block_count * p.block_len // size,
                nbytes=p.block_count * p.block_len, dtype=src.dtype.name, effect=effect)


def _path(core, op: str, dst, src, form: str) -> DataPath:
    """The data path from ``src``'s memory space to ``dst``'s (``fusekit.machine.paths``): its pipe and rules.

    Raises:
        KernelError: an argument is not a tensor, or the machine has no path between the spaces (GM -> GM).
    """
    path = path_between(getattr(src, "space", None), getattr(dst, "space", None))
    if path is not None:
        return path
    if isinstance(dst, (LocalTensor, GlobalTensor)) and isinstance(src, (LocalTensor, GlobalTensor)) and \
            not (dst.space.is_global and src.space.is_global):
        raise core.error(op, f"there is no data path {src.space.name} -> {dst.space.name} for {form} copies")
    raise core.error(op, f"cannot copy {type(src).__name__} -> {type(dst).__name__}: the destination comes first and "
                         "one side must be a LocalTensor (GM -> GM has no data path)")


def _takes(core, op: str, path: DataPath, form: str, dst, src) -> None:
    """Refuse a copy form the path does not take (L1 -> L0A is load_data's, L0C -> GM fixpipe's).

    Raises:
        KernelError: ``form`` is not one of ``path.forms``; the message names what the path takes.
    """
    if form in path.forms:
        return
    takes = {LOAD2D: "load_data", FIXPIPE: "fixpipe", ND2NZ: "data_copy with asc.Nd2NzParams", COUNT: "data_copy(dst, "
             "src, count)", BLOCKS: "data_copy with asc.DataCopyParams", PAD: "data_copy_pad", SLICE: "the slice form"}
    forms = sorted(takes[f] for f in path.forms)
    raise core.error(op, f"the path {path.src.name} -> {path.dst.name} ({src.name} -> {dst.name}) takes "
                         f"{', '.join(forms)}, not {takes[form]} ({path.source})")


def _same_dtype(core, op: str, dst, src) -> None:
    if dst.dtype is not src.dtype:
        raise core.error(op, f"dtype mismatch: dst {dst.name} is {dst.dtype.name}, src {src.name} is {src.dtype.name}; "
                             "copies move bytes of one type, convert with asc.cast in UB", tensor=dst.name)


def _count(core, op: str, count) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise core.error(op, f"count must be a non-negative element count, got {count!r}")
    return int(count)


def _ub_stride_hint(name: str, stride: int, p: DataCopyExtParams, block_step: int, last: int, size: int,
                    length: int) -> str:
    """Advice for a UB-side access past the tensor: the UB stride counts 32 B blocks, not bytes.

    ``block_step``: UB bytes from one block's start to the next without the stride; ``last``: bytes
    the last block occupies. If the stride read as bytes (rounded up to blocks) would fit, say so.
    """
    advice = "lower block_count or block_len, or allocate a larger buffer"
    if stride == 0:
        return advice
    as_bytes = -(-stride // BLOCK)
    fits = ((p.block_count - 1) * (block_step + as_bytes * BLOCK) + last) // size <= length
    meant = (f"; if you meant {stride} bytes, pass {name}={as_bytes}" if fits and stride >= BLOCK else "")
    return (f"{name}={stride} is counted in 32-byte BLOCKS on the UB side ({stride * BLOCK} B between blocks), "
            f"not bytes (check the stride's unit){meant}; otherwise {advice}")


def _gm_stride_hint(name: str, stride: int) -> str:
    """Advice for a GM-side access past the view: the GM stride counts bytes."""
    if stride == 0:
        return ""
    return (f"; {name}={stride} is counted in BYTES on the GM side (the gap between one block's end and the next "
            f"one's start), not in 32 B blocks: check the stride's unit")


def _field(value) -> int:
    return int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value


def _gm_blocks(core, op: str, tensor: GlobalTensor, count: int, length: int, step: int, hint: str):
    """The GM byte offset of the first of ``count`` blocks of ``length`` elements, ``step`` elements apart, from
    ``tensor``'s first element, after checking that every block lies inside the tensor's view (the blocks go up
    in address, so the first and the last bound them; on a fault, the first faulting block is named).

    Raises:
        KernelError (out-of-bounds): a block outside the view.
    """
    last = (count - 1) * step
    try:
        tensor.span(core, op, length, first=last, hint=hint)
    except KernelError:
        for b in range(count):
            tensor.span(core, op, length, first=b * step, hint=hint)
        raise
    return tensor.span(core, op, length, hint=hint)[0]


def _byte_runs(memory, start, step: int, count: int, length: int) -> np.ndarray:
    """``count`` runs of ``length`` bytes, ``step`` bytes apart from byte ``start`` of ``memory`` (an arena or a GM
    buffer, or a lockstep group's per-core view of one: leading axes kept), as one (..., count, length) view."""
    whole = memory[start:start + (count - 1) * step + length]
    return np.lib.stride_tricks.as_strided(whole, whole.shape[:-1] + (count, length),
                                           whole.strides[:-1] + (step * whole.strides[-1], whole.strides[-1]),
                                           writeable=True)


def _memory(core, tensor) -> np.ndarray:
    """The bytes ``tensor`` lies in: its GM buffer, or the arena of its local space on ``core``."""
    return tensor.gm.data if tensor.space.is_global else core.arenas[tensor.space]


# ---- data_copy_pad's DataCopyParams form (DataCopyPadParams) -------------------------------------

MAX_U16 = 65535  # DataCopyParams fields are uint16_t (AD kernel_struct_data_copy.h)


class DataCopyPadParams:
    """pyasc ``DataCopyPadParams(is_pad=False, left_padding=0, right_padding=0, padding_value=0)``: the pad
    parameters of data_copy_pad's DataCopyParams form (AD ``kernel_struct_data_copy.h``: ``bool isPad;
    uint8_t leftPadding, rightPadding`` in elements; ``uint64_t paddingValue``). ``padding_value`` is the
    pad element's bit pattern: Ascend C hands it to the pad register unconverted (AD
    ``dav_c220/kernel_operator_data_copy_impl.h``, ``DataCopyPadGm2UBImpl``: ``set_mov_pad_val(paddingValue)``,
    where the DataCopyPadExtParams form converts ``static_cast<T>`` first), so each pad element takes its
    low ``sizeof(T)`` bytes; pyasc's page (``data_copy_pad``): "DataCopyPadParams 类型：仅支持 uint64_t"."""

    __slots__ = ("is_pad", "left_padding", "right_padding", "padding_value")

    def __init__(self, is_pad: bool = False, left_padding: int = 0, right_padding: int = 0, padding_value: int = 0):
        self.is_pad = is_pad
        self.left_padding, self.right_padding = _field(left_padding), _field(right_padding)
        self.padding_value = _field(padding_value)


def _pad_params_from_legacy(core, op: str, dst, p: DataCopyParams, pad) -> tuple:
    """data_copy_pad's DataCopyParams form as the DataCopyExtParams form it is (AD dav_c220
    ``DataCopyPadGm2UBImpl`` / ``DataCopyPadUB2GMImpl`` for DataCopyParams pass blockCount, blockLen
    (BYTES), srcStride and dstStride to the same ``copy_*_align`` instructions): the fields are checked
    against their uint16_t ranges, and the DataCopyPadParams' bit pattern becomes the pad element.

    Raises:
        KernelError: a field outside uint16_t, a pad_params that is not asc.DataCopyPadParams, pad
            params on a UB -> GM copy, left/right padding outside uint8_t, a padding_value outside
            uint64_t, or a non-zero one for a 64-bit dtype (DataCopyPad 约束说明).
    """
    for name in ("block_count", "block_len", "src_stride", "dst_stride"):
        value = getattr(p, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_U16:
            raise core.error(op, f"DataCopyParams.{name}={value!r} outside [0, {MAX_U16}]: the DataCopyParams form of "
                                 "data_copy_pad takes uint16_t fields (block_len in BYTES; strides as in the "
                                 "DataCopyExtParams form); use asc.DataCopyExtParams for larger values")
    ext = DataCopyExtParams(p.block_count, p.block_len, p.src_stride, p.dst_stride)
    if pad is None:
        return ext, None
    if isinstance(dst, GlobalTensor):
        raise core.error(op, "UB -> GM data_copy_pad takes no pad params: call data_copy_pad(dst, src, "
                             "data_copy_params)")
    if not isinstance(pad, DataCopyPadParams):
        raise core.error(op, f"with asc.DataCopyParams the pad params must be asc.DataCopyPadParams, got "
                             f"{type(pad).__name__} (asc.DataCopyPadExtParams goes with asc.DataCopyExtParams)")
    for name in ("left_padding", "right_padding"):
        value = getattr(pad, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
            raise core.error(op, f"DataCopyPadParams.{name}={value!r} must be an element count in [0, 255] "
                                 "(uint8_t), and at most 32 B")
    bits, size = pad.padding_value, dst.dtype.sizeof()
    if isinstance(bits, bool) or not isinstance(bits, int) or not 0 <= bits < 1 << 64:
        raise core.error(op, f"DataCopyPadParams.padding_value={bits!r} must be a uint64_t bit pattern in "
                             "[0, 2**64)")
    if size == 8 and bits:
        raise core.error(op, f"padding_value={bits:#x} with 64-bit {dst.dtype.name}: paddingValue can only be 0 "
                             "for a 64-bit dtype (DataCopyPad（GMToUB非对齐数据搬运）.md 约束说明)")
    value = np.frombuffer(bits.to_bytes(8, "little")[:size], dst.dtype.np)[0]  # the low sizeof(T) bytes
    return ext, DataCopyPadExtParams(dst.dtype, pad.is_pad, pad.left_padding, pad.right_padding,
                                     value.item() if dst.dtype.is_float else int(value))


# ---- data_copy with SliceInfo (AD-API DataCopy（GM与UB切片数据搬运）.md) ---------------------------

MAX_SLICE_DIMS = 8  # "SliceInfo 结构体数组大小和 dimValue 需要保持一致，并且不超过 8"
_SLICE_PAGE = "DataCopy（GM与UB切片数据搬运）.md"


class SliceInfo:
    """pyasc ``SliceInfo(start_index=0, end_index=None, stride=0, burst_len=None, shape_value=0)``: one
    dimension of a slice copy, in elements (``burst_len`` of dimension 0 in 32 B DataBlocks; 1 in the
    others). pyasc's defaults (core/types.py): a missing or 0 ``end_index`` is ONE_BLK_SIZE - 1 = 31, a
    missing or 0 ``burst_len`` is ONE_BLK_SIZE = 32. ``end_index`` is inclusive (表3; the page's formula
    counts ``endIndex - startIndex + 1`` elements)."""

    __slots__ = ("start_index", "end_index", "stride", "burst_len", "shape_value")

    def __init__(self, start_index: int = 0, end_index: int | None = None, stride: int = 0,
                 burst_len: int | None = None, shape_value: int = 0):
        self.start_index, self.stride, self.shape_value = _field(start_index), _field(stride), _field(shape_value)
        self.end_index = _field(end_index) if end_index else BLOCK - 1
        self.burst_len = _field(burst_len) if burst_len else BLOCK


def _data_copy_slice(dst, src, args: tuple, kwargs: dict) -> None:
    """``data_copy(dst, src, slice_list1, slice_list2, dim_value=1)``: GM -> UB (MTE2) or UB -> GM (MTE3)
    of a multi-dimensional slice (AD-API DataCopy（GM与UB切片数据搬运）.md; AD
    ``kernel_operator_data_copy_intf_impl.h`` / ``_base_impl.h``, DataCopyGetOffsetList / PhyStartIndex).

    ``slice_list1`` describes the destination, ``slice_list2`` the source: ``dim_value`` SliceInfo
    each, dimension 0 innermost (a tensor of shape ``shape_value[d-1] x ... x shape_value[0]``, row
    major). Dimension 0 takes N bursts of ``burst_len`` DataBlocks (``burst_len * 32 / sizeof(T)``
    elements) from ``start_index``, ``stride`` elements apart, ending on ``end_index``:
    ``end - start + 1 = (N - 1) * stride + N * burst_len * 32 / sizeof(T)``. Each outer dimension d takes
    indices ``start, start + stride + 1, ...`` up to ``end`` (burst_len 1: one index per slice, as the
    page's example {0, 2, 1, 1, 3} takes rows 0 and 2). Rows are visited with dimension 1 fastest; the
    k-th burst of the source lands on the k-th burst of the destination.

    Raises:
        KernelError: UB -> UB, a dtype the page does not list (64-bit; bfloat16 on 310P), dim_value
            outside [1, 8] or list lengths other than dim_value, start >= end, end >= shape_value
            (one past the dimension), a burst_len other than 1 past dimension 0 or differing between the
            lists, ranges the page's formula does not split into whole slices, a different number of
            bursts on the two sides, a UB burst not 32 B aligned, or an access outside either tensor.
    """
    core, op = current("data_copy"), "data_copy"

    def bind(slice_list1, slice_list2, dim_value=1):
        return slice_list1, slice_list2, dim_value

    try:
        dst_info, src_info, dims = bind(*args, **kwargs)
    except TypeError as exc:
        raise core.error(op, f"data_copy slice form is (dst, src, slice_list1: list[asc.SliceInfo] (dst), "
                             f"slice_list2: list[asc.SliceInfo] (src), dim_value: int = 1): {exc}") from None
    path = _path(core, op, dst, src, SLICE)
    pipe = path.pipe
    if SLICE not in path.forms:
        raise core.error(op, f"the slice form copies GM -> UB (VECIN) or UB (VECOUT) -> GM only ({_SLICE_PAGE} "
                             "功能说明); between UB tensors use the DataCopyParams form")
    _same_dtype(core, op, dst, src)
    size = dst.dtype.sizeof()
    if size > 4 or (dst.dtype.name == "bfloat16" and core.soc.arch == "2002"):
        raise core.error(op, f"{dst.dtype.name} is not a slice-copy dtype on {core.soc.name} ({_SLICE_PAGE} 数据类型: "
                             "int8/uint8/int16/uint16/half/bfloat16 (not on 310P)/int32/uint32/float)",
                         kind="unsupported")
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or not 1 <= dims <= MAX_SLICE_DIMS:
        raise core.error(op, f"dim_value={dims!r} must be in [1, {MAX_SLICE_DIMS}] ({_SLICE_PAGE} 约束说明)")
    dims = int(dims)
    for name, info in (("slice_list1 (dst)", dst_info), ("slice_list2 (src)", src_info)):
        if not isinstance(info, (list, tuple)) or len(info) != dims or \
                not all(isinstance(s, SliceInfo) for s in info):
            raise core.error(op, f"{name} must be a list of dim_value={dims} asc.SliceInfo ({_SLICE_PAGE} 约束说明: "
                                 "the arrays' size equals dimValue)")
    per = BLOCK // size
    d_bursts, d_n = _slice_bursts(core, op, dst_info, per, "slice_list1 (dst)")
    s_bursts, s_n = _slice_bursts(core, op, src_info, per, "slice_list2 (src)")
    for d in range(dims):
        if dst_info[d].burst_len != src_info[d].burst_len:
            raise core.error(op, f"burst_len differs in dimension {d}: dst {dst_info[d].burst_len}, src "
                                 f"{src_info[d].burst_len} ({_SLICE_PAGE} 约束说明: srcSliceInfo[i].burstLen = "
                                 "dstSliceInfo[i].burstLen)")
    if len(d_bursts) != len(s_bursts) or d_n != s_n:
        raise core.error(op, f"the source slice has {len(s_bursts)} bursts ({s_n} per row) and the destination slice "
                             f"{len(d_bursts)} ({d_n} per row): Ascend C copies each source row's bursts to one "
                             "destination row, so both must select the same number of bursts per row and of rows")
    n = src_info[0].burst_len * per  # elements per burst
    ub, ub_bursts = (src, s_bursts) if dst.space.is_global else (dst, d_bursts)  # the local side
    check_ub_aligned(core, op, ub)
    for first in ub_bursts:
        if first * size % BLOCK:
            raise core.error(op, f"a UB burst of {ub.name} starts at element {first} ({first * size} B), not 32 B "
                                 f"aligned ({_SLICE_PAGE} 约束说明: UB addresses must be 32 B aligned); make the UB "
                                 f"side's start_index, stride and shape_value multiples of {per} elements",
                             kind="misaligned", **ub.describe(n, first))
    hint = f"; the slice's indices count elements of a tensor shaped by shape_value ({_SLICE_PAGE})"
    copies = []
    for d_first, s_first in zip(d_bursts, s_bursts):
        d0, d1 = dst.span(core, op, n, first=d_first, hint=hint)
        s0, s1 = src.span(core, op, n, first=s_first, hint=hint)
        copies.append((d0, d1, s0, s1))
    mode = atomic.store_mode(core, op, dst) if path.store_atomics else None
    effect = _move(dst, src, d_bursts, s_bursts, n, mode, copies)  # bursts of distinct rows: no destination overlap
    reads = tuple(src.access(a, z) for a, z in _merge(sorted((c[2], c[3]) for c in copies)))
    writes = tuple(atomic.mark(dst.access(a, z), mode) for a, z in _merge(sorted((c[0], c[1]) for c in copies)))
    total = len(copies) * n
    core.record(op, pipe, reads=reads + atomic.gm_reads(writes), writes=writes, count=total, nbytes=total * size,
                dtype=dst.dtype.name, effect=effect)


def _slice_bursts(core, op: str, info, per: int, side: str) -> tuple[list[int], int]:
    """First element (from the tensor's start) of every burst one side's SliceInfo list selects, in
    the order Ascend C copies them (bursts of dimension 0 innermost, then dimension 1 fastest), and
    the number of bursts per row."""
    for d, s in enumerate(info):
        for name in SliceInfo.__slots__:
            value = getattr(s, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
                raise core.error(op, f"{side}[{d}].{name}={value!r} must be a uint32_t")
        if s.shape_value == 0:
            raise core.error(op, f"{side}[{d}].shape_value=0: Ascend C then takes the shape from the tensor's "
                                 "ShapeInfo, which fusekit does not read here; give every dimension's shape_value",
                             kind="unsupported")
        if not s.start_index < s.end_index < s.shape_value:
            raise core.error(op, f"{side}[{d}]: start_index={s.start_index}, end_index={s.end_index}, shape_value="
                                 f"{s.shape_value}: need start_index < end_index and end_index <= shape_value - 1 "
                                 f"(end_index is inclusive: the page's formula counts endIndex - startIndex + 1 "
                                 f"elements, so end_index = shape_value would take one element past the dimension; "
                                 f"{_SLICE_PAGE} 约束说明)")
        if d and s.burst_len != 1:
            raise core.error(op, f"{side}[{d}].burst_len={s.burst_len}: past dimension 0 burst_len must be 1 "
                                 f"({_SLICE_PAGE} 约束说明)")
    starts = []
    for d, s in enumerate(info):
        unit = s.burst_len * per if d == 0 else 1  # elements one slice takes
        span, step = s.end_index - s.start_index + 1, unit + s.stride
        if (span + s.stride) % step:
            raise core.error(op, f"{side}[{d}]: end_index - start_index + 1 = {span} is not (N - 1) * stride + N * "
                                 f"{'burst_len * 32 / sizeof(T)' if d == 0 else '1'} = (N - 1) * {s.stride} + N * "
                                 f"{unit} for any whole N ({_SLICE_PAGE} 约束说明); adjust end_index or stride")
        starts.append([s.start_index + k * step for k in range((span + s.stride) // step)])
    sizes = [1]
    for s in info[:-1]:
        sizes.append(sizes[-1] * s.shape_value)  # elements per index of each dimension
    rows = [0]
    for d in range(1, len(info)):  # dimension 1 fastest, as DataCopyGetOffsetList builds its list
        rows = [r + i * sizes[d] for i in starts[d] for r in rows]
    return [r + b for r in rows for b in starts[0]], len(starts[0])
