"""Lowering: an expression graph -> the vector instructions of one kernel variant, and its UB plan.

A variant fixes the GM dtype of the floating tensors (``dtype``), the precision mode and the SoC:

- ``native``: arithmetic in ``dtype`` (its reference model is ``hardware``);
- ``fp32``: floating inputs are cast to float32 in UB, everything is computed in float32 and each
  output is cast back once with CAST_RINT (model ``fp32``), as FusedAddScale's fp32 mode does.

Every primitive becomes instructions ``fusekit.asc`` has (the count form), on tile-sized UB values.
Composites and their hardware consequences (each instruction rounds to the compute dtype):

- ``sigmoid(x) = 1 / (1 + exp(-x))``: muls, exp, adds, reciprocal. exp(-x) overflows to inf for
  x < -88.7 (float32) or < -11.1 (float16) and the result is then exactly 0 (or, saturating, ~1/max);
- ``silu(x) = x / (1 + exp(-x))``: muls, exp, adds, div (4 roundings; the quotient keeps x's sign);
- ``tanh(x) = 2 / (1 + exp(-2x)) - 1``: 6 instructions; near 0 the final subtraction cancels, so the
  error is absolute (about one ulp of 1), not relative;
- ``gelu`` tanh form ``x / (1 + exp(-2c x (1 + 0.044715 x^2)))`` with ``c = sqrt(2/pi)``, which is
  ``0.5 x (1 + tanh(c (x + 0.044715 x^3)))`` rearranged: 8 instructions;
- ``gelu`` erf form ``x Phi(x)``, ``Phi(x) = erfc(z) / 2 + [x >= 0] erf(z)`` with ``z = |x| / sqrt 2``,
  erfc from Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7, 5 coefficients, one exp), and the
  step ``[x >= 0] = (1 + sign(x)) / 2``, ``sign(x) = x / max(|x|, tiny)``: 25 instructions; for x < 0
  the step is exactly 0, so Phi keeps erfc's relative accuracy in the tail;
- ``x - s`` with a scalar ``s``: adds(x, -s) (negation is exact); ``s - x``: muls(x, -1) then adds;
  ``x / s`` and ``s / x``: duplicate(s) then div (multiplying by 1/s would round twice);
- float32 -> int8 casts go through float16 rounded to odd, then the requested rounding: the odd
  rounding keeps the second rounding exact for every value in int8's range (Boldo and Melquiond,
  "When double rounding is odd", 2005); int32 -> float16 goes through float32 (the direct Cast
  is scaled by DEQSCALE on A2, docs/ascendc-model.md).

- ``sum / max / min(x, axis=-1, keepdims=True)``: ReduceSum / ReduceMax / ReduceMin per row (count
  form, their documented order) into one value per row (lane 0 of a 32 B block per row; the blocks are
  zeroed once per core so whole-block arithmetic reads defined lanes). Arithmetic on row values stays
  per row (``mean`` multiplies the sum by ``inv_row`` = 1/C, a float32 kernel argument rounded to the
  compute dtype: one more rounding than a true division; ``+ eps``, ``rsqrt`` ...). A tile meets a row
  value in ``rows_muls`` / ``rows_adds`` (``x * r``, ``x + r``, ``x - r`` as ``x + (-r)``): after a V_S
  flag the scalar unit reads each row's value and one Muls / Adds per row applies it, rounding once as
  the tensor form would; other uses duplicate the value over its row first (``bcast``);
- ``where(lhs <op> rhs, a, b)``: Compare into a bit mask (operands first copied into zero-filled slots:
  Compare covers whole 256 B repeats; in a row-tiled kernel the slots span the tile rounded up to 256
  elements), then Select in TENSOR_TENSOR mode (Compare.md, Select.md); a number or a 0-d tensor where
  a tile is needed is duplicated.

UB plan: a liveness pass assigns each value a buffer: inputs stay in their VECIN queue buffers,
outputs are computed straight into their VECOUT buffers, other values take a slot of a TBuf; a
slot (or a dead input's buffer of the same dtype) is reused as soon as its value is dead, and an
instruction may overwrite a source that dies at it (complete overlap is allowed: AD-API
通用说明和约束.md). The slot count decides the UB bytes per element, hence the tile length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fusekit import asc
from fusekit.asc import dtypes
from fusekit.asc.basic import REGISTRY, supports
from fusekit.asc.basic.vec_vconv import MODES
from fusekit.soc import SoC

from .graph import COMPARE, REDUCE, Graph, GraphError, Node

PRECISIONS = ("native", "fp32")
COLUMN = "col:"  # marks an (N, 1) input in ``row_inputs`` (a (C,) input is its bare name)
FLOATS = ("float16", "float32", "bfloat16")
ROUND_MODES = {"rint": "CAST_RINT", "floor": "CAST_FLOOR", "ceil": "CAST_CEIL", "round": "CAST_ROUND",
               "trunc": "CAST_TRUNC", "odd": "CAST_ODD", "none": "CAST_NONE"}
GELU_C = math.sqrt(2 / math.pi)
# Abramowitz and Stegun 7.1.26: erf(z) = 1 - (a1 t + ... + a5 t^5) exp(-z^2), t = 1 / (1 + p z), z >= 0
AS_P = 0.3275911
AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@dataclass(frozen=True)
class Scalar:
    """A scalar operand: a kernel argument (``name``) or a constant (``value``), maybe negated.

    Constants are rounded to float32 when written, as the kernel's float arguments are."""

    name: str = ""
    value: float = 0.0
    negate: bool = False

    def text(self) -> str:
        if self.name:
            return f"-{self.name}" if self.negate else self.name
        return repr(float(f32(-self.value if self.negate else self.value)))

    def number(self, values: dict) -> float:
        """The float32 value the kernel receives (a name is looked up in ``values``)."""
        v = f32(values[self.name]) if self.name else f32(self.value)
        return -v if self.negate else v


