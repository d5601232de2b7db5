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
  block. Not available on arch 2002 (310P).
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .runtime import _POISON, current
from .tensor import GlobalTensor, LocalTensor, check_ub_aligned
from .trace import Pipe

BLOCK = 32  # bytes: the UB data block and DataCopy granularity
MAX_BLOCK_COUNT = 4095
MAX_BLOCK_LEN = 2097151  # bytes (21-bit field)


class DataCopyExtParams:
    """``DataCopyExtParams{blockCount, blockLen (bytes), srcStride, dstStride, rsv}``."""

    __slots__ = ("block_count", "block_len", "src_stride", "dst_stride", "rsv")

    def __init__(self, block_count: int = 0, block_len: int = 0, src_stride: int = 0, dst_stride: int = 0, rsv: int = 0):
        self.block_count, self.block_len = block_count, block_len
        self.src_stride, self.dst_stride, self.rsv = src_stride, dst_stride, rsv


class DataCopyPadExtParams:
    """``DataCopyPadExtParams<T>{isPad, leftPadding, rightPadding (elements, each <= 32 B), paddingValue}``."""

    __slots__ = ("dtype", "is_pad", "left_padding", "right_padding", "padding_value")

    def __init__(self, dtype=None, is_pad: bool = False, left_padding: int = 0, right_padding: int = 0,
                 padding_value=0):
        self.dtype, self.is_pad = dtype, is_pad
        self.left_padding, self.right_padding, self.padding_value = left_padding, right_padding, padding_value


def data_copy(dst, src, count: int) -> None:
    """Copy ``count`` elements from ``src`` to ``dst`` (GM->UB, UB->GM or UB->UB).

    Raises:
        KernelError: ``count * sizeof`` not a multiple of 32 B (unless the launch has strict=False,
            which rounds down as the NPU does), unaligned UB address, dtype mismatch, or an access
            outside either tensor.
    """
    core, op = current("data_copy"), "data_copy"
    pipe = _direction(core, op, dst, src)
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
    for t in (dst, src):
        if isinstance(t, LocalTensor):
            check_ub_aligned(core, op, t)
    d0, d1 = dst.span(core, op, count)
    s0, s1 = src.span(core, op, count)
    to, frm = _memory(core, dst), _memory(core, src)

    def effect():
        to[d0:d1] = frm[s0:s1]

    core.record(op, pipe, reads=(src.access(s0, s1),), writes=(dst.access(d0, d1),), count=count, nbytes=d1 - d0,
                dtype=dst.dtype.name, effect=effect)


def data_copy_pad(dst, src, copy_params: DataCopyExtParams, pad_params: DataCopyPadExtParams | None = None) -> None:
    """Copy ``block_count`` blocks of ``block_len`` bytes with 32 B padding in UB (see module doc).

    Raises:
        KernelError: unsupported SoC, parameters out of range, unaligned UB address, or an access
            outside either tensor.
    """
    core, op = current("data_copy_pad"), "data_copy_pad"
    if not core.soc.data_copy_pad:
        raise core.error(op, f"DataCopyPad does not exist on {core.soc.name} (arch {core.soc.arch}); copy whole 32 B "
                             "blocks with data_copy and pad the GM buffers on the host", kind="unsupported")
    pipe = _direction(core, op, dst, src)
    if pipe is Pipe.V:
        raise core.error(op, "UB -> UB is not a data_copy_pad path: use data_copy")
    _same_dtype(core, op, dst, src)
    p = copy_params
    if not isinstance(p, DataCopyExtParams):
        raise core.error(op, f"third argument must be asc.DataCopyExtParams, got {type(p).__name__}")
    size = dst.dtype.sizeof()
    if not 0 <= p.block_count <= MAX_BLOCK_COUNT:
        raise core.error(op, f"block_count={p.block_count} outside [0, {MAX_BLOCK_COUNT}]")
    if not 0 <= p.block_len <= MAX_BLOCK_LEN or p.block_len % size:
        raise core.error(op, f"block_len={p.block_len} must be a byte count in [0, {MAX_BLOCK_LEN}] and a multiple of "
                             f"sizeof({dst.dtype.name}) = {size} (block_len is in BYTES, not elements)")
    if min(p.src_stride, p.dst_stride) < 0:
        raise core.error(op, "strides must be >= 0")
    gm_stride = p.src_stride if pipe is Pipe.MTE2 else p.dst_stride
    if gm_stride % size:
        raise core.error(op, f"the GM stride of {gm_stride} bytes puts blocks at GM addresses not aligned to "
                             f"sizeof({dst.dtype.name}) = {size}: GM addresses must be element-aligned", kind="misaligned")
    if p.block_count == 0 or p.block_len == 0:
        core.record(op, pipe, dtype=dst.dtype.name)
        return
    if pipe is Pipe.MTE2:
        _pad_in(core, op, dst, src, p, pad_params or DataCopyPadExtParams())
    else:
        _pad_out(core, op, dst, src, p)


