"""Emit Ascend C C++ from a shipped kernel by tracing its source with Huawei's pyasc.

pyasc traces a Python kernel into MLIR, lowers it and translates it to Ascend C; only compiling
(``bisheng``) and launching need CANN (``docs/pyasc-api.md``). This module stops after the
translation: it never calls pyasc's compiler or launcher, and points pyasc's kernel cache at a
temporary directory it deletes, so nothing that was not really compiled can land in the cache
(``~/.pyasc`` or ``PYASC_CACHE_DIR``).

The kernel is traced with the compile-time constants of a real launch: TILE_LENGTH, BUFFER_NUM and
the precision flag come from ``fusekit.tiling`` for a large input (or the given values). pyasc 1.1.1
has no bfloat16: those kernels are refused.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from fusekit import tiling
from fusekit.asc import dtypes
from fusekit.asc.runtime import annotation_text
from fusekit.files import write_atomic
from fusekit.pyasc.bridge import PyascMissing, pyasc_kernel, require_pyasc
from fusekit.pyasc.kernel_file import KernelFileError, check_names, load_module, op_info_beside, pick_kernel

__all__ = ["EMITTABLE", "Emitted", "PyascMissing", "KernelFile", "emit", "emit_file", "kernel_file", "kernels_of",
           "OPERATORS", "register_operator", "check_dtype", "no_pyasc_cache", "trace_kernel", "write_emitted"]

EXAMPLE_ELEMENTS = 2**24  # the tiling's constants of a large input
EMITTABLE = ("float16", "float32")  # pyasc 1.1.1's floating dtypes (no bfloat16)


@dataclass
class Emitted:
    """What :func:`emit` produced for one kernel.

    Attributes:
        kernel: kernel (C++ function) name.
        dtype: element type name.
        constants: the compile-time constants traced in.
        mlir: the module as pyasc's code generator built it.
        mlir_lowered: the module after pyasc's pass pipeline.
        cpp: the Ascend C source.
        files: files written, if an output directory was given.
    """

    kernel: str
    dtype: str
    constants: dict
    mlir: str
    mlir_lowered: str
    cpp: str
    files: list[Path] = field(default_factory=list)


@dataclass
class KernelFile:
    """A user's kernel to emit: ``FILE:KERNEL`` resolved and its compile-time constants fixed.

    Attributes:
        path: the kernel's Python file.
        kernel: the kernel, loaded on fusekit's simulator (its source is what pyasc traces).
        constants: every ``asc.ConstExpr`` parameter's value.
        scalars: values given for runtime parameters (tracing does not need them; kept for the record).
    """

    path: Path
    kernel: object
    constants: dict
    scalars: dict


def parse_target(text: str) -> "tuple[Path, str | None] | None":
    """``FILE:KERNEL`` or ``FILE.py`` -> (path, kernel name or None); a shipped operator's name -> None."""
    if ":" in text:
        path, _, name = text.rpartition(":")
        if not name.isidentifier():
            raise ValueError(f"{text!r}: expected FILE:KERNEL with KERNEL a Python name, e.g. my_kernel.py:scale_kernel")
        return Path(path), name
    if text.endswith(".py") or "/" in text or Path(text).exists():
        return Path(text), None
    return None


def kernel_file(path: "str | Path", kernel: str | None = None, args: dict | None = None, *, dtype: str = "float16",
                buffer_num: int = 2, tile_length: int | None = None) -> KernelFile:
    """Load the kernel ``kernel`` of ``path`` (on fusekit's simulator, so this works without pyasc)
    and fix its compile-time constants: ``args`` by name, else TILE_LENGTH / BUFFER_NUM / CAST_FP32
    from :func:`constants_of`.

    Raises:
        fusekit.pyasc.kernel_file.KernelFileError (a ValueError): no such file or kernel, an unknown
            parameter in ``args``, or a ConstExpr parameter with no value.
    """
    path, args = Path(path), dict(args or {})
    fn, _ = pick_kernel(load_module(path), kernel, op_info_beside(path), path)
    params = inspect.signature(fn.fn).parameters
    check_names(fn, params, [], None, args)
    known = {k.replace("_", "").lower(): v for k, v in
             constants_of(fn, dtype, buffer_num, tile_length, "native").items()}
    constants = {}
    for name, param in params.items():
        if "ConstExpr" not in annotation_text(param):
            continue
        if name in args:
            constants[name] = args[name]
        elif name.replace("_", "").lower() in known:
            constants[name] = known[name.replace("_", "").lower()]
        else:
            raise KernelFileError(f"{fn.fn.__name__}'s compile-time constant {name!r} has no value; pass it with "
                                  f"--arg {name}=VALUE")
    return KernelFile(path, fn, constants, {k: v for k, v in args.items() if k not in constants})