def f32(x: float) -> float:
    import numpy as np

    with np.errstate(over="ignore"):
        return float(np.float32(x))


@dataclass
class Value:
    """A tile-sized UB value: SSA id, dtype name, and after planning its buffer."""

    id: int
    dtype: str
    input: str = ""      # the input it is (its VECIN buffer)
    buffer: str = ""     # planned: "in:x", "out:y", "bc:b" (a row broadcast), "t3" (tile slot), "r1" (row-value slot)
    kind: str = "tile"   # "tile": rows x ROW_PAD lanes; "rowvec": one value per row (a 32 B block each)


@dataclass
class Instr:
    """One vector instruction of the compute stage (count form over the tile's n elements)."""

    op: str
    dst: Value
    srcs: tuple = ()
    scalar: Scalar | None = None
    round: str = ""      # cast: the RoundMode's name

    @property
    def kind(self) -> str:
        """What the count covers: "tile", "rowvec", or the per-row loops "reduce", "bcast" and "rowscalar"
        (``rows_muls`` / ``rows_adds``: each row times / plus its row value, read by the scalar unit)."""
        if self.op.startswith("reduce_"):
            return "reduce"
        if self.op == "bcast":
            return "bcast"
        if self.op.startswith("rows_"):
            return "rowscalar"
        return self.dst.kind


@dataclass
class Program:
    """The compute stage of one variant.

    Attributes:
        instrs: instructions in order.
        inputs: input name -> its Value (only inputs the expression reads).
        outputs: output name -> its Value.
        scalars: names of the kernel's float scalar arguments (attrs, then 0-d inputs).
        compute: the compute dtype name.
        slots: TBuf slots (temporaries live at once) and ``slot_bytes`` per element of each.
    """

    instrs: list
    inputs: dict
    outputs: dict
    scalars: list
    compute: str
    gm_dtypes: dict = field(default_factory=dict)
    slots: int = 0
    slot_bytes: int = 0
    rows: bool = False                              # row tiling (reductions or (C,) inputs)
    broadcast: dict = field(default_factory=dict)   # (C,) input name -> its Value (one row, replicated in UB)
    row_slots: int = 0                              # row-value slots
    reductions: tuple = ()                          # reduce ops used
    columns: frozenset = frozenset()                # (N, 1) inputs: one value per row, loaded per tile
    column_blocks: bool = False                     # no DataCopyPad (310P): columns load whole 32 B blocks
    mask_slots: int = 0                             # Compare bit masks (TILE_LENGTH / 8 bytes each)
    tile_form: bool = False                         # rows of <= 8 repeats: per-row instructions per tile (A2/A3)


