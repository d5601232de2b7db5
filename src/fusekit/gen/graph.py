"""The expression graph: an operator traced once with symbolic tensors into primitives.

A user writes an operator as a Python function of tensors in numpy's vocabulary::

    @fusekit.op(dtypes=("float16", "float32"))
    def swiglu(a, b):
        return fusekit.silu(a) * b

Calling it with :class:`Sym` arguments (``trace``) records a DAG of :class:`Node`: ``input``
(a GM tensor), ``attr`` (a keyword-only float argument: a kernel scalar, pyasc passes it as
float32), ``const`` (a Python number written in the expression) and one node per primitive.
Composite activations (sigmoid, silu, gelu, tanh) stay single nodes here; :mod:`.lower` expands
them into the vector instructions the SoC has, and :mod:`.reference` gives each its real value.
"""

from __future__ import annotations

import builtins
import inspect
import numbers
from dataclasses import dataclass, field

# primitive -> number of tensor operands; the vocabulary of the graph
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "relu", "sigmoid", "silu", "gelu_tanh",
         "gelu_erf", "tanh")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
REDUCE = ("sum", "mean", "max", "min")
OTHER = ("leaky_relu", "clamp", "cast", "where")
CUBE = ("matmul", "conv2d")  # the cube unit's primitives: lowered by fusekit.gen.cube


TEXT_LIMIT = 400  # operations of a tree form (Node repr, Graph.text) before it is shortened


def _tree_size(nodes) -> int:
    """Operations in the tree form of ``nodes``, shared values counted at each use (linear time)."""
    sizes: dict = {}

    def size(n):
        if id(n) not in sizes:
            sizes[id(n)] = 1 + builtins.sum(size(a) for a in n.args)
        return sizes[id(n)]
    return builtins.sum(size(n) for n in nodes)


class GraphError(ValueError):
    """An expression the generator cannot turn into a kernel (the message names the primitive and the fix)."""


@dataclass(eq=False)
class Node:
    """One value of the expression: ``op`` applied to ``args`` (Nodes), with static ``params``."""

    op: str
    args: tuple = ()
    params: dict = field(default_factory=dict)
    name: str = ""      # inputs and attrs: the argument name
    value: float = 0.0  # const: the number

    @property
    def is_scalar(self) -> bool:
        """A value the kernel holds as a scalar register: a const, an attr or an op of those only."""
        return self.op in ("const", "attr") or (self.op != "input" and bool(self.args) and all(a.is_scalar for a in self.args))

    def __repr__(self) -> str:
        if self.op in ("input", "attr"):
            return self.name
        if self.op == "const":
            return repr(self.value)
        if _tree_size([self]) > TEXT_LIMIT:  # shared values repeat in the tree form: exponential in depth
            return f"{self.op}(<{_tree_size(self.args)} operations>)"
        inner = ", ".join(map(repr, self.args))
        extra = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"{self.op}({inner}{extra})"


