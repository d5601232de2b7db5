"""asc.cast: every (src, dst) pair and RoundMode of Cast.md's tables, per SoC, against an exact model.

Model: tests/ieee754_ref.py (Fractions, one rounding; precision_conversion.md 表1 for the modes,
CAST_NONE = CAST_RINT when precision is lost). Integer destinations saturate (precision_conversion.md:
"溢出默认按照饱和模式处理"); NaN -> 0 is fusekit's assumption (no page gives it). float -> float32
rounds to an integral value (precision_conversion.md "float → float"). The pair and mode tables are
typed in here from Cast.md (A2 table; 310P = "Atlas 推理系列产品AI Core" table), not read from fusekit.
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ieee754_ref as R
from fusekit import asc
from vector_harness import run

RM = asc.RoundMode
R5 = ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC")
A2 = {  # Cast.md, Atlas A2 训练系列产品/Atlas A2 推理系列产品 (int4b_t rows left out)
    ("int8", "float16"): ("CAST_NONE",), ("uint8", "float16"): ("CAST_NONE",),
    ("int16", "float16"): R5 + ("CAST_NONE",), ("int16", "float32"): ("CAST_NONE",),
    ("float16", "int8"): R5 + ("CAST_NONE",), ("float16", "uint8"): R5 + ("CAST_NONE",),
    ("float16", "int16"): R5, ("float16", "int32"): R5, ("float16", "float32"): ("CAST_NONE",),
    ("bfloat16", "int32"): R5, ("bfloat16", "float32"): ("CAST_NONE",), ("int32", "int16"): ("CAST_NONE",),
    ("int32", "float32"): R5 + ("CAST_NONE",), ("int32", "int64"): ("CAST_NONE",), ("float32", "int16"): R5,
    ("float32", "float16"): R5 + ("CAST_ODD", "CAST_NONE"), ("float32", "bfloat16"): R5, ("float32", "int32"): R5,
    ("float32", "float32"): R5, ("float32", "int64"): R5, ("int64", "int32"): ("CAST_NONE",), ("int64", "float32"): R5,
}
P310 = {  # Cast.md, Atlas 推理系列产品AI Core
    ("int8", "float16"): ("CAST_NONE",), ("uint8", "float16"): ("CAST_NONE",), ("int16", "float16"): ("CAST_NONE",),
    ("float16", "int8"): R5[1:] + ("CAST_NONE",), ("float16", "uint8"): R5[1:] + ("CAST_NONE",),
    ("float16", "int16"): ("CAST_RINT",), ("float16", "int32"): R5, ("float16", "float32"): ("CAST_NONE",),
    ("int32", "int16"): ("CAST_NONE",), ("int32", "float32"): ("CAST_NONE",),
    ("float32", "float16"): ("CAST_ODD", "CAST_NONE"), ("float32", "int64"): R5,
}
NP = {"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "int8": np.int8,
      "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64}
FMT = {"float16": R.FLOAT16, "float32": R.FLOAT32, "bfloat16": R.BFLOAT16}
MODE = {"CAST_RINT": R.RINT, "CAST_NONE": R.RINT, "CAST_FLOOR": R.FLOOR, "CAST_CEIL": R.CEIL, "CAST_ROUND": R.ROUND,
        "CAST_TRUNC": R.TRUNC, "CAST_ODD": R.ODD}

FLOAT_INPUTS = [0.5, -0.5, 1.5, 2.5, -2.5, 0.3, -0.7, 127.5, -128.5, 255.5, 256.0, -1.0, 0.0, -0.0,
                1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-9, 2049.0, 2051.0, 65504.0, 65519.0, 70000.0,
                2**22 + 0.5, 32767.5, -32768.5, 3e9, -3e9, 1e30, float("inf"), float("-inf"), float("nan"),
                2**-25, 3 * 2**-25, 1 / 3, 7.0009765625]
INT_INPUTS = {"int8": [-128, -1, 0, 1, 127], "uint8": [0, 1, 200, 255],
              "int16": [-32768, -2049, 2049, 2051, -1, 0, 32767], "int32": [2**31 - 1, -2**31, 2**24 + 1, 70000, -3, 0],
              "int64": [2**31, -2**31 - 1, 2**35 + 2**12 + 2**11, 2**24 + 1, -5, 0]}


def inputs(src: str) -> np.ndarray:
    if src in FMT:
        with np.errstate(over="ignore"):
            return np.array(FLOAT_INPUTS, np.float64).astype(NP[src])
    return np.array(INT_INPUTS[src], NP[src])


def exact(src: str, x: np.ndarray) -> list:
    return R.values(x, FMT[src]) if src in FMT else [Fraction(int(v)) for v in x]


def model(src: str, dst: str, mode: str, x: np.ndarray, saturation: bool = False) -> np.ndarray:
    """``saturation``: the launch's float overflow mode is saturation (310P's only mode; SoC.overflow_modes):
    an inf result becomes the largest finite value of its sign and NaN becomes 0."""
    if saturation and dst in FMT:
        out = model(src, dst, mode, x)
        fmt = FMT[dst]
        vals = [R.POS_ZERO if v is R.NAN else fmt.max_finite if v is R.INF else -fmt.max_finite if v is R.NEG_INF
                else v for v in R.values(out, fmt)]
        return R.to_array(vals, fmt, NP[dst])
    vals, m = exact(src, x), MODE[mode]
    if dst in FMT and src == dst:  # round to an integral value (precision_conversion.md "float → float")
        out = []
        for v in vals:
            if v is R.NAN or v is R.INF or v is R.NEG_INF or isinstance(v, R.Zero):
                out.append(v)
                continue
            n = R.round_to_int(v, -2**200, 2**200, m)
            out.append(Fraction(n) if n else R.Zero(v < 0))
        return R.to_array(out, FMT[dst], NP[dst])
    if dst in FMT:
        return R.to_array([R.round_to(v, FMT[dst], m) for v in vals], FMT[dst], NP[dst])
    info = np.iinfo(NP[dst])
    return np.array([0 if v is R.NAN else R.round_to_int(v, int(info.min), int(info.max), m) for v in vals],
                    NP[dst])


def run_cast(src: str, dst: str, mode: str, x: np.ndarray, **launch) -> np.ndarray:
    n = x.size
    out, _ = run(lambda d, s, _: asc.cast(d, s, RM[mode], n), np.zeros(n, NP[dst]), x, **launch)
    return out


def same(actual, expected, dst):
    if dst in FMT:
        return bool(R.same_bits(actual, expected, FMT[dst]).all())
    return np.array_equal(actual, expected)


CASES = [(s, d, m) for (s, d), modes in A2.items() for m in modes if (s, d) != ("int32", "float16")]


@pytest.mark.parametrize("src, dst, mode", CASES, ids=[f"{s}-{d}-{m}" for s, d, m in CASES])
def test_every_a2_pair_and_mode(src, dst, mode):
    x = inputs(src)
    assert same(run_cast(src, dst, mode, x), model(src, dst, mode, x), dst)


CASES_310 = [(s, d, m) for (s, d), modes in P310.items() for m in modes]


@pytest.mark.parametrize("src, dst, mode", CASES_310, ids=[f"{s}-{d}-{m}" for s, d, m in CASES_310])
def test_every_310p_pair_and_mode(src, dst, mode):
    x = inputs(src)
    assert same(run_cast(src, dst, mode, x, soc="Ascend310P3"), model(src, dst, mode, x, saturation=True), dst)


REFUSED_310 = sorted(set(A2) - set(P310) - {("int32", "float16")})


@pytest.mark.parametrize("src, dst", REFUSED_310, ids=[f"{s}-{d}" for s, d in REFUSED_310])
def test_310p_refuses_the_pairs_its_table_lacks(src, dst):
    with pytest.raises(asc.KernelError, match=rf"Cast {src} -> {dst} is not available on Ascend310P3"):
        run_cast(src, dst, A2[(src, dst)][0], inputs(src), soc="Ascend310P3")


@pytest.mark.parametrize("src, dst, mode, soc", [
    ("float32", "int32", "CAST_NONE", None), ("float16", "float32", "CAST_RINT", None),
    ("float32", "bfloat16", "CAST_ODD", None), ("float16", "int32", "CAST_ODD", None),
    ("float16", "int8", "CAST_RINT", "Ascend310P3"), ("float32", "float16", "CAST_RINT", "Ascend310P3"),
])
def test_a_mode_the_pair_does_not_take_is_refused(src, dst, mode, soc):
    with pytest.raises(asc.KernelError, match=rf"Cast {src} -> {dst} does not take {mode}"):
        run_cast(src, dst, mode, inputs(src), **({"soc": soc} if soc else {}))


def test_page_examples():
    # precision_conversion.md: half -> int8 of 2^7 - 0.5 gives 2^7 - 1 in RINT / FLOOR / CEIL / ROUND
    for mode in ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND"):
        assert run_cast("float16", "int8", mode, np.full(16, 127.5, np.float16))[0] == 127
    # float -> int32 of 2^22 + 0.5: RINT 2^22, FLOOR 2^22, CEIL 2^22 + 1, ROUND 2^22 + 1
    x = np.full(16, 2**22 + 0.5, np.float32)
    got = [int(run_cast("float32", "int32", m, x)[0]) for m in ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND")]
    assert got == [2**22, 2**22, 2**22 + 1, 2**22 + 1]
    # float -> float of 0.5: 0 / 0 / 1 / 1
    got = [float(run_cast("float32", "float32", m, np.full(16, 0.5, np.float32))[0])
           for m in ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND")]
    assert got == [0.0, 0.0, 1.0, 1.0]
    # int32 -> int16 of 2^31 - 1 gives 2^15 - 1; int64 -> int32 of 2^31 gives 2^31 - 1
    assert run_cast("int32", "int16", "CAST_NONE", np.full(16, 2**31 - 1, np.int32))[0] == 2**15 - 1
    assert run_cast("int64", "int32", "CAST_NONE", np.full(8, 2**31, np.int64))[0] == 2**31 - 1
    # Cast.md example: half -> int32 of [1.4, 1.5, 1.6, 2.4, 2.5, 2.6] per mode
    x = np.resize(np.array([1.4, 1.5, 1.6, 2.4, 2.5, 2.6], np.float16), 64)
    want = {"CAST_CEIL": [2, 2, 2, 3, 3, 3], "CAST_RINT": [1, 2, 2, 2, 2, 3], "CAST_FLOOR": [1, 1, 1, 2, 2, 2],
            "CAST_ROUND": [1, 2, 2, 2, 3, 3], "CAST_TRUNC": [1, 1, 1, 2, 2, 2]}
    for mode, expect in want.items():
        assert run_cast("float16", "int32", mode, x)[:6].tolist() == expect


# ---------------------------------------------------------------------------------------------
# int32 -> half through DEQSCALE (SetDeqScale.md 表1; Cast.md: the round mode is ignored)
# ---------------------------------------------------------------------------------------------

def deq_model(x: np.ndarray, scale: float) -> np.ndarray:
    s = Fraction(float(np.float16(scale)))
    return R.to_array([R.round_to(Fraction(int(v)) * s if v else R.POS_ZERO, R.FLOAT16, R.RINT) for v in x],
                      R.FLOAT16, np.float16)


@pytest.mark.parametrize("mode", ["CAST_NONE", "CAST_FLOOR", "CAST_ODD"])
def test_int32_to_half_multiplies_by_the_deq_scale_whatever_the_mode(mode):
    x = np.array([0, 1, -1, 2049, 2051, 4097, 65504, 70000, -2**31, 2**31 - 1, 12345, 3] * 4, np.int32)
    out, _ = run(lambda d, s, _: (asc.set_deq_scale(0.25), asc.cast(d, s, RM[mode], x.size)),
                 np.zeros(x.size, np.float16), x)
    assert bool(R.same_bits(out, deq_model(x, 0.25), R.FLOAT16).all())


def test_int32_to_half_without_set_deq_scale_is_a_kernel_error():
    with pytest.raises(asc.KernelError, match=r"DEQSCALE register, which no asc\.set_deq_scale\(scale\) has set"):
        run_cast("int32", "float16", "CAST_NONE", np.zeros(16, np.int32))


def test_int32_to_half_after_the_castdequant_form_is_a_kernel_error():
    with pytest.raises(asc.KernelError, match=r"reads a half scale from DEQSCALE bits 0-15"):
        run(lambda d, s, _: (asc.set_deq_scale(1.0, 0, True), asc.cast(d, s, RM.CAST_NONE, 16)),
            np.zeros(16, np.float16), np.zeros(16, np.int32))


# ---------------------------------------------------------------------------------------------
# call forms: counts around a repeat, split form with strides, repeat 255
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [0, 1, 127, 128, 129])
def test_counts_around_one_repeat(count):
    x = (np.arange(160, dtype=np.float32) * 0.37 - 20).astype(np.float32)
    dst = np.full(160, -7, np.float16)
    out, instrs = run(lambda d, s, _: asc.cast(d, s, RM.CAST_TRUNC, count), dst, x)
    want = dst.copy()
    want[:count] = model("float32", "float16", "CAST_TRUNC", x[:count]) if count else want[:0]
    assert bool(R.same_bits(out, want, R.FLOAT16).all())
    assert instrs[-1].count == count


def test_split_form_with_strides_that_skip_and_repeat_255():
    # half -> float32: a repeat is 64 lanes (256 B of float32); dst rep stride 8 blocks, src 4 (Cast.md example);
    # then a src repeat stride of 8 skips every other 128 B of the source
    reps = 255
    x = (np.arange(reps * 128) % 2000 - 1000).astype(np.float16)
    out, instrs = run(lambda d, s, _: asc.cast(d, s, RM.CAST_NONE, 64, reps, asc.UnaryRepeatParams(1, 1, 8, 8)),
                      np.zeros(reps * 64, np.float32), x)
    src_index = (np.arange(reps)[:, None] * 128 + np.arange(64)[None, :]).reshape(-1)
    assert np.array_equal(out, x[src_index].astype(np.float32))
    assert instrs[-1].repeats == reps and instrs[-1].count == reps * 64
    # bit mask with holes: lanes 0 and 63 of each of 3 repeats
    x = np.arange(192, dtype=np.float16)
    dst = np.full(192, -1, np.float32)
    out, _ = run(lambda d, s, _: asc.cast(d, s, RM.CAST_NONE, [1 | 1 << 63, 0], 3, asc.UnaryRepeatParams(1, 1, 8, 4)),
                 dst, x)
    want = dst.copy()
    for r in range(3):
        for k in (0, 63):
            want[r * 64 + k] = x[r * 64 + k]
    assert np.array_equal(out, want)


# ---------------------------------------------------------------------------------------------
# cast_deq (CastDequant.md)
# ---------------------------------------------------------------------------------------------

DOC_SRC = np.array([20, 53, 26, 12, 36, 6, 20, 93, 66, 30, 56, 99, 59, 92, 7, 37,
                    22, 47, 98, 10, 85, 29, 14, 46, 17, 34, 45, 17, 25, 45, 82, 17], np.int16)


def test_cast_deq_page_example_vector_mode_half_block():
    # CastDequant.md example: CastDequant<uint8_t, int16_t, true, true, true>(dst, src, 128, 2, {1, 1, 8, 8}) with
    # 16 groups of scale 1, offset 0: each 16-value block lands in bytes 16..31 of its 32 B destination block
    src = np.resize(DOC_SRC, 256)
    info = asc.VdeqInfo([1.0] * 16, [0] * 16, [False] * 16)
    out, instrs = run(lambda d, s, v: (asc.set_deq_scale(v, info),
                                       asc.cast_deq(d, s, 128, 2, asc.UnaryRepeatParams(1, 1, 8, 8))),
                      np.zeros(512, np.uint8), src, np.zeros(16, np.uint64))
    want = np.zeros(512, np.uint8)
    for j in range(16):
        want[j * 32 + 16:j * 32 + 32] = src[j * 16:j * 16 + 16]
    assert np.array_equal(out, want)
    assert any(a.stop - a.start == 128 for a in instrs[-1].reads)  # the 128 B vdeq tensor is read


def q_model(x, scale, offset, signed):
    bits = np.array(scale, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)  # (1, 8, 10): 10 mantissa bits
    s = Fraction(float(bits.view(np.float32)))
    lo, hi = (-128, 127) if signed else (0, 255)
    return [R.round_to_int(Fraction(int(v)) * s + offset, lo, hi, R.RINT) for v in x]


@pytest.mark.parametrize("half_block", [True, False])
@pytest.mark.parametrize("signed", [True, False])
def test_cast_deq_scale_offset_sign(half_block, signed):
    x = np.array([1, 3, -1, -3, 300, -300, 255, 0, 7, 100, -100, 2, 5, -5, 9, 11] * 4, np.int16)
    scale, offset = 0.5 + 2**-20, -3 if signed else 4  # 2**-20 is below (1, 8, 10)'s precision: dropped
    out, _ = run(lambda d, s, _: (asc.set_deq_scale(scale, offset, signed),
                                  asc.cast_deq(d, s, 64, is_vec_deq=False, half_block=half_block)),
                 np.zeros(128, np.int8 if signed else np.uint8), x)
    want = np.zeros(128, np.int8 if signed else np.uint8)
    vals = q_model(x, scale, offset, signed)
    for k, v in enumerate(vals):
        want[(k // 16) * 32 + k % 16 + (16 if half_block else 0)] = v
    assert np.array_equal(out, want)


def test_cast_deq_int32_to_half():
    x = np.array([0, 1, -1, 2049, 70000, -2**31, 12345, 3], np.int32)
    out, _ = run(lambda d, s, _: (asc.set_deq_scale(0.125), asc.cast_deq(d, s, 8)), np.zeros(8, np.float16), x)
    assert bool(R.same_bits(out, deq_model(x, 0.125), R.FLOAT16).all())


def test_cast_deq_needs_the_matching_set_deq_scale_form_and_sign():
    src = np.zeros(32, np.int16)
    with pytest.raises(asc.KernelError, match=r"is_vec_deq=True reads DEQSCALE as set by set_deq_scale\(vdeq"):
        run(lambda d, s, _: (asc.set_deq_scale(1.0, 0, True), asc.cast_deq(d, s, 32)), np.zeros(64, np.int8), src)
    with pytest.raises(asc.KernelError, match=r"but it holds nothing"):
        run(lambda d, s, _: asc.cast_deq(d, s, 32, is_vec_deq=False), np.zeros(64, np.int8), src)
    with pytest.raises(asc.KernelError, match=r"sign_mode=True gives int8, False uint8"):
        run(lambda d, s, _: (asc.set_deq_scale(1.0, 0, False), asc.cast_deq(d, s, 32, is_vec_deq=False)),
            np.zeros(64, np.int8), src)


def test_cast_deq_310p_has_no_int32_to_half():
    with pytest.raises(asc.KernelError, match=r"cast_deq does not support int32 -> float16"):
        run(lambda d, s, _: (asc.set_deq_scale(1.0), asc.cast_deq(d, s, 16)), np.zeros(16, np.float16),
            np.zeros(16, np.int32), soc="Ascend310P3")


def test_set_deq_scale_bad_arguments_list_the_three_forms():
    with pytest.raises(asc.KernelError, match=r"fits none of its forms.*VdeqInfo"):
        run(lambda d, s, _: asc.set_deq_scale("x"), np.zeros(16, np.float16), np.zeros(16, np.float16))
    with pytest.raises(ValueError, match="16"):
        asc.VdeqInfo([1.0] * 15, [0] * 16, [True] * 16)


@asc.jit
def _cast_without_a_round_mode(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=1024)
    t = buf.get(asc.float16)
    u = buf.get(asc.float32)[128:]
    asc.cast(u, t, 128)  # the round mode forgotten: 128 lands in round_mode


def test_a_forgotten_round_mode_is_named_not_blamed_on_the_call_form():
    with pytest.raises(asc.KernelError, match=r"round_mode must be an asc.RoundMode .*got int 128") as err:
        _cast_without_a_round_mode[1](np.zeros(8, np.float16))
    assert err.value.line > 0
