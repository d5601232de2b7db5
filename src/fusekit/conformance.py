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
import sys
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT_ENV = "FUSEKIT_PYASC_CHECKOUT"
SUITE = ("python/tutorials", "python/test/kernels", "python/test/generalization")
# names of pyasc APIs of the cube unit (matmul, L0/L1 buffers, AIC cores): such a test is "not simulated (cube unit)"
CUBE = re.compile(r"\b(Matmul\w*|matmul\w*|CubeFormat|ascend_is_aic|TOTAL_L0C_SIZE|TOTAL_L1_SIZE|"
                  r"MultiCoreMatmulTiling)\b")


# KernelError kinds that are the sample breaking a documented rule the NPU does not check (it reads
# past a buffer its allocator padded, or rounds a copy length down): a sample defect, not a fusekit failure
SAMPLE_DEFECTS = frozenset({"unaligned-length", "mask-range"})  # mask-range: bit mask past the lanes (掩码.md)
# fusekit classes standing for pyasc's: a method they lack is an API fusekit does not simulate
_ASC_CLASSES = frozenset({"GlobalTensor", "LocalTensor", "TPipe", "TQue", "TBuf", "TQueBind", "TBufPool"})


@dataclass
class Row:
    """One line of the conformance table."""

    file: str
    test: str
    result: str           # passed / failed / sample defect / unsupported / out of scope / not simulated (cube unit) / error
    reason: str = ""
    sanitized: bool = True  # False under --no-sanitize: the table says the sanitizer did not run
    sanitizer: list[str] = field(default_factory=list)   # findings of the launches the test made


def find_checkout(given: "str | os.PathLike | None" = None) -> Path | None:
    """The root of the user's pyasc checkout (the folder holding ``python/test``): ``given``, else
    ``$FUSEKIT_PYASC_CHECKOUT``; None when neither is set. There is no other fallback.

    Raises:
        ValueError: the path given (or the variable's value) is not a pyasc checkout.
    """
    for candidate, what in ((given, "the path given"), (os.environ.get(CHECKOUT_ENV), f"${CHECKOUT_ENV}")):
        if candidate:
            if not (Path(candidate) / "python" / "test").is_dir():
                raise ValueError(f"{what} ({candidate}) is not a pyasc checkout: it has no python/test folder "
                                 "(git clone https://github.com/hicann/pyasc)")
            return Path(candidate)
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
    scope = re.search(r"pyasc has (asc[\w.]*)[^(]*\(out of scope: (.*)\)$", text)
    if scope:  # e.g. AIPP: a decision with its reason, not a gap to be filled
        return "out of scope", f"pyasc has {scope.group(1)}; out of scope: {scope.group(2)}"
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
        if r.result == "passed" and not r.sanitized:
            note = "sanitizer: not run (--no-sanitize)"
        elif r.result == "passed":
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


def run(paths: list[str], sanitize: bool = True, extra: "list[str] | None" = None, verbose: bool = False) -> int:
    """``fusekit conformance PATH...``: run pyasc's tests under ``paths`` (default: the suite of the
    checkout in ``$FUSEKIT_PYASC_CHECKOUT``) in a pytest session with :mod:`fusekit.pyasc_plugin`; the
    table is printed at the end (pytest's tracebacks only with ``verbose``).

    Returns:
        0 when no row is "failed" or "error" (sample defects, unsupported, out-of-scope and cube-unit
        rows are not fusekit failures), 1 when some row is, 2 for a path that does not exist, no
        checkout, or paths holding no test.
    """
    import pytest

    from fusekit import pyasc_plugin

    if not paths:
        try:
            root = find_checkout()
        except ValueError as exc:
            print(f"fusekit conformance: {exc}", file=sys.stderr)
            return 2
        if root is None:
            print(f"fusekit conformance: no pyasc checkout: give test files or folders of it, or set {CHECKOUT_ENV} "
                  "(git clone https://github.com/hicann/pyasc)", file=sys.stderr)
            return 2
        paths = [str(root / p) for p in SUITE if (root / p).exists()]
    files = [Path(str(p).split("::")[0]) for p in paths]  # PATH::test selects one test, as in pytest
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        print(f"fusekit conformance: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    folders = [str(f.resolve() if f.is_dir() else f.resolve().parent) for f in files]
    quiet = [] if verbose else ["--tb=no", "-rN", "--no-header"]
    args = ["-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider", "-q", *quiet, "--rootdir",
            os.path.commonpath(folders), *paths, *(extra or [])]
    if not sanitize:
        args.append("--fusekit-no-sanitize")
    status = int(pytest.main(args))
    rows = pyasc_plugin.rows()
    if not rows or status == pytest.ExitCode.NO_TESTS_COLLECTED:
        print(f"fusekit conformance: no tests found in {', '.join(paths)}", file=sys.stderr)
        return 2
    if not verbose:
        print("(pytest's tracebacks: fusekit conformance --verbose PATH...)")
    return 1 if any(r.result in ("failed", "error", "") for r in rows) else 0
