"""Issue 24, "One CLI": every kind of operator takes the same options where they mean the same thing, and an
option that cannot apply is refused naming the operator (or subcommand), the option and why, exit 2.

The expected values are the documents' (msprof's PipeUtilization.csv columns, docs/guide/timing.md) or worked
out by hand from the example's tiling (examples/article/fused_add_scale.py: TILE = 1024)."""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fusekit.cli import main, parser
from fusekit.cli.generated import Generated
from fusekit.cli.operator import resolve

ROOT = Path(__file__).resolve().parents[2]
ARTICLE = ROOT / "examples/article/fused_add_scale.py"
OPERATOR = {"run": "fused_add_scale", "profile": "fused_add_scale", "tune": "fused_add_scale",
            "emit": "fused_add_scale", "check": str(ARTICLE)}  # the positional each subcommand needs


def cli(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys, *argv) -> str:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, (argv, code, out, err)
    assert "unrecognized arguments" not in err and "Traceback" not in err
    return err


# 1. profile writes --trace, --plot's siblings and --csv for generated operators, vector and cube

@pytest.mark.parametrize("op, shape, columns", [
    ("swiglu", ["4096"], {"aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"}),
    ("matmul_bias", ["64", "64"], {"aic_mac_ratio", "aic_mte1_ratio", "aic_fixpipe_ratio"}),
])
def test_profile_of_a_generated_operator_writes_the_fused_kernels_timeline(tmp_path, capsys, op, shape, columns):
    trace, table = tmp_path / "t.json", tmp_path / "PipeUtilization.csv"
    code, out, err = cli(capsys, "profile", op, "--shape", *shape, "--trace", str(trace), "--csv", str(table))
    assert code == 0, err
    assert f"wrote {trace}" in out and f"wrote {table}" in out and "vs unfused chain" in out
    rows = list(csv.DictReader(table.open()))
    assert rows and columns <= set(rows[0]) and [int(r["block_id"]) for r in rows] == list(range(len(rows)))
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e["ph"] == "X" and e["dur"] >= 0 for e in events)  # the pipes' busy spans
    assert {e["args"]["name"] for e in events if e["name"] == "process_name"}  # one process per core


def test_profile_plot_of_a_generated_operator_at_size_zero_is_refused_in_one_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    err = refused(capsys, "profile", "swiglu", "--shape", "0", "--plot", str(tmp_path / "p.png"))
    assert "nothing to plot" in err and not (tmp_path / "p.png").exists()


# 2. --size N is the 1-D --shape N, for every operator; both given is a conflict

def test_fused_add_scale_takes_a_one_dimensional_shape(capsys):
    code, out, err = cli(capsys, "run", "fused_add_scale", "--shape", "100")
    assert code == 0 and "n = 100" in out and out.rstrip().endswith("PASS"), err
    code, out, _ = cli(capsys, "profile", "fused_add_scale", "--shape", "4096")
    assert code == 0 and "total_length 4096" in out
    for command in ("run", "tune"):
        assert "fused_add_scale is one-dimensional" in refused(capsys, command, "fused_add_scale", "--shape", "64", "64")


@pytest.mark.parametrize("op", ["swiglu", "fused_add_scale", f"{ARTICLE}:fused_add_scale", "silu(a) * b"])
def test_size_and_shape_together_are_a_conflict(capsys, op):
    err = refused(capsys, "run", op, "--size", "100", "--shape", "64", "512")
    assert "--size N is the 1-D --shape N" in err and "not both" in err


# 3. an option of any subcommand given to one that lacks it: refused with the reason, never "unrecognized"

def _subcommands() -> dict:
    top = parser()
    action = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p.get_default("options") for name, p in action.choices.items()}


def _pairs():
    tables = _subcommands()
    for command, table in tables.items():
        own = [f for dest, flags in table.flags.items() if dest not in table.foreign for f in flags.split("/")]
        for other, theirs in tables.items():
            for dest, (args, kwargs) in theirs.specs.items():
                if other == command or dest in theirs.foreign or dest in table.flags and dest not in table.foreign:
                    continue
                flag = args[-1]
                if any(f != flag and f.startswith(flag) for f in own):
                    continue  # argparse takes it for an abbreviation of the own option (run --out is --output)
                yield command, other, flag, kwargs


PAIRS = sorted({(command, flag): kwargs for command, _, flag, kwargs in _pairs()}.items())


def test_every_subcommand_holds_every_other_subcommands_options():
    tables = _subcommands()
    assert set(tables) == {"run", "check", "profile", "tune", "experiment", "emit", "validate-timing", "conformance"}
    assert len(PAIRS) > 100 and {("experiment", "--plot"), ("check", "--shape"), ("run", "--json")} <= \
        {pair for pair, _ in PAIRS}


