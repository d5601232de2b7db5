"""Vector instruction rules fusekit.asc enforces: bit-identical results, operand and overlap rules.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from fusekit import asc

from support import assert_bits_equal, assert_poisoned, gm_view, raises_at, ub_buf


# ---------------------------------------------------------------------------------------------
# Vector instructions
# ---------------------------------------------------------------------------------------------

@asc.jit
def vec_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, s: float,
               OP: asc.ConstExpr, KIND: asc.ConstExpr[str], N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    zg = gm_view(z, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, xg.dtype, N)
    b = ub_buf(pipe, xg.dtype, N)
    c = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(a, xg, N)
    asc.data_copy(b, yg, N)
    if KIND == "binary":
        OP(c, a, b, n)
    if KIND == "scalar":
        OP(c, a, s, n)
    if KIND == "unary":
        OP(c, a, n)
    if KIND == "duplicate":
        OP(c, s, n)
    asc.data_copy(zg, c, N)


def run_vec(op, kind, x, y=None, n=None, s=0.0):
    y = np.zeros_like(x) if y is None else y
    z = np.zeros_like(x)
    vec_kernel[1](x, y, z, x.size if n is None else n, s, op, kind, x.size)
    return z


def _recip(x):
    return x.dtype.type(1) / x


def _rsqrt(x):  # one rounding of the exact result (the simulator's documented per-instruction rounding)
    return (1 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


def _rounded(fn):  # the real function (the C library's, not numpy's CPU-dependent one) rounded once to the dtype
    return lambda x: np.array([fn(float(v)) for v in x]).astype(x.dtype)


BINARY = [(asc.add, np.add), (asc.sub, np.subtract), (asc.mul, np.multiply), (asc.div, np.divide),
          (asc.max, np.maximum), (asc.min, np.minimum)]
UNARY = [(asc.exp, _rounded(math.exp), (-6, 6)), (asc.ln, _rounded(math.log), (0.01, 100)), (asc.sqrt, np.sqrt, (0, 100)),
         (asc.rsqrt, _rsqrt, (0.01, 100)), (asc.reciprocal, _recip, (0.1, 100)), (asc.abs, np.abs, (-50, 50)),
         (asc.relu, lambda v: np.maximum(v, v.dtype.type(0)), (-50, 50))]
SCALAR = [(asc.adds, np.add), (asc.muls, np.multiply), (asc.maxs, np.maximum), (asc.mins, np.minimum)]
COUNTS = [0, 1, 17, 100, 256]
DTYPES = [np.float16, np.float32]


def _check_vector_result(z, expected, n):
    assert_bits_equal(z[:n], expected[:n])
    if n < z.size:
        assert_poisoned(z[n:])  # the instruction touched exactly `count` elements


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary_ops_bit_identical_to_numpy(op, ref, dtype, rng):
    x = rng.uniform(-100, 100, 256).astype(dtype)
    y = rng.uniform(-100, 100, 256).astype(dtype)
    y[np.abs(y) < 0.5] = 3  # keep div finite
    for n in COUNTS:
        _check_vector_result(run_vec(op, "binary", x, y, n), ref(x, y), n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref, lim", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_ops_bit_identical_to_numpy(op, ref, lim, dtype, rng):
    x = rng.uniform(*lim, 256).astype(dtype)
    for n in COUNTS:
        _check_vector_result(run_vec(op, "unary", x, n=n), ref(x), n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref", SCALAR, ids=[s[0].__name__ for s in SCALAR])
@pytest.mark.parametrize("s", [0.1, -2.5, 1 / 3, 1 + 2**-11 + 2**-40])
def test_scalar_ops_convert_scalar_to_dtype_first(op, ref, s, dtype, rng):
    x = rng.uniform(-100, 100, 256).astype(dtype)
    scalar = dtype(np.float32(s))  # launch: Python float -> float32; instruction: -> tensor dtype
    for n in (0, 17, 256):
        _check_vector_result(run_vec(op, "scalar", x, n=n, s=s), ref(x, scalar), n)


def test_muls_float16_scale_is_double_rounded_through_float32():
    # 1 + 2**-11 + 2**-40 is above the float16 tie, so np.float16(s) == 1 + 2**-10; but the launch rounds
    # it to float32 first (1 + 2**-11, exactly the tie), which then rounds to even: 1.0.
    s = 1 + 2**-11 + 2**-40
    assert np.float16(s) != np.float16(np.float32(s)) == 1
    x = np.arange(1, 257, dtype=np.float16)
    assert_bits_equal(run_vec(asc.muls, "scalar", x, s=s), x)
    x = np.linspace(-3, 3, 256).astype(np.float16)
    assert_bits_equal(run_vec(asc.muls, "scalar", x, s=0.1), x * np.float16(np.float32(0.1)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_duplicate(dtype):
    x = np.zeros(64, dtype)
    for n in (0, 17, 64):
        _check_vector_result(run_vec(asc.duplicate, "duplicate", x, n=n, s=0.1), np.full(64, np.float32(0.1)).astype(dtype), n)


@asc.jit
def vec_rules_kernel(MODE: asc.ConstExpr[str], SOC_DTYPE: asc.ConstExpr):
    pipe = asc.TPipe()
    a_buf = asc.TBuf(asc.TPosition.VECCALC)
    b_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=a_buf, num=128)
    pipe.init_buffer(buf=b_buf, num=128)
    a = a_buf.get(asc.float16)
    b = b_buf.get(asc.float16)
    asc.duplicate(a, 1.0, 64)
    asc.duplicate(b, 2.0, 64)
    if MODE == "count":
        asc.add(a, a, b, 80)  # <count>
    if MODE == "count_src":
        asc.add(b, a[32:], b, 48)  # <count_src>
    if MODE == "partial":
        asc.add(a[16:], a, b, 32)  # <partial>
    if MODE == "in_place":
        asc.add(a, a, b, 64)
        asc.muls(a, a, 3.0, 64)
        asc.add(a, a, a, 64)
        return a.get_value(63)
    if MODE == "bf16":
        asc.add(a_buf.get(SOC_DTYPE), a_buf.get(SOC_DTYPE), b_buf.get(SOC_DTYPE), 16)  # <bf16>
    if MODE == "mismatch":
        asc.add(a, a, b_buf.get(asc.float32), 16)  # <mismatch>
    if MODE == "global":
        g = asc.GlobalTensor()
        asc.add(a, g, b, 16)  # <global>
    if MODE == "misaligned":
        asc.exp(a, b[8:], 16)  # <misaligned>


@pytest.mark.parametrize("mode, match, tensor, start_stop", [
    ("count", r"add on aiv\(0\).*accesses a_buf elements \[0, 80\) but the tensor has 64 elements", "a_buf", (0, 80)),
    ("count_src", r"accesses a_buf\[32:\] elements \[0, 48\) but the tensor has 32 elements", "a_buf[32:]", (0, 48)),
    ("partial", r"a_buf \(UB \[0, 64\)\) partially overlaps the destination a_buf\[16:\] \(UB \[32, 96\)\)",
     "a_buf[16:]", (None, None)),
    ("bf16", r"add does not support bfloat16 \(\w+\) on Ascend910B1 \(supported: float16, float32, int16, int32\); "
             r"cast to float32 first", "a_buf", (None, None)),
    ("mismatch", r"dtype mismatch: a_buf is float16 but b_buf is float32", "b_buf", (None, None)),
    ("global", r"operands must be LocalTensors in UB, got GlobalTensor", "", (None, None)),
    ("misaligned", r"b_buf\[8:\] starts at UB byte 144, not 32-byte aligned", "b_buf[8:]", (None, None)),
])
def test_vector_operand_rules(mode, match, tensor, start_stop):
    with raises_at(vec_rules_kernel, mode, match) as info:
        vec_rules_kernel[1](mode, asc.bfloat16)
    assert (info.value.tensor, (info.value.start, info.value.stop)) == (tensor, start_stop)


def test_vector_full_overlap_in_place_works():
    out = []

    @asc.jit
    def wrapper():
        out.append(vec_rules_kernel("in_place", None))

    wrapper[1]()
    assert out == [18.0]  # ((1 + 2) * 3) * 2


def test_vector_count_zero_is_a_noop_even_with_partial_overlap():
    @asc.jit
    def k():
        pipe = asc.TPipe()
        a = ub_buf(pipe, asc.float32, 64)
        asc.add(a[8:], a, a, 0)

    result = k[1]()
    (instr,) = [i for i in result.trace if i.op == "add"]
    assert (instr.count, instr.nbytes, instr.writes[0].nbytes) == (0, 0, 0)
