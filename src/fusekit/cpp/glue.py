"""What fusekit adds to a C++ source before it compiles it: kernel entries, the launch syntax, the host ``main``.

* Every ``__global__`` function gets an ``extern "C"`` entry taking the launch arguments as ``fusekit::Arg``
  records, and a description of its parameter types (``gm,gm,u32``), so Python can launch it.
* ``kernel<<<numBlocks, l2ctrl, stream>>>(args)`` (the Ascend C launch, AD 核函数/调用核函数) becomes
  ``fusekit::Launch(kernel, "kernel", __FILE__, __LINE__, numBlocks, l2ctrl, stream)(args)``, which hands the launch to the simulator.
* ``main`` becomes ``fusekit_user_main``, run by ``fusekit run FILE.asc`` (:mod:`fusekit.cpp.program`).

The user's text keeps its line numbers (``#line``), so compiler messages and KernelErrors name the user's lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_KERNEL = re.compile(r"\b__global__\b(?P<head>[^;{}()]*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*\{")
_LAUNCH = re.compile(r"\b(?P<kernel>[A-Za-z_][\w:]*(?:\s*<[^<>;()]*>)?)\s*<<<(?P<config>.*?)>>>\s*\(", re.S)
_TEMPLATE_BEFORE = re.compile(r"\btemplate\s*<[^;{}]*>\s*(?:(?:extern\s*\"C\"|\w+)\s+)*\Z")
_MAIN = re.compile(r"\b(?P<type>int|int32_t)\s+main\s*\(")


@dataclass(frozen=True)
class KernelDecl:
    """A ``__global__`` function of the source: its name, parameter names and line."""

    name: str
    params: tuple[str, ...]
    line: int
    template: bool = False  # a function template: launched as name<args>, it has no entry until instantiated


def _blank(match: re.Match) -> str:
    """A comment or literal as spaces (newlines kept), so scanning sees code only and offsets stay."""
    text = match.group(0)
    if text.startswith(("\"", "'")):
        return text[0] + re.sub(r"[^\n]", " ", text[1:-1]) + text[-1]
    return re.sub(r"[^\n]", " ", text)


def code_only(source: str) -> str:
    """``source`` with comments and the insides of literals blanked (same length, same lines)."""
    return _COMMENT.sub(_blank, source)


def _param_name(param: str) -> str:
    words = re.findall(r"[A-Za-z_]\w*", param.split("=")[0])
    return words[-1] if words else ""


def kernels(source: str) -> list[KernelDecl]:
    """The ``__global__`` functions defined in ``source``, in order."""
    code = code_only(source)
    found = []
    for m in _KERNEL.finditer(code):
        params = tuple(_param_name(p) for p in m.group("params").split(",") if p.strip() and p.strip() != "void")
        template = _TEMPLATE_BEFORE.search(code, max(0, m.start() - 400), m.start()) is not None
        found.append(KernelDecl(m.group("name"), params, code.count("\n", 0, m.start()) + 1, template))
    return found


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def local_sources(path: Path, source: str) -> list[tuple[Path, str]]:
    """``source`` (read from ``path``) and the files it includes with ``#include "..."`` from its own folder,
    recursively: where a program's kernels may be defined (``#include "add_custom_kernel.cpp"``)."""
    found, todo, seen = [], [(path, source)], set()
    while todo:
        file, text = todo.pop(0)
        if file.resolve() in seen:
            continue
        seen.add(file.resolve())
        found.append((file, text))
        for name in _LOCAL_INCLUDE.findall(text):
            included = file.parent / name
            if included.is_file():
                todo.append((included, included.read_text(encoding="utf-8", errors="replace")))
    return found


def has_main(source: str) -> bool:
    """Whether ``source`` defines a host ``main``."""
    return _MAIN.search(code_only(source)) is not None


def _substitute(source: str, pattern: re.Pattern, replace) -> str:
    """Apply ``pattern`` to the code of ``source`` (not to comments or literals), editing ``source`` itself."""
    code, out, last = code_only(source), [], 0
    for m in pattern.finditer(code):
        out += [source[last:m.start()], replace(m)]
        last = m.end()
    return "".join(out) + source[last:]


def rewrite(source: str) -> str:
    """The user's source with launches and ``main`` rewritten, on the same lines."""
    def launch(m: re.Match) -> str:
        kernel = " ".join(m.group("kernel").split())
        config = m.group("config").replace("\n", " ")
        return f'::fusekit::Launch({kernel}, "{kernel}", __FILE__, __LINE__, {config})('

    source = _substitute(source, _LAUNCH, launch)
    return _substitute(source, _MAIN, lambda m: f"{m.group('type')} fusekit_user_main(")


def translation_unit(source: str, path: str, decls: list[KernelDecl], prelude: str = "") -> str:
    """The C++ fusekit compiles for ``source`` (read from ``path``, defining or including the kernels ``decls``,
    after ``prelude``): its rewritten text and the glue."""
    lines = ['#include "fusekit/launch.h"', prelude, f'#line 1 "{_escape(path)}"', rewrite(source), "",
             '#line 1 "fusekit-glue.cpp"', "fusekit::Dispatch fusekit_dispatch = nullptr;",
             'extern "C" { uint64_t fusekit_tiling_key = 0; }',
             'extern "C" void fusekit_set_dispatch(fusekit::Dispatch d) { fusekit_dispatch = d; }']
    for k in (k for k in decls if not k.template):
        lines += [f'extern "C" int fusekit_entry_{k.name}(const fusekit::Arg* a) '
                  f"{{ return fusekit::run_entry({k.name}, a); }}",
                  f'extern "C" const char* fusekit_types_{k.name}() {{ return fusekit::describe({k.name}); }}']
    lines.append('extern "C" const char* fusekit_kernels() { return "'
                 + ";".join(f"{k.name}:{','.join(k.params)}" for k in decls if not k.template) + '"; }')
    if has_main(source):
        lines.append('extern "C" int fusekit_main(int argc, char** argv) '
                     "{ return fusekit::run_main(fusekit_user_main, argc, argv); }")
    return "\n".join(lines) + "\n"


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
