"""OP = ``FILE.py:KERNEL``, your own ``@asc.jit`` kernel (vector, cube or mix), in ``fusekit run | profile |
tune | emit`` (and ``fusekit check FILE.py:KERNEL``, :mod:`fusekit.cli.commands`).

    fusekit run examples/cube/matmul.py:matmul --size 256 --expect 'a @ bt.T' -o out/
    fusekit run kernel.py:scale --arg x=x.npy --arg y=zeros:float16:4096 --arg n=4096 --cores 8 --sanitize
    fusekit profile examples/cube/matmul.py:matmul --size 256 --trace mm.json --csv PipeUtilization.csv
    fusekit tune src/fusekit/ops/fused_add_scale/kernel.py:fused_add_scale --size 65536

The launch is the one ``fusekit check`` makes for one size (:func:`fusekit.check.launch_of`): each parameter
from ``--arg NAME=VALUE`` (:data:`fusekit.cli.common.ARG_HELP`: a literal, ``FILE.npy``,
``zeros:DTYPE:SHAPE`` or ``random:DTYPE:SHAPE``), else from the file's ``check_launch(size, dtype)`` for
``--size`` (``--shape N``), else guessed from its name as an elementwise host would build it. ``--cores N`` is
the launch's block_dim (for guessed TilingData fields: the tiling for at most N cores). A hand-written kernel
has no reference of its own: ``run --expect [NAME=]EXPR`` compares an output with a numpy expression of the
parameters (float64), or a ``.npy`` file. ``tune`` searches block_dim only (the tile and BUFFER_NUM are the
kernel's own code), and keeps a core count only where the outputs are bit-identical to the default launch's.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

from fusekit.asc import KernelError
from fusekit.asc.runtime import check_arguments, kernel_type, launch as launch_kernel
from fusekit.check import CheckError, Launch, launch_of
from fusekit.gen.catalogue import CATALOGUE
from fusekit.pyasc.emit import parse_target
from fusekit.pyasc.kernel_file import KernelFileError, load_module, op_info_beside, pick_kernel
from fusekit.soc import get_soc
from fusekit.timing import profile
from fusekit.verify import compare

from .common import (auto_sync_note, DTYPES, UsageError, check_profile_files, check_writable, kernel_args, save_all,
                     write_profile_files)
from .program import expected_of
from .shipped import EMIT_OPTIONS, all_ops, emit_kernels

_LAUNCH = {"arg": [], "size": None, "shape": None, "dtype": None, "soc": None, "buffer_num": 2}
# the options of each command for a kernel file, with their defaults (None: the file's or the SoC's own)
_OPTIONS = {
    "run": _LAUNCH | {"cores": None, "seed": 0, "output": None, "sanitize": False, "auto_sync": None,
                      "overflow": None, "expect": None},
    "profile": _LAUNCH | {"cores": None, "trace": None, "plot": None, "csv": None},
    "tune": _LAUNCH,
    "emit": EMIT_OPTIONS,
}
_CONSTANTS = "a hand-written kernel computes as its code says; give its constants with --arg NAME=VALUE"
# why the other operators' options do not apply to a kernel file
_REFUSALS = {
    "x1": "its inputs are its parameters: --arg NAME=FILE.npy (or random:DTYPE:SHAPE)",
    "x2": "its inputs are its parameters: --arg NAME=FILE.npy (or random:DTYPE:SHAPE)",
    "input": "its inputs are its parameters: --arg NAME=FILE.npy (or random:DTYPE:SHAPE)",
    "attr": "its scalars are its parameters: --arg NAME=VALUE",
    "scale": "its scalars are its parameters: --arg NAME=VALUE",
    "precision": _CONSTANTS,
    "tile_length": _CONSTANTS,
    "source": "its source is the file itself",
    "backend": "a kernel file runs on the simulator only (the NPU path runs the shipped operators)",
    "define": "-D defines a macro of a C++ program (fusekit run FILE.asc -D NAME=VALUE)",
    "row": "--row is the row length a generated row-tiled kernel is traced at",
    "cores": "tune searches block_dim itself",
}


def kernel_file_or_unknown(text: str, command: str) -> "KernelFile":
    """OP ``text`` as a kernel file: ``FILE.py:KERNEL``, ``FILE.py`` (its one kernel) or, for emit, ``FILE:KERNEL``.

    Raises:
        UsageError: ``text`` names no kernel file (the message lists the operators ``command`` takes).
    """
    try:
        target = parse_target(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if target is None or (command != "emit" and target[0].suffix != ".py"):
        raise UsageError(f"unknown operator {text!r}: emit takes fused_add_scale, unfused_add_muls, or your kernel "
                         "as FILE:KERNEL (e.g. my_kernel.py:scale_kernel), a generated operator "
                         # the vector ones: emit refuses a cube operator (fusekit.gen.project._vector_only)
                         f"({', '.join(n for n, o in CATALOGUE.items() if n != 'fused_add_scale' and o.cube is None)}) "
                         "or FILE.py:NAME "
                         "(a @fusekit.op)"
                         if command == "emit" else f"unknown operator {text!r}; choose from {all_ops()}")
    return KernelFile(text, target)


class KernelFile:
    """``FILE.py:KERNEL`` (or ``FILE.py`` with one kernel) as the OP of run, profile, tune and emit."""

    def __init__(self, name: str, target: tuple[Path, str | None]):
        self.name = name
        self.path, self.kernel = target

    def options(self, command: str) -> dict:
        return _OPTIONS[command]

    def refusal(self, command: str, option: str) -> str:
        return _REFUSALS.get(option, f"{command} takes it for the shipped and generated operators only")

    def validate(self, command: str, args: argparse.Namespace) -> str | None:
        if command == "emit":
            return None
        if args.dtype is not None and args.dtype not in DTYPES:
            return f"argument --dtype: invalid choice: {args.dtype!r} (choose from {', '.join(map(repr, DTYPES))})"
        if args.shape is not None and len(args.shape) != 1:
            return (f"argument --shape: {self.name} takes one size (check_launch(size, dtype) and the guessed arrays "
                    f"are one-dimensional): give --size N, or each array with --arg NAME=FILE.npy")
        try:
            get_soc(args.soc)
        except ValueError as exc:
            return f"argument --soc: {exc}"
        return None

    def execute(self, command: str, args: argparse.Namespace) -> int:
        if command == "emit":
            return emit_kernels(args, (self.path, self.kernel))
        return {"run": _run, "profile": _profile, "tune": _tune}[command](self, args)

    def launch(self, args: argparse.Namespace, cores: int | None = None) -> tuple[Launch, set[str]]:
        """The launch of ``args`` (for ``cores``, default ``--cores``) and the parameters given as outputs.

        Raises:
            UsageError: a bad --arg, no size to launch at, or what :func:`fusekit.check.launch_of` raises.
        """
        values, outputs = kernel_args(args.arg, getattr(args, "seed", 0))
        size = args.size if args.size is not None else args.shape[0] if args.shape else None
        if size is None:
            arrays = [v.size for v in values.values() if isinstance(v, np.ndarray)]
            if not arrays:
                self.kernel_function()  # a kernel that does not exist is the first thing to say
                raise UsageError(f"{self.name}: give --size N (the size its check_launch(size, dtype) or the guessed "
                                 "arrays take), or its arrays with --arg NAME=FILE.npy")
            size = max(arrays)
        try:
            with contextlib.redirect_stdout(sys.stderr):  # a check_launch's prints must not mix into the report
                found = launch_of(self.path, size, kernel=self.kernel, dtype=args.dtype, soc=args.soc,
                                  cores=getattr(args, "cores", None) if cores is None else cores,
                                  buffer_num=args.buffer_num, outputs=sorted(outputs) or None, args=values)
        except (CheckError, TypeError) as exc:
            raise UsageError(str(exc)) from None
        try:  # a value of the wrong kind is the user's --arg, said before anything runs
            check_arguments(found.kernel, found.values)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{self.name}: {exc} (--arg NAME=VALUE)") from None
        if args.buffer_num != _LAUNCH["buffer_num"] and "check_launch" in found.sources.values():
            raise UsageError(f"--buffer-num does not apply to {self.name}: its check_launch builds the launch, and "
                             "BUFFER_NUM is its code's (give a parameter of that name with --arg NAME=VALUE)")
        return found, outputs | found.outputs


    def kernel_function(self):
        """The @asc.jit kernel this OP names.

        Raises:
            UsageError: the file does not import, or has no such kernel (or none, or several without a name).
        """
        try:
            return pick_kernel(load_module(self.path), self.kernel, op_info_beside(self.path), self.path)[0]
        except KernelFileError as exc:
            raise UsageError(str(exc)) from None


def _header(op: KernelFile, found: Launch, soc) -> None:
    print(f"{found.kernel.fn.__name__} ({op.path}, {kernel_type(found.kernel)}) on {soc.name}: launched "
          f"{found.describe()}")
    for note in found.notes:
        print(f"  note: {note}")


def written(trace) -> list[str]:
    """The GM parameters some core of ``trace`` wrote, in the order of their first write."""
    names = {}
    for core in trace.cores:
        for instr in core:
            for access in instr.writes:
                if access.mem.is_global:
                    names.setdefault(access.buffer, None)
    return list(names)


def _run(op: KernelFile, args: argparse.Namespace) -> int:
    found, outputs = op.launch(args)
    auto_sync_note(args)
    if args.output is not None:
        check_writable(args.output, "-o", directory=True)
    soc = get_soc(args.soc)
    before = {k: v.copy() for k, v in found.values.items() if isinstance(v, np.ndarray) and k not in outputs}
    _header(op, found, soc)
    options = {"soc": soc.name, "auto_sync": args.auto_sync}
    if args.overflow is not None:
        options["overflow"] = args.overflow
    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # device printf output must not mix into the report
        if args.sanitize:
            from fusekit.sanitizer import sanitize
            report = sanitize(found.kernel, outputs=sorted(outputs) or None, **options)[found.block_dim](
                **found.values)
            trace = report.trace
        else:
            report, trace = None, launch_kernel(found.kernel, found.block_dim, (), found.values, **options).trace
    wall = time.perf_counter() - started
    names = written(trace) if trace is not None else []
    arrays = {k: found.values[k] for k in names if isinstance(found.values.get(k), np.ndarray)}
    for name, y in arrays.items():
        finite = np.isfinite(y.astype(np.float64))
        print(f"  {name}: {y.dtype} {list(y.shape)} written; min {np.min(y, initial=np.inf, where=finite):.6g}, max "
              f"{np.max(y, initial=-np.inf, where=finite):.6g}, {int(y.size - finite.sum())} not finite")
    ok = True
    if report is not None:
        print("sanitizer: no findings" if report.ok else report.to_text())
        ok = report.ok
    if args.expect is not None:
        ok = _expect(args.expect, arrays, before, found) and ok
    if args.output is not None:
        save_all(args.output, arrays)
        print(f"wrote {', '.join(f'{args.output / k}.npy' for k in arrays)}")
    instructions = sum(len(core) for core in trace.cores) if trace is not None else 0
    if not names:  # a launch whose arguments skip all the work looks like a pass otherwise
        print(f"  warning: {found.kernel.fn.__name__} wrote none of its GM parameters ({instructions:,} instructions "
              "ran): check the launch's arguments (printed above; --arg NAME=VALUE, or the file's check_launch)")
    print(f"time: wall {wall:.3g} s simulating ({instructions:,} instructions); whole command "
          f"{time.perf_counter() - args.started:.3g} s")
    if args.expect is None and report is None:
        print("ran (no verdict: give --expect [NAME=]EXPR or FILE.npy to compare an output, --sanitize to check it)")
        return 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _expect(text: str, arrays: dict, before: dict, found: Launch) -> bool:
    """``--expect [NAME=]EXPR``: compare output NAME (the one written, if only one) with EXPR of the parameters."""
    named = re.match(r"^([A-Za-z_]\w*)=(?!=)(.*)$", text)
    if named and named.group(1) in arrays:
        name, text = named.groups()
    elif len(arrays) == 1:
        name = next(iter(arrays))
    else:
        raise UsageError(f"--expect {text!r}: {found.kernel.fn.__name__} wrote "
                         f"{', '.join(arrays) or 'no GM parameter'}; name the output: --expect NAME=EXPR")
    scalars = {k: v for k, v in found.values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    expected, exact, reference = expected_of(text, arrays[name], before, scalars)
    comparison = compare(arrays[name], expected, reference=reference, exact=exact)
    print(f"  {name}: {comparison.summary()}")
    if not comparison.passed:
        print(f"  {name}: FAIL: {comparison.reason()}")
    return comparison.passed


def _profile(op: KernelFile, args: argparse.Namespace) -> int:
    check_profile_files(args)
    found, _ = op.launch(args)
    soc = get_soc(args.soc)
    _header(op, found, soc)
    with contextlib.redirect_stdout(sys.stderr):
        prof = profile(found.kernel, soc=soc.name)[found.block_dim](**found.values)
    print(prof.table())
    write_profile_files(args, prof)
    return 0


def _tune(op: KernelFile, args: argparse.Namespace) -> int:
    """Time every block_dim 1, 2, 4, ... up to the SoC's cores of the kernel's kind; keep those whose outputs are
    bit-identical to the default launch's, with no sanitizer finding and no KernelError (a kernel whose arguments
    depend on block_dim computes otherwise)."""
    soc = get_soc(args.soc)
    default, _ = op.launch(args)
    kind = kernel_type(default.kernel)
    most = soc.cube_cores if "AIC" in kind else soc.vector_cores
    print(f"{default.kernel.fn.__name__} ({kind}): tune searches block_dim only, 1 to {most} "
          f"({'AIC' if 'AIC' in kind else 'AIV'} cores of {soc.name}); the tile and BUFFER_NUM are the kernel's own "
          "code (give them with --arg)")
    baseline, tried = None, {}
    for cores in [None] + _candidates(most):
        found = default if cores is None else op.launch(args, cores)[0]
        if found.block_dim in tried:
            continue
        try:
            with contextlib.redirect_stdout(sys.stderr):
                prof = profile(found.kernel, soc=soc.name)[found.block_dim](**found.values)
        except KernelError as exc:
            if baseline is None:  # the default launch itself: the kernel's own error, as run reports it
                raise
            tried[found.block_dim] = (math.inf, f"kernel error: {exc}")
            continue
        outs = {k: found.values[k].tobytes() for k in written(prof.launches[0].trace)}
        baseline = outs if baseline is None else baseline
        why = "outputs differ from the default launch's" if outs != baseline else \
            "sanitizer findings" if prof.findings else ""
        tried[found.block_dim] = (prof.kernel_time_us, why)
    best = min((dim for dim, (_, why) in tried.items() if not why), key=lambda dim: tried[dim][0], default=None)
    for dim, (us, why) in sorted(tried.items()):
        mark = "/".join(label for label, at in (("best", best), ("default", default.block_dim)) if dim == at)
        time_us = f"{us:10.2f} us" if math.isfinite(us) else f"{'-':>13}"
        print(f"  {mark:<12} block_dim {dim:>3}: {time_us}" + (f"  ({why[:160]})" if why else ""))
    if best is None:
        print("no block_dim gives the default launch's outputs without sanitizer findings")
        return 1
    gap = tried[default.block_dim][0] / tried[best][0] - 1
    print(f"  the default block_dim {default.block_dim} is {gap:.1%} slower than the best found ({best})")
    return 0


def _candidates(most: int) -> list[int]:
    powers = [1 << i for i in range(most.bit_length()) if 1 << i <= most]
    return sorted(set(powers + [most]))
