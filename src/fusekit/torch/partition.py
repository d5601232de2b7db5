"""Finding the fusible groups of an ATen FX graph and turning each into a fusekit.gen expression.

The graph is the one AOTAutograd hands a compiler (functional ATen ops; ``node.meta["val"]`` holds a
FakeTensor with the shape and dtype of every value). A node is *fusible* when :data:`HANDLERS` knows
its ATen op (pointwise arithmetic and activations, comparisons feeding ``where``, dtype casts, scalar
powers, last-axis reductions with ``keepdim``, softmax / log-softmax / layer norm along the last axis
and the backward formulas of silu, gelu, sigmoid, tanh, relu and softmax) and its tensors are CPU
float16 / bfloat16 / float32. A *group* is a set of fusible nodes of one shape class: every node has
the group's shape ``S`` or is a per-row value of shape ``S[:-1] + (1,)`` (what a keepdim reduction
gives), so the generator's row tiling can run it as one kernel (:mod:`fusekit.gen.op`).

Groups grow greedily in topological order: a node joins the groups of its fusible operands when the
merge keeps the graph acyclic (no operand outside the merged group depends on it). Each group becomes
a :class:`fusekit.gen.graph.Graph`: its external tensors are the inputs ``x0, x1, ...``, the members
whose values are used outside are the outputs ``y0, y1, ...``; ATen's type promotion is spelled out
with explicit casts, so every arithmetic primitive sees operands of its result dtype. A bool tensor
computed outside (a ``where`` condition, a mask) comes in as 0 / 1 in the group's dtype; a comparison
whose bool result is needed by anything but ``where`` stays eager (kernels write float outputs). An
output that is one value per row is written broadcast over its row (the generator's ``row_outputs``;
the caller keeps column 0), since the generator's kernels write whole rows.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch

from fusekit.gen import graph as G

from . import matmul as MM
from . import shapes as S

aten = torch.ops.aten

FLOATS = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}
TORCH = {v: k for k, v in FLOATS.items()}
VIEWS = "alias"  # handler result kind: the node is its operand (no primitive), e.g. expand, detach


class Unfusible(Exception):
    """A node the generator cannot take (the message says why)."""


def val(node):
    """The FakeTensor (or tuple of them, or a Python value) recorded for an FX node."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else node


def shape_of(node) -> tuple:
    """The node's shape as a key (:func:`fusekit.torch.shapes.key`: ints, sympy expressions for symbolic sizes)."""
    return S.key(val(node).shape)


def is_size(node) -> bool:
    """Whether ``node`` is a size of a dynamic-shape graph (a SymInt input, ``sym_size``, a product of SymInts), not
    a tensor: no ATen kernel."""
    return isinstance(val(node), (torch.SymInt, torch.SymFloat, torch.SymBool))


def dtype_of(node):
    v = val(node)
    return v.dtype if isinstance(v, torch.Tensor) else None


# -- the ATen vocabulary -----------------------------------------------------------------------------
class Ctx:
    """What a handler sees: the node, its operands as Syms (tensor operands) or Python numbers."""

    def __init__(self, node, env):
        self.node, self.env = node, env

    def arg(self, i, default=None):
        """The i-th positional argument (ATen graphs pass the schema's positional arguments by position and
        only its keyword-only ones, such as alpha or approximate, by name)."""
        return self.node.args[i] if i < len(self.node.args) else default

    def sym(self, a, dtype=None):
        """``a`` as a Sym (tensor operand, cast to ``dtype`` if its dtype differs) or a float constant."""
        if isinstance(a, torch.fx.Node):
            s = self.env[a]
            if dtype is not None and dtype_of(a) != dtype:
                flag = self.env.get(("as 0/1", a))  # a bool operand used as a number: its 0 / 1 input
                if flag is not None:
                    return flag[0] if flag[1] == FLOATS[dtype] else G.cast(flag[0], FLOATS[dtype])
                s = G.cast(s, FLOATS[dtype])
            return s
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            raise Unfusible(f"operand {a!r} is not a tensor or a real number")
        return float(a)

    @property
    def out_dtype(self):
        return dtype_of(self.node)

    def x(self, i=0):
        return self.sym(self.arg(i), self.out_dtype)


