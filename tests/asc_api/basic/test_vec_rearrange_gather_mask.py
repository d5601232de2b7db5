"""GatherMask and get_gather_mask_remain_count (issue 9 item 5) against a model written here from
AD-API Memory矢量计算/比较与选择/GatherMask.md: built-in patterns 1-7 (lane k <-> bit k from the
least significant bit: 1 = ...0101 keeps even lanes, 3 = ...0001 keeps lane 0 of four), a user
pattern consumed bit by bit per repeat, kept elements packed from dst[0]; Counter mode: mask
elements per repeat on A2 (配置方式一), mask elements in all on 310P (配置方式二).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import run

NP = {"float16": np.float16, "float32": np.float32, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
      "uint32": np.uint32}
BUILTIN = {1: "0101", 2: "1010", 3: "0001", 4: "0010", 5: "0100", 6: "1000", 7: "1111"}  # the page's strings


def _builtin(mode: int, lanes: int) -> np.ndarray:
    motif = BUILTIN[mode][::-1]  # written most significant bit first; lane 0 is the last character
    return np.array([motif[k % len(motif)] == "1" for k in range(lanes)])


def _model(src, lanes, repeats, per_repeat_active, pattern_rows, blk, rep):
    per = 32 // src.itemsize
    out = []
    for r in range(repeats):
        for k in range(lanes):
            if per_repeat_active[r][k] and pattern_rows[r][k]:
                out.append(src[r * rep * per + (k // per) * blk * per + k % per])
    return np.array(out, src.dtype)


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("mode", range(1, 8))
def test_builtin_patterns_normal_mode(dtype, mode):
    size = np.dtype(NP[dtype]).itemsize
    lanes = 256 // size
    src = np.arange(3 * lanes).astype(NP[dtype])
    dst = np.full(3 * lanes, 5, NP[dtype])
    got = []

    def body(d, s, _):
        got.append(asc.gather_mask(d, s, mode, False, 0, asc.GatherMaskParams(1, 3, 8, 0)))
        got.append(asc.get_gather_mask_remain_count())

    out, _ = run(body, dst, src)
    bits = _builtin(mode, lanes)
    kept = _model(src, lanes, 3, [np.ones(lanes, bool)] * 3, [bits] * 3, 1, 8)
    np.testing.assert_array_equal(out[:kept.size], kept)
    np.testing.assert_array_equal(out[kept.size:], dst[kept.size:])
    assert int(got[0]) == int(got[1]) == kept.size


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_user_pattern_with_strides(dtype):
    """The page's figure 2 pattern 0x9999... keeps lanes 0 and 3 of every four."""
    size = np.dtype(NP[dtype]).itemsize
    lanes = 256 // size
    u = np.uint16 if size == 2 else np.uint32
    src = np.arange(8 * lanes).astype(NP[dtype])
    rng = np.random.default_rng(3)
    pattern = np.concatenate([np.full(lanes // (8 * np.dtype(u).itemsize), 0x99999999 & np.iinfo(u).max, u),
                              rng.integers(0, np.iinfo(u).max, 64, dtype=u)])
    dst = np.zeros(4 * lanes, NP[dtype])
    out, (g,) = run(lambda d, s, p: asc.gather_mask(d, s, p, False, 0, asc.GatherMaskParams(2, 3, 16, 1)),
                    dst, src, pattern)
    raw = pattern.view(np.uint8)
    rows = [np.unpackbits(raw[r * 32:r * 32 + lanes // 8], bitorder="little").astype(bool) for r in range(3)]
    kept = _model(src, lanes, 3, [np.ones(lanes, bool)] * 3, rows, 2, 16)
    np.testing.assert_array_equal(out[:kept.size], kept)
    assert rows[0][:8].tolist() == [True, False, False, True] * 2
    assert g.nbytes == kept.size * size


def test_counter_mode_a2_mask_per_repeat_and_mask_register_after():
    """Page example parameters: mask=70, repeatTimes=2, src1RepeatStride=0, src0RepeatStride=8 (A2: 配置方式一)."""
    src = np.arange(512).astype(np.float16)
    got = []

    def body(d, s, _):
        got.append(asc.gather_mask(d, s, 7, True, 70, asc.GatherMaskParams(1, 2, 8, 0)))
        asc.add(d[256:], s, s, 0, 1, asc.BinaryRepeatParams(), is_set_mask=False)

    out, _ = run(body, np.zeros(512, np.float16), src)
    np.testing.assert_array_equal(out[:140], np.concatenate([src[:70], src[128:198]]))
    assert int(got[0]) == 140
    # the register now holds (high 0, low 70) in Normal mode: a bit mask, lanes 1, 2 and 6 (70 = 0b1000110)
    want = np.zeros(128, np.float16)
    want[[1, 2, 6]] = src[[1, 2, 6]] * 2
    np.testing.assert_array_equal(out[256:384], want)


def test_counter_mode_310p_mask_in_all():
    src = np.arange(512).astype(np.float32)
    got = []

    def body(d, s, _):
        got.append(asc.gather_mask(d, s, 1, True, 100, asc.GatherMaskParams(1, 9, 8, 0)))

    out, _ = run(body, np.zeros(512, np.float32), src, soc="Ascend310P3")
    np.testing.assert_array_equal(out[:50], src[:100:2])
    assert int(got[0]) == 50


def test_rules():
    z = np.zeros(128, np.float16)
    with pytest.raises(asc.KernelError, match=r"\[1, 6\]"):
        run(lambda d, s, _: asc.gather_mask(d, s, 7, False, 0, asc.GatherMaskParams()), z, z, soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match="uint16"):
        run(lambda d, s, p: asc.gather_mask(d, s, p, False, 0, asc.GatherMaskParams()), z, z, np.zeros(8, np.uint32))
    with pytest.raises(asc.KernelError, match="does not support int8"):
        run(lambda d, s, _: asc.gather_mask(d, s, 1, False, 0, asc.GatherMaskParams()), np.zeros(256, np.int8),
            np.zeros(256, np.int8))
    with pytest.raises(asc.KernelError, match="no gather_mask"):
        run(lambda d, s, _: asc.get_gather_mask_remain_count(), z, z)


def test_counter_mode_takes_more_than_one_repeat_of_elements_per_repeat():
    """配置方式一 with mask over 256 B: the page's own example (mask 70 of uint32 per repeat, repeatTimes 2,
    src0RepeatStride 4 blocks, so the repeats' elements overlap; user pattern 0x7E7C00A5 words, src1RepeatStride 0),
    as asc-devkit's gather sample (scenario 2) computes its golden data."""
    src = np.random.default_rng(5).integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    pattern = np.full(32, 0x7E7C00A5, np.uint32)
    dst = np.zeros(256, np.uint32)
    got = []

    def body(d, s, p):
        got.append(asc.gather_mask(d, s, p, True, 70, asc.GatherMaskParams(1, 2, 4, 0)))

    out, _ = run(body, dst, src, pattern)
    bits = np.unpackbits(pattern.view(np.uint8), bitorder="little").astype(bool)[:70]
    kept = _model(src, 70, 2, [np.ones(70, bool)] * 2, [bits] * 2, 1, 4)
    assert int(got[0]) == kept.size
    np.testing.assert_array_equal(out[:kept.size], kept)