@pytest.mark.parametrize("pair", [pair for pair, _ in PAIRS], ids="{0[0]} {0[1]}".format)
def test_an_option_of_another_subcommand_is_refused_with_the_reason(capsys, pair):
    command, flag = pair
    kwargs = dict(PAIRS)[pair]
    value = [] if kwargs.get("action") in ("store_true", "store_false", argparse.BooleanOptionalAction) else \
        ["4", "5"] if kwargs.get("nargs") == "+" else ["4"]
    target = OPERATOR.get(command)
    err = refused(capsys, command, *([target] if target else []), flag, *value)
    subject = "fused_add_scale" if command in ("run", "profile", "tune", "emit") else command
    assert re.search(rf"error: [-/\w]*{re.escape(flag)}[-/\w]* does not apply to {re.escape(subject)}: \S", err), err


@pytest.mark.parametrize("argv, why", [
    (["check", str(ARTICLE), "--shape", "4096"], "check sweeps the sizes of --sizes"),
    (["check", str(ARTICLE), "--trace", "t.json"], "fusekit profile OP"),
    (["check", str(ARTICLE), "--scale", "2"], "--arg NAME=VALUE"),
    (["check", f"{ARTICLE}:fused_add_scale", "--sanitize"], "check always runs the sanitizer"),
    (["profile", "fused_add_scale", "--replay"], "fusekit check FILE.py --replay"),
    (["profile", "fused_add_scale", "--sizes", "4096"], "profile takes one size, --size N"),
    (["run", "fused_add_scale", "--sizes", "10"], "run takes one size"),
    (["run", "fused_add_scale", "--json"], "check FILE.py --json"),
    (["run", "swiglu", "--replay"], "--replay replays races"),
    (["experiment", "--plot", "p.png"], "experiment writes no timeline"),
])
def test_the_reported_refusals_say_what_to_use(capsys, argv, why):
    assert why in refused(capsys, *argv)


# 4. check --cores reaches a check_launch(n, dtype, cores); the shipped example passes its default sweep

def test_check_passes_cores_to_a_check_launch_that_takes_them(capsys):
    code, out, err = cli(capsys, "check", str(ARTICLE), "--sizes", "65536", "--cores", "4")
    # 65536 / TILE = 64 tiles over 4 cores: 16 tiles, 16384 elements each
    assert code == 0, err
    assert "launched fused_add_scale[4](" in out and "block_length=16384 (check_launch)" in out
    assert "tile_num=16 (check_launch)" in out


def test_check_refuses_cores_a_check_launch_cannot_take(tmp_path, capsys):
    text = ARTICLE.read_text().replace("def check_launch(n, dtype=None, cores=None):", "def check_launch(n, dtype):") \
        .replace("tiling(n, cores or 48)", "tiling(n)")
    path = tmp_path / "two_parameters.py"
    path.write_text(text)
    err = refused(capsys, "check", str(path), "--sizes", "4096", "--cores", "2")
    assert "--cores 2" in err and "check_launch(n, dtype, cores)" in err


def test_the_shipped_example_passes_check_over_the_default_sweep(capsys):
    code, out, err = cli(capsys, "check", str(ARTICLE))
    assert code == 0, out + err
    # 65539 = 64 tiles + 3: 32 cores of 2 tiles, the last one also the 3-element tail
    assert "n = 65539: launched fused_add_scale[32](" in out and "tail_length=3 (check_launch)" in out
    assert out.count("no findings") == 5


def test_tune_varies_the_cores_of_the_examples_check_launch(capsys):
    code, out, err = cli(capsys, "tune", f"{ARTICLE}:fused_add_scale", "--size", "8192")
    # 8 tiles: block_dim 1, 2, 4 and 8 are the launches check_launch makes for 1..48 cores
    assert code == 0, err
    assert [int(d) for d in re.findall(r"block_dim +(\d+):", out)] == [1, 2, 4, 8]


# 5. --tile-length: fused_add_scale's run takes it as its profile does

def test_run_fused_add_scale_takes_the_tile_length(capsys):
    code, out, err = cli(capsys, "run", "fused_add_scale", "--size", "5000", "--tile-length", "512")
    assert code == 0 and "tile_length 512" in out and out.rstrip().endswith("PASS"), err


# 6. the install name is the distribution's

def test_no_old_install_name_is_left():
    old = re.compile(r"(?<!ascend-)fusekit\[(pyasc|torch|plot|test|all)\]")
    files = [p for folder in ("src", "tests", "docs", "examples", "tools") for p in (ROOT / folder).rglob("*")
             if p.suffix in (".py", ".md", ".toml", ".json", ".txt") and p.is_file()] + [ROOT / "README.md"]
    assert not [f"{p.relative_to(ROOT)}:{i}" for p in files
                for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if old.search(line)]


# 7. a path that does not exist is not an expression

def test_a_missing_path_is_not_an_expression(capsys):
    err = refused(capsys, "run", "no/such/dir", "--shape", "50000")
    assert "no such file or directory: no/such/dir" in err and "'no / such / dir'" in err
    assert "no such file or directory" in refused(capsys, "profile", "./no/kernel.py:k", "--size", "4")
    assert isinstance(resolve("a/b", "run"), Generated)  # a division stays an expression


# 8. the minor ones

def test_a_missing_kernel_is_said_before_the_missing_size(capsys):
    err = refused(capsys, "profile", f"{ARTICLE}:nokernel")
    assert "no @asc.jit kernel 'nokernel'" in err and "--size" not in err