def _last_axis(node, dims, keepdim):
    rank = len(shape_of(node.args[0]))
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    if [d % rank for d in dims] != [rank - 1] if rank else True:
        raise Unfusible(f"reduction over dims {dims} of a rank-{rank} tensor: the generator reduces the last axis only")
    if not keepdim:
        raise Unfusible("reduction without keepdim=True: the generator keeps the reduced axis (keepdims)")


def _binary(prim):
    def handle(c: Ctx):
        a, b = c.x(0), c.x(1)
        alpha = c.node.kwargs.get("alpha", 1)
        if alpha != 1:
            b = b * float(alpha)
        return prim(a, b)
    return handle


def _compare(prim):
    def handle(c: Ctx):
        kinds = [dtype_of(a) for a in c.node.args[:2] if isinstance(a, torch.fx.Node)]
        common = kinds[0] if len(kinds) == 1 else torch.promote_types(*kinds)
        return prim(c.sym(c.arg(0), common), c.sym(c.arg(1), common))
    return handle


def _unary(prim):
    return lambda c: prim(c.x(0))


def _pow(c: Ctx):
    p = c.arg(1)
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise Unfusible("pow with a tensor exponent: only scalar exponents map to vector instructions")
    x = c.x(0)
    if p == 1:
        return x
    if p in (2, 3, 4):
        out = x
        for _ in range(int(p) - 1):
            out = out * x
        return out
    return x ** p  # 0.5, -0.5, -1; GraphError for the rest


def _reduce(prim):
    def handle(c: Ctx):
        dims = c.arg(1)
        keep = c.arg(2) if len(c.node.args) > 2 else c.node.kwargs.get("keepdim", False)
        if c.node.kwargs.get("dtype") not in (None, c.out_dtype):
            raise Unfusible("reduction with a dtype= argument")
        _last_axis(c.node, dims, keep)
        return prim(c.x(0), axis=-1, keepdims=True)
    return handle


def _softmax(log: bool):
    def handle(c: Ctx):
        _last_axis(c.node, c.arg(1), True)
        x = c.sym(c.arg(0), c.out_dtype)  # half_to_float: computed in the result's dtype
        shifted = x - G.max(x, axis=-1, keepdims=True)
        if log:
            return shifted - G.log(G.sum(G.exp(shifted), axis=-1, keepdims=True))
        e = G.exp(shifted)
        return e / G.sum(e, axis=-1, keepdims=True)
    return handle


def _to_copy(c: Ctx):
    extra = {k: v for k, v in c.node.kwargs.items() if k != "dtype" and v is not None}
    if extra.get("layout") == torch.strided:
        extra.pop("layout")
    if "device" in extra and torch.device(extra["device"]).type == "cpu":
        extra.pop("device")
    if extra.get("memory_format") in (torch.preserve_format, torch.contiguous_format):
        extra.pop("memory_format")  # the kernel's outputs are contiguous
    if extra.get("pin_memory") is False:
        extra.pop("pin_memory")
    if extra:
        raise Unfusible(f"_to_copy with {', '.join(extra)}: only dtype conversions are fused")
    return c.sym(c.arg(0), c.out_dtype)


def _where(c: Ctx):
    cond = c.arg(0)
    if not isinstance(cond, torch.fx.Node) or cond not in c.env or dtype_of(cond) != torch.bool:
        raise Unfusible("where with a condition computed outside the group (a bool tensor is not a kernel input)")
    return G.where(c.env[cond], c.x(1), c.x(2))


def _clamp(c: Ctx):
    lo, hi = c.arg(1), c.arg(2)
    if isinstance(lo, torch.fx.Node) or isinstance(hi, torch.fx.Node):
        raise Unfusible("clamp with tensor bounds")
    return G.clamp(c.x(0), lo, hi)


def _gelu(c: Ctx):
    return G.gelu(c.x(0), "tanh" if c.node.kwargs.get("approximate", "none") == "tanh" else "none")


