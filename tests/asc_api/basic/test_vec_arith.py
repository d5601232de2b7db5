"""Arithmetic and logic instructions (issue 9 item 2) in every call form, against models written here
from each instruction's AD-API page (formula, dtype table per product), computed exactly with
tests/ieee754_ref.py (Fractions, one rounding) or Python integers: no code shared with fusekit.

Edge cases: counts 0, 1, one short of / one past a repeat (127/128/129 for 16-bit types, 63/64/65
for 32-bit), repeat 255, a bit mask with holes, strides that skip blocks and a source repeat stride
of 0 (every repeat re-reads the same blocks), every dtype of the table and one it refuses.

Assumption flagged in fusekit (and modelled the same way here): the multiply-add instructions
(MulAddDst, FusedMulAdd, MulAddRelu, Axpy) round once, as a fused multiply-add; the pages give only
the formula.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import ieee754_ref as R
from fusekit import asc

from vector_harness import lane_mask, run, split_elements

RNG = np.random.default_rng(2024)
FMT = {"float16": R.FLOAT16, "float32": R.FLOAT32}
NP = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
      "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32}
INT_RANGE = {n: (int(np.iinfo(NP[n]).min), int(np.iinfo(NP[n]).max)) for n in NP if not n.startswith("float")}


# --------------------------------------------------------------------------------------------
# element models (exact, then one rounding), from the pages' formulas
# --------------------------------------------------------------------------------------------

def rnd(v, dtype: str):
    return R.round_to(v, FMT[dtype])


def relu(v):
    return R.POS_ZERO if not isinstance(v, R.Zero) and v is not R.NAN and R._negative(v) else v


def wrap(n: int, dtype: str) -> int:
    lo, hi = INT_RANGE[dtype]
    return (n - lo) % (hi - lo + 1) + lo


def to_int(v, dtype: str) -> int:
    """Cast to an integer dtype, CAST_RINT, saturating (precision_conversion.md)."""
    lo, hi = INT_RANGE[dtype]
    if isinstance(v, int):
        return min(max(v, lo), hi)
    return R.round_to_int(v, lo, hi, R.RINT)


def _float_or_int(float_fn, int_fn):
    def model(dst_dtype, *xs):
        return int_fn(dst_dtype, *xs) if dst_dtype in INT_RANGE else float_fn(dst_dtype, *xs)
    return model


def shl(dtype: str, x: int, n: int) -> int:
    """ShiftLeft.md: logical for unsigned; arithmetic for signed: the sign bit stays, the bit below it goes."""
    bits = np.dtype(NP[dtype]).itemsize * 8
    u = x & ((1 << bits) - 1)
    out = (u << n) & ((1 << bits) - 1)
    if dtype.startswith("int"):
        out = (out & ((1 << (bits - 1)) - 1)) | (u & (1 << (bits - 1)))
        return out - (1 << bits) if out >> (bits - 1) else out
    return out


def shr(dtype: str, x: int, n: int) -> int:
    """ShiftRight.md: logical for unsigned (zeros in), arithmetic for signed (the sign bit copied in)."""
    return x >> n  # Python's >> on ints is arithmetic; unsigned values are non-negative


@dataclass
class Case:
    """One instruction: its pyasc function, operand kind, element model and page dtype table."""

    name: str
    kind: str                       # "binary", "scalar" (dst, src, scalar), "unary", "axpy"
    model: Callable                 # model(dst_dtype, *element values [, dst value] [, scalar])
    table: dict                     # arch -> [(source dtype, destination dtype)]
    reads_dst: bool = False
    scalar: Callable | None = None  # dtype -> a scalar for this call
    values: dict = field(default_factory=dict)  # dtype -> (lo, hi) for the random sources

    @property
    def fn(self):
        return getattr(asc, self.name)


def same(*dtypes_):
    return [(d, d) for d in dtypes_]


def both(pairs):
    return {"2201": pairs, "2002": pairs}


F16_F32 = ("float16", "float32")
CASES = [
    Case("add_relu", "binary", _float_or_int(lambda d, a, b: relu(rnd(R.add(a, b), d)),
                                             lambda d, a, b: max(wrap(a + b, d), 0)),
         both(same("int16", "float16", "float32"))),  # AddRelu.md
    Case("sub_relu", "binary", _float_or_int(lambda d, a, b: relu(rnd(R.sub(a, b), d)),
                                             lambda d, a, b: max(wrap(a - b, d), 0)),
         both(same("int16", "float16", "float32"))),  # SubRelu.md
    Case("mul_add_dst", "binary", lambda d, a, b, x: rnd(R.add(R.mul(a, b), x), d),
         both(same(*F16_F32) + [("float16", "float32")]), reads_dst=True),  # MulAddDst.md: dst = src0*src1 + dst
    Case("fused_mul_add", "binary", lambda d, a, b, x: rnd(R.add(R.mul(a, x), b), d),
         both(same(*F16_F32)), reads_dst=True),  # FusedMulAdd.md: dst = src0*dst + src1
    Case("fused_mul_add_relu", "binary", lambda d, a, b, x: relu(rnd(R.add(R.mul(a, x), b), d)),
         both(same(*F16_F32)), reads_dst=True),  # MulAddRelu.md
    Case("mul_cast", "binary", lambda d, a, b: to_int(rnd(R.mul(a, b), "float16"), d),
         both([("float16", "int8"), ("float16", "uint8")]),  # MulCast.md
         values={"float16": (0, 24)}),  # negative inputs to uint8 are "视为异常": keep them positive
    Case("add_relu_cast", "binary",
         lambda d, a, b: (rnd(relu(rnd(R.add(a, b), "float32")), d) if d == "float16" else
                          to_int(relu(rnd(R.add(a, b), "float16")), d) if not isinstance(a, int) else
                          to_int(max(wrap(a + b, "int16"), 0), d)),
         both([("float16", "int8"), ("int16", "int8"), ("float32", "float16")]), values={"float16": (-150, 150)}),
    Case("sub_relu_cast", "binary",
         lambda d, a, b: (rnd(relu(rnd(R.sub(a, b), "float32")), d) if d == "float16" else
                          to_int(relu(rnd(R.sub(a, b), "float16")), d) if not isinstance(a, int) else
                          to_int(max(wrap(a - b, "int16"), 0), d)),
         both([("float16", "int8"), ("int16", "int8"), ("float32", "float16")]), values={"float16": (-150, 150)}),
    Case("bitwise_and", "binary", lambda d, a, b: wrap(a & b, d), both(same("int16", "uint16"))),  # And.md
    Case("bitwise_or", "binary", lambda d, a, b: wrap(a | b, d), both(same("int16", "uint16"))),  # Or.md
    Case("bitwise_not", "unary", lambda d, a: wrap(~a, d), both(same("int16", "uint16"))),  # Not.md
    Case("leaky_relu", "scalar",
         lambda d, a, s: a if not R._negative(a) else rnd(R.mul(rnd(R.Fraction(s), d), a), d),
         both(same(*F16_F32)), scalar=lambda d: 0.1),  # LeakyRelu.md; the scalar is first cast to T
    Case("shift_left", "scalar", lambda d, a, n: shl(d, a, n), {"2201": same("int16", "uint16", "int32", "uint32")},
         scalar=lambda d: int(RNG.integers(0, np.dtype(NP[d]).itemsize * 8 + 1))),  # ShiftLeft.md: not on 310P
    Case("shift_right", "scalar", lambda d, a, n: shr(d, a, n), {"2201": same("int16", "uint16", "int32", "uint32")},
         scalar=lambda d: int(RNG.integers(0, np.dtype(NP[d]).itemsize * 8 + 1))),
    Case("axpy", "axpy", lambda d, a, x, s, src="": rnd(R.add(R.mul(s, a), x), d),
         both(same(*F16_F32) + [("float16", "float32")]), reads_dst=True, scalar=lambda d: 1.7),  # Axpy.md
    # the earlier instructions, same treatment
    Case("add", "binary", _float_or_int(lambda d, a, b: rnd(R.add(a, b), d), lambda d, a, b: wrap(a + b, d)),
         both(same("int16", "float16", "int32", "float32"))),
    Case("sub", "binary", _float_or_int(lambda d, a, b: rnd(R.sub(a, b), d), lambda d, a, b: wrap(a - b, d)),
         both(same("int16", "float16", "int32", "float32"))),
    Case("mul", "binary", _float_or_int(lambda d, a, b: rnd(R.mul(a, b), d), lambda d, a, b: wrap(a * b, d)),
         both(same("int16", "float16", "int32", "float32"))),
    Case("div", "binary", lambda d, a, b: rnd(R.div(a, b), d), both(same(*F16_F32)), values={"div": True}),
    Case("max", "binary", _float_or_int(lambda d, a, b: R.maximum(a, b), lambda d, a, b: max(a, b)),
         both(same("int16", "float16", "int32", "float32"))),
    Case("muls", "scalar", _float_or_int(lambda d, a, s: rnd(R.mul(a, rnd(R.Fraction(s), d)), d),
                                         lambda d, a, s: wrap(a * s, d)),
         both(same("int16", "float16", "int32", "float32")), scalar=lambda d: 3 if d in INT_RANGE else 0.3),
    Case("adds", "scalar", _float_or_int(lambda d, a, s: rnd(R.add(a, rnd(R.Fraction(s), d)), d),
                                         lambda d, a, s: wrap(a + s, d)),
         both(same("int16", "float16", "int32", "float32")), scalar=lambda d: -7 if d in INT_RANGE else 0.7),
    Case("abs", "unary", lambda d, a: R.maximum(a, R.neg(a)), both(same(*F16_F32))),
    Case("sqrt", "unary", lambda d, a: R.sqrt_rounded(a, FMT[d]), both(same(*F16_F32)), values={"float16": (0, 100),
                                                                                               "float32": (0, 100)}),
    Case("reciprocal", "unary", lambda d, a: rnd(R.div(R.Fraction(1), a), d), both(same(*F16_F32)),
         values={"div": True}),
]
BY_NAME = {c.name: c for c in CASES}
CPP = {"add_relu": "AddRelu", "sub_relu": "SubRelu", "mul_add_dst": "MulAddDst", "fused_mul_add": "FusedMulAdd",
       "fused_mul_add_relu": "MulAddRelu", "mul_cast": "MulCast", "add_relu_cast": "AddReluCast",
       "sub_relu_cast": "SubReluCast", "bitwise_and": "And", "bitwise_or": "Or", "bitwise_not": "Not",
       "leaky_relu": "LeakyRelu", "shift_left": "ShiftLeft", "shift_right": "ShiftRight"}  # Ascend C names


# --------------------------------------------------------------------------------------------
# data and the model of a whole call
# --------------------------------------------------------------------------------------------

def make(dtype: str, n: int, case: Case, nonzero: bool = False) -> np.ndarray:
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        return RNG.integers(lo, hi + 1, n, dtype=np.int64).astype(NP[dtype])
    lo, hi = case.values.get(dtype, (-8, 8))
    x = RNG.uniform(lo, hi, n).astype(NP[dtype])
    if nonzero or case.values.get("div"):
        x[x == 0] = 1
    return x


def decode(x: np.ndarray, dtype: str) -> list:
    return R.values(x, FMT[dtype]) if dtype in FMT else [int(v) for v in x.tolist()]


def encode(vals: list, dtype: str) -> np.ndarray:
    return R.to_array(vals, FMT[dtype], NP[dtype]) if dtype in FMT else np.array(vals, NP[dtype])


def operands(case: Case, src: str, dst: str, n_src: int, n_dst: int):
    """(dst, src0, src1) arrays for a call; src1 is empty for one-source kinds."""
    d = make(dst, n_dst, case)
    x = make(src, n_src, case)
    y = make(src, n_src, case, nonzero=True) if case.kind == "binary" else np.zeros(0, NP[src])
    return d, x, y


def expected(case: Case, src: str, dst: str, d, x, y, scalar, index):
    """dst after the call: ``index`` is a list of repeats of (dst i, src0 i, src1 i) lane triples, in order."""
    dv, xv = decode(d, dst), decode(x, src)
    yv = decode(y, src) if y.size else []
    if case.kind == "axpy":
        s = rnd(R.Fraction(scalar), src)  # the scalar is cast to src's dtype (pyasc: _mat(scalar, src.dtype))
    for di, xi, yi in index:
        args = [xv[xi]] + ([yv[yi]] if case.kind == "binary" else [])
        if case.reads_dst:
            args.append(dv[di])
        if case.kind == "scalar":
            args.append(scalar)
        if case.kind == "axpy":
            args.append(s)
        dv[di] = case.model(dst, *args)
    return encode(dv, dst)


def call(case: Case, t_dst, t_x, t_y, scalar, *form, **named):
    if case.kind == "binary":
        case.fn(t_dst, t_x, t_y, *form, **named)
    elif case.kind in ("scalar", "axpy"):
        case.fn(t_dst, t_x, scalar, *form, **named)
    else:
        case.fn(t_dst, t_x, *form, **named)


def params(case: Case, strides: dict):
    if case.kind == "binary":
        return asc.BinaryRepeatParams(strides["dst"][0], strides["src0"][0], strides["src1"][0],
                                      strides["dst"][1], strides["src0"][1], strides["src1"][1])
    return asc.UnaryRepeatParams(strides["dst"][0], strides["src0"][0], strides["dst"][1], strides["src0"][1])


def assert_same(actual: np.ndarray, want: np.ndarray, dtype: str, context: str) -> None:
    if dtype in FMT:
        ok = R.same_bits(actual, want, FMT[dtype])
    else:
        ok = actual == want
    bad = np.flatnonzero(~ok)[:6]
    assert ok.all(), f"{context}: lanes {bad.tolist()} got {actual[bad].tolist()} want {want[bad].tolist()}"


COMBOS = [(c, s, d) for c in CASES for s, d in c.table["2201"]]
IDS = [f"{c.name}-{s}-{d}" for c, s, d in COMBOS]


def lanes_of(src: str, dst: str) -> int:
    return 256 // max(np.dtype(NP[src]).itemsize, np.dtype(NP[dst]).itemsize)


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case, src, dst", COMBOS, ids=IDS)
def test_count_form_edges(case, src, dst):
    lanes = lanes_of(src, dst)
    n_max = 2 * lanes + 64
    d, x, y = operands(case, src, dst, n_max, n_max)
    for count in (0, 1, lanes - 1, lanes, lanes + 1):
        scalar = case.scalar(src) if case.scalar else None
        out, (instr,) = run(lambda t_d, t_x, t_y: call(case, t_d, t_x, t_y, scalar, count), d, x, y)
        want = expected(case, src, dst, d, x, y, scalar, [(i, i, i) for i in range(count)])
        assert_same(out, want, dst, f"{case.name} count={count}")
        assert (instr.op, instr.count, instr.repeats, instr.cost) == (case.name, count, -(-count // lanes),
                                                                      CPP.get(case.name, case.name.title()))


@pytest.mark.parametrize("case, src, dst", COMBOS, ids=IDS)
def test_split_form_with_holes_and_strides(case, src, dst):
    lanes = lanes_of(src, dst)
    # a bit mask with holes in every block; src0 skips every other block and repeats 17 blocks
    # apart; src1 re-reads the same 8 blocks each repeat (repeat stride 0); dst repeats 9 apart
    mask = [0xF0F3_0000_FFFF_8421, 0x8000_0000_0001_FF00] if lanes == 128 else [0xF0F3_0000_FFFF_8421]
    strides = {"dst": (1, 9), "src0": (2, 17), "src1": (1, 0)}
    repeats = 3
    size = lambda dt: 32 // np.dtype(NP[dt]).itemsize  # noqa: E731 - elements per block
    d, x, y = operands(case, src, dst, size(src) * (17 * 2 + 16), size(dst) * (9 * 2 + 8))
    scalar = case.scalar(src) if case.scalar else None
    p = params(case, strides)
    out, (instr,) = run(lambda t_d, t_x, t_y: call(case, t_d, t_x, t_y, scalar, mask, repeats, p), d, x, y)
    active = lane_mask(mask, lanes)
    idx = {role: split_elements(repeats, lanes, np.dtype(NP[dt]).itemsize, *strides[role], active)
           for role, dt in (("dst", dst), ("src0", src), ("src1", src))}
    order = [t for r in range(repeats) for t in zip(idx["dst"][r], idx["src0"][r], idx["src1"][r])]
    assert_same(out, expected(case, src, dst, d, x, y, scalar, order), dst, f"{case.name} split")
    assert (instr.repeats, instr.count) == (repeats, repeats * int(active.sum()))


@pytest.mark.parametrize("case, src, dst", COMBOS[::3], ids=IDS[::3])
def test_repeat_255_with_a_continuous_mask(case, src, dst):
    lanes = lanes_of(src, dst)
    mask = 32 // max(np.dtype(NP[src]).itemsize, np.dtype(NP[dst]).itemsize)  # one block of the wider dtype
    strides = {"dst": (1, 1), "src0": (1, 1), "src1": (1, 1)}
    size = lambda dt: 32 // np.dtype(NP[dt]).itemsize  # noqa: E731
    d, x, y = operands(case, src, dst, size(src) * 256, size(dst) * 256)
    scalar = case.scalar(src) if case.scalar else None
    out, (instr,) = run(lambda t_d, t_x, t_y: call(case, t_d, t_x, t_y, scalar, mask=mask, repeat_times=255,
                                                   repeat_params=params(case, strides)), d, x, y)
    active = lane_mask(mask, lanes)
    idx = {role: split_elements(255, lanes, np.dtype(NP[dt]).itemsize, *strides[role], active)
           for role, dt in (("dst", dst), ("src0", src), ("src1", src))}
    order = [t for r in range(255) for t in zip(idx["dst"][r], idx["src0"][r], idx["src1"][r])]
    assert_same(out, expected(case, src, dst, d, x, y, scalar, order), dst, f"{case.name} repeat 255")
    assert instr.repeats == 255


REFUSED = [("add_relu", "int32", "int32", "Ascend910B1"), ("fused_mul_add", "int16", "int16", "Ascend910B1"),
           ("mul_add_dst", "float32", "float16", "Ascend910B1"), ("mul_cast", "float32", "int8", "Ascend910B1"),
           ("add_relu_cast", "float16", "uint8", "Ascend910B1"), ("bitwise_and", "int32", "int32", "Ascend910B1"),
           ("bitwise_not", "float16", "float16", "Ascend910B1"), ("leaky_relu", "int16", "int16", "Ascend910B1"),
           ("shift_left", "int16", "int16", "Ascend310P3"), ("shift_right", "uint32", "uint32", "Ascend310P3"),
           ("axpy", "float32", "float16", "Ascend910B1"), ("div", "int32", "int32", "Ascend910B1")]


@pytest.mark.parametrize("name, src, dst, soc", REFUSED)
def test_a_dtype_the_page_does_not_list_is_refused(name, src, dst, soc):
    case = BY_NAME[name]
    d, x, y = np.zeros(64, NP[dst]), np.ones(64, NP[src]), np.ones(64, NP[src])
    scalar = 1
    with pytest.raises(asc.KernelError, match=rf"{name} does not support {src if src != dst else ''}") as info:
        run(lambda t_d, t_x, t_y: call(case, t_d, t_x, t_y, scalar, 16), d, x, y, soc=soc)
    assert info.value.kind == "unsupported"


@pytest.mark.parametrize("case, src, dst", [(c, s, d) for c in CASES for s, d in c.table.get("2002", [])][::4])
def test_310p_takes_its_dtypes(case, src, dst):
    d, x, y = operands(case, src, dst, 64, 64)
    scalar = case.scalar(src) if case.scalar else None
    out, _ = run(lambda t_d, t_x, t_y: call(case, t_d, t_x, t_y, scalar, 32), d, x, y, soc="Ascend310P3")
    assert_same(out, expected(case, src, dst, d, x, y, scalar, [(i, i, i) for i in range(32)]), dst, case.name)


@pytest.mark.parametrize("amount", [-1, 17])
def test_shift_amount_out_of_range_is_refused(amount):
    with pytest.raises(asc.KernelError, match=r"shift amount must be an integer in \[0, 16\] for int16 .*ShiftLeft"):
        run(lambda d, x, y: asc.shift_left(d, x, amount, 16), np.zeros(16, np.int16), np.ones(16, np.int16))


def test_shift_examples_of_the_pages():
    x = np.array([0b1010101010101010] * 16, np.uint16)
    out, _ = run(lambda d, s, y: asc.shift_left(d, s, 3, 16), np.zeros(16, np.int16), x.view(np.int16))
    assert out.view(np.uint16)[0] == 0b1101010101010000
    out, _ = run(lambda d, s, y: asc.shift_right(d, s, 3, 16), np.zeros(16, np.int16), x.view(np.int16))
    assert out.view(np.uint16)[0] == 0b1111010101010101
    out, _ = run(lambda d, s, y: asc.shift_right(d, s, 1, 16), np.zeros(16, np.uint16), x)
    assert out[0] == 0b0101010101010101


def test_mul_add_dst_in_place_accumulates_with_dst_repeat_stride_0():
    # dst is read and written by every repeat: the repeats run in order
    a, b, d = (np.full(64, v, np.float32) for v in (1.5, 2.0, 0.25))

    def body(t_d, t_x, t_y):
        asc.mul_add_dst(t_d, t_x, t_y, 64, 4, asc.BinaryRepeatParams(1, 1, 1, 0, 0, 0))

    out, _ = run(body, d, a, b)
    np.testing.assert_array_equal(out, np.full(64, 0.25 + 4 * 3.0, np.float32))


def test_fused_multiply_add_rounds_once_where_float64_would_round_twice():
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a float32 midpoint; adding 2^-70 puts the exact result just
    # above it, so one rounding gives 1 + 2^-11 + 2^-23. float64 loses the 2^-70 and the tie then rounds
    # to even (1 + 2^-11): the model (and the simulator) must not.
    a = np.full(64, 1 + 2.0**-12, np.float32)
    tiny = np.full(64, 2.0**-70, np.float32)
    out, _ = run(lambda d, x, y: asc.fused_mul_add(d, x, y, 64), a.copy(), a, tiny)
    want = BY_NAME["fused_mul_add"].model("float32", R.Fraction(1 + 2.0**-12), R.Fraction(2.0**-70),
                                          R.Fraction(1 + 2.0**-12))
    assert want == R.Fraction(1) + R.Fraction(1, 2**11) + R.Fraction(1, 2**23)
    assert (out == np.float32(1 + 2.0**-11 + 2.0**-23)).all()


def deq_relu_model(a: int, b: int, scale: float) -> object:
    """AddDeqRelu.md: Relu(Cast(x * scale)), x = src0 + src1 (int32), scale the DEQSCALE half, CAST_RINT."""
    s = R.values(np.array([scale], np.float16), R.FLOAT16)[0]
    return relu(rnd(R.mul(R.Fraction(wrap(a + b, "int32")), s), "float16"))


def test_add_deq_relu_matches_the_pages_example():
    # AddDeqRelu.md example: scale 0.1, src0 [70 36 43 54 28 49 27 82 95], src1 [19 33 34 50 42 2 97 93 99]
    a = np.array([70, 36, 43, 54, 28, 49, 27, 82, 95] + [0] * 7, np.int32)
    b = np.array([19, 33, 34, 50, 42, 2, 97, 93, 99] + [0] * 7, np.int32)

    def body(d, x, y):
        asc.set_deq_scale(0.1)
        asc.add_deq_relu(d, x, y, 16)

    out, instrs = run(body, np.zeros(16, np.float16), a, b)
    np.testing.assert_array_equal(np.round(out[:9].astype(np.float64), 1),
                                  [8.9, 6.9, 7.7, 10.4, 7.0, 5.1, 12.4, 17.5, 19.4])
    assert [i.op for i in instrs] == ["set_deq_scale", "add_deq_relu"]


@pytest.mark.parametrize("form", ["count", "split"])
def test_add_deq_relu_against_the_model(form):
    a = RNG.integers(-2**20, 2**20, 256).astype(np.int32)
    b = RNG.integers(-2**20, 2**20, 256).astype(np.int32)
    d = np.full(256, 7, np.float16)
    scale = 0.0123
    mask = [0xFFFF_0000_FFFF_0F0F]

    def body(t_d, x, y):
        asc.set_deq_scale(scale)
        if form == "count":
            asc.add_deq_relu(t_d, x, y, 200)
        else:
            asc.add_deq_relu(t_d, x, y, mask, 4, asc.BinaryRepeatParams(1, 1, 1, 4, 8, 8))

    out, _ = run(body, d, a, b)
    if form == "count":
        index = [(i, i, i) for i in range(200)]
    else:  # 64 int32 lanes per repeat; dst half: 4 blocks per repeat
        act = lane_mask(mask, 64)
        dst = split_elements(4, 64, 2, 1, 4, act)
        src = split_elements(4, 64, 4, 1, 8, act)
        index = [t for r in range(4) for t in zip(dst[r], src[r], src[r])]
    want = R.values(d, R.FLOAT16)
    for di, xi, yi in index:
        want[di] = deq_relu_model(int(a[xi]), int(b[yi]), scale)
    assert_same(out, R.to_array(want, R.FLOAT16, np.float16), "float16", "add_deq_relu")


def test_add_deq_relu_without_set_deq_scale_is_a_kernel_error():
    with pytest.raises(asc.KernelError, match=r"DEQSCALE register, which no asc\.set_deq_scale\(scale\) has set"):
        run(lambda d, x, y: asc.add_deq_relu(d, x, y, 16), np.zeros(16, np.float16), np.zeros(16, np.int32),
            np.zeros(16, np.int32))


def test_add_deq_relu_after_the_castdequant_form_of_set_deq_scale_is_a_kernel_error():
    def body(d, x, y):
        asc.set_deq_scale(1.0, 0, True)  # fills DEQSCALE with CastDequant's int16 -> b8 parameters
        asc.add_deq_relu(d, x, y, 16)

    with pytest.raises(asc.KernelError, match=r"holds the CastDequant int16 -> 8-bit parameters"):
        run(body, np.zeros(16, np.float16), np.zeros(16, np.int32), np.zeros(16, np.int32))