class Sym:
    """A symbolic tensor (or scalar) seen by the traced function; numpy's operators build Nodes."""

    __array_priority__ = 1000  # numpy scalars defer to Sym's reflected operators

    def __init__(self, node: Node):
        self.node = node

    def _bin(self, op, other, reverse=False):
        a, b = self.node, _node(other)
        return Sym(Node(op, (b, a) if reverse else (a, b)))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __neg__(self): return Sym(Node("neg", (self.node,)))
    def __pos__(self): return self
    def __abs__(self): return Sym(Node("abs", (self.node,)))
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)
    def __eq__(self, o): return self._bin("eq", o)  # noqa: D105 - elementwise, as numpy's
    def __ne__(self, o): return self._bin("ne", o)
    __hash__ = object.__hash__

    def __pow__(self, p):
        if p == 2:
            return self * self
        if p == 0.5:
            return sqrt(self)
        if p == -0.5:
            return rsqrt(self)
        if p == -1:
            return reciprocal(self)
        raise GraphError(f"x ** {p!r}: only the powers 2, 0.5, -0.5 and -1 have vector instructions; write the product "
                         "out (x * x * x) or use exp(p * log(x))")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy scalars meeting a Sym (``np.float32(2) * x``) trace as the operator; a numpy function on a
        symbolic tensor (``np.exp(x)``) cannot run: it names the fusekit primitive to use instead."""
        ops = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div", "less": "lt",
               "less_equal": "le", "greater": "gt", "greater_equal": "ge", "equal": "eq", "not_equal": "ne"}
        if method == "__call__" and not kwargs and len(inputs) == 2 and ufunc.__name__ in ops:
            a, b = (x[()] if getattr(x, "shape", None) == () else x for x in inputs)  # numpy passes 0-d arrays
            return Sym(Node(ops[ufunc.__name__], (_node(a), _node(b))))
        raise GraphError(_numpy_hint(f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")))

    def __matmul__(self, o):
        return matmul(self, o)

    def __rmatmul__(self, o):
        return matmul(o, self)

    def __getitem__(self, key):
        raise GraphError(f"x[{key!r}]: indexing or slicing a traced tensor is not generated; a fused operator works on "
                         "whole tensors (broadcasting by shape, reductions along the last axis)")

    def __array_function__(self, func, types, args, kwargs):
        raise GraphError(_numpy_hint(f"numpy.{func.__name__}"))

    def __bool__(self):
        raise GraphError("a symbolic tensor has no truth value: `if`, `and`, `or` on tensors cannot be traced; use "
                         "fusekit.where(cond, a, b)")

    def __repr__(self) -> str:
        return f"Sym({self.node!r})"


_NUMPY_NAMES = {"absolute": "abs", "fabs": "abs", "negative": "-x", "power": "x ** p", "square": "x * x",
                "clip": "clamp", "amax": "max", "amin": "min", "add": "+", "subtract": "-", "multiply": "*",
                "true_divide": "/", "divide": "/"}


def _numpy_hint(what: str) -> str:
    """The message for a numpy function applied to a symbolic tensor, naming fusekit's primitive."""
    parts = what.split(".")
    name = parts[1]
    use = _NUMPY_NAMES.get(name, name)
    if parts[2:] == ["reduce"]:  # numpy.add.reduce(x): a reduction
        use = {"add": "sum", "maximum": "max", "minimum": "min"}.get(name, f"{name}.reduce")
    if use in primitives() or use == "abs":
        fix = f"use fusekit.{use}"
    elif not use.isidentifier():
        fix = f"write {use} with the operator itself"
    else:
        fix = f"fusekit has no primitive {name!r}; the primitives are {', '.join(primitives())}"
    return f"{what} cannot trace a symbolic tensor inside an operator: {fix}"


def _node(x) -> Node:
    if isinstance(x, Sym):
        return x.node
    if isinstance(x, (bool, )) or not isinstance(x, numbers.Real):
        raise GraphError(f"cannot use {x!r} ({type(x).__name__}) in an operator expression: use tensors, real numbers or "
                         "keyword-only float attributes")
    return Node("const", value=float(x))


def _unary(op):
    def fn(x):
        return Sym(Node(op, (_node(x),)))
    fn.__name__ = op
    fn.__doc__ = f"``{op}(x)`` elementwise (traced into the operator's expression graph)."
    return fn


# the user's primitives (numpy's names)
exp, log, sqrt, rsqrt, reciprocal, relu, sigmoid, silu, tanh = (
    _unary(n) for n in ("exp", "log", "sqrt", "rsqrt", "reciprocal", "relu", "sigmoid", "silu", "tanh"))
absolute = _unary("abs")
abs = absolute  # noqa: A001 - numpy's alias (numpy.abs), under fusekit.*


def maximum(a, b):
    """Elementwise ``max(a, b)`` (numpy.maximum)."""
    return Sym(Node("maximum", (_node(a), _node(b))))


def minimum(a, b):
    """Elementwise ``min(a, b)`` (numpy.minimum)."""
    return Sym(Node("minimum", (_node(a), _node(b))))


def gelu(x, approximate: str = "tanh"):
    """GeLU, ``x * Phi(x)``: ``approximate="tanh"`` (Hendrycks and Gimpel's tanh form) or ``"none"`` (the erf form)."""
    if approximate not in ("tanh", "none", "erf"):
        raise GraphError(f"gelu(approximate={approximate!r}): use 'tanh' or 'none' (the erf form)")
    return Sym(Node("gelu_tanh" if approximate == "tanh" else "gelu_erf", (_node(x),)))


