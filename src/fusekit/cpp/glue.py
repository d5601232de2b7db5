"""What fusekit adds to a C++ source before it compiles it: kernel entries, the launch syntax, the host ``main``.

* Every ``__global__`` function gets an ``extern "C"`` entry taking the launch arguments as ``fusekit::Arg``
  records, and a description of its parameter types (``gm,gm,u32``), so Python can launch it. The kernels are
  found in the preprocessed source (``__global__`` is a marker word then): the ``#if`` branches the definitions
  choose, and parameters written through macros, are the compiler's.
* ``kernel<<<numBlocks, l2ctrl, stream>>>(args)`` (the Ascend C launch, AD 核函数/调用核函数) becomes
  ``fusekit::Launch(kernel, "kernel", __FILE__, __LINE__, numBlocks, l2ctrl, stream)(args)``, which hands the launch to the simulator.
* ``main`` becomes ``fusekit_user_main``, run by ``fusekit run FILE.asc`` (:mod:`fusekit.cpp.program`).

The user's text keeps its line numbers (``#line``), so compiler messages and KernelErrors name the user's lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
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


# what __global__ becomes while fusekit preprocesses a source: a word the kernels are found by, deleted after
MARKER = "__fusekit_global__"
_MARKED = re.compile(rf"\b{MARKER}\b(?P<head>[^;{{}}()]*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*\{{")
_LINE_MARK = re.compile(r'^# (\d+) "((?:\\.|[^"\\])*)"', re.M)


def unit(source: str, path: str, prelude: str = "") -> str:
    """The C++ fusekit preprocesses for ``source`` (read from ``path``, after ``prelude``): the launch header, and
    the source with its launches and ``main`` rewritten, on its own line numbers."""
    return "\n".join(['#include "fusekit/launch.h"', prelude, f'#line 1 "{_escape(path)}"', rewrite(source), ""])


def marked_kernels(preprocessed: str) -> list[KernelDecl]:
    """The ``__global__`` functions the preprocessor kept (``#if`` branches taken, macros expanded), in order,
    each named once; their lines are the source's (from the line markers)."""
    found: dict[str, KernelDecl] = {}
    for m in _MARKED.finditer(preprocessed):
        params = tuple(_param_name(p) for p in m.group("params").split(",") if p.strip() and p.strip() != "void")
        template = _TEMPLATE_BEFORE.search(preprocessed, max(0, m.start() - 400), m.start()) is not None
        found.setdefault(m.group("name"), KernelDecl(m.group("name"), params, _source_line(preprocessed, m.start()),
                                                     template))
    return list(found.values())


def _source_line(preprocessed: str, position: int) -> int:
    marks = list(_LINE_MARK.finditer(preprocessed, 0, position))
    if not marks:
        return preprocessed.count("\n", 0, position) + 1
    last = marks[-1]
    line_end = preprocessed.index("\n", last.end())  # the marker names the line after its own
    return int(last.group(1)) + preprocessed.count("\n", line_end + 1, position)


def finish(preprocessed: str) -> str:
    """The preprocessed unit with the kernels' entries, the dispatch hook and ``fusekit_main`` added."""
    decls = marked_kernels(preprocessed)
    lines = [preprocessed.replace(MARKER, ""), '# 1 "fusekit-glue.cpp"', "fusekit::Dispatch fusekit_dispatch = nullptr;",
             'extern "C" { uint64_t fusekit_tiling_key = 0; }',
             'extern "C" void fusekit_set_dispatch(fusekit::Dispatch d) { fusekit_dispatch = d; }']
    for k in (k for k in decls if not k.template):
        lines += [f'extern "C" int fusekit_entry_{k.name}(const fusekit::Arg* a) '
                  f"{{ return fusekit::run_entry({k.name}, a); }}",
                  f'extern "C" const char* fusekit_types_{k.name}() {{ return fusekit::describe({k.name}); }}']
    lines.append('extern "C" const char* fusekit_kernels() { return "'
                 + ";".join(f"{k.name}:{','.join(k.params)}:{int(k.template)}:{k.line}" for k in decls) + '"; }')
    if re.search(r"\bfusekit_user_main\s*\(", preprocessed):
        lines.append('extern "C" int fusekit_main(int argc, char** argv) '
                     "{ return fusekit::run_main(fusekit_user_main, argc, argv); }")
    return "\n".join(lines) + "\n"


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
