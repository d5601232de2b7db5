"""float16 arithmetic in C (fusekit.asc.native over the extension _native) gives numpy's bits.

The claim: float16 + - * / and sqrt computed in float32 and rounded once to half (to nearest even) are the
correctly rounded half results, because float32 has 24 >= 2 * 11 + 2 significand bits (Figueroa, "When is
double rounding innocuous?", SIGNUM 1995). numpy's float16 ufuncs compute the same values. The NaN a result
carries follows numpy's rule (the header of src/fusekit/asc/_native.c).

References, both independent of fusekit: numpy's float16 ufuncs and casts, bit for bit, NaN payloads
included; and tests/ieee754_ref.py (exact rationals, one rounding) on a sample of finite operands. Both of
the extension's paths are checked: the AVX2 + F16C loops and the portable C ones. Unary operations and
float16 -> float32 run over all 65,536 halves; binary ones over 2**20 random bit-pattern pairs plus every
pair of special values. The reduction trees are checked against the documented order (pyasc
whole_reduce_sum 约束说明: data0 + data1, data2 + data3, ..., then pairwise), built here with numpy's
float16 add and with tests/reduction_ref.py.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import ieee754_ref as R
import reduction_ref as RR
from fusekit.asc import overflow
from fusekit.asc import native
from fusekit.asc.basic.reduction import tree_sum
from fusekit.asc.basic.rounding import RoundMode, convert
from fusekit.asc import dtypes

TESTS = Path(__file__).resolve().parents[2]
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
CODE = {"add": 0, "sub": 1, "mul": 2, "div": 3}  # _native.binary's op codes
REF = {"add": R.add, "sub": R.sub, "mul": R.mul, "div": R.div}


def _compiler() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


try:
    EXT = importlib.import_module("fusekit.asc._native")
except ImportError:
    EXT = None

needs_ext = pytest.mark.skipif(EXT is None, reason="the C extension was not built (no C compiler at install)")
ALL_HALVES = np.arange(2**16, dtype=np.uint16)


def _specials() -> np.ndarray:
    """Zeros, subnormals, 1 and its neighbours, the largest finite, inf, quiet and signalling NaNs; both signs."""
    bits = [0x0000, 0x0001, 0x0002, 0x01ff, 0x03ff, 0x0400, 0x0401, 0x3bff, 0x3c00, 0x3c01, 0x3e00, 0x4000, 0x7bfe,
            0x7bff, 0x7c00, 0x7c01, 0x7c02, 0x7d00, 0x7dff, 0x7e00, 0x7e01, 0x7f00, 0x7fff]
    return np.array(bits + [b | 0x8000 for b in bits], np.uint16)


def _bits16(x) -> np.ndarray:
    return np.asarray(x).view(np.uint16)


@pytest.fixture(params=["simd", "portable"])
def loops(request):
    """Each test of the extension runs on both of its paths (the portable one is what a CPU without AVX2 +
    F16C gets, or another architecture)."""
    if EXT is None:
        pytest.skip("the C extension was not built (no C compiler at install)")
    previous = EXT.set_simd(request.param == "simd")
    if request.param == "simd" and EXT.isa() == "portable":
        EXT.set_simd(previous)
        pytest.skip("this CPU has no AVX2 + F16C")
    yield request.param
    EXT.set_simd(previous)


def test_the_extension_is_built_and_in_use():
    """The dev install built _native, and fusekit uses it unless FUSEKIT_NO_NATIVE is set (CI's numpy job)."""
    if EXT is None:
        if _compiler() is None:
            pytest.skip("no C compiler here: the install skipped the optional extension, numpy computes")
        pytest.fail("a C compiler is present but fusekit.asc._native was not built: reinstall (pip install -e .)")
    if os.environ.get("FUSEKIT_NO_NATIVE", "0") not in ("", "0"):
        assert not native.enabled() and "FUSEKIT_NO_NATIVE" in native.STATUS
    else:
        assert native.enabled(), native.STATUS
        assert native.STATUS.startswith("C ("), native.STATUS


# -- unary, exhaustive ---------------------------------------------------------------------------------


def test_sqrt_over_every_half(loops):
    out = np.empty(2**16, np.uint16)
    assert EXT.sqrt(out, ALL_HALVES)
    with np.errstate(invalid="ignore"):
        expected = np.sqrt(ALL_HALVES.view(np.float16))
    np.testing.assert_array_equal(out, _bits16(expected))


def test_half_to_float_over_every_half(loops):
    out = np.empty(2**16, np.uint32)
    assert EXT.to_float32(out, ALL_HALVES)
    np.testing.assert_array_equal(out, ALL_HALVES.view(np.float16).astype(np.float32).view(np.uint32))


def test_float_to_half_at_every_rounding_boundary_and_random(loops, rng):
    """Every half, every midpoint between neighbouring halves (ties to even) and one float32 ulp either
    side of it, float32 NaNs whose payload half cannot keep, and 2**20 random float32 bit patterns."""
    h = ALL_HALVES.view(np.float16).astype(np.float32)
    finite = h[np.isfinite(h)]
    ordered = np.unique(finite.astype(np.float64))
    mids = ((ordered[:-1] + ordered[1:]) / 2).astype(np.float32)  # exact: the midpoint of two halves fits float32
    above, below = np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))
    nans = np.array([0x7f800001, 0x7f801fff, 0x7f802000, 0x7fbfffff, 0x7fc00000, 0xff800001, 0xffffffff], np.uint32)
    edges = np.array([65519.996, 65520.0, 2.0**-25, 2.0**-24], np.float32)
    x = np.concatenate([h, mids, above, below, nans.view(np.float32), edges,  # all float32: NaN bits kept as they are
                        rng.integers(0, 2**32, 2**20, dtype=np.uint32).view(np.float32)])
    assert x.dtype == np.float32
    out = np.empty(x.size, np.uint16)
    assert EXT.to_float16(out, x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, _bits16(x.astype(np.float16)))