def _gelu_backward(c: Ctx):
    g, x = c.x(0), c.x(1)
    if c.node.kwargs.get("approximate", "none") == "tanh":
        k, a = 0.7978845608028654, 0.044715
        inner = k * (x + a * x * x * x)
        t = G.tanh(inner)
        d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * a * x * x)
        return g * d
    cdf = G.gelu(x, "none") / x  # Phi(x); x == 0 handled below
    cdf = G.where(x == 0.0, 0.5, cdf)
    pdf = 0.3989422804014327 * G.exp(-0.5 * x * x)
    return g * (cdf + x * pdf)


def _silu_backward(c: Ctx):
    g, x = c.x(0), c.x(1)
    s = G.sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


def _softmax_backward(c: Ctx):
    _last_axis(c.node, c.arg(2), True)
    g, y = c.x(0), c.x(1)
    return y * (g - G.sum(g * y, axis=-1, keepdims=True))


def _threshold_backward(c: Ctx):
    g, out, t = c.x(0), c.x(1), c.arg(2)
    return G.where(out <= float(t), 0.0, g)


def _var_mean(c: Ctx):
    dims = c.arg(1)
    keep = c.node.kwargs.get("keepdim", False)
    _last_axis(c.node, dims, keep)
    corr = c.node.kwargs.get("correction", 1)
    if corr not in (0, None):
        raise Unfusible(f"var_mean(correction={corr}): only the biased variance (correction=0) is fused")
    x = c.x(0)
    m = G.mean(x, axis=-1, keepdims=True)
    d = x - m
    return (G.mean(d * d, axis=-1, keepdims=True), m)


def _layer_norm(c: Ctx):
    x, normalized, w, b, eps = c.node.args[:5]
    if len(normalized) != 1:
        raise Unfusible(f"layer norm over {len(normalized)} axes: the generator normalises the last axis only")
    xs = c.x(0)
    m = G.mean(xs, axis=-1, keepdims=True)
    d = xs - m
    rstd = G.rsqrt(G.mean(d * d, axis=-1, keepdims=True) + float(eps))
    y = d * rstd
    if w is not None:
        y = y * c.sym(w, c.out_dtype)
    if b is not None:
        y = y + c.sym(b, c.out_dtype)
    return (y, m, rstd)


HANDLERS = {
    aten.add.Tensor: _binary(operator.add), aten.add.Scalar: _binary(operator.add),
    aten.sub.Tensor: _binary(operator.sub), aten.sub.Scalar: _binary(operator.sub),
    aten.mul.Tensor: _binary(operator.mul), aten.mul.Scalar: _binary(operator.mul),
    aten.div.Tensor: _binary(operator.truediv), aten.div.Scalar: _binary(operator.truediv),
    aten.rsub.Scalar: lambda c: c.x(1) - c.x(0) * float(c.node.kwargs.get("alpha", 1)),
    aten.maximum.default: _binary(G.maximum), aten.minimum.default: _binary(G.minimum),
    aten.neg.default: lambda c: -c.x(0), aten.abs.default: _unary(G.absolute),
    aten.exp.default: _unary(G.exp), aten.log.default: _unary(G.log), aten.sqrt.default: _unary(G.sqrt),
    aten.rsqrt.default: _unary(G.rsqrt), aten.reciprocal.default: _unary(G.reciprocal),
    aten.relu.default: _unary(G.relu), aten.sigmoid.default: _unary(G.sigmoid), aten.tanh.default: _unary(G.tanh),
    aten.silu.default: _unary(G.silu), aten.gelu.default: _gelu,
    aten.leaky_relu.default: lambda c: G.leaky_relu(c.x(0), float(c.arg(1, 0.01))),
    aten.clamp.default: _clamp, aten.clamp_min.default: lambda c: G.maximum(c.x(0), c.x(1)),
    aten.clamp_max.default: lambda c: G.minimum(c.x(0), c.x(1)),
    aten.pow.Tensor_Scalar: _pow,
    aten.lt.Tensor: _compare(operator.lt), aten.lt.Scalar: _compare(operator.lt),
    aten.le.Tensor: _compare(operator.le), aten.le.Scalar: _compare(operator.le),
    aten.gt.Tensor: _compare(operator.gt), aten.gt.Scalar: _compare(operator.gt),
    aten.ge.Tensor: _compare(operator.ge), aten.ge.Scalar: _compare(operator.ge),
    aten.eq.Tensor: _compare(operator.eq), aten.eq.Scalar: _compare(operator.eq),
    aten.ne.Tensor: _compare(operator.ne), aten.ne.Scalar: _compare(operator.ne),
    aten.where.self: _where,
    aten._to_copy.default: _to_copy,
    aten.sum.dim_IntList: _reduce(G.sum), aten.mean.dim: _reduce(G.mean),
    aten.amax.default: _reduce(G.max), aten.amin.default: _reduce(G.min),
    aten._softmax.default: _softmax(False), aten._log_softmax.default: _softmax(True),
    aten.var_mean.correction: _var_mean, aten.native_layer_norm.default: _layer_norm,
    aten.silu_backward.default: _silu_backward, aten.gelu_backward.default: _gelu_backward,
    aten.sigmoid_backward.default: lambda c: c.x(0) * c.x(1) * (1.0 - c.x(1)),
    aten.tanh_backward.default: lambda c: c.x(0) * (1.0 - c.x(1) * c.x(1)),
    aten.threshold_backward.default: _threshold_backward,
    aten._softmax_backward_data.default: _softmax_backward,
    # views that only broadcast or drop autograd history: the operand itself (elementwise broadcasting does the rest)
    aten.expand.default: VIEWS, aten.detach.default: VIEWS, aten.alias.default: VIEWS,
}


