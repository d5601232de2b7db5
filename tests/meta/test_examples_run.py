"""Every script in examples/ runs as its docstring says (issue 24, "Documentation": an examples/ folder of
complete runnable scripts, each run by a test).

Each script runs as a user runs it, ``python examples/X.py ARGS`` in a fresh directory, and its output is
checked against an independent fact: numpy's float16 arithmetic for the article's kernel, the race a missing
``wait_flag(MTE2_V)`` leaves, a PNG file's signature, eager PyTorch for the compiled model, float32 rounding
bounds for the matmul. The C++ article (examples/article/fixed, as_written) is run by
tests/cpp/test_cpp_article.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, capture_output=True, text=True,
                       timeout=300, env={"PATH": str(Path(sys.executable).parent), "MPLBACKEND": "Agg",
                                         "HOME": str(cwd)})
    assert r.returncode == 0, f"{script} exited {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def test_the_article_operator_in_pyasc_is_bit_identical_to_numpy(tmp_path):
    out = run("article/fused_add_scale.py", "8192", cwd=tmp_path).stdout
    assert "8192 float16 elements on 8 cores: bit-identical to numpy's float16 model" in out


def test_the_article_operator_passes_fusekit_check(tmp_path):
    r = subprocess.run([str(Path(sys.executable).parent / "fusekit"), "check",
                        str(EXAMPLES / "article" / "fused_add_scale.py"), "--sizes", "2048,8192"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.count("no findings") == 2, r.stdout + r.stderr


def test_the_sanitizer_catches_the_missing_flag_and_passes_the_fixed_kernel(tmp_path):
    out = run("sanitizer_catch.py", cwd=tmp_path).stdout
    racy, synced = out.split("scale_synced on 2 core(s)")
    assert "[RAW]" in racy and "PIPE_MTE2 -> PIPE_V" in racy and "HardEvent.MTE2_V" in racy
    assert "sanitizer_catch.py:" in racy and "race replay" in racy  # the kernel's lines, and the wrong output
    assert synced.strip().startswith(": no findings")


def test_the_profile_compares_fused_with_unfused_and_draws_the_timeline(tmp_path):
    out = run("profile_plot.py", "32768", "p.png", cwd=tmp_path).stdout
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    m = re.search(r"fused ([\d.]+) us, unfused Add \+ Muls ([\d.]+) us: ([\d.]+)x; the launch head is (\d+)%", out)
    assert m, out
    fused, unfused, ratio, head = float(m[1]), float(m[2]), float(m[3]), int(m[4]) / 100
    # the unfused pair pays a second launch head and a GM round trip of x1 + x2: it costs more than the fused
    # kernel plus that second head
    assert unfused > fused * (1 + head * 0.9) and abs(ratio - unfused / fused) < 0.01


def test_the_generated_op_checks_sanitizes_and_writes_its_kernel(tmp_path):
    out = run("generated_op.py", "gen", cwd=tmp_path).stdout
    assert "vs fp32 model: PASS; vs exact: PASS" in out and "sanitizer: clean" in out
    assert "unfused chain" in out
    kernel = (tmp_path / "gen" / "kernel.py").read_text()
    assert "@asc.jit" in kernel and (tmp_path / "gen" / "op_info.json").is_file()


def test_the_torch_compile_model_matches_eager(tmp_path):
    pytest.importorskip("torch")
    out = run("torch_compile.py", "fusion.txt", cwd=tmp_path).stdout
    assert "(close)" in out and "fused group(s)" in out and (tmp_path / "fusion.txt").is_file()
    assert "silu" in out and "rsqrt" in out  # the SwiGLU gate and the RMSNorm were fused


def test_the_cube_matmul_accumulates_in_float32(tmp_path):
    out = run("cube/matmul.py", "128", "64", "128", cwd=tmp_path).stdout
    err = float(re.search(r"max \|error\| against float64 ([\d.e+-]+)", out)[1])
    # half products are exact in float32; 128 float32 additions of terms below 16 in magnitude stay under
    # 128 * 2^-24 * 128 * 16 = 0.016, where accumulating in half (2^-11) would be off by about 1
    assert err < 0.016 and "kernel time" in out


def test_every_example_script_is_run_by_a_test_here():
    """A new script in examples/ needs its test in this file (the C++ article's scripts run in its own test)."""
    source = Path(__file__).read_text(encoding="utf-8")
    scripts = [str(p.relative_to(EXAMPLES)) for p in sorted(EXAMPLES.rglob("*.py")) if "fixed" not in p.parts]
    assert [s for s in scripts if f'"{s}"' not in source] == []
