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

import ast
import functools
import inspect
import os
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT_ENV = "FUSEKIT_PYASC_CHECKOUT"
SUITE = ("python/tutorials", "python/test/kernels", "python/test/generalization")
# names of pyasc APIs of the cube unit (matmul, L0/L1 buffers, AIC cores): such a test is "not simulated (cube unit)"
CUBE = re.compile(r"\b(Matmul\w*|matmul\w*|CubeFormat|ascend_is_aic|TOTAL_L0C_SIZE|TOTAL_L1_SIZE|"
                  r"MultiCoreMatmulTiling)\b")


# KernelError kinds that are the kernel breaking a documented rule of the hardware or of the Ascend C
# API (the page is in the message): a sample defect, not a fusekit failure. The NPU does not check most
# of them (it reads past a buffer its allocator padded, rounds a copy length down, computes an
# overlapping dst/src in some order), so a sample that passes on the device can still break one.
SAMPLE_DEFECTS = frozenset({
    "out-of-bounds", "misaligned",          # GM/UB access outside the tensor, address alignment (ACCESS_FAULTS)
    "unaligned-length",                     # DataCopy length not a multiple of 32 B (DataCopy.md)
    "mask-range",                           # bit mask past the lanes (掩码.md)
    "partial-overlap",                      # dst/src overlap an API's 约束说明 forbids (通用地址重叠约束)
    "ub-overflow",                          # buffers past the SoC's UB size (TPipe InitBuffer)
    "leak", "double-free", "illegal-free", "foreign-tensor", "illegal-enque",  # TQue/TBuf life cycle rules
    "deadlock",                             # a wait_flag no set_flag answers: the core hangs
})
FAILURES = frozenset({"failed", "error", "not run"})  # not run: collected, never reported (the session stopped)


@dataclass
class Row:
    """One line of the conformance table."""

    file: str
    test: str
    result: str           # passed / failed / sample defect / unsupported / out of scope / not simulated (cube unit)
    #                       / skipped / xfailed / error / not run
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


def needs_cube(path: "str | Path") -> "str | None":
    """The first cube-unit API name (matmul and its tiling, :data:`CUBE`) a file (a tutorial: the file
    is its one test) names, or None; fusekit does not simulate the cube unit."""
    try:
        found = CUBE.search(Path(path).read_text(encoding="utf-8"))
    except OSError:
        return None
    return found.group(0) if found else None


def exit_status(rows: "list[Row]") -> int:
    """The exit status of a conformance run, the same for ``fusekit conformance`` and ``pytest -p
    fusekit.pyasc_plugin``: 0 when no row is a fusekit failure (``failed``, ``error``), 1 when one
    is, 2 when there is no row (no test collected)."""
    if not rows:
        return 2
    return 1 if any(r.result in FAILURES for r in rows) else 0


def _asc_owner(obj) -> "str | None":
    """The dotted ``asc`` name under which ``obj`` (a module or an instance) stands for pyasc's, or
    None when it is not one of fusekit's stand-ins (an AttributeError of the test's own objects)."""
    import types

    if isinstance(obj, types.ModuleType):
        return _asc_module(obj.__name__)
    cls = type(obj)
    if cls.__module__.startswith(("fusekit.asc", "fusekit.pyasc_shim")):
        return f"asc.{cls.__name__}"
    return None


def _asc_module(name: str) -> "str | None":
    """``asc.X`` for a module name that is one (``asc.runtime.jit``) or stands for one under
    :mod:`fusekit.bridge` (``fusekit.pyasc_shim.lib_runtime`` -> ``asc.lib.runtime``)."""
    from fusekit import pyasc_shim

    if name == "asc" or name.startswith("asc."):
        return name
    bound = [key for key, mod in pyasc_shim.modules().items() if mod.__name__ == name]
    if bound:
        return min(bound, key=len)
    return "asc" + name[len("fusekit.asc"):] if name.startswith("fusekit.asc") else None


def missing_api(exc: BaseException) -> "str | None":
    """The full dotted name of the pyasc API a test called that fusekit does not provide
    (``asc.adv.swiglu``, ``asc.TPipe.foo``, ``asc.runtime.jit``, ``asc.lib.runtime.CoreType``), or None
    when ``exc`` is not about a missing ``asc`` name."""
    from fusekit.asc.runtime import KernelError

    text = str(exc)
    if isinstance(exc, ModuleNotFoundError):
        return exc.name if exc.name and (exc.name == "asc" or exc.name.startswith("asc.")) else None
    if isinstance(exc, ImportError):
        name = re.search(r"cannot import name '(\w+)'", text)
        owner = _asc_module(exc.name) if exc.name else None
        return f"{owner}.{name.group(1)}" if owner and name else None
    if isinstance(exc, AttributeError) and getattr(exc, "name", None) and getattr(exc, "obj", None) is not None:
        owner = _asc_owner(exc.obj)
        return f"{owner}.{exc.name}" if owner else None
    named = re.search(r"pyasc has (asc(?:\.\w+)+)", text) or re.search(r"^(asc(?:\.\w+)+)[:(]", text) or \
        re.search(r"nor fusekit has ((?:asc\.)?\w+(?:\.\w+)+)", text)
    if isinstance(exc, (AttributeError, KernelError)) and named:
        name = named.group(1)
        return name if name.startswith("asc.") else f"asc.{name}"
    owner = re.search(r"^(asc(?:\.\w+)*) has no '(\w+)'", text)  # fusekit.asc.adv's own message
    if isinstance(exc, AttributeError) and owner:
        return f"{owner.group(1)}.{owner.group(2)}"
    return None


