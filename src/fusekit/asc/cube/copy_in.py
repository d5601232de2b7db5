"""Copies into the cube's buffers that reorder or convert: GM -> L1 with ND2NZ, and L1 -> the bias table.

- ``data_copy(dst A1/B1, src GM, Nd2NzParams)`` (AD-API 矩阵计算的搬入/DataCopy（GMToL1随路转换-ND2NZ搬运）.md): for
  matrix i, row r, column c < d_value, the element at source ``i * src_nd_matrix_stride + r * src_d_value + c``
  goes to L1 element ``i * dst_nz_matrix_stride + (c // C0) * dst_nz_c0_stride * C0 + r * dst_nz_n_stride * C0 +
  c % C0``; "当dValue * sizeof(T)不满足32字节对齐时，在目的矩阵中会补0对齐到32字节": the columns from d_value to
  the next 32 B of each row written are zeros. Rows past n_value are not written. ndNum, nValue or dValue 0 is a
  NOP. PIPE_MTE2; dst 32 B aligned, src any element. Overlapping L1 writes are "not guaranteed" in order: refused.
- ``data_copy(dst C2, src C1, ...)`` (DataCopy（L1ToBiasTable-Buffer数据搬运）.md): the bias row into the bias table,
  PIPE_MTE1. src half / int32 / float, dst int32 / float (half widens to float). The count form moves ``count``
  elements of one dtype (count * sizeof 32 B aligned, as DataCopy's); the DataCopyParams form moves
  ``block_count`` blocks of ``block_len`` x 64 B of the destination (the A2/A3 unit), ``dst_stride`` x 64 B and
  ``src_stride`` x 32 B apart.
"""

from __future__ import annotations

import numpy as np

from fusekit.machine import Mem

from ..runtime import current
from ..trace import Pipe
from .layout import c0, cached
from .operands import Elements, accesses, bounded, expect_space, repeated
from .params import Nd2NzParams, check_fields

_ND2NZ_PAGE = "DataCopy（GMToL1随路转换-ND2NZ搬运）.md 表4"
_ND2NZ_RANGES = {"nd_num": (0, 4095, _ND2NZ_PAGE), "n_value": (0, 16384, _ND2NZ_PAGE),
                 "d_value": (0, 65535, _ND2NZ_PAGE), "src_nd_matrix_stride": (0, 65535, _ND2NZ_PAGE),
                 "src_d_value": (1, 65535, _ND2NZ_PAGE), "dst_nz_c0_stride": (1, 16384, _ND2NZ_PAGE),
                 "dst_nz_n_stride": (1, 16384, _ND2NZ_PAGE), "dst_nz_matrix_stride": (0, 16384, _ND2NZ_PAGE)}
# ND2NZ element types on A2/A3 (the page's 数据类型; b4 is not a fusekit dtype)
_ND2NZ_DTYPES = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32"})


