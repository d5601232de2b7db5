"""What ``fusekit conformance`` does with bad paths, checkouts and variables, tracebacks, seeds, and how it
explains out-of-scope names and sample defects.

Regression: tester reports, issues 9 and 11 (split from test_tester_fixes_mask_conformance.py).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError
from fusekit.pyasc import conformance


def _cli(*args, env=None):
    import os
    e = {k: v for k, v in os.environ.items() if k != conformance.CHECKOUT_ENV}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "fusekit.cli", "conformance", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=e)


def test_missing_path_and_file_without_tests_are_one_line_rc_2(tmp_path):
    """Regression: tester report, issues 9 and 11."""
    out = _cli(tmp_path / "nope.py")
    assert out.returncode == 2 and "no such file" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    empty = tmp_path / "test_empty.py"
    empty.write_text("x = 1\n")
    out = _cli(empty)
    assert out.returncode == 2 and "no tests found" in out.stderr


def test_no_checkout_and_a_bad_variable_are_errors(tmp_path):
    """Regression: tester report, issues 9 and 11."""
    out = _cli()
    assert out.returncode == 2 and conformance.CHECKOUT_ENV in out.stderr
    out = _cli(env={conformance.CHECKOUT_ENV: str(tmp_path)})
    assert out.returncode == 2 and "not a pyasc checkout" in out.stderr
    with pytest.raises(ValueError, match="not a pyasc checkout"):
        conformance.find_checkout(tmp_path)


def _fake_suite(tmp_path):
    """A pyasc-like test file of our own: a passing kernel, a failing one, an unseeded random draw."""
    (tmp_path / "test_fake.py").write_text(textwrap.dedent('''
        import numpy as np
        import asc

        @asc.jit
        def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
            pipe = asc.TPipe()
            buf = asc.TBuf(asc.TPosition.VECCALC)
            pipe.init_buffer(buf=buf, num=256)
            xg = asc.GlobalTensor(); xg.set_global_buffer(x, 64)
            yg = asc.GlobalTensor(); yg.set_global_buffer(y, 64)
            t = buf.get(asc.float32)
            asc.data_copy(t, xg, 64)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(yg, t, 64)

        def test_pass():
            x = np.arange(64, dtype=np.float32); y = np.zeros(64, np.float32)
            k[1](x, y)
            assert (y == x).all()

        def test_fail():
            assert False, "boom" + "\\n" * 50

        def test_random():
            print("DRAW", np.random.rand())
    '''))
    return tmp_path / "test_fake.py"


def test_table_without_tracebacks_exit_status_and_no_sanitize(tmp_path):
    """Regression: tester report, issues 9 and 11."""
    path = _fake_suite(tmp_path)
    out = _cli(path)
    assert "fusekit conformance" in out.stdout and "Traceback" not in out.stdout and "boom\n\n" not in out.stdout
    assert "_ test_fail _" not in out.stdout  # pytest's FAILURES section
    assert "--verbose" in out.stdout
    assert out.returncode == 1  # test_fail is a "failed" row
    line = next(x for x in out.stdout.splitlines() if "test_pass" in x)
    assert "passed" in line and "sanitizer: clean" in line
    out = _cli(path, "--no-sanitize")
    line = next(x for x in out.stdout.splitlines() if "test_pass" in x)
    assert "sanitizer: not run (--no-sanitize)" in line
    out = _cli(str(path) + "::test_pass")
    assert out.returncode == 0, out.stdout[-2000:]


def test_runs_are_seeded_per_test(tmp_path):
    """Regression: tester report, issues 9 and 11."""
    path = _fake_suite(tmp_path)
    draws = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider", "-q", "-s",
             str(path) + "::test_random"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        draws.append(next(x for x in out.stdout.splitlines() if "DRAW" in x))
    assert draws[0] == draws[1]


def test_aipp_is_out_of_scope_with_its_reason():
    """Regression: tester report, issues 9 and 11."""
    try:
        asc.set_aipp_functions
    except AttributeError as exc:
        result, reason = conformance.explain(exc)
    assert result == "out of scope" and "AIPP" in reason and "does not simulate it yet" not in reason


def test_mask_range_kernel_error_is_a_sample_defect():
    """Regression: tester report, issues 9 and 11."""
    exc = KernelError("add", "bit mask ... maskHigh must be 0", kind="mask-range")
    result, reason = conformance.explain(exc)
    assert result == "sample defect" and "maskHigh" in reason
