"""Generated operators: reduction axes, 3-D / 4-D shapes, CLI messages, expression tracing, casts of per-row
inputs; the faults a tester found (issue 12's user side), each fixed as a class.

Expected values come from numpy (float64, written here), never from fusekit's own output.
"""

import numpy as np
import pytest

import fusekit
from fusekit.gen.catalogue import get
from fusekit.gen.graph import GraphError

from support import cli, one_line


# -- 1. reductions run along the last axis only: any other axis is refused, never silently ignored
REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("axis", [0, -2, None, 1, 2, True])
def test_a_reduction_over_another_axis_is_refused(name, axis):
    """Regression: tester report, issue 12."""
    reduce = getattr(fusekit, name)

    def other_axis(x):
        return x - reduce(x, axis=axis, keepdims=True)
    with pytest.raises(GraphError, match=rf"reductions run along the last axis only: axis=-1; got axis={axis!r}"):
        fusekit.op(other_axis)
    with pytest.raises(GraphError, match=rf"got axis={axis!r}"):  # the CLI's string spelling
        fusekit.define_op(f"x - {name}(x, axis={axis!r}, keepdims=True)")


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("axis", [-1, (-1,), np.int64(-1)])
def test_the_last_axis_reduces_the_last_axis(name, axis):
    """Regression: tester report, issue 12."""
    reduce = getattr(fusekit, name)

    def centred(x):
        return x - reduce(x, axis=axis, keepdims=True)
    op = fusekit.op(centred, dtypes=("float32",))
    x = np.random.default_rng(1).standard_normal((3, 5, 64)).astype(np.float32)
    y = op(x, precision="fp32")
    x64 = x.astype(np.float64)
    expected = x64 - REDUCTIONS[name](x64, axis=-1, keepdims=True)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


# -- 2. inputs of 3 and more axes fold their leading axes into rows
def _rms_norm(x, r, gamma, eps):
    s = x.astype(np.float64) + r
    return s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + eps) * gamma, s