def why_not(node) -> "str | None":
    """None if ``node`` may join a group, else the reason it cannot (for the report)."""
    if node.op != "call_function":
        return None if node.op in ("placeholder", "output", "get_attr") else f"{node.op} node"
    if node.target is operator.getitem:
        return None
    if MM.is_call(node):
        return _why_not_product(node)
    if node.target not in HANDLERS:
        return f"{_name(node.target)} has no fusekit.gen primitive"
    v = val(node)
    values = v if isinstance(v, (tuple, list)) else (v,)
    for t in values:
        if not isinstance(t, torch.Tensor):
            return f"{_name(node.target)} returns {type(t).__name__}"
        if t.device.type != "cpu":
            return f"tensor on {t.device}: fusekit runs CPU tensors on its simulated NPU"
        if t.dtype not in FLOATS and not (t.dtype == torch.bool and node.target in _COMPARES):
            return f"{t.dtype} result: the generated kernels take float16, bfloat16 and float32"
    if node.target in _COMPARES and any(u.target is not aten.where.self or u.args[0] is not node for u in node.users):
        return "a comparison whose bool result is used by another op than where (kernels write float outputs)"
    if node.target is aten.native_layer_norm.default and len(node.args[1]) != 1:
        return f"layer norm over {len(node.args[1])} axes: the generator normalises the last axis only"
    if node.target in _REDUCES:
        try:
            dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
            keep = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
            _last_axis(node, dims, True if node.target in _KEEPS else keep)
        except Unfusible as exc:
            return str(exc)
    for a in node.all_input_nodes:
        t = val(a)
        if is_size(a):
            # a size of a dynamic-shape graph as an operand (expand's sizes, a division by a row count): the
            # generated kernel's inputs are tensors and constants, and the fused call takes tensors only
            return f"{_name(node.target)} takes a symbolic size ({t}): a fused kernel takes tensors and constants"
        if isinstance(t, torch.Tensor) and t.dtype not in FLOATS and t.dtype != torch.bool and \
                not _is_int_product(a):  # an int8 product's int32 result: its epilogue converts it
            return f"{t.dtype} operand: the generated kernels take float16, bfloat16 and float32"
        if isinstance(t, torch.Tensor) and t.device.type != "cpu":
            return f"operand on {t.device}: fusekit runs CPU tensors on its simulated NPU"
    return None


