"""Brcb, Copy and Transpose (issue 9 item 5) against models written here from the AD-API pages:
Brcb.md (数据填充: block (r, j) of dst = src[8r + j]), Copy（UBToUB掩码式高维数据搬运）.md (高维切分
layout with CopyRepeatParams; Counter mode: mask elements per repeat, repeat_time counts),
Transpose.md (``src.T`` on 16 x 16; ``np.transpose`` axes for NCHW <-> NHWC).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import lane_mask, run, split_elements

NP = {"float16": np.float16, "float32": np.float32, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
      "uint32": np.uint32}


# ---------------------------------------------------------------- brcb

@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("repeats,blk,rep", [(0, 1, 8), (1, 1, 8), (2, 1, 8), (3, 2, 16), (2, 1, 4)])
def test_brcb(dtype, repeats, blk, rep):
    per = 32 // np.dtype(NP[dtype]).itemsize
    src = (np.arange(max(repeats, 1) * 8) + 1).astype(NP[dtype])
    dst = np.zeros((max(repeats, 1) * rep + 8 * blk) * per, NP[dtype])
    out, (b,) = run(lambda d, s, _: asc.brcb(d, s, repeats, asc.BrcbRepeatParams(blk, rep)), dst, src)
    want = dst.copy()
    for i in range(repeats):  # Brcb.md 功能说明 pseudo-code
        for j in range(8):
            start = (i * rep + j * blk) * per
            want[start:start + per] = src[i * 8 + j]
    np.testing.assert_array_equal(out, want)
    assert (b.op, b.cost, b.repeats) == ("brcb", "Brcb", repeats)


def test_brcb_repeat_255():
    src = np.arange(255 * 8).astype(np.float32)
    out, _ = run(lambda d, s, _: asc.brcb(d, s, 255, asc.BrcbRepeatParams()), np.zeros(255 * 64, np.float32), src)
    np.testing.assert_array_equal(out, np.repeat(src, 8))


def test_brcb_rules():
    with pytest.raises(asc.KernelError, match="dstBlkStride"):
        run(lambda d, s, _: asc.brcb(d, s, 1, asc.BrcbRepeatParams(0, 8)), np.zeros(128, np.float16),
            np.zeros(16, np.float16))
    with pytest.raises(asc.KernelError, match="16 elements|need 16"):
        run(lambda d, s, _: asc.brcb(d, s, 2, asc.BrcbRepeatParams()), np.zeros(128, np.float32),
            np.zeros(8, np.float32))
    with pytest.raises(asc.KernelError, match="does not support int8"):
        run(lambda d, s, _: asc.brcb(d, s, 1, asc.BrcbRepeatParams()), np.zeros(256, np.int8), np.zeros(32, np.int8))


# ---------------------------------------------------------------- copy

@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("mask,repeats,strides", [
    (128, 2, (1, 1, 8, 8)), (1, 1, (1, 1, 8, 8)), (63, 3, (1, 2, 8, 16)), ("holes", 2, (2, 1, 16, 8)),
    (64, 0, (1, 1, 8, 8)), (128, 4, (1, 1, 8, 0))])
def test_copy_normal_mode(dtype, mask, repeats, strides):
    size = np.dtype(NP[dtype]).itemsize
    lanes = 256 // size
    if mask == "holes":
        mask = [0xF0F0_F0F0_0000_FFFF, 0x1] if lanes == 128 else [0xF0F0_F0F0_0000_FFFF]
    dblk, sblk, drep, srep = strides
    src = np.arange(4096 // size).astype(NP[dtype])
    dst = np.full(4096 // size, 3, NP[dtype])
    params = asc.CopyRepeatParams(dblk, sblk, drep, srep)
    out, instrs = run(lambda d, s, _: asc.copy(d, s, mask, repeats, params), dst, src)
    active = lane_mask(mask, lanes)
    want = dst.copy()
    d_el = split_elements(repeats, lanes, size, dblk, drep, active)
    s_el = split_elements(repeats, lanes, size, sblk, srep, active)
    for dr, sr in zip(d_el, s_el):
        want[dr] = src[sr]
    np.testing.assert_array_equal(out, want)


def test_copy_counter_mode_mask_per_repeat():
    """Copy.md 约束说明: in Counter mode the mask is the element count of each repeat and repeat_time counts."""
    src = np.arange(1024).astype(np.float16)

    def body(d, s, _):
        asc.set_mask_count()
        asc.copy(d, s, 100, 3, asc.CopyRepeatParams(1, 1, 8, 8))
        asc.set_mask_norm()

    out, _ = run(body, np.zeros(1024, np.float16), src)
    want = np.zeros(1024, np.float16)
    for r in range(3):
        want[r * 128:r * 128 + 100] = src[r * 128:r * 128 + 100]
    np.testing.assert_array_equal(out, want)


def test_copy_is_set_mask_false_uses_register():
    src = np.arange(512).astype(np.float32)

    def body(d, s, _):
        asc.set_vector_mask(0, 0b1011, dtype=asc.float32)
        asc.copy(d, s, 0, 2, asc.CopyRepeatParams(1, 1, 8, 8), is_set_mask=False)

    out, _ = run(body, np.zeros(512, np.float32), src)
    want = np.zeros(512, np.float32)
    for r in range(2):
        want[[64 * r, 64 * r + 1, 64 * r + 3]] = src[[64 * r, 64 * r + 1, 64 * r + 3]]
    np.testing.assert_array_equal(out, want)


def test_copy_repeat_255_and_refusals():
    src = np.arange(255 * 64).astype(np.float32)
    out, _ = run(lambda d, s, _: asc.copy(d, s, 64, 255, asc.CopyRepeatParams(1, 1, 8, 8)), np.zeros_like(src), src)
    np.testing.assert_array_equal(out, src)
    with pytest.raises(asc.KernelError, match="supported: none"):
        run(lambda d, s, _: asc.copy(d, s, 64, 1, asc.CopyRepeatParams(1, 1, 8, 8)), np.zeros(64, np.float32),
            np.zeros(64, np.float32), soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match=r"\[0, 4095\]"):
        run(lambda d, s, _: asc.copy(d, s, 64, 1, asc.CopyRepeatParams(1, 1, 4096, 8)), np.zeros(64, np.float32),
            np.zeros(64, np.float32))
    with pytest.raises(asc.KernelError, match="does not support int8"):
        run(lambda d, s, _: asc.copy(d, s, 64, 1, asc.CopyRepeatParams(1, 1, 8, 8)), np.zeros(256, np.int8),
            np.zeros(256, np.int8))


# ---------------------------------------------------------------- transpose

@pytest.mark.parametrize("dtype", ["float16", "int16", "uint16"])
@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_transpose_16x16(dtype, soc):
    src = np.arange(256).astype(NP[dtype])
    out, (t,) = run(lambda d, s, _: asc.transpose(d, s), np.zeros(256, NP[dtype]), src, soc=soc)
    np.testing.assert_array_equal(out, src.reshape(16, 16).T.ravel())
    assert (t.op, t.cost) == ("transpose", "Transpose")


def test_transpose_in_place_and_refusals():
    @asc.jit
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=512)
        t = buf.get(asc.float16)
        gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x, 256)
        gy.set_global_buffer(y, 256)
        asc.data_copy(t, gx, 256)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.transpose(t, t)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(gy, t, 256)

    x = np.arange(256).astype(np.float16)
    y = np.zeros(256, np.float16)
    k[1](x, y)
    np.testing.assert_array_equal(y, x.reshape(16, 16).T.ravel())
    with pytest.raises(asc.KernelError, match="does not support float32"):
        run(lambda d, s, _: asc.transpose(d, s), np.zeros(256, np.float32), np.zeros(256, np.float32))
    with pytest.raises(asc.KernelError, match="256"):
        run(lambda d, s, _: asc.transpose(d, s), np.zeros(128, np.float16), np.zeros(256, np.float16))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "int32"])
@pytest.mark.parametrize("kind", ["TRANSPOSE_NCHW2NHWC", "TRANSPOSE_NHWC2NCHW"])
@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_transpose_nchw(dtype, kind, soc):
    np_t = {"int8": np.int8, **NP}[dtype]
    size = np.dtype(np_t).itemsize
    n, c, h, w = 2, 3, 4, 32 // size  # h*w*sizeof multiple of 32
    src = (np.arange(n * c * h * w) % 100).astype(np_t)
    tmp_bytes = (2 * c + 1) * (32 if size == 1 else 16) * (32 // size) * size
    params = asc.TransposeParamsExt(n, c, h, w, getattr(asc.TransposeType, kind))

    def body(d, s, tmp):
        asc.transpose(d, s, tmp.reinterpret_cast(asc.uint8), params)

    out, (t,) = run(body, np.zeros(src.size, np_t), src, np.zeros(tmp_bytes, np.uint8), soc=soc)
    if kind == "TRANSPOSE_NCHW2NHWC":
        want = np.transpose(src.reshape(n, c, h, w), (0, 2, 3, 1)).ravel()
    else:
        want = np.transpose(src.reshape(n, h, w, c), (0, 3, 1, 2)).ravel()
    np.testing.assert_array_equal(out, want)
    assert bool(t.undefined) == (soc == "Ascend910B1")  # the temporary buffer: A2 only (表 sharedTmpBuffer)


def test_transpose_ext_rules():
    p = asc.TransposeParamsExt(1, 16, 4, 4, asc.TransposeType.TRANSPOSE_NCHW2NHWC)
    with pytest.raises(asc.KernelError, match="temporary buffer"):
        run(lambda d, s, tmp: asc.transpose(d, s, tmp, p), np.zeros(256, np.float16), np.zeros(256, np.float16),
            np.zeros(32, np.uint8))
    bad = asc.TransposeParamsExt(1, 1, 16, 16, asc.TransposeType.TRANSPOSE_NZ2ND_0213)
    with pytest.raises(asc.KernelError, match="当前不支持"):
        run(lambda d, s, tmp: asc.transpose(d, s, tmp, bad), np.zeros(256, np.float16), np.zeros(256, np.float16),
            np.zeros(32, np.uint8))
    b16 = asc.TransposeParamsExt(transpose_type=asc.TransposeType.TRANSPOSE_ND2ND_B16)
    with pytest.raises(asc.KernelError, match="uint16"):
        run(lambda d, s, tmp: asc.transpose(d, s, tmp, b16), np.zeros(256, np.float16), np.zeros(256, np.float16),
            np.zeros(32, np.uint8))
    src = np.arange(256).astype(np.uint16)
    out, _ = run(lambda d, s, tmp: asc.transpose(d, s, tmp, b16), np.zeros(256, np.uint16), src,
                 np.zeros(32, np.uint8))
    np.testing.assert_array_equal(out, src.reshape(16, 16).T.ravel())
