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
lists), however few, fails, as FusedAddScale's verdict does. ``main`` returns the exit status (0: verified;
1: a verification or sanitizer failure; 2: bad input, in one line).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from fusekit.asc import dtypes
from fusekit.verify import PrecisionWarning

from .catalogue import CATALOGUE, get
from .graph import GraphError
from .op import GeneratedOp
from .perf import compare as perf_compare

ROW_INPUTS = {"bias", "gamma", "beta", "mask", "scale", "offset"}  # catalogue inputs of shape (C,)
OP_HELP = ("catalogue operator (" + ", ".join(CATALOGUE) + "), FILE.py:NAME (a @fusekit.op in your file) or a string "
           "expression such as 'silu(a) * b' (fusekit.define_op's)")


def _parser(**kwargs):
    """fusekit's argparse parser: errors in one line, as the other subcommands'."""
    from fusekit.cli import _Parser

    return _Parser(**kwargs)


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
        if not _file_op(name):
            return False
    if not kernel_files:
        return True
    try:
        load(name)
        return True
    except Exception:  # noqa: BLE001 - any failure: the kernel-file path reports it in its own words
        return False


def _file_op(name: str) -> bool:
    """``FILE.py:NAME``."""
    return ":" in name and name.rsplit(":", 1)[0].endswith(".py")


def is_expression(text: str, kernel_files: bool = False) -> bool:
    """Whether OP ``text`` is meant as a string expression (``fusekit.define_op``'s spelling): it has an
    operator, a call, a comma or a space. A name stays an operator name, hyphens included (``add-rms-nrom`` is
    an unknown operator, not a subtraction: write ``a - b``), and so does ``FILE.py:NAME``; with
    ``kernel_files`` (``emit``) so does what ``fusekit.emit.parse_target`` takes for a kernel file: FILE:KERNEL,
    FILE.py, an existing path, a path with ``/`` and no spaces or parentheses. Whether it parses is
    :func:`load`'s to say.
    """
    bare = text.strip()
    if _file_op(text) or not set("()+-*/<>=!,; ") & set(bare) or bare.replace("-", "_").isidentifier():
        return False
    if kernel_files:
        _, colon, kernel = text.rpartition(":")
        if (colon and kernel.isidentifier() and ";" not in text) or text.endswith(".py") or os.path.exists(text):
            return False
        if "/" in text and not set("() ") & set(text):
            return False
    return True


