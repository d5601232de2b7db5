"""Kernel scalar integers are typed as pyasc types them and checked for wrap-around (issue 8, item G).

Types come from pyasc 1.1.1: ``int`` kernel arguments are int32 (``runtime/jit.py``), so are
``get_block_idx()`` / ``get_block_num()`` (``basic/sys_var.py``) and ``asc.range`` indices
(``codegen/function_visitor.py``); ``LocalTensor.get_length()`` is uint32 (``core/tensor.py``); a
binary operation takes its left operand's type (``core/ir_value.py``). Expected values come from
the independent model below (C's fixed-width arithmetic), never from fusekit.
"""

from __future__ import annotations


import numpy as np
import pytest

from fusekit import asc
from support import gm_view, line_of

RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1), "uint32": (0, 2**32 - 1)}


def wrap(value: int, dtype: str) -> int:
    """What a C scalar of ``dtype`` holds after computing ``value``: the value modulo 2**bits."""
    lo, hi = RANGES[dtype]
    return (value - lo) % (hi - lo + 1) + lo


@asc.jit
def offset_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, block_length: int):
    start = asc.get_block_idx() * block_length  # <offset>
    gm_view(out, asc.get_block_num()).set_value(asc.get_block_idx(), start)


def test_issue_example_block_idx_times_block_length_wraps_and_names_the_line():
    block_length = 400_000_000
    first_bad = next(e for e in range(8) if e * block_length > RANGES["int32"][1])  # 6: 2.4e9 > 2**31 - 1
    with pytest.raises(asc.KernelError, match="int32 arithmetic overflows") as info:
        offset_kernel[8](np.zeros(8, np.float32), np.zeros(8, np.int64), block_length)
    err = info.value
    assert (err.core, err.file, err.line) == (first_bad, __file__, line_of(offset_kernel, "offset"))
    assert f"{first_bad} * {block_length} = {first_bad * block_length}" in str(err)
    assert f"computes {wrap(first_bad * block_length, 'int32')}" in str(err)


def test_offsets_that_fit_are_plain_arithmetic():
    out = np.zeros(5, np.int64)
    offset_kernel[5](np.zeros(8, np.float32), out, 400_000_000)  # 4 * 4e8 = 1.6e9 fits int32
    assert out.tolist() == [e * 400_000_000 for e in range(5)]


@asc.jit
def int64_kernel(out: asc.GlobalAddress, block_length: int, LEFT_WIDE: asc.ConstExpr[bool]):
    if LEFT_WIDE:
        start = asc.number(block_length, asc.int64) * asc.get_block_idx()
    else:
        start = asc.get_block_idx() * asc.number(block_length, asc.int64)  # <narrow>
    gm_view(out, asc.get_block_num()).set_value(asc.get_block_idx(), start)


def test_int64_left_operand_does_not_trip():
    out = np.zeros(8, np.int64)
    int64_kernel[8](out, 400_000_000, True)
    assert out.tolist() == [e * 400_000_000 for e in range(8)]  # exact: fits int64


def test_the_left_operand_decides_the_type_as_in_pyasc():
    with pytest.raises(asc.KernelError, match="int32 arithmetic overflows") as info:
        int64_kernel[8](np.zeros(8, np.int64), 400_000_000, False)
    assert info.value.line == line_of(int64_kernel, "narrow")


@asc.jit
def expr_kernel(out: asc.GlobalAddress, A: asc.ConstExpr[int], B: asc.ConstExpr[int], OP: asc.ConstExpr[str],
                DTYPE: asc.ConstExpr):
    x = asc.number(A, DTYPE)
    if OP == "+":
        r = x + B  # <op:+>
    elif OP == "-":
        r = x - B  # <op:->
    elif OP == "*":
        r = x * B  # <op:*>
    elif OP == "<<":
        r = x << B  # <op:<<>
    elif OP == ">>":
        r = x >> B  # <op:>>>
    elif OP == "//":
        r = x // B  # <op://>
    elif OP == "%":
        r = x % B  # <op:%>
    elif OP == "r-":
        r = B - x  # <op:r->
    else:
        r = -x  # <op:neg>
    gm_view(out, 1).set_value(0, r)


def run_expr(a, b, op, dtype):
    out = np.zeros(1, np.int64 if dtype.name != "uint32" else np.uint32)
    expr_kernel[1](out, a, b, op, dtype)
    return int(out[0])


