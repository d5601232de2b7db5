"""``fusekit`` command line.

``fusekit run fused_add_scale ...`` runs the operator on the simulated NPU, verifies it against
the references and prints the tiling plan, the verification summary and the speed.
Exit status: 0 pass, 1 verification (or kernel) failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import json
import math
import os
import re
import sys
import textwrap
import time
import types
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
from tqdm import tqdm

from fusekit import tiling
from fusekit.asc import KernelError
from fusekit.bridge import PyascMissing
from fusekit.check import DEFAULT_SIZES, CheckError, check_file, parse_arg
from fusekit.emit import emit, emit_file, kernel_file, parse_target
from fusekit.files import write_atomic, write_problem
from fusekit.npu import BACKENDS, BackendUnavailable
from fusekit.ops import fused_add_scale as fas
from fusekit.project import write_project
from fusekit.sanitizer import Report, analyze
from fusekit.soc import SOCS
from fusekit.timing import predict
from fusekit.timing.experiment import report as experiment_report
from fusekit.timing.tune import tune
from fusekit.verify import PrecisionWarning, compare

DTYPES = {"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}


class UsageError(Exception):
    """Bad user input: printed as one line, exit status 2."""


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    words = sys.argv[1:] if argv is None else list(argv)
    if len(words) > 1 and words[0] in ("run", "profile", "emit", "tune"):  # generated operators (fusekit.gen)
        from fusekit.gen.cli import is_generated, main as generated_main

        if words[1] not in OPS and is_generated(words[1], kernel_files=words[0] == "emit"):
            return generated_main(words)
    parser = _parser()
    args = parser.parse_args(_negative_values(sys.argv[1:] if argv is None else list(argv)))
    args.started = started
    try:
        return args.func(args)
    except KeyboardInterrupt:
        parser.exit(130, "fusekit: interrupted\n")
    except BrokenPipeError:  # `fusekit ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as exc:
        parser.exit(2, f"fusekit: error: {exc}\n")
    except MemoryError:
        parser.exit(2, "fusekit: error: not enough memory for this input; try a smaller --size or smaller files\n")
    except KernelError as exc:
        parser.exit(1, f"fusekit: kernel error: {exc}\n")
    except OSError as exc:  # a file the command reads or writes: the system's reason, in one line
        parser.exit(2, f"fusekit: error: {exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}\n")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: the problem and where to read more."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _negative_values(argv: list[str]) -> list[str]:
    """Let ``--scale -inf`` and ``--scale -1e3`` through: argparse would take them for options."""
    out = []
    for token in argv:
        if out and out[-1] == "--scale" and token.startswith("-"):
            out[-1] = f"--scale={token}"
        else:
            out.append(token)
    return out


OPS = {"fused_add_scale": "fusekit.ops.fused_add_scale"}  # operator name -> its host module


def lookup_op(name: str) -> types.ModuleType:
    """The host module of the operator ``name`` that ``run`` and ``profile`` take. One place to
    extend when operators come from elsewhere (generated ones, ``FILE:NAME``).

    The module provides what ``fusekit.ops.fused_add_scale`` does: ``run`` (returning a run with
    ``y``, ``precision``, ``soc``, ``tilings``, ``launches``, ``wall_s``), ``reference``, ``exact``,
    ``model_of``, ``overflow_warning``, ``KERNEL`` and ``PRECISIONS``.

    Raises:
        ValueError: no such operator; the message lists the known ones.
    """
    if name not in OPS:
        raise ValueError(f"unknown operator {name!r}; choose from {_all_ops()}")
    return importlib.import_module(OPS[name])


def _all_ops() -> str:
    """Every operator ``run``/``profile``/``tune`` take: hand-written, the generated catalogue, FILE.py:NAME."""
    from fusekit.gen.catalogue import CATALOGUE

    names = list(OPS) + [n for n in CATALOGUE if n not in OPS]
    return ", ".join(names) + ", or FILE.py:NAME (a @fusekit.op in your file)"


def _op(text: str) -> str:
    """argparse type of an operator name."""
    try:
        lookup_op(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


GENERATED_EPILOG = ("Generated operators (the catalogue: swiglu, add_rms_norm, layer_norm, ...; or FILE.py:NAME, a "
                    "@fusekit.op in your file) take their own options: fusekit {cmd} OP --shape N [C ...] [--dtype D] "
                    "[--attr NAME=VALUE]; see fusekit {cmd} swiglu --help.")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fusekit", description="Fused Ascend C operators on a simulated NPU.")
    parser.add_argument("--version", action="version", version=f"fusekit {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run an operator on the simulator and verify it",
                         description="Run an operator on the simulated NPU and verify it against its references.",
                         epilog=GENERATED_EPILOG.format(cmd="run"))
    run.add_argument("op", type=_op, metavar="OP", help=f"operator to run ({', '.join(OPS)})")
    src = run.add_argument_group("input (random data of --size, or two .npy files)")
    src.add_argument("--size", type=_bounded(0, None), help="elements of random input (default 1000000)")
    src.add_argument("--x1", type=Path, help=".npy file with x1")
    src.add_argument("--x2", type=Path, help=".npy file with x2 (same shape and dtype as x1)")
    run.add_argument("--dtype", choices=list(DTYPES), help="dtype of random input (default float16); with .npy "
                                                            "files it must match the files")
    run.add_argument("--scale", type=_real, default=1.5, help="the scale attribute (default 1.5)")
    run.add_argument("--soc", choices=list(SOCS), default=None, help="SoC to simulate (default Ascend910B1)")
    run.add_argument("--cores", type=_bounded(1, tiling.MAX_CORE_NUM), default=None,
                     help=f"most AIV cores (block_dim) to use, 1 to {tiling.MAX_CORE_NUM} (default: all of the SoC's)")
    run.add_argument("--buffer-num", type=_bounded(1, 8), default=2,
                     help="BUFFER_NUM, buffers per queue, 1 to 8 (default 2: double buffering)")
    run.add_argument("--precision", choices=list(fas.PRECISIONS), default=None,
                     help="native: compute in the dtype; fp32: cast to float32 in UB (default: native, fp32 for bfloat16)")
    run.add_argument("--overflow", choices=["inf_nan", "saturation"], default=None,
                     help="float overflow mode of the vector unit (default the SoC's: inf_nan on A2/A3, saturation "
                          "on 310P, which has no other)")
    run.add_argument("--seed", type=_bounded(0, None), default=0, help="seed of the random input (default 0)")
    run.add_argument("-o", "--output", type=Path, help="write y to this .npy file (atomically)")
    run.add_argument("--sanitize", action="store_true",
                     help="also run the sanitizer (memcheck, racecheck, initcheck, synccheck); exit 1 on findings")
    run.add_argument("--auto-sync", action=argparse.BooleanOptionalAction, default=None,
                     help="the kernel is built with automatic synchronisation, as CANN's projects and pyasc build "
                          "(default: the kernel's @asc.jit(auto_sync=), else on); --no-auto-sync: dependent "
                          "instructions of one pipe need pipe_barrier, and the sanitizer reports a pair without one")
    run.add_argument("--backend", choices=list(BACKENDS), default="simulator",
                     help="simulator (default), or npu / camodel through pyasc and CANN (untested without Ascend "
                          "hardware)")
    run.set_defaults(func=_run)

    check = sub.add_parser("check", help="sanitize your own kernel file over a sweep of sizes",
                           description="Sanitize an @asc.jit kernel file at several sizes (zero, tiny, aligned, "
                                       "unaligned). The launch comes from --arg, from a check_launch(n, dtype) "
                                       "function in the file, or from guesses on the parameter names, printed for "
                                       "each size (see fusekit.check). Exit 0: no findings, 1: findings, 2: bad input.")
    check.add_argument("file", type=Path, help="Python file with the @asc.jit kernel")
    check.add_argument("--kernel", help="kernel name, if the file has several")
    check.add_argument("--sizes", type=_sizes(0, tiling.MAX_LAUNCH_ELEMENTS), default=DEFAULT_SIZES,
                       help=f"comma-separated element counts (default {','.join(map(str, DEFAULT_SIZES))})")
    check.add_argument("--dtype", choices=list(DTYPES), help="element type (default: op_info.json's first, else float16)")
    check.add_argument("--soc", choices=list(SOCS), default=None, help="SoC to simulate (default Ascend910B1)")
    check.add_argument("--cores", type=_bounded(1, tiling.MAX_CORE_NUM), default=None, help="most cores to use (default: all)")
    check.add_argument("--buffer-num", type=_bounded(1, 8), default=2, help="BUFFER_NUM given to the tiling (default 2)")
    check.add_argument("--outputs", type=_names, help="comma-separated GM parameters that are outputs")
    check.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                       help="value of a kernel parameter (Python literal); repeatable")
    check.add_argument("--replay", action="store_true", help="replay races in an adversarial order to show the "
                                                             "values the NPU could produce")
    check.add_argument("--no-strict", dest="strict", action="store_false",
                       help="reproduce the NPU's silent DataCopy round-down instead of stopping on it")
    check.add_argument("--auto-sync", action=argparse.BooleanOptionalAction, default=None,
                     help="the kernel is built with automatic synchronisation, as CANN's projects and pyasc build "
                          "(default: the kernel's @asc.jit(auto_sync=), else on); --no-auto-sync: dependent "
                          "instructions of one pipe need pipe_barrier, and the sanitizer reports a pair without one")
    check.add_argument("--json", action="store_true", help="print the reports as JSON")
    check.set_defaults(func=_check)

    profile = sub.add_parser("profile", help="predict an operator's per-pipe timeline and time on the NPU",
                             description="Run an operator on the simulator and predict its time with the timing "
                                         "model (fusekit.timing): kernel time, pipe utilisation, GM bandwidth.",
                             epilog=GENERATED_EPILOG.format(cmd="profile"))
    _kernel_options(profile)
    profile.add_argument("--tile-length", type=_bounded(1, None), default=None,
                         help="tile length in elements (multiple of 512 B; default: the tiling's)")
    profile.add_argument("--trace", type=Path, help="write a Chrome-trace timeline (open in ui.perfetto.dev)")
    profile.add_argument("--plot", type=Path, help="write a PNG of the timeline and pipe utilisation (needs matplotlib)")
    profile.add_argument("--csv", type=Path, help="write PipeUtilization.csv (msprof's columns)")
    profile.set_defaults(func=_profile)

    tune = sub.add_parser("tune", help="search tile length, BUFFER_NUM and cores for the lowest predicted time",
                          epilog=GENERATED_EPILOG.format(cmd="tune"))
    tune.add_argument("op", type=_op, metavar="OP", help=f"operator ({', '.join(OPS)})")
    tune.add_argument("--size", type=_bounded(1, tiling.MAX_LAUNCH_ELEMENTS), required=True, help="elements")
    tune.add_argument("--dtype", choices=list(DTYPES), default="float16")
    tune.add_argument("--soc", choices=list(SOCS), default=None)
    tune.add_argument("--precision", choices=list(fas.PRECISIONS), default=None)
    tune.set_defaults(func=_tune)

    experiment = sub.add_parser("experiment", help="the seed article's experiment, predicted: cores, BUFFER_NUM, fused "
                                                   "against the unfused Add + Muls")
    experiment.add_argument("--soc", choices=list(SOCS), default=None)
    experiment.add_argument("--sizes", type=_sizes(1, tiling.MAX_LAUNCH_ELEMENTS), default=(256 * 1024, 16 * 1024 * 1024),
                            help="comma-separated float16 element counts, each 1 to one launch's "
                                 f"{tiling.MAX_LAUNCH_ELEMENTS} (default 262144,16777216)")
    experiment.set_defaults(func=_experiment)

    emit_cmd = sub.add_parser("emit", help="trace a kernel with pyasc into Ascend C (needs fusekit[pyasc])",
                              description="Trace a shipped operator's kernels, or your own kernel (FILE:KERNEL), with "
                                          "Huawei's pyasc and write the Ascend C C++ and the MLIR dumps, or a CANN "
                                          "custom-operator project (shipped operators).",
                              epilog="Generated operators (the catalogue: swiglu, add_rms_norm, ...; or FILE.py:NAME, "
                                     "a @fusekit.op in your file) take --row, --buffer-num, --out and --project; see "
                                     "fusekit emit swiglu --help.")
    emit_cmd.add_argument("op", metavar="OP|FILE:KERNEL",
                          help="fused_add_scale, unfused_add_muls, or a kernel file and name, e.g. my.py:scale_kernel")
    emit_cmd.add_argument("--dtype", choices=list(DTYPES), default="float16")
    emit_cmd.add_argument("--precision", choices=list(fas.PRECISIONS), default="native")
    emit_cmd.add_argument("--buffer-num", type=_bounded(1, 8), default=2)
    emit_cmd.add_argument("--tile-length", type=_bounded(1, None), default=None)
    emit_cmd.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                          help="with FILE:KERNEL: value of a kernel parameter, e.g. a ConstExpr tile size; repeatable")
    emit_cmd.add_argument("--out", type=Path, default=Path("."), help="directory for the .cpp and .mlir files (default .)")
    emit_cmd.add_argument("--project", type=Path, help="write a CANN custom-operator project (msopgen layout) here "
                                                       "instead")
    emit_cmd.set_defaults(func=_emit)

    from fusekit.timing import STUDY_NAMES, validate_timing_command  # issue 10: the model vs the published A2 studies
    validate = sub.add_parser("validate-timing", help="the timing model against the published Atlas A2 studies, side by "
                                                      "side with the error")
    validate.add_argument("--study", action="append", choices=STUDY_NAMES, help="one study (repeatable; default all)")
    validate.set_defaults(func=validate_timing_command)

    conf = sub.add_parser("conformance", help="run pyasc's own tests and tutorials (your checkout) on the simulator "
                                              "and print file, test, result, reason")
    conf.add_argument("paths", nargs="*", help="test files or folders of a pyasc checkout (default: python/tutorials, "
                                               "python/test/kernels, python/test/generalization of $FUSEKIT_PYASC_CHECKOUT)")
    conf.add_argument("--no-sanitize", action="store_true", help="do not run the sanitizer on each kernel launch")
    conf.add_argument("--verbose", action="store_true", help="also print pytest's tracebacks of failing tests")
    conf.set_defaults(func=lambda args: __import__("fusekit.conformance").conformance.run(
        args.paths, sanitize=not args.no_sanitize, verbose=args.verbose))
    return parser


def _kernel_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("op", type=_op, metavar="OP", help=f"operator ({', '.join(OPS)})")
    parser.add_argument("--size", type=_bounded(0, None), default=1_000_000,
                        help="elements (default 1000000)")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float16", help="element type (default float16)")
    parser.add_argument("--soc", choices=list(SOCS), default=None, help="SoC to simulate (default Ascend910B1)")
    parser.add_argument("--cores", type=_bounded(1, tiling.MAX_CORE_NUM), default=None, help="most AIV cores to use (default: all)")
    parser.add_argument("--buffer-num", type=_bounded(1, 8), default=2, help="BUFFER_NUM (default 2)")
    parser.add_argument("--precision", choices=list(fas.PRECISIONS), default=None,
                        help="native or fp32 (default: native, fp32 for bfloat16)")


def _bounded(lo: int, hi: int | None):
    """An argparse type: a whole number in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {value}" if hi is None else
                                             f"must be in [{lo}, {hi}], got {value}")
        return value
    return parse


