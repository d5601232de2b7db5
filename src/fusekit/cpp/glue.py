"""What fusekit adds to a C++ source before it compiles it: kernel entries, the launch syntax, the host ``main``.

* Every ``__global__`` function gets an ``extern "C"`` entry taking the launch arguments as ``fusekit::Arg``
  records, and a description of its parameter types (``gm,gm,u32``), so Python can launch it. The kernels are
  found in the preprocessed source (``__global__`` is a marker word then): the ``#if`` branches the definitions
  choose, and parameters written through macros, are the compiler's.
* Each kernel's type (AD 核函数, 设置Kernel类型.md) is read there too: ``__cube__`` (AIC_ONLY) and ``__mix__(c, v)``
  (an AIC with v AIVs) are marker words as well, and ``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_X)`` in the kernel's
  body (a call to ``fusekit::kernel_task_type``) names X, and wins; else the kernel is AIV_ONLY. The type is pyasc's
  name (``KernelType``), which ``fusekit.asc.runtime`` plans the launch's cores by.
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
    """A ``__global__`` function of the source: its name, parameter names and line, its kernel type (pyasc's name:
    ``AIV_ONLY``, ``AIC_ONLY``, ``MIX_AIC_1_2`` ...) and how the source declares it (``__cube__``, ``__mix__(1, 2)``,
    ``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY)``; empty for the default)."""

    name: str
    params: tuple[str, ...]
    line: int
    template: bool = False  # a function template: launched as name<args>, it has no entry until instantiated
    kernel_type: str = "AIV_ONLY"
    declared: str = ""


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
# what __cube__ and __mix__(c, v) become (the ratio between two words: no parentheses in a declaration's head)
CUBE_MARKER, MIX_MARKER, MIX_END = "__fusekit_cube__", "__fusekit_mix__", "__fusekit_mix_end__"
DEFINES = {"__global__": MARKER, "__cube__": CUBE_MARKER, "__mix__(...)": f"{MIX_MARKER} __VA_ARGS__ {MIX_END}"}
_MIX = re.compile(rf"\b{MIX_MARKER}\b(?P<ratio>[^;{{}}()]*?)\b{MIX_END}\b")
_TASK_TYPE = re.compile(r"\bkernel_task_type\s*\(\s*(?:[\w:]*::)?KERNEL_TYPE_(?P<type>\w+)\s*\)")
# __mix__(AIC, AIV): the kernel type of each ratio (AD 核函数; pyasc's KernelType names)
_MIX_TYPES = {("1", "2"): "MIX_AIC_1_2", ("1", "1"): "MIX_AIC_1_1", ("1", "0"): "MIX_AIC_1_0",
              ("0", "1"): "MIX_AIV_1_0"}


def unit(source: str, path: str, prelude: str = "") -> str:
    """The C++ fusekit preprocesses for ``source`` (read from ``path``, after ``prelude``): the launch header, and
    the source with its launches and ``main`` rewritten, on its own line numbers."""
    return "\n".join(['#include "fusekit/launch.h"', prelude, f'#line 1 "{_escape(path)}"', rewrite(source), ""])


def marked_kernels(preprocessed: str) -> list[KernelDecl]:
    """The ``__global__`` functions the preprocessor kept (``#if`` branches taken, macros expanded), in order,
    each named once, with their kernel types; their lines are the source's (from the line markers)."""
    found: dict[str, KernelDecl] = {}
    code = code_only(preprocessed)
    for m in _MARKED.finditer(preprocessed):
        params = tuple(_param_name(p) for p in m.group("params").split(",") if p.strip() and p.strip() != "void")
        template = _TEMPLATE_BEFORE.search(preprocessed, max(0, m.start() - 400), m.start()) is not None
        kernel_type, declared = _kernel_type(code, m)
        found.setdefault(m.group("name"), KernelDecl(m.group("name"), params, _source_line(preprocessed, m.start()),
                                                     template, kernel_type, declared))
    return list(found.values())


def _kernel_type(code: str, m: re.Match) -> tuple[str, str]:
    """(kernel type, its spelling) of the kernel ``m`` matched: KERNEL_TASK_TYPE_DEFAULT in its body, else
    ``__cube__`` / ``__mix__(c, v)`` before its name (``__global__ __cube__ void k`` or ``__cube__ __global__
    void k``), else AIV_ONLY. A __mix__ ratio no pyasc type has keeps its spelling as the type, which the launch
    refuses as unknown."""
    task = _TASK_TYPE.search(code, m.end(), _body_end(code, m.end() - 1))
    if task:
        return task.group("type"), f"KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_{task.group('type')})"
    start = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1
    head = code[start:m.start()] + m.group("head")
    mix = _MIX.search(head)
    if mix:
        ratio = tuple(part.strip() for part in mix.group("ratio").split(","))
        written = f"__mix__({', '.join(ratio)})"
        return _MIX_TYPES.get(ratio, written), written
    if re.search(rf"\b{CUBE_MARKER}\b", head):
        return "AIC_ONLY", "__cube__"
    return "AIV_ONLY", ""


def _body_end(code: str, brace: int) -> int:
    """The offset just past the ``}`` that closes the ``{`` at ``brace`` (the end of ``code`` if none does)."""
    depth = 0
    for k in range(brace, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(code)


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
    unmarked = _MIX.sub("", preprocessed).replace(MARKER, "").replace(CUBE_MARKER, "")
    lines = [unmarked, '# 1 "fusekit-glue.cpp"', "fusekit::Dispatch fusekit_dispatch = nullptr;",
             'extern "C" { uint64_t fusekit_tiling_key = 0; }',
             'extern "C" void fusekit_set_dispatch(fusekit::Dispatch d) { fusekit_dispatch = d; }']
    for k in (k for k in decls if not k.template):
        lines += [f'extern "C" int fusekit_entry_{k.name}(const fusekit::Arg* a) '
                  f"{{ return fusekit::run_entry({k.name}, a); }}",
                  f'extern "C" const char* fusekit_types_{k.name}() {{ return fusekit::describe({k.name}); }}']
    lines.append('extern "C" const char* fusekit_kernels() { return "'
                 + ";".join(f"{k.name}:{','.join(k.params)}:{int(k.template)}:{k.line}:{k.kernel_type}:"
                            f"{_listed(k.declared)}" for k in decls) + '"; }')
    if re.search(r"\bfusekit_user_main\s*\(", preprocessed):
        lines.append('extern "C" int fusekit_main(int argc, char** argv) '
                     "{ return fusekit::run_main(fusekit_user_main, argc, argv); }")
    return "\n".join(lines) + "\n"


def _listed(text: str) -> str:
    """``text`` as a field of fusekit_kernels()' list (no separator, quote or backslash in it)."""
    return re.sub(r'[:;"\\]', "", text)


def _escape(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')
