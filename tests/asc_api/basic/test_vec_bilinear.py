"""bilinear_interpolation (issue 9 item 2) against the page's worked example and a model written here
from BilinearInterpolation(ISASI).md 功能说明: iteration k = v * h_repeat + h gathers the 8 DataBlocks of
src0 at byte offsets src0_offset[8k..8k+7]; each is multiplied by src1[k] (repeat_mode False) or by
src1[8k + j] for block j (True), rounded to half; the h_repeat products of a vertical iteration are added
in order (each sum rounded to half) and written at dst + v * v_r_offset.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc


@asc.jit
def kernel(x: asc.GlobalAddress, off: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
           H: asc.ConstExpr[int], V: asc.ConstExpr[int], MODE: asc.ConstExpr[bool], VR: asc.ConstExpr[int],
           MASK: asc.ConstExpr, TMP: asc.ConstExpr[int], SIZES: asc.ConstExpr):
    pipe = asc.TPipe()
    views, tensors = [], []
    for addr, n in zip((x, off, y, z), SIZES):
        g = asc.GlobalTensor()
        g.set_global_buffer(addr, n)
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=n * addr.dtype.sizeof())
        t = b.get(addr.dtype)
        asc.data_copy(t, g, n)
        views.append(g)
        tensors.append(t)
    tb = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tb, num=TMP)
    tmp = tb.get(asc.uint8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.bilinear_interpolation(tensors[3], tensors[0], tensors[1], tensors[2], MASK, H, MODE, 1, VR, V, tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(views[3], tensors[3], SIZES[3])


def model(src0, offsets, src1, h, v, mode, vr, dst, lanes):
    out = dst.copy()
    for vi in range(v):
        acc = None
        for hi in range(h):
            k = vi * h + hi
            blocks = np.concatenate([src0[o // 2:o // 2 + 16] for o in offsets[8 * k:8 * k + 8]])
            scale = np.repeat(src1[8 * k:8 * k + 8], 16) if mode else np.full(128, src1[k])
            p = (blocks.astype(np.float32) * scale.astype(np.float32)).astype(np.float16)
            acc = p if acc is None else (p.astype(np.float32) + acc.astype(np.float32)).astype(np.float16)
        base = vi * vr
        out[base:base + 128][lanes] = (acc.astype(np.float32) + 0).astype(np.float16)[lanes]
    return out


def _sizes(*arrays):
    return tuple(a.size for a in arrays)


def _run(h, v, mode, vr, mask=128, tmp=None, seed=0, soc=None):
    rng = np.random.default_rng(seed)
    src0 = rng.standard_normal(512).astype(np.float16)
    offsets = (rng.integers(0, 32, 8 * h * v) * 32).astype(np.uint32)
    src1 = rng.standard_normal(-(-(8 * h * v if mode else h * v) // 16) * 16).astype(np.float16)  # 32 B copies
    dst = rng.standard_normal(-(-(vr * (v - 1) + 128) // 16) * 16).astype(np.float16)  # 32 B copies
    want_src = (src0, offsets, src1, h, v, mode, vr, dst.copy())
    tmp = tmp or (512 + src1.size) * 32
    asc.launch(kernel, 1, (src0, offsets, src1, dst, h, v, mode, vr, mask, tmp, _sizes(src0, offsets, src1, dst)),
               soc=soc)
    return dst, want_src


def test_page_example():
    """The page's example: src0 = 1..512, offsets 0, 32, ..., 992, src1 = 2, 3, ..., hRepeat = vRepeat = 2,
    mask 128, vROffset 128, repeatMode false: dst[0:128] = src0[0:128]*2 + src0[128:256]*3, ..."""
    src0 = np.arange(1, 513).astype(np.float16)
    offsets = (np.arange(32) * 32).astype(np.uint32)
    src1 = np.arange(2, 18).astype(np.float16)
    dst = np.zeros(256, np.float16)
    asc.launch(kernel, 1, (src0, offsets, src1, dst, 2, 2, False, 128, 128, (512 + 16) * 32,
                           _sizes(src0, offsets, src1, dst)))
    s = src0.astype(np.float32)
    want0 = ((s[0:128] * 2).astype(np.float16).astype(np.float32) + (s[128:256] * 3)).astype(np.float16)
    want1 = ((s[256:384] * 4).astype(np.float16).astype(np.float32)
             + (s[384:512] * 5).astype(np.float16).astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(dst, np.concatenate([want0, want1]))


@pytest.mark.parametrize("h,v,mode,vr,mask", [(1, 1, False, 128, 128), (3, 2, True, 256, 128), (2, 3, False, 144, 64),
                                              (4, 1, True, 128, [0, 2 ** 64 - 1 - 2 ** 5])])
def test_against_model(h, v, mode, vr, mask):
    out, args = _run(h, v, mode, vr, mask)
    if isinstance(mask, int):
        lanes = np.arange(128) < mask
    else:
        bits = mask[0] | (mask[1] << 64)  # [low, high], as the vector instructions take it
        lanes = np.array([(bits >> i) & 1 == 1 for i in range(128)])
    np.testing.assert_array_equal(out, model(*args, lanes=lanes))


def test_rules():
    with pytest.raises(asc.KernelError, match=r"at least .* = 16896 B .* writes 1536 B of it, past its end"):
        _run(2, 2, False, 128, tmp=1056)  # the pyasc sample's (512 + 16) * 2 bytes
    with pytest.raises(asc.KernelError, match="v_r_offset"):
        _run(1, 2, False, 136)
    with pytest.raises(asc.KernelError, match="vbi"):
        _run(1, 1, False, 128, soc="Ascend310P3")
