"""Compare and select (issue 9 item 4) against the pages' worked examples and models written here.

Bit layout (Compare.md: "dst按照小端顺序排序成二进制结果"): element i is bit i % 8 of byte i // 8; the test
model packs bits with Python integer shifts, not numpy.packbits. Select.md: bit 1 takes src0, bit 0 src1;
mode 0 uses the first 256 / sizeof(T) selMask bits for every repeat, modes 1 and 2 consume the bits
repeat after repeat.
"""

from __future__ import annotations

import json
import operator

import numpy as np
import pytest

from fusekit import asc

from vector_harness import lane_mask, run
from support import TESTS

RNG = np.random.default_rng(5)
EXAMPLES = json.loads((TESTS / "data" / "select_page_examples.json").read_text())
OPS = {asc.CMPMODE.LT: operator.lt, asc.CMPMODE.GT: operator.gt, asc.CMPMODE.EQ: operator.eq,
       asc.CMPMODE.LE: operator.le, asc.CMPMODE.GE: operator.ge, asc.CMPMODE.NE: operator.ne}


def pack(bits) -> list[int]:
    """Bits (element order) -> bytes, element i at bit i % 8 of byte i // 8."""
    out = [0] * ((len(bits) + 7) // 8)
    for i, b in enumerate(bits):
        if b:
            out[i // 8] |= 1 << (i % 8)
    return out


def bit(mask_bytes, i) -> bool:
    return (int(mask_bytes[i // 8]) >> (i % 8)) & 1 == 1


# --------------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------------

PRIMES = np.array([2, 3, 5, 7, 11, 13, 17, 19], np.float32)
EVENS = np.array([2, 4, 6, 8, 10, 12, 14, 16], np.float32)


@pytest.mark.parametrize("mode,byte", [(asc.CMPMODE.GT, 240), (asc.CMPMODE.GE, 241), (asc.CMPMODE.LE, 15),
                                       (asc.CMPMODE.EQ, 1), (asc.CMPMODE.NE, 254), (asc.CMPMODE.LT, 14)])
def test_compare_page_example(mode, byte):
    """Compare.md 结果示例: [2 3 5 7 11 13 17 19] vs [2 4 6 8 10 12 14 16]: GT 240 (0b11110000), GE 241, LE 15,
    EQ 1, NE 0b11111110 (printed there as "126(0b11111110)": the binary is right, 0b11111110 is 254); LT (not
    printed as a byte there) is 0b00001110 by the same layout."""
    a, b = np.tile(PRIMES, 32), np.tile(EVENS, 32)
    out, ins = run(lambda d, s0, s1: asc.compare(d, s0, s1, mode, 256), np.zeros(32, np.uint8), a, b)
    assert out.tolist() == [byte] * 32
    assert (ins[-1].op, ins[-1].cost, ins[-1].repeats) == ("compare", "Compare", 4)
    assert [(w.stop - w.start) for w in ins[-1].writes] == [32]


COMPARES_SRC = [16.604824, 45.069473, 65.108345, -59.68792, 21.043684, 75.90726, -27.046307, -40.10546, -5.933778,
                83.56574, 58.87062, -12.77814, 28.17882, 62.549377, -22.310246, -67.69001, 81.06072, 69.988945, 69.10082,
                -6.667376, 96.20256, 18.532446, -66.56364, -32.531246, 49.980835, 35.668995, -16.847628, 1.3236234,
                10.0143795, 43.878166, 26.628105, 31.774637, 47.9279, 79.7291, -54.09651, 95.49459, -18.404795,
                -86.84594, 9.406091, -79.54437, 0.49116692, -48.151714, -12.97062, -99.89055, 23.475513, -27.366564,
                -69.229675, 83.613304, 52.14729, 40.98426, -23.422009, -53.386215, 1.6576616, -62.36946, 54.693733,
                66.2058, -4.0042257, -25.351263, 1.0000885, -6.458584, 25.447659, 71.647316, 82.31162, -7.7359715,
                28.107353, -79.22045, 20.292479, 67.7434, -76.054085, -7.754251, 38.632687, -4.8460293, -69.791954,
                -57.574455, -99.96178, -73.29611, -68.57477, 98.200035, -55.30482, -55.590027, 79.53274, -1.862139,
                -37.60953, -12.225406, -35.2875, -24.047668, -66.07609, 21.9362, 80.603516, 28.928387, 26.579298,
                97.6649, 78.94723, -89.86824, 73.29788, 18.957182, -73.87053, -23.508097, -51.02931, 39.158726,
                -96.61422, -41.192455, 54.973663, 47.58695, -3.9818003, -81.05088, -67.62415, -17.491713, -34.916042,
                -95.993744, -3.4719822, -55.956417, 6.223455, 12.240832, 15.055512, 94.70584, -13.33949, -50.46866,
                54.612816, -28.521824, -87.63997, 59.53054, 41.000504, -31.266075, -31.419422, -32.940186, 53.449913,
                50.012768, -13.663364, 40.931725, -68.80396, -86.63726, 76.866585, -83.76385, 3.7227867, 58.443035,
                -74.333046, -92.52674, 24.249512, -7.935491, 24.197245, -34.85033, 67.854645, 72.65312, 13.622443,
                -70.94266, 15.401667, -9.332295, -86.61463, 72.659676, -83.63352, 9.279887, 81.037964, 46.285606,
                -12.967846, -48.72901, 69.07614, -40.355286, -94.257034, -45.514374, 24.966864, -9.657219, 61.803864,
                -83.09603, 77.769035, -97.44226, -89.71987, -53.969315, 43.892918, 73.88798, 67.23104, 36.65282,
                -93.70069, -87.48934, -27.679005, -36.825226, -30.117033, -41.579655, -97.325325, 77.1972, -49.883194,
                33.061394, -63.844925, 89.74327, 64.549416, 80.16943, 73.26347, -87.307175, -96.62777, 81.8532,
                7.5365276, 28.357092, 59.896378, -15.95738, -77.42723, 0.03529428, -20.263502, 45.59324, -90.160835,
                89.478004, 57.608685, 60.71819, 45.8125, 39.94484, -48.77375, -56.897358, 5.2580256, -6.937905,
                -49.80309, -42.527523, 72.91772, 89.53271, -62.181187, 18.490683, -69.40782, 6.141204, 13.938042,
                75.312515, 21.766457, -8.157599, 55.53147, -30.789118, -12.087165, 82.435684, 23.4884, 82.73172,
                -2.026827, -8.124383, -10.707488, -74.32759, -54.702602, 14.209252, 93.73145, 98.93554, 52.803623,
                32.200726, 41.823833, 90.193756, -34.512424, -85.64022, 97.47763, 33.353424, 94.84875, 23.03139,
                99.97347, -72.47978, 19.51753, -88.28579, -88.70721, -18.659292, -79.5277, 62.90431, 21.837631,
                45.989056, -9.62086, 11.4855795]
COMPARES_DST = [0, 0, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 16, 32, 0, 0, 0, 0, 0, 0, 32, 0, 4, 16, 0, 0, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("form", ["count", "split"])
def test_compare_scalar_page_example(form):
    """Compares.md 结果示例: 256 floats LT src1Scalar = -95.16087 -> the printed 32 bytes (count form, and split
    form mask 64, repeat 4, UnaryRepeatParams(1, 1, 8, 8))."""
    x = np.array(COMPARES_SRC, np.float32)
    if form == "count":
        body = lambda d, s0, s1: asc.compare_scalar(d, s0, -95.16087, asc.CMPMODE.LT, 256)  # noqa: E731
    else:
        body = lambda d, s0, s1: asc.compare_scalar(d, s0, -95.16087, asc.CMPMODE.LT, 64, 4,  # noqa: E731
                                                    asc.UnaryRepeatParams(1, 1, 8, 8))
    out, _ = run(body, np.zeros(32, np.uint8), x)
    assert out.tolist() == COMPARES_DST


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mode", list(asc.CMPMODE))
def test_compare_split_strides_model(dtype, mode):
    """Split form: every lane of each repeat (the mask is reserved on A2/A3, Compare.md), source strides
    applied, dst_rep_stride counting 4 / sizeof(T) bytes."""
    lanes = 256 // np.dtype(dtype).itemsize
    per = 32 // np.dtype(dtype).itemsize
    repeats, blk0, rep0, blk1, rep1, dst_rep = 3, 2, 16, 1, 8, 12
    n0, n1 = (repeats - 1) * rep0 * per + 7 * blk0 * per + per, repeats * lanes
    a = RNG.integers(-3, 3, n0).astype(dtype)
    b = RNG.integers(-3, 3, n1).astype(dtype)
    params = asc.BinaryRepeatParams(1, blk0, blk1, dst_rep, rep0, rep1)
    unit = 4 // np.dtype(dtype).itemsize
    d0 = np.full(repeats * dst_rep * unit + lanes // 8, 0xAA, np.uint8)
    out, ins = run(lambda d, s0, s1: asc.compare(d, s0, s1, mode, [1, 0], repeats, params), d0.copy(), a, b)
    want = d0.copy()
    for r in range(repeats):
        bits = []
        for k in range(lanes):
            ea = (r * rep0 + (k // per) * blk0) * per + k % per
            eb = (r * rep1 + (k // per) * blk1) * per + k % per
            bits.append(OPS[mode](a[ea], b[eb]))
        want[r * dst_rep * unit: r * dst_rep * unit + lanes // 8] = pack(bits)
    assert out.tolist() == want.tolist()
    assert sum(w.stop - w.start for w in ins[-1].writes) == repeats * lanes // 8


def test_compare_count_not_256_bytes():
    a = np.zeros(128, np.float32)
    with pytest.raises(asc.KernelError, match="multiple of 256 B"):
        run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 100), np.zeros(32, np.uint8), a, a)
    out, _ = run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 100), np.zeros(32, np.uint8), a, a,
                 strict=False)
    assert out[:8].tolist() == [255] * 8 and out[8:].tolist() == [0] * 24  # the NPU compares the first 64 only


def test_compare_counts_zero_and_one_repeat():
    a = np.arange(64, dtype=np.float32)
    out, ins = run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 0), np.full(32, 3, np.uint8), a, a)
    assert out.tolist() == [3] * 32 and not ins[-1].writes
    out, _ = run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.GE, 64), np.full(32, 3, np.uint8), a, a[::-1].copy())
    assert out[:8].tolist() == pack([a[i] >= a[63 - i] for i in range(64)]) and out[8:].tolist() == [3] * 24


def test_compare_dtypes_per_soc():
    """A2/A3: int32 with EQ only; Atlas inference: half / float; dst int8 / uint8 (Compares: uint8)."""
    a = np.arange(64, dtype=np.int32)
    out, _ = run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 64), np.zeros(32, np.uint8), a, a)
    assert out[:8].tolist() == [255] * 8
    with pytest.raises(asc.KernelError, match="EQ only"):
        run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.LT, 64), np.zeros(32, np.uint8), a, a)
    with pytest.raises(asc.KernelError, match="does not support int32 .* on Ascend310P3"):
        run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 64), np.zeros(32, np.uint8), a, a, soc="Ascend310P3")
    h = np.zeros(128, np.float16)
    with pytest.raises(asc.KernelError, match="int8 or uint8"):
        run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 128), np.zeros(32, np.int16), h, h)
    with pytest.raises(asc.KernelError, match="must be uint8"):
        run(lambda d, s0, s1: asc.compare_scalar(d, s0, 1.0, asc.CMPMODE.EQ, 128), np.zeros(32, np.int8), h)
    with pytest.raises(asc.KernelError, match="does not support int16"):
        run(lambda d, s0, s1: asc.compare(d, s0, s1, asc.CMPMODE.EQ, 128), np.zeros(32, np.uint8),
            np.zeros(128, np.int16), np.zeros(128, np.int16))


