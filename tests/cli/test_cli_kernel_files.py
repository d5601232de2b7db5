"""`fusekit run | check | profile | tune | emit FILE.py:KERNEL`: a hand-written @asc.jit kernel, vector (the
article's FusedAddScale, examples/article/fused_add_scale.py) and cube (examples/cube/matmul.py), launched from
--arg or the file's check_launch; and the refusals of options that do not apply, one line each, exit 2."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from fusekit.cli import main
from fusekit.cli.common import DISTRIBUTION, version

ROOT = Path(__file__).resolve().parents[2]
VECTOR = f"{ROOT / 'examples/article/fused_add_scale.py'}:fused_add_scale"
CUBE = f"{ROOT / 'examples/cube/matmul.py'}:matmul"
HAVE_PYASC = importlib.util.find_spec("asc") is not None


def fails(capsys, *argv) -> str:
    """The one line of a refused command (exit 2, no traceback, nothing on stdout)."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_run_a_cube_kernel_from_its_check_launch_against_numpy(tmp_path, capsys):
    assert main(["run", CUBE, "--size", "64", "--expect", "a @ bt.T", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "AIC_ONLY" in out and "matmul[1](" in out and "m=64 (check_launch)" in out and out.rstrip().endswith("PASS")
    c = np.load(tmp_path / "out" / "c.npy")
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(2))
    want = a.astype(np.float64) @ b.astype(np.float64)  # examples/cube/matmul.py's arguments(m, n, k, seed=0)
    assert c.shape == (64, 64) and np.abs(c - want).max() < 1e-3 * np.abs(want).max()


def test_run_a_vector_kernel_from_arg_files_with_cores(tmp_path, capsys):
    x1, x2 = (np.arange(4096) / 512).astype(np.float16), np.full(4096, 0.25, np.float16)  # float16 on numpy 1 and 2
    np.save(tmp_path / "x1.npy", x1)
    np.save(tmp_path / "x2.npy", x2)
    argv = ["run", VECTOR, "--arg", f"x1={tmp_path / 'x1.npy'}", "--arg", f"x2={tmp_path / 'x2.npy'}", "--arg",
            "y=zeros:float16:4096", "--arg", "block_length=1024", "--arg", "tile_num=1", "--arg", "scale=2.0",
            "--cores", "4", "--sanitize", "--expect", "(x1 + x2) * scale", "-o", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "fused_add_scale[4](" in out and "y=float16[4096] (--arg)" in out and "sanitizer: no findings" in out
    # every value is a multiple of 2^-9 below 8.25: exact in float16, so the kernel's y is (x1 + x2) * 2 exactly
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), ((x1.astype(np.float64) + 0.25) * 2).astype(np.float16))