def _why_not_product(node) -> "str | None":
    """None if a product node may anchor a group (float CPU tensors; an int8 product's int8 operands and int32
    result), else why not."""
    for t in [val(node)] + [val(a) for a in node.all_input_nodes]:
        if not isinstance(t, torch.Tensor):
            return f"{_name(node.target)} on a non-tensor"
        if t.device.type != "cpu":
            return f"tensor on {t.device}: fusekit runs CPU tensors on its simulated NPU"
        if t.dtype not in FLOATS and not (_is_int_product(node) and t.dtype in (torch.int8, torch.int32)):
            return f"{t.dtype} product: the generated matmul takes float16, bfloat16, float32 and int8 operands here"
    return None


def _is_int_product(node) -> bool:
    """An int8 x int8 -> int32 product (torch._int_mm as a MatmulCall)."""
    return MM.is_call(node) and getattr(node.target.spec, "kind", "") == "_int_mm"


_COMPARES = {k for k in HANDLERS if getattr(k, "__name__", "").split(".")[0] in ("lt", "le", "gt", "ge", "eq", "ne")}


_REDUCES = {aten.sum.dim_IntList, aten.mean.dim, aten.amax.default, aten.amin.default, aten._softmax.default,
            aten._log_softmax.default, aten.var_mean.correction}
_KEEPS = {aten._softmax.default, aten._log_softmax.default}  # dim, then half_to_float: no keepdim argument


def _name(target) -> str:
    return str(getattr(target, "__name__", target)).replace(".default", "")


# -- grouping ----------------------------------------------------------------------------------------
@dataclass(eq=False)
class Group:
    """A set of fusible FX nodes run as one generated kernel."""

    shape: tuple
    nodes: list = field(default_factory=list)   # in graph order
    members: set = field(default_factory=set)
    cube: object = None                          # its MatmulCall node (a generated operator holds one product)

    def add(self, node):
        self.nodes.append(node)
        self.members.add(node)
        if MM.is_call(node):
            self.cube = node

    def external_inputs(self) -> list:
        seen, out = set(), []
        for n in self.nodes:
            for a in n.all_input_nodes:
                if a not in self.members and a not in seen:
                    seen.add(a)
                    out.append(a)
        return out


def _node_shape(node) -> "tuple | None":
    v = val(node)
    if node.target is operator.getitem or isinstance(v, (tuple, list)):
        vs = v if isinstance(v, (tuple, list)) else (v,)
        biggest = max((t.shape for t in vs if isinstance(t, torch.Tensor)), key=S.numel_hint, default=None)
        return None if biggest is None else S.key(biggest)
    return S.key(v.shape) if isinstance(v, torch.Tensor) else None


def _fits(shape, group_shape) -> bool:
    """A node of ``shape`` can live in a group of ``group_shape``: the same, or one value per row."""
    if shape == group_shape:
        return True
    return len(shape) == len(group_shape) >= 1 and shape == tuple(group_shape[:-1]) + (1,)


