"""Reverse-mode differentiation of an expression graph: the backward of a generated operator is itself
a generated fused operator.

``backward(graph, dtype, compute)`` sweeps ``graph`` from its outputs to its inputs and builds, out of
the same primitives, a :class:`~fusekit.gen.graph.Graph` whose inputs are the forward inputs it needs
and one gradient per floating output (``grad_<output>``), and whose outputs are the gradients of the
floating inputs (``grad_<input>``), at the broadcast shape of the call: the caller sums them back to a
broadcast input's shape. Forward values the gradient needs (sigmoid(x), a row's mean, ...) are
recomputed inside the backward kernel from the shared forward nodes instead of being saved in GM.

The rules are PyTorch's (tools/autograd/derivatives.yaml and the ``*_backward`` functions of ATen),
including its choices at points where the function has no derivative:

- ``relu``: 0 at x = 0 (threshold_backward: ``result > 0``); ``leaky_relu``: slope at x = 0 (``x > 0``);
- ``maximum`` / ``minimum`` of two tensors: the gradient is split in halves on ties; against a number
  or an attribute (``clamp``): the tensor gets the whole gradient on the bound (``x >= lo``, ``x <= hi``);
- ``abs``: sign(x), 0 at 0; ``where``: the gradient goes to the selected side only;
- ``max`` / ``min`` along the last axis (torch.amax / amin): shared evenly between tied elements;
- ``sum``: the row's gradient over the row; ``mean``: times 1/C, an attribute ``inv_cols`` the caller
  passes (the row length is known only at the call);
- casts: float -> float casts the gradient back; integer casts and comparisons stop it.

The indicator ``[x > 0]`` is arithmetic, ``min(max(x * K * K, 0), 1)``, so that it also works in
row-tiled kernels (where Compare / Select are not generated, fusekit.gen.lower.where): ``K * K`` scales
the smallest positive subnormal of the compute dtype to at least 1 (K = 2^12 for float16, 2^75 for
float32) and an overflow to inf (or, saturating, to the largest value) still gives 1, so the result is
exactly 0 or 1 for every non-NaN x. At a NaN the hardware's max / min decide (torch gives 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .graph import COMPARE, REDUCE, Graph, GraphError, Node, Sym
from .graph import maximum, minimum, sum as row_sum, tanh as _tanh, exp as _exp, absolute, reciprocal, sigmoid
from .lower import AS_A, AS_P, FLOATS, GELU_C

# K of the indicator per compute dtype (see module doc): K * K * smallest subnormal >= 1
STEP_SCALE = {"float16": 2.0 ** 12, "float32": 2.0 ** 75, "bfloat16": 2.0 ** 75}
INV_COLS = "inv_cols"


@dataclass
class Backward:
    """The backward operator of a graph for one dtype and compute dtype.

    Attributes:
        op: the fused backward :class:`~fusekit.gen.op.GeneratedOp` (None when no gradient needs a kernel).
        grads: forward input name -> ("output", backward output name) or ("input", gradient input name)
            when the gradient is an incoming gradient unchanged; inputs without a gradient are absent.
        grad_names: forward output name -> name of its gradient among the backward op's inputs.
        inv_cols: the name of the attribute that takes 1/C (C: the last axis), or None.
    """

    op: object
    grads: dict
    grad_names: dict
    inv_cols: str | None


def _s(node: Node) -> Sym:
    return Sym(node)


class _Sweep:
    """One reverse sweep over ``graph`` for GM dtype ``dtype`` computed in ``compute``."""

    def __init__(self, graph: Graph, dtype: str, compute: str):
        self.graph, self.dtype, self.k = graph, dtype, STEP_SCALE[compute]
        self.natural: dict[int, str] = {}
        self.rows: dict[int, bool] = {}
        self.keep: list = []  # the nodes whose id() keys the memos stay alive
        self.inv_cols: Node | None = None

    def per_row(self, n: Node) -> bool:
        """One value per row (a reduction, or arithmetic on such values and scalars): fusekit.gen.lower's rule."""
        if id(n) not in self.rows:
            tensors = [a for a in n.args if not a.is_scalar]
            self.rows[id(n)] = n.op in REDUCE or (bool(tensors) and n.op != "input" and
                                                  all(self.per_row(a) for a in tensors))
            self.keep.append(n)
        return self.rows[id(n)]

    # -- dtypes, the generator's rule (fusekit.gen.lower.natural_dtypes) node by node
    def dtype_of(self, n: Node) -> str:
        if id(n) not in self.natural:
            if n.op == "input":
                d = self.graph.input_dtypes.get(n.name, self.dtype)
            elif n.op == "cast":
                d = n.params["dtype"]
            elif n.op in ("const", "attr"):
                d = self.dtype
            elif n.op in COMPARE:
                d = "bool"
            else:
                kinds = [self.dtype_of(a) for a in n.args if not a.is_scalar and a.op not in COMPARE]
                d = kinds[0] if kinds else self.dtype
            self.natural[id(n)] = d
        return self.natural[id(n)]

    def differentiable(self, n: Node) -> bool:
        return not n.is_scalar and n.op not in COMPARE and self.dtype_of(n) in FLOATS

    # -- building blocks
    def positive(self, x: Sym) -> Sym:
        """[x > 0], exactly 0 or 1 (module doc)."""
        return minimum(maximum(x * self.k * self.k, 0.0), 1.0)

    def indicator(self, cond: Node) -> Sym:
        """``cond`` (a comparison) as 0 / 1."""
        left = _s(cond.args[0]) - _s(cond.args[1])
        gt, lt = self.positive(left), self.positive(-left)
        return {"gt": gt, "lt": lt, "ge": 1.0 - lt, "le": 1.0 - gt, "ne": gt + lt, "eq": 1.0 - gt - lt}[cond.op]

    def phi(self, x: Sym) -> Sym:
        """The normal CDF by Abramowitz and Stegun 7.1.26, as the forward gelu_erf (fusekit.gen.lower)."""
        z = absolute(x) * (1 / math.sqrt(2))
        t = reciprocal(z * AS_P + 1.0)
        p = t * AS_A[4]
        for coef in reversed(AS_A[:4]):
            p = (p + coef) * t
        erfc = p * _exp(-(z * z))
        at_least_0 = 1.0 - self.positive(-x)
        return erfc * 0.5 + at_least_0 * (1.0 - erfc)

    # -- one rule per primitive: [(operand, its gradient contribution)]
    def rule(self, n: Node, g: Sym) -> list:
        op, args, y = n.op, n.args, _s(n)
        a = _s(args[0]) if args else None
        b = _s(args[1]) if len(args) > 1 else None
        if op == "add":
            return [(args[0], g), (args[1], g)]
        if op == "sub":
            return [(args[0], g), (args[1], -g)]
        if op == "mul":
            return [(args[0], g * b), (args[1], g * a)]
        if op == "div":
            return [(args[0], g / b), (args[1], (-g) * a / (b * b))]
        if op in ("maximum", "minimum"):
            return self.extreme(op, args, g)
        if op == "neg":
            return [(args[0], -g)]
        if op == "abs":
            return [(args[0], g * (self.positive(a) - self.positive(-a)))]
        if op == "exp":
            return [(args[0], g * y)]
        if op == "log":
            return [(args[0], g / a)]
        if op == "sqrt":
            return [(args[0], g / (y * 2.0))]
        if op == "rsqrt":
            return [(args[0], g * (y * y * y) * -0.5)]
        if op == "reciprocal":
            return [(args[0], (-g) * (y * y))]
        if op == "relu":
            return [(args[0], g * self.positive(a))]
        if op == "leaky_relu":
            p = self.positive(a)
            return [(args[0], g * p + g * _s(args[1]) * (1.0 - p))]
        if op == "sigmoid":
            return [(args[0], g * (1.0 - y) * y)]
        if op == "silu":
            s = sigmoid(a)
            return [(args[0], g * s * (a * (1.0 - s) + 1.0))]
        if op == "tanh":
            return [(args[0], g * (1.0 - y * y))]
        if op == "gelu_tanh":  # ATen's GeluBackward, tanh approximation
            t = _tanh((a + a * a * a * 0.044715) * GELU_C)
            right = a * 0.5 * (1.0 - t * t) * ((a * a * (3 * 0.044715) + 1.0) * GELU_C)
            return [(args[0], g * ((t + 1.0) * 0.5 + right))]
        if op == "gelu_erf":  # x * Phi(x): Phi(x) + x * pdf(x)
            pdf = _exp(a * a * -0.5) * (1 / math.sqrt(2 * math.pi))
            return [(args[0], g * (self.phi(a) + a * pdf))]
        if op == "where":
            i = self.indicator(args[0])
            return [(args[1], g * i), (args[2], g * (1.0 - i))]
        if op == "cast":
            src, dst = self.dtype_of(args[0]), n.params["dtype"]
            if src not in FLOATS or dst not in FLOATS:
                return []
            return [(args[0], g if src == dst else Sym(Node("cast", (g.node,), {"dtype": src, "rounding": "rint"})))]
        if op == "sum":
            return [(args[0], g)]
        if op == "mean":
            if self.inv_cols is None:
                self.inv_cols = Node("attr", name=INV_COLS)
            return [(args[0], g * _s(self.inv_cols))]
        if op in ("max", "min"):  # torch.amax / amin: shared by the tied elements
            tied = 1.0 - self.positive(y - a if op == "max" else a - y)
            return [(args[0], g / row_sum(tied, axis=-1, keepdims=True) * tied)]
        if op in COMPARE:
            return []
        raise GraphError(f"no derivative for the primitive {op!r}")

    def extreme(self, op: str, args, g: Sym) -> list:
        x0, x1 = args
        if x0.is_scalar or x1.is_scalar:  # clamp: the bound itself passes the gradient (torch.clamp)
            t, s = (x1, x0) if x0.is_scalar else (x0, x1)
            t_, s_ = _s(t), _s(s)
            beyond = self.positive(s_ - t_) if op == "maximum" else self.positive(t_ - s_)
            return [(t, g * (1.0 - beyond))]
        a, b = _s(x0), _s(x1)
        above, below = self.positive(a - b), self.positive(b - a)
        tie = g * 0.5 * (1.0 - above - below)  # torch.maximum / minimum: halves on ties
        first, second = (above, below) if op == "maximum" else (below, above)
        return [(x0, g * first + tie), (x1, g * second + tie)]

    # -- the sweep
    def run(self, seeds: dict) -> dict:
        """{id(node): adjoint Sym} for every differentiable node reached from ``seeds`` {output node id: Sym}."""
        order = self.graph.nodes()
        parts: dict[int, list] = {}
        for node in {id(n): n for n in self.graph.outputs}.values():
            if id(node) in seeds:
                self.add(parts, node, seeds[id(node)])
        adjoint = {}
        for node in reversed(order):
            if id(node) not in parts:
                continue
            total = parts.pop(id(node))
            g = total[0]
            for c in total[1:]:
                g = g + c
            adjoint[id(node)] = g
            if node.op in ("input", "attr", "const"):
                continue
            for arg, c in self.rule(node, g):
                if self.differentiable(arg):
                    self.add(parts, arg, c)
        return adjoint

    def add(self, parts: dict, node: Node, c: Sym) -> None:
        if self.per_row(node) and not self.per_row(c.node):  # a row value used over its row: sum the row's gradient
            c = row_sum(c, axis=-1, keepdims=True)
        parts.setdefault(id(node), []).append(c)


