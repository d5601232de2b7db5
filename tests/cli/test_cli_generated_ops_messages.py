"""`fusekit run|profile|tune|emit OP` for generated operators: verdicts, default shapes, expressions,
attributes and dtypes in their messages: the faults a fresh-venv tester found (issue 12), each fixed as a class
(fusekit.cli.generated).

1. native float16's distance to exact is information, but an invalid output (NaN or inf where the exact result is
   finite) fails, as the README's rule for FusedAddScale says;
2. the default shape fits a row-tiled operator;
3. a string expression is an OP (fusekit.define_op's "CLI spelling");
4. the attribute values a run used are printed, a required one not given being 1.0;
5. a dtype the operator does not take is named with the operator's own dtypes.

Expected values come from the README's rules, the documented random inputs (fusekit.cli.generated's module doc) and numpy
models written here, never from the command's output.
"""

import textwrap

import numpy as np
import pytest

from fusekit.cli.generated import is_generated


from support import cli, one_line


def documented_random(shapes: list, dtype, seed: int = 0) -> list:
    """The CLI's random inputs as its module doc states them: one default_rng(seed), signature order,
    standard_normal float32 cast to the dtype."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=np.float32).astype(dtype) for s in shapes]


# -- 1. an invalid output fails in native precision too
RATIO = """
    import fusekit

    @fusekit.op
    def ratio(x):
        t = x * x * 30000.0
        return t / (t + 1.0)
"""


def test_nan_where_the_exact_result_is_finite_fails_in_native_float16(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    path = tmp_path / "ovf.py"
    path.write_text(textwrap.dedent(RATIO))
    (x,) = documented_random([(4096,)], np.float16)
    # numpy's float16 model of the native kernel: x * x * 30000 overflows to inf, and inf / inf is NaN, where the
    # exact result t / (t + 1) is a number in [0, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        t = x * x * np.float16(30000.0)
        nan = int(np.isnan(t / (t + np.float16(1.0))).sum())
    assert nan > 0  # the case the rule is about
    code, out, err = cli(capsys, "run", f"{path}:ratio", "--shape", 4096)
    assert code == 1 and out.rstrip().endswith("FAIL"), out + err
    why = next(line for line in out.splitlines() if line.startswith("  y: FAIL: "))
    assert f"{nan} output(s) are NaN where the exact result is a number" in why
    assert "--precision fp32 computes in float32" in why
    # float32 keeps t finite (at most about 30000 * 25): every output is a number, and the run passes
    code, out, _ = cli(capsys, "run", f"{path}:ratio", "--shape", 4096, "--precision", "fp32")
    assert code == 0 and out.rstrip().endswith("PASS") and "FAIL" not in out


def test_a_result_beyond_float16s_range_fails_without_the_fp32_advice(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    # README: "--scale 1e10 on float16 fails with 'the exact result exceeds float16's range'"; the exact result of
    # x * 1e10 exceeds float16's range wherever x is not tiny, so float32 arithmetic would not help
    (x,) = documented_random([(64,)], np.float16)
    assert (np.abs(x.astype(np.float64) * 1e10) > 65504).all()
    code, out, _ = cli(capsys, "run", "x * s; s: attr", "--shape", 64, "--attr", "s=1e10")
    assert code == 1 and out.rstrip().endswith("FAIL")
    why = next(line for line in out.splitlines() if line.startswith("  y: FAIL: "))
    assert "64 output(s) are inf because the exact result exceeds float16's range" in why and "fp32" not in why


def test_a_native_run_without_invalid_outputs_still_passes_on_the_hardware_model(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "swiglu", "--shape", 4096)
    assert code == 0 and out.rstrip().endswith("PASS") and "FAIL" not in out


# -- 2. the default shape fits the operator
@pytest.mark.parametrize("op", ["add_rms_norm", "layer_norm", "scaled_masked_softmax", "quantize_per_channel",
                                "x - max(x, axis=-1, keepdims=True)"])
def test_a_row_tiled_op_runs_with_the_default_shape(capsys, op):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, err = cli(capsys, "run", op)
    assert code == 0, err
    assert "[1000, 1024];" in out and out.rstrip().endswith("PASS")


def test_profile_of_a_row_tiled_op_takes_the_default_shape(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, err = cli(capsys, "profile", "layer_norm")
    assert code == 0 and err == "" and "unfused" in out


def test_an_elementwise_op_keeps_the_million_elements(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "swiglu")
    assert code == 0 and "[1000000];" in out


def test_shape_help_names_both_defaults(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "layer_norm", "--help")
    text = " ".join(out.split())
    assert code == 0 and "else 1000000, or 1000 1024 for a row-tiled operator" in text


# -- 3. a string expression is an OP
def test_an_expression_runs_and_writes_silu_a_times_b(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, err = cli(capsys, "run", "silu(a) * b", "--shape", 3, "--precision", "fp32", "-o", tmp_path)
    assert code == 0 and out.rstrip().endswith("PASS"), err
    a, b = (v.astype(np.float64) for v in documented_random([(3,), (3,)], np.float16))
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float64), a / (1 + np.exp(-a)) * b, rtol=1e-3, atol=1e-4)


def test_an_expression_with_an_attribute(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "x * s; s: attr", "--shape", 100, "--attr", "s=2", "-o", tmp_path)
    (x,) = documented_random([(100,)], np.float16)
    assert code == 0 and "attributes: s=2.0" in out
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x * np.float16(2))  # times 2: exact in float16


@pytest.mark.parametrize("command", [["profile"], ["tune"]])
def test_profile_and_tune_take_an_expression(capsys, command):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, err = cli(capsys, *command, "silu(a) * b", "--shape", 3)
    assert code == 0 and err == "" and out


def test_emit_takes_an_expression(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    # int8 is not one of define_op's default dtypes: the generated operator's own check answers, with or without pyasc
    code, _, err = cli(capsys, "emit", "silu(a) * b", "--dtype", "int8")
    assert code == 2 and one_line(err) and "expr takes float16, float32, bfloat16" in err


@pytest.mark.parametrize("text, problem", [("silu(a) *", "is not valid Python"),
                                           ("foo(a) + b", "unknown function 'foo'"),
                                           ("x * s; s: attr = abc", "could not convert string to float")])
@pytest.mark.parametrize("command", ["run", "profile", "tune", "emit"])
def test_an_expression_that_does_not_parse_is_one_line(capsys, command, text, problem):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, err = cli(capsys, command, text, *(["--shape", 3] if command != "emit" else []))
    assert code == 2 and one_line(err) and problem in err and out == ""


@pytest.mark.parametrize("name", ["add-rms-nrom", "swigl", " swiglu"])
def test_a_misspelt_name_is_an_unknown_operator_not_an_expression(capsys, name):
    """Regression: fresh-venv tester report, issue 12."""
    code, _, err = cli(capsys, "run", name, "--shape", 3)
    assert code == 2 and one_line(err) and "unknown operator" in err


KERNEL = """
    from fusekit import asc

    @asc.jit
    def scale_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, s: float, TILE: asc.ConstExpr[int]):
        pass
