"""``fusekit run``: output, exit codes, .npy inputs and outputs, bad input."""

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ieee754_ref
from fusekit.cli import main
from fusekit.ops import fused_add_scale as fas


def run_cli(capsys, *argv):
    code = main(["run", "fused_add_scale", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def fail_cli(capsys, *argv):
    with pytest.raises(SystemExit) as exc:
        main(["run", "fused_add_scale", *argv])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_random_run_prints_plan_verification_and_speed(capsys):
    code, out, _ = run_cli(capsys, "--size", "100003", "--cores", "7")
    assert code == 0
    assert "block_dim 7" in out and "tile_length" in out and "tail_length" in out
    assert "vs hardware PASS  bit-identical" in out and "vs exact" in out
    assert "M elements/s" in out and out.rstrip().endswith("PASS")


@pytest.mark.parametrize("dtype, precision, model", [("float32", "native", "hardware"), ("float16", "fp32", "fp32"),
                                                     ("bfloat16", None, "fp32")])
def test_dtypes_and_precisions(capsys, dtype, precision, model):
    argv = ["--size", "4099", "--dtype", dtype] + (["--precision", precision] if precision else [])
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and f"vs {model}" in out


def test_verification_failure_exits_1_with_a_hint(capsys):
    code, out, _ = run_cli(capsys, "--size", "100000", "--scale", "3.14159")
    assert code == 1 and "vs exact    FAIL" in out and "--precision fp32" in out and out.rstrip().endswith("FAIL")
    code, _, _ = run_cli(capsys, "--size", "100000", "--scale", "3.14159", "--precision", "fp32")
    assert code == 0


def real_data():
    """A 2-D field (an image-like smooth surface plus sharp edges) and a residual branch with outliers, as a
    migrated model's hidden states and residuals would be, saved the way users save arrays."""
    yy, xx = np.meshgrid(np.linspace(-3, 3, 97), np.linspace(-2, 2, 131), indexing="ij")
    hidden = np.sin(xx * yy) * 4 + (xx > 0.5) * 10.0
    residual = np.cos(3 * xx) * np.exp(-yy**2)
    residual[::17, ::13] = 250.0  # activation outliers
    return hidden, residual


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_npy_inputs_and_atomic_output(tmp_path, capsys, dtype):
    hidden, residual = (a.astype(np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else dtype) for a in real_data())
    np.save(tmp_path / "x1.npy", hidden)
    np.save(tmp_path / "x2.npy", np.asfortranarray(residual))
    out_path = tmp_path / "y.npy"
    code, out, _ = run_cli(capsys, "--x1", str(tmp_path / "x1.npy"), "--x2", str(tmp_path / "x2.npy"),
                           "--scale", "0.5", "-o", str(out_path))
    assert code == 0, out
    y = np.load(out_path)
    if dtype == "bfloat16":
        y = y.view(ml_dtypes.bfloat16)
    assert y.shape == (97, 131) and y.dtype == hidden.dtype
    # bit for bit against an independent reference (tests/ieee754_ref.py): the default precision computes
    # float16 / float32 natively (round the sum, then the product, to the dtype; 0.5 is exact in every
    # dtype) and bfloat16 in float32 with one final rounding (fusekit.verify's hardware and fp32 models)
    R = ieee754_ref
    fmt = R.FORMATS[dtype]
    inner = R.FLOAT32 if dtype == "bfloat16" else fmt
    want = [R.round_to(R.round_to(R.mul(R.round_to(R.add(a, b), inner), Fraction(1, 2)), inner), fmt)
            for a, b in zip(R.values(hidden, fmt), R.values(residual, fmt))]
    assert R.same_bits(y.reshape(-1), R.to_array(want, fmt, y.dtype), fmt).all()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


@pytest.mark.parametrize("argv, match", [
    (["--size", "-1"], "must be >= 0"),
    (["--size", "ten"], "expected a whole number"),
    (["--cores", "0"], "must be in [1, 65535], got 0"),
    (["--cores", "65536"], "must be in [1, 65535]"),
    (["--buffer-num", "9"], "must be in [1, 8]"),
    (["--seed", "-1"], "must be >= 0"),
    (["--soc", "Ascend910C"], "invalid choice"),
    (["--dtype", "int8"], "invalid choice"),
    (["--precision", "fp64"], "invalid choice"),
])
def test_argparse_errors_exit_2(capsys, argv, match):
    code, _, err = fail_cli(capsys, *argv)
    assert code == 2 and match in err and err.count("\n") == 1


def test_negative_scale_and_version(capsys):
    code, out, _ = run_cli(capsys, "--size", "64", "--scale", "-2.5")
    assert code == 0 and "scale = -2.5" in out
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("fusekit ")


def test_big_endian_file_is_read_as_its_values(tmp_path, capsys):
    np.save(tmp_path / "be.npy", np.linspace(-4, 4, 301).astype(">f2"))
    np.save(tmp_path / "le.npy", np.linspace(1, 2, 301).astype("<f2"))
    code, out, _ = run_cli(capsys, "--x1", str(tmp_path / "be.npy"), "--x2", str(tmp_path / "le.npy"),
                           "-o", str(tmp_path / "y.npy"))
    assert code == 0, out
    expected = (np.linspace(-4, 4, 301).astype(np.float16) + np.linspace(1, 2, 301).astype(np.float16)) * np.float16(1.5)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


def test_output_keeps_the_replaced_files_mode_and_follows_symlinks(tmp_path, capsys):
    target = tmp_path / "real.npy"
    np.save(target, np.zeros(1))
    target.chmod(0o640)
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    code, _, _ = run_cli(capsys, "--size", "64", "-o", str(link))
    assert code == 0 and link.is_symlink() and np.load(target).shape == (64,)
    assert target.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "fresh.npy"
    run_cli(capsys, "--size", "64", "-o", str(fresh))
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask


def test_bad_files_exit_2_with_one_line(tmp_path, capsys):
    good = tmp_path / "good.npy"
    np.save(good, np.ones(10, np.float16))
    np.save(tmp_path / "other_shape.npy", np.ones(11, np.float16))
    np.save(tmp_path / "f64.npy", np.ones(10))
    np.savez(tmp_path / "arch.npz", a=np.ones(10))
    (tmp_path / "text.npy").write_text("not numpy")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cases = [
        (["--x1", str(good)], "--x1 and --x2 go together"),
        (["--x1", str(good), "--x2", str(good), "--size", "3"], "either --size"),
        (["--x1", str(good), "--x2", str(tmp_path / "missing.npy")], "no such file"),
        (["--x1", str(good), "--x2", str(tmp_path / "text.npy")], "is not a readable .npy file"),
        (["--x1", str(good), "--x2", str(tmp_path / "objects.npy")], "is not a readable .npy file"),
        (["--x1", str(good), "--x2", str(tmp_path / "arch.npz")], ".npz archive"),
        (["--x1", str(good), "--x2", str(tmp_path / "other_shape.npy")], "x1 has shape (10,) but x2 has shape (11,)"),
        (["--x1", str(tmp_path / "f64.npy"), "--x2", str(tmp_path / "f64.npy")], "got float64"),
        (["--x1", str(good), "--x2", str(good), "--dtype", "float32"], "holds float16 but --dtype is float32"),
        (["--size", "10", "-o", str(tmp_path / "no_dir" / "y.npy")], "does not exist"),
        (["--size", "10", "-o", str(tmp_path)], "is a directory"),
    ]
    for argv, match in cases:
        code, out, err = fail_cli(capsys, *argv)
        assert code == 2, (argv, err)
        assert match in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)


def test_existing_output_is_kept_when_the_run_fails(tmp_path, capsys):
    target = tmp_path / "y.npy"
    target.write_bytes(b"previous result")
    code, _, _ = fail_cli(capsys, "--x1", str(tmp_path / "nope.npy"), "--x2", str(tmp_path / "nope.npy"), "-o",
                          str(target))
    assert code == 2 and target.read_bytes() == b"previous result"


def test_entry_point_exit_codes_and_no_traceback(tmp_path):
    env = dict(os.environ, PYTHONWARNINGS="error")
    ok = subprocess.run([sys.executable, "-m", "fusekit.cli", "run", "fused_add_scale", "--size", "1000"],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and ok.stdout.rstrip().endswith("PASS"), ok.stderr
    bad = subprocess.run([sys.executable, "-m", "fusekit.cli", "run", "fused_add_scale", "--x1", "missing.npy",
                          "--x2", "missing.npy"], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr


RACY_KERNEL = '''
from fusekit import asc


@asc.jit
def scale_raw(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8192)
    t = buf.get(asc.float16)
    if n > 0:
        asc.data_copy_pad(t, xg, asc.DataCopyExtParams(1, n * 2, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))
        asc.muls(t, t, scale, n)
        asc.data_copy_pad(yg, t, asc.DataCopyExtParams(1, n * 2, 0, 0, 0))
'''


def test_check_the_shipped_kernel_is_clean(capsys):
    kernel_file = Path(fas.__file__).with_name("kernel.py")
    code = main(["check", str(kernel_file), "--sizes", "0,17,4096"])
    out = capsys.readouterr().out
    assert code == 0 and out.count("no findings") == 3


def test_check_a_racy_user_kernel(tmp_path, capsys):
    path = tmp_path / "scale_raw.py"
    path.write_text(RACY_KERNEL)
    code = main(["check", str(path), "--sizes", "17,100", "--replay"])
    out = capsys.readouterr().out
    assert code == 1 and "racecheck" in out and "asc.muls(t, t, scale, n)" in out and "race replay" in out
    code = main(["check", str(path), "--sizes", "17", "--json"])
    reports = json.loads(capsys.readouterr().out)
    assert code == 1 and reports[0]["n"] == 17 and not reports[0]["ok"]
    kinds = {(f["tool"], f["kind"], tuple(f["pipes"])) for f in reports[0]["findings"]}
    assert ("racecheck", "RAW", ("MTE2", "V")) in kinds and ("racecheck", "RAW", ("V", "MTE3")) in kinds


@pytest.mark.parametrize("content, argv, match", [
    (None, [], "no such file"),
    ("def broken(:\n", [], "failed to import: SyntaxError"),
    ("x = 1\n", [], "k.py has no @asc.jit kernel"),
    (RACY_KERNEL.replace("scale: float", "mystery"), [], "pass it with --arg mystery=VALUE"),
    (RACY_KERNEL, ["--kernel", "nope"], "no @asc.jit kernel 'nope'"),
    (RACY_KERNEL, ["--arg", "scale"], "expected NAME=VALUE"),
    (RACY_KERNEL, ["--sizes", "1,-2"], "must be in [0, 2147483647], got -2"),
])
def test_check_bad_input_exits_2(tmp_path, capsys, content, argv, match):
    path = tmp_path / "k.py"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exc:
        main(["check", str(path), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and match in err and err.count("\n") == 1


def test_run_sanitize(capsys):
    code, out, _ = run_cli(capsys, "--size", "70001", "--sanitize", "--cores", "7")
    assert code == 0 and "sanitizer: no findings" in out


AXPY_KERNEL = '''
from fusekit import asc
from axpy_helpers import axpy_tile


@asc.jit
def axpy(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, a: float):
    """z = a * x + y: y is only read, although its name looks like an output."""
    asc.printf("n=%d", n)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECIN, 1)
    q_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=8192)
    pipe.init_buffer(que=q_y, num=1, len=8192)
    pipe.init_buffer(que=q_z, num=1, len=8192)
    if n > 0:
        axpy_tile(n, a, xg, yg, zg, q_x, q_y, q_z)
'''

AXPY_HELPERS = '''
from fusekit import asc
from fusekit.ops.elementwise import load, store


@asc.jit
def axpy_tile(n: int, a: float, xg: asc.GlobalTensor, yg: asc.GlobalTensor, zg: asc.GlobalTensor,
              q_x: asc.TQue, q_y: asc.TQue, q_z: asc.TQue):
    x = q_x.alloc_tensor(xg.dtype)
    y = q_y.alloc_tensor(yg.dtype)
    load(x, xg, n)
    load(y, yg, n)
    q_x.enque(x)
    q_y.enque(y)
    x = q_x.deque(xg.dtype)
    y = q_y.deque(yg.dtype)
    z = q_z.alloc_tensor(zg.dtype)
    asc.muls(z, x, a, n)
    asc.add(z, z, y, n)
    q_z.enque(z)
    q_x.free_tensor(x)
    q_y.free_tensor(y)
    z = q_z.deque(zg.dtype)
    store(zg, z, n)
    q_z.free_tensor(z)
'''


def test_check_correct_kernel_with_a_helper_module_and_printf_gives_clean_json(tmp_path, capsys):
    (tmp_path / "axpy.py").write_text(AXPY_KERNEL)
    (tmp_path / "axpy_helpers.py").write_text(AXPY_HELPERS)
    code = main(["check", str(tmp_path / "axpy.py"), "--sizes", "0,17,1024", "--cores", "1", "--json"])
    captured = capsys.readouterr()
    reports = json.loads(captured.out)
    assert code == 0 and all(r["ok"] for r in reports), reports
    assert "[aiv(0)] n=17" in captured.err  # device printf goes to stderr, away from the report


def test_check_reports_a_python_error_of_the_kernel_as_a_finding_and_goes_on(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(RACY_KERNEL.replace("xg.set_global_buffer(x, n)", "xg.set_global_buffer(x, [n][n - 4])"))
    code = main(["check", str(path), "--sizes", "4,5,6", "--json"])
    reports = json.loads(capsys.readouterr().out)
    assert code == 1 and [r["n"] for r in reports] == [4, 5, 6]
    assert [f["kind"] for f in reports[1]["findings"]] == ["exception"]
    finding = reports[1]["findings"][0]
    assert finding["message"] == "scale_raw raised IndexError: list index out of range"
    assert finding["locations"][0].endswith("bad.py:8")  # the line of the failing expression
    assert "exception" not in [f["kind"] for f in reports[0]["findings"]]


@pytest.mark.parametrize("argv, match", [(["--outputs", "w"], "--outputs w: not GM parameters of scale_raw"),
                                         (["--arg", "bogus=1"], "--arg bogus: scale_raw has no such parameter")])
def test_check_rejects_unknown_names(tmp_path, capsys, argv, match):
    path = tmp_path / "k.py"
    path.write_text(RACY_KERNEL)
    with pytest.raises(SystemExit) as exc:
        main(["check", str(path), "--sizes", "4", *argv])
    assert exc.value.code == 2 and match in capsys.readouterr().err


def test_profile_writes_trace_plot_and_csv(tmp_path, capsys):
    code = main(["profile", "fused_add_scale", "--size", "300007", "--cores", "8", "--trace", str(tmp_path / "t.json"),
                 "--plot", str(tmp_path / "p.png"), "--csv", str(tmp_path / "u.csv")])
    out = capsys.readouterr().out
    assert code == 0 and "kernel time" in out and "block_dim 8" in out
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert (tmp_path / "p.png").stat().st_size > 0 and "aiv_mte2_ratio" in (tmp_path / "u.csv").read_text()


def test_profile_bad_tile_length_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["profile", "fused_add_scale", "--size", "4096", "--tile-length", "100"])
    assert exc.value.code == 2 and "tile_length=100" in capsys.readouterr().err


def test_tune_and_experiment(capsys):
    assert main(["tune", "fused_add_scale", "--size", "65536"]) == 0
    out = capsys.readouterr().out
    assert "best" in out and "default" in out and "slower than the best found" in out
    assert main(["experiment", "--sizes", "262144"]) == 0
    out = capsys.readouterr().out
    assert "single core, BUFFER_NUM 1" in out and "article: about 1.8x" in out
