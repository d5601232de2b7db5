"""What ``fusekit conformance`` and ``pytest -p fusekit.pyasc_plugin`` report (issue 18 item H).

One output (the table: a row for every collected test, setup / teardown errors and files that fail to
import included), one exit-status rule for both entry points (README, "Running pyasc's own tests on
fusekit": 0 when no row is ``failed`` / ``error`` / ``not run``, 1 otherwise, 2 when there is no test),
reasons that name the missing call by its full name, documented-rule violations as sample defects
(asc-devkit 通用地址重叠约束: a dst that partially overlaps a src within a repeat is not allowed), and
cube-unit use detected per test. The suites here are pyasc-style files of our own, so the expected
rows are what each test does, read from its source.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError
from fusekit.pyasc import bridge, conformance

_KERNEL = '''
import numpy as np
import pytest
import asc

@asc.jit
def copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, overlap: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=1024)
    xg = asc.GlobalTensor(); xg.set_global_buffer(x, 256)
    yg = asc.GlobalTensor(); yg.set_global_buffer(y, 256)
    t = buf.get(asc.float16)
    asc.data_copy(t, xg, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if overlap:
        asc.add(t[16:], t, t, 128, 1, asc.BinaryRepeatParams())  # dst 16 elements past src, one repeat
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, t, 256)

def copy(overlap=0):
    x = np.arange(256, dtype=np.float16); y = np.zeros(256, np.float16)
    copy_kernel[1](x, y, overlap)
    return x, y
'''


def _write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(_KERNEL + textwrap.dedent(body))
    return path


def _cli(*args):
    env = {k: v for k, v in os.environ.items() if k != conformance.CHECKOUT_ENV}
    return subprocess.run([sys.executable, "-m", "fusekit.cli", "conformance", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env)


def _plugin(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider",
                           "-q", *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


def _row(stdout, test):
    return next(line for line in stdout.splitlines() if f" {test} " in line)


def test_one_output_a_row_for_every_test_and_totals_that_count_them(tmp_path):
    """The CLI prints the table only, with a row for each test (setup/teardown errors, import failures)."""
    _write(tmp_path, "test_phases.py", '''
        @pytest.fixture
        def broken_setup():
            raise RuntimeError("fixture cannot start")

        @pytest.fixture
        def broken_teardown():
            yield
            raise RuntimeError("fixture cannot stop")

        def test_pass():
            x, y = copy()
            assert (y == x).all()

        def test_wrong():
            x, y = copy()
            assert (y == x + 1).all(), "y is not x + 1"

        def test_setup_error(broken_setup):
            pass

        def test_teardown_error(broken_teardown):
            copy()
    ''')
    (tmp_path / "test_import_error.py").write_text("import no_such_module_anywhere\n")
    out = _cli(tmp_path)
    lines = out.stdout.splitlines()
    assert not any(re.fullmatch(r"[.FEsx]+( +\[ *\d+%\])?", line) for line in lines), out.stdout  # pytest's dots
    assert "warnings summary" not in out.stdout and " passed in " not in out.stdout and "failed," not in out.stdout
    assert "passed" in _row(out.stdout, "test_pass") and "sanitizer: clean" in _row(out.stdout, "test_pass")
    assert "failed" in _row(out.stdout, "test_wrong") and "y is not x + 1" in _row(out.stdout, "test_wrong")
    setup = _row(out.stdout, "test_setup_error")
    assert " error " in setup and "in setup" in setup and "fixture cannot start" in setup
    teardown = _row(out.stdout, "test_teardown_error")
    assert " error " in teardown and "in teardown" in teardown and "fixture cannot stop" in teardown
    collection = _row(out.stdout, "(collection)")
    assert "test_import_error.py" in collection and "no_such_module_anywhere" in collection
    totals = next(line for line in lines if line.startswith("totals:"))
    assert totals == "totals: error 3, failed 1, passed 1", totals
    assert out.returncode == 1


def test_cli_and_plugin_share_one_exit_status(tmp_path):
    """0 with no fusekit failure (a sample defect is none), 1 with one, 2 with no test: for both entry points."""
    good = _write(tmp_path, "test_good.py", '''
        def test_pass():
            x, y = copy()
            assert (y == x).all()

        def test_overlap():
            copy(overlap=1)
    ''')
    bad = _write(tmp_path, "test_bad.py", '''
        def test_wrong():
            x, y = copy()
            assert (y == x + 1).all()
    ''')
    empty = tmp_path / "test_empty.py"
    empty.write_text("x = 1\n")
    for path, status in ((good, 0), (bad, 1), (empty, 2)):
        cli, plugin = _cli(path), _plugin(path, cwd=tmp_path)
        assert (cli.returncode, plugin.returncode) == (status, status), (path.name, cli.stdout, plugin.stdout[-3000:])
    assert "fusekit conformance" in plugin.stdout or plugin.returncode == 2


def test_a_documented_overlap_violation_is_a_sample_defect(tmp_path):
    """A dst partially overlapping its src (通用地址重叠约束) is the sample's defect, not a fusekit failure."""
    path = _write(tmp_path, "test_overlap.py", '''
        def test_overlap():
            copy(overlap=1)
    ''')
    out = _cli(path)
    row = _row(out.stdout, "test_overlap")
    assert "sample defect" in row and "partial-overlap" in row, row
    assert out.returncode == 0