def test_nan_compares_unequal():
    a = np.array([np.nan] * 64, np.float32)
    for mode, want in ((asc.CMPMODE.EQ, 0), (asc.CMPMODE.NE, 255), (asc.CMPMODE.LE, 0), (asc.CMPMODE.GT, 0)):
        out, _ = run(lambda d, s0, s1: asc.compare(d, s0, s1, mode, 64), np.zeros(32, np.uint8), a, a)
        assert out[:8].tolist() == [want] * 8, mode


# --------------------------------------------------------------------------------------------
# CmpMask register
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_register_compare_and_get_cmp_mask(dtype):
    lanes = 256 // np.dtype(dtype).itemsize
    a = RNG.integers(-4, 4, lanes).astype(dtype)
    b = RNG.integers(-4, 4, lanes).astype(dtype)
    mask = [0xFFFFFFFF0000FFFF, 0x0F] if lanes == 128 else [0xFFFFFFFF0000FFFF]

    def body(d, s0, s1):
        asc.compare(s0, s1, asc.CMPMODE.LT, mask, asc.BinaryRepeatParams())
        asc.get_cmp_mask(d)

    out, ins = run(body, np.full(128, 0xEE, np.uint8), a, b)
    on = lane_mask(mask, lanes)
    bits = [bool(on[i] and a[i] < b[i]) for i in range(lanes)] + [False] * (128 - lanes)
    assert out[:16].tolist() == pack(bits) and out[16:].tolist() == [0xEE] * 112
    get = ins[-1]
    assert (get.op, get.cost) == ("get_cmp_mask", "GetCmpMask") and [w.stop - w.start for w in get.writes] == [16]
    assert not ins[-2].writes  # the register compare writes no memory