def emit_file(target: KernelFile, dtype: str = "float16", *, out_dir: "str | Path | None" = None) -> Emitted:
    """Trace a user's kernel (see :func:`kernel_file`) with pyasc; like :func:`emit` for one kernel.

    Raises:
        PyascMissing: pyasc is not installed.
        ValueError: a dtype pyasc cannot trace.
    """
    check_dtype(dtype)
    asc = require_pyasc()
    with no_pyasc_cache():
        result = trace_kernel(asc, target.kernel, dtype, target.constants, target.scalars)
    if out_dir is not None:
        result.files = write_emitted(Path(out_dir), result)
    return result


def check_dtype(dtype: str) -> None:
    if dtype not in EMITTABLE:
        raise ValueError(f"pyasc 1.1.1 cannot trace {dtype} kernels (it has no bfloat16); emit one of "
                         f"{', '.join(EMITTABLE)}. On the NPU, bfloat16 inputs would need a float32 kernel "
                         "and host casts")


# Operator name -> the fusekit kernels it launches, in launch order. ``fusekit.ops`` registers the shipped
# operators (it sits above this layer: the pyasc bridge never imports an operator, an operator names its kernels).
OPERATORS: dict[str, tuple] = {}


def register_operator(name: str, kernels) -> None:
    """Make ``emit(name)`` trace ``kernels`` (in launch order)."""
    OPERATORS[name] = tuple(kernels)


def kernels_of(op) -> list:
    """The fusekit kernels ``op`` launches, in launch order: a registered operator's name, or the kernels themselves.

    Raises:
        ValueError: an operator name nobody registered.
    """
    if not isinstance(op, str):
        return list(op)
    if op not in OPERATORS:
        raise ValueError(f"unknown operator {op!r}; fusekit ships {' and '.join(OPERATORS)}")
    return list(OPERATORS[op])


def emit(op="fused_add_scale", dtype: str = "float16", *, out_dir: "str | Path | None" = None,
         buffer_num: int = 2, tile_length: int | None = None, precision: str = "native") -> list[Emitted]:
    """Trace every kernel of ``op`` (an operator's name or a sequence of kernels, see :func:`kernels_of`)
    with pyasc and return (and optionally write) its Ascend C and MLIR.

    Files written to ``out_dir`` (atomically): ``<kernel>_kernel.cpp``, ``<kernel>.mlir`` (as generated)
    and ``<kernel>.lowered.mlir`` (after pyasc's passes).

    Raises:
        PyascMissing: pyasc is not installed (the message has the install command).
        ValueError: unknown op, a dtype pyasc cannot trace (bfloat16) or a bad tiling parameter.
    """
    check_dtype(dtype)
    if precision not in ("native", "fp32"):
        raise ValueError(f"precision must be 'native' or 'fp32', got {precision!r}")
    plans = [(kernel, constants_of(kernel, dtype, buffer_num, tile_length, precision)) for kernel in kernels_of(op)]
    asc = require_pyasc()  # after the arguments are known good, so their errors show without pyasc
    results = []
    with no_pyasc_cache():
        for kernel, constants in plans:
            results.append(trace_kernel(asc, kernel, dtype, constants))
    if out_dir is not None:
        for result in results:
            result.files = write_emitted(Path(out_dir), result)
    return results


