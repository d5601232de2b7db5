"""Run Huawei's pyasc test suite and tutorials, unmodified, on fusekit's simulator.

``fusekit conformance PATH...`` (or ``pytest -p fusekit.pyasc_plugin PATH...``) collects the tests
of a pyasc checkout (github hicann/pyasc: ``python/test/kernels``, ``python/test/generalization``,
``python/tutorials``) with ``import asc`` bound to fusekit (:mod:`fusekit.bridge`, host modules from
:mod:`fusekit.pyasc_shim`), runs each with its own inputs and references, runs the sanitizer on every
kernel launch, and prints one row per test: file, test, result, reason. Nothing of pyasc's is part
of fusekit; the user points at their checkout.

Adaptations, each the minimum that lets a test run without an NPU (both are said in the table):
- a test parametrised with ``config.Backend.NPU`` runs with ``Backend.Model`` (its tensors then live
  on the CPU, as the simulator needs; inputs and references are unchanged);
- a tutorial (``python/tutorials/*/*.py``) runs as ``python FILE`` does, with its default arguments.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT_ENV = "FUSEKIT_PYASC_CHECKOUT"
MIRROR = Path("/work/.mirror/hicann+pyasc/repo")
SUITE = ("python/tutorials", "python/test/kernels", "python/test/generalization")
# names of pyasc APIs of the cube unit (matmul, L0/L1 buffers, AIC cores): such a test is "not simulated (cube unit)"
CUBE = re.compile(r"\b(Matmul\w*|matmul\w*|CubeFormat|ascend_is_aic|TOTAL_L0C_SIZE|TOTAL_L1_SIZE|"
                  r"MultiCoreMatmulTiling)\b")


# KernelError kinds that are the sample breaking a documented rule the NPU does not check (it reads
# past a buffer its allocator padded, or rounds a copy length down): a sample defect, not a fusekit failure
SAMPLE_DEFECTS = frozenset({"unaligned-length"})
# fusekit classes standing for pyasc's: a method they lack is an API fusekit does not simulate
_ASC_CLASSES = frozenset({"GlobalTensor", "LocalTensor", "TPipe", "TQue", "TBuf", "TQueBind", "TBufPool"})


@dataclass
class Row:
    """One line of the conformance table."""

    file: str
    test: str
    result: str           # passed / failed / sample defect / unsupported / not simulated (cube unit) / error
    reason: str = ""
    sanitizer: list[str] = field(default_factory=list)   # findings of the launches the test made


def find_checkout(given: "str | os.PathLike | None" = None) -> Path | None:
    """The root of a pyasc checkout (the folder holding ``python/test``): ``given``, else
    ``$FUSEKIT_PYASC_CHECKOUT``, else ``/tmp/pyasc_src``, else a ``git archive`` of the mirror
    ``/work/.mirror/hicann+pyasc/repo`` extracted to a temporary folder. None if none is found."""
    for candidate in (given, os.environ.get(CHECKOUT_ENV), "/tmp/pyasc_src"):
        if candidate and (Path(candidate) / "python" / "test").is_dir():
            return Path(candidate)
    if (MIRROR / "HEAD").exists():
        out = Path(tempfile.mkdtemp(prefix="fusekit_pyasc_"))
        archive = subprocess.run(["git", f"--git-dir={MIRROR}", "archive", "HEAD", *SUITE],
                                 capture_output=True, check=False)
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
            return out
    return None


def needs_cube(path: "str | Path") -> bool:
    """Whether a test file uses the cube unit (matmul and its tiling), which fusekit does not simulate."""
    try:
        return bool(CUBE.search(Path(path).read_text(encoding="utf-8")))
    except OSError:
        return False


def explain(exc: BaseException) -> tuple[str, str]:
    """(result, reason) for a test that raised ``exc``."""
    from fusekit.asc.runtime import ACCESS_FAULTS, KernelError
    from fusekit.pyasc_shim.host import CubeUnitNotSimulated

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, CubeUnitNotSimulated) or (isinstance(exc, AttributeError) and "cube unit" in text):
        return "not simulated (cube unit)", text
    if isinstance(exc, AttributeError) and text.startswith("pyasc has asc."):
        return "unsupported", text.split(" (")[0]
    missing = re.search(r"(asc(?:\.\w+)*)\.(\w+)[^\n]*(?:not|no attribute|has no)", text) or \
        re.search(r"module '(asc[\w.]*)' has no attribute '(\w+)'", text)
    method = re.search(r"'(\w+)' object has no attribute '(\w+)'", text)
    if isinstance(exc, AttributeError) and method and method.group(1) in _ASC_CLASSES:
        return "unsupported", f"pyasc has asc.{method.group(1)}.{method.group(2)}; fusekit does not simulate it yet"
    if isinstance(exc, AttributeError) and missing:
        return "unsupported", f"pyasc has {missing.group(1)}.{missing.group(2)}; fusekit does not simulate it yet"
    if isinstance(exc, KernelError) and "pyasc has asc." in text:  # a method fusekit lacks, met inside a kernel
        found = re.search(r"pyasc has (asc[\w.]*)", text)
        return "unsupported", f"pyasc has {found.group(1)}; fusekit does not simulate it yet"
    if isinstance(exc, KernelError) and (exc.kind in ACCESS_FAULTS or exc.kind in SAMPLE_DEFECTS):
        return "sample defect", f"{exc.kind}: {text}"
    if isinstance(exc, KernelError):
        return "failed", f"kernel error ({exc.kind}): {text}"
    if isinstance(exc, AssertionError):
        return "failed", f"wrong result: {text[:200]}"
    return "error", f"{type(exc).__name__}: {text[:200]}"


def table(rows: list[Row], root: "Path | None" = None) -> str:
    """The rows as a fixed-width text table (file relative to ``root``)."""
    def rel(path: str) -> str:
        try:
            return str(Path(path).resolve().relative_to(root.resolve())) if root else path
        except ValueError:
            return path

    lines = [("file", "test", "result", "reason / sanitizer")]
    for r in rows:
        note = r.reason
        if r.result == "passed":
            note = "sanitizer: clean" if not r.sanitizer else "sanitizer: " + "; ".join(r.sanitizer)
        elif any("could not run" not in f for f in r.sanitizer):  # a failed test's own error is already the reason
            note += " | sanitizer: " + "; ".join(f for f in r.sanitizer if "could not run" not in f)
        lines.append((rel(r.file), r.test, r.result, note))
    w = [max(len(line[i]) for line in lines) for i in range(3)]
    out = [f"{a:<{w[0]}}  {b:<{w[1]}}  {c:<{w[2]}}  {d}" for a, b, c, d in lines]
    counts = {}
    for r in rows:
        counts[r.result] = counts.get(r.result, 0) + 1
    out.append("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(out)


def run(paths: list[str], sanitize: bool = True, extra: "list[str] | None" = None) -> int:
    """``fusekit conformance PATH...``: run pyasc's tests under ``paths`` (default: the suite of the
    checkout :func:`find_checkout` finds) in a pytest session with :mod:`fusekit.pyasc_plugin`; the
    table is printed at the end. Returns pytest's exit status (0: every collected test passed or was
    skipped with its reason)."""
    import pytest

    if not paths:
        root = find_checkout()
        if root is None:
            print(f"no pyasc checkout found: give its path, or set {CHECKOUT_ENV} (git clone "
                  "https://github.com/hicann/pyasc)", file=sys.stderr)
            return 2
        paths = [str(root / p) for p in SUITE if (root / p).exists()]
    folders = [str(Path(p).resolve() if Path(p).is_dir() else Path(p).resolve().parent) for p in paths]
    args = ["-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider", "-q", "--rootdir", os.path.commonpath(folders),
            *paths, *(extra or [])]
    if not sanitize:
        args.append("--fusekit-no-sanitize")
    return int(pytest.main(args))