def test_get_cmp_mask_rules():
    with pytest.raises(asc.KernelError, match="nothing has set it"):
        run(lambda d, s0, s1: asc.get_cmp_mask(d), np.zeros(128, np.uint8), np.zeros(16, np.uint8))
    with pytest.raises(asc.KernelError, match="at least 128"):
        run(lambda d, s0, s1: (asc.set_cmp_mask(s0), asc.get_cmp_mask(d)), np.zeros(64, np.uint8), np.zeros(16, np.uint8))


def test_set_then_get_round_trip():
    src = np.arange(32, dtype=np.uint8)
    out, ins = run(lambda d, s0, s1: (asc.set_cmp_mask(s0), asc.get_cmp_mask(d)), np.zeros(128, np.uint8), src)
    assert out[:16].tolist() == list(range(16))
    assert [r.stop - r.start for r in ins[-2].reads] == [16]


# --------------------------------------------------------------------------------------------
# select
# --------------------------------------------------------------------------------------------

def _example(mode):
    ex = EXAMPLES[mode]
    return (np.array(ex["src0"], np.float32), np.array(ex.get("src1", [0.0]), np.float32),
            np.array(ex["mask"], np.uint8), np.array(ex["dst"], np.float32))


def test_select_mode2_page_example():
    """Select.md 模式2示例: float, mask 64, repeat 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8)."""
    a, b, m, want = _example("mode2")

    def body(d, s0, s1):
        asc.select(d, s1[512:].reinterpret_cast(asc.uint8), s0, s1, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 64, 4,
                   asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))

    src1 = np.concatenate([b, np.zeros(256, np.float32), m.view(np.float32), np.zeros(8, np.float32)])
    out, ins = run(body, np.zeros(256, np.float32), a, src1)
    assert out.tolist() == want.tolist()
    assert (ins[-1].op, ins[-1].cost, ins[-1].repeats) == ("select", "Select", 4)


