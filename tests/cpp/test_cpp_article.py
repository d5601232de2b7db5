"""The article's FusedAddScale (seed article sections 4.3-4.5) in examples/article: as written, each defect is
reported with its line and fix; corrected, it runs bit-exact through the article's own tiling function."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from cpp_paths import EXAMPLES

from fusekit.cpp import CompileError
from fusekit.cpp.program import compile_program, run_program

ARTICLE = EXAMPLES / "article"


def _line(path, code: str) -> int:
    return next(k for k, line in enumerate(path.read_text().splitlines(), 1) if code in line)


def test_as_written_compile_errors_name_each_line_and_fix():
    with pytest.raises(CompileError) as caught:
        compile_program(ARTICLE / "as_written" / "main.asc")
    text = str(caught.value)
    kernel, tiling, main = (ARTICLE / "as_written" / f for f in ("fused_add_scale_kernel.cpp",
                                                                 "fused_add_scale_tiling.cpp", "main.asc"))
    expected = [
        (kernel, "pipe.SyncIO();", "TPipe has no SyncIO or SyncCompute: the queues order the stages"),
        (kernel, "pipe.SyncCompute();", "TPipe has no SyncIO or SyncCompute"),
        (main, "aclrtlaunchOp(", "aclrtlaunchOp is not an ACL call: launch the kernel with KERNEL<<<blockDim"),
        (tiling, "shape->GetDimNum()", "gives a gert::StorageShape"),
        (tiling, "context->GetCoreNum()", "GetCoreNumAiv()"),
        (tiling, "context->GetTilingData()", "GetTilingData<T>() takes the tiling struct"),
    ]
    for path, code, hint in expected:
        at = f"{path}:{_line(path, code)}:"
        assert at in text, f"no error at {at} ({code})"
        after = text[text.index(at):]
        assert hint in after.split("\n", 2)[1], f"{code}: no hint {hint!r}"


@pytest.fixture
def fixed(tmp_path):
    """A copy of the corrected example with its build/ folder and inputs (gen_data.py), as its README runs it."""
    folder = tmp_path / "fixed"
    shutil.copytree(ARTICLE / "fixed", folder, ignore=shutil.ignore_patterns("build"))
    (folder / "build").mkdir()
    subprocess.run([sys.executable, "../gen_data.py", "65536"], cwd=folder / "build", check=True)
    return folder


def _run(folder, mode="run"):
    return run_program(folder / "main.asc", defines={"LENGTH": "65536"}, mode=mode, cwd=folder / "build", quiet=True)


def test_fixed_runs_bit_exact_and_clean(fixed):
    result = _run(fixed, "sanitize")
    assert result.ok, result.output
    assert [l.blocks for l in result.launches] == [48]
    verify = subprocess.run([sys.executable, "../verify.py"], cwd=fixed / "build", capture_output=True, text=True)
    assert verify.returncode == 0 and "bit-exact" in verify.stdout, verify.stdout + verify.stderr


@pytest.mark.parametrize("file, fixed_code, article_code, expect", [
    # the article's Add writes its destination first: x1Local gets the sum, yLocal is read uninitialised
    ("fused_add_scale_kernel.cpp", "Add(yLocal, x1Local, x2Local, length);", "Add(x1Local, x2Local, yLocal, length);",
     "that nothing wrote (fresh UB holds garbage, NaN here): check the operand order (destination first)"),
    # the article's pitfall 6.4: Muls with its scalar and source swapped
    ("fused_add_scale_kernel.cpp", "Muls(yLocal, yLocal, (half)scale, length);",
     "Muls(yLocal, (half)scale, yLocal, length);", "the source tensor comes second, the scalar third"),
    # the article's tiling puts a whole block in one tile: 3 queues x BUFFER_NUM x blockLength overflow UB
    ("fused_add_scale_tiling.cpp", "blockLength < maxTile ? blockLength : maxTile", "blockLength",
     "of UB asked but only"),
])
def test_each_runtime_defect_of_the_article_is_reported_at_its_line(fixed, file, fixed_code, article_code, expect):
    path = fixed / file
    path.write_text(path.read_text().replace(fixed_code, article_code))
    if file.endswith("tiling.cpp"):  # a large input: 2^22 / 48 cores = 87382 halves a core, x 2 x 3 > 192 KiB
        subprocess.run([sys.executable, "../gen_data.py", str(1 << 22)], cwd=fixed / "build", check=True)
        result = run_program(fixed / "main.asc", defines={"LENGTH": str(1 << 22)}, cwd=fixed / "build", quiet=True)
    else:
        result = _run(fixed, "sanitize")
    text = result.error or "\n".join(f.message + " " + " ".join(f.locations) for l in result.launches
                                     for f in l.report.findings)
    assert expect in text, text
    kernel = fixed / "fused_add_scale_kernel.cpp"
    code = article_code if file.endswith("kernel.cpp") else "pipe.InitBuffer(inQueueX1"  # the first to overflow
    assert f"fused_add_scale_kernel.cpp:{_line(kernel, code)}" in text, text


def test_fixed_profile_reproduces_the_shipped_operators(fixed):
    from fusekit.ops import fused_add_scale
    from fusekit.timing import predict

    n = 1 << 20
    subprocess.run([sys.executable, "../gen_data.py", str(n)], cwd=fixed / "build", check=True)
    result = run_program(fixed / "main.asc", defines={"LENGTH": str(n)}, mode="profile", cwd=fixed / "build",
                         quiet=True)
    article = predict([l.trace for l in result.launches])
    x1, x2 = (np.zeros(n, np.float16) for _ in range(2))
    shipped = predict([l.trace for l in fused_add_scale.run(x1, x2, 1.5).launches])
    assert article.gm_bytes == shipped.gm_bytes  # the same traffic: 2 reads and 1 write of 2 MiB
    assert abs(article.kernel_time_us / shipped.kernel_time_us - 1) < 0.1  # tilings differ a little