def nd2nz_offsets(p: Nd2NzParams, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """(source offsets, destination offsets, zero-pad destination offsets, every destination offset, whether one
    repeats) of an ND2NZ copy of ``size``-byte elements, the first three of shape (nd_num, n_value, columns)."""
    return _nd2nz(*(getattr(p, name) for name in Nd2NzParams.__slots__), size)


@cached
def _nd2nz(nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride, dst_nz_n_stride,
           dst_nz_matrix_stride, size):
    p = Nd2NzParams(nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride, dst_nz_n_stride,
                    dst_nz_matrix_stride)
    k = c0(size)
    padded = -(-p.d_value // k) * k
    i = np.arange(p.nd_num, dtype=np.int64)[:, None, None]
    r = np.arange(p.n_value, dtype=np.int64)[None, :, None]

    def dst(c):
        return (i * p.dst_nz_matrix_stride + (c // k) * p.dst_nz_c0_stride * k + r * p.dst_nz_n_stride * k + c % k)

    cols = np.arange(p.d_value, dtype=np.int64)[None, None, :]
    pads = np.arange(p.d_value, padded, dtype=np.int64)[None, None, :]
    src = np.broadcast_to(i * p.src_nd_matrix_stride + r * p.src_d_value + cols, dst(cols).shape).copy()
    written = np.concatenate([dst(cols).ravel(), dst(pads).ravel()])
    return src, dst(cols), dst(pads), written, repeated(written)


def data_copy_nd2nz(dst, src, params: Nd2NzParams) -> None:
    """``DataCopy(dst, src, Nd2NzParams)``: ND matrices in GM into NZ in L1 (module docstring).

    Raises:
        KernelError: dst not in L1 (A1 / B1 / C1) or src not in GM, another dtype, a field outside its range,
            an access outside either tensor, or L1 elements written twice.
    """
    core, op = current("data_copy"), "data_copy"
    expect_space(core, op, "dst", dst, ("L1",), "L1 (TPosition.A1 / B1)")
    expect_space(core, op, "src", src, ("GM",), "GM (a GlobalTensor)")
    check_fields(core, op, params, _ND2NZ_RANGES)
    if dst.dtype is not src.dtype or dst.dtype.name not in _ND2NZ_DTYPES:
        raise core.error(op, f"ND2NZ copies one dtype of {', '.join(sorted(_ND2NZ_DTYPES))}; got dst {dst.dtype.name}, "
                             f"src {src.dtype.name} ({_ND2NZ_PAGE.split(' ')[0]}, 数据类型)")
    if 0 in (params.nd_num, params.n_value, params.d_value):
        core.record(op, Pipe.MTE2, dtype=dst.dtype.name)  # a NOP (约束说明)
        return
    s_off, d_off, pad_off, written, twice = nd2nz_offsets(params, dst.dtype.sizeof())
    if twice:
        raise core.error(op, f"{params} writes some L1 elements of {dst.name} twice; the order of overlapping ND2NZ "
                             "writes is not guaranteed (约束说明: 搬运至L1 Buffer的数据不能重叠): widen "
                             "dst_nz_c0_stride (>= n_value rows) or dst_nz_matrix_stride", tensor=dst.name)
    bounded(core, op, src, s_off, "src_d_value and src_nd_matrix_stride count elements")
    bounded(core, op, dst, written, "dst_nz_c0_stride and dst_nz_n_stride count 32 B units, dst_nz_matrix_stride "
                                    "elements")
    source, target, pad = Elements(src, s_off), Elements(dst, d_off), Elements(dst, pad_off)

    def effect():
        target.write(source.read())
        if pad_off.size:
            pad.write(np.zeros(pad_off.shape, dst.dtype.np))

    core.record(op, Pipe.MTE2, reads=accesses(src, s_off), writes=accesses(dst, written), count=s_off.size,
                nbytes=s_off.size * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect)


_BT_PAGE = "DataCopy（L1ToBiasTable-Buffer数据搬运）.md"
_BT_TYPES = {("float16", "float32"), ("float32", "float32"), ("int32", "int32")}  # (src, dst) on A2/A3
_BT_UNIT = 64  # blockLen and dstGap unit on A2/A3, bytes (约束说明)


def data_copy_bias(dst, src, count: "int | None" = None, params=None) -> None:
    """``DataCopy(dst C2, src C1, count)`` or ``(dst, src, DataCopyParams)``: the bias row from L1 into the bias
    table (module docstring).

    Raises:
        KernelError: the tensors are not C1 -> C2, a dtype pair the page does not list, a count whose bytes are no
            32 B multiple, fields out of range, or an access outside either tensor.
    """
    core, op = current("data_copy"), "data_copy"
    expect_space(core, op, "dst", dst, ("BT",), "the bias table (TPosition.C2)")
    expect_space(core, op, "src", src, ("L1",), "L1 (TPosition.C1)")
    pair = (src.dtype.name, dst.dtype.name)
    if pair not in _BT_TYPES:
        raise core.error(op, f"L1 -> bias table copies {', '.join(f'{a} -> {b}' for a, b in sorted(_BT_TYPES))}; got "
                             f"{pair[0]} -> {pair[1]} ({_BT_PAGE}, 数据类型)")
    if params is None:
        if dst.dtype is not src.dtype:
            raise core.error(op, f"the count form copies one dtype; {pair[0]} -> {pair[1]} takes the DataCopyParams "
                                 f"form ({_BT_PAGE}, 函数原型)")
        if count * src.dtype.sizeof() % 32:
            raise core.error(op, f"count * sizeof({src.dtype.name}) = {count * src.dtype.sizeof()} B is no multiple "
                                 f"of 32 B ({_BT_PAGE}: 搬运量会向下取整到32字节对齐)", kind="unaligned-length")
        blocks = [(0, 0, count)]
    else:
        check_fields(core, op, params, {name: (0, 65535, _BT_PAGE) for name in ("block_len", "src_stride",
                                                                                  "dst_stride")}
                     | {"block_count": (0, 4095, _BT_PAGE)})
        n = params.block_len * _BT_UNIT // dst.dtype.sizeof()  # elements per block
        blocks = [(b * (params.block_len * _BT_UNIT + params.dst_stride * _BT_UNIT) // dst.dtype.sizeof(),
                   b * (n * src.dtype.sizeof() + params.src_stride * 32) // src.dtype.sizeof(), n)
                  for b in range(params.block_count)] if n else []
    if not blocks or not blocks[0][2]:
        core.record(op, Pipe.MTE1, dtype=dst.dtype.name)  # blockCount / blockLen 0: a NOP
        return
    d_off = np.concatenate([np.arange(d, d + n, dtype=np.int64) for d, _, n in blocks])
    s_off = np.concatenate([np.arange(s, s + n, dtype=np.int64) for _, s, n in blocks])
    bounded(core, op, dst, d_off, f"the bias table holds {core.soc.bt_bytes} B; block_len and dst_stride count 64 B")
    bounded(core, op, src, s_off)
    source, target = Elements(src, s_off), Elements(dst, d_off)

    def effect():
        target.write(source.read().astype(dst.dtype.np))  # half -> float is exact

    core.record(op, Pipe.MTE1, reads=accesses(src, s_off), writes=accesses(dst, d_off), count=d_off.size,
                nbytes=d_off.size * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect)


def is_bias_copy(dst, src) -> bool:
    """Whether a data_copy goes from L1 into the bias table (the handler here, not the byte copy)."""
    return getattr(dst, "space", None) is Mem.BT and getattr(src, "space", None) is Mem.L1


__all__ = ["data_copy_bias", "data_copy_nd2nz", "is_bias_copy", "nd2nz_offsets"]


_FILL_PAGE = "矩阵搬入辅助配置接口/Fill.md 表3"
_FILL_RANGES = {"repeat_times": (0, 32767, _FILL_PAGE), "block_num": (0, 32767, _FILL_PAGE),
                "dst_gap": (0, 32767, _FILL_PAGE)}
# the block of one Fill in each space, and the pipe that fills it (Fill.md 表3, 约束说明)
_FILL_BLOCKS = {"L1": (32, Pipe.MTE2), "L0A": (512, Pipe.MTE1), "L0B": (512, Pipe.MTE1)}


def init_const_value(dst, init_const_value_params) -> None:
    """pyasc ``init_const_value(dst, InitConstValueParams(repeat_times, block_num, dst_gap, init_value))``
    (``Fill``, AD-API 矩阵搬入辅助配置接口/Fill.md): ``repeat_times`` runs of ``block_num`` blocks set to
    ``init_value`` (converted to dst's dtype), ``dst_gap`` blocks between runs; a block is 32 B in L1 (PIPE_MTE2),
    512 B in L0A / L0B (PIPE_MTE1). repeat_times or block_num 0 is a NOP.

    Raises:
        KernelError: dst not in L1 / L0A / L0B (A1 / B1 / A2 / B2) or misaligned, a field out of range, or blocks
            past the tensor.
    """
    core, op = current("init_const_value"), "init_const_value"
    p = init_const_value_params
    expect_space(core, op, "dst", dst, tuple(_FILL_BLOCKS), "L1 / L0A / L0B (TPosition.A1 / B1 / A2 / B2)")
    check_fields(core, op, p, _FILL_RANGES)
    block, pipe = _FILL_BLOCKS[dst.space.name]
    if p.repeat_times == 0 or p.block_num == 0:
        core.record(op, pipe, dtype=dst.dtype.name)
        return
    per = block // dst.dtype.sizeof()
    r = np.arange(p.repeat_times, dtype=np.int64)[:, None]
    offsets = r * (p.block_num + p.dst_gap) * per + np.arange(p.block_num * per, dtype=np.int64)[None, :]
    bounded(core, op, dst, offsets, f"block_num and dst_gap count {block} B blocks in {dst.space.name}")
    target, value = Elements(dst, offsets), np.asarray(p.init_value).astype(dst.dtype.np)

    def effect():
        target.write(np.broadcast_to(value, offsets.shape))

    core.record(op, pipe, writes=accesses(dst, offsets), count=offsets.size, nbytes=offsets.size * dst.dtype.sizeof(),
                dtype=dst.dtype.name, effect=effect)
