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
    """The distance between the dtype's extremes is counted exactly (no wrap, no float64 rounding), and so is
    the largest allowance: floor((max - min - 1) / 8) steps passes, one step more fails (2^61 +- 1 for 64 bits,
    which float64 cannot tell apart)."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min)
    c = compare(np.array([info.min, info.max], dtype), np.array([info.max, info.min], dtype))
    assert c.mismatches == 2 and c.first_mismatch == (0,) and c.max_abs_err == float(span)
    top = (span - 1) // 8  # the largest steps with 8 * steps < span (fusekit.verify's documented rule)
    expected = np.array([info.max, info.min, info.max], dtype)
    actual = np.array([int(info.max) - top, int(info.min) + top, int(info.max) - top - 1], dtype)
    c = compare(actual, expected, steps=top)
    assert c.mismatches == 1 and c.first_mismatch == (2,)


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


# -- a float verdict that can fail at every magnitude (the samples' absolute bound scaled to the output's)


def _ulp_away(x):
    """Every element one unit in the last place up: the rounding difference two right kernels may have."""
    return np.nextafter(x, np.array(np.inf, x.dtype))


@pytest.mark.parametrize("magnitude", [1.0, 2.0**-6, 2.0**-12], ids=["1", "2^-6", "2^-12"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_float_wrong_answer_fails_at_every_magnitude(dtype, magnitude):
    """Below loss in magnitude a wrong answer (zeros, 4x, -x, 2x) still fails in every element; one ulp (relative
    error at most 2^-10 float16, 2^-7 bfloat16, 2^-23 float32, all below the dtype's loss) still passes."""
    expected = (np.random.default_rng(5).uniform(0.5, 1.0, 4096) * magnitude).astype(dtype)
    assert compare(_ulp_away(expected), expected).passed
    wide = expected.astype(np.float64)
    for wrong in (np.zeros_like(wide), 4 * wide, -wide, 2 * wide):
        c = compare(wrong.astype(dtype), expected)
        assert not c.passed and c.mismatches == expected.size, c.summary()


@pytest.mark.parametrize("dtype, value, answer", [
    (np.float16, 1 / 4096, 0.0), (np.float16, 1 / 4096, 4 / 4096),  # a softmax row of 4096
    (ml_dtypes.bfloat16, 1 / 128, -1 / 128), (ml_dtypes.bfloat16, 1 / 128, 0.0)],  # a softmax row of 128
    ids=["f16 softmax zeros", "f16 softmax 4x", "bf16 softmax -x", "bf16 softmax zeros"])
def test_a_wrong_softmax_row_fails(dtype, value, answer):
    """The issue's cases: every output below the dtype's loss, every one wrong; the samples' rule passed them."""
    expected = np.full(4096, value, dtype)
    c = compare(np.full(4096, answer, dtype), expected)
    assert not c.passed and c.mismatches == 4096
    assert c.atol == pytest.approx(tolerance(dtype) * float(expected[0]))


def test_the_samples_rule_is_unchanged_where_the_reference_reaches_one():
    """With max |expected| >= 1 the absolute bound is loss itself: a 5e-4 error on a tiny element passes."""
    expected = np.array([1.0, 2e-4, -3.0], np.float16)
    actual = expected.copy()
    actual[1] = np.float16(7e-4)
    c = compare(actual, expected)
    assert c.passed and c.atol == 1e-3


def test_an_all_zero_reference_needs_zeros():
    """A reference of zeros leaves no absolute slack: any non-zero output is 100 % off."""
    expected = np.zeros(100, np.float32)
    assert compare(expected.copy(), expected).passed
    wrong = expected.copy()
    wrong[3] = 1e-30
    c = compare(wrong, expected)
    assert not c.passed and c.first_mismatch == (3,)


# -- integer allowances that could accept any wrong value are refused


@pytest.mark.parametrize("dtype, kwargs", [
    (np.bool_, {"steps": 1}), (np.bool_, {"rtol": 0.5}), (np.bool_, {"rtol": 1e-3}),
    (np.int8, {"steps": 255}), (np.int8, {"steps": 32}), (np.uint8, {"steps": 32}),
    (np.int8, {"rtol": 1.0}), (np.int8, {"rtol": 0.5}), (np.int32, {"rtol": 0.125}),
    (np.int16, {"steps": 8192}), (np.uint64, {"steps": 2**61}), (ml_dtypes.int4, {"steps": 2}),
    (ml_dtypes.uint4, {"steps": 2})],
    ids=lambda v: np.dtype(v).name if isinstance(v, type) else "-".join(f"{k}={x}" for k, x in v.items()))
def test_an_integer_allowance_that_accepts_a_wrong_value_is_refused(dtype, kwargs):
    """bool: no steps, no rtol (one step passes every element inverted); integers: steps < (max - min) / 8 and
    rtol < 1/8 (at rtol 1 zero passes for every value, at 1/2 a halved answer passes)."""
    x = np.zeros(4, dtype)
    with pytest.raises(ValueError, match="steps|rtol") as err:
        compare(x, x, **kwargs)
    assert "1/8" in str(err.value) or "bool" in str(err.value)


@pytest.mark.parametrize("dtype, steps", [(np.int8, 31), (np.uint8, 31), (np.int16, 8191), (np.uint16, 8191),
                                          (ml_dtypes.int4, 1), (ml_dtypes.uint4, 1)],
                         ids=lambda v: np.dtype(v).name if isinstance(v, type) else str(v))
def test_the_widest_accepted_allowance_still_fails_the_farther_extreme(dtype, steps):
    """At the largest steps and an rtol just below 1/8, every value of the dtype (all of them) still fails against
    the extreme of the dtype farther from it: the window covers less than half of the grid."""
    info = ml_dtypes.iinfo(dtype) if np.dtype(dtype).kind == "V" else np.iinfo(dtype)
    values = np.arange(int(info.min), int(info.max) + 1)
    farther = np.where(values - int(info.min) >= int(info.max) - values, int(info.min), int(info.max))
    c = compare(farther.astype(dtype), values.astype(dtype), steps=steps, rtol=0.124)
    assert c.mismatches == values.size
    assert compare(values.astype(dtype), values.astype(dtype), steps=steps, rtol=0.124).passed


@pytest.mark.parametrize("dtype", [ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2],
                         ids=lambda d: np.dtype(d).name)
def test_ml_dtypes_integers_compare_as_integers(dtype):
    """int4 / uint4 / int2 (numpy kind "V", as bfloat16) compare exactly, in steps, with the integer fraction."""
    info = ml_dtypes.iinfo(dtype)
    expected = np.resize(np.arange(int(info.min), int(info.max)), 1000).astype(dtype)  # room for +1
    assert tolerance(dtype) == SAMPLES_ERROR_TOL and compare(expected.copy(), expected).passed
    off = (expected.astype(np.int64) + 1).astype(dtype)
    c = compare(off, expected)
    assert not c.passed and c.mismatches == 1000 and c.steps == 0 and c.dtype == np.dtype(dtype).name
    if info.max - info.min >= 15:
        assert compare(off, expected, steps=1).passed


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_outputs_are_refused_with_a_reason(dtype):
    x = np.ones(4, dtype)
    with pytest.raises(ValueError, match=f"cannot compare {np.dtype(dtype).name} outputs"):
        compare(x, x, loss=1e-3)
    with pytest.raises(ValueError, match="cannot compare"):
        tolerance(dtype)


# -- bit_exact: the verdict against a model the output must equal bit for bit


@pytest.mark.parametrize("dtype", FLOATS + [np.int8, np.int32], ids=lambda d: np.dtype(d).name)
def test_bit_exact_fails_one_differing_element_in_many(dtype):
    """One element of 100 000 differs in its last bit: bit_exact FAILS (none allowed) and its reason names the
    index; the ordinary tolerance would pass it."""
    expected = (np.random.default_rng(6).uniform(-100, 100, 100_000)).astype(dtype)
    actual = expected.copy()
    actual[12_345] = _ulp_away(actual[12_345:12_346])[0] if np.dtype(dtype).kind != "i" else actual[12_345] + 1
    assert compare(actual, expected).passed  # within the samples' allowance
    c = compare(actual, expected, reference="hardware", bit_exact=True)
    assert not c.passed and c.mismatches == 1 and c.allowed == 0 and c.first_mismatch == (12_345,)
    assert "first at index [12345]" in c.reason() and "hardware model" in c.reason()
    assert compare(expected.copy(), expected, bit_exact=True).passed


def test_bit_exact_nan_payloads_are_equal_and_signed_zeros_are_not():
    quiet, other = np.array([np.nan], np.float32), np.array([0x7FC00001], np.uint32).view(np.float32)
    assert compare(other, quiet, bit_exact=True).passed
    assert not compare(np.array([-0.0], np.float32), np.array([0.0], np.float32), bit_exact=True).passed


def test_bit_exact_takes_no_tolerance():
    x = np.zeros(4, np.float16)
    with pytest.raises(ValueError, match="bit_exact"):
        compare(x, x, bit_exact=True, loss=1e-3)


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


def _one_element_off(y):
    """``y`` with element 0 wrong: an integer wrapped to the dtype's minimum, a float one ulp up."""
    y = y.copy()
    flat = y.reshape(-1)
    if y.dtype.kind in "iu":
        flat[0] = np.iinfo(y.dtype).min if flat[0] != np.iinfo(y.dtype).min else np.iinfo(y.dtype).max
    else:
        flat[0] = _ulp_away(flat[:1])[0]
    return y


@pytest.mark.parametrize("name, attrs", [("quantize", {"scale": 1.5, "offset": 2.0}), ("swiglu", {})])
def test_gen_check_own_model_is_bit_for_bit(monkeypatch, name, attrs):
    """One element of 16384 off (a wrap, or one ulp) is within the 1e-4 allowance against exact, but FAILS against the
    op's own model, which it must match bit for bit (GeneratedOp.check's docstring); the reason names index [0]."""
    op = cat.get(name)
    arrays = [np.random.default_rng(7).uniform(-4, 4, 16384).astype(np.float16) for _ in op.graph.inputs]
    own, _ = op.check(*arrays, **attrs)["y"]
    assert own.passed and own.bit_identical
    run = op.run
    monkeypatch.setattr(op, "run", lambda *a, **k: dataclasses.replace(
        run(*a, **k), outputs={k_: _one_element_off(v) for k_, v in run(*a, **k).outputs.items()}))
    own, _ = op.check(*arrays, **attrs)["y"]
    assert not own.passed and own.mismatches == 1 and own.allowed == 0
    assert "FAIL" in own.summary() and "first at index [0]" in own.reason()


@pytest.mark.parametrize("name, attrs", [("quantize", ["--attr", "scale=1.5", "--attr", "offset=2"]), ("swiglu", [])])
def test_fusekit_run_lines_agree_with_the_verdict_and_give_the_reason(monkeypatch, capsys, name, attrs):
    """``fusekit run`` with one element off its model: the own-model line says FAIL, a reason line follows naming
    the first differing index, and the final verdict is FAIL (exit 1); every FAIL line has its reason."""
    op = cat.get(name)
    args = ["run", name, "--shape", "16384", "--dtype", "float16"] + attrs
    assert main(args) == 0
    capsys.readouterr()
    run = op.run
    monkeypatch.setattr(op, "run", lambda *a, **k: dataclasses.replace(
        run(*a, **k), outputs={k_: _one_element_off(v) for k_, v in run(*a, **k).outputs.items()}))
    assert main(args) == 1
    lines = capsys.readouterr().out.splitlines()
    own = [i for i, line in enumerate(lines) if line.strip().startswith("y: vs hardware")]
    assert len(own) == 1 and "FAIL" in lines[own[0]]
    reason = lines[own[0] + 1].strip()
    assert reason.startswith("y: FAIL:") and "first at index [0]" in reason and "bits" in reason
    for i, line in enumerate(lines):
        if line.strip().startswith("y: vs ") and " FAIL " in line:
            assert lines[i + 1].strip().startswith("y: FAIL:"), lines[i:i + 2]
    assert lines[-1] == "FAIL"


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


@pytest.mark.parametrize("dtype, shape", [("float16", (4, 8192)), ("bfloat16", (8, 1024))])
def test_torch_check_refuses_a_wrong_softmax_below_the_loss(monkeypatch, dtype, shape):
    """A softmax row whose every value is below the dtype's loss (about 1/8192 in float16, 1/1024 in bfloat16): the
    right generated op is fused; one returning zeros, or the negated answer, is left eager (the samples' absolute
    bound alone would accept both)."""
    torch = pytest.importorskip("torch")
    from fusekit.torch import backend as B

    def fn(x):
        return torch.softmax(x * 0.5 + 1.0, dim=-1)
    x = torch.randn(*shape).to(getattr(torch, dtype))
    call = B._call

    def groups(wrong):
        monkeypatch.setattr(B, "_CACHE", {})
        monkeypatch.setattr(B, "_call", (lambda *args: tuple(wrong(t) for t in call(*args))) if wrong else call)
        torch._dynamo.reset()
        compiled = fusekit.torch.compile(fn, progress=False, project=False, predict=False)
        compiled(x)
        return compiled.fusekit_report.groups
    right = groups(None)
    assert right and all(g.fused for g in right)
    for wrong in (torch.zeros_like, torch.neg):
        refused = groups(wrong)
        assert refused and not any(g.fused for g in refused)
        assert all("differs from eager" in g.reason for g in refused)
    torch._dynamo.reset()


def test_scale_judges_an_output_that_cancels_to_zero_at_the_computations_magnitude():
    """Rounding noise of a sum that is 0 exactly (terms of order 1) passes at scale=1, fails at its own magnitude;
    a wrong answer of order 1 still fails at scale=1; scale must be positive."""
    rng = np.random.default_rng(5)
    noise = (rng.standard_normal(64) * 1e-8).astype(np.float32)
    other = (rng.standard_normal(64) * 1e-8).astype(np.float32)
    assert not compare(noise, other).passed
    assert compare(noise, other, scale=1.0).passed
    assert not compare(noise + np.float32(0.5), other, scale=1.0).passed
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="scale"):
            compare(noise, other, scale=bad)