def find_groups(graph: torch.fx.Graph) -> "tuple[list[Group], dict]":
    """Greedy maximal groups (see module doc). Returns (groups, {node: reason}) for call_function nodes
    the generator cannot take."""
    group_of: dict = {}
    parent: dict = {}
    reach: dict = {}     # node -> ids of groups among its ancestors (itself included)
    groups: dict = {}
    reasons: dict = {}

    def find(g):
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    def roots(ids):
        return {find(g) for g in ids}

    for node in graph.nodes:
        inputs = node.all_input_nodes
        above = set()
        for a in inputs:
            above |= reach.get(a, set())
        if is_size(node):  # size arithmetic of a dynamic-shape graph: neither a kernel nor a reason
            reach[node] = above
            continue
        reason = why_not(node)
        if node.op != "call_function" or reason is not None:
            if reason is not None:
                reasons[node] = reason
            reach[node] = above
            continue
        shape = _node_shape(node)
        if node.target is operator.getitem:  # a value of a multi-output handler: join its producer if grouped
            src = node.args[0]
            g = group_of.get(src)
            if g is not None:
                g = find(g)
                groups[g].add(node)
                group_of[node] = g
            reach[node] = above | ({g} if g is not None else set())
            continue
        if HANDLERS.get(node.target) == VIEWS and group_of.get(node.args[0]) is None:
            reasons[node] = "a view of a tensor outside any group (runs eagerly, no copy)"
            reach[node] = above
            continue
        placed = None
        # a product starts its own group: its operands are the kernel's GM inputs (fusekit.gen.cube), and its
        # users join it as the epilogue
        for a in ([] if MM.is_call(node) else inputs):
            g = group_of.get(a)
            if g is None:
                continue
            g = find(g)
            cand = groups[g]
            if cand.cube is not None and (placed is not None and groups[find(placed)].cube is not None):
                continue  # two products: one generated operator holds one
            target = cand.shape
            if not _fits(shape, target):
                if _fits(cand.shape, shape) and all(_fits(_node_shape(m), shape) for m in cand.nodes):
                    target = shape  # a per-row group grows into full rows
                else:
                    continue
            union = {g} | ({placed} if placed is not None else set())
            if not _acyclic(node, union, groups, group_of, reach, find) or _computes_operand(node, union, groups, find):
                continue
            if placed is None:
                placed = g
                cand.shape = target
            elif g != placed:
                keep = groups[placed]
                if not (_fits(cand.shape, keep.shape) or _fits(keep.shape, cand.shape)):
                    continue
                keep.shape = keep.shape if _fits(cand.shape, keep.shape) else cand.shape  # full rows over per-row
                for m in cand.nodes:
                    keep.add(m)
                keep.nodes.sort(key=_order(graph))
                parent[g] = placed
                del groups[g]
        if placed is None:
            placed = len(parent)
            parent[placed] = placed
            groups[placed] = Group(shape)
        groups[find(placed)].add(node)
        group_of[node] = placed
        reach[node] = above | {placed}
    return [g for g in groups.values()], reasons


def _order(graph):
    index = {n: i for i, n in enumerate(graph.nodes)}
    return lambda n: index[n]


def _acyclic(node, union: set, groups, group_of, reach, find) -> bool:
    """Merging ``node`` and the groups ``union`` keeps the graph acyclic: no operand outside the merged
    group descends from it."""
    merged = set()
    for g in union:
        merged |= groups[find(g)].members
    merged.add(node)
    ids = {find(g) for g in union}
    for m in merged:
        for a in m.all_input_nodes:
            if a in merged:
                continue
            if {find(g) for g in reach.get(a, set())} & ids:
                return False
    return True


def _computes_operand(node, union: set, groups, find) -> bool:
    """Merging ``node`` and the groups ``union`` would compute a matrix product's operand inside the product's own
    group: its operands are the cube kernel's GM inputs (fusekit.gen.cube), so what makes them stays outside."""
    merged = {node}
    for g in union:
        merged |= groups[find(g)].members
    return any(a in merged for m in merged if MM.is_call(m) for a in m.all_input_nodes)


# -- a group as an expression graph -------------------------------------------------------------------
@dataclass
class Expression:
    """A group as fusekit.gen sees it."""

    graph: G.Graph
    inputs: list        # FX nodes, in graph.inputs order
    outputs: list       # FX nodes, in graph.outputs order
    dtype: str          # the call's floating dtype (the first float input's)
    flags: list = field(default_factory=list)  # bool inputs, passed as 0 / 1 in ``dtype``
    row_outputs: bool = False  # some output is one value per row: generate with GeneratedOp(row_outputs=True)
    shape: tuple = ()          # the kernel's output shape (a matmul group: the product's)
    cube: bool = False         # the group holds a matrix product (the first two inputs are its operands)
    # a convolution's group: per input, "operand", "channel" (its bias, (Cout,)) or "nchw" (laid out channels-last
    # for the NHWC kernel, fusekit.torch.matmul.channels_last); () for any other group (inputs as they are)
    roles: tuple = ()


