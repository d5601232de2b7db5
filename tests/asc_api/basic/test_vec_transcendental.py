"""Transcendental functions: one model (the real function correctly rounded), the same bits on every machine.

Independent references: Python's ``decimal`` (exp correctly rounded at its precision) against the IEEE 754
midpoints of tests/ieee754_ref.py, for exp and ln over every float16 and every bfloat16 input; numpy's own
CPU dispatch, switched with NPY_DISABLE_CPU_FEATURES in subprocesses, for "no CPU path changes a bit".
"""

from __future__ import annotations

import decimal
import json
import math
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.basic import transcendental as T

import ieee754_ref as ref
from vector_harness import run
from support import ROOT

try:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
except ImportError:  # numpy 1.x
    from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

ALL16 = np.arange(65536, dtype=np.uint16)
HALVES = ALL16.view(np.float16)
BF16_AS_F32 = ALL16.view(ml_dtypes.bfloat16).astype(np.float32)
CASES = {"float16": (HALVES, ref.FLOAT16, ref.FLOAT16), "bfloat16->float32": (BF16_AS_F32, ref.BFLOAT16, ref.FLOAT32)}
_LOW, _HIGH = decimal.Context(prec=28), decimal.Context(prec=80)


def _magnitude(bits: int, fmt) -> float:
    """The value of a finite non-negative pattern (IEEE 754 3.4: biased exponent, hidden bit, subnormals),
    exact as a Python float for half, bfloat16 and float."""
    frac_bits = fmt.p - 1
    e, m = bits >> frac_bits, bits & ((1 << frac_bits) - 1)
    return math.ldexp(m, fmt.emin - frac_bits) if e == 0 else math.ldexp(m | 1 << frac_bits, e - fmt.bias - frac_bits)


def _midpoints(bits: int, fmt) -> tuple:
    """(lo, hi): the reals that round to nearest into pattern ``bits`` of ``fmt`` lie strictly between them
    (None: unbounded). Past the largest finite value the next one would be 2**(emax + 1). The midpoints of
    half, bfloat16 and float values are exact as Python floats."""
    sign = 1 << (fmt.width - 1)
    inf_bits = ((1 << fmt.ebits) - 1) << (fmt.p - 1)
    mag = bits & (sign - 1)
    top = math.ldexp(1, fmt.emax + 1)
    if mag == inf_bits:
        edge = (_magnitude(mag - 1, fmt) + top) / 2
        return (edge, None) if not bits & sign else (None, -edge)
    x = _magnitude(mag, fmt)
    up = top if mag + 1 == inf_bits else _magnitude(mag + 1, fmt)      # next larger magnitude
    down = -_magnitude(1, fmt) if mag == 0 else _magnitude(mag - 1, fmt)  # next smaller (below 0: -min subnormal)
    lo, hi = (x + down) / 2, (x + up) / 2
    return (lo, hi) if not bits & sign else (-hi, -lo)


_SLACK = {ctx.prec: decimal.Decimal(10) ** (2 - ctx.prec) for ctx in (_LOW, _HIGH)}


def _exp(x: float, ctx, cache: dict) -> decimal.Decimal:
    key = (x, ctx.prec)
    if key not in cache:
        cache[key] = ctx.exp(decimal.Decimal(x))
    return cache[key]


def _compare_exp(x: float, bound: float, cache: dict) -> int:
    """sign(e**x - bound), with a precision that decides it."""
    for ctx in (_LOW, _HIGH):
        d = _exp(x, ctx, cache)
        diff = d - decimal.Decimal(bound)
        if abs(diff) > abs(d) * _SLACK[ctx.prec]:
            return 1 if diff > 0 else -1
    raise AssertionError(f"e**{x!r} is within 1e-78 of {bound!r}")


def _exp_in(x: float, lo, hi, cache: dict) -> bool:
    """lo < e**x < hi."""
    return (lo is None or _compare_exp(x, lo, cache) > 0) and (hi is None or _compare_exp(x, hi, cache) < 0)


def _ln_in(x: float, lo, hi, cache: dict) -> bool:
    """lo < ln x < hi for x > 0, as e**lo < x < e**hi (exp is increasing; neighbouring results share bounds)."""
    return (lo is None or _compare_exp(lo, x, cache) < 0) and (hi is None or _compare_exp(hi, x, cache) > 0)


