"""Issue 13, report: with pyasc installed (CI's second job) each fused group's report entry points at its generated
kernel file and a CANN custom-operator project traced by real pyasc."""

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
fusekit_torch = pytest.importorskip("fusekit.torch")

from fusekit.pyasc.bridge import PyascMissing, require_pyasc  # noqa: E402


def test_the_report_links_each_groups_kernel_and_cann_project(tmp_path):
    try:
        require_pyasc()
    except PyascMissing as exc:
        pytest.skip(str(exc))

    def f(x, b):
        return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (64,)) + b) * 2.0

    x, b = torch.randn(8, 64), torch.randn(64)
    report = tmp_path / "report.txt"
    y = fusekit_torch.compile(f, report=str(report), progress=False)(x, b)
    torch.testing.assert_close(y, f(x, b), rtol=1e-4, atol=1e-5)
    text = report.read_text()
    project = Path(text.split("CANN project: ")[1].split()[0])
    kernel = Path(text.split("kernel: ")[1].split()[0])
    assert kernel.is_file() and "@asc.jit" in kernel.read_text()
    assert (project / "op_info.json").is_file()
    cpp = list((project / "op_kernel").glob("*.cpp"))
    assert cpp and "__global__" in cpp[0].read_text()
    assert list((project / "op_host").glob("*_tiling.h"))
