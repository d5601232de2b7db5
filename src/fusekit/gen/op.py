"""A generated operator: trace -> lower + UB plan -> kernel source -> host tiling and launch -> references.

    @fusekit.op(dtypes=("float16", "bfloat16", "float32"))
    def swiglu(a, b):
        return fusekit.silu(a) * b

    y = swiglu(a, b)                          # numpy in, numpy out, on the simulated NPU
    result = swiglu.run(a, b, core_num=7)     # outputs, tilings, Traces
    swiglu.reference("hardware", a, b)        # what the kernel computes, instruction by instruction

Shapes (numpy broadcasting, done by the tiling and the kernel's offsets, never materialised in GM):
a tensor input has the output's shape; or holds one element (0-d), which the kernel takes as a
scalar argument; or is one row of the last axis (a (C,) bias), replicated over a tile's rows in UB
once per core; or one value per row (an (N, 1) scale), loaded per tile and duplicated over its row.
The last two, and last-axis reductions, make the kernel row-tiled (:mod:`fusekit.gen.device`).
Other broadcasts are refused with a message naming the input.
"""

from __future__ import annotations

import inspect
import json
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fusekit import tiling
from fusekit.asc import dtypes, launch, overflow
from fusekit.asc.basic import supports
from fusekit.asc.names import snake_case
from fusekit.soc import SoC, get_soc

from .checked import CheckResult
from .graph import REDUCE, Graph, GraphError, trace
from .lower import FLOATS, PRECISIONS, Program, lower
from .reference import exact as exact_model
from .reference import run_program
from .source import Names, kernel_source, load_kernel

DEFINITION_VERSION = 1  # GeneratedOp.definition's format: bump when it changes, so derived names change too
OP_TYPES = {"float16": "fp16", "float32": "float", "bfloat16": "bf16", "int8": "int8", "int16": "int16",
            "int32": "int32", "uint8": "uint8"}


# keywords of GeneratedOp.run that go on to fusekit.asc.launch (its keyword-only parameters)
_LAUNCH_OPTIONS = frozenset(n for n, p in inspect.signature(launch).parameters.items() if p.kind is p.KEYWORD_ONLY)


def _floating(x) -> bool:
    """Whether ``x`` is a numpy array of a floating dtype (bfloat16 included)."""
    x = np.asarray(x)
    return x.dtype.kind == "f" or x.dtype.name == "bfloat16"


_EXPONENT = {"float16": 0x7C00, "bfloat16": 0x7F80}  # all-ones exponent: inf or NaN (IEEE 754 / bfloat16 layout)


def _non_finite(x: np.ndarray) -> int:
    """How many elements of the floating array ``x`` are inf or NaN (16-bit types by their exponent bits:
    numpy's float16 isfinite is ~5x slower, and this runs after every launch)."""
    bits = _EXPONENT.get(x.dtype.name)
    if bits is None:
        return int(x.size - np.count_nonzero(np.isfinite(x)))
    return int(np.count_nonzero(np.bitwise_and(np.ascontiguousarray(x).view(np.uint16), bits) == bits))


@dataclass
class Variant:
    """One generated kernel: the program, its source file and the ``@asc.jit`` kernel."""

    program: Program
    source: str
    path: Path
    kernel: object
    generate_s: float


@dataclass
class GenRun:
    """Everything one call did: outputs (by name), plans, Traces and wall time (seconds)."""

    outputs: dict
    precision: str
    dtype: str
    soc: SoC
    tilings: list
    launches: list
    wall_s: float
    overflow: str
    variant: Variant

    @property
    def y(self) -> np.ndarray:
        """The first output."""
        return next(iter(self.outputs.values()))