def spec_copy_pad(soc) -> bool:
    """Whether ``soc`` has DataCopyPad (A2/A3); without it a tile's (N, 1) values are loaded as whole 32 B blocks
    from a column the host pads by one block (fusekit.gen.op)."""
    return soc.data_copy_pad is not False


def natural_dtypes(graph: Graph, dtype: str, scalar_inputs=()) -> dict:
    """The GM dtype of every input and output of the variant (``dtype`` unless fixed by an annotation
    or a cast) as {name: dtype name}."""
    out = {}
    for node in graph.inputs:
        out[node.name] = graph.input_dtypes.get(node.name, dtype)
    memo = {}

    def natural(n: Node) -> str:
        if id(n) in memo:
            return memo[id(n)]
        if n.op == "input":
            d = out[n.name]
        elif n.op == "cast":
            d = n.params["dtype"]
        elif n.op in ("matmul", "conv2d"):  # the product has its operands' dtype, as CANN's MatMul; int8 accumulates in int32
            d = natural(n.args[0])
            d = "int32" if d == "int8" else d
        elif n.op in ("const", "attr"):
            d = dtype
        else:
            kinds = [natural(a) for a in n.args if not a.is_scalar]
            d = kinds[0] if kinds else dtype
        memo[id(n)] = d
        return d
    for name, node in zip(graph.output_names, graph.outputs):
        out[name] = natural(node)
    return out


