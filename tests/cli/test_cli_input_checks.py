"""Every subcommand: bad input is exit 2 with one line, checked before the work (issue 8, item K)."""

import json
import sys

import pytest

from fusekit.cli import main, shipped
from fusekit.pyasc.bridge import PyascMissing, require_pyasc

KERNEL = '''
from fusekit import asc


@asc.jit
def scale_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, s: float, TILE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=TILE * 2)
    for i in range(n // TILE):
        t = q.alloc_tensor(asc.float16)
        asc.data_copy(t, xg[i * TILE:], TILE)
        q.enque(t)
        t = q.deque(asc.float16)
        asc.muls(t, t, s, TILE)
        asc.data_copy(yg[i * TILE:], t, TILE)
        q.free_tensor(t)
'''


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("a file, not a directory")
    (tmp_path / "k.py").write_text(KERNEL)
    return tmp_path


def fails(capsys, *argv) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.mark.parametrize("argv, message", [
    (["experiment", "--sizes", "0"], "argument --sizes: must be in [1, 2147483647], got 0"),
    (["experiment", "--sizes", "-5"], "argument --sizes: must be in [1, 2147483647], got -5"),
    (["experiment", "--sizes", "2147483648"], "argument --sizes: must be in [1, 2147483647], got 2147483648"),
    (["experiment", "--sizes", "4k"], "argument --sizes: expected a whole number, got '4k'"),
    (["experiment", "--sizes", ","], "argument --sizes: expected comma-separated element counts"),
    (["tune", "fused_add_scale", "--size", "0"], "argument --size: must be in [1, 2147483647], got 0"),
    (["tune", "nope", "--size", "8"], "argument OP: unknown operator 'nope'; choose from fused_add_scale"),
    (["profile", "fused_add_scale", "--size", "-1"], "argument --size: must be >= 0, got -1"),
    (["profile", "fused_add_scale", "--buffer-num", "0"], "argument --buffer-num: must be in [1, 8], got 0"),
    (["profile", "fused_add_scale", "--tile-length", "0"], "argument --tile-length: must be >= 1, got 0"),
    (["profile", "fused_add_scale", "--cores", "0"], "argument --cores: must be in [1, 65535], got 0"),
    (["run", "fused_add_scale", "--size", "1e3"], "argument --size: expected a whole number, got '1e3'"),
    (["run", "fused_add_scale", "--scale", "big"], "argument --scale: expected a number, got 'big'"),
    (["run", "nope"], "argument OP: unknown operator 'nope'"),
    (["check", "k.py", "--sizes", "1,-2"], "argument --sizes: must be in [0, 2147483647], got -2"),
    (["check", "k.py", "--outputs", ","], "argument --outputs: expected comma-separated parameter names"),
    (["check", "k.py", "--buffer-num", "9"], "argument --buffer-num: must be in [1, 8], got 9"),
    (["emit", "fused_add_scale", "--buffer-num", "0"], "argument --buffer-num: must be in [1, 8], got 0"),
])
def test_bad_numbers_exit_2_in_one_line(workdir, capsys, argv, message):
    code, out, err = fails(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and out == ""


@pytest.mark.parametrize("argv, message", [
    (["run", "fused_add_scale", "--size", "64", "-o", "afile/y.npy"], "-o afile/y.npy: afile is a file, not a directory"),
    (["run", "fused_add_scale", "--size", "64", "-o", "nodir/y.npy"], "-o nodir/y.npy: directory nodir does not exist"),
    (["run", "fused_add_scale", "--size", "64", "-o", "."], "-o .: . is a directory; give a file name in it"),
    (["profile", "fused_add_scale", "--size", "64", "--trace", "afile/t.json"],
     "--trace afile/t.json: afile is a file, not a directory"),
    (["profile", "fused_add_scale", "--size", "64", "--csv", "afile/u.csv"], "--csv afile/u.csv: afile is a file"),
    (["profile", "fused_add_scale", "--size", "64", "--plot", "nodir/p.png"],
     "--plot nodir/p.png: directory nodir does not exist"),
    (["profile", "fused_add_scale", "--size", "0", "--plot", "p.png"], "--plot: nothing to plot at --size 0"),
    (["emit", "fused_add_scale", "--out", "afile"], "--out afile: afile is a file, not a directory"),
    (["emit", "fused_add_scale", "--out", "afile/sub"], "--out afile/sub: afile is a file, not a directory"),
    (["emit", "fused_add_scale", "--project", "afile/p"], "--project afile/p: afile is a file, not a directory"),
    (["run", "fused_add_scale", "--size", "64", "-o", "/proc/y.npy"],  # writable bits, but no file can be made
     "-o /proc/y.npy: cannot create files in directory /proc"),
    (["check", "missing.py"], "missing.py: no such file"),
    (["check", "afile"], "afile failed to import"),
])
def test_unwritable_outputs_and_missing_files_fail_before_the_work(workdir, capsys, argv, message):
    code, out, err = fails(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and out == ""  # nothing ran


def test_plot_without_matplotlib_fails_before_profiling(workdir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    code, out, err = fails(capsys, "profile", "fused_add_scale", "--size", "4096", "--plot", "p.png")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--plot needs matplotlib, which is not installed: pip install 'ascend-fusekit[plot]'" in err


@pytest.mark.parametrize("argv, message", [
    (["emit", "nope"], "unknown operator 'nope': emit takes fused_add_scale, unfused_add_muls, or your kernel as "
                       "FILE:KERNEL"),
    (["emit", "k.py:1x"], "'k.py:1x': expected FILE:KERNEL with KERNEL a Python name"),
    (["emit", "missing.py:k"], "missing.py: no such file"),
    (["emit", "k.py:nokernel"], "no @asc.jit kernel 'nokernel' in k.py; it has ['scale_kernel']"),
    (["emit", "k.py:scale_kernel"], "scale_kernel's compile-time constant 'TILE' has no value; pass it with --arg "
                                    "TILE=VALUE"),
    (["emit", "k.py:scale_kernel", "--arg", "TILES=2"], "--arg TILES: scale_kernel has no such parameter"),
    (["emit", "k.py:scale_kernel", "--arg", "TILE"], "--arg 'TILE': expected NAME=VALUE"),
    (["emit", "k.py:scale_kernel", "--arg", "TILE=256", "--project", "p"], "--project writes a shipped operator's"),
    (["emit", "k.py:scale_kernel", "--arg", "TILE=256", "--dtype", "bfloat16"], "pyasc 1.1.1 cannot trace bfloat16"),
    (["emit", "fused_add_scale", "--arg", "TILE=2"], "--arg is for your own kernel (FILE:KERNEL)"),
])
def test_emit_file_kernel_arguments_are_checked_without_pyasc(workdir, capsys, argv, message):
    code, out, err = fails(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and out == ""


def test_emit_a_users_kernel(workdir, capsys):
    try:
        require_pyasc()
    except PyascMissing:
        code, _, err = fails(capsys, "emit", "k.py:scale_kernel", "--arg", "TILE=256", "--out", "build")
        assert code == 2 and "this needs Huawei's pyasc" in err
        pytest.skip("pyasc is not installed: emitting needs it")
    assert main(["emit", "k.py:scale_kernel", "--arg", "TILE=256", "--out", "build"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scale_kernel (float16, {'TILE': 256}): build/scale_kernel_kernel.cpp")
    cpp = (workdir / "build" / "scale_kernel_kernel.cpp").read_text()
    assert "Muls" in cpp and "256" in cpp


class Bars:
    """Stands in for tqdm: records each bar's description, total and the updates it received."""

    made: list = []

    def __init__(self, *args, desc="", total=None, disable=None, **kwargs):
        self.desc, self.total, self.done, self.disable = desc, total, 0, disable
        Bars.made.append(self)

    def update(self, k=1):
        self.done += k

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_run_shows_progress_of_verification_and_the_whole_time(capsys, monkeypatch):
    Bars.made = []
    monkeypatch.setattr(shipped, "tqdm", Bars)
    monkeypatch.setattr(shipped, "PROGRESS_ELEMENTS", 1000)  # "large" from 1000 elements for the test
    assert main(["run", "fused_add_scale", "--size", "3000"]) == 0
    out = capsys.readouterr().out
    bars = {bar.desc: bar for bar in Bars.made}
    verifying = bars["verifying"]
    assert verifying.disable is None and verifying.total == 4 * 3000 and verifying.done == 4 * 3000
    block_dim = int(out.split("block_dim ")[1].split()[0])
    assert bars["simulating cores"].done == block_dim  # one update per simulated core
    line = next(line for line in out.splitlines() if line.startswith("time:"))
    assert " s simulating (" in line and "whole command " in line
    wall = float(line.split("time: wall ")[1].split(" s")[0])
    whole = float(line.split("whole command ")[1].split(" s")[0])
    assert 0 < wall <= whole


def test_small_runs_show_no_bars(capsys, monkeypatch):
    Bars.made = []
    monkeypatch.setattr(shipped, "tqdm", Bars)
    assert main(["run", "fused_add_scale", "--size", "3000"]) == 0
    assert all(bar.disable is True for bar in Bars.made) and Bars.made


def test_nothing_is_written_when_a_check_fails_first(workdir, capsys):
    code, _, _ = fails(capsys, "run", "fused_add_scale", "--size", "64", "-o", "afile/y.npy")
    assert code == 2 and (workdir / "afile").read_text() == "a file, not a directory"


TWO_OPS = '''
from fusekit import asc


@asc.jit
def scale_shift(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, s: float, TILE: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_in, num=1, len=TILE * 2)
    pipe.init_buffer(que=q_out, num=1, len=TILE * 2)
    for i in range(n // TILE):
        t = q_in.alloc_tensor(asc.float16)
        asc.data_copy(t, xg[i * TILE:], TILE)
        q_in.enque(t)
        t = q_in.deque(asc.float16)
        u = q_out.alloc_tensor(asc.float16)
        asc.muls(u, t, s, TILE)
        asc.adds(u, u, s, TILE)
        q_out.enque(u)
        q_in.free_tensor(t)
        u = q_out.deque(asc.float16)
        asc.data_copy(yg[i * TILE:], u, TILE)
        q_out.free_tensor(u)
'''


def test_auto_sync_switch_reaches_check_and_run_sanitize(workdir, capsys):
    """PipeBarrier page: Add then a dependent Mul need PipeBarrier<PIPE_V> unless the build inserts it."""
    (workdir / "two.py").write_text(TWO_OPS)
    argv = ["check", "two.py", "--arg", "TILE=256", "--sizes", "256", "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv + ["--no-auto-sync"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert {(f["tool"], tuple(f["pipes"])) for f in report["findings"]} == {("racecheck", ("V", "V"))}
    assert main(argv + ["--auto-sync"]) == 0
    capsys.readouterr()
    code = main(["run", "fused_add_scale", "--size", "4096", "--sanitize", "--no-auto-sync"])
    out = capsys.readouterr().out
    assert ("PIPE_V -> PIPE_V" in out) == (code == 1)  # the shipped kernel needs a barrier there, or has one
