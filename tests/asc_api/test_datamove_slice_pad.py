"""data_copy with SliceInfo and data_copy_pad's DataCopyParams / DataCopyPadParams form (issue 9 item 7).

Models (written here from the pages, not from fusekit):
- Slice (AD-API DataCopy（GM与UB切片数据搬运）.md, 表3 and 约束说明): a tensor shaped by shape_value
  (dimension 0 innermost, row major). Dimension 0 takes N bursts of burst_len * 32 / sizeof(T)
  elements starting at start_index, stride elements apart, the last ending on end_index (inclusive):
  end - start + 1 = (N - 1) * stride + N * burst_len * 32 / sizeof(T). An outer dimension takes the
  indices start, start + stride + 1, ... up to end (the page's example {0, 2, 1, 1, 3}: rows 0 and 2).
  Bursts pair up in order: dimension 0 innermost, then dimension 1.
- DataCopyPad, DataCopyParams form (AD-API DataCopyPad（GMToUB非对齐数据搬运）.md; pyasc data_copy_pad
  page): block b reads block_len bytes at b * (block_len + src_stride) bytes of GM and lands at
  b * (footprint + dst_stride * 32) bytes of UB, footprint = (left + block_len + right) rounded up to
  32 B; with is_pad the left / right pad and the dummy up to 32 B hold padding_value, a uint64 bit
  pattern whose low sizeof(T) bytes are the element. UB -> GM: src_stride in 32 B blocks, dst_stride
  in bytes, block_len bytes per block.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import fusekit
from fusekit import asc
from support import gm_view, ub_buf


# -- the independent slice model ----------------------------------------------------------------

def slice_flat_indices(info: list[tuple[int, int, int, int, int]], itemsize: int) -> np.ndarray:
    """Flat element indices a SliceInfo list selects, in copy order. info[d] = (start, end, stride,
    burst_len, shape) of dimension d (0 innermost)."""
    per_dim = []
    for d, (start, end, stride, burst, _) in enumerate(info):
        width = burst * 32 // itemsize if d == 0 else 1
        n = (end - start + 1 + stride) // (width + stride)
        assert (n - 1) * stride + n * width == end - start + 1  # the page's formula holds for the case
        first = start + np.arange(n) * (width + stride)
        per_dim.append((first[:, None] + np.arange(width)).ravel())
    shape = [s[4] for s in info][::-1]  # row-major: outermost first
    outer = list(itertools.product(*[per_dim[d] for d in range(len(info) - 1, 0, -1)]))
    rows = [np.ravel_multi_index(tuple(o) + (0,), shape) for o in outer] if outer else [0]
    return np.concatenate([r + per_dim[0] for r in rows])


def slice_model(src: np.ndarray, dst: np.ndarray, dst_info, src_info) -> np.ndarray:
    out = dst.copy()
    out[slice_flat_indices(dst_info, src.itemsize)] = src[slice_flat_indices(src_info, src.itemsize)]
    return out


def _infos(info):
    return [asc.SliceInfo(*s) for s in info]


def slice_in(x: np.ndarray, n_ub: int, dst_info, src_info, background: np.ndarray | None = None):
    """GM x -> UB (slice form) -> GM y (count copy of the whole UB, prefilled with background)."""
    y = np.zeros(n_ub, x.dtype)
    bg = np.full(n_ub, -7, x.dtype) if background is None else background

    @asc.jit
    def k(xx: asc.GlobalAddress, bb: asc.GlobalAddress, yy: asc.GlobalAddress):
        xg, bgm, yg = gm_view(xx, x.size), gm_view(bb, n_ub), gm_view(yy, n_ub)
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, n_ub)
        asc.data_copy(t, bgm, n_ub)
        asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
        asc.data_copy(t, xg, _infos(dst_info), _infos(src_info), len(src_info))
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, t, n_ub)

    result = k[1](x, bg, y)
    return y, result.trace, bg


def slice_out(x: np.ndarray, n_gm: int, dst_info, src_info, dim_kw: bool = False):
    """GM x -> UB (count copy) -> GM y (slice form), y prefilled with -7."""
    y = np.full(n_gm, -7, x.dtype)

    @asc.jit
    def k(xx: asc.GlobalAddress, yy: asc.GlobalAddress):
        xg, yg = gm_view(xx, x.size), gm_view(yy, n_gm)
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, x.size)
        asc.data_copy(t, xg, x.size)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        if dim_kw:
            asc.data_copy(yg, t, slice_list1=_infos(dst_info), slice_list2=_infos(src_info),
                          dim_value=len(src_info))
        else:
            asc.data_copy(yg, t, _infos(dst_info), _infos(src_info), len(src_info))

    before = y.copy()
    result = k[1](x, y)
    return y, result.trace, before


# -- slice: values ------------------------------------------------------------------------------

PAGE_SRC = [(16, 70, 7, 3, 87), (0, 2, 1, 1, 3)]  # the page's example (float, 3 x 87 -> 2 x 48)
PAGE_DST = [(0, 47, 0, 3, 48), (0, 1, 0, 1, 2)]


def test_page_example_gm_to_ub():
    x = np.arange(3 * 87, dtype=np.float32)
    y, trace, bg = slice_in(x, 96, PAGE_DST, PAGE_SRC)
    assert np.array_equal(y, slice_model(x, bg, PAGE_DST, PAGE_SRC))
    # spelled out from the page's figure: rows 0 and 2, elements 16..39 and 47..70 of each
    want = np.concatenate([x[r * 87 + np.r_[16:40, 47:71]] for r in (0, 2)])
    assert np.array_equal(y, want)
    _, instr = [i for i in trace if i.op == "data_copy" and i.pipe is asc.Pipe.MTE2]  # background, slice
    gm_reads = sorted((a.start, a.stop) for a in instr.reads if a.mem is asc.Mem.GM)
    assert gm_reads == [(4 * (r * 87 + lo), 4 * (r * 87 + hi)) for r in (0, 2) for lo, hi in ((16, 40), (47, 71))]
    assert [(a.start - instr.writes[0].start, a.stop - instr.writes[0].start) for a in instr.writes] == [(0, 384)]


def test_slice_with_outer_stride_two_and_gm_stride_not_a_block():
    # half, 3-D source 4 x 7 x 40: dim 0 two bursts of 16 elements, stride 5 (10 B: not a 32 B multiple
    # on the GM side); dim 1 rows 1, 4 (stride 2); dim 2 planes 0, 3 (stride 2)
    src_info = [(3, 39, 5, 1, 40), (1, 4, 2, 1, 7), (0, 3, 2, 1, 4)]
    dst_info = [(0, 31, 0, 1, 32), (0, 1, 0, 1, 2), (0, 1, 0, 1, 2)]
    x = (np.arange(4 * 7 * 40) % 2000).astype(np.float16)
    y, _, bg = slice_in(x, 128, dst_info, src_info)
    assert np.array_equal(y, slice_model(x, bg, dst_info, src_info))
    cube = x.reshape(4, 7, 40)
    want = np.stack([cube[p, r, np.r_[3:19, 24:40]] for p in (0, 3) for r in (1, 4)]).ravel()
    assert np.array_equal(y, want)


def test_slice_ub_to_gm_with_ub_gap_and_gm_stride():
    # UB holds 2 rows x 48 int32; take bursts [0, 8) and [16, 24) of each UB row (stride 8 elements = 32 B)
    # into GM rows 1 and 3 of a 4 x 30 tensor, at elements 2..9 and 13..20 (GM stride 3 elements)
    src_info = [(0, 23, 8, 1, 48), (0, 1, 0, 1, 2)]
    dst_info = [(2, 20, 3, 1, 30), (1, 3, 1, 1, 4)]
    x = np.arange(96, dtype=np.int32) + 1000
    y, trace, before = slice_out(x, 120, dst_info, src_info, dim_kw=True)
    assert np.array_equal(y, slice_model(x, before, dst_info, src_info))
    (instr,) = [i for i in trace if i.op == "data_copy" and i.pipe is asc.Pipe.MTE3]
    assert sorted((w.start, w.stop) for w in instr.writes) == [
        (4 * (r * 30 + lo), 4 * (r * 30 + lo + 8)) for r in (1, 3) for lo in (2, 13)]
    ub_reads = sorted((r.start, r.stop) for r in instr.reads if r.mem is asc.Mem.UB)
    base = ub_reads[0][0]
    assert [(a - base, b - base) for a, b in ub_reads] == [(0, 32), (64, 96), (192, 224), (256, 288)]


def test_slice_touching_the_last_element():
    x = np.arange(2 * 24, dtype=np.float32)
    src_info = [(16, 23, 0, 1, 24), (1, 1, 0, 1, 2)]  # row 1 alone: start == end
    dst_info = [(0, 7, 0, 1, 8), (0, 0, 0, 1, 1)]
    with pytest.raises(asc.KernelError, match="start_index < end_index"):
        slice_in(x, 8, dst_info, src_info)  # dim 1 start == end is refused (start < end, 约束说明)
    src_info = [(16, 23, 0, 1, 24), (0, 1, 0, 1, 2)]
    dst_info = [(0, 7, 0, 1, 8), (0, 1, 0, 1, 2)]
    y, _, bg = slice_in(x, 16, dst_info, src_info)
    assert np.array_equal(y, np.r_[x[16:24], x[40:48]])
    assert np.array_equal(y, slice_model(x, bg, dst_info, src_info))


def test_slice_one_past_the_dimension_is_a_kernel_error():
    x = np.arange(2 * 24, dtype=np.float32)
    with pytest.raises(asc.KernelError, match=r"end_index=24, shape_value=24.*one element past"):
        slice_in(x, 16, [(0, 7, 0, 1, 8), (0, 1, 0, 1, 2)], [(17, 24, 0, 1, 24), (0, 1, 0, 1, 2)])
    # the shape given larger than the GM view: the last burst leaves the tensor
    with pytest.raises(asc.KernelError, match="outside its GlobalTensor view"):
        slice_in(x, 16, [(0, 7, 0, 1, 8), (0, 1, 0, 1, 2)], [(17, 24, 0, 1, 25), (0, 1, 0, 1, 2)])


@pytest.mark.parametrize("src_info, dst_info, message", [
    ([(0, 20, 0, 1, 24)], [(0, 20, 0, 1, 24)], r"not \(N - 1\) \* stride"),
    ([(0, 15, 0, 1, 24), (0, 1, 0, 2, 2)], [(0, 15, 0, 1, 16), (0, 1, 0, 2, 2)], "burst_len must be 1"),
    ([(0, 15, 0, 2, 24)], [(0, 7, 0, 1, 8)], "burst_len differs"),
    ([(0, 15, 0, 1, 24)], [(0, 7, 0, 1, 8)], "same number of bursts"),
    ([(0, 19, 4, 1, 24)], [(0, 19, 4, 1, 24)], "not 32 B aligned"),       # UB stride of 16 B
    ([(0, 7, 0, 1, 0)], [(0, 7, 0, 1, 8)], "shape_value=0"),
])
def test_slice_rules_are_kernel_errors(src_info, dst_info, message):
    x = np.arange(48, dtype=np.float32)
    with pytest.raises(asc.KernelError, match=message):
        slice_in(x, 24, dst_info, src_info)


def test_slice_dim_value_must_match_the_lists():
    x = np.arange(48, dtype=np.float32)

    @asc.jit
    def k(xx: asc.GlobalAddress):
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, 8)
        asc.data_copy(t, gm_view(xx, 48), [asc.SliceInfo(0, 7, 0, 1, 8)], [asc.SliceInfo(0, 7, 0, 1, 8)], 2)

    with pytest.raises(asc.KernelError, match="dim_value=2"):
        k[1](x)


def test_slice_refuses_ub_to_ub_and_64_bit():
    @asc.jit
    def k(xx: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, 16)
        info = [asc.SliceInfo(0, 31 // xx.dtype.sizeof() * 1, 0, 1, 32 // xx.dtype.sizeof())]
        if CASE == "ub":
            asc.data_copy(t[8:], t, info, info, 1)
        else:
            asc.data_copy(t, gm_view(xx, 16), info, info)

    with pytest.raises(asc.KernelError, match="GM -> UB"):
        k[1](np.zeros(16, np.float32), "ub")
    with pytest.raises(asc.KernelError, match="not a slice-copy dtype"):
        k[1](np.zeros(16, np.int64), "gm")


def test_slice_pyasc_defaults():
    s = asc.SliceInfo()
    assert (s.start_index, s.end_index, s.stride, s.burst_len, s.shape_value) == (0, 31, 0, 32, 0)


# -- slice: the sanitizer sees exactly the burst bytes -------------------------------------------

@asc.jit
def slice_race(x: asc.GlobalAddress, y: asc.GlobalAddress, AT: asc.ConstExpr[int]):
    """Core 0 stores bursts [0, 8), [16, 24), [32, 40) of y by slice; core 1 stores y[AT:AT + 8]
    with no synchronisation between the cores."""
    xg, yg = gm_view(x, 48), gm_view(y, 48)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, 48)
    asc.data_copy(t, xg, 48)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if asc.get_block_idx() == 0:
        asc.data_copy(yg, t, [asc.SliceInfo(0, 39, 8, 1, 48)], [asc.SliceInfo(0, 23, 0, 1, 48)], 1)
    else:
        asc.data_copy(yg[AT:], t, 8)


def test_sanitizer_race_only_on_the_bytes_the_slice_touches():
    x, y = np.arange(48, dtype=np.float32), np.zeros(48, np.float32)
    for gap in (8, 24, 40):  # the stride gaps and the tail: no byte in common with the slice
        report = fusekit.sanitize(slice_race)[2](x, y.copy(), gap)
        assert not [f for f in report.findings if f.tool == "racecheck"], (gap, report.to_text())
    report = fusekit.sanitize(slice_race)[2](x, y.copy(), 16)  # the slice's second burst
    races = [f for f in report.findings if f.tool == "racecheck"]
    assert races and all(f.kind == "WAW" and f.mem == "GM" for f in races), report.to_text()
    assert {(f.start, f.stop) for f in races} == {(64, 96)}


# -- data_copy_pad, DataCopyParams / DataCopyPadParams form ---------------------------------------

def pad_model(x_bytes: np.ndarray, ub_bytes: np.ndarray, count: int, length: int, s_stride: int, d_stride: int,
              left: int, right: int, pad_elem: bytes | None, size: int) -> np.ndarray:
    """UB bytes after a GM -> UB DataCopyPad (lengths in bytes, left / right in elements)."""
    out = ub_bytes.copy()
    foot = -(-(left * size + length + right * size) // 32) * 32
    for b in range(count):
        u, g = b * (foot + d_stride * 32), b * (length + s_stride)
        if pad_elem is not None:
            out[u:u + foot] = np.frombuffer(pad_elem * (foot // size), np.uint8)
        out[u + left * size:u + left * size + length] = x_bytes[g:g + length]
    return out


def pad_in(x: np.ndarray, n_ub: int, params, pad, background: np.ndarray):
    y = np.zeros(n_ub, x.dtype)

    @asc.jit
    def k(xx: asc.GlobalAddress, bb: asc.GlobalAddress, yy: asc.GlobalAddress):
        xg, bgm, yg = gm_view(xx, x.size), gm_view(bb, n_ub), gm_view(yy, n_ub)
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, n_ub)
        asc.data_copy(t, bgm, n_ub)
        asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
        if pad is None:
            asc.data_copy_pad(t, xg, params)
        else:
            asc.data_copy_pad(t, xg, params, pad)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, t, n_ub)

    result = k[1](x, background, y)
    return y, result.trace


def test_pad_params_both_sides_with_strides_half():
    # pyasc's page example grown: half, 3 blocks of 20 elements (40 B), GM gap 6 B, UB gap 1 block,
    # 2 elements left and 3 right padded with 1.0 (bits 0x3C00); 25 elements -> 64 B per block
    x = np.arange(100, dtype=np.float16)
    bg = np.full(128, -5, np.float16)
    y, trace = pad_in(x, 128, asc.DataCopyParams(3, 40, 6, 1), asc.DataCopyPadParams(True, 2, 3, 0x3C00), bg)
    want = pad_model(x.view(np.uint8), bg.view(np.uint8), 3, 40, 6, 1, 2, 3, np.float16(1).tobytes(), 2)
    assert np.array_equal(y.view(np.uint8), want)
    assert np.array_equal(y[:32], np.r_[[1, 1], x[:20], [1] * 10].astype(np.float16))
    (instr,) = [i for i in trace if i.op == "data_copy_pad"]
    gm_reads = sorted((a.start, a.stop) for a in instr.reads)
    assert gm_reads == [(0, 40), (46, 86), (92, 132)]
    base = min(w.start for w in instr.writes)
    assert sorted({(w.start - base, w.stop - base) for w in instr.writes}) == [
        (0, 4), (4, 44), (44, 64), (96, 100), (100, 140), (140, 160), (192, 196), (196, 236), (236, 256)]


@pytest.mark.parametrize("dtype, bits, value", [(np.float32, 0x3F800000, 1.0), (np.int32, 0xFFFFFFFF, -1),
                                                (np.int16, 0x12348001, -32767)])
def test_pad_value_is_a_bit_pattern(dtype, bits, value):
    x = np.arange(64, dtype=dtype)
    bg = np.zeros(64, dtype)
    size = np.dtype(dtype).itemsize
    y, _ = pad_in(x, 64, asc.DataCopyParams(2, 3 * size, 0, 0), asc.DataCopyPadParams(True, 1, 1, bits), bg)
    elem = bits.to_bytes(8, "little")[:size]
    want = pad_model(x.view(np.uint8), bg.view(np.uint8), 2, 3 * size, 0, 0, 1, 1, elem, size).view(dtype)
    assert np.array_equal(y, want)
    assert y[0] == value and y[1:4].tolist() == [0, 1, 2]


def test_pad_params_without_is_pad_uses_set_pad_value():
    x = np.arange(32, dtype=np.float32)

    @asc.jit
    def k(xx: asc.GlobalAddress, yy: asc.GlobalAddress):
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, 8)
        asc.set_pad_value(2.5)
        asc.data_copy_pad(t, gm_view(xx, 32), asc.DataCopyParams(1, 12, 0, 0), asc.DataCopyPadParams(False, 0, 2, 77))
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gm_view(yy, 8), t, 8)

    y = np.zeros(8, np.float32)
    k[1](x, y)
    assert y.tolist() == [0, 1, 2, 2.5, 2.5, 2.5, 2.5, 2.5]


def test_pad_params_ub_to_gm():
    # UB 3 blocks of 12 int16 (24 B) read 32 B + 1 block apart (src_stride 1 block), written 10 B apart in GM
    x = np.arange(96, dtype=np.int16)
    y = np.full(64, -1, np.int16)

    @asc.jit
    def k(xx: asc.GlobalAddress, yy: asc.GlobalAddress):
        pipe = asc.TPipe()
        t = ub_buf(pipe, xx.dtype, 96)
        asc.data_copy(t, gm_view(xx, 96), 96)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy_pad(gm_view(yy, 64), t, asc.DataCopyParams(3, 24, 1, 10))

    want = y.copy()
    for b in range(3):
        want[b * 17:b * 17 + 12] = x[b * 32:b * 32 + 12]  # GM step 24 + 10 B = 17 elements; UB step 64 B
    k[1](x, y)
    assert np.array_equal(y, want)


@pytest.mark.parametrize("params, pad, message", [
    (asc.DataCopyParams(1, 65536, 0, 0), asc.DataCopyPadParams(), r"block_len=65536 outside \[0, 65535\]"),
    (asc.DataCopyParams(1, 64, 70000, 0), asc.DataCopyPadParams(), r"src_stride=70000 outside"),
    (asc.DataCopyParams(1, 64, 0, 0), asc.DataCopyPadExtParams(asc.float32, True, 0, 0, 0), "DataCopyPadParams"),
    (asc.DataCopyParams(1, 64, 0, 0), asc.DataCopyPadParams(True, 0, 9, 0), "at most 32 B"),
    (asc.DataCopyParams(1, 64, 0, 0), asc.DataCopyPadParams(True, 0, 0, 1 << 64), "uint64_t"),
])
def test_pad_params_rules(params, pad, message):
    with pytest.raises(asc.KernelError, match=message):
        pad_in(np.arange(64, dtype=np.float32), 64, params, pad, np.zeros(64, np.float32))


def test_pad_params_64_bit_value_must_be_zero():
    with pytest.raises(asc.KernelError, match="only be 0"):
        pad_in(np.arange(16, dtype=np.int64), 16, asc.DataCopyParams(1, 24, 0, 0), asc.DataCopyPadParams(True, 0, 1, 5),
               np.zeros(16, np.int64))
    y, _ = pad_in(np.arange(16, dtype=np.int64) + 3, 16, asc.DataCopyParams(1, 24, 0, 0),
                  asc.DataCopyPadParams(True, 0, 1, 0), np.full(16, 9, np.int64))
    assert y[:4].tolist() == [3, 4, 5, 0]


def test_pad_params_refused_on_310p():
    with pytest.raises(asc.KernelError, match="DataCopyPad does not exist"):
        @asc.jit
        def k(xx: asc.GlobalAddress):
            pipe = asc.TPipe()
            t = ub_buf(pipe, xx.dtype, 16)
            asc.data_copy_pad(t, gm_view(xx, 16), asc.DataCopyParams(1, 8, 0, 0), asc.DataCopyPadParams())

        k[1](np.zeros(16, np.float32), soc="Ascend310P3")
