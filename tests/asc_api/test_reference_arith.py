"""Vector arithmetic and Cast, bit for bit, against a reference that shares no code with the simulator.

The expected values come from ``tests/ieee754_ref.py``: operands decoded from their bits into exact
rationals, the operation done exactly, one rounding written from IEEE 754's definition. The
simulator computes with numpy; nothing here calls numpy arithmetic to produce an expected value.

What the rules come from:
- each vector instruction rounds its exact result once to the tensor dtype, to nearest even, and
  on Atlas A2 (Ascend910B1, the default SoC) overflows to inf and propagates NaN: the INF/NaN
  mode that A2/A3 use by default (``docs/ascendc-model.md``, "Overflow modes"; ``fusekit.asc``'s
  vector docstring);
- a scalar operand: pyasc passes a Python float kernel argument as float32, and the half kernel
  converts it to half (``static_cast<half>``): two roundings (``docs/ascendc-model.md``, "Vector
  instructions"; "Scalar integers");
- Cast: round modes and the conversion pairs of Atlas A2 from AD-API 类型转换/Cast.md and
  数据结构/precision_conversion.md (its examples are asserted literally below); float -> integer
  saturates (same page: "溢出默认按照饱和模式处理").

Not documented, so not asserted: NaN payloads (any NaN matches any NaN), Max/Min with a NaN operand
or with +0 against -0, the integer result of a NaN, negative inputs of a cast to uint8 ("视为异常").
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ieee754_ref as R
from fusekit import asc
from support import gm_view, ub_buf

E = asc.HardEvent
RM = asc.RoundMode
MODE_OF = {RM.CAST_RINT: R.RINT, RM.CAST_NONE: R.RINT, RM.CAST_FLOOR: R.FLOOR, RM.CAST_CEIL: R.CEIL,
           RM.CAST_ROUND: R.ROUND, RM.CAST_TRUNC: R.TRUNC, RM.CAST_ODD: R.ODD}
FMT = {np.dtype(np.float16): R.FLOAT16, np.dtype(np.float32): R.FLOAT32, np.dtype(ml_dtypes.bfloat16): R.BFLOAT16}
HYP = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------------------------
# kernels (count form; a correct kernel: each pipe hand-over has its flag pair)
# ------------------------------------------------------------------------------------------

@asc.jit
def vec_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, s: float,
               OP: asc.ConstExpr, KIND: asc.ConstExpr[str], N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    zg = gm_view(z, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, xg.dtype, N)
    b = ub_buf(pipe, yg.dtype, N)
    c = ub_buf(pipe, zg.dtype, N)
    asc.data_copy(a, xg, N)
    asc.data_copy(b, yg, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    if KIND == "binary":
        OP(c, a, b, N)
    if KIND == "scalar":
        OP(c, a, s, N)
    if KIND == "unary":
        OP(c, a, N)
    if KIND == "cast":
        asc.cast(c, a, OP, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(zg, c, N)


def run(kind: str, op, x: np.ndarray, y: np.ndarray | None = None, s: float = 0.0, out_dtype=None) -> np.ndarray:
    """Launch ``vec_kernel`` on one core; inputs padded to whole 32 B blocks of every dtype involved."""
    out_dtype = np.dtype(out_dtype or x.dtype)
    n = x.size
    pad = -n % 32                              # 32 elements: a whole number of 32 B blocks for 1..8 B types
    x = np.concatenate([x, np.zeros(pad, x.dtype)])
    y = np.zeros_like(x) if y is None else np.concatenate([y, np.zeros(pad, y.dtype)])
    z = np.zeros(x.size, out_dtype)
    vec_kernel[1](x, y, z, s, op, kind, x.size)
    return z[:n]


# ------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------

def expected_array(vals, fmt: R.Format, np_dtype) -> np.ndarray:
    return R.to_array([1 if v is None else v for v in vals], fmt, np_dtype)


def assert_matches(actual: np.ndarray, expected_vals: list, fmt: R.Format, inputs: tuple = ()) -> None:
    """Bit equality (any NaN matches any NaN); ``None`` in expected_vals marks an undocumented element."""
    expected = expected_array(expected_vals, fmt, actual.dtype)
    care = np.array([v is not None for v in expected_vals], bool)
    ok = R.same_bits(actual, expected, fmt) | ~care
    if not ok.all():
        bad = np.flatnonzero(~ok)[:8]
        rows = [(tuple(float(a[i]) for a in inputs), float(actual[i]), float(expected[i])) for i in bad]
        raise AssertionError(f"{(~ok).sum()} element(s) differ (inputs, simulator, reference): {rows}")


def from_bits(bits, np_dtype) -> np.ndarray:
    width = np.dtype(np_dtype).itemsize * 8
    return np.array(bits, dtype=R.UINT[width]).view(np_dtype)


# ------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------

# float16 edges: zeros, smallest / largest subnormal, smallest normal, 1 and its neighbours, ties'
# neighbourhood, values whose sum or product lands near 65504, the largest finite, inf, NaN
EDGE16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x0401, 0x3C00, 0x3C01, 0xBC00, 0x3BFF, 0x3800,
          0x4000, 0x7BFF, 0xFBFF, 0x7BFE, 0x7800, 0x5BFF, 0x1400, 0x0200, 0x7C00, 0xFC00, 0x7E00]
# float32 edges, the same kinds
EDGE32 = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0x3F800001,
          0xBF800000, 0x3F7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x00400000, 0x33800000, 0x7F800000,
          0xFF800000, 0x7FC00000]
EDGES = {np.dtype(np.float16): EDGE16, np.dtype(np.float32): EDGE32}


def bits_strategy(np_dtype):
    """Raw bit patterns (every class of value, NaN and inf included) mixed with hypothesis floats."""
    width = np.dtype(np_dtype).itemsize * 8
    floats = st.floats(width=width).map(lambda v: int(np.array(v, np_dtype).view(R.UINT[width])))
    return st.one_of(st.integers(0, (1 << width) - 1), floats, st.sampled_from(EDGES[np.dtype(np_dtype)]))


def pair_strategy(np_dtype):
    """(x, y) bit patterns: independent, or y close to x or to -x (cancellation, ties of the sum)."""
    width = np.dtype(np_dtype).itemsize * 8
    sign = 1 << (width - 1)
    any_bits = bits_strategy(np_dtype)
    near = st.tuples(any_bits, st.integers(-3, 3), st.booleans()).map(
        lambda t: (t[0], ((t[0] + t[1]) % (1 << width)) ^ (sign if t[2] else 0)))
    return st.one_of(st.tuples(any_bits, any_bits), near)


def edge_pairs(np_dtype):
    edges = EDGES[np.dtype(np_dtype)]
    xs = [a for a in edges for _ in edges]
    ys = [b for _ in edges for b in edges]
    return from_bits(xs, np_dtype), from_bits(ys, np_dtype)


# ------------------------------------------------------------------------------------------
# binary instructions
# ------------------------------------------------------------------------------------------

def _undocumented_max_min(a, b) -> bool:
    return a is R.NAN or b is R.NAN or (isinstance(a, R.Zero) and isinstance(b, R.Zero) and a != b)


def binary_reference(name: str, xs, ys, fmt: R.Format) -> list:
    exact = {"add": R.add, "sub": R.sub, "mul": R.mul, "div": R.div, "max": R.maximum, "min": R.minimum}[name]
    out = []
    for a, b in zip(R.values(xs, fmt), R.values(ys, fmt)):
        if name in ("max", "min") and _undocumented_max_min(a, b):
            out.append(None)
        else:
            out.append(R.round_to(exact(a, b), fmt))
    return out


BINARY = ["add", "sub", "mul", "div", "max", "min"]
FLOATS = [np.float16, np.float32]


@pytest.mark.parametrize("dtype", FLOATS, ids=["float16", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_on_every_pair_of_edge_values(name, dtype):
    xs, ys = edge_pairs(dtype)
    fmt = FMT[np.dtype(dtype)]
    assert_matches(run("binary", getattr(asc, name), xs, ys), binary_reference(name, xs, ys, fmt), fmt, (xs, ys))


@pytest.mark.parametrize("dtype", FLOATS, ids=["float16", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_on_generated_operands(name, dtype):
    fmt = FMT[np.dtype(dtype)]

    @HYP
    @given(st.lists(pair_strategy(dtype), min_size=1, max_size=48))
    def check(pairs):
        xs = from_bits([p[0] for p in pairs], dtype)
        ys = from_bits([p[1] for p in pairs], dtype)
        assert_matches(run("binary", getattr(asc, name), xs, ys), binary_reference(name, xs, ys, fmt), fmt, (xs, ys))

    check()


def test_reference_gets_the_signs_of_zero_and_the_ties():
    """The reference on cases worked by hand from IEEE 754 (6.3: the sign of an exact zero sum)."""
    f = R.FLOAT16
    one, tiny = Fraction(1), Fraction(1, 2**11)                       # 2^-11: half an ulp of 1 in float16
    assert R.round_to(R.add(one, tiny), f) == 1                       # tie, 1 is even
    assert R.round_to(R.add(one + 2 * tiny, tiny), f) == 1 + 4 * tiny  # tie, 1 + 2^-10 is odd: up
    assert R.round_to(R.add(one, -one), f) == R.POS_ZERO
    assert R.round_to(R.add(R.NEG_ZERO, R.NEG_ZERO), f) == R.NEG_ZERO
    assert R.round_to(R.mul(Fraction(-1, 2**24), Fraction(1, 2)), f) == R.NEG_ZERO   # underflow keeps the sign
    assert R.round_to(R.mul(Fraction(3, 2**25), Fraction(1, 2)), f) == Fraction(1, 2**24)  # 1.5 ulp -> 2 (even)
    assert R.round_to(Fraction(65520), f) is R.INF                    # the tie above 65504 rounds to 2^16
    assert R.round_to(Fraction(65519), f) == 65504
    assert R.div(Fraction(-1), R.POS_ZERO) is R.NEG_INF and R.div(R.POS_ZERO, R.NEG_ZERO) is R.NAN


# ------------------------------------------------------------------------------------------
# instructions with a scalar operand
# ------------------------------------------------------------------------------------------

def kernel_scalar(s: float, fmt: R.Format):
    """The scalar the instruction uses: Python float -> float32 (launch) -> tensor dtype (static_cast)."""
    if s == 0:
        return R.Zero(math.copysign(1.0, s) < 0)
    as_f32 = R.round_to(Fraction(s), R.FLOAT32)
    return as_f32 if fmt is R.FLOAT32 else R.round_to(as_f32, fmt)


def scalar_reference(name: str, xs, s: float, fmt: R.Format) -> list:
    exact = {"adds": R.add, "muls": R.mul, "maxs": R.maximum, "mins": R.minimum}[name]
    k = kernel_scalar(s, fmt)
    out = []
    for a in R.values(xs, fmt):
        if name in ("maxs", "mins") and _undocumented_max_min(a, k):
            out.append(None)
        else:
            out.append(R.round_to(exact(a, k), fmt))
    return out


SCALAR = ["adds", "muls", "maxs", "mins"]
F32_MAX = float(R.FLOAT32.max_finite)
# double-rounding traps: Python float -> float32 lands exactly on a float16 tie the float64 value was not on
TRAPS = [1 + 2**-11 + 2**-40, 1 + 3 * 2**-11 - 2**-40, -(1 + 2**-11 + 2**-40), 2**-25 + 2**-50, 65520 - 2**-20,
         0.1, 1 / 3]


@pytest.mark.parametrize("dtype", FLOATS, ids=["float16", "float32"])
@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("s", TRAPS + [0.0, -0.0, 65504.0, 65520.0, 2**-24, F32_MAX])
def test_scalar_ops_on_edge_values(name, dtype, s):
    fmt = FMT[np.dtype(dtype)]
    xs = from_bits(EDGES[np.dtype(dtype)], dtype)
    assert_matches(run("scalar", getattr(asc, name), xs, s=s), scalar_reference(name, xs, s, fmt), fmt, (xs,))


@pytest.mark.parametrize("dtype", FLOATS, ids=["float16", "float32"])
@pytest.mark.parametrize("name", SCALAR)
def test_scalar_ops_on_generated_operands(name, dtype):
    fmt = FMT[np.dtype(dtype)]

    @HYP
    @given(st.lists(bits_strategy(dtype), min_size=1, max_size=48),
           st.floats(min_value=-F32_MAX, max_value=F32_MAX, allow_nan=False))
    def check(bits, s):
        xs = from_bits(bits, dtype)
        assert_matches(run("scalar", getattr(asc, name), xs, s=s), scalar_reference(name, xs, s, fmt), fmt, (xs,))

    check()


def test_scale_double_rounding_trap_worked_by_hand():
    """s = 1 + 2^-11 + 2^-40 as a Python float. Rounded once to float16 it is above the tie between
    1 and 1 + 2^-10, so it would be 1 + 2^-10. The documented path rounds twice: float32 first (the
    2^-40 is far below float32's half ulp 2^-24, leaving 1 + 2^-11: exactly the float16 tie), then
    float16, where the tie goes to the even 1.0. So muls by s leaves a half tensor unchanged and
    adds of s to 0 gives 1.0."""
    s = 1 + 2**-11 + 2**-40
    assert R.round_to(Fraction(s), R.FLOAT16) == 1 + Fraction(1, 2**10)   # one rounding: not what runs
    assert kernel_scalar(s, R.FLOAT16) == 1                                # the documented two roundings
    x = from_bits([0x3C00, 0x4000, 0x3C01, 0x7BFF, 0x0001, 0xC500], np.float16)  # 1, 2, 1+2^-10, 65504, 2^-24, -5
    assert run("scalar", asc.muls, x, s=s).view(np.uint16).tolist() == [0x3C00, 0x4000, 0x3C01, 0x7BFF, 0x0001, 0xC500]
    assert run("scalar", asc.adds, np.zeros(1, np.float16), s=s).view(np.uint16).tolist() == [0x3C00]
    # 1 + 3*2^-11 - 2^-40: one rounding gives 1 + 2^-10, the documented two give the tie's even 1 + 2^-9
    t = 1 + 3 * 2**-11 - 2**-40
    assert run("scalar", asc.adds, np.zeros(1, np.float16), s=t).view(np.uint16).tolist() == [0x3C02]
    # in a float32 kernel the scalar is rounded once, to float32: 1 + 2^-11 exactly
    assert run("scalar", asc.adds, np.zeros(8, np.float32), s=s).view(np.uint32).tolist() == [0x3F801000] * 8


def test_fused_add_scale_native_half_takes_the_double_rounded_scale():
    """The shipped operator on the same trap: y = round16(round16(x1 + x2) * 1.0) = round16(x1 + x2)."""
    import fusekit

    rng = np.random.default_rng(7)
    x1 = rng.standard_normal(300).astype(np.float16)
    x2 = rng.standard_normal(300).astype(np.float16)
    y = fusekit.fused_add_scale(x1, x2, 1 + 2**-11 + 2**-40)
    sums = [R.round_to(R.add(a, b), R.FLOAT16) for a, b in zip(R.values(x1, R.FLOAT16), R.values(x2, R.FLOAT16))]
    assert_matches(y, sums, R.FLOAT16, (x1, x2))


# ------------------------------------------------------------------------------------------
# sqrt (correctly rounded: the root is bracketed exactly with integer square roots)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=["float16", "float32"])
def test_sqrt_on_edge_and_generated_values(dtype):
    fmt = FMT[np.dtype(dtype)]

    @HYP
    @given(st.lists(bits_strategy(dtype), min_size=1, max_size=48))
    def check(bits):
        xs = from_bits(bits + EDGES[np.dtype(dtype)], dtype)
        assert_matches(run("unary", asc.sqrt, xs), [R.sqrt_rounded(a, fmt) for a in R.values(xs, fmt)], fmt, (xs,))

    check()


def test_sqrt_of_exact_squares_is_exact():
    xs = np.array([0, 1, 4, 2.25, 0.0625, 16384, 2**-24 * 4, 65025], np.float16)   # 65025 = 255^2
    assert run("unary", asc.sqrt, xs).tolist() == [0, 1, 2, 1.5, 0.25, 128, 2**-11, 255]


# ------------------------------------------------------------------------------------------
# Cast
# ------------------------------------------------------------------------------------------

INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in (np.int8, np.uint8, np.int16,
                                                                                  np.int32, np.int64)}
FIVE = [RM.CAST_RINT, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_ROUND, RM.CAST_TRUNC]
# (src, dst, modes) of the Atlas A2 table of Cast.md that fusekit simulates (int32 -> half goes through
# SetDeqScale and is left out)
FLOAT_TO_FLOAT = [(np.float32, np.float16, FIVE + [RM.CAST_ODD, RM.CAST_NONE]),
                  (np.float32, ml_dtypes.bfloat16, FIVE),
                  (np.float16, np.float32, [RM.CAST_NONE]), (ml_dtypes.bfloat16, np.float32, [RM.CAST_NONE])]
FLOAT_TO_INT = [(np.float16, np.int8, FIVE + [RM.CAST_NONE]), (np.float16, np.uint8, FIVE + [RM.CAST_NONE]),
                (np.float16, np.int16, FIVE), (np.float16, np.int32, FIVE),
                (ml_dtypes.bfloat16, np.int32, FIVE),
                (np.float32, np.int16, FIVE), (np.float32, np.int32, FIVE), (np.float32, np.int64, FIVE)]
INT_TO_FLOAT = [(np.int16, np.float16, FIVE + [RM.CAST_NONE]), (np.int32, np.float32, FIVE + [RM.CAST_NONE]),
                (np.int64, np.float32, FIVE), (np.int8, np.float16, [RM.CAST_NONE]),
                (np.uint8, np.float16, [RM.CAST_NONE]), (np.int16, np.float32, [RM.CAST_NONE])]


# int64 values whose float64 is already rounded (float64 keeps 53 bits) onto a float32 tie or grid point
INT64_TRAPS = [2**54 - 1, -(2**54 - 1), 2**62 + 2**38 - 1, -(2**62 + 2**38 - 1), 2**60 + 2**36 + 1]
# (int64 -> float32 directed roundings were exact only to 2^53 until rounding._exact_minus: see the test below)


def _cases(table):
    return [pytest.param(s, d, m, id=f"{np.dtype(s).name}-{np.dtype(d).name}-{m.name}")
            for s, d, modes in table for m in modes]


def float_src_bits(np_dtype):
    if np.dtype(np_dtype) == np.dtype(ml_dtypes.bfloat16):
        return st.one_of(st.integers(0, 0xFFFF), st.sampled_from([0x3F80, 0x3FC0, 0x7F7F, 0x0001, 0x7F80, 0x8000]))
    return bits_strategy(np_dtype)


def cast_expected(xs: np.ndarray, dst, mode: RM) -> tuple[list, R.Format | None]:
    vals = R.values(xs, FMT[xs.dtype]) if xs.dtype in FMT else [Fraction(int(v)) for v in xs]
    if np.dtype(dst) in FMT:
        return [R.round_to(v, FMT[np.dtype(dst)], MODE_OF[mode]) for v in vals], FMT[np.dtype(dst)]
    lo, hi = INT_RANGE[np.dtype(dst)]
    out = []
    for v in vals:
        undocumented = v is R.NAN or (lo == 0 and (v is R.NEG_INF or (isinstance(v, Fraction) and v < 0)))
        out.append(None if undocumented else R.round_to_int(v, lo, hi, MODE_OF[mode]))
    return out, None


def assert_cast(xs: np.ndarray, dst, mode: RM) -> None:
    actual = run("cast", mode, xs, out_dtype=dst)
    expected, fmt = cast_expected(xs, dst, mode)
    if fmt is not None:
        assert_matches(actual, expected, fmt, (xs,))
        return
    bad = [(float(x), int(a), e) for x, a, e in zip(xs, actual, expected) if e is not None and int(a) != e]
    assert not bad, f"{len(bad)} element(s) differ (input, simulator, reference): {bad[:8]}"


# the ends of the integer ranges and the ties next to them, as exact values of each float source
INT_EDGE_VALUES = [2.0**63, -2.0**63, 2.0**31, -2.0**31, 2.0**31 - 128, 32767.5, 32768.0, -32768.5, -32769.0,
                   127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                   # and for narrower floats: below, at and above float16 / bfloat16 ties, odd and even neighbours
                   1 + 2**-10 + 2**-12, -(1 + 2**-10 + 2**-12), 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-20,
                   1 + 2**-8 + 2**-10, 1 + 2**-9, 1 + 3 * 2**-9, -(1 + 3 * 2**-9), 2**-24 * 1.25, 2**-25, 65519.0,
                   65520.0, -65520.0]


def cast_edges(np_dtype) -> list[int]:
    with np.errstate(over="ignore"):  # 2^63 in float16 is inf: not exact, left out
        exact = [v for v in INT_EDGE_VALUES if float(np.array(v, np_dtype)) == v]
    width = np.dtype(np_dtype).itemsize * 8
    own = EDGES.get(np.dtype(np_dtype), [0x3F80, 0xBFC0, 0x4020, 0x7F80, 0xFF80, 0x0001, 0x8000])
    return own + np.array(exact, np_dtype).view(R.UINT[width]).tolist()


@pytest.mark.parametrize("src, dst, mode", _cases(FLOAT_TO_FLOAT + FLOAT_TO_INT))
def test_cast_from_float(src, dst, mode):
    @HYP
    @given(st.lists(float_src_bits(src), min_size=1, max_size=64))
    def check(bits):
        assert_cast(from_bits(bits + cast_edges(src), src), dst, mode)

    check()


def int_values(np_dtype):
    lo, hi = INT_RANGE[np.dtype(np_dtype)]
    ends = st.sampled_from([lo, hi, 0, -1 if lo else 1])
    bits = np.dtype(np_dtype).itemsize * 8
    if bits < 16:
        return st.one_of(st.integers(lo, hi), ends)
    # near powers of two, where the float spacing makes ties: 2^k + j * 2^(k - 25) and k - 12 for half
    near = st.tuples(st.integers(11, bits - 2), st.integers(-9, 9), st.sampled_from([12, 25]), st.booleans()).map(
        lambda t: max(lo, min(hi, (-1 if t[3] else 1) * ((1 << t[0]) + t[1] * (1 << max(t[0] - t[2], 0))))))
    return st.one_of(st.integers(lo, hi), near, ends)



@pytest.mark.parametrize("src, dst, mode", _cases(INT_TO_FLOAT))
def test_cast_from_int(src, dst, mode):
    fmt = FMT[np.dtype(dst)]

    @HYP
    @given(st.lists(int_values(src), min_size=1, max_size=64))
    def check(ints):
        xs = np.array(ints + (INT64_TRAPS if np.dtype(src) == np.int64 else []), dtype=src)
        ints = [int(v) for v in xs]
        actual = run("cast", mode, xs, out_dtype=dst)
        assert_matches(actual, [R.round_to(Fraction(int(v)), fmt, MODE_OF[mode]) for v in ints], fmt, (xs,))

    check()


# the worked examples of precision_conversion.md, literally: (src, dst, input, {mode: output})
DOC_EXAMPLES = [
    (np.int16, np.float16, 2**12 + 2, {RM.CAST_RINT: 2**12, RM.CAST_FLOOR: 2**12, RM.CAST_CEIL: 2**12 + 4,
                                       RM.CAST_ROUND: 2**12 + 4, RM.CAST_TRUNC: 2**12}),
    (np.float16, np.int8, 2**7 - 0.5, {m: 2**7 - 1 for m in FIVE}),
    (np.float16, np.uint8, 1.75, {RM.CAST_RINT: 2, RM.CAST_FLOOR: 1, RM.CAST_CEIL: 2, RM.CAST_ROUND: 2,
                                  RM.CAST_TRUNC: 1}),
    (np.float16, np.int16, 2**7 - 0.5, {RM.CAST_RINT: 2**7, RM.CAST_FLOOR: 2**7 - 1, RM.CAST_CEIL: 2**7,
                                        RM.CAST_ROUND: 2**7, RM.CAST_TRUNC: 2**7 - 1}),
    (np.float16, np.int32, -1.5, {RM.CAST_RINT: -2, RM.CAST_FLOOR: -2, RM.CAST_CEIL: -1, RM.CAST_ROUND: -2,
                                  RM.CAST_TRUNC: -1}),
    (ml_dtypes.bfloat16, np.int32, 2**6 + 0.5, {RM.CAST_RINT: 2**6, RM.CAST_FLOOR: 2**6, RM.CAST_CEIL: 2**6 + 1,
                                                RM.CAST_ROUND: 2**6 + 1, RM.CAST_TRUNC: 2**6}),
    (np.int32, np.float32, 2**25 + 3, {RM.CAST_RINT: 2**25 + 4, RM.CAST_FLOOR: 2**25, RM.CAST_CEIL: 2**25 + 4,
                                       RM.CAST_ROUND: 2**25 + 4, RM.CAST_TRUNC: 2**25}),
    (np.float32, np.int16, 2**22 + 0.5, {m: 2**15 - 1 for m in FIVE}),
    (np.float32, np.float16, 0.5 + 2**-12, {RM.CAST_RINT: 0.5, RM.CAST_FLOOR: 0.5, RM.CAST_CEIL: 0.5 + 2**-11,
                                            RM.CAST_ROUND: 0.5 + 2**-11, RM.CAST_TRUNC: 0.5,
                                            RM.CAST_ODD: 0.5 + 2**-11}),
    (np.float32, ml_dtypes.bfloat16, 0.5 + 2**-9 + 2**-11, {RM.CAST_RINT: 0.5 + 2**-8, RM.CAST_FLOOR: 0.5,
                                                            RM.CAST_CEIL: 0.5 + 2**-8, RM.CAST_ROUND: 0.5 + 2**-8,
                                                            RM.CAST_TRUNC: 0.5}),
    (np.float32, np.int32, 2**22 + 0.5, {RM.CAST_RINT: 2**22, RM.CAST_FLOOR: 2**22, RM.CAST_CEIL: 2**22 + 1,
                                         RM.CAST_ROUND: 2**22 + 1, RM.CAST_TRUNC: 2**22}),
    (np.float32, np.int64, 2**22 + 0.5, {RM.CAST_RINT: 2**22, RM.CAST_FLOOR: 2**22, RM.CAST_CEIL: 2**22 + 1,
                                         RM.CAST_ROUND: 2**22 + 1, RM.CAST_TRUNC: 2**22}),
    (np.int32, np.int16, 2**31 - 1, {RM.CAST_NONE: 2**15 - 1}),
    (np.int64, np.int32, 2**31, {RM.CAST_NONE: 2**31 - 1}),
    (np.int64, np.float32, 2**35 + 2**12 + 2**11, {RM.CAST_RINT: 2**35 + 2**13, RM.CAST_FLOOR: 2**35 + 2**12,
                                                   RM.CAST_CEIL: 2**35 + 2**13, RM.CAST_ROUND: 2**35 + 2**13,
                                                   RM.CAST_TRUNC: 2**35 + 2**12}),
]


@pytest.mark.parametrize("src, dst, value, outputs", DOC_EXAMPLES,
                         ids=[f"{np.dtype(s).name}-{np.dtype(d).name}" for s, d, _, _ in DOC_EXAMPLES])
def test_cast_matches_the_worked_examples_of_precision_conversion(src, dst, value, outputs):
    xs = np.full(len(outputs), value, dtype=src)
    assert float(xs[0]) == value, "the example's input is exact in its source type"
    for i, (mode, want) in enumerate(outputs.items()):
        got = run("cast", mode, xs[i:i + 1], out_dtype=dst)[0]
        assert float(got) == want, (mode.name, float(got), want)
        reference, _ = cast_expected(xs[i:i + 1], dst, mode)
        assert float(reference[0]) == want, "the reference agrees with the page too"


def test_cast_int64_to_float32_rounds_the_integer_not_its_float64():
    """2^60 + 2^36 + 1 lies just above the float32 tie between 2^60 and 2^60 + 2^37, but its float64
    is exactly that tie (float64 keeps 53 bits: the + 1 is lost). Rounded once, as Cast.md's
    int64_t -> float rows describe, CAST_RINT and CAST_ROUND give 2^60 + 2^37 and CAST_FLOOR 2^60."""
    x = np.array([2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**62 + 2**38 - 1], np.int64)
    expected = {RM.CAST_RINT: [2**60 + 2**37, -(2**60 + 2**37), 2**62],
                RM.CAST_ROUND: [2**60 + 2**37, -(2**60 + 2**37), 2**62],
                RM.CAST_FLOOR: [2**60, -(2**60 + 2**37), 2**62],
                RM.CAST_CEIL: [2**60 + 2**37, -(2**60), 2**62 + 2**39],
                RM.CAST_TRUNC: [2**60, -(2**60), 2**62]}
    for mode, want in expected.items():
        assert [int(v) for v in run("cast", mode, x, out_dtype=np.float32)] == want, mode.name


def test_cast_float32_to_float32_rounds_to_integral_values():
    """precision_conversion.md, float -> float: 0.5 gives 0.0 under CAST_RINT / FLOOR / TRUNC, 1.0 under CEIL / ROUND."""
    x = np.array([0.5, 1.5, -2.5, 2.25], np.float32)
    want = {RM.CAST_RINT: [0, 2, -2, 2], RM.CAST_FLOOR: [0, 1, -3, 2], RM.CAST_CEIL: [1, 2, -2, 3],
            RM.CAST_ROUND: [1, 2, -3, 2], RM.CAST_TRUNC: [0, 1, -2, 2]}
    for mode, values in want.items():
        assert run("cast", mode, x, out_dtype=np.float32).tolist() == values, mode.name


@pytest.mark.parametrize("mode", FIVE, ids=[m.name for m in FIVE])
def test_cast_float32_to_float32_on_generated_values(mode):
    """Round to an integral value, kept in float32 (always representable: a float32 of magnitude 2^23 or
    more is an integer already). The sign of a zero result is not documented, so not compared."""
    @HYP
    @given(st.lists(bits_strategy(np.float32), min_size=1, max_size=64))
    def check(bits):
        xs = from_bits(bits + cast_edges(np.float32), np.float32)
        want = []
        for v in R.values(xs, R.FLOAT32):
            if v is R.NAN or v is R.INF or v is R.NEG_INF:
                want.append(v)
                continue
            n = R.round_to_int(v, -2**200, 2**200, MODE_OF[mode])
            want.append(None if n == 0 else Fraction(n))
        assert_matches(run("cast", mode, xs, out_dtype=np.float32), want, R.FLOAT32, (xs,))

    check()


INT_TO_INT = [(np.int32, np.int16), (np.int64, np.int32), (np.int32, np.int64)]


@pytest.mark.parametrize("src, dst", INT_TO_INT, ids=[f"{np.dtype(s).name}-{np.dtype(d).name}" for s, d in INT_TO_INT])
def test_cast_between_integers_saturates(src, dst):
    """precision_conversion.md: int32 -> int16 of 2^31 - 1 is 2^15 - 1, int64 -> int32 of 2^31 is 2^31 - 1
    ("溢出默认按照饱和模式处理"); widening is exact."""
    lo, hi = INT_RANGE[np.dtype(dst)]

    @HYP
    @given(st.lists(int_values(src), min_size=1, max_size=64))
    def check(ints):
        xs = np.array(ints + [int(np.iinfo(src).max), int(np.iinfo(src).min), 2**15, -2**15 - 1], dtype=src)
        got = [int(v) for v in run("cast", RM.CAST_NONE, xs, out_dtype=dst)]
        assert got == [min(max(int(v), lo), hi) for v in xs]

    check()


# ------------------------------------------------------------------------------------------
# the host-side reference models of FusedAddScale (fusekit.verify's hardware / fp32 / exact)
# ------------------------------------------------------------------------------------------

def model_reference(model: str, x1: np.ndarray, x2: np.ndarray, s: float) -> list:
    """``(x1 + x2) * s`` under fusekit.verify's model definitions, each rounding done by the reference:
    hardware: every operation rounded to the dtype, s via float32 to the dtype; fp32: operands and s in
    float32, every operation rounded to float32, one final rounding to the dtype; exact: one rounding of
    the real-number result (s as given)."""
    fmt = FMT[x1.dtype]
    out = []
    for a, b in zip(R.values(x1, fmt), R.values(x2, fmt)):
        if model == "hardware":
            out.append(R.round_to(R.mul(R.round_to(R.add(a, b), fmt), kernel_scalar(s, fmt)), fmt))
        elif model == "fp32":
            inner = R.round_to(R.mul(R.round_to(R.add(a, b), R.FLOAT32), kernel_scalar(s, R.FLOAT32)), R.FLOAT32)
            out.append(R.round_to(inner, fmt))
        else:
            exact_s = R.Zero(math.copysign(1.0, s) < 0) if s == 0 else Fraction(s)
            out.append(R.round_to(R.mul(R.add(a, b), exact_s), fmt))
    return out


MODEL_CASES = [("hardware", np.float16), ("hardware", np.float32), ("fp32", np.float16), ("fp32", ml_dtypes.bfloat16),
               ("exact", np.float16), ("exact", np.float32), ("exact", ml_dtypes.bfloat16)]


@pytest.mark.parametrize("model, dtype", MODEL_CASES, ids=[f"{m}-{np.dtype(d).name}" for m, d in MODEL_CASES])
def test_fused_add_scale_reference_models(model, dtype):
    from fusekit.ops.fused_add_scale import host

    fmt = FMT[np.dtype(dtype)]
    bits = float_src_bits(dtype) if np.dtype(dtype) == np.dtype(ml_dtypes.bfloat16) else bits_strategy(dtype)
    pairs = st.lists(st.tuples(bits, bits), min_size=1, max_size=48)

    @HYP
    @given(pairs, st.one_of(st.sampled_from(TRAPS + [1.0, -0.0, 0.5, 3.0]),
                            st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)))
    def check(pairs, s):
        x1 = from_bits([p[0] for p in pairs], dtype)
        x2 = from_bits([p[1] for p in pairs], dtype)
        with np.errstate(all="ignore"):
            got = host.reference(x1, x2, s, model)
        assert_matches(got, model_reference(model, x1, x2, s), fmt, (x1, x2))

    check()


def test_exact_model_rounds_once_for_float32():  # fixed by fusekit.verify.round_once
    from fusekit.ops.fused_add_scale import host

    # x1 + x2 = 1 + alpha * 2^-47 (48 bits, exact in float64); times s = 1 + 2^-23 it is 2^-70 * d above a
    # float32 midpoint (d = -1: just below it), which float64 (53 bits) rounds onto the midpoint itself
    M = 2**47
    alpha = ((2**46 - 1) * pow(2**23 + 1, -1, M)) % M
    hi, lo = divmod(alpha, 2**24)
    x1, x2, s = np.array([1 + hi * 2.0**-23], np.float32), np.array([lo * 2.0**-47], np.float32), 1 + 2**-23
    exact = (Fraction(float(x1[0])) + Fraction(float(x2[0]))) * Fraction(s)
    want = R.round_to(exact, R.FLOAT32)
    assert want == Fraction(float(np.float32(1 + 2**-23))), "worked out: just below the tie 1 + 2^-23 + 2^-24"
    assert float(host.reference(x1, x2, s, "exact")[0]) == want


# ------------------------------------------------------------------------------------------
# the operators end to end on the simulator: FusedAddScale (native and fp32) and Add then Muls
# ------------------------------------------------------------------------------------------

OPERATOR_CASES = [("fused", np.float16, "native"), ("fused", np.float32, "native"), ("fused", np.float16, "fp32"),
                  ("fused", ml_dtypes.bfloat16, "fp32"), ("unfused", np.float16, "native"),
                  ("unfused", np.float32, "native")]


@pytest.mark.parametrize("op, dtype, precision", OPERATOR_CASES,
                         ids=[f"{o}-{np.dtype(d).name}-{p}" for o, d, p in OPERATOR_CASES])
def test_operators_match_the_reference_bit_for_bit(op, dtype, precision):
    import warnings

    import fusekit
    from fusekit.ops.unfused_add_muls.host import add_then_muls

    fmt = FMT[np.dtype(dtype)]
    bits = float_src_bits(dtype) if np.dtype(dtype) == np.dtype(ml_dtypes.bfloat16) else bits_strategy(dtype)

    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.tuples(bits, bits), min_size=1, max_size=80),
           st.one_of(st.sampled_from(TRAPS + [1.0, -0.5, 3.0]), st.floats(min_value=-1e4, max_value=1e4,
                                                                         allow_nan=False)))
    def check(pairs, s):
        x1 = from_bits([p[0] for p in pairs], dtype)
        x2 = from_bits([p[1] for p in pairs], dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow warnings are another test's subject
            y = (fusekit.fused_add_scale(x1, x2, s, precision=precision) if op == "fused"
                 else add_then_muls(x1, x2, s))
        assert_matches(y, model_reference("hardware" if precision == "native" else "fp32", x1, x2, s), fmt, (x1, x2))

    check()