class _Lowerer:
    def __init__(self, graph: Graph, dtype: str, precision: str, soc: SoC, scalar_inputs: frozenset,
                 row_inputs: frozenset = frozenset(), rows: bool = False):
        self.graph, self.dtype, self.precision, self.soc = graph, dtype, precision, soc
        self.scalar_inputs, self.row_inputs, self.rows = scalar_inputs, row_inputs, rows
        self.broadcast: dict[str, Value] = {}
        self.extra_scalars: list[str] = []
        self.converted: dict = {}
        self.columns: set = set()
        self.gm = natural_dtypes(graph, dtype)
        self.compute = "float32" if precision == "fp32" else dtype
        self.instrs: list[Instr] = []
        self.ids = 0
        self.memo: dict[int, Value] = {}
        self.inputs: dict[str, Value] = {}

    def new(self, dtype: str, kind: str = "tile") -> Value:
        self.ids += 1
        return Value(self.ids, dtype, kind=kind)

    def emit(self, op, dtype, srcs=(), scalar=None, round="", kind=None) -> Value:
        self.require({"bcast": "duplicate", "padded": "duplicate", "rows_muls": "muls", "rows_adds": "adds"}.get(op, op),
                     dtype if op not in ("cast", "compare") else None)
        if kind is None:
            kind = "rowvec" if srcs and all(s.kind == "rowvec" for s in srcs) else "tile"
        if op in ("compare", "select"):
            kind = "mask" if op == "compare" else "tile"
        if kind == "tile" and op in ("mul", "add", "sub") and sorted(s.kind for s in srcs) == ["rowvec", "tile"] and \
                (op != "sub" or srcs[1].kind == "rowvec"):
            # tile (op) row value: one muls / adds per row with the value as its scalar, no broadcast tile
            tile, row = srcs if srcs[1].kind == "rowvec" else srcs[::-1]
            if op == "sub":  # x - v = x + (-v): the negation is exact
                row = self.emit("muls", row.dtype, (row,), Scalar(value=-1.0))
            v = self.new(dtype, "tile")
            self.instrs.append(Instr("rows_muls" if op == "mul" else "rows_adds", v, (tile, row)))
            return v
        if kind == "tile" and op != "bcast" and any(s.kind == "rowvec" for s in srcs):
            srcs = tuple(self.emit("bcast", s.dtype, (s,), kind="tile") if s.kind == "rowvec" else s for s in srcs)
        if op == "cast":
            round = self.cast_mode(srcs[0].dtype, dtype, round)
        v = self.new(dtype, kind)
        self.instrs.append(Instr(op, v, tuple(srcs), scalar, round))
        return v

    def cast_mode(self, src: str, dst: str, mode: str) -> str:
        """``mode``, or the one Cast takes for src -> dst on this SoC that rounds alike (Cast.md 数据类型 lists
        the modes per pair): CAST_NONE rounds as CAST_RINT (precision_conversion.md 表1), and an exact
        (widening) conversion rounds nothing in any mode."""
        takes = {m.name for m in MODES.get(self.soc.arch, {}).get((src, dst), ())}
        exact = (src, dst) in {("float16", "float32"), ("bfloat16", "float32"), ("int8", "float16"),
                               ("uint8", "float16"), ("int16", "float32"), ("int32", "int64")}
        if not takes:
            raise GraphError(f"{self.soc.name}'s Cast has no {src} -> {dst} (Cast.md 数据类型)")
        if mode not in takes:
            for alt in ("CAST_NONE", "CAST_RINT"):
                if alt in takes and (exact or mode in ("CAST_NONE", "CAST_RINT")):
                    return alt
            raise GraphError(f"{self.soc.name}'s Cast {src} -> {dst} does not round {mode}: it takes "
                             f"{', '.join(sorted(takes))} (Cast.md 数据类型)")
        return mode

    def require(self, op: str, dtype: str | None) -> None:

        if op not in REGISTRY or not hasattr(asc, op):
            raise GraphError(f"the vector instruction asc.{op} is not in fusekit.asc yet, so this expression cannot be "
                             "generated on the simulator")
        if dtype is not None and not supports(self.soc, op, dtype):
            hint = "; use precision='fp32' (computes in float32)" if self.precision == "native" else ""
            raise GraphError(f"asc.{op} has no {dtype} form on {self.soc.name} (arch {self.soc.arch}){hint}")

    # -- scalars
    def scalar(self, n: Node) -> Scalar:
        if n.op == "const":
            return Scalar(value=n.value)
        if n.op == "attr":
            return Scalar(name=n.name)
        if n.op == "input" and n.name in self.scalar_inputs:
            return Scalar(name=n.name)
        if n.op == "neg":
            s = self.scalar(n.args[0])
            return Scalar(s.name, s.value, not s.negate)
        if all(a.op == "const" for a in n.args) and n.op in ("add", "sub", "mul", "div"):
            a, b = (x.value for x in n.args)
            return Scalar(value={"add": a + b, "sub": a - b, "mul": a * b, "div": a / b if b else math.inf}[n.op])
        raise GraphError(f"{n!r} is arithmetic on scalars only; compute it on the host and pass it as an attribute")

    def is_scalar(self, n: Node) -> bool:
        return n.is_scalar or (n.op == "input" and n.name in self.scalar_inputs)

    # -- tensors
    def value(self, n: Node) -> Value:
        if id(n) not in self.memo:
            self.memo[id(n)] = self._value(n)
        return self.memo[id(n)]

    def arith(self, n: Node) -> Value:
        """``n`` as an operand of arithmetic: in the compute dtype (float inputs cast up in fp32 mode)."""
        v = self.value(n)
        if v.kind == "column":  # each row's value, read by the scalar unit and duplicated over the row
            key = (id(v), "bcast")
            if key not in self.converted:
                if v.dtype not in FLOATS:
                    raise GraphError(f"{n!r} is {v.dtype}; arithmetic needs floats")
                self.converted[key] = self.emit("bcast", self.compute, (v,), kind="tile")
            return self.converted[key]
        if v.dtype == self.compute:
            return v
        if v.dtype not in FLOATS:
            raise GraphError(f"{n!r} is {v.dtype}; arithmetic needs floats: write fusekit.cast({n!r}, 'float32') first")
        if self.precision == "native":
            raise GraphError(f"{n!r} is {v.dtype} but native precision computes in {self.compute}: write "
                             f"fusekit.cast({n!r}, {self.compute!r}) in the expression, or use precision='fp32'")
        key = (id(v), self.compute)
        if key not in self.converted:  # one widening per value, however many users it has
            self.converted[key] = self.convert(v, self.compute, "none")
        return self.converted[key]

    def convert(self, v: Value, target: str, rounding: str) -> Value:
        """Cast ``v`` to ``target`` through the conversions Cast has (see module doc)."""
        src = v.dtype
        if src == target:
            return v
        pairs = MODES.get(self.soc.arch, {})
        is_float = target in FLOATS
        mode = ROUND_MODES["rint" if rounding == "none" and not is_float else rounding]
        if (src, target) in pairs and not (src == "int32" and target == "float16"):
            return self.emit("cast", target, (v,), round=mode)
        if src in FLOATS and target in ("int8", "uint8"):  # through half, rounded to odd: every in-range value of an
            wide = v if src in ("float32",) else self.convert(v, "float32", "none")  # 8-bit integer is exact there,
            half = self.emit("cast", "float16", (wide,), round=ROUND_MODES["odd"])  # so one rounding in the end
            return self.convert(half, target, rounding)
        if src == "float32" and target in ("int16", "int32"):  # through half only 11 significant bits would survive
            takes = ", ".join(d for s, d in sorted(pairs) if s == src)
            raise GraphError(f"{self.soc.name}'s Cast has no float32 -> {target} (Cast.md 数据类型: float32 converts to "
                             f"{takes} there), and through float16 only 11 significant bits would survive: cast to "
                             f"float16 first if that is enough (fusekit.cast(fusekit.cast(x, 'float16'), '{target}'))")
        if src in FLOATS and target in FLOATS:
            return self.emit("cast", target, (self.convert(v, "float32", "none"),), round=mode)
        if src in ("int32", "int16", "int64") and is_float:
            return self.convert(self.emit("cast", "float32", (v,), round="CAST_NONE"), target, rounding)
        if src in ("int8", "uint8") and is_float:
            return self.convert(self.emit("cast", "float16", (v,), round="CAST_NONE"), target, rounding)
        raise GraphError(f"no Cast path from {src} to {target} on {self.soc.name}")

    def _value(self, n: Node) -> Value:
        op, args = n.op, n.args
        c = self.compute
        if op == "input":
            if n.name in self.scalar_inputs:  # a 0-d tensor used as a tile: its value duplicated
                return self.emit("duplicate", self.compute, (), Scalar(name=n.name))
            if COLUMN + n.name in self.row_inputs:  # (N, 1): one value per row, in its VECIN queue
                v = self.new(self.gm[n.name], "column")
                v.input = n.name
                self.inputs[n.name] = v
                self.columns.add(n.name)
                return v
            if n.name in self.row_inputs:
                gm = self.gm[n.name]
                v = self.new(self.compute if gm in FLOATS else gm)
                v.input, v.buffer = n.name, f"bc:{n.name}"
                self.broadcast[n.name] = v
                return v
            v = self.new(self.gm[n.name])
            v.input = n.name
            self.inputs[n.name] = v
            return v
        if op in ("const", "attr"):  # a scalar where a tile is needed (e.g. where's branch): duplicated
            return self.emit("duplicate", c, (), self.scalar(n))
        if op in REDUCE:
            instr = f"reduce_{'sum' if op == 'mean' else op}"
            self.require(instr, None)
            if not n.params.get("keepdims"):
                raise GraphError(f"fusekit.{op}(..., keepdims=False): the generator keeps reduced rows as (N, 1) values; "
                                 "write keepdims=True (numpy then broadcasts them back along the row)")
            src = self.arith(args[0])
            if src.kind != "tile":
                raise GraphError(f"{n!r} reduces a value that is already one per row")
            # one value per row (lane 0 of a 32 B block per row): arithmetic on row values stays per row, and a
            # tile meets it through rows_muls / rows_adds or a broadcast (Lowerer.emit)
            v = self.emit(instr, c, (src,), kind="rowvec")
            if op == "mean":
                if "inv_row" not in self.extra_scalars:
                    self.extra_scalars.append("inv_row")
                v = self.emit("muls", c, (v,), Scalar(name="inv_row"))
            return v
        if op in COMPARE:
            raise GraphError(f"{n!r}: a comparison is a bit mask (asc.compare); use it as where's condition")
        if op == "where":
            return self.where(*args)
        if op == "cast":
            src = self.value(args[0])
            if src.kind == "column":  # an (N, 1) input: its row values duplicated over the row, then converted
                if src.dtype not in FLOATS or dtypes.as_dtype(src.dtype).sizeof() > dtypes.as_dtype(c).sizeof():
                    raise GraphError(f"{n!r} converts an (N, 1) input of {src.dtype} while the kernel computes in {c}: "
                                     "use precision='fp32', or broadcast it on the host")
                src = self.arith(args[0])
            return self.convert(src, n.params["dtype"], n.params["rounding"])
        if op in ("add", "sub", "mul", "div", "maximum", "minimum"):
            return self.binary(op, *args)
        x = lambda: self.arith(args[0])  # noqa: E731
        if op == "neg":
            return self.emit("muls", c, (x(),), Scalar(value=-1.0))
        simple = {"abs": "abs", "exp": "exp", "log": "ln", "sqrt": "sqrt", "rsqrt": "rsqrt",
                  "reciprocal": "reciprocal", "relu": "relu"}
        if op in simple:
            return self.emit(simple[op], c, (x(),))
        if op == "leaky_relu":
            if not self.is_scalar(args[1]):
                raise GraphError("leaky_relu's negative_slope must be a number or a float attribute")
            return self.emit("leaky_relu", c, (x(),), self.scalar(args[1]))
        if op in ("sigmoid", "silu", "tanh"):
            src = x()
            t = self.emit("muls", c, (src,), Scalar(value=-2.0 if op == "tanh" else -1.0))
            t = self.emit("exp", c, (t,))
            t = self.emit("adds", c, (t,), Scalar(value=1.0))
            if op == "silu":
                return self.emit("div", c, (src, t))
            t = self.emit("reciprocal", c, (t,))
            if op == "sigmoid":
                return t
            t = self.emit("muls", c, (t,), Scalar(value=2.0))
            return self.emit("adds", c, (t,), Scalar(value=-1.0))
        if op == "gelu_tanh":
            src = x()
            t = self.emit("mul", c, (src, src))
            t = self.emit("muls", c, (t,), Scalar(value=0.044715))
            t = self.emit("adds", c, (t,), Scalar(value=1.0))
            t = self.emit("mul", c, (t, src))
            t = self.emit("muls", c, (t,), Scalar(value=-2.0 * GELU_C))
            t = self.emit("exp", c, (t,))
            t = self.emit("adds", c, (t,), Scalar(value=1.0))
            return self.emit("div", c, (src, t))
        if op == "gelu_erf":
            return self.gelu_erf(x())
        raise GraphError(f"primitive {op!r} has no lowering")

    def where(self, cond: Node, a: Node, b: Node) -> Value:
        """``where(lhs <op> rhs, a, b)``: Compare into a bit mask, then Select (TENSOR_TENSOR mode).

        Compare works on whole 256 B repeats (Compare.md: count x sizeof(T) 256 B-aligned), so its operands
        are first copied into zero-filled tile buffers (``padded``: duplicate(0) over the aligned count,
        then x * 1 over the n elements), and the compare covers n rounded up to a repeat."""
        if cond.op not in COMPARE:
            raise GraphError(f"where's condition must be a comparison (x > y, x <= 0, ...), got {cond!r}")
        c = self.compute
        for needed in ("compare", "select"):
            self.require(needed, c)
        sides = [self.arith(x) if not self.is_scalar(x) else self.emit("duplicate", c, (), self.scalar(x))
                 for x in cond.args]
        padded = [self.emit("padded", c, (v,), kind="tile") for v in sides]
        mask = self.emit("compare", "uint8", tuple(padded), round=cond.op.upper(), kind="mask")
        pick = [self.arith(x) if not self.is_scalar(x) else self.emit("duplicate", c, (), self.scalar(x)) for x in (a, b)]
        return self.emit("select", c, (mask, *pick))

    def gelu_erf(self, src: Value) -> Value:
        c = self.compute
        tiny = 2.0 ** -14 if c == "float16" else 2.0 ** -126
        a = self.emit("abs", c, (src,))
        m = self.emit("maxs", c, (a,), Scalar(value=tiny))
        sign = self.emit("div", c, (src, m))                      # +-1, or |x| / tiny < 1 where erf is ~0 anyway
        z = self.emit("muls", c, (a,), Scalar(value=1 / math.sqrt(2)))
        t = self.emit("muls", c, (z,), Scalar(value=AS_P))
        t = self.emit("adds", c, (t,), Scalar(value=1.0))
        t = self.emit("reciprocal", c, (t,))
        p = self.emit("muls", c, (t,), Scalar(value=AS_A[4]))
        for coef in reversed(AS_A[:4]):                          # Horner: ((a5 t + a4) t + a3) ...
            p = self.emit("adds", c, (p,), Scalar(value=coef))
            p = self.emit("mul", c, (p, t))
        e = self.emit("mul", c, (z, z))
        e = self.emit("muls", c, (e,), Scalar(value=-1.0))
        e = self.emit("exp", c, (e,))
        q = self.emit("mul", c, (p, e))                           # erfc(z) = poly * exp(-z^2)
        h = self.emit("adds", c, (sign,), Scalar(value=1.0))
        h = self.emit("muls", c, (h,), Scalar(value=0.5))          # [x >= 0]: 1, or 0 exactly for x < 0
        r = self.emit("muls", c, (q,), Scalar(value=-1.0))
        r = self.emit("adds", c, (r,), Scalar(value=1.0))          # erf(z) = 1 - erfc(z)
        r = self.emit("mul", c, (h, r))
        q = self.emit("muls", c, (q,), Scalar(value=0.5))
        p = self.emit("add", c, (q, r))                           # Phi(x) = erfc(z)/2 + [x >= 0] erf(z)
        return self.emit("mul", c, (src, p))

    def binary(self, op: str, a: Node, b: Node) -> Value:
        c = self.compute
        instr = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max", "minimum": "min"}[op]
        sa, sb = self.is_scalar(a), self.is_scalar(b)
        if not sa and not sb:
            return self.emit(instr, c, (self.arith(a), self.arith(b)))
        if sa and sb:  # e.g. a 0-d tensor times a number: the left one duplicated into a tile
            sa = False
        tensor, scalar = (b, a) if sa else (a, b)
        s = self.scalar(scalar)
        with_scalar = {"add": "adds", "mul": "muls", "maximum": "maxs", "minimum": "mins"}
        if op in with_scalar:
            return self.emit(with_scalar[op], c, (self.arith(tensor),), s)
        if op == "sub" and not sa:
            return self.emit("adds", c, (self.arith(tensor),), Scalar(s.name, s.value, not s.negate))
        if op == "sub":
            t = self.emit("muls", c, (self.arith(tensor),), Scalar(value=-1.0))
            return self.emit("adds", c, (t,), s)
        dup = self.emit("duplicate", c, (), s)                    # div: one rounding, as the tensor form
        return self.emit("div", c, (dup, self.arith(tensor)) if sa else (self.arith(tensor), dup))


