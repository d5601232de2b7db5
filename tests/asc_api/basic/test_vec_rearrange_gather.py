"""Gather and Gatherb (issue 9 item 5) against models written here from the AD-API pages
(Memory矢量计算/离散与聚合/Gather.md, Gatherb(ISASI).md): no code shared with fusekit.

Gather.md 功能说明: ``dst[i] = src[(srcBaseAddr + srcOffset[i]) // sizeof(T)]``; offsets in bytes;
the split form consumes ``256 / sizeof(T)`` offsets per repeat and writes dst ``dstRepStride``
blocks apart. Gatherb.md: block j of repeat r = the 32 B at byte offset[8r + j].
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import lane_mask, run

RNG = np.random.default_rng(7)
NP = {"float16": np.float16, "float32": np.float32, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
      "uint32": np.uint32}


def _src(dtype: str, n: int) -> np.ndarray:
    return (np.arange(n) % 1000 * 3 + 1).astype(NP[dtype])


def _gather_model(dst, src, offs, base, lanes, repeats, active, rep_stride):
    out = dst.copy()
    size = src.itemsize
    per = 32 // size
    for r in range(repeats):
        for k in range(lanes):
            if active[k]:
                out[r * rep_stride * per + k] = src[(base + int(offs[r * lanes + k])) // size]
    return out


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 127, 128, 129, 300])
def test_gather_count_form(dtype, count):
    size = np.dtype(NP[dtype]).itemsize
    src = _src(dtype, 512)
    idx = RNG.integers(0, 512 - 16, max(count, 1))
    base = 16 * size
    offs = (idx * size).astype(np.uint32)
    dst = np.full(max(count, 1) + 8, 7, NP[dtype])
    out, instrs = run(lambda d, s, o: asc.gather(d, s, o, base, count), dst, src, offs)
    want = dst.copy()
    want[:count] = src[idx[:count] + 16]
    np.testing.assert_array_equal(out, want)
    (g,) = instrs
    assert (g.op, g.cost, g.count, g.repeats) == ("gather", "Gather", count, -(-count // (256 // size)))


def test_gather_page_example():
    """Gather.md 结果示例: offsets 254, 252, ..., 0 over 128 halves 0..127 give 127, 126, ..., 0."""
    src = np.arange(128).astype(np.float16)
    offs = np.arange(254, -1, -2).astype(np.uint32)
    out, _ = run(lambda d, s, o: asc.gather(d, s, o, 0, 128), np.zeros(128, np.float16), src, offs)
    np.testing.assert_array_equal(out, np.arange(127, -1, -1).astype(np.float16))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("mask,repeats,rep_stride", [
    (128, 2, 8), (37, 3, 8), ([0x0F0F_0000_FFFF_0001, 0x8000_0000_0000_0001], 2, 16), (64, 1, 0), (5, 0, 8)])
def test_gather_split_form(dtype, mask, repeats, rep_stride):
    size = np.dtype(NP[dtype]).itemsize
    lanes = 256 // size
    if isinstance(mask, list) and lanes == 64:
        mask = mask[:1]
    src = _src(dtype, 1024)
    offs = (RNG.integers(0, 1024, max(repeats, 1) * lanes) * size).astype(np.uint32)
    dst = np.full(max(repeats, 1) * max(rep_stride, 8) * 32 // size, -1, NP[dtype])
    out, instrs = run(lambda d, s, o: asc.gather(d, s, o, 0, mask, repeats, rep_stride), dst, src, offs)
    active = lane_mask(mask, lanes)
    np.testing.assert_array_equal(out, _gather_model(dst, src, offs, 0, lanes, repeats, active, rep_stride))
    assert instrs[0].count == int(active.sum()) * repeats


def test_gather_records_only_gathered_bytes():
    src = np.arange(256).astype(np.float32)
    offs = np.array([0, 4, 8, 400, 404], np.uint32)
    _, (g,) = run(lambda d, s, o: asc.gather(d, s, o, 0, 5), np.zeros(8, np.float32), src, offs)
    src_reads = sorted((a.start, a.stop) for a in g.reads if a.nbytes != 20)
    assert [b - a for a, b in src_reads] == [12, 8]  # elements 0..2, then 100..101


def test_gather_repeat_255():
    src = _src("float16", 256)
    offs = (RNG.integers(0, 256, 255 * 128) * 2).astype(np.uint32)
    dst = np.zeros(255 * 128, np.float16)
    out, _ = run(lambda d, s, o: asc.gather(d, s, o, 0, 128, 255, 8), dst, src, offs)
    np.testing.assert_array_equal(out, src[offs // 2])


@pytest.mark.parametrize("offset,base,needle", [(3, 0, "not a multiple"), (0, 2, "src_base"), (4096, 0, "reaches element")])
def test_gather_bad_offsets(offset, base, needle):
    offs = np.array([0, offset], np.uint32)
    with pytest.raises(asc.KernelError, match=needle):
        run(lambda d, s, o: asc.gather(d, s, o, base, 2), np.zeros(8, np.float32), np.zeros(64, np.float32), offs)


def test_gather_refuses_bfloat16_on_310p_and_bad_offset_dtype():
    with pytest.raises(asc.KernelError, match="does not support int8"):
        run(lambda d, s, o: asc.gather(d, s, o, 0, 2), np.zeros(32, np.int8), np.zeros(32, np.int8),
            np.zeros(8, np.uint32))
    with pytest.raises(asc.KernelError, match="uint32"):
        run(lambda d, s, o: asc.gather(d, s, o, 0, 2), np.zeros(8, np.float32), np.zeros(8, np.float32),
            np.zeros(8, np.int32))


def test_gather_bfloat16_310p_refused():
    @asc.jit
    def k(x: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4096)
        t = buf.get(asc.bfloat16)
        o = buf.get(asc.uint32)[512:]
        asc.duplicate(o, 0, 16)
        asc.gather(t[256:], t, o, 0, 16)

    with pytest.raises(asc.KernelError, match="bfloat16"):
        k[1](np.zeros(8, np.float32), soc="Ascend310P3")
    k[1](np.zeros(8, np.float32))  # A2 takes it


def test_gather_form_mismatch_lists_forms():
    with pytest.raises(asc.KernelError, match="Accepted forms"):
        run(lambda d, s, o: asc.gather(d, s, o, 0, 128, 2), np.zeros(8, np.float32), np.zeros(8, np.float32),
            np.zeros(8, np.uint32))


# ---------------------------------------------------------------- gatherb

@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
@pytest.mark.parametrize("repeats,blk,rep", [(0, 1, 8), (1, 1, 8), (2, 2, 16), (3, 0, 8), (2, 1, 0)])
def test_gatherb(dtype, repeats, blk, rep):
    size = np.dtype(NP[dtype]).itemsize
    per = 32 // size
    src = np.arange(64 * per).astype(NP[dtype])
    offs = (RNG.integers(0, 64, max(repeats, 1) * 8) * 32).astype(np.uint32)
    dst = np.full(max(repeats, 1) * 16 * per, 9, NP[dtype])
    params_blk = blk
    out, instrs = run(lambda d, s, o: asc.gatherb(d, s, o, repeats, asc.GatherRepeatParams(params_blk, rep)),
                      dst, src, offs)
    want = dst.copy()
    eff_blk = blk or 1  # Gatherb.md 表3: dstBlkStride 0 is taken as 1
    for i in range(repeats):
        for j in range(8):
            start = (i * rep + j * eff_blk) * per
            want[start:start + per] = src[offs[i * 8 + j] // size:][:per]
    np.testing.assert_array_equal(out, want)
    assert instrs[0].repeats == repeats


def test_gatherb_rules():
    src = np.arange(256).astype(np.uint16)
    with pytest.raises(asc.KernelError, match="multiple of 32"):
        run(lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams()), np.zeros(128, np.uint16), src,
            np.array([2] * 8, np.uint32))
    with pytest.raises(asc.KernelError, match="does not support float16"):
        run(lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams()), np.zeros(128, np.float16),
            src.astype(np.float16), np.zeros(8, np.uint32))
    with pytest.raises(asc.KernelError, match="310P|supported: none"):
        run(lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams()), np.zeros(128, np.uint16), src,
            np.zeros(8, np.uint32), soc="Ascend310P3")


# ---------------------------------------------------------------- scatter (Scatter(ISASI).md; 310P only)

@pytest.mark.parametrize("dtype", ["float16", "uint16", "float32", "uint32"])
@pytest.mark.parametrize("count", [0, 1, 127, 129])
def test_scatter_count_form(dtype, count):
    size = np.dtype(NP[dtype]).itemsize
    src = _src(dtype, 256)
    perm = RNG.permutation(512)[:max(count, 1)]
    offs = (perm * size).astype(np.uint32)
    dst = np.full(512, 4, NP[dtype])
    out, _ = run(lambda d, s, o: asc.scatter(d, s, o, 0, count), dst, src, offs, soc="Ascend310P3")
    want = dst.copy()
    want[perm[:count]] = src[:count]
    np.testing.assert_array_equal(out, want)


def test_scatter_split_form_and_rules():
    src = np.arange(512).astype(np.float32)
    perm = RNG.permutation(512)[:128]
    offs = (perm * 4).astype(np.uint32)
    out, _ = run(lambda d, s, o: asc.scatter(d, s, o, 0, [0xFFFF_0000_0000_FFFF], 2, 16), np.zeros(512, np.float32),
                 src, offs, soc="Ascend310P3")
    want = np.zeros(512, np.float32)
    active = lane_mask([0xFFFF_0000_0000_FFFF], 64)
    for r in range(2):
        for k in np.flatnonzero(active):
            want[perm[r * 64 + k]] = src[r * 16 * 8 + k]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(asc.KernelError, match="same dst element"):
        run(lambda d, s, o: asc.scatter(d, s, o, 0, 2), np.zeros(8, np.float32), np.zeros(8, np.float32),
            np.zeros(8, np.uint32), soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match="does not support float32 .* Ascend910|supported: none"):
        run(lambda d, s, o: asc.scatter(d, s, o, 0, 2), np.zeros(8, np.float32), np.zeros(8, np.float32),
            np.arange(8, dtype=np.uint32) * 4)