def _pad_in(core, op: str, dst: LocalTensor, src: GlobalTensor, p: DataCopyExtParams, pad: DataCopyPadExtParams) -> None:
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
    u0, _ = dst.span(core, op, last_elem)  # bounds of the whole UB footprint
    fill = np.frombuffer(dtypes.to_scalar(pad.padding_value, dst.dtype).tobytes(), np.uint8) if pad.is_pad else None
    copies, pads, reads, writes, undefined = [], [], [], [], []
    for b in range(p.block_count):
        g0, g1 = src.span(core, op, p.block_len // size, first=b * gm_step // size)
        ub0 = u0 + b * ub_step
        data0, data1, ub1 = ub0 + left, ub0 + left + p.block_len, ub0 + footprint
        copies.append((data0, data1, g0, g1))
        reads.append(src.access(g0, g1))
        writes.append(dst.access(data0, data1))
        for a, z in ((ub0, data0), (data1, ub1)):
            if a < z:
                pads.append((a, z))
                (undefined if fill is None else writes).append(dst.access(a, z))

    def effect():
        for data0, data1, g0, g1 in copies:
            core.ub[data0:data1] = src.gm.data[g0:g1]
        for a, z in pads:
            core.ub[a:z] = _POISON if fill is None else np.resize(fill, z - a)

    core.record(op, Pipe.MTE2, reads=tuple(reads), writes=tuple(writes), undefined=tuple(undefined),
                count=p.block_count * p.block_len // size, nbytes=p.block_count * p.block_len, dtype=dst.dtype.name,
                effect=effect)


def _pad_out(core, op: str, dst: GlobalTensor, src: LocalTensor, p: DataCopyExtParams) -> None:
    size = src.dtype.sizeof()
    check_ub_aligned(core, op, src)
    ub_step = -(-p.block_len // BLOCK) * BLOCK + p.src_stride * BLOCK
    gm_step = p.block_len + p.dst_stride
    copies, reads, writes = [], [], []
    for b in range(p.block_count):
        u0, u1 = src.span(core, op, p.block_len // size, first=b * ub_step // size)
        g0, g1 = dst.span(core, op, p.block_len // size, first=b * gm_step // size)
        copies.append((g0, g1, u0, u1))
        reads.append(src.access(u0, u1))
        writes.append(dst.access(g0, g1))

    def effect():
        for g0, g1, u0, u1 in copies:
            dst.gm.data[g0:g1] = core.ub[u0:u1]

    core.record(op, Pipe.MTE3, reads=tuple(reads), writes=tuple(writes), count=p.block_count * p.block_len // size,
                nbytes=p.block_count * p.block_len, dtype=src.dtype.name, effect=effect)


def _direction(core, op: str, dst, src) -> Pipe:
    kinds = (type(dst), type(src))
    if kinds == (LocalTensor, GlobalTensor):
        return Pipe.MTE2
    if kinds == (GlobalTensor, LocalTensor):
        return Pipe.MTE3
    if kinds == (LocalTensor, LocalTensor):
        return Pipe.V
    raise core.error(op, f"cannot copy {kinds[1].__name__} -> {kinds[0].__name__}: the destination comes first and one "
                         "side must be a LocalTensor (GM -> GM has no data path)")


def _same_dtype(core, op: str, dst, src) -> None:
    if dst.dtype is not src.dtype:
        raise core.error(op, f"dtype mismatch: dst {dst.name} is {dst.dtype.name}, src {src.name} is {src.dtype.name}; "
                             "copies move bytes of one type, convert with asc.cast in UB", tensor=dst.name)


def _count(core, op: str, count) -> int:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise core.error(op, f"count must be a non-negative element count, got {count!r}")
    return int(count)


def _memory(core, tensor) -> np.ndarray:
    return core.ub if isinstance(tensor, LocalTensor) else tensor.gm.data