@functools.cache
def _module(path: str):
    """The user's operator file, executed once per process (``is_generated`` and ``load`` both read it)."""
    spec = importlib.util.spec_from_file_location(f"fusekit_user_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name: str) -> GeneratedOp:
    """The generated operator ``name``: a catalogue entry, ``FILE.py:NAME`` (a @fusekit.op there), or a string
    expression (:func:`is_expression`; ``fusekit.define_op(name)``, named ``expr``).

    Raises:
        ValueError: no such operator or file, or NAME is not a generated operator.
        GraphError: the expression does not parse or cannot be traced (one line naming the problem).
    """
    if is_expression(name):
        from .op import define_op

        try:
            return define_op(name)
        except GraphError:
            raise
        except (AttributeError, ValueError) as exc:  # `a.b` (an attribute of a traced input), `s: attr = abc`
            raise GraphError(f"expression {name!r}: {exc}") from None
    if ":" not in name:
        try:
            return get(name)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
    path, _, attr = name.rpartition(":")
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    try:
        module = _module(str(Path(path).resolve()))
    except Exception as exc:  # noqa: BLE001 - any failure of the user's file: one line naming it and the error
        from fusekit.check import _where

        where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, SyntaxError) else _where(exc)
        raise ValueError(f"{path} failed to import: {type(exc).__name__} at {Path(where).name}: {exc}") from None
    op = getattr(module, attr, None)
    if not isinstance(op, GeneratedOp):
        raise ValueError(f"{name}: {attr} is not a @fusekit.op operator in {path}")
    return op


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
    UB, and 1024 elements are whole 32 B blocks of every dtype, which rows need when element sizes differ."""
    return (1000, 1024) if op._is_rows(frozenset(n.name for n in op.graph.inputs if n.name in ROW_INPUTS)) \
        else (1_000_000,)


def inputs(op: GeneratedOp, shape: tuple, dtype: str, seed: int = 0) -> list:
    """Random inputs of ``op`` for an output of ``shape`` (see module doc)."""
    from .lower import natural_dtypes

    rng = np.random.default_rng(seed)
    gm = natural_dtypes(op.graph, dtype)
    out = []
    for node in op.graph.inputs:
        s = shape[-1:] if node.name in ROW_INPUTS and len(shape) > 1 else shape
        dt = dtypes.as_dtype(gm[node.name])
        if dt.is_float:
            out.append(rng.standard_normal(s, dtype=np.float32).astype(dt.np))
        else:
            info = np.iinfo(dt.np)
            out.append(rng.integers(max(info.min, -1000), min(info.max, 1000), s).astype(dt.np))
    return out


def _options(command: str):
    """The parser of ``fusekit run|profile|tune OP``: the options all three share (the operator, its inputs'
    shape, dtype and files, precision, SoC, attributes), then each command's own."""
    from fusekit.asc.runtime import MAX_CORE_NUM
    from fusekit.cli import _bounded

    descriptions = {"run": __doc__.split("\n\n")[0],
                    "profile": "Predict a generated operator's fused kernel against the unfused chain of one kernel "
                               "per primitive, and the share of launch overhead.",
                    "tune": "Search the generated kernel's tile, BUFFER_NUM and core count for the lowest predicted "
                            "time."}
    parser = _parser(prog=f"fusekit {command}", description=descriptions[command])
    parser.add_argument("op", help=OP_HELP)
    parser.add_argument("--shape", type=int, nargs="+", default=None,
                        help="output shape (default: the --input files' broadcast shape, else 1000000, or 1000 1024 "
                             "for a row-tiled operator: last-axis reductions or a (C,) input such as bias or gamma)")
    if command == "tune":
        parser.add_argument("--size", type=int, default=None, help="elements (a 1-D shape; as FusedAddScale's tune)")
    parser.add_argument("--dtype", default=None, help="one of the operator's dtypes (default: the --input files', "
                                                      "else the operator's first)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", type=_named_file,
                        help="take input NAME from a .npy file (repeatable); the other inputs are random"
                             + ("" if command == "run" else " (only the shapes and dtypes count here)"))
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--soc", default=None)
    parser.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE",
                        help="a float attribute (repeatable); one not given takes its default, and a required one "
                             "(no default) not given is 1.0")
    if command != "tune":  # tune searches the core count itself
        parser.add_argument("--cores", type=_bounded(1, MAX_CORE_NUM), default=None,
                            help=f"most AIV cores (block_dim) to use, 1 to {MAX_CORE_NUM} (default: all of the SoC's)")
    if command == "tune":  # tune searches the tile and BUFFER_NUM itself
        return parser
    parser.add_argument("--buffer-num", type=_bounded(1, 8), default=2,
                        help="BUFFER_NUM, buffers per queue, 1 to 8 (default 2: double buffering)")
    parser.add_argument("--tile-length", type=_bounded(1, None), default=None,
                        help="TILE_LENGTH in elements (a multiple of 512 B of the narrowest GM dtype), or rows per "
                             "tile in a row-tiled kernel (default: the most that fit UB)")
    if command != "run":
        return parser
    parser.add_argument("--overflow", choices=("inf_nan", "saturation"), default=None,
                        help="float overflow mode of the vector unit (default the SoC's: inf_nan on A2/A3, "
                             "saturation on 310P, which has no other)")
    parser.add_argument("--seed", type=_bounded(0, None), default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="write every output to DIR/NAME.npy (atomically; DIR is created)")
    parser.add_argument("--sanitize", action="store_true", help="also run under the sanitizer")
    parser.add_argument("--source", action="store_true", help="print the generated kernel")
    return parser


