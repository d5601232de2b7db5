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
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

INCLUDE = Path(__file__).with_name("include")
INSTALL_HINT = ("install one (Debian/Ubuntu: sudo apt install g++; Fedora: sudo dnf install gcc-c++; macOS: "
                "xcode-select --install) or set CXX to its path")
FLAGS = ("-std=c++20", "-O1", "-fPIC", "-shared", "-w")


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
    """A compiled library: its path, whether the cache had it, the seconds building (or finding) it took."""

    path: Path
    cached: bool
    seconds: float


def build(unit: str, source_dir: Path, defines: dict[str, str] | None = None) -> Built:
    """The shared library compiled from the translation unit ``unit`` (C++ text; its quoted includes are found in
    ``source_dir`` first).

    Args:
        unit: the C++ to compile (:func:`fusekit.cpp.glue.translation_unit`).
        source_dir: the user's source folder (``#include "data_utils.h"``).
        defines: ``-D NAME=VALUE`` definitions (a value of None or "" defines NAME as 1, as the compiler does).

    Raises:
        CompileError: the compiler is missing or rejects the source.
    """
    started = time.perf_counter()
    cxx = compiler()
    flags = [f"-D{name}" if value in (None, "") else f"-D{name}={value}" for name, value in (defines or {}).items()]
    flags += ["-I", str(INCLUDE), "-iquote", str(source_dir)]
    preprocessed = _run([cxx, *FLAGS[:1], *flags, "-E", "-x", "c++", "-"], unit)
    key = hashlib.sha256(json.dumps([_version(cxx), FLAGS, flags, preprocessed]).encode()).hexdigest()[:32]
    library = cache_dir() / f"{key}.so"
    if library.is_file():
        return Built(library, True, time.perf_counter() - started)
    library.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(suffix=".so.partial", dir=library.parent)
    os.close(fd)
    try:
        _run([cxx, *FLAGS, "-x", "c++-cpp-output", "-", "-o", partial], preprocessed)
        os.replace(partial, library)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return Built(library, False, time.perf_counter() - started)


def _run(command: list[str], stdin: str) -> str:
    # LC_ALL=C: plain ASCII quotes in the messages, as explain() reads them
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    if done.returncode != 0:
        raise CompileError(explain(done.stderr))
    return done.stdout


_UNDECLARED = re.compile(r"'(?:AscendC::)?(\w+)' (?:is not a member of 'AscendC'|was not declared in this scope)|"
                         r"'class AscendC::(\w+)(?:<[^']*>)?' has no member named '(\w+)'")


def explain(messages: str, limit: int = 12) -> str:
    """The compiler's errors (first ``limit`` lines that say where), with a note for each Ascend C call or
    member fusekit's headers do not declare: not simulated, named."""
    lines = [line for line in messages.splitlines() if ": error:" in line or ": fatal error:" in line]
    notes = []
    for m in _UNDECLARED.finditer(messages):
        name = m.group(1) or f"{m.group(2)}::{m.group(3)}"
        note = (f"AscendC::{name} is not simulated by fusekit's C++ front end (or is not Ascend C: check its "
                "spelling against the API reference)")
        if note not in notes:
            notes.append(note)
    text = "\n".join((lines or messages.strip().splitlines())[:limit])
    return text + ("".join(f"\nnote: {n}" for n in notes) if notes else "")