def _real(text: str) -> float:
    """argparse type of --scale: a float (nan and inf are allowed; the verdict judges them)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _names(text: str) -> list[str]:
    """argparse type: comma-separated Python names."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if not x.isidentifier()]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"expected comma-separated parameter names, e.g. y,z; got {text!r}")
    return names


def _version() -> str:
    try:
        return importlib.metadata.version("fusekit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _sizes(lo: int, hi: int | None = None):
    """An argparse type: comma-separated whole numbers in [lo, hi]."""
    parse = _bounded(lo, hi)

    def sizes(text: str) -> tuple[int, ...]:
        values = tuple(parse(part) for part in text.split(",") if part.strip())
        if not values:
            raise argparse.ArgumentTypeError("expected comma-separated element counts, e.g. 0,17,4096")
        return values
    return sizes


def _check(args: argparse.Namespace) -> int:
    try:
        overrides = dict(parse_arg(text) for text in args.arg)
        with contextlib.redirect_stdout(sys.stderr):  # device printf output must not mix into the report
            results = check_file(args.file, kernel=args.kernel, sizes=args.sizes, dtype=args.dtype, soc=args.soc,
                                 cores=args.cores, buffer_num=args.buffer_num, outputs=args.outputs, args=overrides,
                                 replay=args.replay, strict=args.strict, auto_sync=args.auto_sync)
    except (CheckError, TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps([{"n": r.n, "block_dim": r.block_dim, "arguments": r.arguments,
                           **json.loads(r.report.to_json())} for r in results], indent=2))
    else:
        for r in results:
            print(f"n = {r.n}: launched {r.describe_launch()}")
            print(textwrap.indent(r.report.to_text(), "  "))
    return 1 if any(not r.report.ok for r in results) else 0


def _profile(args: argparse.Namespace) -> int:
    for path, option in ((args.trace, "--trace"), (args.plot, "--plot"), (args.csv, "--csv")):
        if path is not None:
            _check_writable(path, option)
    if args.plot is not None:
        if args.size == 0:
            raise UsageError("--plot: nothing to plot at --size 0 (no kernel is launched)")
        _require_matplotlib()
    op = lookup_op(args.op)
    plan = _plan_or_usage_error(args)  # before allocating: a size the kernel cannot take fails at once
    x1, x2 = _random(args.size, args.dtype, seed=0)
    with tqdm(total=plan.block_dim, desc="simulating cores", unit="core", disable=None if plan.total_length >= 2**22 else True,
              file=sys.stderr) as bar:
        try:
            result = op.run(x1, x2, 1.5, soc=args.soc, core_num=args.cores, buffer_num=args.buffer_num,
                            precision=args.precision, tile_length=args.tile_length, progress=bar.update)
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    _print_tiling(result.tilings, result.soc)
    prof = predict([launch.trace for launch in result.launches], result.soc)
    print(prof.table())
    for path, write in ((args.trace, prof.write_trace), (args.plot, prof.plot), (args.csv, prof.write_csv)):
        if path is not None:
            try:
                write(path)
            except (OSError, ImportError, ValueError) as exc:
                raise UsageError(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None
            print(f"wrote {path}")
    return 0


def _require_matplotlib() -> None:
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed: pip install 'fusekit[plot]' (or drop "
                         "--plot; --trace and --csv need nothing more)") from None


def _plan_or_usage_error(args: argparse.Namespace) -> tiling.TilingData:
    if args.size > tiling.MAX_LAUNCH_ELEMENTS:
        raise UsageError(f"--size {args.size} is more than one launch takes ({tiling.MAX_LAUNCH_ELEMENTS}: the kernel's "
                         "lengths are int32); profile a smaller size, the time grows linearly")
    try:
        return tiling.compute_tiling(args.size, args.dtype, buffer_num=args.buffer_num, soc=args.soc,
                                     core_num=args.cores, tile_length=args.tile_length)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _tune(args: argparse.Namespace) -> int:
    with tqdm(desc="timing configurations", unit="config", file=sys.stderr, disable=None if args.size >= 2**22 else True) as bar:
        try:
            result = tune(args.size, args.dtype, soc=args.soc, precision=args.precision, progress=bar.update)
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    print(f"FusedAddScale, {args.size:,} {args.dtype}: {len(result.tried)} configurations timed on the model")
    for label, plan, us in (("best", result.best, result.best_us), ("default", result.default, result.default_us)):
        print(f"  {label:<8} {us:10.2f} us  block_dim {plan.block_dim}, tile_length {plan.tile_length}, BUFFER_NUM "
              f"{plan.buffer_num} (block_length {plan.block_length}, tile_num {plan.tile_num}, tail_length "
              f"{plan.tail_length}; last core {plan.last_block_length} = {plan.last_tile_num} x {plan.tile_length} + "
              f"{plan.last_tail_length})")
    print(f"  the default tiling is {result.default_gap:.1%} slower than the best found")
    return 0


def _emit(args: argparse.Namespace) -> int:
    try:
        target = parse_target(args.op)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if target is None and args.op not in ("fused_add_scale", "unfused_add_muls"):
        from fusekit.gen.catalogue import CATALOGUE

        raise UsageError(f"unknown operator {args.op!r}: emit takes fused_add_scale, unfused_add_muls, or your kernel "
                         "as FILE:KERNEL (e.g. my_kernel.py:scale_kernel), a generated operator "
                         f"({', '.join(n for n in CATALOGUE if n != 'fused_add_scale')}) or FILE.py:NAME "
                         "(a @fusekit.op)")
    if target is None and args.arg:
        raise UsageError("--arg is for your own kernel (FILE:KERNEL); a shipped operator's constants come from "
                         "--buffer-num, --tile-length and --precision")
    if args.project is not None:
        if target is not None:
            raise UsageError("--project writes a shipped operator's CANN project (it needs the operator's op_info.json "
                             "and host tiling); for your own kernel use --out DIR")
        if args.dtype != "float16" or args.precision != "native" or args.tile_length is not None:
            raise UsageError("--project emits every dtype of the prototype that pyasc supports, natively, with "
                             "the default tiling: drop --dtype, --precision and --tile-length")
        _check_writable(args.project, "--project", directory=True)
    else:
        _check_writable(args.out, "--out", directory=True)
    try:
        if target is not None:
            overrides = dict(parse_arg(text) for text in args.arg)
            loaded = kernel_file(target[0], target[1], overrides, dtype=args.dtype, buffer_num=args.buffer_num,
                                 tile_length=args.tile_length)
            results = [emit_file(loaded, args.dtype, out_dir=args.out)]
        elif args.project is not None:
            files = write_project(args.op, args.project, buffer_num=args.buffer_num)
            print(f"wrote a CANN custom-operator project for {args.op} in {args.project} ({len(files)} files); "
                  "building it needs CANN (bash build.sh), which was not tried here")
            return 0
        else:
            results = emit(args.op, args.dtype, out_dir=args.out, buffer_num=args.buffer_num,
                           tile_length=args.tile_length, precision=args.precision)
    except (PyascMissing, ValueError) as exc:
        raise UsageError(str(exc)) from None
    for result in results:
        calls = sorted(set(re.findall(r"AscendC::(\w+)", result.cpp)))
        print(f"{result.kernel} ({result.dtype}, {result.constants}): {', '.join(str(f) for f in result.files)}")
        print(f"  Ascend C calls: {', '.join(calls)}")
    return 0


def _experiment(args: argparse.Namespace) -> int:
    for n in args.sizes:
        try:
            print(experiment_report(n, args.soc))
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    return 0


def _random(n: int, dtype_name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    _check_memory(n, np.dtype(DTYPES[dtype_name]).itemsize, copies=8)  # inputs, GM copies, output, references
    rng = np.random.default_rng(seed)
    try:
        return tuple(rng.standard_normal(n, dtype=np.float32).astype(DTYPES[dtype_name]) for _ in range(2))
    except (MemoryError, ValueError):
        raise UsageError(f"--size {n} does not fit in memory ({n * 4 / 2**30:.1f} GiB per random input)") from None


def _run(args: argparse.Namespace) -> int:
    op = lookup_op(args.op)
    x1, x2, origin = _inputs(args)
    if args.output is not None:
        _check_writable(args.output)
    n = x1.size
    large = n >= PROGRESS_ELEMENTS
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrecisionWarning)
        try:
            with tqdm(desc="simulating cores", unit="core", file=sys.stderr, disable=None if large else True) as bar:
                options = {"progress": bar.update} if args.backend == "simulator" else {}
                if args.auto_sync is not None and args.backend == "simulator":
                    options["auto_sync"] = args.auto_sync
                if args.overflow is not None:
                    options["overflow"] = args.overflow
                result = op.run(x1, x2, args.scale, soc=args.soc, core_num=args.cores, buffer_num=args.buffer_num,
                                precision=args.precision, backend=args.backend, **options)
        except (TypeError, ValueError, BackendUnavailable) as exc:
            raise UsageError(str(exc)) from None
        except KernelError as exc:
            if not args.sanitize:
                raise
            print(Report(op.KERNEL.__name__, exc.trace.block_dim, analyze(exc.trace, error=exc, outputs={"y"}),
                         exc).to_text())
            return 1
    notes = [str(w.message) for w in caught if issubclass(w.category, PrecisionWarning)]

    print(f"FusedAddScale  y = (x1 + x2) * scale   [{origin}; {x1.dtype} {list(x1.shape)}, n = {n:,}; "
          f"scale = {args.scale:g}]")
    soc = result.soc
    print(f"SoC {soc.name}: {soc.vector_cores} AIV cores, UB {soc.ub_bytes} B; precision {result.precision}; "
          f"BUFFER_NUM {args.buffer_num}")
    _print_tiling(result.tilings, soc)

    ok = _verify(op, x1, x2, args.scale, result, notes, large)
    instructions = sum(len(launch.trace) for launch in result.launches)
    if args.output is not None:
        _save_atomic(args.output, result.y)
        print(f"wrote y to {args.output}")
    if args.sanitize and args.backend != "simulator":
        print(f"sanitizer: skipped, the {args.backend} backend records no Trace")
    elif args.sanitize:
        reports = [Report(op.KERNEL.__name__, launch.trace.block_dim, analyze(launch.trace, outputs={"y"}))
                   for launch in result.launches]
        print("sanitizer: " + ("no findings" if all(r.ok for r in reports) else
                               "\n".join(r.to_text() for r in reports if not r.ok)))
        ok = ok and all(r.ok for r in reports)
    rate = n / result.wall_s / 1e6 if result.wall_s > 0 else 0.0
    print(f"time: wall {result.wall_s:.3g} s simulating ({instructions:,} instructions, {rate:.3g} M elements/s); "
          f"whole command {time.perf_counter() - args.started:.3g} s")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


PROGRESS_ELEMENTS = 2**22  # inputs from this size show progress bars (on a terminal)


def _verify(op, x1: np.ndarray, x2: np.ndarray, scale: float, result, notes: list[str], large: bool) -> bool:
    """Print the verification against the op's model and the exact result; True if it passes."""
    print("verification")
    message = op.overflow_warning(x1, x2, scale, result.y, result.precision)
    for note in notes + ([message] if message else []):
        print(f"  warning: {note}")
    model = op.model_of(result.precision)
    exact = lambda part: op.exact(x1, x2, scale, part)  # noqa: E731 - the real-number result, chunk by chunk
    mode = getattr(result, "overflow", "inf_nan")  # the SoC's overflow mode, which the model follows
    with tqdm(total=4 * x1.size, desc="verifying", unit="element", unit_scale=True, file=sys.stderr,
              disable=None if large else True) as bar:
        expected = op.reference(x1, x2, scale, model, progress=bar.update, overflow_mode=mode)
        checks = [compare(result.y, expected, reference=model, progress=bar.update)]
        del expected  # bounded memory: one reference at a time
        expected = op.reference(x1, x2, scale, "exact", progress=bar.update)
        checks.append(compare(result.y, expected, reference="exact", exact=exact, progress=bar.update))
    for check in checks:
        print("  " + check.summary())
        if not check.passed:
            print(f"    why: {check.reason()}")
    ok = checks[0].bit_identical and all(c.passed for c in checks)
    if not math.isfinite(scale) and x1.size:
        outputs = "NaN" if math.isnan(scale) else "+-inf (NaN where x1 + x2 = 0)"
        print(f"  FAIL: scale is {scale}, not a real number, so every output is {outputs} and there is no real-number "
              "result to verify against")
        ok = False
    if not checks[0].bit_identical:
        print(f"  the simulator's output differs from its {model} model: please report this as a fusekit bug")
    causes = dict(checks[1].reasons)
    fp32_helps = checks[1].mismatches > checks[1].allowed or causes.get("inf") or causes.get("nan")
    if not checks[1].passed and result.precision == "native" and fp32_helps:
        print(f"  hint: native mode rounds scale to {x1.dtype} and every operation to {x1.dtype}; "
              "--precision fp32 computes in float32 and rounds once")
    return ok


def _print_tiling(plans: list[tiling.TilingData], soc) -> None:
    for i, plan in enumerate(plans):
        title = "tiling" if len(plans) == 1 else f"tiling, launch {i + 1} of {len(plans)}"
        if plan.block_dim == 0:
            print(f"{title}: total_length 0, nothing to launch")
            continue
        print(f"{title}: total_length {plan.total_length}  block_dim {plan.block_dim}  block_length "
              f"{plan.block_length}  tile_length {plan.tile_length}  BUFFER_NUM {plan.buffer_num}  UB {plan.ub_bytes} B")
        if plan.block_dim > soc.vector_cores:
            print(f"  note: block_dim {plan.block_dim} exceeds the {soc.vector_cores} AIV cores of {soc.name}; the NPU "
                  "runs the blocks in waves")
        if plan.block_dim > 1:
            print(f"  cores 0..{plan.block_dim - 2}: tile_num {plan.tile_num}, tail_length {plan.tail_length}")
        print(f"  core {plan.block_dim - 1} (last): block_length {plan.last_block_length}, tile_num "
              f"{plan.last_tile_num}, tail_length {plan.last_tail_length}")


def _inputs(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, str]:
    files = (args.x1, args.x2)
    if any(files):
        if not all(files):
            raise UsageError("--x1 and --x2 go together: pass both .npy files")
        if args.size is not None:
            raise UsageError("pass either --size (random input) or --x1/--x2 (.npy files), not both")
        x1, x2 = (_load(path, args.dtype) for path in files)
        return x1, x2, f"{args.x1}, {args.x2}"
    x1, x2 = _random(1_000_000 if args.size is None else args.size, args.dtype or "float16", args.seed)
    return x1, x2, f"random, seed {args.seed}"


def _load(path: Path, dtype_name: str | None) -> np.ndarray:
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory; pass a .npy file") from None
    except MemoryError:
        raise UsageError(f"{path}: its array does not fit in memory") from None
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{path} is not a readable .npy file ({exc}); save arrays with numpy.save") from None
    if not isinstance(data, np.ndarray):
        raise UsageError(f"{path} is an .npz archive; save a single array with numpy.save")
    if data.dtype == np.dtype("V2"):  # numpy stores ml_dtypes.bfloat16 as 2-byte void
        data = data.view(ml_dtypes.bfloat16)
    elif data.dtype.byteorder not in "=|":  # e.g. '>f2' from a big-endian writer: same values, native bytes
        data = data.astype(data.dtype.newbyteorder("="))
    if dtype_name is not None and data.dtype != DTYPES[dtype_name]:
        raise UsageError(f"{path} holds {data.dtype} but --dtype is {dtype_name}; convert the file or drop --dtype")
    return data


def _check_writable(path: Path, option: str = "-o", *, directory: bool = False) -> None:
    """Refuse before the run: ``path`` cannot be written (see ``fusekit.files.write_problem``)."""
    problem = write_problem(path, directory=directory)
    if problem:
        raise UsageError(f"{option} {path}: {problem}")


def _check_memory(n: int, itemsize: int, copies: int) -> None:
    """Refuse before allocating: ``copies`` arrays of n elements must fit in physical memory."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    need = n * itemsize * copies
    if need > physical:
        raise UsageError(f"--size {n} needs about {need / 2**30:.1f} GiB ({copies} arrays of {n:,} elements) but this "
                         f"machine has {physical / 2**30:.1f} GiB; choose a smaller --size")


def _save_atomic(path: Path, array: np.ndarray) -> None:
    try:
        write_atomic(path, lambda f: np.save(f, array))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


if __name__ == "__main__":
    sys.exit(main())