@pytest.mark.parametrize("a, b, op, dtype", [
    (2**31 - 1, 1, "+", asc.int32),            # addition overflow
    (-2**31, 1, "-", asc.int32),               # subtraction underflow
    (-2**31, 0, "r-", asc.int32),              # 0 - INT32_MIN, the Python int on the left
    (65536, 65536, "*", asc.int32),            # 2**32
    (1, 31, "<<", asc.int32),                  # shift into the sign bit
    (3, 5, "-", asc.uint32),                   # unsigned subtraction underflow (3 - 5 wraps to 2**32 - 2)
    (2**32 - 1, 1, "+", asc.uint32),           # unsigned addition wrap
    (2**62, 2, "*", asc.int64),                # int64 overflow
    (-2**31, 0, "neg", asc.int32),             # -INT32_MIN
])
def test_each_operation_that_wraps_raises_at_its_line(a, b, op, dtype):
    name = dtype.name
    exact = {"+": lambda: a + b, "-": lambda: a - b, "r-": lambda: b - a, "*": lambda: a * b,
             "<<": lambda: a << b, "neg": lambda: -a}[op]()
    assert wrap(exact, name) != exact  # the model says it wraps
    with pytest.raises(asc.KernelError, match=rf"{name} arithmetic (overflows|underflows)") as info:
        run_expr(a, b, op, dtype)
    assert info.value.line == line_of(expr_kernel, f"op:{op}")
    assert f"computes {wrap(exact, name)}" in str(info.value)


@pytest.mark.parametrize("a, b, op, dtype", [
    (4_000_000_000, 1, "+", asc.uint32),      # past int32, inside uint32
    (2**31 - 2, 1, "+", asc.int32),            # the largest int32
    (3_000_000_000, 3, "*", asc.int64),
    (1, 40, "<<", asc.int64),
    (-8, 1, ">>", asc.int32),                  # arithmetic shift keeps the sign (ShRSI)
])
def test_values_that_fit_their_type_compute_exactly(a, b, op, dtype):
    exact = {"+": lambda: a + b, "*": lambda: a * b, "<<": lambda: a << b, ">>": lambda: a >> b}[op]()
    assert wrap(exact, dtype.name) == exact
    assert run_expr(a, b, op, dtype) == exact


@pytest.mark.parametrize("a, b", [(-7, 2), (7, -2), (-7, -2), (7, 2), (-1, 3)])
def test_division_truncates_toward_zero_as_c_does(a, b):
    # pyasc emits arith.divsi / remsi: C99 6.5.5 "truncated toward zero", (a/b)*b + a%b == a
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    assert run_expr(a, b, "//", asc.int32) == q
    assert run_expr(a, b, "%", asc.int32) == a - b * q


@pytest.mark.parametrize("a, b, op, match", [
    (5, 0, "//", "division by zero"),
    (5, 32, "<<", "shift count must be in"),
    (5, -1, "<<", "shift count must be in"),
    (-2**31, -1, "//", "int32 arithmetic overflows"),
])
def test_undefined_operations_raise(a, b, op, match):
    with pytest.raises(asc.KernelError, match=match):
        run_expr(a, b, op, asc.int32)


def test_an_operand_that_does_not_fit_the_result_type_is_reported():
    with pytest.raises(asc.KernelError, match="does not fit int32"):
        run_expr(1, 2**40, "+", asc.int32)