def expression(group: Group, users_outside) -> Expression:
    """The fusekit.gen Graph of ``group``; ``users_outside(node)`` tells whether a member's value is
    needed outside the group.

    Raises:
        Unfusible: a member the handlers refuse in context (the message says why).
        fusekit.gen.GraphError: an expression the generator cannot build.
    """
    operands = list(group.cube.args[:2]) if group.cube is not None else []
    inputs = operands + _epilogue_inputs(group)
    roles, conv_bias = _conv_roles(group, inputs)
    env, dtypes, leaves, flags = {}, {}, [], []
    kinds = [val(a).dtype for a in inputs if isinstance(val(a), torch.Tensor) and val(a).dtype in FLOATS]
    main = FLOATS[kinds[0]] if kinds else "float32"
    for i, a in enumerate(inputs):
        t = val(a)
        if not isinstance(t, torch.Tensor):
            raise Unfusible(f"operand {a.name} is not a tensor")
        leaf = G.Node("input", name=f"x{i}")
        leaves.append(leaf)
        if t.dtype == torch.bool:  # a condition computed outside: passed as 0 / 1 in the main dtype
            env[a] = G.Sym(leaf) != 0.0
            env[("as 0/1", a)] = (G.Sym(leaf), main)
            dtypes[f"x{i}"] = main
            flags.append(a)
            continue
        if t.dtype not in FLOATS and not (i < len(operands) and t.dtype == torch.int8):
            raise Unfusible(f"operand {a.name} is {t.dtype}: the generated kernels take float tensors")
        dtypes[f"x{i}"] = FLOATS.get(t.dtype, "int8")
        if i < len(operands):  # the product's own leaf (an epilogue use of the same tensor gets another)
            env[("operand", i)] = G.Sym(leaf)
            continue
        env[a] = G.Sym(leaf)
    for n in group.nodes:
        if n.target is operator.getitem:
            env[n] = env[n.args[0]][n.args[1]]
            continue
        if MM.is_call(n):
            env[n] = _product(Ctx(n, env))
            continue
        h = HANDLERS[n.target]
        if h == VIEWS:
            env[n] = env[n.args[0]]
            continue
        result = h(Ctx(n, env))
        env[n] = result
    outputs = []
    for n in group.nodes:
        if not users_outside(n) or isinstance(env[n], tuple):
            continue
        if n.target is not operator.getitem and HANDLERS.get(n.target) == VIEWS:
            continue  # the caller recomputes a view outside from its operand
        if dtype_of(n) not in FLOATS:
            raise Unfusible(f"{n.name} ({dtype_of(n)}) is used outside the group; kernels write float outputs")
        outputs.append(n)
    if not outputs:
        raise Unfusible("no member's value is used outside the group")
    try:  # the kernel's shape: its inputs' broadcast (a group of per-row values may reduce full rows)
        whole = S.broadcast(*[_node_shape(n) for n in list(inputs[len(operands):]) + group.nodes
                              if _node_shape(n) is not None and n is not conv_bias])
    except RuntimeError:
        raise Unfusible("the group's shapes do not broadcast") from None
    if group.cube is not None and whole != _node_shape(group.cube):
        raise Unfusible(f"the epilogue broadcasts the product {S.text(_node_shape(group.cube))} to {S.text(whole)}; the "
                        "generated matmul writes the product's shape")
    out_syms, row_outputs = [], False
    for n in outputs:
        s = env[n]
        if not isinstance(s, G.Sym):
            raise Unfusible(f"{n.name} is a constant")
        if s.node.op == "input":  # an output that is an input unchanged: the generator needs an instruction
            s = G.cast(s, dtypes[s.node.name])
        # a per-row value: kernels write full rows, so the generator writes it broadcast over the row
        # (row_outputs) and the caller keeps the first column
        row_outputs |= _node_shape(n) != whole
        out_syms.append(s)
    fixed = {k: v for k, v in dtypes.items() if v != main}
    names = tuple(f"y{i}" for i in range(len(outputs)))
    used = _used_inputs(out_syms)
    if any(id(leaf) not in used for leaf in leaves):
        raise Unfusible("an operand is not used by any output (its member is recomputed outside)")
    graph = G.Graph("group", leaves, [], [s.node for s in out_syms], names, fixed, {})
    from fusekit.gen.lower import natural_dtypes

    natural = natural_dtypes(graph, main)
    for i, (n, name) in enumerate(zip(outputs, names)):
        if natural[name] != FLOATS[dtype_of(n)]:  # the generator's dtype rule differs from ATen's: say it
            graph.outputs[i] = G.cast(out_syms[i], FLOATS[dtype_of(n)]).node
    return Expression(graph, inputs, outputs, main, flags, row_outputs, whole, group.cube is not None, roles)