def _named_file(text: str) -> tuple[str, Path]:
    """argparse type of ``--input NAME=FILE.npy``."""
    import argparse

    name, eq, path = text.partition("=")
    if not eq or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE.npy (e.g. --input x=x.npy), got {text!r}")
    return name.strip(), Path(path)


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
    from fusekit.cli import UsageError, _load

    from .lower import natural_dtypes

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
            files[name] = (path, _load(path, None))
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


def main(argv: list[str]) -> int:
    """``fusekit run|profile|emit|tune OP ...`` for a generated operator; returns the exit status."""
    from fusekit.cli import UsageError, _check_writable

    command = argv[0]
    if command == "emit":
        return emit_main(argv)
    args = _options(command).parse_args(argv[1:])
    try:
        op = load(args.op)
        attrs = attributes(op, args.attr)
        shape = (args.size,) if getattr(args, "size", None) is not None else args.shape
        if shape is not None and any(s < (1 if command == "tune" else 0) for s in shape):
            raise ValueError(f"--shape {list(shape)}: every extent must be at least {1 if command == 'tune' else 0}")
        arrays, dtype, shape, origin = arrays_of(op, args.input, shape, args.dtype, getattr(args, "seed", 0))
        if command == "tune":
            return _tune(op, arrays, dtype, shape, attrs, args)
        if command == "profile":
            shapes = {n.name: x.shape for n, x in zip(op.graph.inputs, arrays)}
            report = perf_compare(op, dtype=dtype, soc=args.soc, precision=args.precision, attrs=attrs, shapes=shapes,
                                  core_num=args.cores, buffer_num=args.buffer_num, tile_length=args.tile_length)
            print(report.table())
            return 0
        if args.output is not None:
            _check_writable(args.output, "-o", directory=True)
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
    run = result["run"]
    print(f"{op.op_type}: {op.graph.text()}  [{dtype} {list(shape)}; precision {run.precision}; {run.soc.name}; "
          f"{run.tilings[0].block_dim} core(s); overflow {run.overflow}]")
    print(f"inputs: {origin}")
    if op.graph.attrs:
        print(f"attributes: {describe_attributes(op, attrs, args.attr)}")
    _print_tiling(run)
    if args.source:
        print(run.variant.source)
    print(f"kernel {run.variant.path} ({len(run.variant.program.instrs)} vector instructions per tile)")
    for w in caught:
        if issubclass(w.category, PrecisionWarning):
            print(f"  warning: {w.message}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    ok = True
    # native float16/bfloat16 rounds every step to the dtype, so its distance to exact is information; the
    # verdict is the bit-exact match with the hardware model (fp32 mode also judges against exact), and, as
    # FusedAddScale's (README), no invalid output (NaN or inf where the exact result is finite, ...). An
    # integer output's tolerance (one step plus the compute dtype's, GeneratedOp.check) already covers
    # native rounding, so its verdict against exact always counts
    native = run.precision == "native" and run.dtype != "float32"
    for name, (own, exact) in ((k, v) for k, v in result.items() if k != "run"):
        informational = native and exact.steps is None
        print(f"  {name}: {own.summary()}")
        if informational and not exact.passed:
            invalid = f", {exact.invalid} invalid (NaN, inf or out of range)" if exact.invalid else ""
            print(f"  {name}: vs exact: {exact.mismatches}/{exact.n} beyond tolerance (loss {exact.loss:g}; max abs "
                  f"err {exact.max_abs_err:.3g}, max rel err {exact.max_rel_err:.3g}{invalid}) (informational in "
                  "native precision" + (", except the invalid outputs" if exact.invalid else "") +
                  "; use --precision fp32 for a verdict against exact)")
        else:
            print(f"  {name}: {exact.summary()}")
        if exact.invalid:
            print(f"  {name}: FAIL: {replace(exact, mismatches=0).reason()}" + _fp32_hint(exact, run))
        ok = ok and own.bit_identical and (exact.passed or (informational and not exact.invalid))
    if args.output is not None:
        try:
            _save(args.output, run.outputs)
        except OSError as exc:
            print(f"fusekit: error: cannot write {exc.filename or args.output}: {exc.strerror or exc}", file=sys.stderr)
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
    """The plans as ``fusekit run fused_add_scale`` prints them; a row-tiled kernel's count rows."""
    from fusekit.cli import _print_tiling as print_plans

    print_plans(run.tilings, run.soc)
    if run.variant.program.rows:
        print("  (row-tiled kernel: total_length, block_length and tile_length count rows of the last axis)")


def _save(directory: Path, outputs: dict) -> None:
    """Write each output to ``directory/NAME.npy`` atomically (``fusekit.files.write_atomic``).

    Raises:
        OSError: the directory cannot be created or written.
    """
    from fusekit.files import write_atomic

    directory.mkdir(parents=True, exist_ok=True)
    for name, y in outputs.items():
        write_atomic(directory / f"{name}.npy", lambda f, y=y: np.save(f, y))


def emit_main(argv: list[str]) -> int:
    """``fusekit emit OP [--dtype D] [--precision P] [--row C] [--out DIR | --project DIR]`` (fusekit.gen.project)."""
    from fusekit.bridge import PyascMissing

    from . import project

    parser = _parser(prog="fusekit emit", description="Trace a generated operator's kernel with "
                                     "pyasc into Ascend C, or write its CANN custom-operator project.")
    parser.add_argument("op", help=OP_HELP)
    parser.add_argument("--dtype", default=None, help="one of the operator's dtypes that pyasc can emit: float16 or "
                                                      "float32 (default: the operator's first pyasc can emit)")
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--row", type=int, default=project.ROW,
                        help=f"row length of the canonical layout traced (default {project.ROW}); the kernel and the "
                             "project take any row length that fits UB")
    parser.add_argument("--buffer-num", type=int, default=2, choices=range(1, 9), metavar="1..8")
    parser.add_argument("--out", type=Path, default=Path("."), help="directory for the .cpp and .mlir files")
    parser.add_argument("--project", type=Path, help="write the CANN custom-operator project (msopgen layout) here")
    args = parser.parse_args(argv[1:])
    from fusekit.cli import UsageError, _check_writable

    try:
        # refuse an unwritable destination before tracing, in one line (as `fusekit emit fused_add_scale`)
        if args.project is not None:
            _check_writable(args.project, "--project", directory=True)
        else:
            _check_writable(args.out, "--out", directory=True)
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
        precision = args.precision or ("native" if project._native(op, dtype) else "fp32")
        result = project.emit(op, dtype, precision, row=args.row, buffer_num=args.buffer_num, out_dir=args.out)
    except (GraphError, PyascMissing, ValueError, TypeError, UsageError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the project writes: the system's reason, in one line
        print(f"fusekit: error: {exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}", file=sys.stderr)
        return 2
    import re

    calls = sorted(set(re.findall(r"AscendC::(\w+)", result.cpp)))
    print(f"{result.kernel} ({result.dtype}, {precision}, {result.constants}): "
          f"{', '.join(str(f) for f in result.files)}")
    print(f"  Ascend C calls: {', '.join(calls)}")
    return 0


def _tune(op: GeneratedOp, arrays: list, dtype: str, shape: tuple, attrs: dict, args) -> int:
    """``fusekit tune OP --shape ... [--dtype D] [--soc S] [--precision P] [--attr NAME=VALUE] [--input NAME=F]``."""
    from .tune import tune

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
