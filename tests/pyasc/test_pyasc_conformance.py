"""Issue 11 item 4: pyasc's own tests, unmodified, on fusekit (``fusekit conformance``).

Runs files of the user's pyasc checkout (github hicann/pyasc; found through
$FUSEKIT_PYASC_CHECKOUT only): skipped when it is not set. Expected
results are what each file does, read from its source: tutorial 01_add and the LocalTensorAuto vadd
compute x + y and must pass with a clean sanitizer; generalization/basic/test_vadd.py's 1000-element
float32 case reads 512-element tiles past the 1000 elements (16 cores x 63 elements, tile 512): a
sample defect; kernels/test_matmul.py (the high-level Matmul in a mix kernel) passes, and the sanitizer reports the
duplicate writes of its 32 AIVs computing 16 tiles (its block_idx % tiles assigns each tile to two AIVs).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from fusekit.pyasc import conformance

ROOT = conformance.find_checkout()
pytestmark = pytest.mark.skipif(ROOT is None, reason="no pyasc checkout (set FUSEKIT_PYASC_CHECKOUT)")


def _run(*files):
    out = subprocess.run([sys.executable, "-m", "fusekit.cli", "conformance", *(str(ROOT / f) for f in files)],
                         capture_output=True, text=True, timeout=600)
    rows = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].startswith(("python/", "tutorials/", "test/")) or "/python/" in line[:80]:
            rows.setdefault(parts[0].rsplit("python/", 1)[-1], []).append(line)
    return out, rows


def test_suite_sample():
    files = ["python/tutorials/01_add/add.py", "python/test/kernels/insert_sync/test_vadd.py",
             "python/test/kernels/test_matmul.py", "python/test/generalization/basic/test_vadd.py",
             "python/test/generalization/basic/test_axpy.py",
             "python/test/generalization/basic/test_trans_5hd_addr_tensor.py"]
    out, rows = _run(*files)
    text = out.stdout
    assert "fusekit conformance" in text, out.stderr[-2000:]
    assert any("01_add/add.py" in k and "passed" in v[0] and "sanitizer: clean" in v[0] for k, v in rows.items()), text
    auto = [v for k, v in rows.items() if k.endswith("insert_sync/test_vadd.py")]
    assert auto and "passed" in auto[0][0] and "sanitizer: clean" in auto[0][0], text
    matmul = [v[0] for k, v in rows.items() if k.endswith("kernels/test_matmul.py")]
    assert matmul and "passed" in matmul[0] and "overlapping block write" in matmul[0], text
    vadd = [line for k, v in rows.items() if k.endswith("generalization/basic/test_vadd.py") for line in v]
    first = next(line for line in vadd if "dtype0-size0" in line)
    assert "sample defect" in first and "out-of-bounds" in first, first
    # axpy re-enqueues the tensor it dequeued: legal (EnQue takes OCCUPIED or DEQUE buffers, asc-devkit
    # kernel_tquebind_impl.h); trans_data_to_5hd's address-tensor form against the file's own reference
    for name in ("basic/test_axpy.py", "basic/test_trans_5hd_addr_tensor.py"):
        got = [line for k, v in rows.items() if k.endswith(name) for line in v]
        assert got and all("passed" in line and "sanitizer: clean" in line for line in got), text


def test_explain_a_kernel_error_naming_a_missing_method_is_unsupported():
    from fusekit.asc.runtime import KernelError
    exc = KernelError("alloc_tensor", "pyasc has asc.TBuf.alloc_tensor; fusekit does not simulate it yet", kind="api")
    assert conformance.explain(exc) == ("unsupported", "pyasc has asc.TBuf.alloc_tensor; fusekit does not simulate it "
                                                       "yet")


def test_explain_names_the_missing_api():
    from fusekit import asc
    try:
        asc.set_aipp_functions
    except AttributeError as exc:
        result, reason = conformance.explain(exc)
    assert result == "out of scope" and "asc.set_aipp_functions" in reason