def _conv_roles(group: Group, inputs: list) -> tuple:
    """(Expression.roles, the convolution's bias node or None) of a convolution's group; ((), None) for others.

    Raises:
        Unfusible: a reduction in the epilogue (the NHWC kernel's rows are pixels, not NCHW's last axis), or the
            bias also used by the epilogue (there it would be an NCHW operand)."""
    if not MM.is_conv(group.cube):
        return (), None
    if any(n.target in _REDUCES or n.target is aten.native_layer_norm.default for n in group.nodes):
        raise Unfusible("a reduction after a convolution: the NHWC kernel's rows are pixels, not NCHW's last axis")
    bias = group.cube.args[2] if len(group.cube.args) > 2 else None
    if bias is not None and any(bias in n.all_input_nodes for n in group.nodes if n is not group.cube):
        raise Unfusible("the convolution's bias is also an operand of its epilogue")
    return tuple("operand" if i < 2 else "channel" if a is bias else "nchw" for i, a in enumerate(inputs)), bias


def _epilogue_inputs(group: Group) -> list:
    """The group's external inputs but its product's two operands (those are the cube's, :func:`expression`)."""
    seen, out = set(), []
    for n in group.nodes:
        args = n.args[2:] if n is group.cube else n.all_input_nodes
        for a in args:
            if isinstance(a, torch.fx.Node) and a not in group.members and a not in seen:
                seen.add(a)
                out.append(a)
    return out


def _product(c: Ctx):
    """A product node as fusekit.gen: ``alpha * matmul(a, b) + beta * bias`` (ATen's addmm / baddbmm formula), or
    ``conv2d(x, w) + bias``."""
    spec = c.node.target.spec
    if MM.is_conv(c.node):  # fusekit.conv2d's NHWC result; its (Cout,) bias a row along the channels
        y = G.conv2d(c.env[("operand", 0)], c.env[("operand", 1)], spec.stride, spec.padding, spec.dilation)
        return y + c.sym(c.arg(2), c.out_dtype) if spec.has_bias else y
    y = G.matmul(c.env[("operand", 0)], c.env[("operand", 1)], spec.transpose_a, spec.transpose_b)
    if spec.alpha != 1:
        y = y * spec.alpha
    if spec.has_bias and spec.beta != 0:  # beta = 0: ATen ignores the bias (NaN and inf included)
        bias = c.sym(c.arg(2), c.out_dtype)
        y = y + (bias if spec.beta == 1 else bias * spec.beta)
    return y


def _used_inputs(syms) -> set:
    seen, used = set(), set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.op == "input":
            used.add(id(node))
        for a in node.args:
            visit(a)
    for s in syms:
        visit(s.node)
    return used


def pretty(graph: G.Graph) -> str:
    """The expression with shared subexpressions named once (``t0 = ...; y0 = f(t0, t0)``), where
    ``Graph.text`` repeats a value at every use."""
    uses: dict = {}
    for n in graph.nodes():
        for a in n.args:
            uses[id(a)] = uses.get(id(a), 0) + 1
    names: dict = {}
    lets = []

    def show(n) -> str:
        if id(n) in names:
            return names[id(n)]
        if n.op in ("input", "attr", "const"):
            return repr(n)
        inner = ", ".join(show(a) for a in n.args)
        extra = "".join(f", {k}={v!r}" for k, v in n.params.items() if k != "rounding" or v != "rint")
        text = f"{n.op}({inner}{extra})"
        if uses.get(id(n), 0) > 1 and n.op != "cast":
            names[id(n)] = f"t{len(lets)}"
            lets.append(f"{names[id(n)]} = {text}")
            return names[id(n)]
        return text
    outs = [f"{name} = {show(n)}" for name, n in zip(graph.output_names, graph.outputs)]
    return "; ".join(lets + outs)