@pytest.mark.parametrize("shape", [(2, 3, 64), (2, 2, 3, 64), (1, 4, 1, 40)])
def test_add_rms_norm_takes_3d_and_4d_inputs(shape):
    """Regression: tester report, issue 12."""
    rng = np.random.default_rng(2)
    x, r = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    gamma = rng.standard_normal(shape[-1]).astype(np.float32)
    y, x_sum = get("add_rms_norm")(x, r, gamma, eps=1e-6, precision="fp32", core_num=3)
    want_y, want_sum = _rms_norm(x, r, gamma, 1e-6)
    assert y.shape == shape and x_sum.shape == shape
    np.testing.assert_allclose(y, want_y, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(x_sum, want_sum, rtol=1e-6, atol=1e-6)


def test_layer_norm_4d_float16_is_bit_exact_to_its_hardware_model():
    """Regression: tester report, issue 12."""
    rng = np.random.default_rng(3)
    shape = (2, 3, 2, 48)
    x = rng.standard_normal(shape).astype(np.float16)
    gamma, beta = (rng.standard_normal(48).astype(np.float16) for _ in range(2))
    checked = get("layer_norm").check(x, gamma, beta, eps=1e-5)
    own, exact = checked["y"]
    assert own.bit_identical and checked["run"].y.shape == shape
    x64 = x.astype(np.float64)
    d = x64 - x64.mean(-1, keepdims=True)
    want = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * gamma + beta
    np.testing.assert_allclose(checked["run"].y.astype(np.float64), want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("shape", [(2, 3, 32), (2, 2, 2, 32)])
def test_a_per_row_and_a_per_channel_input_with_3d_and_4d_data(shape):
    """Regression: tester report, issue 12."""
    @fusekit.op(dtypes=("float32",))
    def row_scale_bias(x, s, bias):
        return x * s + bias
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    s = rng.standard_normal(shape[:-1] + (1,)).astype(np.float32)
    bias = rng.standard_normal(shape[-1]).astype(np.float32)
    y = row_scale_bias(x, s, bias, precision="fp32")
    assert y.shape == shape
    np.testing.assert_allclose(y, x.astype(np.float64) * s + bias, rtol=1e-6, atol=1e-6)


def test_run_add_rms_norm_on_a_3d_shape(capsys):
    """Regression: tester report, issue 12."""
    code, out, err = cli(capsys, "run", "add_rms_norm", "--shape", "2", "3", "64", "--precision", "fp32")
    assert code == 0 and "[2, 3, 64]" in out and out.rstrip().endswith("PASS"), err


# -- 3. bad paths, broken files and attributes: one line, exit status 2
def test_emit_a_generated_op_to_an_unwritable_place_is_one_line(tmp_path, capsys):
    """Regression: tester report, issue 12."""
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for option, target in (("--out", blocker / "sub"), ("--project", blocker), ("--out", blocker)):
        code, out, err = cli(capsys, "emit", "swiglu", option, str(target))
        assert code == 2 and one_line(err) and out == "" and f"{option} {target}" in err


@pytest.mark.parametrize("body, error", [('raise RuntimeError("boom")', "RuntimeError at broken.py:2: boom"),
                                         ("foo(", "SyntaxError at broken.py:2"),
                                         ("import no_such_module_xyz", "ModuleNotFoundError")])
@pytest.mark.parametrize("command", ["run", "profile", "tune"])
def test_a_users_op_file_that_fails_to_import_is_one_line(tmp_path, capsys, body, error, command):
    """Regression: tester report, issue 12."""
    path = tmp_path / "broken.py"
    path.write_text("import fusekit\n" + body + "\n")
    code, out, err = cli(capsys, command, f"{path}:x", "--shape", "64")
    assert code == 2 and one_line(err) and f"{path} failed to import: {error}" in err


@pytest.mark.parametrize("command", ["run", "tune"])
def test_attr_names_are_checked(capsys, command):
    """Regression: tester report, issue 12."""
    code, _, err = cli(capsys, command, "swiglu", "--shape", "64", "--attr", "nosuch=1")
    assert code == 2 and one_line(err) and "swiglu has no attribute 'nosuch'; it takes no attributes" in err
    code, _, err = cli(capsys, command, "axpby", "--shape", "64", "--attr", "c=1")
    assert code == 2 and "axpby has no attribute 'c'; it takes a, b" in err
    code, _, err = cli(capsys, command, "add_rms_norm", "--shape", "2", "64", "--attr", "eps=abc")
    assert code == 2 and one_line(err) and "eps must be a number" in err
    code, _, err = cli(capsys, command, "add_rms_norm", "--shape", "2", "64", "--attr", "eps")
    assert code == 2 and one_line(err) and "NAME=VALUE" in err


# -- 4. profile honours --cores and validates it
def test_profile_honours_cores(capsys):
    """Regression: tester report, issue 12."""
    times = []
    for cores in ("1", "8"):
        code, out, _ = cli(capsys, "profile", "swiglu", "--shape", "65536", "--cores", cores)
        assert code == 0
        times.append(float(out.split("fused ")[1].split(" us")[0]))
    assert times[0] > times[1]  # 65536 elements: one core does 8 cores' work


def test_perf_compare_takes_core_num():
    """Regression: tester report, issue 12."""
    op = get("swiglu")
    one, eight = (fusekit.gen.perf.compare(op, 65536, core_num=c) for c in (1, 8))
    assert one.fused_us > eight.fused_us and one.unfused_us > eight.unfused_us


@pytest.mark.parametrize("cores", ["0", "100000", "x"])
@pytest.mark.parametrize("command", ["run", "profile"])
def test_bad_cores_are_refused(capsys, cores, command):
    """Regression: tester report, issue 12."""
    code, out, err = cli(capsys, command, "swiglu", "--shape", "64", "--cores", cores)
    assert code == 2 and one_line(err) and "argument --cores" in err and out == ""


# -- 5. native precision: the exact line is information, said so, with no FAIL next to a PASS
def test_native_run_says_why_exact_does_not_decide(capsys):
    """Regression: tester report, issue 12."""
    code, out, _ = cli(capsys, "run", "layer_norm", "--shape", "64", "1000")
    assert code == 0 and out.rstrip().endswith("PASS") and "FAIL" not in out
    assert "y: vs exact: " in out and "/64000 beyond tolerance" in out
    assert "(informational in native precision; use --precision fp32 for a verdict against exact)" in out


# -- 6. the CLI lists every operator
@pytest.mark.parametrize("command", [["run"], ["tune", "--size", "8"], ["profile"], ["emit"]])
def test_unknown_ops_list_the_catalogue(capsys, command):
    """Regression: tester report, issue 12."""
    code, _, err = cli(capsys, command[0], "nosuchop", *command[1:])
    assert code == 2 and one_line(err)
    assert "fused_add_scale" in err and "swiglu" in err and "layer_norm" in err and "FILE.py:NAME" in err


def test_help_mentions_generated_ops_and_shape(capsys):
    """Regression: tester report, issue 12."""
    for command in ("run", "profile", "tune"):
        code, out, _ = cli(capsys, command, "--help")
        assert code == 0 and "Generated operators" in out and "--shape" in out
    code, out, _ = cli(capsys, "run", "swiglu", "--help")
    assert code == 0 and "--shape" in out and "--expr" not in out  # no advert of an option that does not exist


# -- 7. unknown functions and numpy functions in an operator
def test_an_unknown_function_in_an_expression_names_it():
    """Regression: tester report, issue 12."""
    with pytest.raises(GraphError, match=r"unknown function 'foo'; the primitives are exp, .*silu"):
        fusekit.define_op("foo(a) + b")
    with pytest.raises(GraphError, match=r"unknown function 'np.exp'"):
        fusekit.define_op("np.exp(a)")


@pytest.mark.parametrize("call, fix", [(np.exp, "use fusekit.exp"), (np.abs, "use fusekit.abs"),
                                       (np.sum, "use fusekit.sum"), (np.sin, "no primitive 'sin'")])
def test_a_numpy_function_on_a_symbolic_tensor_names_the_primitive(call, fix):
    """Regression: tester report, issue 12."""
    def uses_numpy(x):
        return call(x)
    with pytest.raises(GraphError, match=fix):
        fusekit.op(uses_numpy)


def test_numpy_scalars_still_trace():
    """Regression: tester report, issue 12."""
    @fusekit.op(dtypes=("float32",))
    def scalars(x):
        return fusekit.where(np.float32(0) < x, np.float32(2) * x, x / np.float64(4))
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    np.testing.assert_array_equal(scalars(x, precision="fp32"), np.where(0 < x, 2 * x, x / np.float32(4)))


# -- 8. fusekit.abs, numpy's alias of absolute
def test_abs_is_absolute():
    """Regression: tester report, issue 12."""
    assert fusekit.abs is fusekit.absolute and fusekit.gen.abs is fusekit.absolute

    @fusekit.op(dtypes=("float32",))
    def magnitude(x):
        return fusekit.abs(x) + 1
    x = np.random.default_rng(5).standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(magnitude(x, precision="fp32"), np.abs(x) + np.float32(1))


# -- an (N, 1) input converted with an explicit cast (it was cast as a whole tile: out of bounds) ----------------

@fusekit.op(dtypes=("bfloat16", "float16", "float32"))
def _row_scaled(x, m):
    return fusekit.cast(fusekit.cast(x, "float32") * fusekit.cast(m, "float32"), "bfloat16")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_a_cast_of_a_per_row_input_is_duplicated_over_the_row_first(dtype):
    """Regression: tester report, issue 12."""
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((33, 96)).astype(np_dtype)
    m = rng.standard_normal((33, 1)).astype(np_dtype)
    checked = _row_scaled.check(x, m, precision="fp32")
    own, _ = checked["y"]
    assert own.mismatches == 0
    # float32 products of two inputs of <= 24-bit significands, correctly rounded, then rounded to bfloat16
    want = (x.astype(np.float64) * m.astype(np.float64)).astype(np.float32).astype(ml_dtypes.bfloat16)
    y = checked["run"].outputs["y"]
    assert np.array_equal(y.view(np.uint16), want.view(np.uint16))