class GeneratedOp:
    """An operator generated from a Python function (see module doc)."""

    def __init__(self, fn, dtypes_=("float16", "float32", "bfloat16"), outputs=None, name: str | None = None,
                 op_type: str | None = None, graph: Graph | None = None, row_outputs: bool = False):
        self.fn = fn
        self.row_outputs = row_outputs  # perf's one-reduction kernels write their row values broadcast
        self.graph: Graph = graph if graph is not None else trace(fn, outputs)
        self.name = name or self.graph.name
        if not self.name.isidentifier():
            raise GraphError(f"operator name {self.name!r} must be a Python identifier")
        self.op_type = op_type or "".join(p.capitalize() for p in self.name.split("_"))
        self.dtypes = tuple(dtypes.as_dtype(d).name for d in dtypes_)
        self._variants: dict = {}
        self._replays: OrderedDict = OrderedDict()  # input signature -> its first GenRun (fusekit.gen.replay)
        from .cube import CubeOp, has_matmul

        self.cube = CubeOp(self) if has_matmul(self.graph) else None  # a matmul: AIC / mix kernels (fusekit.gen.cube)
        self.__doc__ = fn.__doc__
        self.__name__ = self.name

    def __repr__(self) -> str:
        return f"<fusekit.op {self.name}: {self.graph.text()}>"

    # -- front door
    def __call__(self, *arrays, **kwargs):
        """Run on the simulator; returns the output array (a tuple for several outputs)."""
        result = self.run(*arrays, **kwargs)
        outs = tuple(result.outputs.values())
        return outs[0] if len(outs) == 1 else outs

    def variant(self, dtype: str, precision: str, soc=None, scalar_inputs=frozenset(),
                row_inputs=frozenset()) -> Variant:
        """The kernel for GM dtype ``dtype`` in ``precision`` on ``soc`` (generated once, then cached)."""
        from .source import row_kernel_source

        spec = get_soc(soc)
        rows = self.is_rows(row_inputs)
        key = (dtype, precision, spec.name, frozenset(scalar_inputs), frozenset(row_inputs))
        if key not in self._variants:
            started = time.perf_counter()
            program = lower(self.graph, dtype, precision, spec, scalar_inputs, row_inputs, rows, self.row_outputs)
            make = row_kernel_source if rows else kernel_source
            text = make(self.name, program, expression=self.graph.text(),
                        variant=f"{dtype}, precision {precision}, {spec.name}")
            kernel, path = load_kernel(self.name, text)
            self._variants[key] = Variant(program, text, path, kernel, time.perf_counter() - started)
        return self._variants[key]

    def source(self, dtype: str = "float16", precision: str = "native", soc=None) -> str:
        """The generated pyasc source of a variant."""
        return self.variant(dtype, precision, soc).source

    # -- inputs
    def _bind(self, arrays, kwargs):
        names = [n.name for n in self.graph.inputs]
        if len(arrays) != len(names):
            raise TypeError(f"{self.name} takes {len(names)} tensor(s) ({', '.join(names)}), got {len(arrays)}")
        attrs = {}
        for node in self.graph.attrs:
            value = kwargs.pop(node.name, self.graph.defaults[node.name])
            if value is None:
                raise TypeError(f"{self.name} needs the attribute {node.name}= (a float)")
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise TypeError(f"attribute {node.name} must be a real number, got {value!r}")
            attrs[node.name] = float(value)
        unknown = sorted(set(kwargs) - _LAUNCH_OPTIONS)
        if unknown:
            import difflib

            known = [a.name for a in self.graph.attrs]
            close = difflib.get_close_matches(unknown[0], known + sorted(_LAUNCH_OPTIONS), n=1)
            raise TypeError(f"{self.name} has no attribute or launch option {unknown[0]!r}"
                            + (f" (did you mean {close[0]!r}?)" if close else "")
                            + f"; its attributes: {', '.join(known) or 'none'}")
        out = {}
        for name, x in zip(names, arrays):
            if isinstance(x, np.generic):  # a numpy scalar (x.sum(), a 0-d array's .astype): a 0-d tensor
                x = np.asarray(x)
            if not isinstance(x, np.ndarray):
                raise TypeError(f"{name} must be a numpy.ndarray, got {type(x).__name__}; wrap it with numpy.asarray(...)")
            out[name] = x
        return out, attrs

    def _dtype(self, arrays: dict, dtype: str | None) -> str:
        free = {}
        for name, x in arrays.items():
            try:
                got = dtypes.from_numpy(x.dtype).name
            except TypeError:
                raise TypeError(f"{name} has dtype {x.dtype}, which the NPU's vector unit does not take") from None
            fixed = self.graph.input_dtypes.get(name)
            if fixed is not None:
                if got != fixed:
                    raise TypeError(f"{name} must be {fixed} ({self.name}'s signature), got {got}; convert with .astype")
            else:
                free[name] = got
        kinds = set(free.values())
        if len(kinds) > 1:
            raise TypeError(f"{self.name}: inputs {', '.join(f'{k} ({v})' for k, v in free.items())} differ in dtype; "
                            f"convert them to one of {', '.join(self.dtypes)}")
        chosen = kinds.pop() if kinds else (dtype or self.dtypes[0])
        if chosen not in self.dtypes:
            raise TypeError(f"{self.name} takes {', '.join(self.dtypes)}, got {chosen}; convert with .astype(...)")
        return chosen

    def _shapes(self, arrays: dict):
        """(output shape, 0-d inputs, (C,) inputs broadcast along rows) -- see module doc."""
        try:
            shape = np.broadcast_shapes(*(x.shape for x in arrays.values()))
        except ValueError:
            raise ValueError(f"{self.name}: shapes {', '.join(f'{k}{list(v.shape)}' for k, v in arrays.items())} do "
                             "not broadcast (numpy's rules)") from None
        scalars = frozenset(k for k, x in arrays.items() if x.size == 1 and x.shape != shape)
        rows = set()
        for k, x in arrays.items():
            if k in scalars or x.shape == shape:
                continue
            if shape and x.shape[-1:] == shape[-1:] and x.size == shape[-1]:
                rows.add(k)
                continue
            if len(shape) >= 2 and x.shape[-1:] == (1,) and x.size == int(np.prod(shape[:-1])) and \
                    np.broadcast_shapes(x.shape, shape[:-1] + (1,)) == shape[:-1] + (1,):
                from .lower import COLUMN
                rows.add(COLUMN + k)
                continue
            raise ValueError(f"{self.name}: {k} has shape {list(x.shape)} and broadcasts to {list(shape)}; the generated "
                             "kernel takes inputs of the output's shape, one element (a 0-d tensor, passed as a scalar) "
                             "one row of the last axis (a (C,) bias, replicated in UB) or one value per row (N, 1); "
                             f"other broadcasts are not generated: pass numpy.broadcast_to({k}, shape).copy()")
        if shape == () and not any(k not in scalars for k in arrays):
            scalars = frozenset()
        return shape, scalars, frozenset(rows)

    def is_rows(self, row_inputs) -> bool:
        """Whether the kernel is tiled in rows: some input is a row (``row_inputs``) or the graph reduces one."""
        return bool(row_inputs) or any(n.op in REDUCE for n in self.graph.nodes())

    def resolve_precision(self, precision, dtype: str, spec: SoC) -> str:
        """``precision``, or the default for ``dtype`` on ``spec`` (native, fp32 for bfloat16 or a dtype the
        SoC's Add lacks).

        Raises:
            ValueError: an unknown precision, or bfloat16 on a SoC without it.
        """
        if dtype == "bfloat16" and spec.arch == "2002":
            raise ValueError(f"{spec.name} (arch {spec.arch}) has no bfloat16; use float16 or float32")
        if precision is None:
            return "native" if dtype != "bfloat16" and supports(spec, "add", dtype) else "fp32"
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS} or None, got {precision!r}")
        return precision

    # -- run
    def run(self, *arrays, soc=None, core_num: int | None = None, buffer_num: int = 2, precision: str | None = None,
            tile_length: int | None = None, dtype: str | None = None, launcher=None, replay: bool = False,
            **kwargs) -> GenRun:
        """Run the operator on the simulated NPU; returns a :class:`GenRun`.

        Args:
            arrays: the tensor inputs in signature order (numpy arrays; see module doc for shapes).
            soc: SoC name (default Ascend910B1). core_num: most AIV cores. buffer_num: BUFFER_NUM (1..8).
            precision: "native" or "fp32" (default native, fp32 for bfloat16).
            tile_length: force TILE_LENGTH (elements, multiple of 512 B of the narrowest GM dtype); in a
                row-tiled kernel, TILE_ROWS (rows per tile).
            dtype: the floating dtype when no input carries it (all inputs have fixed dtypes).
            replay: simulate the first call of each input signature only and compute later ones with the
                operator's hardware model, returning the first call's Traces (:mod:`fusekit.gen.replay`).
            kwargs: the operator's float attributes by name, then launch options of
                ``fusekit.asc.launch`` (strict, executor, sample_cores, overflow, auto_sync).

        Raises:
            TypeError: a non-array input, a dtype the operator does not take, a missing attribute.
            ValueError: shapes that do not broadcast or need row tiling; a precision or SoC problem.
            GraphError: the expression needs an instruction the SoC (or fusekit.asc) lacks.
            KernelError: the generated kernel broke a hardware rule (a generator bug).
        """
        if replay:
            from . import replay as replayed

            return replayed.run(self, arrays, dict(soc=soc, core_num=core_num, buffer_num=buffer_num,
                                                   precision=precision, tile_length=tile_length, dtype=dtype,
                                                   launcher=launcher), kwargs)
        if self.cube is not None:
            run = self.cube.run(*arrays, soc=soc, core_num=core_num, buffer_num=buffer_num, precision=precision,
                                tile_length=tile_length, dtype=dtype, launcher=launcher, **kwargs)
            named = {node.name: np.asarray(x) for node, x in zip(self.graph.inputs, arrays)}  # bound by cube.run
            return self._warn_overflow(named, run, kwargs)
        spec = get_soc(soc)
        named, attrs = self._bind(arrays, kwargs)
        dt = self._dtype(named, dtype)
        precision = self.resolve_precision(precision, dt, spec)
        shape, scalar_inputs, row_inputs = self._shapes(named)
        var = self.variant(dt, precision, spec, scalar_inputs, row_inputs)
        program = var.program
        values = dict(attrs)
        for k in scalar_inputs:
            values[k] = float(np.asarray(named[k]).reshape(-1)[0].astype(np.float64))
        if program.rows:
            return self._warn_overflow(named, self._run_rows(var, named, values, shape, spec, dt, precision, core_num,
                                                              buffer_num, launcher, kwargs, tile_length), kwargs)
        n = int(np.prod(shape, dtype=np.int64))
        gm = program.gm_dtypes
        tensors = [k for k in program.inputs]
        sizes = [dtypes.as_dtype(gm[k]).sizeof() for k in tensors + list(program.outputs)]
        narrow = min(sizes)
        align = 32 // narrow
        padded = n if spec.data_copy_pad else -(-n // align) * align
        flat = {}
        for k in tensors:
            v = np.ascontiguousarray(named[k], dtype=named[k].dtype.newbyteorder("=")).reshape(-1)
            flat[k] = np.concatenate([v, np.zeros(padded - n, v.dtype)]) if padded != n else v
        outs = {k: np.empty(padded, dtypes.as_dtype(gm[k]).np) for k in program.outputs}
        per_elem = buffer_num * sum(sizes) + program.slots * program.slot_bytes + program.mask_slots  # masks: >= 1/8 B
        tdt = next(gm[k] for k in tensors + list(program.outputs)
                   if dtypes.as_dtype(gm[k]).sizeof() == narrow)
        scalar_args = {_arg(s): values[s] for s in program.scalars}
        started = time.perf_counter()
        plans, launches = [], []
        for first, count in tiling.split_launches(padded, tdt):
            plan = tiling.compute_tiling(count, tdt, num_queues=1, buffer_num=buffer_num, soc=spec, core_num=core_num,
                                         scratch_bytes_per_element=per_elem - buffer_num * narrow,
                                         tile_length=tile_length)
            plans.append(plan)
            window = slice(first, first + count)
            args = tuple(flat[k][window] for k in tensors) + tuple(o[window] for o in outs.values())
            kernel_kwargs = dict(plan.kernel_args(), **scalar_args, TILE_LENGTH=plan.tile_length, BUFFER_NUM=buffer_num)
            if launcher is None:
                launches.append(launch(var.kernel, plan.block_dim, args, kernel_kwargs, soc=spec, **kwargs))
            else:
                launches.append(launcher(var.kernel, plan.block_dim, args, kernel_kwargs, spec))
        if n == 0:
            plans.append(tiling.compute_tiling(0, tdt, buffer_num=buffer_num, soc=spec, core_num=core_num))
        launches = [r for r in launches if r is not None]
        results = {k: o[:n].reshape(shape) for k, o in outs.items()}
        return self._warn_overflow(named, GenRun(results, precision, dt, spec, plans, launches,
                                                 time.perf_counter() - started,
                                                 overflow.choose(spec, kwargs.get("overflow")), var), kwargs)

    def _warn_overflow(self, named: dict, run: GenRun, launch_options: dict) -> GenRun:
        """Issue a :class:`fusekit.PrecisionWarning` when every floating input is finite but a row sum
        overflowed in the kernel (``Trace.overflows``: in native float16 a row's sum of squares passes
        65504 long before an element does, and rsqrt then turns it into a silent 0) or an output holds inf
        or NaN. Runs whose values are not computed plainly (an ``executor``, a ``launcher``) are not checked."""
        from fusekit.verify import warn

        if not run.launches or launch_options.get("executor") is not None:
            return run
        where = [f"{i.op} at {i.file}:{i.line}" for r in run.launches for i in r.trace.overflows[:1]]
        bad = {k: _non_finite(y) for k, y in run.outputs.items() if _floating(y)}
        if not (where or any(bad.values())) or any(_non_finite(x) for x in named.values() if _floating(x)):
            return run  # nothing overflowed, or the inputs were not finite to begin with
        fp32 = "; precision='fp32' computes in float32" if run.precision == "native" and run.dtype != "float32" else ""
        if where:  # the outputs may be finite and wrong (rsqrt(inf) = 0)
            warn(f"{self.name}: {where[0]} overflowed {run.variant.program.compute} from finite inputs (precision "
                 f"{run.precision}): the outputs are wrong{fp32}")
        else:
            what = ", ".join(f"{n} of {run.outputs[k].size} {k} values ({run.outputs[k].dtype})"
                             for k, n in bad.items() if n)
            warn(f"{self.name}: {what} are inf or NaN from finite inputs: a result or an intermediate left the range "
                 f"of its dtype (precision {run.precision}){fp32}")
        return run

    def check(self, *arrays, soc=None, precision: str | None = None, **kwargs) -> CheckResult:
        """Run and compare every output with its own model (``hardware`` or ``fp32``, which it must match
        bit for bit: ``compare(bit_exact=True)``, so one differing element fails and the reason names the
        first) and with ``exact`` (:func:`versus_exact`), by ``fusekit.verify.compare``.

        Returns a :class:`fusekit.gen.checked.CheckResult`: ``.run`` (:class:`GenRun`), ``.comparisons``
        ({output: (own Comparison, exact Comparison)}), ``.passed``; its repr is one line (verdict, max error
        and tolerance per output), and it reads as the mapping check returned before (``result["run"]``,
        ``result[output]``). Raises what :meth:`run` raises."""
        from fusekit.verify import compare

        attrs = {a.name: kwargs[a.name] for a in self.graph.attrs if a.name in kwargs}
        result = self.run(*arrays, soc=soc, precision=precision, **kwargs)
        model = "hardware" if result.precision == "native" else "fp32"
        own = self.reference(model, *arrays, soc=soc, overflow_mode=result.overflow, **attrs)
        rounded, real = self.reference("exact", *arrays, **attrs), self.exact(*arrays, **attrs)
        comparisons = {k: (compare(y, own[k], reference=model, bit_exact=True),
                           versus_exact(y, rounded[k], real[k], result.variant.program.compute))
                       for k, y in result.outputs.items()}
        return CheckResult(self.name, result, comparisons)

    def sanitize(self, *arrays, soc=None, **kwargs) -> list:
        """Run every launch under ``fusekit.sanitize``; returns the sanitizer Reports."""
        from fusekit.sanitizer import sanitize

        reports = []

        def launcher(kernel, block_dim, args, kernel_kwargs, spec):
            outputs = list(self.graph.output_names)
            reports.append(sanitize(kernel, soc=spec, outputs=outputs, overflow=kwargs.get("overflow"))[block_dim](
                *args, **kernel_kwargs))
            return None
        self.run(*arrays, soc=soc, launcher=launcher, **kwargs)
        return reports

    def _run_rows(self, var, named, values, shape, spec, dt, precision, core_num, buffer_num, launcher, kwargs,
                  tile_rows=None):
        """Row tiling (see fusekit.gen.device): rows over cores, TILE_ROWS rows per UB tile (``tile_rows``
        forces it: run's ``tile_length`` counts rows in a row-tiled kernel). The row geometry (ROW, GM_ROW,
        ROW_PAD, TILE_ROWS, LOG_ROWS, RTMP) goes to the kernel as int arguments; the CANN project's TilingFunc
        computes it in C++ the same way (fusekit.gen.project._row_geometry: change both together)."""
        plan, args, kernel_kwargs, outs, finish = self.row_launch(var.program, named, values, shape, spec, core_num,
                                                                  buffer_num, tile_rows)
        started = time.perf_counter()
        launches = []
        if plan.block_dim:
            if launcher is None:
                launches.append(launch(var.kernel, plan.block_dim, tuple(args), kernel_kwargs, soc=spec, **kwargs))
            else:
                launches.append(launcher(var.kernel, plan.block_dim, tuple(args), kernel_kwargs, spec))
        launches = [r for r in launches if r is not None]
        return GenRun(finish(), precision, dt, spec, [plan], launches, time.perf_counter() - started,
                      overflow.choose(spec, kwargs.get("overflow")), var)

    def row_geometry(self, program, shape, spec, core_num, buffer_num, tile_rows=None, step=1) -> tuple:
        """(TilingData, {ROW, GM_ROW, TILE_ROWS, ROW_PAD, LOG_ROWS, RTMP, BUFFER_NUM}) of rows of ``shape[-1]``
        elements of ``program`` (see :meth:`row_launch`).

        Raises:
            ValueError: rows that leave undefined UB lanes, do not fit UB, or pass the kernel's 32-bit lengths; a
                ``tile_rows`` outside what fits.
        """
        from fusekit.asc.basic.vec_reduce import tmp_elements
        from .device import tile_form_rtmp
        from .source import tile_form_row

        gm = program.gm_dtypes
        width = shape[-1] if shape else 1
        n = int(np.prod(shape, dtype=np.int64))
        nrows = n // width if width else 0
        tensors, bcs, outs_ = list(program.inputs), list(program.broadcast), list(program.outputs)
        size = {k: dtypes.as_dtype(gm[k]).sizeof() for k in tensors + bcs + outs_}
        cols = [k for k in tensors if k in program.columns]
        tensors = [k for k in tensors if k not in program.columns]
        granule = 32 // min(size[k] for k in tensors + bcs + outs_)
        row_pad = -(-width // granule) * granule
        gaps = [k for k in tensors + bcs if row_pad * size[k] > -(-width * size[k] // 32) * 32]
        if gaps and width:
            raise ValueError(f"{self.name}: rows of {width} elements are not whole 32 B blocks of {', '.join(gaps)} "
                             f"while the narrower {min(size, key=size.get)} rows need {row_pad} elements: the UB rows "
                             f"would leave undefined lanes. Use a last axis that is a multiple of {granule} elements")
        gm_row = width if spec.data_copy_pad else row_pad
        if n >= 2**31 or nrows * gm_row >= 2**31:
            raise ValueError(f"{self.name}: {n} elements exceed the 32-bit lengths of a row-tiled kernel")
        csize = dtypes.as_dtype(program.compute).sizeof()
        per_row = buffer_num * sum(size[k] for k in cols) + \
            row_pad * (buffer_num * sum(size[k] for k in tensors + outs_) + program.slots * program.slot_bytes
                             + sum(dtypes.as_dtype(program.broadcast[k].dtype).sizeof() for k in bcs)) \
            + 32 * program.row_slots
        repeats = -(-width * csize // 256)
        rtmp = max([tmp_elements(op, spec.arch, csize, repeats, True, False) for op in program.reductions] + [0])
        tiled = 0 < width <= tile_form_row(program)  # rows that may take the tile form (fusekit.gen.device)
        if tiled and program.reductions:  # a batch's row values, then 248 blocks (device.reduce_rows)
            rtmp = max(rtmp, tile_form_rtmp(csize))
        rtmp = -(-max(rtmp, 1) * csize // 32) * 32 // csize
        # in the tile form the row-value slots hold TILE_ROWS rounded up to 8 blocks (Brcb): 7 more blocks each
        fixed = row_pad * max([size[k] for k in bcs] + [0]) + rtmp * csize + 32 * buffer_num * len(cols) \
            + 7 * 32 * program.row_slots * tiled
        if program.mask_slots:  # where: slots rounded up to 256 elements, bit masks of 1/8 B per element
            per_row += program.mask_slots * row_pad // 8
            fixed += program.slots * program.slot_bytes * 255 + 64 * program.mask_slots
        fit = min(4095, (spec.ub_tiling_bytes - fixed) // per_row) if per_row else 4095
        if width and fit < 1:
            per_element = per_row // row_pad + max([size[k] for k in bcs] + [0])
            limit = max((spec.ub_tiling_bytes - rtmp * csize) // per_element // granule * granule, 0)
            raise ValueError(f"{self.name}: one row of {width} elements needs {per_row + fixed} B of UB ({per_row // row_pad}"
                             f" B per element: {len(tensors) + len(outs_)} queues x BUFFER_NUM={buffer_num}, "
                             f"{program.slots} temporaries, {len(bcs)} broadcast rows), more than {spec.name}'s "
                             f"{spec.ub_tiling_bytes} B; rows of at most about {limit} elements fit (lower buffer_num, or "
                             "split the last axis)")
        cores = min(core_num or spec.vector_cores, max(nrows, 1))
        # every core's rows start on a 32 B block of every output: no two cores write one GM block (AD-API DataCopy)
        for k in outs_:
            step = math.lcm(step, 32 // math.gcd(gm_row * size[k], 32))
        block = -(-nrows // cores) if nrows else 0
        block = min(-(-block // step) * step, nrows)
        block_dim = -(-nrows // block) if nrows else 0
        last = nrows - (block_dim - 1) * block if nrows else 0
        if tile_rows is not None and not 1 <= tile_rows <= fit:
            raise ValueError(f"{self.name}: tile_length={tile_rows} rows per tile must be in [1, {fit}] (the most that "
                             f"fit {spec.name}'s UB with BUFFER_NUM={buffer_num})")
        tile_rows = max(1, min(fit if tile_rows is None else tile_rows, block)) if nrows else 1
        plan = tiling.TilingData(nrows, block_dim, block, tile_rows, block // tile_rows, block % tile_rows, last,
                                 last // tile_rows, last % tile_rows, buffer_num, per_row * tile_rows + fixed)
        return plan, dict(ROW=width, GM_ROW=gm_row, TILE_ROWS=tile_rows, ROW_PAD=row_pad,
                          LOG_ROWS=max(tile_rows - 1, 0).bit_length(), RTMP=rtmp, BUFFER_NUM=buffer_num)

    def row_launch(self, program, named, values, shape, spec, core_num, buffer_num, tile_rows=None, step=1):
        """The row-tiled launch of ``program`` without running it: (TilingData, kernel arguments in order, keyword
        arguments, {output: GM array}, a function returning the outputs in ``shape``). ``step``: rows per core a
        multiple of it (a mix kernel's AIC shares, fusekit.gen.cube). See :meth:`_run_rows`."""
        plan, geometry = self.row_geometry(program, shape, spec, core_num, buffer_num, tile_rows, step)
        gm = program.gm_dtypes
        width, gm_row = geometry["ROW"], geometry["GM_ROW"]
        nrows = plan.total_length
        tensors, bcs, outs_ = list(program.inputs), list(program.broadcast), list(program.outputs)
        cols = [k for k in tensors if k in program.columns]
        tensors = [k for k in tensors if k not in program.columns]

        def rows_of(x, k):
            # leading axes fold into rows: (..., C) -> (prod(leading), C); a (C,) row stays one row
            x2 = np.ascontiguousarray(np.broadcast_to(x, shape) if k in tensors else x,
                                      dtype=x.dtype.newbyteorder("=")).reshape(nrows if k in tensors else -1, width)
            if gm_row != width:
                x2 = np.concatenate([x2, np.zeros((x2.shape[0], gm_row - width), x2.dtype)], axis=1)
            return x2.reshape(-1)
        def column(x):  # (N, 1) values; without DataCopyPad the kernel reads whole 32 B blocks: pad by one block
            flat = np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("=")).reshape(-1)
            return np.concatenate([flat, np.zeros(32 // flat.itemsize, flat.dtype)]) if program.column_blocks else flat
        args = [column(named[k]) if k in cols else rows_of(named[k], k) for k in program.inputs] + \
            [rows_of(np.asarray(named[k]).reshape(-1), k) for k in bcs]
        outs = {k: np.empty(nrows * gm_row, dtypes.as_dtype(gm[k]).np) for k in outs_}
        args += list(outs.values())
        scalar_args = {_arg(s): (1.0 / width if s == "inv_row" else values[s]) for s in program.scalars}
        kernel_kwargs = dict(plan.kernel_args(), **geometry, **scalar_args)

        def finish():
            return {k: np.ascontiguousarray(o.reshape(-1, gm_row)[:, :width]).reshape(shape) for k, o in outs.items()}
        return plan, args, kernel_kwargs, outs, finish

    # -- references
    def reference(self, model: str, *arrays, soc=None, precision_dtype: str | None = None,
                  overflow_mode: str | None = None, overflowed: list | None = None, **attrs) -> dict:
        """The outputs under a reference model: ``hardware`` (the native kernel instruction by
        instruction), ``fp32`` (the fp32 kernel's), ``exact`` (float64, one rounding at the end).

        Returns {output name: array of the output's dtype and shape}. ``overflow_mode`` defaults to the
        SoC's (saturation on 310P). ``overflowed``: a list the hardware and fp32 models append the op of each
        row sum that overflowed from finite inputs to (what ``Trace.overflows`` holds for the kernel)."""
        if self.cube is not None:
            return self.cube.reference(model, *arrays, soc=soc, precision_dtype=precision_dtype,
                                       overflow_mode=overflow_mode, overflowed=overflowed, **attrs)
        spec = get_soc(soc)
        named, values = self._bind(arrays, dict(attrs))
        dt = self._dtype(named, precision_dtype)
        shape, scalar_inputs, row_inputs = self._shapes(named)
        for k in scalar_inputs:
            values[k] = float(np.asarray(named[k]).reshape(-1)[0].astype(np.float64))
        rows = self.is_rows(row_inputs)
        width = (shape[-1] if shape else 1) if rows else None
        if rows:
            values["inv_row"] = 1.0 / width if width else 0.0
        from .lower import COLUMN
        flat = {k: np.broadcast_to(x, shape).reshape(-1) if not rows else
                np.broadcast_to(x, shape).reshape(-1, width) for k, x in named.items() if k not in scalar_inputs}
        mode = overflow_mode or spec.overflow_default
        if model != "exact":
            flat.update({k: named[k].reshape(-1) for k in named if COLUMN + k in row_inputs})
        if model == "exact":
            from .lower import natural_dtypes
            gm = natural_dtypes(self.graph, dt)
            wide = exact_model(self.graph, {**flat, **{k: np.float64(values[k]) for k in scalar_inputs}}, values, width)
            out = {}
            for k, v in wide.items():
                v = np.asarray(v)
                v = v.reshape(-1) if v.size == int(np.prod(shape)) else np.broadcast_to(v, shape).reshape(-1)
                target = dtypes.as_dtype(gm[k])
                from fusekit.verify import model as vmodel
                out[k] = (vmodel("exact").result(v, target.np) if target.name in FLOATS else v.astype(target.np))
                out[k] = out[k].reshape(shape)
            return out
        if model not in ("hardware", "fp32"):
            raise ValueError(f"unknown reference model {model!r}; use hardware, fp32 or exact")
        program = lower(self.graph, dt, "native" if model == "hardware" else "fp32", spec, scalar_inputs,
                        row_inputs, rows, self.row_outputs)
        out = run_program(program, flat, values, mode, spec.arch, overflowed)
        return {k: v.reshape(shape) for k, v in out.items()}

    def exact(self, *arrays, soc=None, **attrs) -> dict:
        """The exact float64 results before the final rounding (for ``fusekit.verify.compare``'s ``exact``)."""
        if self.cube is not None:
            return self.cube.exact(*arrays, soc=soc, **attrs)
        named, values = self._bind(arrays, dict(attrs))
        shape, scalar_inputs, row_inputs = self._shapes(named)
        for k in scalar_inputs:
            values[k] = float(np.asarray(named[k]).reshape(-1)[0].astype(np.float64))
        width = (shape[-1] if shape else 1) if self.is_rows(row_inputs) else None
        flat = {k: np.broadcast_to(x, shape).reshape(-1) if width is None else np.broadcast_to(x, shape).reshape(-1, width)
                for k, x in named.items() if k not in scalar_inputs}
        flat.update({k: np.float64(values[k]) for k in scalar_inputs})
        out = exact_model(self.graph, flat, values, width)
        return {k: np.broadcast_to(v.reshape(-1) if width is None else v, np.shape(v)).reshape(shape)
                for k, v in out.items()}

    # -- identity
    def definition(self) -> str:
        """The canonical text of everything that defines the function this operator computes, the same in
        every process: the tensor inputs in order with their fixed dtypes, the attributes in order with
        their defaults (float.hex, exact), the output names, the dtypes it takes in order, the output dtypes
        and the default precision for each of them (``run(precision=None)`` on the default SoC), whether row
        values are written broadcast, and the expression graph as steps with exact constants. Not in it:
        the name (a label) and the launch options (``soc``, ``precision``, ``core_num``, ``buffer_num``),
        which are arguments of every call. ``fusekit.torch`` derives the registered operator's name from it.

        Returns: a str of lines ``key: value``, starting ``fusekit.GeneratedOp definition v1``.
        """
        from .lower import natural_dtypes

        g = self.graph
        spec = get_soc(None)
        lines = [f"fusekit.GeneratedOp definition v{DEFINITION_VERSION}",
                 "inputs: " + ", ".join(f"{n.name}: {g.input_dtypes.get(n.name, '*')}" for n in g.inputs),
                 "attrs: " + ", ".join(f"{a.name}=" + ("required" if g.defaults[a.name] is None else
                                                       float(g.defaults[a.name]).hex()) for a in g.attrs),
                 "outputs: " + ", ".join(g.output_names),
                 "dtypes: " + ", ".join(self.dtypes)]
        for d in self.dtypes:
            outs = natural_dtypes(g, d)
            lines.append(f"{d}: outputs " + ", ".join(f"{k}: {outs[k]}" for k in g.output_names)
                         + f"; default precision {self.resolve_precision(None, d, spec)}")
        lines.append(f"row outputs: {bool(self.row_outputs)}")
        return "\n".join(lines + _graph_steps(g))

    # -- prototype
    def op_info(self) -> list:
        """op_info.json's content (msopgen's format, as ops/fused_add_scale/op_info.json).

        Raises:
            GraphError: the operator's name is not the snake_case of its OpType, the name msopgen looks the
                kernel up by (fusekit.pyasc.opdef), so a CANN project would never find the kernel.
        """
        from .lower import natural_dtypes

        if snake_case(self.op_type) != self.name:
            raise GraphError(f"operator name {self.name!r} does not follow its OpType {self.op_type!r}: msopgen looks the "
                             f"kernel up as {snake_case(self.op_type)!r}, so a CANN project would never find it; name "
                             f"the operator in snake_case, e.g. {snake_case(self.name).strip('_')!r}")
        columns = [natural_dtypes(self.graph, d) for d in self.dtypes]

        def desc(name):
            return {"name": name, "param_type": "required", "format": ["ND"] * len(columns),
                    "type": [OP_TYPES[c[name]] for c in columns]}
        return [{"op": self.op_type, "language": "cpp",
                 "input_desc": [desc(n.name) for n in self.graph.inputs],
                 "output_desc": [desc(n) for n in self.graph.output_names],
                 "attr": [{"name": a.name, "param_type": "required", "type": "float"}
                          if self.graph.defaults[a.name] is None else
                          {"name": a.name, "param_type": "optional", "type": "float",
                           "default_value": self.graph.defaults[a.name]} for a in self.graph.attrs]}]

    def write(self, out_dir, dtype: str | None = None, precision: str | None = None, soc=None) -> list:
        """Write ``op_info.json`` and ``kernel.py`` (the source of the variant for ``dtype``, default the operator's
        first, in ``precision``, default as :meth:`run` chooses) to ``out_dir``; returns the paths."""
        from fusekit.files import write_atomic

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        dtype = dtype or self.dtypes[0]
        precision = self.resolve_precision(precision, dtype, get_soc(soc))
        files = {"op_info.json": json.dumps(self.op_info(), indent=2) + "\n",
                 "kernel.py": self.variant(dtype, precision, soc).source}
        for name, text in files.items():
            write_atomic(out / name, lambda f, text=text: f.write(text.encode()))
        return [out / name for name in files]


def _graph_steps(graph: Graph) -> list:
    """The graph as one line per node in topological order (``t3 = mul(t1, t2)``; leaves as ``input x``,
    ``attr k``, ``const 0x1.0p+1``; params sorted, floats in hex), for :meth:`GeneratedOp.definition`:
    unlike ``Graph.text`` never shortened, and exact for every constant."""
    def exact(v):
        return float(v).hex() if isinstance(v, float) else repr(v)

    ids, lines = {}, []
    for n in graph.nodes():
        ids[id(n)] = f"t{len(ids)}"
        if n.op in ("input", "attr"):
            body = f"{n.op} {n.name}"
        elif n.op == "const":
            body = f"const {exact(n.value)}"
        else:
            params = "".join(f", {k}={exact(v)}" for k, v in sorted(n.params.items()))
            body = f"{n.op}({', '.join(ids[id(a)] for a in n.args)}{params})"
        lines.append(f"{ids[id(n)]} = {body}")
    return lines + [f"out {name} = {ids[id(n)]}" for name, n in zip(graph.output_names, graph.outputs)]


def versus_exact(y: np.ndarray, rounded: np.ndarray, real: np.ndarray, compute: str):
    """``fusekit.verify.compare`` of an output ``y`` with the ``exact`` model: ``rounded`` (its result in
    ``y``'s dtype and shape) and ``real`` (float64, before that rounding).

    A float output is judged by the CANN samples' tolerance of its dtype. An integer output (a Cast to
    int8, ...) may be one quantisation step plus ``compute``'s relative tolerance (float16 1e-3, float32
    1e-4) from exact: the kernel rounds the value it casts to ``compute`` first, which moves a value within
    that distance of a rounding boundary of the integer grid (x.5 for rint) across it, where exact rounds
    the float64 value once; more than ``floor(1e-4 * n)`` elements beyond that fail (the integer samples'
    ERROR_TOL, fusekit.verify). A wrap (128 stored as -128) or a wrong scale is many steps off and fails.
    A bool output has no steps and compares exactly (one step would accept every element inverted)."""
    from fusekit.verify import compare, tolerance

    if np.dtype(y.dtype) == np.bool_:
        return compare(y, rounded, reference="exact")
    if np.dtype(y.dtype).kind in "iu":
        return compare(y, rounded, reference="exact", steps=1, rtol=tolerance(compute))
    return compare(y, rounded, reference="exact", exact=real)


def _arg(name: str) -> str:
    return Names.safe(name)


def op(fn=None, *, dtypes=("float16", "float32", "bfloat16"), outputs=None, name=None):
    """Decorator: turn a function of tensors into a generated operator (:class:`GeneratedOp`).

    Args:
        dtypes: the floating dtypes the operator takes (op_info.json's columns).
        outputs: output names (default ``y``, or ``y0, y1, ...``).
        name: the operator's snake_case name (default the function's).
    """
    def wrap(f):
        return GeneratedOp(f, dtypes, outputs, name)
    return wrap(fn) if fn is not None else wrap


def define_op(expression: str, name: str = "expr", *, dtypes=("float16", "float32", "bfloat16"),
              outputs=None) -> GeneratedOp:
    """An operator from a string expression (the CLI's spelling; see :func:`fusekit.gen.graph.parse`);
    ``dtypes`` and ``outputs`` as :func:`op`'s."""
    from .graph import parse

    return GeneratedOp(parse(expression, name), dtypes, outputs, name=name)
