"""``fusekit run|profile OP`` for generated operators: the catalogue's (``swiglu``, ``add_rms_norm``, ...)
and a user's ``FILE:NAME`` (a ``@fusekit.op`` in a Python file) or ``--expr "silu(a) * b"``.

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

import argparse
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
    op = getattr(_module(str(Path(path).resolve())), attr, None)
    if not isinstance(op, GeneratedOp):
        raise ValueError(f"{name}: {attr} is not a @fusekit.op operator in {path}")
    return op


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
    parser = argparse.ArgumentParser(prog=f"fusekit {argv[0]}", description=__doc__.split("\n\n")[0])
    parser.add_argument("op", help="catalogue operator (" + ", ".join(CATALOGUE) + ") or FILE.py:NAME")
    parser.add_argument("--shape", type=int, nargs="+", default=[1_000_000], help="output shape (default 1000000)")
    parser.add_argument("--dtype", default=None, help="floating dtype (default: the operator's first)")
    parser.add_argument("--precision", choices=("native", "fp32"), default=None)
    parser.add_argument("--soc", default=None)
    parser.add_argument("--cores", type=int, default=None)
    parser.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE", help="a float attribute")
    parser.add_argument("--sanitize", action="store_true", help="also run under the sanitizer (run only)")
    parser.add_argument("--source", action="store_true", help="print the generated kernel (run only)")
    args = parser.parse_args(argv[1:])
    try:
        op = load(args.op)
        dtype = args.dtype or op.dtypes[0]
        attrs = {}
        for item in args.attr:
            key, _, value = item.partition("=")
            attrs[key] = float(value)
        for a in op.graph.attrs:
            if op.graph.defaults[a.name] is None and a.name not in attrs:
                attrs[a.name] = 1.0
        shape = tuple(args.shape)
        if argv[0] == "profile":
            shapes = {n.name: x.shape for n, x in zip(op.graph.inputs, inputs(op, shape, dtype))}
            report = perf_compare(op, dtype=dtype, soc=args.soc, precision=args.precision, attrs=attrs, shapes=shapes)
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
    for name, (own, exact) in ((k, v) for k, v in result.items() if k != "run"):
        print(f"  {name}: {own.summary()}\n  {name}: {exact.summary()}")
        ok = ok and own.bit_identical and (exact.passed or run.precision == "native" and run.dtype != "float32")
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

    parser = argparse.ArgumentParser(prog="fusekit emit", description="Trace a generated operator's kernel with "
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
    try:
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
    except (GraphError, PyascMissing, ValueError, TypeError) as exc:
        print(f"fusekit: error: {exc}", file=sys.stderr)
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

    parser = argparse.ArgumentParser(prog="fusekit tune", description="Search the generated kernel's tile, BUFFER_NUM "
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
        attrs = {a.name: 1.0 for a in op.graph.attrs if op.graph.defaults[a.name] is None}
        for item in args.attr:
            key, _, value = item.partition("=")
            attrs[key] = float(value)
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
