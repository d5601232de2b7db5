"""``fusekit run|profile|tune|emit OP`` for generated operators: the catalogue's (swiglu, add_rms_norm, ...)
and a user's FILE.py:NAME (a @fusekit.op in a Python file; a string expression is fusekit.define_op's).

    fusekit run swiglu --shape 1024 4096 --dtype float16 --sanitize
    fusekit run add_rms_norm --shape 64 4096 --attr eps=1e-5 --precision fp32
    fusekit profile bias_gelu --shape 4096 4096
    fusekit run my_ops.py:swiglu --shape 1000
    fusekit emit swiglu --dtype float16 --out out/      (needs pyasc: Ascend C and MLIR of the kernel)
    fusekit emit add_rms_norm --project AddRmsNorm/    (the CANN custom-operator project)
    fusekit tune add_rms_norm --shape 1024 4096

Inputs are random normal numbers of ``--shape`` (a (C,) input such as a bias or gamma gets the last
axis; integer inputs random integers). ``main`` returns the exit status (0: verified).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import numpy as np

from fusekit.asc import dtypes

from .catalogue import CATALOGUE, get
from .graph import GraphError
from .op import GeneratedOp
from .perf import compare as perf_compare

ROW_INPUTS = {"bias", "gamma", "beta", "mask", "scale", "offset"}  # catalogue inputs of shape (C,)


def _parser(**kwargs):
    """fusekit's argparse parser: errors in one line, as the other subcommands'."""
    from fusekit.cli import _Parser

    return _Parser(**kwargs)


def is_generated(name: str, kernel_files: bool = False) -> bool:
    """Whether ``fusekit run NAME`` means a generated operator (catalogue name or FILE:NAME).

    ``kernel_files``: the subcommand also takes ``FILE.py:KERNEL`` for a hand-written @asc.jit kernel (``emit``),
    so a FILE:NAME is a generated operator only when NAME in FILE is a @fusekit.op.
    """
    try:
        get(name)
        return True
    except KeyError:
        if ":" not in name or not name.rsplit(":", 1)[0].endswith(".py"):
            return False
    if not kernel_files:
        return True
    try:
        load(name)
        return True
    except Exception:  # noqa: BLE001 - any failure: the kernel-file path reports it in its own words
        return False


@functools.cache
def _module(path: str):
    """The user's operator file, executed once per process (``is_generated`` and ``load`` both read it)."""
    spec = importlib.util.spec_from_file_location(f"fusekit_user_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name: str) -> GeneratedOp:
    """The generated operator ``name``: a catalogue entry, or ``FILE.py:NAME`` (a @fusekit.op there).

    Raises:
        ValueError: no such operator or file, or NAME is not a generated operator.
    """
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


def main(argv: list[str]) -> int:
    """``fusekit run|profile|emit|tune OP ...`` for a generated operator; returns the exit status."""
    if argv[0] == "emit":
        return emit_main(argv)
    if argv[0] == "tune":
        return tune_main(argv)
    parser = _parser(prog=f"fusekit {argv[0]}", description=__doc__.split("\n\n")[0])
    parser.add_argument("op", help="catalogue operator (" + ", ".join(CATALOGUE) + ") or FILE.py:NAME")
    parser.add_argument("--shape", type=int, nargs="+", default=[1_000_000], help="output shape (default 1000000)")
    parser.add_argument("--dtype", default=None, help="floating dtype (default: the operator's first)")
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--soc", default=None)
    from fusekit.asc.runtime import MAX_CORE_NUM
    from fusekit.cli import _bounded

    parser.add_argument("--cores", type=_bounded(1, MAX_CORE_NUM), default=None,
                        help=f"most AIV cores (block_dim) to use, 1 to {MAX_CORE_NUM} (default: all of the SoC's)")
    parser.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE", help="a float attribute")
    parser.add_argument("--sanitize", action="store_true", help="also run under the sanitizer (run only)")
    parser.add_argument("--source", action="store_true", help="print the generated kernel (run only)")
    args = parser.parse_args(argv[1:])
    try:
        op = load(args.op)
        dtype = args.dtype or op.dtypes[0]
        attrs = attributes(op, args.attr)
        shape = tuple(args.shape)
        if argv[0] == "profile":
            shapes = {n.name: x.shape for n, x in zip(op.graph.inputs, inputs(op, shape, dtype))}
            report = perf_compare(op, dtype=dtype, soc=args.soc, precision=args.precision, attrs=attrs, shapes=shapes,
                                  core_num=args.cores)
            print(report.table())
            return 0
        arrays = inputs(op, shape, dtype)
        result = op.check(*arrays, soc=args.soc, precision=args.precision, core_num=args.cores, **attrs)
    except (GraphError, ValueError, TypeError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
        return 2
    run = result["run"]
    print(f"{op.op_type}: {op.graph.text()}  [{dtype} {list(shape)}; precision {run.precision}; {run.soc.name}; "
          f"{run.tilings[0].block_dim} core(s)]")
    if args.source:
        print(run.variant.source)
    print(f"kernel {run.variant.path} ({len(run.variant.program.instrs)} vector instructions per tile)")
    ok = True
    # native float16/bfloat16 rounds every step to the dtype, so its distance to exact is information; the
    # verdict is the bit-exact match with the hardware model (fp32 mode also judges against exact)
    informational = run.precision == "native" and run.dtype != "float32"
    for name, (own, exact) in ((k, v) for k, v in result.items() if k != "run"):
        print(f"  {name}: {own.summary()}")
        if informational and not exact.passed:
            invalid = f", {exact.invalid} invalid (NaN, inf or out of range)" if exact.invalid else ""
            print(f"  {name}: vs exact: {exact.mismatches}/{exact.n} beyond tolerance (loss {exact.loss:g}; max abs "
                  f"err {exact.max_abs_err:.3g}, max rel err {exact.max_rel_err:.3g}{invalid}) (informational in "
                  "native precision; use --precision fp32 for a verdict against exact)")
        else:
            print(f"  {name}: {exact.summary()}")
        ok = ok and own.bit_identical and (exact.passed or informational)
    if args.sanitize:
        reports = op.sanitize(*arrays, soc=args.soc, precision=args.precision, core_num=args.cores, **attrs)
        clean = all(r.ok for r in reports)
        print("sanitizer: " + ("no findings" if clean else "\n".join(r.to_text() for r in reports if not r.ok)))
        ok = ok and clean
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def emit_main(argv: list[str]) -> int:
    """``fusekit emit OP [--dtype D] [--precision P] [--row C] [--out DIR | --project DIR]`` (fusekit.gen.project)."""
    from fusekit.bridge import PyascMissing

    from . import project

    parser = _parser(prog="fusekit emit", description="Trace a generated operator's kernel with "
                                     "pyasc into Ascend C, or write its CANN custom-operator project.")
    parser.add_argument("op", help="catalogue operator (" + ", ".join(CATALOGUE) + ") or FILE.py:NAME")
    parser.add_argument("--dtype", default=None, help="float16 or float32 (default: the operator's first pyasc can emit)")
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--row", type=int, default=project.ROW,
                        help=f"row length a row-tiled kernel is compiled for (default {project.ROW})")
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


def tune_main(argv: list[str]) -> int:
    """``fusekit tune OP --shape ... [--dtype D] [--soc S] [--precision P] [--attr NAME=VALUE]``."""
    from .tune import tune

    parser = _parser(prog="fusekit tune", description="Search the generated kernel's tile, BUFFER_NUM "
                                     "and core count for the lowest predicted time.")
    parser.add_argument("op", help="catalogue operator (" + ", ".join(CATALOGUE) + ") or FILE.py:NAME")
    parser.add_argument("--shape", type=int, nargs="+", default=[1_000_000], help="output shape (default 1000000)")
    parser.add_argument("--size", type=int, default=None, help="elements (a 1-D shape; as FusedAddScale's tune)")
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--soc", default=None)
    parser.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE", help="a float attribute")
    args = parser.parse_args(argv[1:])
    try:
        op = load(args.op)
        dtype = args.dtype or op.dtypes[0]
        shape = (args.size,) if args.size is not None else tuple(args.shape)
        if any(s < 1 for s in shape):
            raise ValueError(f"--shape {list(shape)}: every extent must be at least 1")
        attrs = attributes(op, args.attr)
        result = tune(op, inputs(op, shape, dtype), soc=args.soc, precision=args.precision, **attrs)
    except (GraphError, ValueError, TypeError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
        return 2
    unit = "rows" if result.best.total_length != int(np.prod(shape)) else "elements"
    print(f"{op.op_type} {list(shape)} {dtype}: {len(result.tried)} configurations timed on the model "
          f"(tiling in {unit})")
    for label, plan, us in (("best", result.best, result.best_us), ("default", result.default, result.default_us)):
        print(f"  {label:<8} {us:10.2f} us  block_dim {plan.block_dim}, tile {plan.tile_length}, BUFFER_NUM "
              f"{plan.buffer_num} (block {plan.block_length}, {plan.tile_num} tiles + {plan.tail_length}; last core "
              f"{plan.last_block_length})")
    print(f"  the default tiling is {result.default_gap:.1%} slower than the best found")
    return 0