def leaky_relu(x, negative_slope: float = 0.01):
    """``x if x >= 0 else negative_slope * x`` (the slope a number or a float attribute)."""
    return Sym(Node("leaky_relu", (_node(x), _node(negative_slope))))


def clamp(x, lo=None, hi=None):
    """``min(max(x, lo), hi)`` (numpy.clip); either bound may be None."""
    out = x
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


clip = clamp


def where(cond, a, b):
    """``a`` where ``cond`` else ``b`` (numpy.where); ``cond`` a comparison."""
    return Sym(Node("where", (_node(cond), _node(a), _node(b))))


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False):
    """The matrix product ``a @ b`` on the cube unit (numpy.matmul's rules for 2-D and batched operands).

    ``a`` is (..., M, K), or (..., K, M) with ``transpose_a``; ``b`` is (K, N) or (..., K, N), or (N, K) /
    (..., N, K) with ``transpose_b`` (a weight stored as PyTorch's Linear stores it). Both must be input tensors
    of the operator, used by nothing else; float16 / bfloat16 / float32 inputs accumulate in float32, int8 in
    int32 (Mmad.md 表7). Anything the generator fuses may follow (fusekit.gen.cube).
    """
    for x in (a, b):
        if not isinstance(x, Sym):
            raise GraphError(f"matmul({x!r}, ...): the operands of a matrix product are tensors of the operator")
    return Sym(Node("matmul", (a.node, b.node), {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}))


def _pair(name: str, v, low: int) -> tuple:
    pair = (v, v) if isinstance(v, numbers.Integral) else tuple(v)
    if len(pair) != 2 or any(not isinstance(x, numbers.Integral) or x < low for x in pair):
        raise GraphError(f"conv2d's {name}={v!r}: an int or a pair of ints (height, width), each >= {low}")
    return tuple(int(x) for x in pair)


def conv2d(x, w, stride=1, padding=0, dilation=1):
    """A 2-D cross-correlation on the cube, as torch.nn.functional.conv2d computes it, lowered through img2col
    (LoadData 3Dv2: docs/cube.md; the feature map in L1 as NC1HWC0, one image at a time): ``x`` (N, Cin, H, W),
    ``w`` (Cout, Cin, kh, kw), both input tensors of one dtype (float16 / bfloat16 / int8); ``stride``, ``padding``
    (zeros, both sides), ``dilation`` an int or (height, width). The result is **NHWC**, (N, Ho, Wo, Cout), the
    layout Fixpipe writes (a row per pixel, the channels along it), so a (Cout,) bias or scale follows as in a
    matmul epilogue. Anything the generator fuses may follow (fusekit.gen.cube)."""
    for v in (x, w):
        if not isinstance(v, Sym):
            raise GraphError(f"conv2d({v!r}, ...): the operands of a convolution are tensors of the operator")
    params = {"stride": _pair("stride", stride, 1), "padding": _pair("padding", padding, 0),
              "dilation": _pair("dilation", dilation, 1)}
    return Sym(Node("conv2d", (x.node, w.node), params))


ROUNDINGS = ("rint", "floor", "ceil", "round", "trunc")


def cast(x, dtype: str, rounding: str = "rint"):
    """``x`` converted to ``dtype`` (float16, float32, bfloat16, int8, int16, int32); float to integer rounds
    by ``rounding`` (rint: to nearest even, floor, ceil, round: half away from zero, trunc) and saturates."""
    from fusekit.asc import dtypes

    name = dtypes.as_dtype(dtype).name
    if rounding not in ROUNDINGS:
        raise GraphError(f"cast(rounding={rounding!r}): use one of {ROUNDINGS}")
    return Sym(Node("cast", (_node(x),), {"dtype": name, "rounding": rounding}))