def in_pyasc(name: str) -> "bool | None":
    """Whether pyasc 1.1.1 (the release fusekit follows, ``fusekit.asc.names.pyasc_names``: its kernel
    API, ``asc``, ``asc.adv`` and their classes) has the API ``name`` (``asc.adv.rmsnorm``: True;
    ``asc.adv.swiglu``: False); None for a name outside that list (a module, a host value)."""
    from fusekit.asc.names import pyasc_names

    owner, _, leaf = name.rpartition(".")
    names = pyasc_names().get(owner)
    return None if names is None else leaf in names


def _unsupported(name: str, exc: BaseException) -> str:
    """The reason of an ``unsupported`` row: the missing call by its full name, and whether pyasc has it."""
    known = None if isinstance(exc, ImportError) else in_pyasc(name)
    if known:
        return f"pyasc has {name}; fusekit does not simulate it yet"
    if known is False:
        return f"{name}: not in pyasc 1.1.1 (a newer pyasc's or another project's API); fusekit does not simulate it"
    return f"{name}: used by the test; fusekit does not provide it yet"


def cube_use(functions) -> "str | None":
    """The first cube-unit API name (:data:`CUBE`) in the source of ``functions`` (a test and its
    fixtures) or of the module-level functions, classes and values of their files that they name,
    followed transitively; None when there is none. Per test, so one matmul test does not hide the
    other tests of its file."""
    for function in functions:
        try:
            todo = [ast.parse(textwrap.dedent(inspect.getsource(function)))]
            defs = _module_names(inspect.getsourcefile(function))
        except (OSError, TypeError, SyntaxError):
            continue
        seen = set()
        while todo:
            node = todo.pop()
            found = CUBE.search(ast.unparse(node))
            if found:
                return found.group(0)
            for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen:
                seen.add(name)
                if name in defs:
                    todo.append(defs[name])
    return None


@functools.lru_cache(maxsize=256)
def _module_names(path: str) -> "dict[str, ast.AST]":
    """What each module-level name of the file at ``path`` stands for (its def, class or assignment)."""
    defs = {}
    for node in ast.parse(Path(path).read_text(encoding="utf-8")).body:
        for target in node.targets if isinstance(node, ast.Assign) else [node]:
            if isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[target.name] = node
            elif isinstance(target, ast.Name):
                defs[target.id] = node
    return defs


def explain(exc: BaseException) -> tuple[str, str]:
    """(result, reason) for a test that raised ``exc``: ``not simulated (cube unit)``, ``out of scope``,
    ``unsupported`` (a call fusekit lacks, by its full name), ``sample defect`` (a KernelError whose kind
    is a documented rule the kernel broke, :data:`SAMPLE_DEFECTS`), ``failed`` (a wrong result or another
    kernel error) or ``error`` (anything else)."""
    from fusekit.asc.runtime import KernelError
    from fusekit.pyasc_shim.host import CubeUnitNotSimulated

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    scope = re.search(r"pyasc has (asc[\w.]*)[^(]*\(out of scope: (.*)\)$", text)
    if scope:  # e.g. AIPP: a decision with its reason, not a gap to be filled
        return "out of scope", f"pyasc has {scope.group(1)}; out of scope: {scope.group(2)}"
    if isinstance(exc, CubeUnitNotSimulated) or isinstance(exc, (AttributeError, KernelError)) and "cube unit" in text:
        return "not simulated (cube unit)", text
    missing = missing_api(exc)
    if missing and (not isinstance(exc, KernelError) or exc.kind == "api"):
        return "unsupported", _unsupported(missing, exc)
    if isinstance(exc, KernelError) and exc.kind in SAMPLE_DEFECTS:
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
        :func:`exit_status` of the rows (0: no fusekit failure; 1: some row is ``failed``, ``error``
        or ``not run``), 2 for a path that does not exist, no checkout, paths holding no test or
        arguments pytest refuses.
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
    # one output: without --verbose pytest's terminal reporter (dots, warnings, summary line) is off and
    # the table below is all that is printed; with it, pytest reports and the plugin prints the table
    quiet = [] if verbose else ["-p", "no:terminal"]
    args = ["-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider", *quiet, "--rootdir",
            os.path.commonpath(folders), *paths, *(extra or [])]
    if not sanitize:
        args.append("--fusekit-no-sanitize")
    rows = pyasc_plugin.rows() if pytest.main(args) != pytest.ExitCode.USAGE_ERROR else None
    if rows is None:
        return 2  # pytest said why on stderr
    if not rows:
        print(f"fusekit conformance: no tests found in {', '.join(paths)}", file=sys.stderr)
        return 2
    if not verbose:
        print(table(rows, pyasc_plugin.root()))
        print("(pytest's tracebacks: fusekit conformance --verbose PATH...)")
    return exit_status(rows)
