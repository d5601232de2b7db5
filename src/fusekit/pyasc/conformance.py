"""Run Huawei's pyasc test suite and tutorials, unmodified, on fusekit's simulator.

``fusekit conformance PATH...`` (or ``pytest -p fusekit.pyasc_plugin PATH...``) collects the tests
of a pyasc checkout (github hicann/pyasc: ``python/test/kernels``, ``python/test/generalization``,
``python/tutorials``) with ``import asc`` bound to fusekit (:mod:`fusekit.pyasc.bridge`, host modules from
:mod:`fusekit.pyasc.shim`), runs each with its own inputs and references, runs the sanitizer on every
kernel launch, and prints one row per test: file, test, result, reason. Nothing of pyasc's is part
of fusekit; the user points at their checkout.

This module is the report both front ends share: a test's :class:`Row`, the reason a failure is
given (:func:`explain`), the table and the exit status. The pytest plugin (:mod:`fusekit.pyasc.plugin`)
fills the rows during a session; the command (:mod:`fusekit.cli.conformance`) starts that session.

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
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT_ENV = "FUSEKIT_PYASC_CHECKOUT"
SUITE = ("python/tutorials", "python/test/kernels", "python/test/generalization")
# names of pyasc's cube APIs fusekit does not simulate yet (batch, quantised and sparse matmul): a test that uses
# one is "not simulated (cube unit)"; the rest of the cube (asc.cube, asc.adv.Matmul) runs
CUBE = re.compile(r"\b(BatchMatmulTiling|iterate_batch|iterate_n_batch|set_quant_vector|set_quant_scalar|"
                  r"mmad_with_sparse|load_data_with_sparse)\b")


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
# results that are a finding about the test, not a fusekit failure: the pytest plugin reports them to
# pytest as skips with the row's reason, so pytest's summary and junit agree with the table
NOT_FUSEKIT_FAILURES = frozenset({"sample defect", "unsupported", "out of scope", "not simulated (cube unit)"})


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
    if cls.__module__.startswith(("fusekit.asc", "fusekit.pyasc.shim")):
        return f"asc.{cls.__name__}"
    return None


def _asc_module(name: str) -> "str | None":
    """``asc.X`` for a module name that is one (``asc.runtime.jit``) or stands for one under
    :mod:`fusekit.pyasc.bridge` (``fusekit.pyasc.shim.lib_runtime`` -> ``asc.lib.runtime``)."""
    from . import shim

    if name == "asc" or name.startswith("asc."):
        return name
    bound = [key for key, mod in shim.modules().items() if mod.__name__ == name]
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
    """Whether pyasc 1.1.1 (the release fusekit follows) has ``name``: an API of its kernel language
    (``fusekit.asc.names.pyasc_names``: ``asc``, ``asc.adv`` and their classes; ``asc.adv.rmsnorm``: True,
    ``asc.adv.swiglu``: False), else a module of its package or a public name one defines
    (:func:`pyasc_modules`: ``asc.runtime.launcher``, ``asc.lib.runtime.CoreType``: True;
    ``asc.lib.runtime.NoSuchValue``: False); None for a name under neither list (a private module's)."""
    from fusekit.asc.names import pyasc_names

    owner, _, leaf = name.rpartition(".")
    names = pyasc_names().get(owner)
    if names is not None:
        return leaf in names
    modules = pyasc_modules()
    if name in modules:
        return True
    return leaf in modules[owner] if owner in modules else None


PYASC_MODULES_FILE = Path(__file__).with_name("pyasc_modules.json")


@functools.lru_cache(maxsize=1)
def pyasc_modules() -> "dict[str, frozenset[str]]":
    """pyasc 1.1.1's modules (``asc.runtime.launcher``) and the public names each defines or imports at
    module level, its submodules included, from ``pyasc_modules.json`` (written by
    :func:`write_modules_file` from the installed release's files)."""
    import json

    data = json.loads(PYASC_MODULES_FILE.read_text(encoding="utf-8"))
    return {module: frozenset(names) for module, names in data["modules"].items()}


def module_tree(package: "str | Path") -> "dict[str, list[str]]":
    """``{module: sorted public names}`` of the ``asc`` package at ``package`` (a folder), read from its
    source without importing it (pyasc's modules load its C++ extension): each non-private module's
    top-level defs, classes, assignments and imports, and its child modules. C extension modules have
    no source and are listed without names."""
    root = Path(package)
    tree: dict[str, set] = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("asc", *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts[1:]):
            continue
        module = ".".join(parts)
        names = tree.setdefault(module, set())
        try:
            body = ast.parse(path.read_text(encoding="utf-8")).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    for module in list(tree):
        owner, _, leaf = module.rpartition(".")
        if owner in tree:
            tree[owner].add(leaf)
    return {m: sorted(n for n in names if not n.startswith("_")) for m, names in sorted(tree.items())}


def write_modules_file(path: Path = PYASC_MODULES_FILE) -> None:
    """Write :func:`module_tree` of the installed pyasc to ``path``: ``python -m fusekit.pyasc.conformance``
    in an environment with pyasc 1.1.1 (the stored list is that release's; CI's pyasc job checks it)."""
    import importlib.metadata
    import importlib.util
    import json

    spec = importlib.util.find_spec("asc")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pyasc is not installed (pip install pyasc==1.1.1)")
    data = {"source": f"pyasc {importlib.metadata.version('pyasc')}: modules of the asc package and the public "
                      "names each defines at module level, listed by fusekit.pyasc.conformance.module_tree",
            "modules": module_tree(list(spec.submodule_search_locations)[0])}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _unsupported(name: str, exc: BaseException) -> str:
    """The reason of an ``unsupported`` row: the missing call by its full name, and whether pyasc 1.1.1 has
    it (:func:`in_pyasc`): a kernel API fusekit does not simulate yet, a module or host value of pyasc's
    package fusekit does not provide, or a name pyasc 1.1.1 lacks (a newer pyasc's, another project's)."""
    from fusekit.asc.names import pyasc_names

    known = in_pyasc(name)
    if known and name not in pyasc_modules() and pyasc_names().get(name.rpartition(".")[0]) is not None:
        return f"pyasc has {name}; fusekit does not simulate it yet"
    if known:
        return f"pyasc 1.1.1 has {name} (a module or host value of its package); fusekit does not provide it yet"
    if known is False:
        return f"{name}: not in pyasc 1.1.1 (a newer pyasc's or another project's API); fusekit does not provide it"
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
    from fusekit.pyasc.shim.host import CubeUnitNotSimulated

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, CubeUnitNotSimulated) or isinstance(exc, (AttributeError, KernelError)) and "cube unit" in text:
        # before "out of scope": a cube-unit call (asc.mmad, asc.load_data: coverage.CUBE) is the README's
        # "not simulated (cube unit)", like a matmul test found before it runs
        name = missing_api(exc)
        return "not simulated (cube unit)", f"uses {name} (cube unit)" if name else text
    scope = re.search(r"pyasc has (asc[\w.]*)[^(]*\(out of scope: (.*)\)$", text)
    if scope:  # e.g. AIPP: a decision with its reason, not a gap to be filled
        return "out of scope", f"pyasc has {scope.group(1)}; out of scope: {scope.group(2)}"
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


if __name__ == "__main__":
    write_modules_file()
