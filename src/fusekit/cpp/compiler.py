"""Compile a C++ kernel source into a shared library with the user's own C++ compiler, cached by content.

The compiler is ``$CXX``, else the first of ``g++``, ``clang++``, ``c++`` on the PATH (C++20: g++ 10 or clang 16
and newer). The source is preprocessed first; the library is cached under ``$FUSEKIT_CACHE_DIR/cpp`` (default
``~/.cache/fusekit/cpp``) by the SHA-256 of the preprocessed text, the compiler's version and the flags, so an
edit to the source, to a header it includes or to a ``-D`` definition compiles again, and nothing else does.
Libraries are written atomically (a temporary name, then a rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable
from pathlib import Path

INCLUDE = Path(__file__).with_name("include")
INSTALL_HINT = ("install one (Debian/Ubuntu: sudo apt install g++; Fedora: sudo dnf install gcc-c++; macOS: "
                "xcode-select --install) or set CXX to its path")
# -z defs: a function the source declares but nothing defines fails the link, not the load
FLAGS = ("-std=c++20", "-O1", "-fPIC", "-shared", "-w") + (("-Wl,-z,defs",) if sys.platform.startswith("linux") else ())


class CompileError(ValueError):
    """The source does not compile (the compiler's messages, with what fusekit knows about them), or there is
    no compiler."""


@lru_cache(maxsize=None)
def compiler() -> str:
    """The C++ compiler to use.

    Raises:
        CompileError: none found (the message names the install command).
    """
    named = os.environ.get("CXX")
    if named:
        found = shutil.which(named)
        if found is None:
            raise CompileError(f"CXX={named!r} is not an executable on the PATH; {INSTALL_HINT}")
        return found
    for candidate in ("g++", "clang++", "c++"):
        found = shutil.which(candidate)
        if found:
            return found
    raise CompileError(f"fusekit compiles C++ kernels with your C++ compiler and found none (g++, clang++, c++); "
                       f"{INSTALL_HINT}")


@lru_cache(maxsize=None)
def _version(cxx: str) -> str:
    return subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def cache_dir() -> Path:
    root = os.environ.get("FUSEKIT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "fusekit")
    return Path(root) / "cpp"


@dataclass(frozen=True)
class Built:
    """A compiled library: its path, whether the cache had it, the seconds building (or finding) it took, the
    text it was compiled from."""

    path: Path
    cached: bool
    seconds: float
    text: str = ""


def build(unit: str, source_dir: Path, defines: dict[str, str] | None = None, *,
          finish: Callable[[str], str] | None = None) -> Built:
    """The shared library compiled from the translation unit ``unit`` (C++ text; its quoted includes are found in
    ``source_dir`` first).

    Args:
        unit: the C++ to compile.
        source_dir: the user's source folder (``#include "data_utils.h"``).
        defines: ``-D NAME=VALUE`` definitions (a value of None or "" defines NAME as 1, as the compiler does).
        finish: turns the preprocessed unit into the text compiled (:mod:`fusekit.cpp.glue` adds the kernels'
            entries there, found in the code the preprocessor kept).

    Raises:
        CompileError: the compiler is missing or rejects the source.
    """
    started = time.perf_counter()
    cxx = compiler()
    flags = [f"-D{name}" if value in (None, "") else f"-D{name}={value}" for name, value in (defines or {}).items()]
    flags += ["-I", str(INCLUDE), "-iquote", str(source_dir)]
    preprocessed = _run([cxx, *FLAGS[:1], *flags, "-E", "-x", "c++", "-"], unit)
    if finish is not None:
        preprocessed = finish(preprocessed)
    key = hashlib.sha256(json.dumps([_version(cxx), FLAGS, flags, preprocessed]).encode()).hexdigest()[:32]
    library = cache_dir() / f"{key}.so"
    if library.is_file():
        return Built(library, True, time.perf_counter() - started, preprocessed)
    library.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(suffix=".so.partial", dir=library.parent)
    os.close(fd)
    try:
        _run([cxx, *FLAGS, "-x", "c++-cpp-output", "-", "-o", partial], preprocessed)
        os.replace(partial, library)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return Built(library, False, time.perf_counter() - started, preprocessed)


def _run(command: list[str], stdin: str) -> str:
    # LC_ALL=C: plain ASCII quotes in the messages, as explain() reads them
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if done.returncode != 0:
        raise CompileError(explain(done.stderr))
    return done.stdout


_UNDECLARED = re.compile(r"'(?:AscendC::)?(\w+)' is not a member of 'AscendC'|"
                         r"'(?:const )?(?:class|struct) AscendC::(\w+)(?:<[^']*>)?' has no member named '(\w+)'|"
                         r"'([A-Z]\w*[a-z]\w*)' was not declared in this scope")
# the usual mistakes in Ascend C code, and their fix, by the compiler message they cause
_HINTS = (
    (re.compile(r"has no member named '(SyncIO|SyncCompute)'"),
     "Ascend C's TPipe has no SyncIO or SyncCompute: the queues order the stages (CopyIn's EnQue, then Compute's "
     "DeQue waits for the copy; Compute's EnQue, then CopyOut's DeQue); delete the call"),
    (re.compile(r"'aclrt[lL]aunchOp' was not declared"),
     "aclrtlaunchOp is not an ACL call: launch the kernel with KERNEL<<<blockDim, nullptr, stream>>>(args...)"),
    (re.compile(r"'const class gert::StorageShape' has no member named 'GetDim"),
     "GetInputShape(i) gives a gert::StorageShape: read the dims of ->GetStorageShape() (or ->GetOriginShape())"),
    (re.compile(r"'class gert::TilingContext' has no member named 'GetCoreNum'"),
     "a TilingContext has no GetCoreNum: ask the platform, platform_ascendc::PlatformAscendC("
     "context->GetPlatformInfo()).GetCoreNumAiv()"),
    (re.compile(r"no matching function for call to 'gert::TilingContext::GetTilingData\(\)'"),
     "GetTilingData<T>() takes the tiling struct as its template argument; for raw bytes use "
     "context->GetRawTilingData()->GetData() and ->SetDataSize(bytes)"),
    (re.compile(r"no match for call to '\((?:const )?fusekit::Launcher<"),
     "the <<<...>>> launch passes other arguments than the kernel's parameters (their number or their types)"),
    (re.compile(r"undefined reference to"),
     "the function is declared but defined in another file: fusekit compiles one source with what it #includes; "
     "include the file that defines it"),
    (re.compile(r"couldn't deduce template parameter"),
     "this call needs its template argument written out (AllocTensor<half>(), DeQue<half>(), GetValue<T>)"),
    (re.compile(r"no matching function for call to '(AscendC::\w+)"),
     "check the arguments of {0} against its API reference: the destination comes first, then the sources, "
     "scalars, the count"),
)


def explain(messages: str, limit: int = 16) -> str:
    """The compiler's errors (the first ``limit`` lines that say where), each followed by the fix of a usual
    Ascend C mistake where one applies, then a note for each Ascend C call or member fusekit's headers do not
    declare: not simulated, named."""
    all_lines = messages.splitlines()
    errors = [k for k, line in enumerate(all_lines) if _is_error(line)]
    blocks = [all_lines[k:errors[n + 1] if n + 1 < len(errors) else len(all_lines)] for n, k in enumerate(errors)]
    out = []
    for block in _by_line_and_column(blocks)[:limit]:  # a block: an error with its notes
        out.append(block[0])
        text = "\n".join(block)
        out += [f"  hint: {hint.format(*m.groups())}" for pattern, hint in _HINTS if (m := pattern.search(text))][:1]
        snake = re.search(r"'([a-z]+(?:_[a-z0-9]+)+)' was not declared", block[0])
        if snake and snake.group(1) in _pyasc_functions():
            out.append(f"  hint: {snake.group(1)} is pyasc's Python name; in C++ it is AscendC::"
                       f"{_camel(snake.group(1))}")
    notes = []
    for m in _UNDECLARED.finditer(messages):
        name = m.group(1) or (f"{m.group(2)}::{m.group(3)}" if m.group(2) else m.group(4))
        if m.group(2) and any(p.search(f"has no member named '{m.group(3)}'") for p, _ in _HINTS[:1]):
            continue  # not Ascend C at all: the hint says what to write
        note = (f"AscendC::{name} is not simulated by fusekit's C++ front end (or is not Ascend C: check its "
                "spelling against the API reference)")
        if note not in notes and not name.startswith("aclrt"):
            notes.append(note)
    if not errors:
        out = messages.strip().splitlines()[:limit]
    return "\n".join(out) + "".join(f"\nnote: {n}" for n in notes)


_WHERE = re.compile(r"^(.*?):(\d+):(\d+):")


def _by_line_and_column(blocks: list[list[str]]) -> list[list[str]]:
    """The errors in the compiler's order of lines, those of one line by column (the call before its arguments)."""
    def where(block):
        m = _WHERE.match(block[0])
        return (m.group(1), int(m.group(2))) if m else (block[0], 0), int(m.group(3)) if m else 0

    first = {}
    for n, block in enumerate(blocks):
        first.setdefault(where(block)[0], n)
    return sorted(blocks, key=lambda b: (first[where(b)[0]], where(b)[1]))


def _is_error(line: str) -> bool:
    return ": error:" in line or ": fatal error:" in line or "undefined reference to" in line


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@lru_cache(maxsize=None)
def _pyasc_functions() -> frozenset[str]:
    from fusekit import asc

    return frozenset(name for name in dir(asc) if not name.startswith("_") and name.islower())
