"""OP = a C++ host program: ``fusekit run | profile FILE.asc`` (and ``check FILE.asc``), :mod:`fusekit.cpp.program`.

The program's ``main`` chooses its inputs, sizes and launches, so of the operator options only ``--soc``
applies; ``-D NAME=VALUE`` gives the compiler definitions the examples' CMake options give, ``run --sanitize``
runs every launch under the sanitizer, ``profile`` times every launch and writes ``--trace``, ``--plot`` and
``--csv`` as it does for the shipped operator.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fusekit.cpp import CompileError
from fusekit.cpp.program import ProgramError, ProgramResult, compile_program, run_program
from fusekit.soc import get_soc

from .common import UsageError, check_profile_files, write_profile_files

SUFFIXES = (".asc", ".cpp", ".cc", ".cxx")
DEFINE_HELP = ("a C++ program (FILE.asc): define a macro as the examples' CMake options do (-D SCENARIO_NUM=1); "
               "repeatable")


def is_program(text: str) -> bool:
    """Whether OP ``text`` names a C++ source file."""
    return Path(text).suffix in SUFFIXES


def definition(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` or ``NAME`` (defined as 1) of ``-D``."""
    name, _, value = text.partition("=")
    if not name.isidentifier():
        raise argparse.ArgumentTypeError(f"-D {text!r}: expected NAME or NAME=VALUE with NAME a C identifier")
    return name, value or "1"


class Program:
    """A ``.asc`` / ``.cpp`` file with ``main`` as the OP of ``run`` and ``profile``."""

    def __init__(self, text: str):
        self.name, self.path = text, Path(text)

    def options(self, command: str) -> dict[str, object]:
        common = {"soc": None, "define": []}
        if command == "run":
            return {**common, "sanitize": False}
        if command == "profile":
            return {**common, "trace": None, "plot": None, "csv": None}
        return {}

    def refusal(self, command: str, option: str) -> str:
        if command not in ("run", "profile"):
            return f"{command} works on pyasc kernels and operators; a C++ program runs with fusekit run or profile"
        return ("a C++ program's main chooses its own inputs, sizes and launches; it takes -D NAME=VALUE and --soc"
                + (" and --sanitize" if command == "run" else ", --trace, --plot and --csv"))

    def validate(self, command: str, args: argparse.Namespace) -> str | None:
        if command not in ("run", "profile"):
            return f"argument OP: {self.name} is a C++ program; {command} does not take one (use run or profile)"
        if not self.path.is_file():
            return f"argument OP: {self.name}: no such file"
        try:
            get_soc(args.soc)
        except ValueError as exc:
            return f"argument --soc: {exc}"
        return None

    def execute(self, command: str, args: argparse.Namespace) -> int:
        mode = "sanitize" if getattr(args, "sanitize", False) else "profile" if command == "profile" else "run"
        if command == "profile":
            check_profile_files(args)
        result = execute(self.path, dict(args.define), args.soc, mode)
        if command == "profile" and result.status == 0:
            from fusekit.timing import predict

            traces = [launch.trace for launch in result.launches]
            if not traces:
                raise UsageError(f"{self.name} launched no kernel: nothing to profile")
            prof = predict(traces, get_soc(args.soc).name)
            print(prof.table())
            write_profile_files(args, prof)
        return 0 if result.ok else 1


def execute(path: Path, defines: dict[str, str], soc: str | None, mode: str) -> ProgramResult:
    """Compile and run the program, printing what happened; a compile error or a program that cannot run is a
    UsageError."""
    try:
        library = compile_program(path, defines, soc)
    except (CompileError, ProgramError, ValueError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    how = "found in the cache" if library.build.cached else "compiled"
    print(f"{path.name}: {how} in {library.build.seconds:.2f} s; running its main on {library.soc.name}", flush=True)
    result = run_program(library, mode=mode)
    if result.error is not None:
        print(f"error: {result.error}")
    elif result.status != 0:
        print(f"error: {path.name}'s main returned {result.status}")
    elif mode == "sanitize":
        clean = all(launch.report.ok for launch in result.launches)
        print("sanitizer: " + ("no findings in " if clean else "findings above; ") + f"{len(result.launches)} launch(es)")
    return result