# the KernelError kinds fusekit raises for a documented rule (README "Finding bugs"; each message cites its page)
DOCUMENTED = ["out-of-bounds", "misaligned", "unaligned-length", "mask-range", "partial-overlap", "ub-overflow",
              "leak", "double-free", "illegal-free", "foreign-tensor", "illegal-enque", "deadlock"]


@pytest.mark.parametrize("kind", DOCUMENTED)
def test_every_kind_of_documented_rule_violation_is_a_sample_defect(kind):
    """Each KernelError kind that is the kernel breaking a documented rule gives a sample-defect row."""
    result, reason = conformance.explain(KernelError("op", "the rule (page.md)", kind=kind))
    assert result == "sample defect" and reason.startswith(kind)


def test_a_kernel_error_that_is_no_documented_rule_is_a_failure():
    """A KernelError of another kind (or a plain API misuse) stays a fusekit failure."""
    for kind in ("api", "overflow", "ia-exception"):
        assert conformance.explain(KernelError("op", "something", kind=kind))[0] == "failed"


def test_cube_use_is_detected_per_test_not_per_file(tmp_path):
    """One test of a cube API fusekit does not simulate yet (a batch matmul) in a file does not hide the file's vector
    tests."""
    path = _write(tmp_path, "test_mixed.py", '''
        def make_matmul():
            return asc.adv.Matmul(a=None, b=None, c=None).iterate_batch()

        def test_vector():
            x, y = copy()
            assert (y == x).all()

        def test_matmul():
            make_matmul()

        SPARSE = lambda: asc.mmad_with_sparse

        def test_cube_sparse():
            SPARSE()

        def test_cube_never_reached():
            assert False, "fails before its matmul"
            make_matmul()
    ''')
    out = _cli(path)
    assert "passed" in _row(out.stdout, "test_vector") and "sanitizer: clean" in _row(out.stdout, "test_vector")
    cube = _row(out.stdout, "test_matmul")
    assert "not simulated (cube unit)" in cube and "iterate_batch" in cube
    cube = _row(out.stdout, "test_cube_sparse")  # found in the module-level value the test calls
    assert "not simulated (cube unit)" in cube and "mmad_with_sparse" in cube
    # found in the code, not by running it: a test that would fail before its cube call is not a failure
    assert "not simulated (cube unit)" in _row(out.stdout, "test_cube_never_reached")
    assert out.returncode == 0


def _raised(thunk) -> BaseException:
    with bridge.rebound(asc):
        try:
            thunk()
        except Exception as exc:  # noqa: BLE001 - the exception is what is checked
            return exc
    raise AssertionError("nothing raised")


def test_reason_names_an_adv_call_pyasc_lacks_by_its_full_name():
    """asc.adv.swiglu (not in pyasc 1.1.1) is named in full, without claiming pyasc has it."""
    result, reason = conformance.explain(_raised(lambda: __import__("asc").adv.swiglu))
    assert result == "unsupported" and "asc.adv.swiglu" in reason and "not in pyasc 1.1.1" in reason
    assert "pyasc has" not in reason


