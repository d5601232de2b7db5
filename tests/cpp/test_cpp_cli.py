"""fusekit run / profile / check on C++ programs: exit codes and one-line errors, no tracebacks."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from cpp_paths import SOURCES


def fusekit(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fusekit.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def build(tmp_path):
    shutil.copy(SOURCES / "scale_program.asc", tmp_path / "scale_program.asc")
    (tmp_path / "build" / "input").mkdir(parents=True)
    (tmp_path / "build" / "output").mkdir()
    np.arange(8 * 1024, dtype=np.float32).tofile(tmp_path / "build" / "input" / "x.bin")
    return tmp_path / "build"


@pytest.mark.parametrize("args, status, text", [
    ((), 0, "scale_kernel<256><<<8>>> at ../scale_program.asc:"),
    (("-D", "FAULT=4"), 1, "main returned 3"),
    (("-D", "FAULT=2"), 1, "crashed (SIGSEGV)"),
    (("-D", "FAULT=3", "--sanitize"), 1, "findings above"),
    (("--soc", "dav-2201"), 0, "running its main on Ascend910B1"),
])
def test_run_program(build, args, status, text):
    done = fusekit("run", "../scale_program.asc", *args, cwd=build)
    assert done.returncode == status and text in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args, text", [
    (("--soc", "dav-3510"), "dav-3510 is Ascend 950"),
    (("--size", "8"), "--size does not apply to ../scale_program.asc"),
    (("-D", "1X=2"), "expected NAME or NAME=VALUE"),
])
def test_run_program_usage_errors(build, args, text):
    done = fusekit("run", "../scale_program.asc", *args, cwd=build)
    assert done.returncode == 2 and text in done.stderr and "Traceback" not in done.stderr


def test_profile_and_check_a_program(build):
    done = fusekit("profile", "../scale_program.asc", "--csv", "pipes.csv", cwd=build)
    assert done.returncode == 0 and "kernel time" in done.stdout and (build / "pipes.csv").is_file()
    done = fusekit("check", "../scale_program.asc", "-D", "FAULT=3", cwd=build)
    assert done.returncode == 1 and "findings above" in done.stdout
    done = fusekit("check", "../scale_program.asc", cwd=build)
    assert done.returncode == 0 and "sanitizer: no findings" in done.stdout


def test_a_program_that_launches_nothing(tmp_path):
    (tmp_path / "idle.asc").write_text('#include "acl/acl.h"\nint main() { aclInit(nullptr); return 0; }\n')
    done = fusekit("run", str(tmp_path / "idle.asc"))
    assert done.returncode == 1 and "without launching a kernel" in done.stdout


def test_not_ascend_c_and_missing_files(tmp_path):
    (tmp_path / "notes.asc").write_text("hello\n")
    done = fusekit("run", str(tmp_path / "notes.asc"))
    assert done.returncode == 2 and "notes.asc:1:" in done.stderr and "Traceback" not in done.stderr
    done = fusekit("run", str(tmp_path / "missing.asc"))
    assert done.returncode == 2 and "no such file" in done.stderr
    (tmp_path / "x.bin").write_bytes(b"\0" * 8)
    done = fusekit("run", str(tmp_path / "x.bin"))
    assert done.returncode == 2 and "is a file fusekit does not run" in done.stderr


def test_conformance_over_a_folder_of_examples(tmp_path):
    example = tmp_path / "examples" / "scale"
    (example / "scripts").mkdir(parents=True)
    shutil.copy(SOURCES / "scale_program.asc", example / "scale.asc")
    (example / "scripts" / "gen_data.py").write_text(
        "import numpy as np\nnp.arange(8192, dtype=np.float32).tofile('input/x.bin')\n")
    (example / "scripts" / "verify_result.py").write_text(
        "import sys, numpy as np\ny = np.fromfile('output/y.bin', np.float32)\n"
        "sys.exit(0 if np.array_equal(y, np.arange(8192, dtype=np.float32) * 3) else 1)\n")
    done = fusekit("conformance", str(tmp_path / "examples"))
    assert done.returncode == 0 and "scale/scale.asc" in done.stdout and "1 passed of 1" in done.stdout, done.stdout


def test_a_scenario_for_ascend_950_only_is_not_simulated(tmp_path):
    # asc-devkit's READMEs mark such scenarios in their headings or in the option table (element_wise_logic,
    # select, compare, data_copy_gm2l1): the row says so instead of failing on the dav-2201 build, where the
    # scenario's code is #if'd out and the output is never written
    from fusekit.cpp import conformance

    example = tmp_path / "logic"
    example.mkdir()
    (example / "logic.asc").write_text("// SCENARIO_NUM == 1, SCENARIO_NUM == 2, SCENARIO_NUM == 3\n")
    (example / "README.md").write_text(
        "| Atlas A2 训练系列产品 | dav-2201 |\n\n**场景1：And按位与运算**\n\n"
        "**场景2：Ors矢量与标量或操作（标量在前）** ----此场景仅在 Ascend 950PR/Ascend 950DT产品支持**\n\n"
        "  | `SCENARIO_NUM` | 1-3 | 场景编号，场景3仅支持dav-3510架构 |\n")
    readme = (example / "README.md").read_text()
    assert [n for n in (1, 2, 3) if conformance._only_on_950(readme, n)] == [2, 3]
    rows = [conformance.run_example(e) for e in conformance.find_examples(tmp_path) if e.scenario in (2, 3)]
    assert [(r.verdict, "runs on Ascend 950PR/950DT (dav-3510) only" in r.reason) for r in rows] == \
        [("not simulated", True)] * 2


def test_a_sanitizer_finding_that_cites_a_page_is_a_sample_defect(tmp_path):
    # the compare sample's GetCmpMask into 32 B: the row names the rule and its page ("defect", not "failed")
    from fusekit.cpp import conformance

    (tmp_path / "cmp").mkdir()
    shutil.copy(SOURCES / "cmpmask_program.asc", tmp_path / "cmp" / "cmp.asc")
    [row] = map(conformance.run_example, conformance.find_examples(tmp_path))
    assert row.verdict == "defect" and "GetCmpMask" in row.reason and "128" in row.reason, row
