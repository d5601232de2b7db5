"""``fusekit check``: sanitize a user's kernel file over a sweep of sizes, with no harness to write.

The kernel's arguments are built from its parameter names, the way an elementwise operator's
host code would build them:

- parameters annotated ``asc.GlobalAddress`` become GM arrays of ``n`` elements (random inputs;
  outputs zero-filled). Outputs are the names given with ``outputs``, else the outputs of an
  ``op_info.json`` next to the file; only these are checked as pure outputs (read before written).
  Without either, parameters called y, z, out, output, dst or result are zero-filled, and every
  buffer the kernel writes is checked for bytes no core writes;
- ``n``, ``total_length``, ``length``, ``size`` get ``n``; TilingData fields (``block_length``,
  ``tile_num``, ``tail_length``, ``last_*``, ``tile_length``/``TILE_LENGTH``, ``BUFFER_NUM``,
  ``block_dim``) come from ``fusekit.tiling.compute_tiling``; ``ALIGN`` is 32 B in elements;
- float parameters are attributes: their ``op_info.json`` default, else 1.5; ConstExpr flags are
  False; Python defaults are kept; ``args`` overrides any of them by name.

The launch uses the tiling's block_dim (one core for n = 0, so the kernel's zero-length path runs).
"""

from __future__ import annotations

import ast
import inspect
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fusekit import tiling
from fusekit import asc as fusekit_asc
from fusekit.asc import dtypes
from fusekit.asc.runtime import KernelFunction, annotation_text
from fusekit.bridge import load_rebound
from fusekit.opdef import OpDefError, load_op_info
from fusekit.sanitizer import Report, sanitize

DEFAULT_SIZES = (0, 1, 17, 4096, 65539)  # zero, tiny, unaligned tiny, aligned, unaligned past a tile
OUTPUT_NAMES = {"y", "z", "out", "output", "dst", "result"}
LENGTH_NAMES = {"n", "totallength", "length", "size", "total"}
DEFAULT_ATTR = 1.5
_FUSEKIT = str(Path(__file__).resolve().parent)


class CheckError(ValueError):
    """The file, kernel or arguments cannot be checked (a user mistake, one readable line)."""


@dataclass
class SizeResult:
    n: int
    block_dim: int
    report: Report


def check_file(path: "str | Path", *, kernel: str | None = None, sizes=DEFAULT_SIZES, dtype: str | None = None,
               soc: str | None = None, cores: int | None = None, buffer_num: int = 2, outputs=None,
               args: dict | None = None, replay: bool = False, strict: bool = True) -> list[SizeResult]:
    """Sanitize the kernel in ``path`` at every size of ``sizes`` (see module doc for the arguments built).

    Raises:
        CheckError: unreadable file, no (or an ambiguous) kernel, a parameter that cannot be filled.
    """
    path = Path(path)
    module = _load(path)
    op = _op_info(path)
    fn = _pick_kernel(module, kernel, op)
    dtype = dtypes.as_dtype(dtype or (op.dtypes[0] if op else "float16"))
    params = inspect.signature(fn.fn).parameters
    gm = [name for name, p in params.items() if _is_gm(p)]
    _check_names(fn, params, gm, outputs, args or {})
    declared = set(outputs) if outputs else {t.name for t in op.outputs} & set(gm) if op else set()
    outs = declared or OUTPUT_NAMES & set(gm)  # zero-filled; only declared ones are checked as pure outputs
    results = []
    for n in sizes:
        plan_of = lambda size: tiling.compute_tiling(size, dtype, num_queues=max(len(gm), 1),  # noqa: E731
                                                     buffer_num=buffer_num, soc=soc, core_num=cores)
        plan = plan_of(n)
        tile_length = plan_of(max(n, 1)).tile_length  # n = 0 still sizes its buffers like a tiny input
        values = _arguments(fn, params, n, dtype, plan, tile_length, gm, outs, op, args or {})
        block_dim = max(plan.block_dim, 1)
        try:
            report = sanitize(fn, outputs=declared or None, replay=replay, soc=soc, strict=strict)[block_dim](**values)
        except Exception as exc:  # noqa: BLE001 - a Python error in the user's kernel, reported in one line
            raise CheckError(f"{fn.fn.__name__} raised {type(exc).__name__} at {_where(exc, path)} (n = {n}): {exc}") \
                from None
        results.append(SizeResult(n, block_dim, report))
    return results