def _check_exhaustive(name: str, case: str) -> None:
    xs, src, dst = CASES[case]
    out = T.rounded(name, np.float16 if dst is ref.FLOAT16 else np.float32, xs)
    got = out.view(np.uint16 if dst is ref.FLOAT16 else np.uint32).astype(np.int64).tolist()
    # e**x overflows the result type above `high` and rounds to +0 below `low`
    high, low = (12, -18) if dst is ref.FLOAT16 else (100, -110)
    negative, cache = 1 << (dst.width - 1), {}
    for bits_in, bits_out, x in zip(ALL16.tolist(), got, xs.astype(np.float64).tolist()):
        r = ref.decode(bits_out, dst)
        where = f"{name}({src.name} {bits_in:#06x} = {x!r}) = {dst.name} {bits_out:#x}"
        if math.isnan(x) or (name == "log" and x < 0):
            assert r is ref.NAN and not bits_out & negative, where  # the positive quiet NaN
        elif name == "log" and x == 0:
            assert r is ref.NEG_INF, where
        elif name == "log" and x == 1:
            assert bits_out == 0, where  # ln 1 = +0
        elif name == "exp" and not low <= x <= high:
            assert r is ref.INF if x > 0 else bits_out == 0, where
        elif x == math.inf:
            assert r is ref.INF, where
        else:
            assert r is not ref.NAN and (name == "log" or not bits_out & negative), where
            lo, hi = _midpoints(bits_out, dst)
            assert (_exp_in if name == "exp" else _ln_in)(x, lo, hi, cache), where


@pytest.mark.parametrize("case", list(CASES))
def test_exp_is_correctly_rounded_for_every_16_bit_input(case):
    """exp of all 65,536 float16 (to float16) / bfloat16 (to float32) inputs is the correctly rounded e**x."""
    _check_exhaustive("exp", case)


@pytest.mark.parametrize("case", list(CASES))
def test_ln_is_correctly_rounded_for_every_16_bit_input(case):
    """ln of all 65,536 float16 (to float16) / bfloat16 (to float32) inputs is the correctly rounded ln x."""
    _check_exhaustive("log", case)


# ---------------------------------------------------------------- the same bits whatever numpy's CPU dispatch

# run in a subprocess per NPY_DISABLE_CPU_FEATURES setting (numpy reads it at import); argv[1] is the src folder
_PROBE = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import ml_dtypes
import numpy as np
from fusekit.asc.basic import REGISTRY
from fusekit.asc.basic import transcendental as T
from fusekit.asc.adv.norm import rmsnorm_rows
from fusekit.asc.adv.softmax import softmax_rows
from fusekit.gen import reference


def h(a):
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]

u = np.arange(65536, dtype=np.uint16)
half, bf = u.view(np.float16), u.view(ml_dtypes.bfloat16)
f32 = bf.astype(np.float32)
sample = np.random.default_rng(0).standard_normal(4096) * 4
model, raw = {}, {}
with np.errstate(all="ignore"):
    for name, fn in T.FUNCTIONS.items():
        cases = {"f16": (half, np.float16), "bf16": (bf, ml_dtypes.bfloat16), "f32": (f32, np.float32)}
        for label, (x, dt) in cases.items():
            x = x if fn.ufunc is not None else x[::16]  # per-element C library: a sample keeps it short
            args = (np.abs(x), x[::-1]) if fn.arity == 2 else (x,)
            model[f"{name}/{label}"] = h(T.rounded(name, dt, *args))
        model[f"{name}/real"] = h(T.real(name, *((np.abs(sample), sample[::-1]) if fn.arity == 2 else (sample,))))
    for op in ("exp", "ln"):
        model[f"simulator {op}/f16"] = h(REGISTRY[op].compute(half))
        model[f"simulator {op}/f32"] = h(REGISTRY[op].compute(f32))
    rows = np.random.default_rng(1).standard_normal((64, 256)).astype(np.float32) * 8
    model["softmax"] = h(np.concatenate([a.reshape(-1) for a in softmax_rows(rows, 256, "2201", "inf_nan")]))
    model["rmsnorm"] = h(rmsnorm_rows(rows, np.ones(256, np.float32), 256, 1 / 256, 1e-6, False, "inf_nan"))
    for op in ("exp", "log", "tanh", "sigmoid", "silu", "gelu_tanh", "gelu_erf"):
        model[f"exact {op}"] = h(reference._EXACT[op](sample))
    for name in ("exp", "log", "sin", "tanh"):
        for x in (half, f32, sample):
            raw[f"np.{name}/{x.dtype}"] = h(getattr(np, name)(x))