def constants_of(kernel, dtype: str, buffer_num: int, tile_length: int | None, precision: str,
                 n: int = EXAMPLE_ELEMENTS) -> dict:
    """The compile-time constants of ``kernel`` for ``n`` elements: TILE_LENGTH, BUFFER_NUM (and CAST_FP32)."""
    params = inspect.signature(kernel.fn).parameters
    queues = sum(1 for p in params.values() if "GlobalAddress" in str(p.annotation))
    cast = "CAST_FP32" in params and precision == "fp32" and dtype != "float32"
    plan = tiling.compute_tiling(max(n, 1), dtype, num_queues=queues, buffer_num=buffer_num, tile_length=tile_length,
                                 scratch_bytes_per_element=8 if cast else 0)
    return {"TILE_LENGTH": plan.tile_length, "BUFFER_NUM": buffer_num} | ({"CAST_FP32": cast} if "CAST_FP32" in params
                                                                         else {})


def trace_kernel(asc, kernel, dtype: str, constants: dict, scalars: dict | None = None, *, jit=None,
                 gm_dtypes: dict | None = None) -> Emitted:
    """Trace ``kernel`` (or its pyasc ``jit`` twin, when given) with pyasc; ``gm_dtypes`` gives a GM
    argument's dtype by name where it is not ``dtype`` (fusekit.gen's mixed-dtype operators)."""
    from asc.codegen.function_visitor import CodegenOptions
    from asc.codegen.specialization import Specialization
    from asc.common.compat import get_annotations
    from asc.runtime.compiler import CompileOptions, Compiler
    from asc.runtime.jit import MockTensor

    jit = jit if jit is not None else pyasc_kernel(kernel)
    args = {}
    for name, param in inspect.signature(kernel.fn).parameters.items():
        text = str(param.annotation)
        if name in constants:
            args[name] = constants[name]
        elif scalars and name in scalars:
            args[name] = scalars[name]
        elif "GlobalAddress" in text:
            args[name] = MockTensor(getattr(asc, (gm_dtypes or {}).get(name, dtype)))
        elif "float" in text:
            args[name] = 1.0
        else:
            args[name] = 1
    bound = inspect.signature(jit.fn).bind(**args).arguments
    runtime_args, constexprs = jit.split_args(bound, get_annotations(jit.fn))
    types = {name: jit.get_arg_type(value) for name, value in runtime_args.items()}
    try:
        module = jit._run_codegen(Specialization(types, constexprs), CodegenOptions())
    except Exception as exc:  # pyasc's CodegenError: the kernel's Python is not what pyasc's tracer takes
        if not type(exc).__module__.startswith("asc."):
            raise
        raise ValueError(f"pyasc cannot trace {kernel.fn.__name__} ({inspect.getsourcefile(kernel.fn)}): "
                         f"{exc}") from None
    mlir = str(module)
    compiler = Compiler.__new__(Compiler)  # skips looking for bisheng: we translate, never compile
    compiler.options = CompileOptions()
    compiler.run_passes(module)
    lowered = str(module)
    cpp = compiler.run_translation(module)
    return Emitted(kernel.fn.__name__, dtypes.as_dtype(dtype).name, constants, mlir, lowered, cpp)


def write_emitted(out_dir: Path, result: Emitted) -> list[Path]:
    """Write ``result``'s C++ and MLIR dumps to ``out_dir`` (each atomically); returns the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {f"{result.kernel}_kernel.cpp": result.cpp, f"{result.kernel}.mlir": result.mlir,
             f"{result.kernel}.lowered.mlir": result.mlir_lowered}
    written = []
    for name, text in files.items():
        write_atomic(out_dir / name, lambda f, text=text: f.write(text.encode()))
        written.append(out_dir / name)
    return written


class no_pyasc_cache:
    """Point pyasc's kernel cache at a temporary directory for the duration, then delete it.

    pyasc reads PYASC_HOME / PYASC_CACHE_DIR once, into ``asc.runtime.cache.cache_options``; that
    object is what its cache manager uses, so it is the one replaced here.
    """

    def __enter__(self):
        from asc.runtime import cache

        self.cache, self.saved = cache, cache.cache_options
        self.tmp = tempfile.TemporaryDirectory(prefix="fusekit_pyasc_")
        cache.cache_options = cache.CacheOptions(home_dir=self.tmp.name, dir=os.path.join(self.tmp.name, "cache"))
        return self

    def __exit__(self, *exc):
        self.cache.cache_options = self.saved
        self.tmp.cleanup()
