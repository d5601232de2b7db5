"""Shapes of an FX graph's values, static or symbolic, compared without guards.

Under ``torch.compile(dynamic=True)`` (or Dynamo's automatic dynamic shapes, on the recompile after a second
input shape) the FakeTensors of a graph have ``torch.SymInt`` sizes. Turning one into an ``int`` -- ``int(s)``,
``bool(s == t)``, ``s > 0`` -- asks the ShapeEnv for a guard: the compiled graph then holds for that value only
and Dynamo recompiles for the next one. The backend therefore works on *keys*: a static size is its ``int``, a
symbolic one its sympy expression (``s0``, ``s0*s1``; the ShapeEnv's replacements applied), which compare by
structure; the example input's sizes (the SymInts' hints) serve where a number is needed without deciding
anything about the graph (the compile-time check's random inputs, the report's predictions).
"""

from __future__ import annotations

import sympy
import torch
from torch.fx.experimental.symbolic_shapes import optimization_hint


def dim_key(d):
    """An ``int`` for a static size (a SymInt whose expression is a number included), else its sympy expression."""
    expr = d.node.expr if isinstance(d, torch.SymInt) else d
    if isinstance(expr, sympy.Basic):
        return int(expr) if expr.is_number else expr
    return int(expr)


def key(shape) -> tuple:
    """The shape as a tuple of :func:`dim_key`'s: equal tuples are equal shapes for every size."""
    return tuple(dim_key(d) for d in shape)


def hint(shape) -> tuple:
    """The shape at the example inputs' sizes (ints; no guard added)."""
    return tuple(optimization_hint(d) if isinstance(d, torch.SymInt) else int(d) for d in shape)


def is_static(shape) -> bool:
    """Whether every size of ``shape`` (a tensor shape or a key) is a number."""
    return all(isinstance(dim_key(d), int) for d in shape)


def numel_hint(shape) -> int:
    """The element count of a tensor shape at the example sizes (no guard added)."""
    out = 1
    for d in hint(shape):
        out *= d
    return out


def numel(k: tuple):
    """The element count of a key: an int, or a sympy product (canonical, so equal counts compare equal)."""
    out = sympy.Integer(1)
    for d in k:
        out = out * d
    return int(out) if out.is_number else out


def broadcast(*keys) -> tuple:
    """numpy's broadcast of shape keys, by structure: per trailing axis the one size other than 1. Raises
    RuntimeError for two different sizes on one axis (symbolic sizes that Dynamo did not prove equal)."""
    rank = max((len(k) for k in keys), default=0)
    out = []
    for i in range(rank):
        sizes = {k[len(k) - rank + i] for k in keys if len(k) - rank + i >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"sizes {sorted(map(str, sizes))} on axis {i - rank} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def text(k: tuple) -> str:
    """``[s0, 8, 64]``: the key as the report shows it."""
    return "[" + ", ".join(str(d) for d in k) + "]"
