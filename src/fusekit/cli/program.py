"""OP = C++: a host program (``fusekit run | profile FILE.asc``, :mod:`fusekit.cpp.program`) or a CANN operator
project (``fusekit run | profile DIR``, :mod:`fusekit.cpp.project`).

A program's ``main`` chooses its inputs, sizes and launches, so of the operator options only ``--soc``
applies; ``-D NAME=VALUE`` gives the compiler definitions the examples' CMake options give. A project takes its
inputs as a generated operator does (``--input NAME=FILE.npy``, the others random of ``--shape`` and
``--dtype``; ``--attr NAME=VALUE``) and checks its output against ``--expect`` (a ``.npy`` file, or a numpy
expression of the inputs and attributes). ``run --sanitize`` runs every launch under the sanitizer,
``profile`` times every launch and writes ``--trace``, ``--plot`` and ``--csv`` as it does for the shipped
operator.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import ml_dtypes
import numpy as np

from fusekit.asc import KernelError
from fusekit.cpp import CompileError
from fusekit.cpp.program import ProgramError, ProgramResult, compile_program, run_program
from fusekit.soc import get_soc
from fusekit.verify import compare

from .common import UsageError, check_profile_files, check_writable, load_npy, save_atomic, write_profile_files

SUFFIXES = (".asc", ".cpp", ".cc", ".cxx")
DEFINE_HELP = ("a C++ program (FILE.asc): define a macro as the examples' CMake options do (-D SCENARIO_NUM=1); "
               "repeatable")


def is_program(text: str) -> bool:
    """Whether OP ``text`` names a C++ source file."""
    return Path(text).suffix in SUFFIXES


def is_other_file(text: str) -> bool:
    """Whether OP ``text`` is an existing file no operator kind reads (``input/x.bin``)."""
    path = Path(text)
    return ":" not in text and path.suffix not in (*SUFFIXES, ".py") and path.is_file()


def is_project(text: str) -> bool:
    """Whether OP ``text`` names a folder: an operator project (op_host/ and op_kernel/; one that is not is
    refused with what a project holds)."""
    return Path(text).is_dir()


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
        return _soc_problem(args)

    def execute(self, command: str, args: argparse.Namespace) -> int:
        mode = "sanitize" if getattr(args, "sanitize", False) else "profile" if command == "profile" else "run"
        if command == "profile":
            check_profile_files(args)
        result = execute(self.path, dict(args.define), args.soc, mode)
        if command == "profile" and result.status == 0:
            traces = [launch.trace for launch in result.launches]
            if not traces:
                raise UsageError(f"{self.name} launched no kernel: nothing to profile")
            _print_profile(traces, args)
        return 0 if result.ok and result.launches else 1


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
    elif result.acl_failures:
        print(f"error: {result.acl_failures} ACL call(s) of {path.name} returned an error (said above)")
    elif not result.launches:
        print(f"error: {path.name}'s main returned 0 without launching a kernel (a <<<...>>> launch behind an #if, "
              "or an early return?): nothing ran on the simulator")
    elif mode == "sanitize":
        clean = all(launch.report.ok for launch in result.launches)
        print("sanitizer: " + ("no findings in " if clean else "findings above; ") + f"{len(result.launches)} launch(es)")
    return result


class ProjectOp:
    """A CANN operator project folder as the OP of ``run`` and ``profile``."""

    def __init__(self, text: str):
        self.name, self.path = text, Path(text)

    def options(self, command: str) -> dict[str, object]:
        common = {"soc": None, "input": [], "shape": None, "size": None, "dtype": None, "attr": []}
        if command == "run":
            return {**common, "sanitize": False, "expect": None, "output": None}
        if command == "profile":
            return {**common, "trace": None, "plot": None, "csv": None}
        return {}

    def refusal(self, command: str, option: str) -> str:
        if command not in ("run", "profile"):  # the first thing to say: no option of this command applies
            return f"{self.name} is an operator project and {command} does not take one (use run or profile)"
        return ("an operator project's host tiling chooses block_dim and tiles; it takes --input, --shape, --dtype, "
                "--attr, --soc" + (", --sanitize, --expect and -o" if command == "run" else ", --trace, --plot, --csv"))

    def validate(self, command: str, args: argparse.Namespace) -> str | None:
        if command not in ("run", "profile"):
            return f"argument OP: {self.name} is an operator project; {command} does not take one (use run or profile)"
        return _soc_problem(args)

    def execute(self, command: str, args: argparse.Namespace) -> int:
        from fusekit.cpp.isolate import Crashed
        from fusekit.cpp.project import ProjectError, describe_project, run_project

        if command == "profile":
            check_profile_files(args)
        if getattr(args, "output", None) is not None:
            check_writable(args.output)
        try:
            prototype = describe_project(self.path, args.soc)
            inputs = _project_inputs(prototype, args)
            attrs = _attrs(args.attr)
            _, result = run_project(self.path, inputs, attrs, soc=args.soc, sanitize=getattr(args, "sanitize", False))
        except (CompileError, ProjectError) as exc:
            raise UsageError(f"{self.name}: {exc}") from None
        except (KernelError, Crashed) as exc:
            print(f"error: {exc}")
            return 1
        t = result.tiling
        if not any(result.trace.cores):
            print(f"warning: the kernel ran no Ascend C instruction: does a TILING_KEY_IS branch take tiling key "
                  f"{t.key}?")
        print(f"{prototype.name}: tiling block_dim {t.block_dim}, tiling key {t.key}, {t.data.size} B of "
              f"tiling data, workspace {sum(t.workspaces)} B; {sum(len(c) for c in result.trace.cores)} instructions")
        if result.report is not None:
            print(result.report.to_text() if not result.report.ok else "sanitizer: no findings")
            if not result.report.ok:
                return 1
        if command == "profile":
            _print_profile([result.trace], args)
            return 0
        first = next(iter(result.outputs.values()))
        if args.output is not None:
            save_atomic(args.output, first)
            print(f"wrote {args.output}")
        if args.expect is None:
            print("no reference given: --expect FILE.npy, or an expression of the inputs and attributes such as "
                  "'(x1 + x2) * scale'")
            return 0
        expected, exact, reference = expected_of(args.expect, first, result.inputs, attrs)
        comparison = compare(first, expected, reference=reference, exact=exact)
        print(comparison.summary())
        return 0 if comparison.passed else 1


def _soc_problem(args: argparse.Namespace) -> str | None:
    try:
        get_soc(args.soc)
    except ValueError as exc:
        return f"argument --soc: {exc}"
    return None


def _print_profile(traces: list, args: argparse.Namespace) -> None:
    """profile's table of the launches' predicted time, and the --trace/--plot/--csv files asked for."""
    from fusekit.timing import predict

    prof = predict(traces, get_soc(args.soc).name)
    print(prof.table())
    write_profile_files(args, prof)


def _attrs(texts: list[str]) -> dict[str, float]:
    attrs = {}
    for text in texts:
        name, eq, value = text.partition("=")
        if name.strip() in attrs:
            raise UsageError(f"--attr {name.strip()} is given twice ({attrs[name.strip()]:g} and {value}): give it once")
        try:
            attrs[name.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--attr {text!r}: expected NAME=NUMBER") from None
        if not eq:
            raise UsageError(f"--attr {text!r}: expected NAME=NUMBER")
    return attrs


def _project_inputs(prototype, args: argparse.Namespace) -> dict[str, np.ndarray]:
    """The inputs: --input files, the others random of --shape (or --size) and --dtype."""
    given = {name: load_npy(path, None) for name, path in args.input}
    shape = tuple(args.shape) if args.shape else ((args.size,) if args.size is not None else (4096,))
    given_dtypes = {str(a.dtype) for a in given.values()}
    if args.dtype is None and len(given_dtypes) == 1:  # the random inputs take the given ones' dtype
        args.dtype = given_dtypes.pop()
    rng = np.random.default_rng(0)
    inputs = dict(given)
    for param in prototype.inputs:
        if param.name in inputs:
            continue
        dtype = args.dtype or (param.dtypes[0] if param.dtypes else "float16")
        if param.dtypes and dtype not in param.dtypes:
            raise UsageError(f"--dtype {dtype}: input {param.name} takes {', '.join(param.dtypes)}")
        if dtype in ("float16", "float32", "bfloat16"):
            values = rng.uniform(-4, 4, shape).astype(np.float32)
        else:
            values = rng.integers(-8, 8, shape) if not dtype.startswith("u") else rng.integers(0, 16, shape)
        inputs[param.name] = values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    return inputs


def expected_of(text: str, output: np.ndarray, inputs: dict, attrs: dict):
    """--expect (an operator project's, a kernel file's): a .npy file, or a numpy expression of ``inputs``
    (arrays, evaluated in float64) and ``attrs`` (numbers); (rounded to the output's dtype, the exact values or
    None, the reference's name).

    Raises:
        UsageError: an unreadable file or one of another shape, an expression that fails (its error and the names).
    """
    if text.endswith(".npy"):
        expected = load_npy(Path(text), None)
        if expected.shape != output.shape:
            raise UsageError(f"--expect {text} has shape {list(expected.shape)}; the output's is {list(output.shape)}")
        return expected.astype(output.dtype), None, text
    names = {k: v.astype(np.float64) for k, v in inputs.items()} | attrs | {"np": np}
    try:
        value = eval(compile(text, "--expect", "eval"), {"__builtins__": {}}, names)  # noqa: S307 - the user's own
        exact = np.broadcast_to(np.asarray(value, np.float64), output.shape)
    except Exception as exc:  # noqa: BLE001 - any error of the user's expression is a usage error
        raise UsageError(f"--expect {text!r}: {type(exc).__name__}: {exc} (names: {', '.join(names)})") from None
    return exact.astype(output.dtype), exact, f"--expect {text}"