# -- binary: random bit patterns and every special pair -----------------------------------------------


def _pairs(rng) -> tuple[np.ndarray, np.ndarray]:
    s = _specials()
    n = 2**20 + 7  # not a multiple of 8: the loops' tails too
    a = np.concatenate([np.repeat(s, s.size), rng.integers(0, 2**16, n, dtype=np.uint16)])
    b = np.concatenate([np.tile(s, s.size), rng.integers(0, 2**16, n, dtype=np.uint16)])
    return a, b


@pytest.mark.parametrize("op", list(OPS))
def test_binary_on_random_and_special_pairs(loops, op, rng):
    a, b = _pairs(rng)
    out = np.empty_like(a)
    assert EXT.binary(CODE[op], out, a, b)
    with np.errstate(all="ignore"):
        expected = OPS[op](a.view(np.float16), b.view(np.float16))
    np.testing.assert_array_equal(out, _bits16(expected))


@pytest.mark.parametrize("op", list(OPS))
def test_binary_with_a_scalar(loops, op, rng):
    """Adds / Muls and their kin: the scalar (already a half) is the second operand of every lane."""
    a = np.concatenate([_specials(), rng.integers(0, 2**16, 4099, dtype=np.uint16)])
    out = np.empty_like(a)
    for s in _specials():
        assert EXT.binary(CODE[op], out, a, int(s))
        with np.errstate(all="ignore"):
            expected = OPS[op](a.view(np.float16), np.uint16(s).view(np.float16))
        np.testing.assert_array_equal(out, _bits16(expected), err_msg=f"scalar {s:#06x}")


@pytest.mark.parametrize("op", list(OPS))
def test_binary_is_correctly_rounded(loops, op, rng):
    """Against exact rationals rounded once (tests/ieee754_ref.py), not against numpy: finite operands,
    normal and subnormal."""
    a = rng.integers(0, 0x7c00, 1500, dtype=np.uint16) | (rng.integers(0, 2, 1500, dtype=np.uint16) << 15)
    b = rng.integers(0, 0x7c00, 1500, dtype=np.uint16) | (rng.integers(0, 2, 1500, dtype=np.uint16) << 15)
    out = np.empty_like(a)
    assert EXT.binary(CODE[op], out, a, b)
    expected = [R.round_to(REF[op](x, y), R.FLOAT16) for x, y in zip(R.values(a.view(np.float16), R.FLOAT16),
                                                                       R.values(b.view(np.float16), R.FLOAT16))]
    np.testing.assert_array_equal(out, _bits16(R.to_array(expected, R.FLOAT16, np.float16)))


def test_sqrt_is_correctly_rounded(loops):
    finite = ALL_HALVES[ALL_HALVES < 0x7c00]  # every non-negative finite half
    out = np.empty_like(finite)
    assert EXT.sqrt(out, finite)
    expected = [R.sqrt_rounded(v, R.FLOAT16) for v in R.values(finite.view(np.float16), R.FLOAT16)]
    np.testing.assert_array_equal(out, _bits16(R.to_array(expected, R.FLOAT16, np.float16)))