def _last_axis(op: str, axis) -> None:
    """Refuse every ``axis`` but the last: the kernels reduce a UB row with ReduceSum/ReduceMax/ReduceMin
    (one row per repeat), so a reduction over another axis (or all axes) is not generated."""
    wanted = axis[0] if isinstance(axis, tuple) and len(axis) == 1 else axis  # numpy also takes axis=(-1,)
    if isinstance(wanted, numbers.Integral) and not isinstance(wanted, bool) and int(wanted) == -1:
        return
    if axis is None:  # numpy's default: every axis at once
        raise GraphError(f"{op}(x) reduces every axis (numpy's default): reductions run along the last axis only: "
                         f"axis=-1; got axis=None; write {op}(x, axis=-1)")
    if isinstance(axis, (Sym, float)) and op in ("max", "min"):  # max(a, b): numpy's elementwise form is maximum
        raise GraphError(f"{op}(x, {axis!r}) reduces x along an axis; for the elementwise {op} of two values use "
                         f"fusekit.{op}imum(a, b)")
    raise GraphError(f"{op}(axis={axis!r}): reductions run along the last axis only: axis=-1; got axis={axis!r}")


def _reduce(op):
    def fn(x, axis=None, keepdims=False):
        _last_axis(op, axis)
        return Sym(Node(op, (_node(x),), {"axis": -1, "keepdims": bool(keepdims)}))
    fn.__name__ = op
    fn.__doc__ = (f"``{op}(x, axis=-1, keepdims=False)`` along the last axis, as numpy's; ``axis`` must be -1 (numpy's "
                  "default, None, reduces every axis, which is not generated: GraphError).")
    return fn


sum, mean, max, min = (_reduce(n) for n in REDUCE)  # noqa: A001 - numpy's names, under fusekit.*


@dataclass
class Graph:
    """A traced operator: inputs (GM tensors) and attrs (float scalars) in signature order, outputs.

    Attributes:
        name: the function's name.
        inputs: Nodes of op "input", in order.
        attrs: Nodes of op "attr", with their defaults in ``defaults``.
        outputs: one Node per output.
        output_names: names of the outputs (``y`` or the decorator's ``outputs``).
        input_dtypes: a fixed dtype per input name where the function's annotation gives one.
        defaults: attr name -> default value (None: required).
    """

    name: str
    inputs: list
    attrs: list
    outputs: list
    output_names: tuple
    input_dtypes: dict
    defaults: dict

    def nodes(self) -> list:
        """Every Node reachable from the outputs, operands before users (topological order)."""
        order, seen = [], set()

        def visit(n):
            if id(n) in seen:
                return
            seen.add(id(n))
            for a in n.args:
                visit(a)
            order.append(n)
        for out in self.outputs:
            visit(out)
        return order

    def text(self) -> str:
        """The outputs as expressions, ``y = mul(add(x1, x2), scale)``. Shared values repeat in that form, so
        a graph whose tree form exceeds TEXT_LIMIT operations (derived backward graphs: exponential in depth)
        is written as steps instead, linear in its size: ``t0 = add(x1, x2); y = mul(t0, scale)``."""
        if _tree_size(self.outputs) <= TEXT_LIMIT:
            return "; ".join(f"{o} = {n!r}" for o, n in zip(self.output_names, self.outputs))
        names: dict = {}

        def ref(n):
            return names.get(id(n)) or repr(n)  # inputs, attrs and consts print as themselves
        steps = []
        for n in self.nodes():
            if n.args:
                names[id(n)] = f"t{len(steps)}"
                extra = "".join(f", {k}={v!r}" for k, v in n.params.items())
                steps.append(f"{names[id(n)]} = {n.op}({', '.join(map(ref, n.args))}{extra})")
        return "; ".join(steps + [f"{o} = {ref(n)}" for o, n in zip(self.output_names, self.outputs)])


