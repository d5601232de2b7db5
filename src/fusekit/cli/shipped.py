"""The shipped operators on the command line: ``fusekit run | profile | tune | emit fused_add_scale`` and the
unfused baseline ``unfused_add_muls`` (emit); ``emit`` of a hand-written kernel ``FILE:KERNEL`` shares their
emitter (:func:`emit_kernels`, :mod:`fusekit.cli.kernel`).

``fusekit run fused_add_scale ...`` runs the operator on the simulated NPU, verifies it against
the references and prints the tiling plan, the verification summary and the speed.
Exit status: 0 pass, 1 verification (or kernel) failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
from tqdm import tqdm

from fusekit import tiling
from fusekit.asc import KernelError
from fusekit.gen.catalogue import CATALOGUE
from fusekit.ops.fused_add_scale.tune import tune
from fusekit.pyasc.bridge import PyascMissing
from fusekit.pyasc.emit import emit, emit_file, kernel_file
from fusekit.pyasc.npu import BackendUnavailable
from fusekit.pyasc.project import write_project
from fusekit.sanitizer import Report, analyze
from fusekit.soc import SOCS
from fusekit.timing import predict
from fusekit.verify import PrecisionWarning, compare

from .common import (auto_sync_note, DTYPES, UsageError, check_memory, check_profile_files, check_writable, kernel_args, load_npy,
                     print_tiling, save_atomic, write_profile_files)

OPS = {"fused_add_scale": "fusekit.ops.fused_add_scale"}  # operator name -> its host module
EMIT_ONLY = ("unfused_add_muls",)  # FusedAddScale's unfused baseline (Add + Muls): emitted, timed by `experiment`
PROGRESS_ELEMENTS = 2**22  # inputs from this size show progress bars (on a terminal)


def lookup_op(name: str) -> types.ModuleType:
    """The host module of the shipped operator ``name`` that ``run`` and ``profile`` take.

    The module provides what ``fusekit.ops.fused_add_scale`` does: ``run`` (returning a run with
    ``y``, ``precision``, ``soc``, ``tilings``, ``launches``, ``wall_s``), ``reference``, ``exact``,
    ``model_of``, ``overflow_warning``, ``KERNEL`` and ``PRECISIONS``.

    Raises:
        ValueError: no such operator; the message lists the known ones.
    """
    if name not in OPS:
        raise ValueError(f"unknown operator {name!r}; choose from {all_ops()}")
    return importlib.import_module(OPS[name])


def all_ops() -> str:
    """Every operator ``run``/``profile``/``tune`` take: shipped, the catalogue, FILE.py:NAME, FILE.py:KERNEL."""
    names = list(OPS) + [n for n in CATALOGUE if n not in OPS]
    return ", ".join(names) + ", FILE.py:NAME (a @fusekit.op in your file) or FILE.py:KERNEL (your @asc.jit kernel)"


def find(text: str, command: str) -> "Shipped | None":
    """The shipped operator ``text`` if ``command`` takes it (``unfused_add_muls`` only for emit)."""
    if text in OPS or (command == "emit" and text in EMIT_ONLY):
        return Shipped(text)
    return None


EMIT_OPTIONS = {"dtype": "float16", "precision": "native", "buffer_num": 2, "tile_length": None, "arg": [], "out": Path("."),
         "project": None}
# the options of each command for FusedAddScale, with their defaults (None: the operator's or the SoC's own)
_OPTIONS = {
    "run": {"size": None, "shape": None, "x1": None, "x2": None, "dtype": None, "scale": 1.5, "soc": None,
            "cores": None, "buffer_num": 2, "tile_length": None, "precision": None, "overflow": None, "seed": 0,
            "output": None, "sanitize": False, "auto_sync": None, "backend": "simulator"},
    "profile": {"size": 1_000_000, "shape": None, "dtype": "float16", "soc": None, "cores": None, "buffer_num": 2,
                "precision": None, "tile_length": None, "trace": None, "plot": None, "csv": None},
    "tune": {"size": None, "shape": None, "dtype": "float16", "soc": None, "precision": None},
    "emit": EMIT_OPTIONS,
}
# why a generated operator's options do not apply to a shipped one
_REFUSALS = {
    "input": "a shipped operator's inputs are --x1 and --x2 (run), or random of --size",
    "attr": "its one attribute is --scale (run)",
    "source": "its kernel is src/fusekit/ops/fused_add_scale/kernel.py; read it there",
    "row": "--row is the row length a generated row-tiled kernel is traced at; a shipped kernel is elementwise",
    "define": "-D defines a macro of a C++ program (fusekit run FILE.asc -D NAME=VALUE)",
    "arg": "--arg gives a parameter of your own kernel (FILE.py:KERNEL); fused_add_scale's are --x1/--x2, --scale, "
           "--buffer-num, --tile-length and --precision",
    "expect": "--expect is the reference of an operator project or a kernel file; fused_add_scale is checked against "
              "its own references",
}
_CHOICES = {"dtype": list(DTYPES), "soc": list(SOCS)}  # options whose values depend on the operator


class Shipped:
    """A shipped operator (``fusekit.ops``), as the CLI runs it."""

    def __init__(self, name: str):
        self.name = name

    def options(self, command: str) -> dict:
        return _OPTIONS[command]

    def refusal(self, command: str, option: str) -> str:
        return _REFUSALS.get(option, f"{command} takes it for generated operators only")

    def validate(self, command: str, args: argparse.Namespace) -> str | None:
        """The argparse-style error of a value this operator does not take (None: all good)."""
        for option, choices in _CHOICES.items():
            value = getattr(args, option, None)
            if value is not None and value not in choices:
                return f"argument --{option}: invalid choice: {value!r} (choose from {', '.join(map(repr, choices))})"
        if getattr(args, "shape", None) is not None:  # --shape N is --size N (operator_command refuses both)
            if len(args.shape) != 1 or args.shape[0] < 0:
                return (f"argument --shape: {self.name} is one-dimensional: give one extent, --shape N (the same as "
                        f"--size N), got {' '.join(map(str, args.shape))}")
            args.size = args.shape[0]
        if command == "tune":
            if args.size is None:
                return "the following arguments are required: --size"
            if not 1 <= args.size <= tiling.MAX_LAUNCH_ELEMENTS:
                return f"argument --size: must be in [1, {tiling.MAX_LAUNCH_ELEMENTS}], got {args.size}"
        return None

    def execute(self, command: str, args: argparse.Namespace) -> int:
        if command == "emit":
            return emit_kernels(args, None)
        return {"run": _run, "profile": _profile, "tune": _tune}[command](args)


def _run(args: argparse.Namespace) -> int:
    op = lookup_op(args.op)
    x1, x2, origin = _inputs(args)
    auto_sync_note(args)
    if args.output is not None:
        check_writable(args.output)
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
                                tile_length=args.tile_length, precision=args.precision, backend=args.backend,
                                **options)
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
    print_tiling(result.tilings, soc)

    ok = _verify(op, x1, x2, args.scale, result, notes, large)
    instructions = sum(len(launch.trace) for launch in result.launches)
    if args.output is not None:
        save_atomic(args.output, result.y)
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
        checks = [compare(result.y, expected, reference=model, progress=bar.update, bit_exact=True)]
        del expected  # bounded memory: one reference at a time
        expected = op.reference(x1, x2, scale, "exact", progress=bar.update)
        checks.append(compare(result.y, expected, reference="exact", exact=exact, progress=bar.update))
    for check in checks:
        print("  " + check.summary())
        if not check.passed:
            print(f"    why: {check.reason()}")
    ok = all(c.passed for c in checks)  # the model's check is bit for bit (bit_exact)
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

def _inputs(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, str]:
    files = (args.x1, args.x2)
    if any(files):
        if not all(files):
            raise UsageError("--x1 and --x2 go together: pass both .npy files")
        if args.size is not None:
            raise UsageError("pass either --size (random input) or --x1/--x2 (.npy files), not both")
        x1, x2 = (load_npy(path, args.dtype) for path in files)
        return x1, x2, f"{args.x1}, {args.x2}"
    x1, x2 = _random(1_000_000 if args.size is None else args.size, args.dtype or "float16", args.seed)
    return x1, x2, f"random, seed {args.seed}"

def _random(n: int, dtype_name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    check_memory(n, np.dtype(DTYPES[dtype_name]).itemsize, copies=8)  # inputs, GM copies, output, references
    rng = np.random.default_rng(seed)
    try:
        return tuple(rng.standard_normal(n, dtype=np.float32).astype(DTYPES[dtype_name]) for _ in range(2))
    except (MemoryError, ValueError):
        raise UsageError(f"--size {n} does not fit in memory ({n * 4 / 2**30:.1f} GiB per random input)") from None

def _profile(args: argparse.Namespace) -> int:
    check_profile_files(args)
    if args.plot is not None and args.size == 0:
        raise UsageError("--plot: nothing to plot at --size 0 (no kernel is launched)")
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
    print_tiling(result.tilings, result.soc)
    prof = predict([launch.trace for launch in result.launches], result.soc)
    print(prof.table())
    write_profile_files(args, prof)
    return 0


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

def emit_kernels(args: argparse.Namespace, target: "tuple | None") -> int:
    """``emit`` of a shipped operator (``target`` None) or of the kernel file ``target`` (path, kernel name or None:
    :class:`fusekit.cli.kernel.KernelFile`)."""
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
        check_writable(args.project, "--project", directory=True)
    else:
        check_writable(args.out, "--out", directory=True)
    try:
        if target is not None:
            overrides, _ = kernel_args(args.arg)
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