def test_reason_names_missing_methods_modules_and_host_values():
    """A missing method, submodule or imported host name is named as asc.<...>.<name>, not fusekit's module."""
    def method():
        __import__("asc").GlobalTensor().no_such_call

    def submodule():
        __import__("asc.no_such_module")

    def host_value():
        exec("from asc.lib.runtime import NoSuchHostValue", {})

    for thunk, name in ((method, "asc.GlobalTensor.no_such_call"), (submodule, "asc.no_such_module"),
                        (host_value, "asc.lib.runtime.NoSuchHostValue")):
        result, reason = conformance.explain(_raised(thunk))
        assert result == "unsupported" and name in reason and "fusekit.pyasc.shim" not in reason, reason


def test_a_tests_own_attribute_error_is_not_an_unsupported_api():
    """An AttributeError of an object that is not fusekit's stands for no pyasc API: an error row."""
    exc = _raised(lambda: object().no_such_attribute)
    assert conformance.explain(exc)[0] == "error"


def test_a_session_stopped_early_leaves_not_run_rows_and_fails(tmp_path):
    """A collected test the session never reached still has a row, ``not run``, and the status is 1."""
    path = _write(tmp_path, "test_stop.py", '''
        def test_first():
            assert False, "stop here"

        def test_second():
            copy()
    ''')
    out = _plugin("-x", path, cwd=tmp_path)
    assert "not run" in _row(out.stdout, "test_second") and out.returncode == 1
    assert conformance.exit_status([conformance.Row("f", "t", "not run")]) == 1