def trace(fn, outputs: "tuple[str, ...] | None" = None) -> Graph:
    """Call ``fn`` once with symbolic tensors and return its :class:`Graph`.

    Positional parameters are GM tensors (an annotation such as ``x: "int32"`` fixes the dtype);
    keyword-only parameters are float attributes (default from the signature).

    Raises:
        GraphError: the function cannot be traced (the message says why).
    """
    from fusekit.asc import dtypes

    sig = inspect.signature(fn)
    inputs, attrs, fixed, defaults, args, kwargs = [], [], {}, {}, [], {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise GraphError(f"{fn.__name__}: *args / **kwargs cannot be traced; name every tensor and attribute")
        if p.kind is p.KEYWORD_ONLY:
            node = Node("attr", name=p.name)
            attrs.append(node)
            defaults[p.name] = None if p.default is p.empty else float(p.default)
            kwargs[p.name] = Sym(node)
        else:
            node = Node("input", name=p.name)
            inputs.append(node)
            note = p.annotation.strip("'\"") if isinstance(p.annotation, str) else ""  # also under `from __future__ import annotations`
            if note not in ("", "Tensor"):
                fixed[p.name] = dtypes.as_dtype(note).name
            args.append(Sym(node))
    if not inputs:
        raise GraphError(f"{fn.__name__} has no tensor parameter: an operator needs at least one GM input")
    result = fn(*args, **kwargs)
    results = result if isinstance(result, tuple) else (result,)
    for r in results:
        if not isinstance(r, Sym):
            raise GraphError(f"{fn.__name__} returned {r!r}; an operator returns symbolic tensors (or a tuple of them)")
        if r.node.is_scalar:
            raise GraphError(f"{fn.__name__} returns {r.node!r}, which does not depend on any input tensor")
    taken = {n.name for n in inputs} | {n.name for n in attrs}
    stem = "y" if "y" not in taken else "out"
    names = tuple(outputs) if outputs else ((stem,) if len(results) == 1 else tuple(f"{stem}{i}" for i in range(len(results))))
    clash = taken & set(names)
    if clash:
        raise GraphError(f"{fn.__name__}: output name(s) {sorted(clash)} are also parameter names; rename them")
    if len(names) != len(results):
        raise GraphError(f"{fn.__name__} returns {len(results)} value(s) but outputs={names!r} names {len(names)}")
    return Graph(fn.__name__, inputs, attrs, [r.node for r in results], names, fixed, defaults)


def parse(text: str, name: str = "expr") -> "callable":
    """A function for a string expression, the CLI's spelling: ``"silu(a) * b"`` or
    ``"y = (x1 + x2) * scale; scale: attr"``. Names that are not primitives become inputs in order
    of appearance; ``NAME: attr`` declares a float attribute (``NAME: attr = 1.5`` with a default).

    Raises:
        GraphError: the text is not a Python expression over the primitives.
    """
    import ast

    parts = [p.strip() for p in text.split(";") if p.strip()]
    attrs, body = {}, []
    for part in parts:
        if ":" in part and part.split(":", 1)[1].strip().startswith("attr"):
            attr_name, rest = part.split(":", 1)
            default = rest.split("=", 1)[1].strip() if "=" in rest else None
            attrs[attr_name.strip()] = None if default is None else float(default)
        else:
            body.append(part)
    if len(body) != 1:
        raise GraphError(f"expression {text!r}: give exactly one expression (outputs separated by commas)")
    import re

    lhs = re.match(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)", body[0])
    expr = body[0][lhs.end():] if lhs else body[0]
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise GraphError(f"expression {expr!r} is not valid Python: {exc.msg}") from None
    env = primitives()
    names = []
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name)), key=lambda n: n.col_offset):
        if isinstance(node, ast.Name) and node.id not in env and node.id not in attrs and node.id not in names:
            names.append(node.id)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        if not isinstance(call.func, ast.Name) or call.func.id not in env:
            called = ast.unparse(call.func)
            raise GraphError(f"expression {expr.strip()!r}: unknown function {called!r}; the primitives are "
                             f"{', '.join(env)} (and + - * / ** and comparisons)")
    code = compile(tree, "<fusekit expression>", "eval")
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY,
                                 default=inspect.Parameter.empty if d is None else d) for a, d in attrs.items()]

    def fn(*args, **kwargs):
        return eval(code, {"__builtins__": {}}, dict(env, **dict(zip(names, args)), **kwargs))  # noqa: S307 - traced symbols only

    fn.__signature__ = inspect.Signature(params)
    fn.__name__ = name
    return fn


def primitives() -> dict:
    """The primitives by the names an expression uses."""
    return {"exp": exp, "log": log, "sqrt": sqrt, "rsqrt": rsqrt, "reciprocal": reciprocal, "relu": relu,
            "sigmoid": sigmoid, "silu": silu, "tanh": tanh, "abs": absolute, "maximum": maximum, "minimum": minimum,
            "gelu": gelu, "leaky_relu": leaky_relu, "clamp": clamp, "clip": clip, "where": where, "cast": cast,
            "sum": sum, "mean": mean, "max": max, "min": min, "matmul": matmul, "conv2d": conv2d}