def test_select_mode1_page_example():
    """Select.md 模式1示例: count form, src1 = 0.0 (the sample's static_cast<float>(0))."""
    a, _, m, want = _example("mode1")

    def body(d, s0, s1):
        asc.select(d, s1.reinterpret_cast(asc.uint8), s0, 0.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 256)

    out, _ = run(body, np.zeros(256, np.float32), a, m.view(np.float32))
    assert out.tolist() == want.tolist()


def test_select_mode0_page_example():
    """Select.md 模式0示例: only the first 64 selMask bits count, for every repeat (float)."""
    a, b, m, want = _example("mode0")
    sel = np.concatenate([m.view(np.float32), np.zeros(256 - m.size // 4, np.float32)])

    def body(d, s0, s1):
        asc.select(d, s1[256:].reinterpret_cast(asc.uint8), s0, s1, asc.SelMode.VSEL_CMPMASK_SPR, 256)

    out, ins = run(body, np.zeros(256, np.float32), a, np.concatenate([b, sel]))
    assert out.tolist() == want.tolist()
    assert [r.stop - r.start for r in ins[-1].reads][-1] == 16  # the 128-bit register load


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mode", [asc.SelMode.VSEL_CMPMASK_SPR, asc.SelMode.VSEL_TENSOR_TENSOR_MODE,
                                  asc.SelMode.VSEL_TENSOR_SCALAR_MODE])
def test_select_split_with_holes(dtype, mode):
    """Masked lanes keep dst (Select.md); strides on src0 / src1 / dst; selMask bits per the mode."""
    lanes = 256 // np.dtype(dtype).itemsize
    per = 32 // np.dtype(dtype).itemsize
    repeats = 3
    mask = [0xF0F0F0F0F0F0F0F1, 0x8000000000000001] if lanes == 128 else [0xF0F0F0F0F0F0F0F1]
    params = asc.BinaryRepeatParams(2, 1, 1, 16, 8, 8)
    a = RNG.standard_normal(repeats * lanes).astype(dtype)
    b = RNG.standard_normal(repeats * lanes).astype(dtype)
    sel = RNG.integers(0, 256, repeats * lanes // 8 + 32).astype(np.uint8)
    scalar = 7.5
    both = np.concatenate([b, sel.view(dtype)])
    d0 = np.full(repeats * 16 * per + lanes * 2, -1, dtype)

    def body(d, s0, s1):
        sm = s1[b.size:].reinterpret_cast(asc.uint8)
        if mode is asc.SelMode.VSEL_TENSOR_SCALAR_MODE:
            asc.select(d, sm, s0, scalar, mode, mask, repeats, params)
        else:
            asc.select(d, sm, s0, s1, mode, mask, repeats, params)

    out, _ = run(body, d0.copy(), a, both)
    want = d0.copy()
    on = lane_mask(mask, lanes)
    for r in range(repeats):
        for k in range(lanes):
            if not on[k]:
                continue
            g = k if mode is asc.SelMode.VSEL_CMPMASK_SPR else r * lanes + k
            src = r * lanes + k
            other = dtype(scalar) if mode is asc.SelMode.VSEL_TENSOR_SCALAR_MODE else b[src]
            want[(r * 16 + (k // per) * 2) * per + k % per] = a[src] if bit(sel, g) else other
    assert out.tolist() == want.tolist()


def test_select_register_forms():
    """set_cmp_mask(selMask) + select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=VSEL_CMPMASK_SPR),
    with the mask from set_vector_mask."""
    a = np.arange(64, dtype=np.float32)
    b = -np.arange(64, dtype=np.float32)
    sel = np.array([0b10100101] * 8 + [0] * 24, np.uint8)

    def body(d, s0, s1):
        asc.set_cmp_mask(s1[64:].reinterpret_cast(asc.uint8))
        asc.set_vector_mask(0, 0xFFFF, dtype=asc.float32)
        asc.select(d, s0, s1, repeat_times=1, repeat_params=asc.BinaryRepeatParams(),
                   sel_mode=asc.SelMode.VSEL_CMPMASK_SPR)

    out, _ = run(body, np.full(64, 100, np.float32), a, np.concatenate([b, sel.view(np.float32)]))
    want = [(a[i] if bit(sel, i) else b[i]) if i < 16 else 100 for i in range(64)]
    assert out.tolist() == want


def test_select_register_scalar_form():
    """select(dst, sel_mask, src0, repeat_times, repeat_params): mode 1, scalar = what set_cmp_mask loaded."""
    a = np.arange(64, dtype=np.float32)
    sel = np.array([0x0F] * 8 + [0] * 24, np.uint8)
    scal = np.full(8, 9.0, np.float32)

    def body(d, s0, s1):
        asc.set_cmp_mask(s1[8:])
        asc.reset_mask()
        asc.select(d, s1.reinterpret_cast(asc.uint8), s0, 1, asc.BinaryRepeatParams())

    out, _ = run(body, np.zeros(64, np.float32), a, np.concatenate([sel.view(np.float32), scal]))
    assert out.tolist() == [a[i] if bit(sel, i) else 9.0 for i in range(64)]


def test_select_rules():
    a = np.zeros(64, np.float32)
    with pytest.raises(asc.KernelError, match="takes a LocalTensor src1"):
        run(lambda d, s0, s1: asc.select(d, s1.reinterpret_cast(asc.uint8), s0, 1.0, asc.SelMode.VSEL_CMPMASK_SPR, 64),
            np.zeros(64, np.float32), a, a)
    with pytest.raises(asc.KernelError, match="does not support int32"):
        run(lambda d, s0, s1: asc.select(d, s1.reinterpret_cast(asc.uint8), s0, s1, asc.SelMode.VSEL_CMPMASK_SPR, 64),
            np.zeros(64, np.int32), a.view(np.int32), a.view(np.int32))
    with pytest.raises(asc.KernelError, match="must be uint8, uint16"):
        run(lambda d, s0, s1: asc.select(d, s1, s0, s1, asc.SelMode.VSEL_CMPMASK_SPR, 64), np.zeros(64, np.float32), a, a)
    with pytest.raises(asc.KernelError, match="consumes 64"):  # 512 elements: 64 bytes of selMask, 32 given
        run(lambda d, s0, s1: asc.select(d, s1[512:].reinterpret_cast(asc.uint8), s0, s1,
                                         asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 512),
            np.zeros(512, np.float32), np.zeros(512, np.float32), np.zeros(520, np.float32))


@pytest.mark.parametrize("count", [1, 127, 128, 129, 300])
@pytest.mark.parametrize("mode", [asc.SelMode.VSEL_CMPMASK_SPR, asc.SelMode.VSEL_TENSOR_TENSOR_MODE,
                                  asc.SelMode.VSEL_TENSOR_SCALAR_MODE])
def test_select_count_form_half(count, mode):
    a = RNG.standard_normal(count).astype(np.float16)
    b = RNG.standard_normal(count).astype(np.float16)
    sel = RNG.integers(0, 256, 64).astype(np.uint8)

    def body(d, s0, s1):
        sm = s1[320:].reinterpret_cast(asc.uint8)
        asc.select(d, sm, s0, -2.0 if mode is asc.SelMode.VSEL_TENSOR_SCALAR_MODE else s1, mode, count)

    src1 = np.concatenate([b, np.zeros(320 - count, np.float16), sel.view(np.float16)])
    out, _ = run(body, np.full(320, 5, np.float16), a, src1)
    want = np.full(320, 5, np.float16)
    for i in range(count):
        g = i % 128 if mode is asc.SelMode.VSEL_CMPMASK_SPR else i
        other = np.float16(-2.0) if mode is asc.SelMode.VSEL_TENSOR_SCALAR_MODE else b[i]
        want[i] = a[i] if bit(sel, g) else other
    assert out.tolist() == want.tolist()


def test_select_in_place_and_partial_overlap():
    """dst == src0 is allowed; dst half a block into src0 is a partial overlap (通用地址重叠约束)."""
    a = np.arange(128, dtype=np.float32)
    sel = np.full(32, 0xFF, np.uint8)

    def in_place(d, s0, s1):
        asc.select(s0, s1.reinterpret_cast(asc.uint8), s0, -1.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 64)

    run(in_place, np.zeros(8, np.float32), a, sel.view(np.float32))
    with pytest.raises(asc.KernelError, match="partially overlaps"):
        run(lambda d, s0, s1: asc.select(s0[8:], s1.reinterpret_cast(asc.uint8), s0, -1.0,
                                         asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 64),
            np.zeros(8, np.float32), a, sel.view(np.float32))