def test_in_place_and_overlap(loops):
    """out may be an operand (the count form's dst == src); a partial overlap is left to numpy (False)."""
    x = np.arange(64, dtype=np.float16)
    expected = x + x
    assert EXT.binary(0, x, x, x)
    np.testing.assert_array_equal(_bits16(x), _bits16(expected))
    assert not EXT.binary(0, x[1:], x[:-1], x[:-1])
    np.testing.assert_array_equal(_bits16(x), _bits16(expected))  # nothing written
    wide = np.zeros(32, np.float32)
    assert not EXT.to_float32(wide, wide[:16].view(np.uint16).view(np.float16)[:32])


# -- the reductions' trees -------------------------------------------------------------------------


def _tree_by_levels(y: np.ndarray, saturate: bool) -> np.ndarray:
    """The documented order with numpy's float16 add: data0 + data1, data2 + data3, ..., level by level."""
    with np.errstate(all="ignore"):
        while y.shape[-1] > 1:
            y = y[..., 0::2] + y[..., 1::2]
            if saturate:
                y = np.where(np.isnan(y), np.float16(0), y)
                y = np.where(np.isinf(y), np.copysign(np.float16(65504), y), y).astype(np.float16)
    return y[..., 0]


@pytest.mark.parametrize("width", [2, 4, 16, 64, 128, 256])
@pytest.mark.parametrize("saturate", [False, True])
def test_tree_sum_levels(loops, width, saturate, rng):
    """Rows of random bit patterns (NaN, inf and subnormals among them) and of large values that overflow."""
    rows = np.concatenate([rng.integers(0, 2**16, (300, width), dtype=np.uint16).view(np.float16),
                           rng.uniform(-65504, 65504, (300, width)).astype(np.float16)])
    out = np.empty(len(rows), np.float16)
    EXT.tree_sum(out, rows, saturate)
    np.testing.assert_array_equal(_bits16(out), _bits16(_tree_by_levels(rows, saturate)))


def test_tree_sum_against_the_exact_reference(rng):
    """reduction.tree_sum (the C path where it is in use) against tests/reduction_ref.py's tree of exact adds,
    masked lanes and a width that is not a power of two included."""
    x = rng.uniform(-300, 300, (40, 100)).astype(np.float16)
    active = rng.random(x.shape) < 0.8
    got = tree_sum(x, active, overflow.INF_NAN)
    add = RR.adder(R.FLOAT16)
    expected = [RR.tree([v if on else None for v, on in zip(RR.decode(row), act)], add) for row, act in zip(x, active)]
    np.testing.assert_array_equal(_bits16(got), _bits16(RR.encode(expected, np.float16)))


def test_tree_sum_shape_and_saturation_example():
    """ReduceDataBlock.md 约束说明: [60000, 60000, -30000, 100] in saturation mode is 65504 + (-29900) = 35604,
    each sum rounded to half (-29900 -> -29904; 35600 ties to even 35584); a 1-D row gives a 0-d array, as the
    numpy levels do."""
    x = np.array([60000, 60000, -30000, 100], np.float16)
    got = tree_sum(x, None, overflow.SATURATION)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float16
    assert float(got) == 35584.0


# -- the Python wrapper: what goes to C and what stays numpy ------------------------------------------


def test_evaluate_matches_the_ufunc_for_every_form(rng):
    a = rng.integers(0, 2**16, (3, 40), dtype=np.uint16).view(np.float16)
    b = rng.integers(0, 2**16, (3, 40), dtype=np.uint16).view(np.float16)
    unaligned = np.zeros(a.nbytes + 1, np.uint8)[1:].view(np.float16).reshape(a.shape)
    unaligned[...] = a
    assert not unaligned.flags.aligned
    with np.errstate(all="ignore"):
        for fn in OPS.values():
            for args in ((a, b), (a, np.float16(1.5)), (a[:, ::2], b[:, ::2]), (a, 2.0), (a.astype(np.float32), b),
                         (unaligned, b)):
                got, expected = native.evaluate(fn, *args), fn(*args)
                assert type(got) is type(expected) and got.dtype == expected.dtype
                np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))
            out = np.empty_like(a)
            assert native.evaluate(fn, a, b, out=out) is out
            np.testing.assert_array_equal(_bits16(out), _bits16(fn(a, b)))
        np.testing.assert_array_equal(_bits16(native.evaluate(np.sqrt, a)), _bits16(np.sqrt(a)))
        assert native.evaluate(np.maximum, a, b).dtype == np.float16  # not in C: numpy's own call