@asc.jit
def loop_kernel(out: asc.GlobalAddress, n: int, step: int, TILE: asc.ConstExpr[int], ASC_RANGE: asc.ConstExpr[bool]):
    g = gm_view(out, 4)
    total = TILE * 10**12  # ConstExpr values are Python ints: no int32 check
    g.set_value(0, total // 10**12)
    if ASC_RANGE:
        for i in asc.range(n):
            g.set_value(1, i * step)  # <loop>
    else:
        for i in range(n):  # a Python range over an int32 bound works too
            g.set_value(1, i + n)


def test_constexpr_and_loops_keep_working():
    out = np.zeros(4, np.int64)
    loop_kernel[1](out, 3, 7, 256, True)
    assert out[:2].tolist() == [256, 14]
    loop_kernel[1](out, 3, 7, 256, False)
    assert out[1] == 5


def test_the_asc_range_index_is_int32():
    with pytest.raises(asc.KernelError, match="int32 arithmetic overflows") as info:
        loop_kernel[1](np.zeros(4, np.int64), 3, 2**30, 1, True)  # 2 * 2**30 = 2**31
    assert info.value.line == line_of(loop_kernel, "loop")


@asc.jit
def length_kernel(out: asc.GlobalAddress, extra: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    t = buf.get(asc.float32)
    gm_view(out, 1).set_value(0, t.get_length() - extra)  # <length>


def test_get_length_is_uint32():
    out = np.zeros(1, np.int64)
    length_kernel[1](out, 16)
    assert out[0] == 0  # 64 B of float32 = 16 elements
    with pytest.raises(asc.KernelError, match="uint32 arithmetic underflows") as info:
        length_kernel[1](out, 17)
    assert info.value.line == line_of(length_kernel, "length")


@asc.jit
def ceildiv_kernel(out: asc.GlobalAddress, n: int, d: int):
    gm_view(out, 1).set_value(0, asc.ceildiv(n, d))


def test_ceildiv_is_pyascs_formula():
    out = np.zeros(1, np.int64)
    for n, d in ((10, 3), (9, 3), (1, 32), (0, 5)):
        ceildiv_kernel[1](out, n, d)
        assert out[0] == -(-n // d)
    with pytest.raises(asc.KernelError, match="int32 arithmetic overflows"):
        ceildiv_kernel[1](out, 2**31 - 10, 32)  # pyasc computes (x + y - 1) // y: the sum wraps


def test_scalar_types_as_pyasc_types_them():
    seen = {}

    @asc.jit
    def k(x: asc.GlobalAddress, n: int, s: float, T: asc.ConstExpr[int]):
        seen.update(n=n, s=s, T=T, idx=asc.get_block_idx(), num=asc.get_block_num(),
                    i64=asc.number(3, asc.int64), u32=asc.number(3, asc.uint32), f16=asc.number(3, asc.float16),
                    value=gm_view(x, 2).get_value(1))

    k[2](np.arange(2, dtype=np.int32), 5, 1.5, 7)
    kinds = {name: (type(v).__name__, getattr(v, "dtype", None)) for name, v in seen.items()}
    assert kinds["n"][1] is asc.int32 and kinds["idx"][1] is asc.int32 and kinds["num"][1] is asc.int32
    assert kinds["i64"][1] is asc.int64 and kinds["u32"][1] is asc.uint32 and kinds["value"][1] is asc.int32
    assert type(seen["T"]) is int and type(seen["s"]) is float and type(seen["f16"]) is float
    assert (seen["idx"], seen["num"], seen["value"]) == (1, 2, 1)


def test_shipped_kernel_runs_with_typed_scalars():
    import fusekit

    x = np.arange(3000, dtype=np.float16) / 64
    y = fusekit.fused_add_scale(x, x, 0.5)
    np.testing.assert_array_equal(y, ((x.astype(np.float64) * 2) * 0.5).astype(np.float16))


def test_arithmetic_matches_the_fixed_width_model_on_random_operands():
    from hypothesis import given, settings, strategies as st

    from fusekit.asc.scalar import typed

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(["int32", "int64", "uint32"]), st.integers(-2**64, 2**64), st.integers(-2**64, 2**64),
           st.sampled_from(["+", "-", "*", "//", "%"]))
    def check(name, a, b, op):
        lo, hi = RANGES[name]
        if not (lo <= a <= hi and lo <= b <= hi) or (op in ("//", "%") and b == 0):
            return
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if op in ("//", "%") else 0
        exact = {"+": a + b, "-": a - b, "*": a * b, "//": q, "%": a - b * q}[op]
        x = typed(a, getattr(asc, name))
        compute = {"+": lambda: x + b, "-": lambda: x - b, "*": lambda: x * b, "//": lambda: x // b,
                   "%": lambda: x % b}[op]
        if lo <= exact <= hi:
            result = compute()
            assert result == exact and result.dtype is getattr(asc, name)
        else:
            with pytest.raises(asc.KernelError, match=f"{name} arithmetic"):
                compute()

    check()


@asc.jit
def _power_of_an_argument(x: asc.GlobalAddress, bl: int, reflected: asc.ConstExpr[bool]):
    off = 2 ** bl if reflected else bl ** 2  # noqa: F841


@pytest.mark.parametrize("reflected", [False, True])
def test_power_of_a_kernel_integer_is_refused_as_pyasc_refuses_it(reflected):
    """pyasc's PlainValue.__pow__ / __rpow__ raise NotImplementedError (asc/language/core/ir_value.py)."""
    with pytest.raises(asc.KernelError, match=r"no power operator") as err:
        _power_of_an_argument[1](np.zeros(8, np.float16), 50000, reflected)
    assert err.value.kind == "api" and err.value.line > 0
