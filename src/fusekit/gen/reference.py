"""The three reference models of a generated operator, derived from its expression graph.

- ``hardware`` / ``fp32``: the lowered program of the native / fp32 variant evaluated instruction
  by instruction in numpy, each result rounded to its destination dtype as the vector unit stores
  it (and saturated under the SoC's saturation mode): the kernel must match it bit for bit. The
  instruction semantics are the documented ones (docs/ascendc-model.md): + - * / max min rounded
  once; exp and ln the real function correctly rounded (to nearest even) to the dtype, the same bits on
  every host, with the simulator's code (fusekit.asc.basic.transcendental.rounded: numpy's float64 value
  where no CPU-dependent path can change the rounding, the C library's elsewhere); rsqrt and reciprocal
  in float64 rounded once;
  scalars converted to the tensor dtype (a float kernel argument is float32 first); Cast rounds by
  its RoundMode and saturates integers.
- ``exact``: the graph in float64 with the real functions from the C library through Python's math
  (fusekit.asc.basic.transcendental.real: exp, log, tanh, erf; not numpy's ufuncs, whose float64 bits
  depend on the CPU), each explicit cast rounded as asked, then one rounding to the output dtype.
"""

from __future__ import annotations

import math

import numpy as np

from fusekit.asc import dtypes, overflow
from fusekit.asc import native
from fusekit.asc.basic.reduction import first_extreme, reduce_sum_order
from fusekit.asc.basic.rounding import RoundMode, convert
from fusekit.asc.basic.spec import REGISTRY
from fusekit.asc.dtypes import nearest
from fusekit.asc.basic.transcendental import real

from .graph import Graph, Node
from .lower import FLOATS, Program


def _np(name: str) -> np.dtype:
    return dtypes.as_dtype(name).np


def _scalar(s, values: dict, dtype: str):
    with np.errstate(over="ignore"):
        return np.array(np.float32(s.number(values))).astype(_np(dtype))[()]


# The instructions' numerics are their specs' (``Spec.compute``: exp and ln the simulator's transcendental model,
# rsqrt and reciprocal in float64): one description, so the hardware model cannot drift from the simulator.
# Independence comes from the ``exact`` model and the IEEE references of the tests (tests/ieee754_ref.py).
_ELEMENTWISE = ("vec_unary", "vec_binary", "vec_binary_scalar")