def test_casts_through_convert(rng):
    """Cast's conversion (rounding.convert) of float16 <-> float32 under every round mode Cast takes there."""
    h = ALL_HALVES.view(np.float16)
    np.testing.assert_array_equal(convert(h, dtypes.float32, RoundMode.CAST_NONE).view(np.uint32),
                                  h.astype(np.float32).view(np.uint32))
    f = rng.integers(0, 2**32, 2**16, dtype=np.uint32).view(np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(_bits16(native.nearest(f, np.float16)), _bits16(f.astype(np.float16)))
    finite = f[np.isfinite(f) & (np.abs(f) < 60000)]
    for mode, rounded in ((RoundMode.CAST_FLOOR, R.FLOOR), (RoundMode.CAST_ODD, R.ODD)):
        expected = [R.round_to(v, R.FLOAT16, rounded) for v in R.values(finite[:500], R.FLOAT32)]
        np.testing.assert_array_equal(_bits16(convert(finite[:500], dtypes.float16, mode)),
                                      _bits16(R.to_array(expected, R.FLOAT16, np.float16)))


# -- the fallback: the simulator without the extension gives the same bits ------------------------------

_PROGRAM = r"""
import hashlib, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from fusekit import asc
from fusekit.asc import native
from fusekit.ops.fused_add_scale import run as fused_add_scale
from vector_harness import run

rng = np.random.default_rng(7)
x = rng.integers(0, 2**16, 2048, dtype=np.uint16).view(np.float16)
y = rng.integers(0, 2**16, 2048, dtype=np.uint16).view(np.float16)
d16, d32 = np.zeros(2048, np.float16), np.zeros(2048, np.float32)
p = asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8)
bodies = {
    "add": lambda d, a, b: asc.add(d, a, b, 2048), "sub": lambda d, a, b: asc.sub(d, a, b, 2000),
    "mul": lambda d, a, b: asc.mul(d, a, b, 2048), "div": lambda d, a, b: asc.div(d, a, b, 2048),
    "adds": lambda d, a, b: asc.adds(d, a, 1.5, 2048), "muls": lambda d, a, b: asc.muls(d, a, -0.1, 2048),
    "sqrt": lambda d, a, b: asc.sqrt(d, a, 2048), "add split": lambda d, a, b: asc.add(d, a, b, [2**64 - 1, 7], 16, p),
    "whole_reduce_sum": lambda d, a, b: asc.whole_reduce_sum(d, a, 128, 16, 1, 1, 8),
    "reduce_sum": lambda d, a, b: asc.reduce_sum(d, a, b, 2048),
}
out = {}
for name, body in bodies.items():
    got, _ = run(body, d16.copy(), x, y)
    out[name] = got.view(np.uint16).tolist()
got, _ = run(lambda d, a, b: asc.cast(d, a, asc.RoundMode.CAST_NONE, 2048), d32.copy(), x)
out["cast to float"] = got.view(np.uint32).tolist()
f = rng.standard_normal(2048).astype(np.float32) * 3e4
got, _ = run(lambda d, a, b: asc.cast(d, a, asc.RoundMode.CAST_RINT, 2048), d16.copy(), f)
out["cast to half"] = got.view(np.uint16).tolist()
a, b = rng.standard_normal((2, 70001)).astype(np.float16)
for precision in ("native", "fp32"):
    out["FusedAddScale " + precision] = fused_add_scale(a, b, 1.5, precision=precision).y.view(np.uint16).tolist()
print(json.dumps({"status": native.STATUS, "digest": {k: hashlib.sha256(json.dumps(v).encode()).hexdigest()
                                                       for k, v in out.items()}}))
"""


def _program(no_native: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "FUSEKIT_NO_NATIVE"}
    if no_native:
        env["FUSEKIT_NO_NATIVE"] = "1"
    done = subprocess.run([sys.executable, "-c", _PROGRAM, str(TESTS)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_simulator_without_the_extension_gives_the_same_bits():
    """FUSEKIT_NO_NATIVE=1 (numpy) and the default (C where built) run the same instructions and FusedAddScale
    in both precisions to the same bits."""
    with_numpy, default = _program(True), _program(False)
    assert with_numpy["status"] == "numpy: FUSEKIT_NO_NATIVE is set"
    if EXT is not None:
        assert default["status"].startswith("C ("), default["status"]
    differ = [k for k in default["digest"] if default["digest"][k] != with_numpy["digest"][k]]
    assert not differ, differ
