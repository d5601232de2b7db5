"""Whole .asc programs: main runs natively in a child process, its launches on the simulator, its ACL calls on
fusekit's device memory; faults of the host program are reported, never taken into the Python process."""

import numpy as np
import pytest
from cpp_paths import SOURCES

from fusekit.cpp import CompileError
from fusekit.cpp.program import ProgramError, compile_program, run_program

PROGRAM = SOURCES / "scale_program.asc"


def line_of(code: str) -> int:
    """The line of the program's source that holds ``code``."""
    return next(k for k, line in enumerate(PROGRAM.read_text().splitlines(), 1) if code in line)


@pytest.fixture
def build(tmp_path, rng):
    """A build/ folder as the examples run from, with the program's input."""
    (tmp_path / "input").mkdir()
    (tmp_path / "output").mkdir()
    x = rng.uniform(-8, 8, 8 * 1024).astype(np.float32)
    x.tofile(tmp_path / "input" / "x.bin")
    return tmp_path, x


def test_program_runs_its_template_kernel_and_writes_its_output(build, capfd):
    folder, x = build
    result = run_program(PROGRAM, cwd=folder)
    assert result.ok and result.status == 0 and result.error is None
    [launch] = result.launches
    assert launch.kernel == "scale_kernel<256>" and launch.blocks == 8 and launch.site.endswith(
        f"scale_program.asc:{line_of('(xDevice, yDevice, n, 3.0f)')}")
    y = np.fromfile(folder / "output" / "y.bin", np.float32)
    assert np.array_equal(y, x * np.float32(3))  # one float32 multiply: exact in numpy's float32 as on the NPU
    assert "host: done" in capfd.readouterr().out


def test_sanitize_mode_reports_the_race_with_its_line(build):
    folder, _ = build
    result = run_program(PROGRAM, defines={"FAULT": "3"}, mode="sanitize", cwd=folder)
    report = result.launches[0].report
    assert not result.ok and not report.ok
    assert any("scale_program.asc" in loc for f in report.findings for loc in f.locations)


def test_profile_mode_keeps_the_traces(build):
    from fusekit.timing import predict

    folder, _ = build
    result = run_program(PROGRAM, mode="profile", cwd=folder)
    assert predict([l.trace for l in result.launches]).kernel_time_us > 0


def test_a_host_pointer_given_to_a_kernel_is_an_error_naming_the_launch(build):
    folder, _ = build
    result = run_program(PROGRAM, defines={"FAULT": "1"}, cwd=folder)
    assert result.status is None and "not device memory from aclrtMalloc" in result.error
    assert f"scale_program.asc:{line_of('((uint8_t*)xHost')}" in result.error


def test_a_crash_in_host_code_leaves_python_running(build):
    folder, _ = build
    result = run_program(PROGRAM, defines={"FAULT": "2"}, cwd=folder)
    assert result.status is None and "crashed (SIGSEGV)" in result.error and not result.launches


def test_main_returning_non_zero(build):
    folder, _ = build
    result = run_program(PROGRAM, defines={"FAULT": "4"}, cwd=folder, quiet=True)
    assert result.status == 3 and not result.ok and "host: done" in result.output


def test_acl_misuse_returns_the_error_code_and_says_why(tmp_path):
    source = tmp_path / "bad_copy.asc"
    source.write_text('#include "acl/acl.h"\n#include <cstdio>\nint main() {\n    void* d = nullptr; char h[64];\n'
                      "    aclrtMalloc(&d, 32, ACL_MEM_MALLOC_HUGE_FIRST);\n"
                      "    int a = aclrtMemcpy(d, 32, h, 64, ACL_MEMCPY_HOST_TO_DEVICE);\n"
                      "    int b = aclrtMemcpy(h, 64, d, 32, ACL_MEMCPY_HOST_TO_DEVICE);\n"
                      '    std::printf("%d %d\\n", a, b);\n    return 0;\n}\n')
    result = run_program(source, cwd=tmp_path, quiet=True)
    assert result.status == 0 and "100000 100000" in result.output and result.acl_failures == 2 and not result.ok
    assert "count 64 is more than destMax 32" in result.output and "bad_copy.asc:6" in result.output
    assert "is not device memory from aclrtMalloc but the kind (ACL_MEMCPY_HOST_TO_DEVICE)" in result.output


def test_a_file_without_main_or_not_ascend_c(tmp_path):
    with pytest.raises(ProgramError, match="has no main"):
        compile_program(SOURCES / "fused_add_scale.cpp")
    text = tmp_path / "notes.asc"
    text.write_text("This is not C++ at all.\n")
    with pytest.raises(CompileError, match="notes.asc:1:"):
        compile_program(text)


def test_a_launch_with_other_arguments_than_the_kernels_fails_at_its_line(tmp_path):
    source = tmp_path / "argc.asc"
    source.write_text('#include "acl/acl.h"\n#include "kernel_operator.h"\n'
                      "__global__ __aicore__ void k(GM_ADDR x, uint32_t n) {}\n"
                      "int main() {\n    k<<<1, nullptr, nullptr>>>(nullptr);\n    return 0;\n}\n")
    with pytest.raises(CompileError) as caught:
        compile_program(source)
    first, hint = str(caught.value).splitlines()[:2]
    assert first.startswith(f"{source}:5:") and "other arguments than the kernel's parameters" in hint


def test_a_launch_on_freed_device_memory_is_named_a_use_after_free(tmp_path):
    source = tmp_path / "freed.asc"
    source.write_text('#include "acl/acl.h"\n#include "kernel_operator.h"\n'
                      "__global__ __aicore__ void k(GM_ADDR x) {}\n"
                      "int main() {\n    void* d = nullptr;\n    aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST);\n"
                      "    aclrtFree(d);\n    k<<<1, nullptr, nullptr>>>((GM_ADDR)d);\n    return 0;\n}\n")
    result = run_program(source, cwd=tmp_path, quiet=True)
    assert "use after free" in result.error and "freed.asc:8" in result.error
