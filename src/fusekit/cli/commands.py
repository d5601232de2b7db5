"""One parser per ``fusekit`` subcommand, and what each runs.

``run``, ``profile``, ``tune`` and ``emit`` work on an OP (:mod:`fusekit.cli.operator`): their parser
holds every option of the subcommand with no default, the OP says which of them it takes and gives
their defaults, and a given option it does not take is refused with the reason. ``check``,
``experiment``, ``validate-timing`` and ``conformance`` take no OP.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import textwrap
from pathlib import Path

from fusekit import tiling
from fusekit.check import DEFAULT_SIZES, CheckError, check_file
from fusekit.gen.catalogue import CATALOGUE
from fusekit.gen.project import ROW
from fusekit.ops import fused_add_scale as fas
from fusekit.ops.experiment import report as experiment_report
from fusekit.pyasc.npu import BACKENDS
from fusekit.soc import SOCS
from fusekit.timing import STUDY_NAMES

from . import conformance, program
from .common import ARG_HELP, DTYPES, Options, UsageError, bounded, kernel_args, named_file, names, real, sizes
from .operator import COMMANDS, bind, resolve
from .program import DEFINE_HELP, definition
from .refusals import refuse_foreign

NO_DEFAULT = argparse.SUPPRESS  # an option not given is left out, so the OP can tell what was given
OP_KINDS = ("fused_add_scale (shipped; --size or --x1/--x2, --scale, ...), a generated operator: the catalogue ("
            + ", ".join(n for n in CATALOGUE if n != "fused_add_scale") + "), FILE.py:NAME (a @fusekit.op in your "
            "file), FILE.py:KERNEL (your @asc.jit kernel, vector, cube or mix: --arg NAME=VALUE, --size N for its "
            "check_launch, --cores), a string expression such as 'silu(a) * b' (fusekit.define_op's), a C++ program "
            "FILE.asc (its "
            "main runs, its kernels on the simulator; -D NAME=VALUE, --soc), or a CANN operator project DIR (op_host/, "
            "op_kernel/; --input, --shape, --attr, --expect)")
EPILOG = ("Generated operators (the catalogue: swiglu, add_rms_norm, layer_norm, ..., and on the cube matmul_bias, "
          "attention_score, ...; FILE.py:NAME, a @fusekit.op in your file; or an expression) take --shape N [C ...] "
          "(or --size N; a matmul operator's is every operand's, default 512 512), --input NAME=FILE.npy and --attr "
          "NAME=VALUE; fused_add_scale takes --size or --x1/--x2 and --scale; FILE.py:KERNEL takes --arg NAME=VALUE (a "
          "literal, FILE.npy, zeros:DTYPE:SHAPE, random:DTYPE:SHAPE), else its check_launch(size, dtype) for --size, "
          "and --cores (block_dim). An option that does not apply to the operator is refused with the reason.")


def operator_command(command: str):
    """The handler of ``command OP``: resolve OP, bind its options, run the command on it."""
    def handle(args: argparse.Namespace) -> int:
        try:
            op = resolve(args.op, command)
        except argparse.ArgumentTypeError as exc:
            args.parser.error(f"argument OP: {exc}")
        if hasattr(args, "size") and hasattr(args, "shape"):  # given ones only (NO_DEFAULT): never one silently
            args.parser.error(f"argument --shape: --size N is the 1-D --shape N; give one of them, not both (got --size "
                              f"{args.size} and --shape {' '.join(map(str, args.shape))})")
        bind(args.options, op, command, args)
        problem = op.validate(command, args)
        if problem:
            args.parser.error(problem)
        return op.execute(command, args)
    return handle


def add_run(sub) -> None:
    run = sub.add_parser("run", help="run an operator on the simulator and verify it",
                         description="Run an operator on the simulated NPU and verify it against its references.",
                         epilog=EPILOG, argument_default=NO_DEFAULT)
    options = Options(run)
    options.add_argument("op", metavar="OP", help=f"operator to run: {OP_KINDS}")
    _shape_options(options)
    src = options.add_argument_group("fused_add_scale's input (random data of --size, or two .npy files)")
    src.add_argument("--x1", type=Path, help=".npy file with x1")
    src.add_argument("--x2", type=Path, help=".npy file with x2 (same shape and dtype as x1)")
    src.add_argument("--scale", type=real, help="the scale attribute (default 1.5)")
    options.add_argument("--soc", help="SoC to simulate (default Ascend910B1)")
    _core_options(options)
    options.add_argument("--overflow", choices=["inf_nan", "saturation"],
                         help="float overflow mode of the vector unit (default the SoC's: inf_nan on A2/A3, saturation "
                              "on 310P, which has no other)")
    options.add_argument("--seed", type=bounded(0, None), help="seed of the random input (default 0)")
    options.add_argument("-o", "--output", type=Path,
                         help="write the output to this .npy file (fused_add_scale: y), or every output to "
                              "DIR/NAME.npy (a generated operator; DIR is created); atomically")
    options.add_argument("-D", dest="define", action="append", type=definition, metavar="NAME[=VALUE]",
                         help=DEFINE_HELP)
    options.add_argument("--expect", metavar="FILE.npy|EXPR",
                         help="an operator project (DIR): the reference its output is compared with, a .npy file or a "
                              "numpy expression of the inputs and attributes, e.g. '(x1 + x2) * scale', evaluated "
                              "in float64 with the attributes as given (a kernel that rounds an attribute to half "
                              "differs by that: write np.float16(alpha) then)")
    options.add_argument("--sanitize", action="store_true",
                         help="also run the sanitizer (memcheck, racecheck, initcheck, synccheck); exit 1 on findings")
    options.add_argument("--source", action="store_true", help="print the generated kernel (a generated operator)")
    options.add_argument("--auto-sync", action=argparse.BooleanOptionalAction,
                         help="fused_add_scale: the kernel is built with automatic synchronisation, as CANN's projects "
                              "and pyasc build (default: the kernel's @asc.jit(auto_sync=), else on); --no-auto-sync: "
                              "dependent instructions of one pipe need pipe_barrier, and the sanitizer reports a pair "
                              "without one")
    options.add_argument("--backend", choices=list(BACKENDS),
                         help="fused_add_scale: simulator (default), or npu / camodel through pyasc and CANN (untested "
                              "without Ascend hardware)")
    run.set_defaults(func=operator_command("run"), parser=run, options=options)


def add_profile(sub) -> None:
    profile = sub.add_parser("profile", help="predict an operator's per-pipe timeline and time on the NPU",
                             description="Run an operator on the simulator and predict its time with the timing "
                                         "model (fusekit.timing): kernel time, pipe utilisation, GM bandwidth; a "
                                         "generated operator's fused kernel against the unfused chain of one kernel "
                                         "per primitive, and the share of launch overhead.",
                             epilog=EPILOG, argument_default=NO_DEFAULT)
    options = Options(profile)
    options.add_argument("op", metavar="OP", help=f"operator: {OP_KINDS}")
    _shape_options(options, only_shapes=True)
    options.add_argument("--soc", help="SoC to simulate (default Ascend910B1)")
    _core_options(options)
    options.add_argument("-D", dest="define", action="append", type=definition, metavar="NAME[=VALUE]",
                         help=DEFINE_HELP)
    out = options.add_argument_group("timeline files (the fused kernel of a generated operator)")
    out.add_argument("--trace", type=Path, help="write a Chrome-trace timeline (open in ui.perfetto.dev)")
    out.add_argument("--plot", type=Path, help="write a PNG of the timeline and pipe utilisation (needs matplotlib)")
    out.add_argument("--csv", type=Path, help="write PipeUtilization.csv (msprof's columns)")
    profile.set_defaults(func=operator_command("profile"), parser=profile, options=options)


def add_tune(sub) -> None:
    tune = sub.add_parser("tune", help="search tile length, BUFFER_NUM and cores for the lowest predicted time",
                          description="Search the kernel's tile, BUFFER_NUM and core count for the lowest predicted "
                                      "time.", epilog=EPILOG, argument_default=NO_DEFAULT)
    options = Options(tune)
    options.add_argument("op", metavar="OP", help=f"operator: {OP_KINDS}")
    _shape_options(options, only_shapes=True, size=bounded(None, None))
    options.add_argument("--soc", help="SoC to simulate (default Ascend910B1)")
    options.add_argument("--buffer-num", type=bounded(1, 8), help="FILE.py:KERNEL: BUFFER_NUM given to its guessed "
                                                                  "tiling (default 2); the others search it")
    _precision(options)
    tune.set_defaults(func=operator_command("tune"), parser=tune, options=options)


def add_emit(sub) -> None:
    emit = sub.add_parser("emit", help="trace a kernel with pyasc into Ascend C (needs ascend-fusekit[pyasc])",
                          description="Trace an operator's kernels, or your own kernel (FILE:KERNEL), with Huawei's "
                                      "pyasc and write the Ascend C C++ and the MLIR dumps, or a CANN custom-operator "
                                      "project.", argument_default=NO_DEFAULT,
                          epilog="Generated operators (the catalogue: swiglu, add_rms_norm, ...; or FILE.py:NAME, a "
                                 "@fusekit.op in your file) take --row, --buffer-num, --out and --project; shipped "
                                 "operators and FILE:KERNEL take --tile-length, and FILE:KERNEL --arg.")
    options = Options(emit)
    options.add_argument("op", metavar="OP|FILE:KERNEL",
                         help="fused_add_scale, unfused_add_muls, a generated operator, or a kernel file and name, "
                              "e.g. my.py:scale_kernel")
    options.add_argument("--dtype", help="float16 (default for the shipped operators and FILE:KERNEL) or float32; a "
                                         "generated operator: one of its dtypes pyasc can emit (default its first)")
    options.add_argument("--precision", choices=list(fas.PRECISIONS))
    options.add_argument("--buffer-num", type=bounded(1, 8), help="BUFFER_NUM, 1 to 8 (default 2)")
    options.add_argument("--tile-length", type=bounded(1, None))
    options.add_argument("--row", type=int,
                         help=f"a generated operator: row length of the canonical layout traced (default {ROW}); the "
                              "kernel and the project take any row length that fits UB")
    options.add_argument("--arg", action="append", metavar="NAME=VALUE",
                         help="with FILE:KERNEL: " + ARG_HELP + " (emit needs the ConstExpr parameters' values)")
    options.add_argument("--out", type=Path, help="directory for the .cpp and .mlir files (default .)")
    options.add_argument("--project", type=Path, help="write a CANN custom-operator project (msopgen layout) here "
                                                      "instead")
    emit.set_defaults(func=operator_command("emit"), parser=emit, options=options)


def _shape_options(parser, *, only_shapes: bool = False, size=bounded(0, None)) -> None:
    """The options that say what the operator computes on: its size or shape, dtype, files, attributes."""
    parser.add_argument("--size", type=size, help="elements of random input (fused_add_scale: default 1000000, tune "
                                                  "needs it); for a generated operator the 1-D --shape N")
    parser.add_argument("--shape", type=int, nargs="+",
                        help="the output shape; fused_add_scale and FILE.py:KERNEL take a 1-D --shape N, the same "
                             "as --size N (give one of them). A generated operator's default: the --input files' "
                             "broadcast shape, else "
                             "1000000, or 1000 1024 for a row-tiled operator: last-axis reductions or a (C,) input "
                             "such as bias or gamma)")
    parser.add_argument("--dtype", help="element type: float16 (default), float32 or bfloat16; a generated operator: "
                                        "one of its dtypes (default: the --input files', else the operator's first)")
    parser.add_argument("--input", action="append", metavar="NAME=FILE.npy", type=named_file,
                        help="a generated operator's input NAME from a .npy file (repeatable); the other inputs are "
                             "random" + (" (only the shapes and dtypes count here)" if only_shapes else ""))
    parser.add_argument("--arg", action="append", metavar="NAME=VALUE", help="FILE.py:KERNEL: " + ARG_HELP)
    parser.add_argument("--attr", action="append", metavar="NAME=VALUE",
                        help="a generated operator's float attribute (repeatable); one not given takes its default, "
                             "and a required one (no default) not given is 1.0")


def _core_options(parser) -> None:
    """How the kernel is launched and computes: cores, BUFFER_NUM, tile, precision."""
    parser.add_argument("--cores", type=bounded(1, tiling.MAX_CORE_NUM),
                        help=f"most AIV cores (block_dim) to use, 1 to {tiling.MAX_CORE_NUM} (default: all of the "
                             "SoC's)")
    parser.add_argument("--buffer-num", type=bounded(1, 8),
                        help="BUFFER_NUM, buffers per queue, 1 to 8 (default 2: double buffering)")
    parser.add_argument("--tile-length", type=bounded(1, None),
                        help="tile length in elements (fused_add_scale: a multiple of 512 B; a generated operator: a "
                             "multiple of 512 B of the narrowest GM dtype, or rows per tile in a row-tiled kernel; "
                             "default: the most that fit UB)")
    _precision(parser)


def _precision(parser) -> None:
    parser.add_argument("--precision", choices=list(fas.PRECISIONS),
                        help="native: compute in the dtype; fp32: cast to float32 in UB (default: native, fp32 for "
                             "bfloat16)")


def add_check(sub) -> None:
    check = sub.add_parser("check", help="sanitize your own kernel file over a sweep of sizes",
                           description="Sanitize an @asc.jit kernel file at several sizes (zero, tiny, aligned, "
                                       "unaligned). The launch comes from --arg, from a check_launch(n, dtype) "
                                       "function in the file, or from guesses on the parameter names, printed for "
                                       "each size (see fusekit.check). Exit 0: no findings, 1: findings, 2: bad input.")
    options = Options(check)
    options.add_argument("file", metavar="FILE", help="Python file with the @asc.jit kernel (FILE.py, or FILE.py:KERNEL "
                                                    "for one of several), or a C++ program FILE.asc (its main runs "
                                                    "with every launch under the sanitizer)")
    options.add_argument("-D", dest="define", action="append", type=definition, metavar="NAME[=VALUE]",
                       help=DEFINE_HELP)
    options.add_argument("--kernel", help="kernel name, if the file has several")
    options.add_argument("--sizes", type=sizes(0, tiling.MAX_LAUNCH_ELEMENTS), default=None,
                       help=f"comma-separated element counts (default: the file's CHECK_SIZES, else "
                            f"{','.join(map(str, DEFAULT_SIZES))})")
    options.add_argument("--dtype", choices=list(DTYPES), help="element type (default: op_info.json's first, else float16)")
    options.add_argument("--soc", choices=list(SOCS), default=None, help="SoC to simulate (default Ascend910B1)")
    options.add_argument("--cores", type=bounded(1, tiling.MAX_CORE_NUM), default=None, help="most cores to use (default: all)")
    options.add_argument("--buffer-num", type=bounded(1, 8), default=2, help="BUFFER_NUM given to the tiling (default 2)")
    options.add_argument("--outputs", type=names, help="comma-separated GM parameters that are outputs")
    options.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help=ARG_HELP)
    options.add_argument("--replay", action="store_true", help="replay races in an adversarial order to show the "
                                                             "values the NPU could produce")
    options.add_argument("--no-strict", dest="strict", action="store_false",
                       help="reproduce the NPU's silent DataCopy round-down instead of stopping on it")
    options.add_argument("--auto-sync", action=argparse.BooleanOptionalAction, default=None,
                       help="the kernel is built with automatic synchronisation, as CANN's projects and pyasc build "
                            "(default: the kernel's @asc.jit(auto_sync=), else on); --no-auto-sync: dependent "
                            "instructions of one pipe need pipe_barrier, and the sanitizer reports a pair without one")
    options.add_argument("--json", action="store_true", help="print the reports as JSON")
    check.set_defaults(func=_check, options=options)


def _check(args: argparse.Namespace) -> int:
    if program.is_program(str(args.file)):
        return _check_program(args)
    path, kernel = _kernel_target(str(args.file), args.kernel)
    overrides, zeros = kernel_args(args.arg)
    outputs = sorted(set(args.outputs or []) | zeros) or None
    try:
        with contextlib.redirect_stdout(sys.stderr):  # device printf output must not mix into the report
            results = check_file(path, kernel=kernel, sizes=args.sizes, dtype=args.dtype, soc=args.soc,
                                 cores=args.cores, buffer_num=args.buffer_num, outputs=outputs, args=overrides,
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


def _kernel_target(text: str, kernel: str | None) -> tuple[Path, str | None]:
    """``check FILE.py[:KERNEL] [--kernel NAME]``: the file and the kernel's name.

    Raises:
        UsageError: KERNEL and --kernel both given and different, or OP is an operator, not a kernel file.
    """
    path, colon, name = text.rpartition(":")
    if colon and path.endswith(".py") and name.isidentifier():
        if kernel is not None and kernel != name:
            raise UsageError(f"{text} names kernel {name} but --kernel is {kernel}: give one of them")
        return Path(path), name
    if not Path(text).exists() and not text.endswith(".py"):
        try:
            op = resolve(text, "run")
        except (argparse.ArgumentTypeError, UsageError):
            op = None
        if op is not None:
            raise UsageError(f"{text} is an operator, not a kernel file: check sanitizes a Python file's @asc.jit "
                             f"kernel over a sweep of sizes (or a C++ program FILE.asc); fusekit run {shlex.quote(text)} --sanitize runs "
                             "an operator under the sanitizer")
    return Path(text), kernel


def _check_program(args: argparse.Namespace) -> int:
    """``check FILE.asc``: the program's main, every launch under the sanitizer (the size sweep is main's)."""
    given = [flag for flag, value, default in (("--kernel", args.kernel, None), ("--sizes", args.sizes, None),
                                               ("--arg", args.arg, []), ("--outputs", args.outputs, None),
                                               ("--dtype", args.dtype, None), ("--json", args.json, False))
             if value != default]
    if given:
        raise UsageError(f"{', '.join(given)} does not apply to {args.file}: a C++ program's main chooses its kernels, "
                         "sizes and arguments; check FILE.asc takes -D NAME=VALUE and --soc")
    result = program.execute(Path(args.file), dict(args.define or []), args.soc, "sanitize")
    return 0 if result.ok and result.launches else 1


def add_experiment(sub) -> None:
    experiment = sub.add_parser("experiment", help="the seed article's experiment, predicted: cores, BUFFER_NUM, fused "
                                                   "against the unfused Add + Muls")
    options = Options(experiment)
    options.add_argument("--soc", choices=list(SOCS), default=None)
    options.add_argument("--sizes", type=sizes(1, tiling.MAX_LAUNCH_ELEMENTS), default=(256 * 1024, 16 * 1024 * 1024),
                            help="comma-separated float16 element counts, each 1 to one launch's "
                                 f"{tiling.MAX_LAUNCH_ELEMENTS} (default 262144,16777216)")
    experiment.set_defaults(func=_experiment, options=options)


def _experiment(args: argparse.Namespace) -> int:
    for n in args.sizes:
        try:
            print(experiment_report(n, args.soc))
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    return 0


def add_validate_timing(sub) -> None:
    validate = sub.add_parser("validate-timing", help="the timing model against the published Atlas A2 studies, side by "
                                                      "side with the error")
    options = Options(validate)
    options.add_argument("--study", action="append", choices=STUDY_NAMES, help="one study (repeatable; default all)")
    validate.set_defaults(func=_validate_timing, options=options)


def _validate_timing(args: argparse.Namespace) -> int:
    """``fusekit validate-timing [--study NAME]``: print the model against the published studies
    (``fusekit.timing.studies``, with the seed article's ratio from the shipped operators' Traces,
    ``fusekit.ops.workloads``), side by side with the error. Exit 0: it reports, it does not judge."""
    from fusekit.ops import workloads
    from fusekit.timing.studies import report, validate

    print(report(validate(args.study, progress=lambda name: print(f"  {name} done", file=sys.stderr),
                          workloads=workloads)))
    return 0


def add_conformance(sub) -> None:
    conf = sub.add_parser("conformance", help="run pyasc's own tests and tutorials (your checkout), or Ascend C's "
                                              ".asc examples (asc-devkit), on the simulator and print a table")
    options = Options(conf)
    options.add_argument("paths", nargs="*", help="test files or folders of a pyasc checkout (default: python/tutorials, "
                                               "python/test/kernels, python/test/generalization of "
                                               "$FUSEKIT_PYASC_CHECKOUT), or folders of .asc examples (asc-devkit's "
                                               "examples/01_simd_cpp_api): each runs with its own gen_data.py and "
                                               "verify_result.py")
    options.add_argument("--no-sanitize", action="store_true", help="do not run the sanitizer on each kernel launch")
    options.add_argument("--verbose", action="store_true", help="also print pytest's tracebacks of failing tests")
    conf.set_defaults(func=lambda args: conformance.run(args.paths, sanitize=not args.no_sanitize, verbose=args.verbose),
                      options=options)


def lend_options(sub) -> None:
    """Give each subcommand's parser the options of all the others, hidden (:meth:`Options.borrow`), so that ``fusekit
    tune OP --cores 8``, ``fusekit check FILE --shape 4096`` or ``fusekit experiment --plot p.png`` is refused with the
    reason (:mod:`fusekit.cli.refusals`), not "unrecognized arguments". An OP subcommand refuses one once it knows the
    OP (:func:`fusekit.cli.operator.bind`); the others before they run."""
    tables = {name: parser.get_default("options") for name, parser in sub.choices.items()}
    for name, table in tables.items():
        table.borrow({other: t for other, t in tables.items() if other != name})
        if name not in COMMANDS:
            sub.choices[name].set_defaults(func=_refusing(name, table, sub.choices[name].get_default("func")))


def _refusing(command: str, table: Options, func):
    """``func``, after refusing an option of another subcommand given to ``command``."""
    def handle(args: argparse.Namespace) -> int:
        refuse_foreign(args, command, table)
        return func(args)
    return handle


SUBCOMMANDS = (add_run, add_check, add_profile, add_tune, add_experiment, add_emit, add_validate_timing,
               add_conformance)