def test_a_file_without_a_kernel_says_so(tmp_path, capsys):
    path = tmp_path / "nokern.py"
    path.write_text("from fusekit import asc\n\n\n@asc.jit\ndef helper(n: int):\n    pass\n")
    for argv in (["check", str(path)], ["run", str(path), "--size", "4"]):
        assert "nokern.py has no @asc.jit kernel" in refused(capsys, *argv)


def test_the_check_hint_for_an_expression_is_quoted(capsys):
    assert "fusekit run 'silu(a)*b' --sanitize" in refused(capsys, "check", "silu(a)*b")


SCALE = '''from fusekit import asc


@asc.jit
def scale_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=TILE * 2)
    for i in range(n // TILE):
        t = q.alloc_tensor(asc.float16)
        asc.data_copy(t, xg[i * TILE:], TILE)
        q.enque(t)
        t = q.deque(asc.float16)
        asc.data_copy(yg[i * TILE:], t, TILE)
        q.free_tensor(t)
'''


def test_a_kernel_run_that_writes_nothing_warns(tmp_path, capsys):
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    code, out, _ = cli(capsys, "run", f"{path}:scale_kernel", "--size", "4000", "--arg", "TILE=256", "--arg", "n=100")
    assert code == 0 and "warning: scale_kernel wrote none of its GM parameters (0 instructions ran)" in out


def test_no_auto_sync_without_the_sanitizer_says_what_it_changes(capsys):
    code, out, _ = cli(capsys, "run", "fused_add_scale", "--size", "64", "--no-auto-sync")
    assert code == 0 and "--no-auto-sync changes only what the sanitizer reports" in out
    code, out, _ = cli(capsys, "run", "fused_add_scale", "--size", "64", "--no-auto-sync", "--sanitize")
    assert "--no-auto-sync changes only" not in out


def test_fusekit_torch_without_torch_names_the_install():
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import fusekit.torch\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "pip install 'ascend-fusekit[torch]'" in out and "needs PyTorch" in out


# 10. what a second new-user trial found: a --arg of the wrong kind, options a check_launch owns, a project's
# command, a file's own sweep

@pytest.mark.parametrize("value, says", [("scale='hi'", "a kernel scalar is a number"),
                                         ("scale=[1,2]", "argument scale"), ("x1=1.0", "argument x1")])
def test_an_arg_of_the_wrong_kind_is_one_line_before_anything_runs(capsys, value, says):
    err = refused(capsys, "run", f"{ARTICLE}:fused_add_scale", "--size", "4096", "--arg", value)
    assert says in err


@pytest.mark.parametrize("command", ["run", "profile", "tune"])
def test_buffer_num_is_refused_where_check_launch_builds_the_launch(capsys, command):
    err = refused(capsys, command, f"{ARTICLE}:fused_add_scale", "--size", "4096", "--buffer-num", "3")
    assert "--buffer-num" in err and "check_launch" in err


@pytest.mark.parametrize("argv", [["tune", "--shape", "4096"], ["tune", "--size", "4096"], ["emit", "--out", "x"]])
def test_a_project_says_first_that_the_command_takes_no_project(capsys, argv):
    project = str(Path(__file__).parents[1] / "cpp" / "projects" / "scaled_sub")
    err = refused(capsys, argv[0], project, *argv[1:])
    assert f"{argv[0]} does not take one (use run or profile)" in err and "it takes" not in err


def test_check_sweeps_the_files_own_check_sizes(tmp_path, capsys):
    path = tmp_path / "own_sizes.py"
    path.write_text(ARTICLE.read_text() + "\nCHECK_SIZES = (17, 2048)\n")
    code, out, err = cli(capsys, "check", str(path))
    assert code == 0, out + err
    assert re.findall(r"^n = (\d+):", out, re.M) == ["17", "2048"]
    path.write_text(ARTICLE.read_text() + "\nCHECK_SIZES = 'all'\n")
    assert "CHECK_SIZES must be a tuple of sizes" in refused(capsys, "check", str(path))


@pytest.mark.parametrize("command, option", [("run", ["--tile-length", "512"]), ("run", ["--buffer-num", "1"]),
                                             ("profile", ["--tile-length", "64"])])
def test_a_cube_operator_refuses_the_vector_tiling(capsys, command, option):
    code, out, err = cli(capsys, command, "matmul_bias", "--shape", "64", "64", *option)
    assert code == 2 and f"{option[0]} does not apply to matmul_bias" in err and "cube plan" in err


def test_an_attribute_given_twice_is_refused(capsys):
    project = str(Path(__file__).parents[1] / "cpp" / "projects" / "scaled_sub")
    code, out, err = cli(capsys, "run", project, "--shape", "64", "--attr", "alpha=1", "--attr", "alpha=2")
    assert code == 2 and "--attr alpha is given twice" in err
    code, out, err = cli(capsys, "run", "add_rms_norm", "--shape", "4", "64", "--attr", "eps=1e-5", "--attr", "eps=1e-6")
    assert code == 2 and "--attr eps is given twice" in err