def test_the_cli_does_not_take_the_addopts_of_the_users_pytest_configuration(tmp_path):
    """A pytest.ini with ``addopts = -q`` (fusekit's own pyproject.toml has one) and $PYTEST_ADDOPTS do not
    reach the runner's session: its options are its own (README), so the table is printed, exit 0."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -q -rA --strict-config\n")
    _write(tmp_path, "test_plain.py", '''
        def test_pass():
            x, y = copy()
            assert (y == x).all()
    ''')
    env = {**{k: v for k, v in os.environ.items() if k != conformance.CHECKOUT_ENV}, "PYTEST_ADDOPTS": "-v --tb=long"}
    out = subprocess.run([sys.executable, "-m", "fusekit.cli", "conformance", str(tmp_path)], capture_output=True,
                         text=True, timeout=300, env=env, cwd=tmp_path)
    assert "unrecognized arguments" not in out.stderr, out.stderr
    assert "passed" in _row(out.stdout, "test_pass") and out.returncode == 0, (out.stdout, out.stderr)
    assert " PASSED" not in out.stdout and "short test summary" not in out.stdout  # -v / -rA would print these


def test_pytests_own_report_says_what_the_table_says(tmp_path):
    """Under ``pytest -p fusekit.pyasc_plugin`` a row that is no fusekit failure (sample defect, unsupported,
    cube unit; at collection too) is a skip with the row's reason in pytest's summary and in junit, with no
    traceback; a wrong result stays a failure. So pytest's counts and the table's agree."""
    _write(tmp_path, "test_rows.py", '''
        def test_pass():
            x, y = copy()
            assert (y == x).all()

        def test_wrong():
            x, y = copy()
            assert (y == x + 1).all(), "y is not x + 1"

        def test_overlap():
            copy(overlap=1)

        def test_newer_api():
            asc.adv.swiglu

        def test_cube_call():
            asc.mmad_with_sparse(None, None, None, None)
    ''')
    (tmp_path / "test_host_import.py").write_text("from asc.lib.runtime import NoSuchHostValue\n")
    junit = tmp_path / "junit.xml"
    out = _plugin("-rs", f"--junitxml={junit}", tmp_path, cwd=tmp_path)
    summary = out.stdout.strip().splitlines()[-1]
    assert re.search(r"\b1 failed, 1 passed, 4 skipped\b", summary) and "error" not in summary, out.stdout[-3000:]
    assert "partially overlaps" not in out.stdout.split("fusekit conformance: pyasc's tests")[0]  # no traceback
    skips = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
    for result in ("sample defect: partial-overlap", "unsupported: asc.adv.swiglu", "(cube unit)",
                   "unsupported: asc.lib.runtime.NoSuchHostValue"):
        assert any(result in line for line in skips), (result, skips)
    import xml.etree.ElementTree as ET
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("1", "0", "4"), suite.attrib
    assert out.returncode == 1  # the wrong result


def test_a_cube_unit_call_is_not_simulated_cube_unit_and_aipp_is_out_of_scope():
    """README: use of a cube API fusekit does not simulate yet is ``not simulated (cube unit)``, whether found in the
    test's code or by the call it makes (asc.mmad_with_sparse, asc.load_data_with_sparse, ...: every name
    fusekit.asc.coverage gives the cube-unit reason); AIPP stays ``out of scope``."""
    from fusekit.asc import coverage, names

    cube = [n for n in names.not_simulated() if coverage.reason(n) == coverage.CUBE]
    aipp = [n for n in names.not_simulated() if coverage.reason(n) == f"out of scope: {coverage.AIPP}"]
    assert "mmad_with_sparse" in cube and "load_data_with_sparse" in cube and "mmad" not in cube and aipp
    for name in cube:
        result, reason = conformance.explain(_raised(lambda: getattr(__import__("asc"), name)))
        assert (result, reason) == ("not simulated (cube unit)", f"uses asc.{name} (cube unit)"), name
    for name in aipp:
        assert conformance.explain(_raised(lambda: getattr(__import__("asc"), name)))[0] == "out of scope", name


def test_reasons_say_whether_pyasc_has_a_module_or_host_value():
    """A missing module or host value is named with whether pyasc 1.1.1 has it (its module tree,
    pyasc_modules.json): asc.runtime.launcher and asc.lib.runtime.CoreType it has, NoSuchHostValue not."""
    assert conformance.in_pyasc("asc.runtime.launcher") and conformance.in_pyasc("asc.lib.runtime.CoreType")
    assert conformance.in_pyasc("asc.language.fwk") and conformance.in_pyasc("asc.codegen")
    assert conformance.in_pyasc("asc.lib.runtime.NoSuchHostValue") is False
    assert conformance.in_pyasc("asc.runtime.no_such_module") is False

    def launcher():
        __import__("asc.runtime.launcher")

    def core_type():
        exec("from asc.lib.runtime.support import NoSuchEnum", {})

    result, reason = conformance.explain(_raised(launcher))
    assert result == "unsupported" and reason.startswith("pyasc 1.1.1 has asc.runtime.launcher"), reason
    result, reason = conformance.explain(_raised(core_type))
    assert result == "unsupported" and reason.startswith("asc.lib.runtime.support.NoSuchEnum: not in pyasc 1.1.1")


def test_the_stored_module_list_is_pyasc_1_1_1s():
    """pyasc_modules.json is what module_tree reads from pyasc 1.1.1's files (CI's pyasc job has it installed)."""
    import importlib.metadata
    import importlib.util
    import json

    data = json.loads(conformance.PYASC_MODULES_FILE.read_text())
    assert data["source"].startswith("pyasc 1.1.1:") and "asc.runtime.launcher" in data["modules"]
    try:
        version = importlib.metadata.version("pyasc")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pyasc is not installed")
    if version != "1.1.1":
        pytest.skip(f"pyasc {version} is installed, the list is 1.1.1's")
    spec = importlib.util.find_spec("asc")
    assert conformance.module_tree(list(spec.submodule_search_locations)[0]) == data["modules"]


def test_rows_are_the_same_every_run(tmp_path):
    """Each test's numpy, random and torch draws are seeded from its id: two runs give the same rows (and two
    tests different draws)."""
    _write(tmp_path, "test_draws.py", '''
        import random

        def draws():
            text = f"{np.random.rand():.17g} {random.random():.17g}"
            try:
                import torch
                text += f" {torch.rand(1).item():.17g}"
            except ModuleNotFoundError:
                pass
            return text

        def test_one():
            assert False, draws()

        def test_two():
            assert False, draws()
    ''')
    first, second = _cli(tmp_path), _cli(tmp_path)
    rows = [[_row(out.stdout, t) for t in ("test_one", "test_two")] for out in (first, second)]
    assert rows[0] == rows[1], rows
    assert rows[0][0].split("wrong result:")[1] != rows[0][1].split("wrong result:")[1]