"""


def test_hand_written_kernels_and_fused_add_scale_keep_their_commands(tmp_path, capsys, monkeypatch):
    """Regression: fresh-venv tester report, issue 12."""
    (tmp_path / "k.py").write_text(textwrap.dedent(KERNEL))
    monkeypatch.chdir(tmp_path)
    for target in ("k.py:scale_kernel", "k:scale_kernel", "k.py", "kernels/k", f"{tmp_path}/k.py:scale_kernel"):
        assert not is_generated(target, kernel_files=True), target
    # emit's kernel-file parser (it has --arg; the generated operators' has not) takes it
    code, _, err = cli(capsys, "emit", "k.py:scale_kernel", "--arg", "TILE=256", "--out", tmp_path / "out")
    assert "unrecognized arguments" not in err and (code == 0 or "pyasc" in err)
    code, out, _ = cli(capsys, "run", "fused_add_scale", "--size", 64)
    assert code == 0 and out.startswith("FusedAddScale  y = (x1 + x2) * scale")


# -- 4. the attribute values used are printed
def test_clamp_without_attributes_says_it_used_one_for_both(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "clamp", "--shape", 10, "-o", tmp_path)
    assert code == 0 and "attributes: lo=1.0 (not given: 1.0), hi=1.0 (not given: 1.0)" in out
    (x,) = documented_random([(10,)], np.float16)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.clip(x, 1.0, 1.0))


def test_given_and_default_attributes_are_told_apart(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "clamp", "--shape", 10, "--attr", "hi=2", "-o", tmp_path)
    assert code == 0 and "attributes: lo=1.0 (not given: 1.0), hi=2.0" in out
    (x,) = documented_random([(10,)], np.float16)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.clip(x, 1.0, 2.0))
    code, out, _ = cli(capsys, "run", "layer_norm", "--shape", 2, 64)
    assert code == 0 and "attributes: eps=1e-05 (default)" in out  # catalogue: layer_norm(..., eps=1e-5)


def test_attr_help_says_a_required_attribute_not_given_is_one(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "clamp", "--help")
    assert code == 0 and "a required one (no default) not given is 1.0" in " ".join(out.split())


# -- 5. the operator's own dtypes first
def test_emit_names_the_ops_dtypes_before_pyascs(capsys):
    """Regression: fresh-venv tester report, issue 12."""
    code, _, err = cli(capsys, "emit", "swiglu", "--dtype", "int8")
    assert code == 2 and one_line(err)
    assert "--dtype int8: swiglu takes float16, float32, bfloat16" in err and "pyasc" not in err


@pytest.mark.parametrize("command", ["run", "profile", "tune"])
def test_a_dtype_the_op_does_not_take_lists_the_ops_dtypes(capsys, command):
    """Regression: fresh-venv tester report, issue 12."""
    code, _, err = cli(capsys, command, "swiglu", "--shape", 8, "--dtype", "float64")
    assert code == 2 and one_line(err)
    assert "--dtype float64: swiglu takes float16, float32, bfloat16" in err and "int8" not in err
    code, _, err = cli(capsys, command, "quantize", "--shape", 8, "--dtype", "bfloat16")
    assert code == 2 and "quantize takes float16, float32" in err


def test_emit_checks_the_output_path_before_the_op_and_pyasc(tmp_path, capsys):
    """Regression: fresh-venv tester report, issue 12."""
    (tmp_path / "file").write_text("")
    code, _, err = cli(capsys, "emit", "swiglu", "--dtype", "int8", "--out", tmp_path / "file" / "x")
    assert code == 2 and one_line(err) and err.startswith(f"fusekit: error: --out {tmp_path / 'file' / 'x'}: ")
    assert "pyasc" not in err and "int8" not in err
