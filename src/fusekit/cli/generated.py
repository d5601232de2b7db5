"""``fusekit run|profile|tune|emit OP`` for generated operators: the catalogue's (swiglu, add_rms_norm, ...),
a user's FILE.py:NAME (a @fusekit.op in a Python file) and a string expression (``fusekit.define_op``'s
spelling, e.g. ``'silu(a) * b'`` or ``'x * s; s: attr'``).

    fusekit run swiglu --shape 1024 4096 --dtype float16 --sanitize
    fusekit run add_rms_norm --shape 64 4096 --attr eps=1e-5 --precision fp32
    fusekit run add_rms_norm --input x=x.npy --input gamma=g.npy -o out/   (out/y.npy, out/x_sum.npy)
    fusekit run swiglu --shape 4096 --buffer-num 1 --tile-length 1024 --overflow saturation --seed 7
    fusekit profile bias_gelu --shape 4096 4096
    fusekit run my_ops.py:swiglu --shape 1000
    fusekit run 'silu(a) * b' --shape 1000
    fusekit emit swiglu --dtype float16 --out out/      (needs pyasc: Ascend C and MLIR of the kernel)
    fusekit emit add_rms_norm --project AddRmsNorm/    (the CANN custom-operator project)
    fusekit tune add_rms_norm --shape 1024 4096

Inputs: ``--input NAME=FILE.npy`` takes one from a file (its dtype must be the input's GM dtype; the
files set ``--dtype`` when it is not given, and ``--shape`` to their broadcast shape); the others are
random, in signature order from ``numpy.random.default_rng(--seed)``: a floating input is
``standard_normal(shape, dtype=float32)`` cast to its dtype, an integer input ``integers(max(min, -1000),
min(max, 1000), shape)``, where ``shape`` is ``--shape`` or, for a catalogue input named bias, gamma,
beta, mask, scale or offset, its last axis. Without files or ``--shape`` the shape is (1000000,), or
(1000, 1024) for a row-tiled operator (last-axis reductions or such a (C,) input): its rows must fit UB
and be whole 32 B blocks of every dtype when element sizes differ (quantize_per_channel).
``profile`` and ``tune`` read only the inputs' shapes and dtypes. A required attribute not given to
``--attr`` is 1.0; ``run`` prints the attribute values it used.

``run``'s verdict: bit-exact to the operator's own model (``hardware``, or ``fp32``) and, in fp32 mode or in
float32, within the CANN samples' tolerance of ``exact``; an integer output within one quantisation step
(plus the compute dtype's relative tolerance) of ``exact`` in every mode (``GeneratedOp.check``). In native
float16/bfloat16 a float output's distance to ``exact`` is information, but an invalid output
(``Comparison.invalid``: NaN or infinite where the exact result is finite, and the other cases the README
lists), however few, fails, as FusedAddScale's verdict does. Each command returns the exit status (0:
verified; 1: a verification or sanitizer failure; 2: bad input, in one line). ``--size N`` is ``--shape N``.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from fusekit.asc import dtypes
from fusekit.gen import project
from fusekit.gen.catalogue import get
from fusekit.gen.graph import GraphError
from fusekit.gen.lookup import file_op, is_expression, load
from fusekit.gen.lower import natural_dtypes
from fusekit.gen.op import GeneratedOp
from fusekit.gen.perf import compare as perf_compare
from fusekit.gen.tune import tune
from fusekit.pyasc.bridge import PyascMissing
from fusekit.verify import PrecisionWarning

from .common import (UsageError, check_profile_files, check_writable, load_npy, print_tiling, random_array, save_all,
                     write_profile_files)

ROW_INPUTS = {"bias", "gamma", "beta", "mask", "scale", "offset"}  # catalogue inputs of shape (C,)

_SHARED = {"shape": None, "size": None, "dtype": None, "input": [], "precision": None, "soc": None,
           "attr": []}
# the options of each command for a generated operator, with their defaults (None: the operator's or the SoC's own)
_OPTIONS = {
    "run": _SHARED | {"cores": None, "buffer_num": 2, "tile_length": None, "overflow": None, "seed": 0, "output": None,
                      "sanitize": False, "source": False},
    "profile": _SHARED | {"cores": None, "buffer_num": 2, "tile_length": None, "trace": None, "plot": None,
                          "csv": None},
    "tune": _SHARED,  # tune searches the cores, the tile and BUFFER_NUM itself
    "emit": {"dtype": None, "precision": None, "row": project.ROW, "buffer_num": 2, "out": Path("."),
             "project": None},
}
# why a shipped operator's options do not apply to a generated one
_REFUSALS = {
    "define": "-D defines a macro of a C++ program (fusekit run FILE.asc -D NAME=VALUE)",
    "expect": "--expect is the reference of an operator project (fusekit run DIR); a generated operator is checked "
              "against its own references",
    "x1": "a generated operator's inputs are named: --input NAME=FILE.npy (repeatable), the others random",
    "x2": "a generated operator's inputs are named: --input NAME=FILE.npy (repeatable), the others random",
    "scale": "a generated operator's attributes are --attr NAME=VALUE",
    "backend": "a generated operator runs on the simulator only (the NPU path runs the shipped operators)",
    "auto_sync": "a generated kernel is written with its synchronisation (fusekit.gen.source), none is inserted",
    "tile_length": "emit traces a generated kernel at the tile that fits UB for --row",
    "arg": "--arg gives constants of your own kernel (FILE:KERNEL); a generated kernel's come from its plan",
}


class Generated:
    """A generated operator as the CLI runs it: a catalogue name, ``FILE.py:NAME`` or a string expression.
    It is loaded by the command (:func:`load`), so a file or an expression that fails says so as its error."""

    def __init__(self, name: str):
        self.name = name

    def options(self, command: str) -> dict:
        return _OPTIONS[command]

    def refusal(self, command: str, option: str) -> str:
        return _REFUSALS.get(option, f"{command} takes it for fused_add_scale only")

    def validate(self, command: str, args: argparse.Namespace) -> None:
        """Values are checked against the operator once it is loaded (its dtypes, attributes, inputs)."""
        return None

    def execute(self, command: str, args: argparse.Namespace) -> int:
        return _emit(args) if command == "emit" else _run(command, args)


def is_generated(name: str, kernel_files: bool = False) -> bool:
    """Whether ``fusekit run NAME`` means a generated operator (catalogue name, FILE.py:NAME or a string
    expression, see :func:`is_expression`).

    ``kernel_files``: the subcommand also takes ``FILE.py:KERNEL`` for a hand-written @asc.jit kernel (``emit``),
    so a FILE:NAME is a generated operator only when NAME in FILE is a @fusekit.op.
    """
    try:
        get(name)
        return True
    except KeyError:
        if is_expression(name, kernel_files):
            return True
        if not file_op(name):
            return False
    if not kernel_files:
        return True
    try:
        load(name)
        return True
    except Exception:  # noqa: BLE001 - any failure: the kernel-file path reports it in its own words
        return False


def attributes(op: GeneratedOp, items: list) -> dict:
    """The float attributes of ``--attr NAME=VALUE`` (each named, parsed as a float); a required attribute
    not given is 1.0.

    Raises:
        ValueError: an attribute the operator does not have, or a value that is not a number.
    """
    known = [a.name for a in op.graph.attrs]
    takes = f"it takes {', '.join(known)}" if known else "it takes no attributes"
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"--attr {item!r}: write NAME=VALUE (e.g. --attr {known[0] if known else 'eps'}=1e-5)")
        if key not in known:
            raise ValueError(f"{op.name} has no attribute {key!r}; {takes}")
        if key in out:
            raise ValueError(f"--attr {key} is given twice ({out[key]:g} and {value}): give it once")
        try:
            out[key] = float(value)
        except ValueError:
            raise ValueError(f"--attr {key}={value!r}: {key} must be a number (e.g. {key}=1e-5)") from None
    for name in known:
        if op.graph.defaults[name] is None and name not in out:
            out[name] = 1.0
    return out


def default_shape(op: GeneratedOp) -> tuple:
    """``--shape``'s default without --input files: (1000000,), or (1000, 1024) for a row-tiled operator (one
    with last-axis reductions or an input named as the catalogue's (C,) inputs, ROW_INPUTS): a row must fit
    UB, and 1024 elements are whole 32 B blocks of every dtype, which rows need when element sizes differ.
    A matmul operator: (512, 512), square so that every operand takes the one --shape."""
    if op.cube is not None:
        return (512, 512)
    return (1000, 1024) if op.is_rows(frozenset(n.name for n in op.graph.inputs if n.name in ROW_INPUTS)) \
        else (1_000_000,)


def inputs(op: GeneratedOp, shape: tuple, dtype: str, seed: int = 0) -> list:
    """Random inputs of ``op`` for an output of ``shape`` (see module doc)."""
    rng = np.random.default_rng(seed)
    gm = natural_dtypes(op.graph, dtype)
    out = []
    for node in op.graph.inputs:
        s = shape[-1:] if node.name in ROW_INPUTS and len(shape) > 1 else shape
        out.append(random_array(rng, s, dtypes.as_dtype(gm[node.name]).np))
    return out


def arrays_of(op: GeneratedOp, given: list, shape: tuple | None, dtype: str | None,
              seed: int = 0) -> tuple[list, str, tuple, str]:
    """The inputs of a CLI run: ``given`` ((NAME, FILE.npy) pairs) from their files, the others random
    (:func:`inputs` of ``shape``, default the files' broadcast shape, else :func:`default_shape`).

    Returns (arrays in signature order, the floating dtype, the shape, where the inputs came from).
    ``dtype`` defaults to the files' (those of inputs without a fixed dtype), else the operator's first.

    Raises:
        UsageError: a ``dtype`` the operator does not take, an input it does not have, given twice, a file that
            is not a readable .npy array, or one whose dtype is not the input's.
    """
    if dtype is not None and dtype not in op.dtypes:
        raise UsageError(f"--dtype {dtype}: {op.name} takes {', '.join(op.dtypes)}")
    names = [n.name for n in op.graph.inputs]
    files = {}
    for name, path in given:
        if name not in names:
            raise UsageError(f"--input {name}={path}: {op.name} has no input {name!r}; its inputs are {', '.join(names)}")
        if name in files:
            raise UsageError(f"--input {name} is given twice; pass each input once")
        try:
            files[name] = (path, load_npy(path, None))
        except UsageError as exc:
            raise UsageError(f"--input {name}: {exc}") from None
    reason = "--dtype {}" if dtype is not None else "the other --input files hold {}"
    if dtype is None:
        free = [(n, x.dtype) for n, (_, x) in files.items() if n not in op.graph.input_dtypes]
        dtype = free[0][1].name if free else op.dtypes[0]
        if dtype not in op.dtypes:
            raise UsageError(f"--input {free[0][0]}={files[free[0][0]][0]} holds {dtype}; {op.name} takes "
                             f"{', '.join(op.dtypes)}: convert the file (numpy.save(path, x.astype(...)))")
    gm = natural_dtypes(op.graph, dtype)
    for name, (path, x) in files.items():
        want = dtypes.as_dtype(gm[name])
        if x.dtype != want.np:
            why = "its signature" if name in op.graph.input_dtypes else reason.format(dtype)
            raise UsageError(f"--input {name}={path} holds {x.dtype}, but {op.name}'s {name} is {want.name} here "
                             f"({why}); convert the file")
    if shape is None:
        try:
            shape = np.broadcast_shapes(*(x.shape for _, x in files.values())) if files else default_shape(op)
        except ValueError:
            raise UsageError(f"the --input files' shapes {', '.join(f'{n}{list(x.shape)}' for n, (_, x) in files.items())}"
                             " do not broadcast (numpy's rules)") from None
    arrays = [files[n][1] if n in files else x for n, x in zip(names, inputs(op, shape, dtype, seed))]
    random = [n for n in names if n not in files]
    origin = "; ".join([f"{n} from {p}" for n, (p, _) in files.items()] +
                       ([f"{', '.join(random)} random (seed {seed})"] if random else []))
    return arrays, dtype, tuple(shape), origin


def _refuse_vector_tiling(op, args: argparse.Namespace) -> None:
    """A cube operator's tiling is its cube plan (base M/N/K, L0C buffers), not a vector tile and BUFFER_NUM.

    Raises:
        UsageError: --tile-length or a --buffer-num other than 2 given for a cube operator.
    """
    given = [flag for flag, value, default in (("--tile-length", getattr(args, "tile_length", None), None),
                                               ("--buffer-num", getattr(args, "buffer_num", 2), 2))
             if value != default]
    if op.cube is not None and given:
        raise UsageError(f"{given[0]} does not apply to {op.name}: a cube operator is tiled by its cube plan (base "
                         f"M/N/K in L0, double-buffered L0C), printed by run; fusekit tune {op.name} searches it")


def _run(command: str, args: argparse.Namespace) -> int:
    """``fusekit run|profile|tune OP ...`` for a generated operator; returns the exit status."""
    try:
        op = load(args.op)
        _refuse_vector_tiling(op, args)
        attrs = attributes(op, args.attr)
        shape = (args.size,) if getattr(args, "size", None) is not None else args.shape
        if shape is not None and any(s < (1 if command == "tune" else 0) for s in shape):
            raise ValueError(f"--shape {list(shape)}: every extent must be at least {1 if command == 'tune' else 0}")
        arrays, dtype, shape, origin = arrays_of(op, args.input, shape, args.dtype, getattr(args, "seed", 0))
        if command == "tune":
            return _tune(op, arrays, dtype, shape, attrs, args)
        if command == "profile":
            check_profile_files(args)
            shapes = {n.name: x.shape for n, x in zip(op.graph.inputs, arrays)}
            report = perf_compare(op, dtype=dtype, soc=args.soc, precision=args.precision, attrs=attrs, shapes=shapes,
                                  core_num=args.cores, buffer_num=args.buffer_num, tile_length=args.tile_length)
            print(report.table())
            write_profile_files(args, report.profile)  # the fused kernel's timeline, as fused_add_scale's
            return 0
        if args.output is not None:
            check_writable(args.output, "-o", directory=True)
        options = dict(soc=args.soc, precision=args.precision, core_num=args.cores, buffer_num=args.buffer_num,
                       tile_length=args.tile_length, **attrs)
        if args.overflow is not None:
            options["overflow"] = args.overflow
        with warnings.catch_warnings(record=True) as caught:  # printed in the report, as fused_add_scale's
            warnings.simplefilter("always", PrecisionWarning)
            result = op.check(*arrays, **options)
    except (GraphError, ValueError, TypeError, UsageError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
        return 2
    run = result.run
    print(f"{op.op_type}: {op.graph.text()}  [{dtype} {list(shape)}; precision {run.precision}; {run.soc.name}; "
          f"{run.tilings[0].block_dim} core(s); overflow {run.overflow}]")
    print(f"inputs: {origin}")
    if op.graph.attrs:
        print(f"attributes: {describe_attributes(op, attrs, args.attr)}")
    _print_tiling(run)
    if args.source:
        print(run.variant.source)
    count = len(run.variant.program.instrs)
    if op.cube is None:
        print(f"kernel {run.variant.path} ({count} vector instructions per tile)")
    else:  # a cube kernel: its vector program is the epilogue on the AIVs of a mix kernel, if any
        print(f"kernel {run.variant.path} (cube; "
              f"{f'{count} epilogue vector instructions per AIV tile' if count else 'no AIV epilogue'})")
    for w in caught:
        if issubclass(w.category, PrecisionWarning):
            print(f"  warning: {w.message}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    # the verdict is CheckResult's (fusekit.gen.checked: native float16/bfloat16's distance to exact is
    # information, an invalid output fails); every FAIL line is followed by its reason
    for name, (own, exact) in result.comparisons.items():
        informational = result.informational(name)
        print(f"  {name}: {own.summary()}")
        if not own.passed:
            print(f"  {name}: FAIL: {own.reason()}; the simulator and its {own.reference} model must agree bit for "
                  "bit: please report this as a fusekit bug")
        if informational and not exact.passed:
            invalid = f", {exact.invalid} invalid (NaN, inf or out of range)" if exact.invalid else ""
            print(f"  {name}: vs exact: {exact.mismatches}/{exact.n} beyond tolerance (loss {exact.loss:g}; max abs "
                  f"err {exact.max_abs_err:.3g}, max rel err {exact.max_rel_err:.3g}{invalid}) (informational in "
                  "native precision" + (", except the invalid outputs" if exact.invalid else "") +
                  "; use --precision fp32 for a verdict against exact)")
        else:
            print(f"  {name}: {exact.summary()}")
        if exact.invalid or (not informational and not exact.passed):
            why = replace(exact, mismatches=0) if informational else exact
            print(f"  {name}: FAIL: {why.reason()}" + _fp32_hint(exact, run))
    ok = result.passed
    if args.output is not None:
        try:
            save_all(args.output, run.outputs)
        except UsageError as exc:
            print(f"fusekit: error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {', '.join(f'{args.output / k}.npy' for k in run.outputs)}")
    if args.sanitize:
        reports = op.sanitize(*arrays, **options)
        clean = all(r.ok for r in reports)
        print("sanitizer: " + ("no findings" if clean else "\n".join(r.to_text() for r in reports if not r.ok)))
        ok = ok and clean
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def describe_attributes(op: GeneratedOp, attrs: dict, given: list) -> str:
    """``lo=1.0 (not given: 1.0), eps=1e-06 (default)``: the attribute values a run used (``attrs``, from
    :func:`attributes` of the ``--attr`` items ``given``), saying which were not given."""
    named = {item.partition("=")[0].strip() for item in given}
    parts = []
    for node in op.graph.attrs:
        value = attrs.get(node.name, op.graph.defaults[node.name])
        note = "" if node.name in named else " (default)" if op.graph.defaults[node.name] is not None \
            else f" (not given: {value!r})"
        parts.append(f"{node.name}={value!r}{note}")
    return ", ".join(parts)


def _fp32_hint(exact, run) -> str:
    """The advice after an invalid output: --precision fp32 where computing in float32 can help (NaN or inf
    from an intermediate), not where the exact result itself is beyond the output dtype's range."""
    causes = dict(exact.reasons)
    if run.precision == "native" and run.variant.program.compute != "float32" and \
            any(causes.get(k) for k in ("nan", "inf", "sign")):
        return f"; native precision computes in {run.dtype}, --precision fp32 computes in float32"
    return ""


def _print_tiling(run) -> None:
    """The plans as ``fusekit run fused_add_scale`` prints them; a row-tiled kernel's count rows; a matmul
    operator's cube plan first (fusekit.gen.cube.CubePlan), then its AIVs' row tiling in a mix kernel."""
    from fusekit.gen.cube import CubePlan

    for plan in run.tilings:
        if isinstance(plan, CubePlan):
            print(plan.describe())
    vector = [plan for plan in run.tilings if not isinstance(plan, CubePlan)]
    if vector:
        print_tiling(vector, run.soc)
    if vector and run.variant.program.rows:
        print("  (row-tiled kernel: total_length, block_length and tile_length count rows of the last axis)")


def _emit(args: argparse.Namespace) -> int:
    """``fusekit emit OP [--dtype D] [--precision P] [--row C] [--out DIR | --project DIR]`` (fusekit.gen.project)."""
    try:
        # refuse an unwritable destination before tracing, in one line (as `fusekit emit fused_add_scale`)
        if args.project is not None:
            check_writable(args.project, "--project", directory=True)
        else:
            check_writable(args.out, "--out", directory=True)
        op = load(args.op)
        if args.row < 1:
            raise ValueError(f"--row must be at least 1, got {args.row}")
        if args.project is not None:
            if args.dtype or args.precision:
                raise ValueError("--project emits every dtype pyasc supports, each in its default precision: drop "
                                 "--dtype and --precision")
            files = project.write_project(op, args.project, row=args.row, buffer_num=args.buffer_num)
            print(f"wrote a CANN custom-operator project for {op.op_type} in {args.project} ({len(files)} files); "
                  "building it needs CANN (bash build.sh), which was not tried here")
            return 0
        if args.dtype is not None and args.dtype not in op.dtypes:  # before pyasc's own dtype limits
            raise ValueError(f"--dtype {args.dtype}: {op.name} takes {', '.join(op.dtypes)}")
        kept = project.emittable(op)
        dtype = args.dtype or (kept[0] if kept else op.dtypes[0])
        precision = args.precision or ("native" if project.native(op, dtype) else "fp32")
        result = project.emit(op, dtype, precision, row=args.row, buffer_num=args.buffer_num, out_dir=args.out)
    except (GraphError, PyascMissing, ValueError, TypeError, UsageError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the project writes: the system's reason, in one line
        print(f"fusekit: error: {exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}", file=sys.stderr)
        return 2
    calls = sorted(set(re.findall(r"AscendC::(\w+)", result.cpp)))
    print(f"{result.kernel} ({result.dtype}, {precision}, {result.constants}): "
          f"{', '.join(str(f) for f in result.files)}")
    print(f"  Ascend C calls: {', '.join(calls)}")
    return 0


def _tune(op: GeneratedOp, arrays: list, dtype: str, shape: tuple, attrs: dict, args) -> int:
    """``fusekit tune OP --shape ... [--dtype D] [--soc S] [--precision P] [--attr NAME=VALUE] [--input NAME=F]``."""
    if op.cube is not None:  # a matmul operator: the cube's base block and AIC count (fusekit.gen.cube.tune)
        from fusekit.gen import cube

        best = cube.tune(op, arrays, soc=args.soc, precision=args.precision, **attrs)
        print(f"{op.op_type} {list(shape)} {dtype}: {best['tried']} configurations timed on the model")
        print(f"  best     {best['us']:10.2f} us  base {' x '.join(map(str, best['base']))}, {best['core_num']} AIC(s)")
        print(f"  default  {best['default_us']:10.2f} us  (the default is {best['default_us'] / best['us'] - 1:.1%} "
              "slower than the best found)")
        return 0
    result = tune(op, arrays, soc=args.soc, precision=args.precision, **attrs)
    unit = "rows" if result.best.total_length != int(np.prod(shape)) else "elements"
    print(f"{op.op_type} {list(shape)} {dtype}: {len(result.tried)} configurations timed on the model "
          f"(tiling in {unit})")
    for label, plan, us in (("best", result.best, result.best_us), ("default", result.default, result.default_us)):
        print(f"  {label:<8} {us:10.2f} us  block_dim {plan.block_dim}, tile {plan.tile_length}, BUFFER_NUM "
              f"{plan.buffer_num} (block {plan.block_length}, {plan.tile_num} tiles + {plan.tail_length}; last core "
              f"{plan.last_block_length})")
    print(f"  the default tiling is {result.default_gap:.1%} slower than the best found")
    return 0
