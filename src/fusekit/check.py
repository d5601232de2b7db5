"""``fusekit check``: sanitize a user's kernel file over a sweep of sizes, with no harness to write.

For each size n of the sweep, check needs the launch a host would make: block_dim and every
kernel argument. It takes them, in this order of precedence, from

1. ``--arg NAME=VALUE`` (``args``): a fixed value for one parameter;
2. the file's own launch, if it defines ``check_launch(n, dtype)`` at module level (``dtype`` is
   the numpy dtype; a one-parameter ``check_launch(n)`` works too; ``check_launch(n, dtype, cores)``
   also gets ``--cores``, which a two-parameter one that returns block_dim refuses). It returns the arguments for
   n elements in one of three forms:

   - ``(block_dim, {"x": array, "n": 17, ...})``: the launch's block_dim and arguments by name;
   - ``{"x": array, ...}``: arguments by name; block_dim comes from ``fusekit.tiling``;
   - a TilingData object (a dataclass or any object with attributes): its fields fill the
     parameters of the same name (case and underscores ignored), and its ``block_dim`` field,
     if any, sets the launch's block_dim;

   parameters it leaves out are guessed as below;
3. guesses from the parameter names, the way an elementwise operator's host code would build them:

   - parameters annotated ``asc.GlobalAddress`` become GM arrays of n elements: random, except
     declared outputs (``outputs``, else the outputs of an ``op_info.json`` next to the file),
     which are zero-filled and checked for reads before any write. Without a declaration,
     parameters called y, z, out, output, dst or result are taken as outputs only to report them
     when no core touches them (an input may be called y);
   - ``n``, ``total_length``, ``length``, ``size`` get n, the total length, unless the kernel
     multiplies the parameter by ``get_block_idx()`` (a per-core length, as in
     ``start = get_block_idx() * n``): then the n elements are split evenly over block_dim cores
     (the largest block_dim up to the tiling's that divides n) and the parameter gets n / block_dim;
   - TilingData fields (``block_length``, ``tile_num``, ``tail_length``, ``last_*``,
     ``tile_length``/``TILE_LENGTH``, ``BUFFER_NUM``, ``block_dim``) come from
     ``fusekit.tiling.compute_tiling``; ``ALIGN`` is 32 B in elements;
   - float parameters are attributes: their ``op_info.json`` default, else 1.5; ConstExpr flags
     are False; Python defaults are kept.

What check chose is part of each size's result (:attr:`SizeResult.arguments`), and the command
prints it. The launch uses the tiling's block_dim (one core for n = 0, so the kernel's
zero-length path runs).

Findings beyond the sanitizer's: a Python exception of the kernel (or of ``check_launch``) at one
size is a finding for that size, and the sweep goes on; a GM argument that no core reads or
writes is reported (an output the kernel never writes, or an input it ignores). Every GM buffer
the kernel writes is checked for bytes no core writes; declared outputs are also checked for
reads before any write.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fusekit import tiling
from fusekit.asc import dtypes
from fusekit.asc.runtime import KernelFunction, annotation_text
from fusekit.pyasc.kernel_file import (KernelFileError, check_names, is_gm, load_module, op_info_beside, pick_kernel,
                                       user_frame)
from fusekit.sanitizer import Finding, Report, sanitize

DEFAULT_SIZES = (0, 1, 17, 4096, 65539)  # zero, tiny, unaligned tiny, aligned, unaligned past a tile
SIZES_HOOK = "CHECK_SIZES"  # a file's own default sweep (a size that is not an element count: M = N = K of a matmul)
OUTPUT_NAMES = {"y", "z", "out", "output", "dst", "result"}
LENGTH_NAMES = {"n", "totallength", "length", "size", "total"}
DEFAULT_ATTR = 1.5
LAUNCH_HOOK = "check_launch"
PER_CORE_SOURCE = "per-core length: the kernel multiplies it by get_block_idx()"

# The file, kernel or arguments cannot be checked (a user mistake, one readable line): one error whether
# loading the file (fusekit.pyasc.kernel_file, shared with `fusekit emit FILE:KERNEL`) or sweeping it failed
CheckError = KernelFileError


@dataclass
class SizeResult:
    """One size of the sweep.

    Attributes:
        n: elements (the sweep's size).
        block_dim: cores launched.
        report: the sanitizer's report, with check's own findings added.
        arguments: each kernel parameter -> the value passed and where it came from.
    """

    n: int
    block_dim: int
    report: Report
    arguments: dict[str, str] = field(default_factory=dict)

    def describe_launch(self) -> str:
        """``kernel[block_dim](name=value (source), ...)`` on one line."""
        args = ", ".join(f"{k}={v}" for k, v in self.arguments.items())
        return f"{self.report.kernel}[{self.block_dim}]({args})"


@dataclass
class _Kernel:
    """What check knows about the kernel, fixed for the whole sweep."""

    fn: KernelFunction
    path: Path
    params: dict
    gm: list[str]
    outs: set[str]  # GM arguments taken as outputs: declared, else named like one
    declared: set[str]  # declared outputs: zero-filled, checked for reads before writes
    per_core: set[str]  # length parameters the kernel multiplies by get_block_idx()
    op: object
    dtype: dtypes.DataType
    hook: object
    notes: list[str]  # what the reader should know about every size's check
    sizes: tuple = DEFAULT_SIZES  # the sweep when none is given: the file's CHECK_SIZES, else DEFAULT_SIZES


def check_file(path: "str | Path", *, kernel: str | None = None, sizes=None, dtype: str | None = None,
               soc: str | None = None, cores: int | None = None, buffer_num: int = 2, outputs=None,
               args: dict | None = None, replay: bool = False, strict: bool = True,
               auto_sync: bool | None = None) -> list[SizeResult]:
    """Sanitize the kernel in ``path`` at every size of ``sizes`` (see the module doc for the launch).

    Args:
        path: Python file with the ``@asc.jit`` kernel.
        kernel: the kernel's name, if the file has several.
        sizes: element counts (or what the file's check_launch takes as its size), each >= 0; None: the file's
            ``CHECK_SIZES`` if it has one, else :data:`DEFAULT_SIZES`.
        dtype: element type name (default: op_info.json's first, else float16).
        soc, strict, replay, auto_sync: sanitizer options (``fusekit.sanitize``; auto_sync None: the
            kernel's ``@asc.jit(auto_sync=)``, else True).
        cores, buffer_num: given to ``fusekit.tiling.compute_tiling`` for the guesses.
        outputs: GM parameter names that are pure outputs.
        args: parameter name -> value, overriding every other source.

    Returns:
        One :class:`SizeResult` per size, in order. A size at which the kernel raised has one
        finding (tool ``api``, kind ``exception``) naming the exception and the kernel's file:line.

    Raises:
        CheckError: unreadable file, no (or an ambiguous) kernel, a kernel whose name does not match
            op_info.json's op, unknown ``outputs``/``args`` names, a parameter that cannot be filled.
    """
    info = _prepare(Path(path), kernel, dtype, outputs, args or {})
    if sizes is None:
        sizes = info.sizes
    results = []
    for n in sizes:
        results.append(_check_size(info, n, soc, cores, buffer_num, args or {}, replay, strict, auto_sync))
    return results


@dataclass
class Launch:
    """One launch of a kernel file, built as check builds each size's (see the module doc).

    Attributes:
        kernel: the ``@asc.jit`` kernel, loaded on fusekit's simulator.
        path: its file.
        block_dim: blocks launched.
        values: parameter name -> the value to pass (GM parameters: numpy arrays).
        sources: parameter name -> where its value came from (``--arg``, ``check_launch``, ``random``, ...).
        outputs: GM parameters declared as outputs (``outputs=``, else op_info.json's), zero-filled when guessed.
        notes: what the reader should know about the launch (an op_info.json that does not describe the kernel).
    """

    kernel: KernelFunction
    path: Path
    block_dim: int
    values: dict
    sources: dict
    outputs: set[str]
    notes: list[str]

    def describe(self) -> str:
        """``kernel[block_dim](name=value (source), ...)`` on one line, as ``fusekit check`` prints it."""
        args = ", ".join(f"{k}={_show(v)} ({self.sources[k]})" for k, v in self.values.items())
        return f"{self.kernel.fn.__name__}[{self.block_dim}]({args})"


def launch_of(path: "str | Path", n: int, *, kernel: str | None = None, dtype: str | None = None,
              soc: str | None = None, cores: int | None = None, buffer_num: int = 2, outputs=None,
              args: dict | None = None) -> Launch:
    """The launch check makes for size ``n`` of the kernel in ``path`` (one size of :func:`check_file`'s sweep),
    for a caller that runs, times or tunes it (``fusekit run|profile|tune FILE.py:KERNEL``).

    ``cores`` is the launch's block_dim when no argument comes from the tiling guesses (the arguments are all
    given, by ``args`` or ``check_launch``: the kernel reads its share from ``get_block_num()``); otherwise the
    tiling is computed for at most ``cores`` cores and its block_dim is the launch's, so the TilingData fields
    and block_dim agree.

    Raises:
        CheckError: as :func:`check_file`, and a ``check_launch`` that raises (its exception in one line).
    """
    info = _prepare(Path(path), kernel, dtype, outputs, args or {})
    try:
        block_dim, values, sources = _launch(info, n, soc, cores, buffer_num, args or {})
    except CheckError:
        raise
    except Exception as exc:  # noqa: BLE001 - the file's check_launch failed: the user's mistake, one line
        raise CheckError(f"{LAUNCH_HOOK}({n}) of {info.path} raised {type(exc).__name__}: {exc}") from None
    tiled = {"fusekit.tiling", PER_CORE_SOURCE}
    if cores is not None and not tiled & set(sources.values()) and not (info.hook and takes_cores(info.hook)):
        block_dim = cores  # the kernel reads its share from get_block_num(); a check_launch(n, dtype, cores) chose
    return Launch(info.fn, info.path, block_dim, values, sources, info.declared, info.notes)


def _prepare(path: Path, kernel: str | None, dtype: str | None, outputs, args: dict) -> _Kernel:
    module = load_module(path)
    found = op_info_beside(path)
    fn, op = pick_kernel(module, kernel, found, path)
    notes = [] if op is found else [f"{found.source} describes {found.op_type} (kernel {found.kernel_name}), not "
                                    f"{fn.fn.__name__}: its outputs, dtypes and attributes were not used"]
    dtype = dtypes.as_dtype(dtype or (op.dtypes[0] if op else "float16"))
    params = dict(inspect.signature(fn.fn).parameters)
    gm = [name for name, p in params.items() if is_gm(p)]
    check_names(fn, params, gm, outputs, args)
    declared = set(outputs) if outputs else {t.name for t in op.outputs} & set(gm) if op else set()
    stray = sorted({t.name for t in op.outputs} - set(gm)) if op and not outputs else []
    if stray:
        notes.append(f"{op.source} declares output(s) {', '.join(stray)}, which {fn.fn.__name__} has no GM parameter "
                     f"for (its GM parameters: {', '.join(gm) or 'none'}); msopgen's kernel would take those names")
    outs = declared or OUTPUT_NAMES & set(gm)
    hook = getattr(module, LAUNCH_HOOK, None)
    if hook is not None and not callable(hook):
        raise CheckError(f"{path}: {LAUNCH_HOOK} must be a function check_launch(n, dtype), got "
                         f"{type(hook).__name__}")
    per_core = {name for name in _block_idx_factors(fn.fn) if name in params and _key(name) in LENGTH_NAMES}
    sizes = getattr(module, SIZES_HOOK, DEFAULT_SIZES)
    if not (isinstance(sizes, (tuple, list)) and sizes and all(isinstance(n, int) and n >= 0 for n in sizes)):
        raise CheckError(f"{path}: {SIZES_HOOK} must be a tuple of sizes >= 0 (the default sweep of fusekit check), "
                         f"got {sizes!r}")
    return _Kernel(fn, path, params, gm, outs, declared, per_core, op, dtype, hook, notes, tuple(sizes))


def _check_size(k: _Kernel, n: int, soc, cores, buffer_num: int, overrides: dict, replay: bool,
                strict: bool, auto_sync: bool | None) -> SizeResult:
    try:
        block_dim, values, sources = _launch(k, n, soc, cores, buffer_num, overrides, refuse_cores=True)
    except CheckError:
        raise
    except Exception as exc:  # noqa: BLE001 - the file's check_launch failed at this size: a finding
        return SizeResult(n, 0, _exception_report(k, 0, exc, f"{LAUNCH_HOOK}({n})"), {})
    arguments = {name: f"{_show(values[name])} ({sources[name]})" for name in k.params}
    try:
        report = sanitize(k.fn, outputs=k.declared or None, replay=replay, soc=soc, strict=strict,
                          auto_sync=auto_sync)[block_dim](**values)
    except Exception as exc:  # noqa: BLE001 - a Python error of the user's kernel at this size: a finding
        return SizeResult(n, block_dim, _exception_report(k, block_dim, exc, k.fn.fn.__name__), arguments)
    report.findings += _untouched(k, report, values)
    report.notes += k.notes
    return SizeResult(n, block_dim, report, arguments)


def _launch(k: _Kernel, n: int, soc, cores, buffer_num: int, overrides: dict, refuse_cores: bool = False):
    """block_dim, the argument values and where each came from, for size n (``refuse_cores``: see
    :func:`_from_hook`)."""
    def plan_of(size: int) -> tiling.TilingData:
        try:
            return tiling.compute_tiling(size, k.dtype, num_queues=max(len(k.gm), 1), buffer_num=buffer_num, soc=soc,
                                         core_num=cores)
        except (TypeError, ValueError) as exc:
            raise CheckError(f"n = {size}: {exc}") from None

    plan = plan_of(n)
    block_dim = max(plan.block_dim, 1)
    given, given_source, hook_dim = {}, {}, None
    if k.hook is not None:
        given, hook_dim = _from_hook(k, n, cores, refuse_cores)
        given_source = dict.fromkeys(given, LAUNCH_HOOK)
        unknown = sorted(set(given) - set(k.params))
        if unknown:
            raise CheckError(f"{LAUNCH_HOOK}({n}) returned {', '.join(unknown)}, which {k.fn.fn.__name__} has no "
                             f"parameter for; its parameters are {', '.join(k.params)}")
    if hook_dim is not None:
        block_dim = hook_dim
    per_core_n = None
    if k.per_core and hook_dim is None and not (k.per_core & (set(given) | set(overrides))):
        block_dim = _even_split(n, block_dim)
        per_core_n = n // block_dim
    values, sources = {}, {}
    guesses = _Guesser(k, n, plan, plan_of(max(n, 1)).tile_length, block_dim, per_core_n)
    for name, param in k.params.items():
        if name in overrides:
            values[name], sources[name] = overrides[name], "--arg"
        elif name in given:
            values[name], sources[name] = given[name], given_source[name]
        else:
            values[name], sources[name] = guesses.value(name, param)
    return block_dim, values, sources


def takes_cores(hook) -> bool:
    """Whether a ``check_launch`` takes the core count: a third parameter, ``check_launch(n, dtype, cores)``."""
    try:
        return len(inspect.signature(hook).parameters) >= 3
    except (TypeError, ValueError):
        return False


def _from_hook(k: _Kernel, n: int, cores: int | None = None, refuse_cores: bool = False) -> tuple[dict, int | None]:
    """The arguments and block_dim the file's check_launch gives for n on at most ``cores`` cores (see the module
    doc; ``cores`` is passed when given to a ``check_launch(n, dtype, cores)``).

    Raises:
        CheckError: with ``refuse_cores`` (check's sweep), ``cores`` given and a check_launch that takes no cores
            chooses block_dim itself (:func:`launch_of` instead launches ``cores`` blocks: a kernel that reads its
            share from get_block_num()).
    """
    hook = k.hook
    try:
        takes_dtype = len(inspect.signature(hook).parameters) >= 2
    except (TypeError, ValueError):
        takes_dtype = True
    with_cores = cores is not None and takes_cores(hook)
    result = hook(n, k.dtype.np, cores) if with_cores else hook(n, k.dtype.np) if takes_dtype else hook(n)
    block_dim = None
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
        block_dim, result = result
        if refuse_cores and cores is not None and not with_cores:
            raise CheckError(f"--cores {cores}: {k.path}'s {LAUNCH_HOOK}(n, dtype) chooses block_dim itself and takes "
                             f"no core count; give it a third parameter, {LAUNCH_HOOK}(n, dtype, cores), or drop "
                             "--cores")
    if isinstance(result, dict):
        given = dict(result)
    elif dataclasses.is_dataclass(result) or hasattr(result, "__dict__"):
        fields = (dataclasses.asdict(result) if dataclasses.is_dataclass(result) else vars(result))
        by_key = {_key(name): value for name, value in fields.items()}
        given = {name: by_key[_key(name)] for name in k.params if _key(name) in by_key and not is_gm(k.params[name])}
        if block_dim is None and "blockdim" in by_key:
            block_dim = by_key["blockdim"]
    else:
        raise CheckError(f"{LAUNCH_HOOK}({n}) returned {type(result).__name__}; return (block_dim, {{name: value}}), "
                         "{name: value} or a TilingData object")
    if block_dim is not None and (isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer))
                                  or not 1 <= block_dim <= tiling.MAX_CORE_NUM):
        raise CheckError(f"{LAUNCH_HOOK}({n}) gave block_dim={block_dim!r}; it must be a whole number in "
                         f"[1, {tiling.MAX_CORE_NUM}]")
    return given, None if block_dim is None else int(block_dim)


class _Guesser:
    """Values for parameters nobody gave, from their names (see the module doc)."""

    def __init__(self, k: _Kernel, n: int, plan: tiling.TilingData, tile_length: int, block_dim: int,
                 per_core_n: int | None):
        self.k, self.n, self.per_core_n = k, n, per_core_n
        self.rng = np.random.default_rng(n)
        self.fields = {_key(name): value for name, value in plan.__dict__.items()}
        self.fields |= {"tilelength": tile_length, "blockdim": block_dim, "align": 32 // k.dtype.sizeof()}
        self.attrs = {a.name: a.default for a in k.op.attrs} if k.op else {}

    def value(self, name: str, param: inspect.Parameter) -> tuple[object, str]:
        k, key = self.k, _key(name)
        if name in k.gm:
            if name in k.declared:
                return np.zeros(self.n, k.dtype.np), "output, zero-filled"
            return self.rng.standard_normal(self.n, dtype=np.float32).astype(k.dtype.np), "random"
        if name in k.per_core and self.per_core_n is not None:
            return self.per_core_n, PER_CORE_SOURCE
        if key in LENGTH_NAMES:
            return self.n, "total length"
        if key in self.fields:
            return self.fields[key], "fusekit.tiling"
        if param.default is not inspect.Parameter.empty:
            return param.default, "the kernel's default"
        if _annotated(param, "float"):
            if self.attrs.get(name) is not None:
                return self.attrs[name], "op_info.json default"
            return DEFAULT_ATTR, "attribute"
        if _annotated(param, "bool"):
            return False, "flag"
        raise CheckError(f"cannot tell what to pass for parameter {name!r} of {k.fn.fn.__name__}; pass it with "
                         f"--arg {name}=VALUE or return it from {LAUNCH_HOOK}(n, dtype) in the kernel file")


def _even_split(n: int, most: int) -> int:
    """The largest block_dim <= most that divides n (1 for n = 0)."""
    if n == 0:
        return 1
    return next(d for d in range(min(most, n), 0, -1) if n % d == 0)


def _block_idx_factors(fn) -> set[str]:
    """Names the kernel multiplies by ``get_block_idx()`` (directly or through a local holding it)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()

    def is_idx_call(node) -> bool:
        return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "get_block_idx"

    holders = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and is_idx_call(node.value)
               for t in node.targets if isinstance(t, ast.Name)}

    def is_idx(node) -> bool:
        return is_idx_call(node) or (isinstance(node, ast.Name) and node.id in holders)

    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if is_idx(a) and isinstance(b, ast.Name):
                    names.add(b.id)
    return names


def _untouched(k: _Kernel, report: Report, values: dict) -> list[Finding]:
    """Findings for outputs that no core writes at all (not even reads): GM arguments taken as
    outputs (declared, or named like one), and, when none is and the kernel writes no GM at all,
    every non-empty GM argument it never touches (one of them must be the output)."""
    if report.error is not None or report.trace is None:
        return []
    # the kernel's arguments are the buffers of the global space (fusekit.machine.spaces, Scope.GLOBAL)
    accesses = [acc for core in report.trace.cores for instr in core for acc in instr.writes + instr.undefined
                if acc.mem.is_global]
    written = {acc.buffer for acc in accesses}
    touched = written | {acc.buffer for core in report.trace.cores for instr in core for acc in instr.reads
                         if acc.mem.is_global}
    findings = []
    for name in k.gm:
        array = values.get(name)
        if name in touched or name in k.declared or not isinstance(array, np.ndarray) or array.size == 0:
            continue  # declared outputs: the sanitizer reports their unwritten bytes
        if name in k.outs:
            why = "named like an output, it leaves the host reading whatever was in GM"
        elif not written and not k.outs:
            why = "the kernel writes no GM at all, so if this is its output the host reads whatever was in GM"
        else:
            continue
        findings.append(Finding("initcheck", "output never written",
                                f"no core reads or writes GM argument {name} ({array.nbytes} B): {why}",
                                "GM", name, 0, array.nbytes, tensor=name))
    return findings


def _exception_report(k: _Kernel, block_dim: int, exc: Exception, who: str) -> Report:
    where = user_frame(exc)
    finding = Finding("api", "exception", f"{who} raised {type(exc).__name__}: {exc}", locations=(where,) if where
                      else (), ops=(who,) if where else ())
    return Report(k.fn.fn.__name__, block_dim, [finding], exc)


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def _annotated(param: inspect.Parameter, type_name: str) -> bool:
    return type_name in annotation_text(param)


def _show(value) -> str:
    if isinstance(value, np.ndarray):
        try:
            name = dtypes.from_numpy(value.dtype).name
        except (TypeError, ValueError):
            name = str(value.dtype)
        return f"{name}[{value.size}]"
    return repr(value)


def parse_arg(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` with a Python literal value (``--arg TILE=256``, ``--arg CAST_FP32=True``)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise CheckError(f"--arg {text!r}: expected NAME=VALUE, e.g. --arg TILE_LENGTH=1024")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise CheckError(f"--arg {text!r}: {value!r} is not a Python literal (a number, True/False or a string)") from None