print(json.dumps({"model": model, "raw": raw}))
"""


def _dispatch_settings() -> list[str]:
    """NPY_DISABLE_CPU_FEATURES values that change numpy's dispatch: none, the AVX-512 targets, all targets."""
    avx512 = [f for f in __cpu_dispatch__ if f.startswith("AVX512") or f == "X86_V4"]
    return ["", " ".join(avx512), " ".join(__cpu_dispatch__)]


def test_results_are_identical_under_every_cpu_dispatch():
    """Model, simulator and reference bits do not change when NPY_DISABLE_CPU_FEATURES switches numpy's SIMD paths."""
    src = str(ROOT / "src")
    procs = []
    for setting in _dispatch_settings():
        env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=setting)
        procs.append((setting, subprocess.Popen([sys.executable, "-c", _PROBE, src], env=env, text=True,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    results = {}
    for setting, p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"NPY_DISABLE_CPU_FEATURES={setting!r}: {err[-2000:]}"
        results[setting] = json.loads(out.strip().splitlines()[-1])
    base = results[""]
    for setting, r in results.items():
        changed = sorted(k for k, v in r["model"].items() if v != base["model"][k])
        assert not changed, f"NPY_DISABLE_CPU_FEATURES={setting!r} changes {changed}"
    if __cpu_features__.get("AVX512F"):  # the switch is real: numpy's own results move under it
        assert any(r["raw"] != base["raw"] for r in results.values()), "the settings did not change numpy's dispatch"


# ---------------------------------------------------------------- one model in the simulator and the references

# inputs whose numpy float16 exp / log differ between AVX-512 and other machines (issue 18 item B), and a spread
SPECIAL16 = np.array([0.007298, 0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 11.09, -17.3, 1e-7, -1e-7, 65504], np.float16)


def _sample(dtype, n=2048):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(n) * 3).astype(dtype)
    return np.concatenate([SPECIAL16.astype(dtype), x, np.abs(x)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("op, name", [(asc.exp, "exp"), (asc.ln, "log")])
def test_vector_exp_ln_follow_the_model(op, name, dtype):
    """asc.exp / asc.ln store exactly the model's bits (including exp(0.007298) = 1.007 in half)."""
    x = _sample(dtype)
    got, _ = run(lambda d, a, b: op(d, a, x.size), np.zeros_like(x), x)
    want = T.rounded(name, dtype, x)
    assert np.array_equal(got.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    if dtype is np.float16 and name == "exp":
        assert got[0] == np.float16(1.007)  # e**0.0072975... = 1.00732420763, just below the midpoint 1.00732421875


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh", "atan", "erf", "power"])
def test_adv_math_follows_the_model(name, dtype):
    """asc.adv.<fn> stores exactly the model's bits for half and float."""
    x = _sample(dtype, 512)
    y = x[::-1].copy()
    fn = getattr(asc.adv, name)
    if name == "power":
        x = np.abs(x)
        body = lambda d, a, b: fn(d, a, b, x.size)  # noqa: E731
    elif name == "exp":
        body = lambda d, a, b: fn(d, a, x.size, 0)  # noqa: E731
    else:
        body = lambda d, a, b: fn(d, a, x.size)  # noqa: E731
    got, _ = run(body, np.zeros_like(x), x, y)
    want = T.rounded("pow", dtype, x, y) if name == "power" else T.rounded(name, dtype, x)
    assert np.array_equal(got.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))


def test_generated_op_kernel_and_references_share_the_model():
    """A generated exp / log op: kernel == hardware reference == the model; exact == the C library's e**x."""
    from fusekit import gen
    op = gen.define_op("exp(a) + log(abs(a))", name="explog")
    x = _sample(np.float16)
    x = x[np.abs(x) < 11]  # finite e**x in half
    y = op(x)
    hw = op.reference("hardware", x)
    key = next(iter(hw))
    want = T.rounded("exp", np.float16, x) + T.rounded("log", np.float16, np.abs(x))
    with np.errstate(all="ignore"):
        assert np.array_equal(np.asarray(y).view(np.uint16), hw[key].view(np.uint16))
    assert np.array_equal(hw[key].view(np.uint16), want.view(np.uint16))
    wide = op.exact(x)[key]
    with np.errstate(all="ignore"):
        expect = np.array([math.exp(v) + (math.log(abs(v)) if v else -math.inf) for v in x.astype(np.float64).tolist()])
    assert np.array_equal(wide, expect)
