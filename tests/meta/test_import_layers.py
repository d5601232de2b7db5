"""The packages of ``src/fusekit`` stay in layers: no cycle between packages, no import of another
package's private name, no import upward across the layers (issue 19, item 4).

The graph is read from the source with ``ast``, module-level and function-level imports alike (a lazy
import that breaks a cycle at run time is still a cycle of the design). Imports under ``if TYPE_CHECKING:``
and ``if __name__ == "__main__":`` are left out: they never run inside the package. A package is the first
name below ``fusekit`` (``fusekit.asc`` with everything under it, ``fusekit.soc``, ``fusekit.cli``, ...);
``fusekit`` itself (``__init__``) is the public facade above them all.

``python tests/test_import_layers.py`` prints the counts the issue's closing note quotes.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (runnable as a script, outside pytest's pythonpath)

SRC = ROOT / "src"

# The layers, lowest first: a module may import from its own layer and from the layers below it.
# machine < asc < trace and analyses < generator, torch, pyasc, cpp < CLI (docs/architecture.md).
LAYERS = (
    ("machine", ("fusekit.machine", "fusekit.soc", "fusekit.files")),
    ("asc", ("fusekit.asc",)),
    ("trace and analyses", ("fusekit.trace", "fusekit.hb", "fusekit.sanitizer", "fusekit.timing", "fusekit.verify",
                            "fusekit.tiling")),
    ("front ends", ("fusekit.gen", "fusekit.torch", "fusekit.pyasc", "fusekit.pyasc_plugin",
                    "fusekit.ops", "fusekit.check", "fusekit.cpp")),
    ("cli", ("fusekit.cli",)),
    ("facade", ("fusekit",)),
)

# What the walk still finds, each with its reason: package edges that point upward or close a cycle, and
# private names imported across packages. Every entry is a debt in another part of issue 19; the test fails
# when an entry is no longer found (delete it then), so the lists only shrink.
ALLOWED_EDGES: dict = {}
ALLOWED_PRIVATE: dict = {}


def _package(module: str) -> str:
    """``fusekit.asc.basic.vec_binary`` -> ``fusekit.asc``; ``fusekit`` stays ``fusekit``."""
    return ".".join(module.split(".")[:2])


def _layer(module: str) -> int:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if _package(module) in prefixes:
            return rank
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS in {__file__}")


def modules() -> dict[str, Path]:
    """Every module of the fusekit package by dotted name."""
    out = {}
    for path in sorted((SRC / "fusekit").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


class _Imports(ast.NodeVisitor):
    """The fusekit imports of one module: (target module, imported name or None, line, in a function)."""

    def __init__(self, name: str, is_package: bool, known: set[str]):
        self.package = name if is_package else name.rpartition(".")[0]
        self.known, self.depth, self.found = known, 0, []

    def _skipped(self, node: ast.If) -> bool:
        text = ast.unparse(node.test)
        return text in ("TYPE_CHECKING", "typing.TYPE_CHECKING") or text.replace("'", '"') == '__name__ == "__main__"'

    def visit_If(self, node: ast.If):
        if self._skipped(node):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "fusekit":
                self.found.append((alias.name, None, node.lineno, self.depth > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level:
            base = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source.split(".")[0] != "fusekit":
            return
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            if sub in self.known:  # `from fusekit import asc`: the submodule
                self.found.append((sub, None, node.lineno, self.depth > 0))
            else:
                self.found.append((source, alias.name, node.lineno, self.depth > 0))


def imports() -> list[tuple[str, str, str | None, int, bool]]:
    """(importer, imported module, imported name or None, line, function-level) for every fusekit import."""
    known = modules()
    out = []
    for name, path in known.items():
        visitor = _Imports(name, path.name == "__init__.py", set(known))
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out += [(name, target, imported, line, lazy) for target, imported, line, lazy in visitor.found]
    return out


def _private(name: str | None, target: str) -> str | None:
    """The private part of an import: a ``_name`` imported, or a ``_module`` on the path."""
    for part in [*target.split(".")[1:], name or ""]:
        if part.startswith("_") and not part.startswith("__"):
            return part
    return None


def package_graph(edges, leave_out=()) -> dict[str, set[str]]:
    """Package -> the packages it imports, without the edges ``leave_out``."""
    graph = defaultdict(set)
    for importer, target, *_ in edges:
        a, b = _package(importer), _package(target)
        if a != b and (a, b) not in leave_out:
            graph[a].add(b)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one package (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def _where(edges, packages) -> list[str]:
    """The import lines between the packages of a cycle."""
    return sorted({f"{importer}:{line} imports {target}" for importer, target, _, line, _ in edges
                   if {_package(importer), _package(target)} <= packages and _package(importer) != _package(target)})


def violations(leave_out=ALLOWED_EDGES):
    """(cycles without the edges ``leave_out``, upward imports, private cross-package imports), the last two
    keyed by (importer's package, imported package), each with its import lines."""
    edges = imports()
    found_cycles = {c: _where(edges, c) for c in cycles(package_graph(edges, leave_out))}
    upward, private = defaultdict(set), defaultdict(set)
    for importer, target, name, line, _ in edges:
        a, b = _package(importer), _package(target)
        if a == b:
            continue
        if _layer(importer) < _layer(target):
            upward[(a, b)].add(f"{importer}:{line} imports {target}")
        part = _private(name, target)
        if part:
            private[(a, b)].add(f"{importer}:{line} imports {target}{'.' + name if name else ''}")
    return found_cycles, dict(upward), dict(private)


def test_no_cycle_between_packages():
    found, _, _ = violations()
    new = found
    assert not new, "import cycles between packages:\n" + "\n".join(
        f"{sorted(c)}:\n  " + "\n  ".join(where) for c, where in new.items())


def test_no_upward_import_across_layers():
    _, upward, _ = violations()
    new = {k: v for k, v in upward.items() if k not in ALLOWED_EDGES}
    assert not new, "imports from a higher layer (" + " < ".join(n for n, _ in LAYERS) + "):\n" + "\n".join(
        line for lines in new.values() for line in sorted(lines))


def test_no_private_name_of_another_package():
    _, _, private = violations()
    new = {k: v for k, v in private.items() if k not in ALLOWED_PRIVATE}
    assert not new, "private names imported from another package (make them public or move them):\n" + "\n".join(
        line for lines in new.values() for line in sorted(lines))


def test_the_allow_lists_hold_only_what_is_still_found():
    graph = package_graph(imports())
    _, _, private = violations()
    stale = [k for k in ALLOWED_EDGES if k[1] not in graph.get(k[0], ())] + [k for k in ALLOWED_PRIVATE if k not in private]
    assert not stale, f"fixed, so delete from the allow-lists: {stale}"


def test_every_fusekit_import_names_a_module_that_exists():
    """An import of a moved or deleted module fails here, whether or not a test happens to run it."""
    known = modules()
    missing = sorted({f"{importer}:{line} imports {target}" for importer, target, _, line, _ in imports()
                      if target not in known})
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(missing)


def test_the_walk_sees_every_kind_of_import():
    """The walk itself, on a known module: relative, absolute and function-level imports are all found."""
    edges = imports()
    assert any(lazy for *_, lazy in edges), "function-level imports must be walked too"
    assert {_package(t) for _, t, *_ in edges} >= {"fusekit.asc", "fusekit.sanitizer", "fusekit.timing"}
    assert all(_layer(m) >= 0 for m in modules())  # every package has a layer


if __name__ == "__main__":
    edges = imports()
    found, upward, private = violations(leave_out=())
    statements = {(e[0], e[3]) for e in edges}
    lazy = {(e[0], e[3]) for e in edges if e[4]}
    print(f"{len(modules())} modules, {len(statements)} fusekit import statements, {len(lazy)} of them function-level "
          f"(in {len({m for m, _ in lazy})} modules)")
    print(f"cycles between packages: {len(found)}")
    for c, where in found.items():
        print(f"  {sorted(c)}")
        for line in where:
            print(f"    {line}")
    print(f"upward imports: {sum(map(len, upward.values()))} in {len(upward)} package pairs")
    for lines in upward.values():
        for line in sorted(lines):
            print(f"  {line}")
    print(f"private names across packages: {sum(map(len, private.values()))} in {len(private)} package pairs")
    for lines in private.values():
        for line in sorted(lines):
            print(f"  {line}")
    sys.exit(0)