def _unique(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def backward(graph: Graph, dtype: str, compute: str | None = None, name: str | None = None) -> Backward:
    """The backward operator of ``graph`` for GM dtype ``dtype`` computed in ``compute`` (default ``dtype``;
    float32 in precision fp32). See the module doc and :class:`Backward`.

    Raises:
        GraphError: a primitive without a derivative.
    """
    from .op import GeneratedOp

    sweep = _Sweep(graph, dtype, compute or dtype)
    taken = {n.name for n in graph.inputs} | {a.name for a in graph.attrs} | set(graph.output_names)
    grad_in, seeds, grad_names = [], {}, {}
    fixed = {}
    for out_name, node in zip(graph.output_names, graph.outputs):
        if not sweep.differentiable(node):
            continue
        g = Node("input", name=_unique(f"grad_{out_name}", taken))
        grad_in.append(g)
        grad_names[out_name] = g.name
        fixed[g.name] = sweep.dtype_of(node)
        seeds[id(node)] = seeds[id(node)] + Sym(g) if id(node) in seeds else Sym(g)  # one value returned twice
    adjoint = sweep.run(seeds)
    outputs, out_names, grads, by_node = [], [], {}, {}
    for x in graph.inputs:
        adj = adjoint.get(id(x))
        if adj is None or not sweep.differentiable(x):
            continue
        node = adj.node
        if sweep.dtype_of(node) != sweep.dtype_of(x):
            node = Node("cast", (node,), {"dtype": sweep.dtype_of(x), "rounding": "rint"})
        if node.op == "input":
            grads[x.name] = ("input", node.name)
            continue
        if id(node) not in by_node:
            by_node[id(node)] = _unique(f"grad_{x.name}", taken)
            outputs.append(node)
            out_names.append(by_node[id(node)])
        grads[x.name] = ("output", by_node[id(node)])
    if not outputs:
        return Backward(None, grads, grad_names, None)
    bwd = Graph(name or f"{graph.name}_backward", [], [], outputs, tuple(out_names), {}, {})
    used = {id(n) for n in bwd.nodes()}
    bwd.inputs = [n for n in list(graph.inputs) + grad_in if id(n) in used]
    bwd.attrs = [a for a in graph.attrs if id(a) in used]
    if sweep.inv_cols is not None and id(sweep.inv_cols) in used:
        sweep.inv_cols.name = _unique(INV_COLS, taken)
        bwd.attrs.append(sweep.inv_cols)
    bwd.defaults = {a.name: graph.defaults.get(a.name) for a in bwd.attrs}
    bwd.input_dtypes = {n.name: fixed.get(n.name) or sweep.dtype_of(n) for n in bwd.inputs}

    def fn():
        pass
    fn.__doc__ = f"The backward of {graph.name} ({graph.text()}) for {dtype}, computed in {compute or dtype}."
    rows = any(sweep.per_row(n) for n in outputs)
    op = GeneratedOp(fn, (dtype,), tuple(out_names), bwd.name, graph=bwd, row_outputs=rows)
    return Backward(op, grads, grad_names, sweep.inv_cols.name if sweep.inv_cols is not None and
                    sweep.inv_cols in bwd.attrs else None)