def test_run_reports_a_kernel_that_does_not_cover_its_output(capsys):
    # 2 cores of block_length 1024 write 2048 of the 4096 elements: the sanitizer says which bytes nobody wrote
    argv = ["run", VECTOR, "--arg", "x1=random:float16:4096", "--arg", "x2=random:float16:4096", "--arg",
            "y=zeros:float16:4096", "--arg", "block_length=1024", "--arg", "tile_num=1", "--cores", "2", "--sanitize"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "initcheck" in out and "y" in out and out.rstrip().endswith("FAIL")


def test_check_takes_file_colon_kernel(capsys):
    assert main(["check", CUBE, "--sizes", "16,40"]) == 0
    out = capsys.readouterr().out
    assert "n = 16: launched matmul[1]" in out and "n = 40: launched matmul[1]" in out


def test_profile_a_cube_kernel_prints_aic_pipes_and_writes_the_files(tmp_path, capsys):
    files = {"--trace": tmp_path / "t.json", "--csv": tmp_path / "p.csv"}
    argv = ["profile", CUBE, "--size", "64"] + [x for k, v in files.items() for x in (k, str(v))]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "aic_time(us)" in out and "mac" in out and "fixpipe" in out
    assert json.loads(files["--trace"].read_text())["traceEvents"]
    assert "aic_time(us)" in files["--csv"].read_text().splitlines()[0]


def test_profile_a_vector_kernel(capsys):
    assert main(["profile", VECTOR, "--size", "8192"]) == 0
    out = capsys.readouterr().out
    assert "aiv_time(us)" in out and "vec" in out


def test_tune_searches_block_dim_and_keeps_the_outputs(capsys):
    assert main(["tune", CUBE, "--size", "256"]) == 0
    out = capsys.readouterr().out
    assert "tune searches block_dim only, 1 to 24 (AIC cores of Ascend910B1)" in out
    # matmul takes its bands by get_block_num(): every block_dim computes the same C; 256 rows are 2 bands
    assert "block_dim   1:" in out and "block_dim  24:" in out and "differ" not in out


def test_tune_refuses_block_dims_whose_outputs_differ(tmp_path, capsys):
    # the article's kernel with a check_launch(n, dtype) that takes no core count: its share comes from
    # block_length, so another block_dim covers other elements, its outputs differ from the default launch's and
    # tune keeps only the default
    article = Path(VECTOR.rpartition(":")[0])
    path = tmp_path / "fixed_cores.py"
    path.write_text(article.read_text().replace("def check_launch(n, dtype=None, cores=None):",
                                                "def check_launch(n, dtype):").replace("cores or 48", "48"))
    assert main(["tune", f"{path}:fused_add_scale", "--size", "8192"]) == 0
    out = capsys.readouterr().out
    assert "(outputs differ from the default launch's)" in out and "(kernel error: data_copy on aiv(" in out
    assert "best/default" in out


@pytest.mark.skipif(HAVE_PYASC, reason="with pyasc installed emit traces the kernel (tests/pyasc)")
def test_emit_a_kernel_file_without_pyasc_says_how_to_install_it(capsys):
    err = fails(capsys, "emit", CUBE, "--arg", "m=64", "--arg", "n=64", "--arg", "k=64")
    assert "pip install 'ascend-fusekit[pyasc]'" in err


@pytest.mark.skipif(not HAVE_PYASC, reason="needs Huawei's pyasc (pip install 'ascend-fusekit[pyasc]', numpy<2)")
def test_emit_traces_a_kernel_file_with_future_annotations(tmp_path, capsys):
    # the examples start with `from __future__ import annotations`: pyasc's jit needs the annotations as objects
    assert main(["emit", VECTOR, "--out", str(tmp_path)]) == 0
    cpp = (tmp_path / "fused_add_scale_kernel.cpp").read_text()
    assert "Muls" in cpp and "DataCopyPad" in cpp


@pytest.mark.skipif(not HAVE_PYASC, reason="needs Huawei's pyasc (pip install 'ascend-fusekit[pyasc]', numpy<2)")
def test_a_kernel_pyasc_cannot_trace_is_a_usage_error_naming_the_line(capsys):
    with pytest.raises(SystemExit) as exc:  # examples/cube/matmul.py calls min(), which pyasc's tracer lacks
        main(["emit", CUBE, "--arg", "m=64", "--arg", "n=64", "--arg", "k=64"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "pyasc cannot trace matmul" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["run", VECTOR, "--size", "4096", "--precision", "fp32"], "--precision does not apply to "),
    (["run", VECTOR, "--size", "4096", "--input", "x1=x.npy"], "its inputs are its parameters: --arg NAME=FILE.npy"),
    (["run", VECTOR, "--size", "4096", "--scale", "2"], "its scalars are its parameters: --arg NAME=VALUE"),
    (["run", VECTOR, "--size", "4096", "--source"], "its source is the file itself"),
    (["run", VECTOR, "--shape", "64", "64"], "takes one size (check_launch(size, dtype)"),
    (["run", VECTOR], "give --size N"),
    (["tune", CUBE, "--size", "64", "--cores", "4"], "--cores does not apply to "),
    (["profile", CUBE, "--size", "64", "-o", "out"], "profile predicts the time and writes no outputs"),
    (["emit", CUBE, "--size", "64"], "emit traces the kernel's code, which takes any size"),
    (["run", VECTOR, "--size", "64", "--arg", "y=zeros:float16:4x"], "SHAPE is extents joined by x"),
    (["run", VECTOR, "--size", "64", "--arg", "y=zeros:floaty:4"], "--arg 'y=zeros:floaty:4'"),
    (["run", VECTOR, "--size", "64", "--arg", "tile=1"], "--arg tile: fused_add_scale has no such parameter"),
    (["run", VECTOR, "--size", "64", "--arg", "tile_num"], "expected NAME=VALUE"),
    (["run", VECTOR, "--size", "64", "--arg", "x1=missing.npy"], "missing.npy: no such file"),
    (["run", f"{CUBE[:-7]}:nokernel", "--size", "64"], "no @asc.jit kernel 'nokernel' in matmul.py"),
    (["run", "fused_add_scale", "--arg", "n=1"], "--arg does not apply to fused_add_scale"),
    (["run", "swiglu", "--arg", "n=1"], "--arg does not apply to swiglu"),
    (["tune", "fused_add_scale", "--size", "64", "--cores", "2"], "tune searches block_dim"),
    (["tune", "swiglu", "--shape", "64", "--buffer-num", "1"], "tune searches block_dim"),
    (["emit", "swiglu", "--seed", "1"], "--seed does not apply to swiglu: emit traces a kernel's code into Ascend C "
                                        "with pyasc; it is an option of run"),
    (["run", "swiglu", "--project", "p"], "it is an option of emit"),
    (["check", "swiglu"], "swiglu is an operator, not a kernel file"),
    (["check", f"{CUBE}", "--kernel", "other"], "names kernel matmul but --kernel is other"),
])
def test_refusals_are_one_line(capsys, argv, message):
    assert message in fails(capsys, *argv)


def test_version_is_the_distributions(capsys):
    from importlib.metadata import version as installed
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and DISTRIBUTION == "ascend-fusekit"
    assert capsys.readouterr().out.strip() == f"fusekit {installed(DISTRIBUTION)}" == f"fusekit {version()}"