def _check_names(fn: KernelFunction, params, gm: list[str], outputs, args: dict) -> None:
    unknown = sorted(set(outputs or ()) - set(gm))
    if unknown:
        raise CheckError(f"--outputs {','.join(unknown)}: not GM parameters of {fn.fn.__name__}; its GM parameters are "
                         f"{', '.join(gm) or 'none'}")
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise CheckError(f"--arg {', '.join(unknown)}: {fn.fn.__name__} has no such parameter; its parameters are "
                         f"{', '.join(params)}")


def _where(exc: Exception, path: Path) -> str:
    """file:line of the innermost traceback frame in user code (the kernel file or its helpers)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_FUSEKIT)]
    frame = frames[-1] if frames else traceback.extract_tb(exc.__traceback__)[-1]
    return f"{Path(frame.filename).name}:{frame.lineno}"


def _load(path: Path):
    """Import the file with ``asc`` bound to fusekit's simulator, whether it says ``import asc``
    (pyasc) or ``from fusekit import asc``; its own imports of neighbouring files work as under ``python``."""
    if path.is_dir():
        raise CheckError(f"{path} is a directory; pass the Python file with the kernel")
    if not path.is_file():
        raise CheckError(f"{path}: no such file")
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        return load_rebound(path, fusekit_asc)
    except Exception as exc:  # noqa: BLE001 - any import failure of the user's file is reported in one line
        raise CheckError(f"{path} failed to import: {type(exc).__name__} at {_where(exc, path)}: {exc}") from None
    finally:
        sys.path.remove(folder)


def _op_info(path: Path):
    candidate = path.with_name("op_info.json")
    if not candidate.is_file():
        return None
    try:
        return load_op_info(candidate)
    except OpDefError as exc:
        raise CheckError(str(exc)) from None


def _is_gm(param: inspect.Parameter) -> bool:
    return "GlobalAddress" in annotation_text(param)


def _pick_kernel(module, name: str | None, op) -> KernelFunction:
    kernels = {k: v for k, v in vars(module).items() if isinstance(v, KernelFunction)
               and v.fn.__globals__ is vars(module)}
    if name is not None:
        if name not in kernels:
            raise CheckError(f"no @asc.jit kernel {name!r} in the file; it has {sorted(kernels) or 'none'}")
        return kernels[name]
    if op is not None and op.kernel_name in kernels:
        return kernels[op.kernel_name]
    tops = [k for k in kernels.values() if any(_is_gm(p) for p in inspect.signature(k.fn).parameters.values())]
    if len(tops) != 1:
        found = ", ".join(k.fn.__name__ for k in tops) or "none"
        raise CheckError(f"expected one @asc.jit kernel with asc.GlobalAddress parameters, found {found}; "
                         "choose one with --kernel NAME")
    return tops[0]


def _arguments(fn: KernelFunction, params, n: int, dtype, plan, tile_length: int, gm: list[str], outs: set[str],
               op, overrides: dict) -> dict:
    rng = np.random.default_rng(n)
    fields = {k.replace("_", "").lower(): v for k, v in plan.__dict__.items()}
    fields |= {"tilelength": tile_length, "blockdim": max(plan.block_dim, 1), "align": 32 // dtype.sizeof()}
    attrs = {a.name: a.default for a in op.attrs} if op else {}
    values = {}
    for name, param in params.items():
        key = name.replace("_", "").lower()
        if name in overrides:
            values[name] = overrides[name]
        elif name in gm:
            values[name] = (np.zeros(n, dtype.np) if name in outs else
                            rng.standard_normal(n, dtype=np.float32).astype(dtype.np))
        elif key in LENGTH_NAMES:
            values[name] = n
        elif key in fields:
            values[name] = fields[key]
        elif param.default is not inspect.Parameter.empty:
            values[name] = param.default
        elif _annotated(param, "float"):
            values[name] = DEFAULT_ATTR if attrs.get(name) is None else attrs[name]
        elif _annotated(param, "bool"):
            values[name] = False
        else:
            raise CheckError(f"cannot tell what to pass for parameter {name!r} of {fn.fn.__name__}; "
                             f"pass it with --arg {name}=VALUE")
    return values


def _annotated(param: inspect.Parameter, type_name: str) -> bool:
    return type_name in annotation_text(param)


def parse_arg(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` with a Python literal value (``--arg TILE=256``, ``--arg CAST_FP32=True``)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise CheckError(f"--arg {text!r}: expected NAME=VALUE, e.g. --arg TILE_LENGTH=1024")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise CheckError(f"--arg {text!r}: {value!r} is not a Python literal (a number, True/False or a string)") from None
