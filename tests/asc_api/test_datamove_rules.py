"""data_copy and data_copy_pad rules fusekit.asc enforces: 32-byte counts, strides, padding, pipes.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Mem, Pipe

from support import assert_bits_equal, assert_poisoned, gm_view, line_of, raises_at, ub_buf


# ---------------------------------------------------------------------------------------------
# data_copy
# ---------------------------------------------------------------------------------------------

@asc.jit
def copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n_in: int, n_out: int, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(t, xg, n_in)  # <in>
    asc.data_copy(yg, t, n_out)  # <out>


@pytest.mark.parametrize("dtype, count", [(np.float16, 40), (np.float32, 20), (np.float16, 1), (np.float32, 7)])
def test_data_copy_count_not_32B_multiple_raises_by_default(dtype, count):
    size = np.dtype(dtype).itemsize
    x, y = np.arange(64, dtype=dtype), np.zeros(64, dtype)
    name = "float16" if size == 2 else "float32"
    down = count * size // 32 * 32 // size
    with raises_at(copy_kernel, "in", rf"count \* sizeof\({name}\) = {count} \* {size} = {count * size} B is not a "
                                      rf"multiple of 32 B \(x -> \w+\)\. The NPU would silently round it down to {down} "
                                      "elements") as info:
        copy_kernel[1](x, y, count, 64, 64)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("x", 0, count)
    with raises_at(copy_kernel, "out", "would silently round it down") as info:
        copy_kernel[1](x, y, 64, count, 64)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("y", 0, count)


def test_data_copy_strict_false_rounds_gm_to_ub_down():
    x = np.arange(1, 65, dtype=np.float16)
    y = np.full(64, -7, np.float16)
    result = copy_kernel[1](x, y, 40, 48, 64, strict=False)      # 80 B -> 64 B = 32 elements copied in
    assert_bits_equal(y[:32], x[:32])
    assert_poisoned(y[32:48])                                 # UB behind the rounded copy: never written
    assert np.all(y[48:] == -7)                               # GM behind the 48 copied out: untouched
    copy_in = result.trace.cores[0][0]
    assert (copy_in.op, copy_in.count, copy_in.nbytes) == ("data_copy", 32, 64)


def test_data_copy_strict_false_rounds_ub_to_gm_down():
    x = np.arange(1, 65, dtype=np.float32)
    y = np.full(64, -7, np.float32)
    copy_kernel[1](x, y, 64, 15, 64, strict=False)               # 60 B -> 32 B = 8 elements copied out
    assert_bits_equal(y[:8], x[:8])
    assert np.all(y[8:] == -7)


@asc.jit
def copy_rules_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    xg = gm_view(x, 64)
    yg = gm_view(y, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    t = buf.get(asc.float16)
    u = ub_buf(pipe, asc.float16, 64)
    if MODE == "misaligned":
        asc.data_copy(t[3:], xg, 16)  # <misaligned>
    if MODE == "aligned_sub":
        asc.data_copy(t[16:], xg, 16)
        asc.data_copy(yg, t[16:], 16)
    if MODE == "dtype":
        asc.data_copy(buf.get(asc.float32), xg, 16)  # <dtype>
    if MODE == "gm_gm":
        asc.data_copy(yg, xg, 16)  # <gm_gm>
    if MODE == "ub_ub":
        asc.data_copy(t, xg, 64)
        asc.data_copy(u, t, 64)  # <ub_ub>
        asc.data_copy(yg, u, 64)


@pytest.mark.parametrize("mode, match, tensor", [
    ("misaligned", r"buf\[3:\] starts at UB byte 6, not 32-byte aligned.*multiple of 16 elements", "buf[3:]"),
    ("dtype", r"dtype mismatch: dst buf is float32, src x is float16", "buf"),
    ("gm_gm", r"cannot copy GlobalTensor -> GlobalTensor.*GM -> GM has no data path", ""),
])
def test_data_copy_rules(mode, match, tensor):
    with raises_at(copy_rules_kernel, mode, match) as info:
        copy_rules_kernel[1](np.arange(64, dtype=np.float16), np.zeros(64, np.float16), mode)
    assert info.value.tensor == tensor


def test_data_copy_aligned_sub_tensor_works():
    x, y = np.arange(64, dtype=np.float16), np.zeros(64, np.float16)
    copy_rules_kernel[1](x, y, "aligned_sub")
    assert_bits_equal(y[:16], x[:16])
    assert not y[16:].any()


def test_data_copy_ub_to_ub_runs_on_pipe_v():
    x, y = np.arange(64, dtype=np.float16), np.zeros(64, np.float16)
    result = copy_rules_kernel[1](x, y, "ub_ub")
    assert_bits_equal(y, x)
    (instr,) = [i for i in result.trace if i.line == line_of(copy_rules_kernel, "ub_ub")]
    assert instr.pipe is Pipe.V
    assert instr.reads == (Access(Mem.UB, "UB", 0, 128, "buf"),)
    assert instr.writes == (Access(Mem.UB, "UB", 256, 384, "ub"),)  # ub_buf's TBuf is called b


# ---------------------------------------------------------------------------------------------
# data_copy_pad
# ---------------------------------------------------------------------------------------------

@asc.jit
def pad_in_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, count: int, block_len: int, src_stride: int,
                  dst_stride: int, is_pad: bool, left: int, right: int, pad_value: float, fill: float,
                  N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.duplicate(t, fill, N)  # UB the copy must leave alone reads back as `fill`
    params = asc.DataCopyExtParams(count, block_len, src_stride, dst_stride, 0)
    pad = asc.DataCopyPadExtParams(xg.dtype, is_pad, left, right, pad_value)
    asc.data_copy_pad(t, xg, params, pad)  # <pad>
    asc.data_copy(yg, t, N)


def pad_in(x, *, count=1, block_len, src_stride=0, dst_stride=0, is_pad=False, left=0, right=0, pad_value=0.0,
           fill=-3.0, **launch):
    y = np.zeros_like(x)
    result = pad_in_kernel[1](x, y, count, block_len, src_stride, dst_stride, is_pad, left, right, pad_value, fill,
                              x.size, **launch)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    return y, instr


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_data_copy_pad_in_unaligned_block_poisons_dummy_bytes(dtype):
    x = np.arange(1, 65, dtype=dtype)
    size = x.itemsize
    y, instr = pad_in(x, block_len=5 * size)
    per_block = 32 // size
    assert_bits_equal(y[:5], x[:5])
    assert_poisoned(y[5:per_block])
    assert np.all(y[per_block:] == -3)
    assert instr.pipe is Pipe.MTE2
    assert instr.reads == (Access(Mem.GM, "x", 0, 5 * size, "x"),)
    assert instr.writes == (Access(Mem.UB, "UB", 0, 5 * size, "ub"),)
    assert instr.undefined == (Access(Mem.UB, "UB", 5 * size, 32, "ub"),)
    assert (instr.count, instr.nbytes, instr.line) == (5, 5 * size, line_of(pad_in_kernel, "pad"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_data_copy_pad_in_is_pad_fills_padding_value(dtype):
    x = np.arange(1, 65, dtype=dtype)
    size = x.itemsize
    y, instr = pad_in(x, block_len=5 * size, is_pad=True, pad_value=7.5)
    per_block = 32 // size
    assert_bits_equal(y[:5], x[:5])
    assert np.all(y[5:per_block] == 7.5)
    assert np.all(y[per_block:] == -3)
    assert instr.undefined == ()
    assert set(instr.writes) == {Access(Mem.UB, "UB", 0, 5 * size, "ub"), Access(Mem.UB, "UB", 5 * size, 32, "ub")}


def test_data_copy_pad_in_left_and_right_padding_layout():
    x = np.arange(1, 65, dtype=np.float16)
    y, instr = pad_in(x, block_len=10, is_pad=True, left=2, right=3, pad_value=-1.0)
    assert np.all(y[0:2] == -1)
    assert_bits_equal(y[2:7], x[:5])
    assert np.all(y[7:16] == -1)      # right pad and the dummy bytes up to 32 B
    assert np.all(y[16:] == -3)

    y, instr = pad_in(x, block_len=10, is_pad=False, left=2, right=3)
    assert_poisoned(y[0:2])
    assert_bits_equal(y[2:7], x[:5])
    assert_poisoned(y[7:16])
    assert instr.undefined == (Access(Mem.UB, "UB", 0, 4, "ub"), Access(Mem.UB, "UB", 14, 32, "ub"))

    # 16 + 20 + 16 elements = 104 B: the block spans four 32 B blocks of UB
    y, _ = pad_in(x, block_len=40, is_pad=True, left=16, right=16, pad_value=9.0)
    assert np.all(y[:16] == 9) and np.all(y[36:64] == 9)
    assert_bits_equal(y[16:36], x[:20])


def test_data_copy_pad_in_multi_block_strides():
    # 3 blocks of 5 float16 (10 B); GM gap 6 B = 3 elements; UB gap 1 block of 32 B = 16 elements
    x = np.arange(1, 97, dtype=np.float16)
    y, instr = pad_in(x, count=3, block_len=10, src_stride=6, dst_stride=1)
    for b in range(3):
        assert_bits_equal(y[32 * b:32 * b + 5], x[8 * b:8 * b + 5])
        assert_poisoned(y[32 * b + 5:32 * b + 16])
        assert np.all(y[32 * b + 16:32 * b + 32] == -3)
    assert instr.reads == tuple(Access(Mem.GM, "x", 16 * b, 16 * b + 10, "x") for b in range(3))
    assert instr.undefined == tuple(Access(Mem.UB, "UB", 64 * b + 10, 64 * b + 32, "ub") for b in range(3))
    assert (instr.count, instr.nbytes) == (15, 30)

    # blocks longer than 32 B: 2 x 20 float16 (40 B -> 64 B footprint), GM gap 8 B, UB gap 1 block
    y, _ = pad_in(x, count=2, block_len=40, src_stride=8, dst_stride=1)
    for b in range(2):
        assert_bits_equal(y[48 * b:48 * b + 20], x[24 * b:24 * b + 20])
        assert_poisoned(y[48 * b + 20:48 * b + 32])
        assert np.all(y[48 * b + 32:48 * b + 48] == -3)


def test_data_copy_pad_zero_blocks_is_a_noop():
    x = np.arange(1, 65, dtype=np.float16)
    y, instr = pad_in(x, count=0, block_len=10)
    assert np.all(y == -3)
    assert (instr.reads, instr.writes, instr.undefined) == ((), (), ())


@asc.jit
def pad_out_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, offset: int, count: int, block_len: int,
                   src_stride: int, dst_stride: int, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(t, xg, N)
    params = asc.DataCopyExtParams(count, block_len, src_stride, dst_stride, 0)
    asc.data_copy_pad(yg[offset:], t, params)  # <pad>


def test_data_copy_pad_out_writes_exactly_block_len_bytes():
    x = np.arange(1, 97, dtype=np.float16)
    y = np.full(96, -7, np.float16)
    result = pad_out_kernel[1](x, y, 3, 1, 10, 0, 0, 96)
    expected = np.full(96, -7, np.float16)
    expected[3:8] = x[:5]
    assert_bits_equal(y, expected)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    assert instr.pipe is Pipe.MTE3
    assert instr.writes == (Access(Mem.GM, "y", 6, 16, "y"),)
    assert instr.reads == (Access(Mem.UB, "UB", 0, 10, "ub"),)


def test_data_copy_pad_out_multi_block_strides():
    # 3 blocks of 3 float16 (6 B); UB gap 1 block (src_stride, 32 B blocks) -> UB step 64 B = 32 elements;
    # GM gap 4 B (dst_stride, bytes) -> GM step 10 B = 5 elements
    x = np.arange(1, 97, dtype=np.float16)
    y = np.full(96, -7, np.float16)
    result = pad_out_kernel[1](x, y, 1, 3, 6, 1, 4, 96)
    expected = np.full(96, -7, np.float16)
    for b in range(3):
        expected[1 + 5 * b:1 + 5 * b + 3] = x[32 * b:32 * b + 3]
    assert_bits_equal(y, expected)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    assert instr.writes == tuple(Access(Mem.GM, "y", 2 + 10 * b, 2 + 10 * b + 6, "y") for b in range(3))
    assert instr.reads == tuple(Access(Mem.UB, "UB", 64 * b, 64 * b + 6, "ub") for b in range(3))


@pytest.mark.parametrize("dtype, kwargs, match", [
    (np.float16, dict(block_len=5), r"block_len=5 must be a byte count .* multiple of sizeof\(float16\) = 2"),
    (np.float32, dict(block_len=6), r"block_len=6 .* multiple of sizeof\(float32\) = 4 \(block_len is in BYTES"),
    (np.float16, dict(block_len=10, left=17), r"left_padding=17 / right_padding=0 elements: each pad must be at most 32 B"),
    (np.float32, dict(block_len=8, right=9), r"right_padding=9 elements: each pad must be at most 32 B"),
    (np.float16, dict(block_len=10, count=4096), r"block_count=4096 outside \[0, 4095\]"),
])
def test_data_copy_pad_parameter_rules(dtype, kwargs, match):
    with raises_at(pad_in_kernel, "pad", match):
        pad_in(np.arange(64, dtype=dtype), **kwargs)


def test_data_copy_pad_padding_of_exactly_32_bytes_is_allowed():
    x = np.arange(1, 65, dtype=np.float32)
    y, _ = pad_in(x, block_len=4, is_pad=True, left=8, right=8, pad_value=2.0)
    assert np.all(y[:8] == 2) and y[8] == 1 and np.all(y[9:24] == 2)


def test_data_copy_pad_unsupported_on_310p3():
    with raises_at(pad_in_kernel, "pad", r"DataCopyPad does not exist on Ascend310P3 \(arch 2002\)"):
        pad_in(np.arange(64, dtype=np.float16), block_len=10, soc="Ascend310P3")


def test_data_copy_pad_misaligned_gm_stride_is_not_silently_floored():
    x = np.arange(1, 65, dtype=np.float16)
    with pytest.raises(asc.KernelError, match="align"):
        pad_in(x, count=2, block_len=4, src_stride=3, is_pad=True)