def per_row(node: Node) -> bool:
    """One value per row: a reduction, or arithmetic on such values and scalars only."""
    if node.op in REDUCE:
        return True
    tensors = [a for a in node.args if not a.is_scalar]
    return bool(tensors) and node.op not in ("input",) and all(per_row(a) for a in tensors)


def lower(graph: Graph, dtype: str, precision: str, soc: SoC, scalar_inputs=frozenset(), row_inputs=frozenset(),
          rows: bool = False, row_outputs: bool = False) -> Program:
    """The instructions and UB plan of ``graph`` for GM dtype ``dtype`` in ``precision`` on ``soc``.

    Raises:
        GraphError: a primitive without instructions on this SoC / dtype (the message names it).
    """
    if precision not in PRECISIONS:
        raise GraphError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if dtype not in FLOATS:
        raise GraphError(f"dtype {dtype!r}: an operator's floating tensors are float16, bfloat16 or float32")
    low = _Lowerer(graph, dtype, precision, soc, frozenset(scalar_inputs), frozenset(row_inputs), rows)
    if precision == "native" and dtype == "bfloat16":
        raise GraphError(f"{soc.name} has no bfloat16 arithmetic (AD-API Add.md): use precision='fp32'")
    outputs = {}
    for name, node in zip(graph.output_names, graph.outputs):
        if per_row(node) and not row_outputs:
            raise GraphError(f"output {name} = {node!r} is one value per row (shape (N, 1)); return it broadcast "
                             "over the row (e.g. x * 0 + it) or compute it on the host")
        v = low.value(node)
        if v.kind == "rowvec" and row_outputs:  # perf's one-reduction kernels write their row values broadcast
            v = low.emit("bcast", v.dtype, (v,), kind="tile")
        if v.kind != "tile":
            raise GraphError(f"output {name} is one value per row (a reduction); return it broadcast, e.g. x * 0 + "
                             f"{node!r}, or compute it on the host")
        target = low.gm[name]
        if v.dtype != target:
            v = low.convert(v, target, "rint")
        outputs[name] = v
    program = Program(low.instrs, low.inputs, outputs,
                      [a.name for a in graph.attrs] + sorted(scalar_inputs) + low.extra_scalars,
                      low.compute, dict(low.gm), rows=rows, broadcast=low.broadcast,
                      reductions=tuple(sorted({i.op for i in low.instrs if i.op.startswith("reduce_")})),
                      columns=frozenset(low.columns), column_blocks=bool(low.columns) and not spec_copy_pad(low.soc),
                      tile_form=rows and low.soc.arch == "2201")  # WholeReduce's ORDER_ONLY_VALUE: A2/A3 only
    _plan(program)
    return program


