"""Every verdict can fail, for every dtype kind it accepts: fusekit.verify.compare, GeneratedOp.check, ``fusekit run``
on a generated op and the torch backend's compile-time check, each given a right and a wrong answer.

Expected verdicts come from the documents, not from fusekit: asc-devkit's integer-output samples
(examples/01_simd_cpp_api/03_basic_api/01_memory_vector_compute/cast/scripts/verify_result.py: np.isclose with
rtol 1e-6, atol 1e-9, so integers compare exactly, and at most ERROR_TOL = 1e-4 of the elements may differ) and
the CANN samples' float rule (loss 1e-3 float16, 1e-4 float32; 1.6e-2 bfloat16). Wrong quantisations are modelled
here in float64 (np.rint, then a wrap modulo 256 where a kernel forgets to saturate).
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import fusekit
from fusekit.cli import main
from fusekit.gen import catalogue as cat
from fusekit.verify import compare, tolerance

INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]
FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32]
SAMPLES_ERROR_TOL = 1e-4  # asc-devkit cast / compare samples' verify_result.py ERROR_TOL


def _integers(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        return rng.random(n) > 0.5
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dtype)


def _one_step_off(expected, index):
    wrong = expected.copy()
    wrong[index] = not wrong[index] if wrong.dtype == np.bool_ else wrong[index] + 1
    return wrong


@pytest.mark.parametrize("dtype", INTEGERS, ids=lambda d: np.dtype(d).name)
def test_integer_output_one_step_off_fails_and_the_right_answer_passes(dtype):
    """An integer or bool output one step off in one element of 1000 fails; the reference itself passes."""
    expected = _integers(dtype, 1000)
    assert compare(expected.copy(), expected).passed
    c = compare(_one_step_off(expected, 3), expected)
    assert not c.passed and c.mismatches == 1 and c.allowed == 0 and c.first_mismatch == (3,)
    assert "FAIL" in c.summary() and c.reason()


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32], ids=lambda d: np.dtype(d).name)
def test_integer_distance_is_exact_at_the_extremes(dtype):
    """The distance between the dtype's extremes is counted exactly (no wrap, no float64 rounding)."""
    info = np.iinfo(dtype)
    expected = np.array([info.max, info.min, info.max], dtype)
    actual = np.array([info.min, info.max, info.max - 1], dtype)
    span = int(info.max) - int(info.min)
    c = compare(actual, expected, steps=span - 1)
    assert c.mismatches == 2 and c.first_mismatch == (0,)
    assert c.max_abs_err == float(span)
    assert compare(actual, expected, steps=span).passed


def test_integer_mismatch_allowance_is_the_samples_fraction():
    """floor(1e-4 * n) integer outputs may differ (the samples' ERROR_TOL); one more fails."""
    n = 30_000
    expected = _integers(np.int8, n, seed=1)
    allowed = int(SAMPLES_ERROR_TOL * n)
    assert tolerance(np.int8) == SAMPLES_ERROR_TOL and tolerance(np.bool_) == SAMPLES_ERROR_TOL
    at_limit = _one_step_off(expected, np.arange(allowed) * 7)
    assert compare(at_limit, expected).passed
    beyond = _one_step_off(expected, np.arange(allowed + 1) * 7)
    c = compare(beyond, expected)
    assert not c.passed and c.mismatches == allowed + 1 and c.allowed == allowed


def test_integer_steps_and_relative_steps():
    """``steps`` and ``rtol`` follow np.isclose (|a - e| <= steps + rtol * |e|), as the samples' integer checks."""
    expected = np.array([1000, -1000, 5], np.int32)
    assert compare(np.array([1001, -999, 6], np.int32), expected, steps=1).passed
    assert not compare(np.array([1002, -1000, 5], np.int32), expected, steps=1).passed
    assert compare(np.array([1003, -997, 6], np.int32), expected, steps=1, rtol=2e-3).passed
    c = compare(np.array([1004, -1000, 5], np.int32), expected, steps=1, rtol=2e-3)
    assert not c.passed and c.first_mismatch == (0,)


@pytest.mark.parametrize("kwargs, match", [
    ({"loss": 1.0}, "loss"), ({"loss": -0.1}, "loss"), ({"loss": float("nan")}, "loss"),
    ({"steps": -1}, "steps"), ({"rtol": -1e-3}, "rtol")])
