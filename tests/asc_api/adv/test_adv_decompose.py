"""The decomposition of the composite asc.adv APIs into basic instructions (fusekit.asc.adv.decompose).

Expected values: tests/ieee754_ref.py (exact rationals, one rounding per instruction, IEEE 754-2019 4.3 and 7.4)
and the saturation rule of fusekit's overflow mode (+-inf -> +-largest finite, NaN -> 0: ``docs/ascendc-model.md``,
"Overflow modes"); the instruction sequences are those of the asc-devkit implementations each API names:
axpy_common_impl.h (AxpyIntrinsicsImpl), xor_membase_impl.h (XorCalcSimplified), AscendQuant.md 实现原理,
softmax_generic_nd_impl.h (SoftMaxGenericNDImpl) and rmsnorm_common_impl.h (RmsNormCompute).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from fusekit.asc.adv import decompose
from fusekit.asc.adv.decompose import step, walk

import ieee754_ref as ref

_adv = {name: importlib.import_module(f"fusekit.asc.adv.{name}") for name in ("axpy", "math", "norm", "quant",
                                                                              "softmax")}


def test_each_step_rounds_once_to_its_dtype():
    """Mul then Adds in half: two roundings, the first one visible in the result."""
    a = np.array([1 + 2 ** -10, 3.0, -0.333, 1000.0], np.float16)
    b = np.array([1 + 2 ** -10, 1 / 3, 7.5, 70.0], np.float16)
    offset = np.float16(-1.0)
    steps = [step("mul", "t", ("a", "b"), a.size, "float16"),
             step("adds", "t", ("t",), a.size, "float16", scalars=(offset,))]
    got = walk(steps, {"a": a, "b": b}, "inf_nan")["t"]
    h = ref.FLOAT16
    want = [ref.round_to(ref.add(ref.round_to(ref.mul(x, y), h), ref.values(np.array([offset]), h)[0]), h)
            for x, y in zip(ref.values(a, h), ref.values(b, h))]
    assert ref.same_bits(got, ref.to_array(want, h, np.float16), h).all()
    # 1 + 2^-10 squared is 1 + 2^-9 + 2^-20: the Mul rounds the 2^-20 away, so the sum is 2^-9 exactly
    assert got[0] == np.float16(2 ** -9)


@pytest.mark.parametrize("mode, want", [("inf_nan", np.inf), ("saturation", 0.0)])
def test_the_overflow_mode_applies_to_each_step(mode, want):
    """300 x 300 overflows half: inf (IEEE 7.4) or, in saturation mode, 65504, which Adds -65504 brings to 0."""
    x = np.array([300.0], np.float16)
    steps = [step("mul", "t", ("x", "x"), 1, "float16"),
             step("adds", "t", ("t",), 1, "float16", scalars=(np.float16(-65504),))]
    assert walk(steps, {"x": x}, mode)["t"][0] == want


def test_a_step_kept_out_of_the_overflow_mode_keeps_its_inf():
    x = np.array([300.0], np.float16)
    steps = [step("mul", "t", ("x", "x"), 1, "float16", overflow=False),
             step("adds", "t", ("t",), 1, "float16", scalars=(np.float16(-65504),), overflow=False)]
    assert walk(steps, {"x": x}, "saturation")["t"][0] == np.inf


def test_a_step_reads_the_values_the_earlier_steps_wrote_in_place():
    """XorCalcSimplified works in place on dst: And, Or into the temporary, Not of dst, And: x ^ y."""
    x = np.array([0, 1, 0x7FFF, -1, -32768, 0x1234], np.int16)
    y = np.array([0, 3, 0x00FF, 0, -1, 0x4321], np.int16)
    got = walk(_adv["math"].xor_steps("int16", x.size), {"src0": x, "src1": y}, "inf_nan")["dst"]
    want = [int(a) ^ int(b) for a, b in zip(x, y)]
    assert got.tolist() == want


def test_an_unknown_instruction_is_refused():
    with pytest.raises(KeyError):
        step("no_such_instruction", "t", ("x",), 1, "float32")


# the instruction sequences of the implementations, by Ascend C name
AXPY_HALF = ["Cast", "Cast", "Muls", "Add", "Cast"]  # AxpyIntrinsicsImpl<half, half>
AXPY_MIXED = ["Cast", "Muls", "Add"]  # AxpyIntrinsicsImpl<float, half>
XOR = ["And", "Or", "Not", "And"]
QUANT_FLOAT, QUANT_HALF = ["Cast", "Muls", "Adds", "Cast"], ["Muls", "Adds", "Cast"]
SOFTMAX_FLOAT = ["WholeReduceMax", "Sub", "Exp", "WholeReduceSum", "Div"]
SOFTMAX_HALF = ["Cast", "WholeReduceMax", "Cast", "Sub", "Exp", "WholeReduceSum", "Cast", "Div", "Cast"]
SOFTMAX_MIXED = ["Cast", "WholeReduceMax", "Sub", "Exp", "WholeReduceSum", "Div", "Cast"]
RMSNORM_FLOAT = ["Mul", "RepeatReduceSum", "Muls", "Adds", "Ln", "Muls", "Exp", "Muls", "Mul"]
RMSNORM_HALF = ["Cast", *RMSNORM_FLOAT[:-1], "Cast", "Mul", "Cast"]


@pytest.mark.parametrize("steps, want", [
    (lambda: _adv["axpy"].describe("float16", 8, np.float32(2)), AXPY_HALF),
    (lambda: _adv["axpy"].describe("float32", 8, np.float32(2)), AXPY_MIXED),
    (lambda: _adv["math"].xor_steps("uint16", 8), XOR),
    (lambda: _adv["quant"].describe("float32", 32, np.float16(2), np.float16(0)), QUANT_FLOAT),
    (lambda: _adv["quant"].describe("float16", 32, np.float16(2), np.float16(0)), QUANT_HALF),
    (lambda: _adv["softmax"].describe("float32", "float32", "2201", 2, 64, 64), SOFTMAX_FLOAT),
    (lambda: _adv["softmax"].describe("float16", "float16", "2201", 2, 64, 64), SOFTMAX_HALF),
    (lambda: _adv["softmax"].describe("float16", "float32", "2201", 2, 64, 64), SOFTMAX_MIXED),
    (lambda: _adv["norm"].describe("float32", 2, 64, 64, np.float32(1 / 64), np.float32(1e-5)), RMSNORM_FLOAT),
    (lambda: _adv["norm"].describe("float16", 2, 64, 64, np.float32(1 / 64), np.float32(1e-5)), RMSNORM_HALF),
], ids=["axpy-half", "axpy-mixed", "xor", "quant-float", "quant-half", "softmax-float", "softmax-half",
        "softmax-mixed", "rmsnorm-float", "rmsnorm-half"])
def test_each_description_is_its_implementations_sequence(steps, want):
    described = steps()
    assert [s.cost for s in described] == want
    assert all(isinstance(s, decompose.Step) and s.spec.cpp == s.cost for s in described)


def test_rmsnorm_with_one_original_column_runs_no_reduction():
    """H0 == 1: RmsNormReduceSum's loop does not run (rmsnorm_common_impl.h), the row factors read stale floats."""
    described = _adv["norm"].describe("float32", 2, 64, 1, np.float32(1), np.float32(0))
    assert [s.cost for s in described] == [c for c in RMSNORM_FLOAT if c != "RepeatReduceSum"]
    assert described[1].srcs == ("red",)  # the first Muls reads the stale value