def _plan(program: Program) -> None:
    """Assign buffers (see module doc): outputs into VECOUT buffers, reuse of dead values."""
    instrs = program.instrs
    # an output that is an input, or another output's value, needs its own copy into its VECOUT buffer
    claimed = set()
    for name, v in list(program.outputs.items()):
        if v.input or id(v) in claimed:
            copy = Value(max((i.dst.id for i in instrs), default=0) + 1 + len(claimed), v.dtype)
            if v.dtype in FLOATS:
                instrs.append(Instr("muls", copy, (v,), Scalar(value=1.0)))
            else:
                instrs.append(Instr("adds", copy, (v,), Scalar(value=0.0)))
            program.outputs[name] = v = copy
        claimed.add(id(v))
        v.buffer = f"out:{name}"
    last_use: dict[int, int] = {}
    for index, ins in enumerate(instrs):
        for s in ins.srcs:
            last_use[id(s)] = index
    for v in program.inputs.values():
        v.buffer = f"in:{v.input}"
    free: list[tuple[str, str]] = []  # (buffer, dtype) free for reuse; slots hold any dtype
    free_rows: list[str] = []
    slots = row_slots = 0
    sizes = [dtypes.as_dtype(i.dst.dtype).sizeof() for i in instrs if not i.dst.buffer and i.dst.kind == "tile"]
    program.mask_slots = 0
    program.slot_bytes = max(sizes, default=0)
    for index, ins in enumerate(instrs):
        dying = [s for s in ins.srcs if last_use.get(id(s)) == index]
        dst = ins.dst
        if not dst.buffer:
            same = [s for s in dying if s.dtype == dst.dtype and s.kind == dst.kind and s.buffer[:3] not in ("out", "bc:")]
            if same and ins.op not in ("cast", "bcast", "padded", "select") and ins.kind in (dst.kind, "rowscalar"):
                dst.buffer = same[0].buffer
                dying.remove(same[0])
            elif dst.kind == "mask":
                dst.buffer = f"m{program.mask_slots}"
                program.mask_slots += 1
            elif dst.kind == "rowvec":
                if free_rows:
                    dst.buffer = free_rows.pop(0)
                else:
                    dst.buffer = f"r{row_slots}"
                    row_slots += 1
            else:
                # Compare's operands (padded) need a slot: only slots span whole 256 B repeats in a row tile
                pick = next((f for f in free if f[0].startswith("t") or f[1] == dst.dtype and ins.op != "padded"), None)
                if pick is not None:
                    free.remove(pick)
                    dst.buffer = pick[0]
                else:
                    dst.buffer = f"t{slots}"
                    slots += 1
        for s in dying:
            if s.buffer[:3] in ("out", "bc:") or s.buffer == dst.buffer or s.kind == "column":
                continue
            if s.kind == "mask":
                continue
            if s.kind == "rowvec":
                free_rows.append(s.buffer)
            else:
                free.append((s.buffer, s.dtype))
    program.slots, program.row_slots = slots, row_slots