def row_sum(x: np.ndarray, arch: str, mode: str) -> np.ndarray:
    """ReduceSum's count form over each row of ``x`` ([N, C]) in its documented order (ReduceSum.md,
    关键特性说明): on 2201 a binary tree inside each 256 B repeat, the repeats' sums in order; on 2002 a
    tree over the whole repeats, a tree over the tail, then their sum (the tile form's WholeReduceSums,
    fusekit.gen.device.reduce_rows, keep the 2201 order). It is the simulator's own composition
    (``reduce_sum_order``, over the rows padded with the identity to whole repeats), so it cannot catch a change
    of that order: tests/asc_api/test_reference_reductions.py checks
    the kernel and this model against an independent reference (tests/reduction_ref.py)."""
    n, c = x.shape
    epr = 256 // x.dtype.itemsize
    r = max(-(-c // epr), 1)
    padded = np.full((n, r * epr), x.dtype.type(-0.0), x.dtype)  # lanes past c: the identity, as masked lanes are
    padded[:, :c] = x
    return reduce_sum_order(padded.reshape(n, r, epr), None, c, arch, mode)


def _row_extreme(x: np.ndarray, largest: bool) -> np.ndarray:
    """ReduceMax / ReduceMin: the first extreme of each row (a NaN wins, as fusekit's reduction does)."""
    value, _ = first_extreme(x, None, largest)
    return value


def run_program(program: Program, arrays: dict, values: dict, mode: str, arch: str = "2201",
                overflowed: list | None = None) -> dict:
    """Evaluate ``program`` on input ``arrays`` (name -> 1-D array; [N, C] rows for a row-tiled program,
    (C,) inputs broadcast) and scalar ``values`` (name -> float: attrs, 0-d inputs, inv_row); returns
    {output name: array}. ``overflowed``: a list to append ``"reduce_sum"`` to for each row sum that is inf or NaN
    where its row is finite (the kernel's ``Trace.overflows``, fusekit.asc.basic.vec_reduce)."""
    env = {id(v): arrays[name] for name, v in program.inputs.items()}
    # the tile shape: a full input's ([N, C] in a row program; not an (N, 1) input's N values)
    shape = max((np.shape(a) for a in arrays.values()), key=len) if arrays else (0,)
    for name, v in program.broadcast.items():
        row = np.asarray(arrays[name])
        dt = _np(v.dtype)
        row = convert(row, dtypes.as_dtype(v.dtype), RoundMode.CAST_NONE) if row.dtype != dt else row
        env[id(v)] = np.broadcast_to(row, shape)
    with np.errstate(all="ignore"):
        for ins in program.instrs:
            dt = _np(ins.dst.dtype)
            src = [env[id(s)] for s in ins.srcs]
            if ins.op == "padded":  # the zero lanes past n are never selected
                out = src[0]
            elif ins.op == "compare":  # IEEE 754 comparisons (NaN: only NE is true)
                out = _COMPARE[ins.round](src[0], src[1])
                env[id(ins.dst)] = out
                continue
            elif ins.op == "select":
                out = np.where(src[0], src[1], src[2])
            elif ins.op == "reduce_sum":
                out = row_sum(np.asarray(src[0], dt), arch, mode)
                if overflowed is not None and (~np.isfinite(out) & np.isfinite(src[0]).all(axis=-1)).any():
                    overflowed.append(ins.op)
            elif ins.op in ("reduce_max", "reduce_min"):
                out = _row_extreme(np.asarray(src[0], dt), ins.op == "reduce_max")
            elif ins.op in ("rows_muls", "rows_adds"):  # each row with its row value, rounded once
                row = np.asarray(src[1]).reshape(-1)[:, None]
                out = src[0] * row if ins.op == "rows_muls" else src[0] + row
            elif ins.op == "bcast":  # a row value (or an (N, 1) input's) duplicated over its row
                out = np.broadcast_to(np.asarray(src[0]).reshape(-1)[:, None], shape)
            elif ins.op == "cast":
                out = convert(src[0], dtypes.as_dtype(ins.dst.dtype), RoundMode[ins.round])
            elif ins.op == "duplicate":
                out = np.full(shape, _scalar(ins.scalar, values, ins.dst.dtype), dt)
            elif ins.op in REGISTRY and REGISTRY[ins.op].family in _ELEMENTWISE:
                spec = REGISTRY[ins.op]
                if spec.family == "vec_binary_scalar":  # native.evaluate: float16 + - * / sqrt in C, the same bits
                    out = native.evaluate(spec.compute, src[0], _scalar(ins.scalar, values, ins.dst.dtype))
                else:
                    out = native.evaluate(spec.compute, *src[:1 if spec.family == "vec_unary" else 2])
            else:
                raise NotImplementedError(f"no reference semantics for asc.{ins.op}")
            out = nearest(out, dt)  # float64 results (rsqrt, reciprocal) are rounded once, bfloat16 included
            env[id(ins.dst)] = overflow.apply(out, dt, mode) if ins.dst.dtype in FLOATS else out
    return {name: env[id(v)] for name, v in program.outputs.items()}


_COMPARE = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal, "EQ": np.equal,
            "NE": np.not_equal}

_EXACT = {
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
    "where": np.where,
    "neg": np.negative, "abs": np.abs, "exp": lambda x: real("exp", x), "log": lambda x: real("log", x),
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x,
    "relu": lambda x: np.maximum(x, 0.0), "sigmoid": lambda x: 1 / (1 + real("exp", -x)),
    "silu": lambda x: x / (1 + real("exp", -x)), "tanh": lambda x: real("tanh", x),
    "gelu_tanh": lambda x: 0.5 * x * (1 + real("tanh", math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x)))),
    "gelu_erf": lambda x: 0.5 * x * (1 + real("erf", x / math.sqrt(2))),
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
    "minimum": np.minimum, "leaky_relu": lambda x, a: np.where(x >= 0, x, x * a),
}


def exact(graph: Graph, arrays: dict, values: dict, width: int | None = None) -> dict:
    """The graph in float64 on flat ``arrays``; returns {output name: float64 array} before the final
    rounding (explicit casts inside the expression are rounded as they ask)."""
    memo: dict[int, np.ndarray] = {}

    def ev(node: Node):
        if id(node) in memo:
            return memo[id(node)]
        if node.op == "input":
            out = np.asarray(arrays[node.name]).astype(np.float64)
        elif node.op == "attr":
            out = np.float64(values[node.name])
        elif node.op == "const":
            out = np.float64(node.value)
        elif node.op in ("sum", "mean", "max", "min"):
            x = ev(node.args[0])
            x = np.broadcast_to(x, (next(iter(arrays.values())).shape[0], width)) if np.ndim(x) < 2 else x
            fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[node.op]
            out = fn(x, axis=-1, keepdims=True)
        elif node.op == "cast":
            x = ev(node.args[0])
            target = dtypes.as_dtype(node.params["dtype"])
            mode = RoundMode["CAST_" + node.params["rounding"].upper()]
            out = convert(np.asarray(x, np.float64), target, mode).astype(np.float64)
        else:
            out = _EXACT[node.op](*(ev(a) for a in node.args))
        memo[id(node)] = out
        return out

    with np.errstate(all="ignore"):
        return {name: np.asarray(ev(node), np.float64) for name, node in zip(graph.output_names, graph.outputs)}