def test_a_tolerance_that_cannot_fail_is_refused(kwargs, match):
    """A mismatch fraction of 1 or more (every element may be wrong), or a negative tolerance, is a ValueError."""
    x = np.zeros(4, np.int8)
    with pytest.raises(ValueError, match=match):
        compare(x, x, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_output_wrong_answer_fails_and_the_right_answer_passes(dtype):
    """A float output with one element 25 % off in 50 fails at the dtype's default loss; the reference passes."""
    expected = np.random.default_rng(2).standard_normal(50).astype(dtype)
    expected[7] = 1.0
    assert compare(expected.copy(), expected).passed
    wrong = expected.copy()
    wrong[7] = dtype(1.25)
    c = compare(wrong, expected)
    assert not c.passed and c.mismatches == 1 and c.first_mismatch == (7,)


def test_steps_apply_to_integer_outputs_only():
    """``steps`` on a float output is refused: the float rule is the samples' loss."""
    x = np.zeros(4, np.float16)
    with pytest.raises(ValueError, match="integer"):
        compare(x, x, steps=1)


# -- GeneratedOp.check and fusekit run


def _quantize_inputs(n=4096):
    """float16 x spread so that x * 120 + 0.5 crosses 127.5 and -128.5 (saturation) in many elements."""
    return np.linspace(-1.3, 1.3, n).astype(np.float16)


def _wrapped(x, scale, offset):
    """A quantisation that forgets to saturate: rint in float64, then the int8 wrap (128 -> -128)."""
    q = np.rint(x.astype(np.float64) * scale + offset)
    return ((q + 128) % 256 - 128).astype(np.int8), (q > 127) | (q < -128)


def _serve(op, monkeypatch, outputs_of, models=False):
    """Make ``op.run`` (and with ``models`` its hardware/fp32 reference: a model sharing the kernel's bug) return
    ``outputs_of(arrays, attrs)`` in place of the simulator's outputs."""
    run, reference = op.run, op.reference

    def wrong_run(*arrays, **kwargs):
        result = run(*arrays, **kwargs)
        return dataclasses.replace(result, outputs=outputs_of(arrays, kwargs))

    def wrong_reference(model, *arrays, **kwargs):
        return reference(model, *arrays, **kwargs) if model == "exact" else outputs_of(arrays, kwargs)
    monkeypatch.setattr(op, "run", wrong_run)
    if models:
        monkeypatch.setattr(op, "reference", wrong_reference)


@pytest.mark.parametrize("precision", ["fp32", "native"])
def test_gen_check_fails_an_int8_quantisation_that_wraps(monkeypatch, precision):
    """quantize whose 128 wraps to -128 (error 255) FAILS against its model and exact; the real kernel PASSES."""
    op, x, attrs = cat.get("quantize"), _quantize_inputs(), {"scale": 120.0, "offset": 0.5}
    own, exact = op.check(x, precision=precision, **attrs)["y"]
    assert own.bit_identical and exact.passed
    wrong, hit = _wrapped(x, **attrs)
    assert hit.sum() > 100  # the case is there
    _serve(op, monkeypatch, lambda arrays, kw: {"y": wrong})
    own, exact = op.check(x, precision=precision, **attrs)["y"]
    assert not own.passed and not exact.passed
    assert exact.mismatches >= hit.sum() and exact.max_abs_err == 255


def test_gen_check_fails_row_zero_scale_applied_to_every_row(monkeypatch):
    """A per-row int8 quantisation that applies row 0's scale to every row FAILS against its model and exact."""
    op = fusekit.define_op("cast(x * s, 'int8', 'rint')", name="quant_rows", dtypes=("float16", "float32"))
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (16, 128)).astype(np.float32)
    s = np.linspace(60, 120, 16).astype(np.float32).reshape(16, 1)
    own, exact = op.check(x, s, precision="fp32")["y"]
    assert own.bit_identical and exact.passed
    row0 = np.rint(x.astype(np.float64) * float(s[0, 0])).clip(-128, 127).astype(np.int8)  # the wrong kernel
    _serve(op, monkeypatch, lambda arrays, kw: {"y": row0})
    own, exact = op.check(x, s, precision="fp32")["y"]
    assert not own.passed and not exact.passed and exact.max_abs_err >= 50
    assert exact.first_mismatch[0] >= 1  # row 0 itself is right


@pytest.mark.parametrize("precision", ["fp32", "native"])
def test_fusekit_run_fails_a_wrong_integer_output_its_model_shares(monkeypatch, capsys, precision):
    """``fusekit run quantize`` FAILS (exit 1) a wrapped int8 output even where the model shares the bug: integer
    outputs are judged against exact in native float16 too."""
    op = cat.get("quantize")
    args = ["run", "quantize", "--shape", "4096", "--dtype", "float16", "--precision", precision,
            "--attr", "scale=60", "--attr", "offset=0.5"]
    assert main(args) == 0
    _serve(op, monkeypatch, lambda arrays, kw: {"y": _wrapped(arrays[0], kw["scale"], kw["offset"])[0]}, models=True)
    capsys.readouterr()
    assert main(args) == 1
    out = capsys.readouterr().out
    assert any(line.strip().startswith("y: vs exact") and "FAIL" in line for line in out.splitlines())
    assert out.rstrip().endswith("FAIL")


# -- the torch backend's compile-time check


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_torch_check_refuses_a_wrong_generated_op_of_every_float_dtype(monkeypatch, dtype):
    """The backend's check against eager leaves a group eager when the generated op is wrong in 1/8 of its elements."""
    torch = pytest.importorskip("torch")
    from fusekit.torch import backend as B

    kind = getattr(torch, dtype)

    def fn(a, b):
        return torch.nn.functional.silu(a) * b + 1.0
    a, b = torch.randn(4, 96).to(kind), torch.randn(4, 96).to(kind)
    call = B._call

    def groups(wrong):
        monkeypatch.setattr(B, "_CACHE", {})
        monkeypatch.setattr(B, "_call", (lambda *args: tuple(_bump(t) for t in call(*args))) if wrong else call)
        torch._dynamo.reset()
        compiled = fusekit.torch.compile(fn, progress=False, project=False, predict=False)
        compiled(a, b)
        return compiled.fusekit_report.groups
    right = groups(False)
    assert right and all(g.fused and g.verify.startswith("passed") for g in right)
    wrong = groups(True)
    assert wrong and not any(g.fused for g in wrong)
    assert all("differs from eager" in g.reason for g in wrong)
    torch._dynamo.reset()


def _bump(t):
    """Every 8th element of ``t`` 50 % and 1 away from its value (more than bfloat16's 1.6 % allowance)."""
    flat = t.reshape(-1).clone()
    flat[::8] = flat[::8] * 1.5 + 1
    return flat.reshape(t.shape)
