"""A matmul (or conv2d) and its epilogue: the generator's cube-unit operators (``fusekit.matmul`` / ``fusekit.conv2d``
in an ``@fusekit.op``).

An operator with one ``matmul(a, b)`` node -- or two sharing A and the transposes (gate and up), or one
``conv2d(x, w, stride, padding, dilation)`` -- splits into the product(s) and the **epilogue**, the rest of the
graph with each product as an input ``acc``, ``acc1`` (float32, or int32 for int8 operands: Mmad.md 表7). Where
each part runs (:func:`placement` writes it into the generated source, with the reason):

- the product on the AIC (``docs/cube.md`` "Data path and buffers"): GM -> L1 (ND2NZ, MTE2) -> L0A / L0B
  (load_data, MTE1; a transposed A or a B in ND transposed fractal by fractal; a conv's A by LoadData 3Dv2 from
  the image's NC1HWC0 map in L1) -> Mmad into L0C (M; K in steps of BASE_K that accumulate in L0C) -> Fixpipe ->
  GM (FIX). Tails of M / N / K are padded fractals, which Mmad ignores (Mmad.md: "无效数据 ... 在计算中会被忽略");
- ``acc + bias`` with a (N,) float16 / float32 bias (int32 for int32) in Mmad: C starts from the bias row, copied
  L1 -> bias table per tile (:func:`peel_bias`);
- what Fixpipe does on the way out (:func:`fixpipe_stage`, Fixpipe（L0C到GM数据搬运）.md 表4): ReLU (``relu_en``),
  the casts F322F16 / F322BF16, the quantisations QF322B8_PRE / REQ8 and the dequantisation DEQF16 by a
  per-tensor scale (deq_scalar) or their V forms by a (N,) scale (one uint64 per column in L1): then the kernel is
  AIC_ONLY;
- any other epilogue (gelu, residual, softmax, an offset before rounding, a SwiGLU of two products, ...) on the
  AIVs of a MIX_AIC_1_2 kernel: the AIC writes C band by band (BASE_M rows) to a GM workspace (float32; in native
  precision the GM dtype) and sets a mode-2 cross-core flag on PIPE_FIX after each band; its two AIVs wait on
  PIPE_MTE2 and run the row-tiled vector lowering of the epilogue (:func:`fusekit.gen.source.row_kernel_source`,
  ``bands``) on their halves of that band while the cube computes the next; they flag back so that no more than
  FLOW_WINDOW + 1 sets are pending (CrossCoreSetFlag(ISASI).md: 15; docs/cube.md "Mix kernels").

Tiling (:func:`plan`): C's rows (batch x M, flattened; a conv's N x Ho x Wo pixels) split over the AICs in equal
shares of whole fractal rows (and whole 32 B blocks of the outputs, of each AIV's half-band); each AIC walks its
rows in bands of BASE_M, the columns in BASE_N, K in BASE_K, base sizes that fit the SoC's L0A / L0B (two buffers
each), L0C (two tiles where they fit, so Fixpipe overlaps the next tile) and L1 (two per operand): ``fusekit.soc``.
Where the row shares leave AICs idle (small M) the columns split too, in slabs of whole BASE_N tiles, each AIC a
band of BASE_M rows of one slab so that B is read once per band, where an output row is whole 32 B blocks (two
cores never write one GM block): an AIC_ONLY kernel so, a mix kernel when its epilogue is also elementwise
(:meth:`CubeOp._slab`; a row reduction needs whole rows), its AIVs then the slab's column halves. :func:`tune` searches base sizes and AIC counts with the timing model; :func:`compare_unfused` times the fused
kernel against the plain matmul(s) followed by the epilogue as a vector operator.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from fusekit.asc import dtypes
from fusekit.soc import SoC, get_soc

from .conv import conv_geometry, img2col, pack_fmap, pack_weights
from .graph import CUBE, Graph, GraphError, Node
from .lower import FLOATS, Program, lower, natural_dtypes

ACC = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "int8": "int32"}  # Mmad.md 表7
K_UNIT = {2: 16, 4: 16, 1: 32}  # B's k rows per transposable square: b16 16, float 16 (two 16 x 8), int8 32
FIXPIPE_MODES = {("float32", "float32"): "NoQuant", ("float32", "float16"): "F322F16",
                 ("float32", "bfloat16"): "F322BF16", ("int32", "int32"): "NoQuant"}
ACC_NAME = "acc"
_FIX_PAGE = "Fixpipe（L0C到GM数据搬运）.md"


def has_matmul(graph: Graph) -> bool:
    """Whether ``graph`` holds a cube primitive."""
    return any(n.op in CUBE for n in graph.nodes())


@dataclass
class Split:
    """An operator's graph cut at its matmul: operand names, transposes, and the epilogue graph on ``acc``."""

    a: str
    b: str
    transpose_a: bool
    transpose_b: bool
    epilogue: Graph
    acc: str
    bias: "str | None" = None  # a (N,) input Mmad adds from the bias table (see :func:`peel_bias`)
    more: tuple = ()  # (B, acc) of further products sharing A and the transposes (gate and up of a SwiGLU)
    conv: "tuple | None" = None  # a conv2d's (stride, padding, dilation) pairs: A is img2col of the feature map


def split(graph: Graph, dtype: str) -> Split:
    """Cut ``graph`` at its one matmul for GM dtype ``dtype`` (see module doc); the epilogue's outputs keep the
    original op's dtypes (an explicit cast where the epilogue on a float32 ``acc`` would give another).

    Raises:
        GraphError: no or several matmuls, an operand that is not an input tensor, or an operand the epilogue
            uses too.
    """
    mms = [n for n in graph.nodes() if n.op in CUBE]
    if any(n.op == "conv2d" for n in mms) and len(mms) > 1:
        raise GraphError(f"{graph.name}: a convolution and {len(mms) - 1} other product(s); a generated operator "
                         "holds one convolution")
    if not 1 <= len(mms) <= 2:
        raise GraphError(f"{graph.name}: {len(mms)} matmuls; a generated operator holds one matrix product, or two "
                         "that share A (gate and up)")
    mm = mms[0]
    a, b = mm.args
    for x in mms:
        for side, y in zip("ab", x.args):
            if y.op != "input":
                raise GraphError(f"matmul's {side} is {y!r}: the operands of the product must be input tensors (GM -> "
                                 "L1 by ND2NZ); compute it in another operator")
        if x.args[0] is x.args[1]:
            raise GraphError(f"matmul({y.name}, {y.name}): a matrix product of a tensor with itself; its operands are "
                             "two GM inputs of the kernel (A1 and B1): pass the tensor twice, as two parameters")
    if len(mms) == 2 and (mms[1].args[0] is not a or mms[1].params != mm.params or mms[1].args[1] is b):
        raise GraphError(f"{graph.name}: two matmuls generate one kernel when they share A and the transposes and have "
                         "two B operands (silu(x @ w_gate) * (x @ w_up)); split the operator otherwise")
    bs = [x.args[1].name for x in mms]
    taken = {n.name for n in graph.inputs} | {n.name for n in graph.attrs}
    free = [f"{ACC_NAME}{i or ''}" for i in range(len(taken) + 2) if f"{ACC_NAME}{i or ''}" not in taken]
    acc_name = free[0]
    gm = natural_dtypes(graph, dtype)
    accs = {id(x): Node("input", name=free[i]) for i, x in enumerate(mms)}
    memo: dict = {}

    def rebuild(n: Node) -> Node:
        if id(n) in accs:
            return accs[id(n)]
        if n.op in ("input", "attr", "const"):
            if n.op == "input" and n.name in (a.name, *bs):
                raise GraphError(f"{n.name} is matmul's operand and used by the epilogue as well; an operand goes to "
                                 "the cube only (pass it twice, as two inputs)")
            return n
        if id(n) not in memo:
            memo[id(n)] = Node(n.op, tuple(rebuild(x) for x in n.args), dict(n.params), n.name, n.value)
        return memo[id(n)]
    epi = Graph(f"{graph.name}_epilogue", [], graph.attrs, [], graph.output_names, {}, graph.defaults)
    epi.outputs = [rebuild(o) for o in graph.outputs]
    used = {id(n) for n in epi.nodes()}
    epi.inputs = list(accs.values()) + [n for n in graph.inputs if id(n) in used]
    epi.input_dtypes = dict({k: v for k, v in graph.input_dtypes.items() if k not in (a.name, *bs)},
                            **{x.name: ACC[gm[a.name]] for x in accs.values()})
    natural = natural_dtypes(epi, dtype)
    epi.outputs = [o if natural[k] == gm[k] else Node("cast", (o,), {"dtype": gm[k], "rounding": "rint"})
                   for k, o in zip(graph.output_names, epi.outputs)]
    more = tuple((bs[i], free[i]) for i in range(1, len(mms)))
    if mm.op == "conv2d":
        conv = tuple(mm.params[k] for k in ("stride", "padding", "dilation"))
        return Split(a.name, b.name, False, False, epi, acc_name, conv=conv)
    return Split(a.name, b.name, mm.params["transpose_a"], mm.params["transpose_b"], epi, acc_name, more=more)


BT_BIAS = {"float32": ("float16", "float32"), "int32": ("int32",)}  # L1 -> BT: half widens to float (DataCopy L1ToBT)
# (accumulator, output, per-tensor / per-column) -> the Fixpipe mode that multiplies by a scale on the way out
SCALED_MODES = {("float32", "int8"): ("QF322B8_PRE", "VQF322B8_PRE"), ("int32", "int8"): ("REQ8", "VREQ8"),
                ("int32", "float16"): ("DEQF16", "VDEQF16")}


def peel_bias(s: Split, dtype: str, row_inputs=frozenset()) -> Split:
    """``s`` (GM dtype ``dtype``) with ``acc + bias`` folded into the product when the epilogue reads acc only
    through it and bias is a (N,) input (``row_inputs``) of a dtype the bias table takes (float16 / float32 for a float32 acc, int32 for
    int32): Mmad then starts C from the bias row (Mmad.md, the bias overload; DataCopy（L1ToBiasTable）.md), which
    costs one 64 B-per-block MTE1 copy per tile instead of an AIV pass over C. Otherwise ``s`` itself."""
    g, acc_dt = s.epilogue, s.epilogue.input_dtypes[s.acc]
    users = [n for n in g.nodes() if any(a.op == "input" and a.name == s.acc for a in n.args)]
    if s.bias is not None or s.more or len(users) != 1 or users[0].op != "add":
        return s
    add = users[0]
    other = add.args[1] if add.args[0].name == s.acc and add.args[0].op == "input" else add.args[0]
    gm = natural_dtypes(g, dtype)
    if other.op != "input" or other.name not in row_inputs or gm.get(other.name) not in BT_BIAS.get(acc_dt, ()):
        return s
    acc = g.inputs[0]
    memo: dict = {}

    def rebuild(n: Node) -> Node:
        if n is add:
            return acc
        if n.op in ("input", "attr", "const"):
            return n
        if id(n) not in memo:
            memo[id(n)] = Node(n.op, tuple(rebuild(x) for x in n.args), dict(n.params), n.name, n.value)
        return memo[id(n)]
    epi = Graph(g.name, [], g.attrs, [rebuild(o) for o in g.outputs], g.output_names, {}, g.defaults)
    used = {id(n) for n in epi.nodes()}
    epi.inputs = [acc] + [n for n in g.inputs[1:] if id(n) in used]
    epi.input_dtypes = {k: v for k, v in g.input_dtypes.items() if k != other.name}
    return replace(s, epilogue=epi, bias=other.name)


@dataclass(frozen=True)
class FixStage:
    """The epilogue the Fixpipe does: its QuantMode, ReLU, the output dtype and the quantisation scale (an attribute
    or input name; ``vector``: a (N,) input, one scale per column read from L1)."""

    mode: str
    relu: bool
    out: str
    scale: "str | None" = None
    vector: bool = False


def fixpipe_stage(s: Split, scalar_inputs=frozenset(), row_inputs=frozenset()) -> "FixStage | None":
    """The Fixpipe form of ``s``'s epilogue, or None when some step has no Fixpipe form:
    ``[cast to dtype, rint] of [* scale] of [cast to float32] of [relu] of acc`` where the steps make a mode of
    Fixpipe.md 表4 (QuantMode_t): F322F16 / F322BF16 (a cast of float32, CAST_RINT), QF322B8_PRE (float32 x scale ->
    int8), REQ8 (int32 -> float32 x scale -> int8), DEQF16 (int32 -> float32 x scale -> float16); ``relu_en`` zeroes
    the negative values before the scale (M2 = 0: 随路量化与随路ReLU场景组合.md). The scale is an attribute or a 0-d
    input (``scalar_inputs``: deq_scalar) or a (N,) input (``row_inputs``: the V modes, cbuf_workspace). An offset
    is not taken: Fixpipe adds a 9-bit integer after rounding (随路量化.md 表1), the expression a real before it."""
    g = s.epilogue
    if len(g.outputs) != 1 or s.more:
        return None
    node, acc_dt = g.outputs[0], g.input_dtypes[s.acc]
    out = acc_dt
    if node.op == "cast" and node.params["rounding"] == "rint":
        out, node = node.params["dtype"], node.args[0]
    scale = vector = None
    if node.op == "mul":
        for x, y in (node.args, node.args[::-1]):
            if x.op == "attr" or x.op == "input" and x.name in scalar_inputs | row_inputs:
                scale, vector, node = x.name, x.op == "input" and x.name in row_inputs, y
                break
        else:
            return None
    widened = node.op == "cast" and node.params["dtype"] == "float32" and acc_dt == "int32"
    node = node.args[0] if widened else node
    relu = node.op == "relu"
    node = node.args[0] if relu else node
    if node.op == "cast" and node.params["dtype"] == "float32" and acc_dt == "int32" and not widened:
        widened, node = True, node.args[0]
    if node.op != "input" or node.name != s.acc:
        return None
    if scale is None:
        mode = None if widened else FIXPIPE_MODES.get((acc_dt, out))
    else:
        modes = SCALED_MODES.get((acc_dt, out))
        mode = modes and (acc_dt == "float32" or widened) and modes[bool(vector)]
    return FixStage(mode, relu, out, scale, bool(vector)) if mode else None


def placement(s: Split, fix: "FixStage | None") -> list:
    """One line per epilogue step saying where it runs and why (the generated source's comments)."""
    steps = []
    if s.bias is not None:
        steps.append(f"+ {s.bias}: in Mmad (C starts from the bias row in the bias table, float32 / int32: Mmad.md; "
                     "one L1 -> BT copy per tile instead of a pass over C)")
    if fix is not None:
        if fix.relu:
            steps.append(f"relu: in Fixpipe (relu_en: negative values scaled by 0 on the way out, {_FIX_PAGE})")
        if fix.scale is not None:
            where = ("one uint64 scale per column from L1 (cbuf_workspace)" if fix.vector
                     else "the scale in deq_scalar")
            steps.append(f"* {fix.scale} and cast to {fix.out}: in Fixpipe (QuantModes.{fix.mode}, {where}; M1 keeps "
                         "10 mantissa bits, the generator rounds the scale to them: 随路量化.md 表1)")
        elif fix.mode != "NoQuant":
            steps.append(f"cast to {fix.out}: in Fixpipe (QuantModes.{fix.mode}, CAST_RINT on the way L0C -> GM, "
                         f"{_FIX_PAGE})")
        return steps or ["none: Fixpipe writes C as it is (QuantModes.NoQuant)"]
    for n in s.epilogue.nodes():
        if n.op in ("input", "attr", "const"):
            continue
        if n.op == "relu" or n.op == "cast" and n.params.get("dtype") in FLOATS:
            why = "Fixpipe has it, but other steps run on the AIVs, which read C from the workspace"
        else:
            why = f"Fixpipe has no {n.op} here (its steps: ReLU, then scale and cast / quantise: {_FIX_PAGE})"
        steps.append(f"{n.op}: on the AIVs ({why})")
    return steps


def pack_scales(scale, out: str) -> np.ndarray:
    """Quantisation scales (float32, any shape) as Fixpipe's QUANT_PRE words (uint64, same shape): M1 in bits 0-31
    with its mantissa rounded to the 10 bits the hardware reads (round to nearest even: the generator's choice, the
    page says only that the low 13 bits are ignored), the sign bit 46 set for an int8 output (随路量化.md 表1).

    Raises:
        ValueError: a scale that is inf, NaN or denormal, or becomes inf when rounded (Fixpipe page, 约束说明)."""
    bits = np.asarray(scale, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0xFFF) + ((bits >> np.uint64(13)) & np.uint64(1))) & np.uint64(0xFFFFE000)
    m1 = rounded.astype(np.uint32).view(np.float32)
    tiny = np.finfo(np.float32).tiny
    if (~np.isfinite(m1) | ((m1 != 0) & (np.abs(m1) < tiny))).any():
        raise ValueError(f"quantisation scale {np.asarray(scale).reshape(-1)[:4]}...: Fixpipe's M1 must be a finite, "
                         "normal float32 (Fixpipe（L0C到GM数据搬运）.md 约束说明)")
    return rounded | (np.uint64(1 << 46) if out == "int8" else np.uint64(0))


@dataclass
class CubePlan:
    """The cube tiling of one launch: C is ``batch`` x (m x n), rows_per_core rows of batch x m and cols_per_core
    columns (0: all n) per AIC; block_dim = row shares x column slabs, the row share fastest."""

    batch: int
    m: int
    n: int
    k: int
    b_stride: int
    base_m: int
    base_n: int
    base_k: int
    rows_per_core: int
    block_dim: int
    cols_per_core: int = 0

    @property
    def rows(self) -> int:
        return self.batch * self.m

    def describe(self) -> str:
        """One line for ``fusekit run``: the grid, base block and rows per AIC."""
        return (f"cube tiling: C {self.batch} x {self.m} x {self.n} (K {self.k})  block_dim {self.block_dim} AIC(s)  "
                f"{self.rows_per_core} rows x {self.cols_per_core or self.n} columns each  base {self.base_m} x "
                f"{self.base_n} x {self.base_k}")

    def kernel_args(self) -> dict:
        return {"ROWS": self.rows, "ROWS_PER_CORE": self.rows_per_core, "M": self.m, "N": self.n, "K": self.k,
                "B_STRIDE": self.b_stride, "BASE_M": self.base_m, "BASE_N": self.base_n, "BASE_K": self.base_k,
                "COLS_PER_CORE": self.cols_per_core or self.n}


def _up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def base_sizes(m: int, n: int, k: int, in_dtype: str, spec: SoC, base=None) -> tuple:
    """(BASE_M, BASE_N, BASE_K): the given ``base`` (a triple, None entries defaulted) or 128 x 128 x 256 B of k
    (two such L0A / L0B tiles fill the 64 KiB of each; the timing model puts 256 B of k 9-14 % ahead of 128 B on 910B1
    for matmul_bias / matmul_swiglu / matmul_bias_gelu, fp16 and fp32, 128 x 512 x 1376 to 1024 cubed),
    each clipped to the matrix (M, N up to 16, K up to the transposable unit), checked against the SoC's buffers.

    Raises:
        ValueError: a base size not a multiple of its unit, or buffers that do not fit (named, with sizes).
    """
    size = dtypes.as_dtype(in_dtype).sizeof()
    unit = K_UNIT[size]
    bm, bn, bk = base or (None, None, None)
    bm = bm or min(128, _up(m, 16))
    bn = bn or min(128, _up(n, 16))
    bk = bk or min(max(256 // size, unit), _up(k, unit))
    for name, v, u in (("base_m", bm, 16), ("base_n", bn, 16), ("base_k", bk, unit)):
        if v <= 0 or v % u:
            raise ValueError(f"{name}={v}: a multiple of {u} ({in_dtype}: the fractal's rows / transposable k)")
    need = {"L0A": (2 * bm * bk * size, spec.l0a_bytes), "L0B": (2 * bn * bk * size, spec.l0b_bytes),
            "L0C": (bm * bn * 4, spec.l0c_bytes), "L1": (2 * (bm + bn) * bk * size, spec.l1_bytes)}
    over = [f"{k_} needs {a} B of {b}" for k_, (a, b) in need.items() if a > b]
    if over:
        raise ValueError(f"base {bm} x {bn} x {bk} ({in_dtype}) does not fit {spec.name}: {'; '.join(over)} (two "
                         "buffers of L0A / L0B / L1 per operand, one L0C; docs/cube.md Data path and buffers)")
    return bm, bn, bk


def _band_rows(rows_per_core: int, base_m: int, rows: int) -> int:
    """Rows per AIC where the columns split: a band of BASE_M rows at least (B is read once per band), a multiple of
    the aligned share (still aligned)."""
    return min(_up(base_m, rows_per_core), rows) if rows_per_core < min(base_m, rows) else rows_per_core


def plan(batch: int, m: int, n: int, k: int, b_batched: bool, in_dtype: str, spec: SoC, cores: "int | None",
         base=None, rows_per_core: "int | None" = None, col_unit: "int | None" = None) -> CubePlan:
    """The cube tiling (module doc): ``rows_per_core`` when a mix kernel's AIV tiling fixes it, else equal shares of
    the rows over ``cores`` (default the SoC's AICs), each a multiple of 16 rows where there are more rows. With
    ``col_unit`` (an AIC_ONLY kernel, whose rows need no AIV) the columns split too where the row shares leave AICs
    idle (small M): equal column shares in multiples of lcm(BASE_N, col_unit) -- whole base tiles, whole 32 B blocks
    of the output rows -- when an output row is whole blocks (``n`` a multiple of ``col_unit``: else the last share
    of a row and the first of the next, two cores', would write one GM block)."""
    bm, bn, bk = base_sizes(m, n, k, in_dtype, spec, base)
    rows = batch * m
    if rows_per_core is None:
        cores = max(1, min(cores or spec.cube_cores, rows))
        rows_per_core = -(-rows // cores)
        rows_per_core = min(_up(rows_per_core, 16), rows) if rows >= 16 else rows
    cols = 0
    budget = max(1, cores or spec.cube_cores)
    split = bool(col_unit) and n > bn and n % col_unit == 0
    if split:
        rows_per_core = _band_rows(rows_per_core, bm, rows)
    block_dim = -(-rows // rows_per_core) if rows else 0
    if split and block_dim and budget // block_dim > 1:
        groups = min(budget // block_dim, -(-n // bn))
        cols = _up(-(-n // groups), math.lcm(bn, col_unit))
        block_dim *= -(-n // cols)
        cols = 0 if cols >= n else cols
    return CubePlan(batch, m, n, k, n * k if b_batched else 0, bm, bn, bk, rows_per_core, block_dim, cols)


# -- source


def _share_params(bias: "str | None", fix: "FixStage | None") -> tuple:
    """(the GM tensors after c_gm, the int arguments after BASE_K) of ``aic_share``: the bias row, the scales
    (uint64 words packed by :func:`pack_scales`: one per column, or one read as deq_scalar -- a kernel's int
    argument is int32, the word 47 bits)."""
    gms = (["bias_gm"] if bias else []) + (["scale_gm"] if fix and fix.scale else [])
    return gms, []


FLOW_WINDOW = 8  # bands an AIC may run ahead of its AIVs: under CrossCoreSetFlag's 15 pending sets


def _aic_share(in_dtype: str, acc: str, trans_a: bool, trans_b: bool, fix: "FixStage | None",
               bias_dtype: "str | None" = None, products: int = 1, mix: bool = False,
               l0c_bytes: int = 128 * 1024, conv: bool = False) -> list:
    """The lines of ``aic_share``: one AIC's rows [row0, row1) of C (module doc), Fixpipe into ``c_gm``.

    The rows go in bands of BASE_M; with ``mix`` a mode-2 flag (id 0) after each band releases both AIVs for it
    (each takes half of the band), so they work on band j while the cube computes band j + 1, and the AIC waits
    the AIVs' flag (id 1) of band j - FLOW_WINDOW
    before setting the flag of band j: never more than FLOW_WINDOW + 1 sets pending (CrossCoreSetFlag(ISASI).md:
    at most 15). ``bias_dtype``: the bias row's GM dtype when Mmad adds it (:func:`peel_bias`); ``products``: B
    operands sharing A (``b_gm``, ``b_gm_1``, ... into ``c_gm``, ``c_gm_1``, ...), each tile computed for each.
    L0C holds two tiles where two fit (``l0c_bytes``): the Fixpipe of one overlaps the loads and Mmads of the next.
    ``conv``: A is the img2col matrix of image bt's feature map (``a_gm``: NC1HWC0 maps of FMAP elements, GEOM
    the geometry of :func:`conv_geometry`), copied into L1 once per image and loaded into L0A by LoadData 3Dv2
    (docs/cube.md "LoadData 3Dv2 (img2col)"); M is Ho x Wo, B the packed (K, Cout) weights.
    A tile of one row runs its Mmad with m = 2: m = 1 turns on GEMV, which reads A as one ND row of k elements
    (Mmad计算关键特性说明/GEMV.md; A2/A3 have no disableGemv), but every A here is Zz (row 0 of k-fractal i at
    i x 256 elements); the second row is the fractal's padding, computed in L0C and never written out."""
    size = dtypes.as_dtype(in_dtype).sizeof()
    c0, unit, fe = 32 // size, K_UNIT[size], 512 // size
    t, ac = f"asc.{in_dtype}", f"asc.{acc}"
    mode, relu = (fix.mode, fix.relu) if fix else ("NoQuant", False)
    gms, ints = _share_params(bias_dtype, fix)
    extra = "".join(f"{g}: asc.GlobalTensor, " for g in _product_gms(products)[2:] + gms)
    L = ["@asc.jit",
         f"def aic_share(a_gm: asc.GlobalTensor, b_gm: asc.GlobalTensor, c_gm: asc.GlobalTensor, {extra}row0: int,",
         "              row1: int, col0: int, col1: int, M: int, N: int, K: int, B_STRIDE: int,",
         "              BASE_M: asc.ConstExpr[int],",
         f"              BASE_N: asc.ConstExpr[int], BASE_K: asc.ConstExpr[int]{''.join(f', {x}: int' for x in ints)}"
         f"{', GEOM: asc.ConstExpr[tuple]' if conv else ''}):",
         '    """Rows [row0, row1) of C (batch x M flattened): bands of BASE_M rows, tiles of BASE_N columns, K in',
         '    steps of BASE_K accumulating in L0C; every stage a TQue of two buffers (its events order the pipes)."""',
         "    pipe = asc.TPipe()",
         "    qa1, qb1 = asc.TQue(asc.TPosition.A1, 2), asc.TQue(asc.TPosition.B1, 2)",
         "    qa2, qb2 = asc.TQue(asc.TPosition.A2, 2), asc.TQue(asc.TPosition.B2, 2)",
         f"    LC = 2 if 2 * BASE_M * BASE_N * 4 <= {l0c_bytes} else 1  # L0C tiles: Fixpipe overlaps the next tile",
         "    qc = asc.TQue(asc.TPosition.CO1, LC)",
         f"    for q, rows in ({'' if conv else '(qa1, BASE_M), '}(qb1, BASE_N), (qa2, BASE_M), (qb2, BASE_N)):",
         f"        pipe.init_buffer(que=q, num=2, len=rows * BASE_K * {size})",
         "    pipe.init_buffer(que=qc, num=LC, len=BASE_M * BASE_N * 4)",
         "    NP = (N + 15) // 16 * 16  # the bias / scale rows, padded by the host to whole fractal columns",
         "    NC = min((col1 - col0 + 15) // 16 * 16, NP - col0)  # this AIC's columns of them, from col0"]
    if bias_dtype:  # the whole row into L1 once; a tile's BASE_N of it into the bias table (1 KiB) per tile
        bsz = dtypes.as_dtype(bias_dtype).sizeof()
        L += ["    qbias1, qbias2 = asc.TQue(asc.TPosition.C1, 1), asc.TQue(asc.TPosition.C2, 1)",
              f"    pipe.init_buffer(que=qbias1, num=1, len=NP * {bsz})",
              "    pipe.init_buffer(que=qbias2, num=1, len=BASE_N * 4)",
              f"    bias1 = qbias1.alloc_tensor(asc.{bias_dtype})",
              "    asc.data_copy(bias1, bias_gm[col0:], NC)",
              "    qbias1.enque(bias1)",
              f"    bias1 = qbias1.deque(asc.{bias_dtype})"]
    if fix and fix.scale and not fix.vector:
        L.append("    deq = scale_gm.get_value(0)  # the per-tensor QUANT_PRE word (a scalar read on PIPE_S)")
    elif "scale_gm" in gms:  # Fixpipe reads it (PIPE_FIX): an MTE2 -> FIX flag, no queue event covers that pair
        L += ["    qscale = asc.TQue(asc.TPosition.C1, 1)",
              "    pipe.init_buffer(que=qscale, num=1, len=NP * 8)",
              "    scale1 = qscale.alloc_tensor(asc.uint64)",
              "    asc.data_copy(scale1, scale_gm[col0:], NC)",
              "    asc.set_flag(asc.HardEvent.MTE2_FIX, 0)",
              "    asc.wait_flag(asc.HardEvent.MTE2_FIX, 0)"]
    if conv:
        L += ["    CH, IH, IW, FH, FW, SH, SW, DH, DW, PL, PR, PT, PB, FMAP = GEOM",
              "    qfm = asc.TQue(asc.TPosition.A1, 1)",
              f"    pipe.init_buffer(que=qfm, num=1, len=FMAP * {size})",
              "    image = -1  # the image whose map is in L1"]
    loop = len(L)
    L += ["    for bt in range(blo // M, (bhi + M - 1) // M):",
         "        lo = max(blo - bt * M, 0)",
         "        hi = min(bhi - bt * M, M)"]
    if conv:  # a new image: free the last map (its queue orders MTE1's reads before the copy) and copy this one
        L += ["        if bt != image:",
              "            if image >= 0:",
              "                qfm.free_tensor(fm)",
              f"            fm = qfm.alloc_tensor({t})",
              "            asc.data_copy(fm, a_gm[bt * FMAP:], FMAP)",
              "            qfm.enque(fm)",
              f"            fm = qfm.deque({t})",
              "            image = bt"]
    L += [
         "        for m1 in range(0, hi - lo, BASE_M):  # counted from the band's first row: one trip count for",
         "            m0 = lo + m1                     # every AIC (a lockstep group's cores run one loop)",
         "            tm = min(BASE_M, hi - lo - m1)",
         "            tm16 = (tm + 15) // 16 * 16",
         "            mm = max(tm, 2)  # Mmad's m: m = 1 is GEMV, A read as one ND row (GEMV.md), but A is Zz here",
         "            for n1 in range(0, col1 - col0, BASE_N):",
         "                n0 = col0 + n1",
         "                tn = min(BASE_N, col1 - col0 - n1)",
         "                tn16 = (tn + 15) // 16 * 16",
         f"                c1 = qc.alloc_tensor({ac})"]
    if bias_dtype:
        bt_dt = "asc.int32" if acc == "int32" else "asc.float32"
        L += [f"                bt1 = qbias2.alloc_tensor({bt_dt})",
              "                asc.data_copy(bt1, bias1[n1:], asc.DataCopyParams(1, tn16 * 4 // 64, 0, 0))",
              "                qbias2.enque(bt1)",
              f"                bt1 = qbias2.deque({bt_dt})"]
    L += [
         "                for k0 in range(0, K, BASE_K):",
         "                    tk = min(BASE_K, K - k0)",
         f"                    tkp = (tk + {unit - 1}) // {unit} * {unit}  # B's k rows in whole transposable squares",
         f"                    k1 = (tk + {c0 - 1}) // {c0}  # fractals along k: per row of A's Zz, rows of B's Zn"]
    i = " " * 20
    if not conv:  # a conv's A comes from the map in L1 by LoadData 3Dv2 (below)
        L.append(f"{i}a1 = qa1.alloc_tensor({t})")
        if trans_a:  # A^T (K x M): ND2NZ gives k x m fractals in column blocks of m; each transposed is a Zz fractal
            L.append(f"{i}asc.data_copy(a1, a_gm[bt * M * K + k0 * M + m0:], asc.Nd2NzParams(1, tk, tm, 0, M, tkp, 1, 0))")
        else:
            L.append(f"{i}asc.data_copy(a1, a_gm[(bt * M + m0) * K + k0:], asc.Nd2NzParams(1, tm, tk, 0, K, tm16, 1, 0))")
    L += ([] if conv else [f"{i}qa1.enque(a1)"]) + [f"{i}b1 = qb1.alloc_tensor({t})"]
    b_at = "bt * B_STRIDE"
    if trans_b:  # B^T (N x K): ND2NZ lands B in Zn fractals directly
        L.append(f"{i}asc.data_copy(b1, b_gm[{b_at} + n0 * K + k0:], asc.Nd2NzParams(1, tn, tk, 0, K, tn16, 1, 0))")
    elif size == 4:  # float: slabs of 16 rows, two 16 x 8 fractals of a slab make a square to transpose
        L += [f"{i}for s in range(tkp // 16):",
              f"{i}    asc.data_copy(b1[s * 16 * tn16:], b_gm[{b_at} + (k0 + 16 * s) * N + n0:],",
              f"{i}                  asc.Nd2NzParams(1, min(16, tk - 16 * s), tn, 0, N, 16, 1, 0))"]
    else:  # b16 / int8: k rows in column blocks of C0 (int8: rows padded to 32, pairs of fractals)
        L.append(f"{i}asc.data_copy(b1, b_gm[{b_at} + k0 * N + n0:], asc.Nd2NzParams(1, tk, tn, 0, N, tkp, 1, 0))")
    L += [f"{i}qb1.enque(b1)", f"{i}b1 = qb1.deque({t})" if conv else f"{i}a1, b1 = qa1.deque({t}), qb1.deque({t})",
          f"{i}a2 = qa2.alloc_tensor({t})"]
    if conv:  # rows [m0, m0 + tm16) x columns [k0, k0 + tk) of the img2col matrix, Zz (LoadData_3D.md 表4)
        L += [f"{i}asc.load_data(a2, fm, asc.LoadData3DParamsV2([PL, PR, PT, PB], IH, IW, CH, tk, tm16, k0, m0, SW, SH,",
              f"{i}                                             FW, FH, DW, DH, False, 0))"]
    elif trans_a:
        L.append(f"{i}asc.load_data(a2, a1, asc.LoadData2DParams(0, tm16 // 16 * k1, 1, 0, 0, True, 0))")
    else:  # Nz -> Zz: one row of fractals per load
        L += [f"{i}for m1 in range(tm16 // 16):",
              f"{i}    asc.load_data(a2[m1 * k1 * {fe}:], a1[m1 * {fe}:], "
              "asc.LoadData2DParams(0, k1, tm16 // 16, 0, 0, False, 0))"]
    L += [f"{i}qa2.enque(a2)", f"{i}b2 = qb2.alloc_tensor({t})"]
    if trans_b:
        L.append(f"{i}asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * (tn16 // 16), 1, 0, 0, False, 0))")
    elif size == 2:  # k x n Nz fractals transposed one by one into Zn, a row of k fractals per load
        L += [f"{i}for kk in range(k1):",
              f"{i}    asc.load_data(b2[kk * (tn16 // 16) * {fe}:], b1[kk * {fe}:], "
              "asc.LoadData2DParams(0, tn16 // 16, k1, 0, 0, True, 0))"]
    elif size == 4:  # a slab's 16 x 16 squares, transposed, split into the k halves (Zn, k0 = 8)
        L += [f"{i}for s in range(tkp // 16):",
              f"{i}    asc.load_data_with_transpose(b2[2 * s * (tn16 // 16) * {fe}:], b1[s * 16 * tn16:],",
              f"{i}                                 asc.LoadData2dTransposeParams(0, tn16 // 16, 1, 0, tn16 // 16 - 1, 0))"]
    else:  # int8: 32 x 32 squares (two fractals one above the other) transposed into two Zn fractals
        L += [f"{i}for kk in range(tkp // 32):",
              f"{i}    asc.load_data_with_transpose(b2[kk * (tn16 // 16) * {fe}:], b1[kk * 2 * {fe}:],",
              f"{i}                                 asc.LoadData2dTransposeParams(0, tn16 // 32, tkp // 32, 1, 0, 0))"]
    L += [f"{i}qb2.enque(b2)"] + ([] if conv else [f"{i}qa1.free_tensor(a1)"]) + [f"{i}qb1.free_tensor(b1)",
          f"{i}a2, b2 = qa2.deque({t}), qb2.deque({t})",
          f"{i}if k0 > 0 and (tm16 // 16) * (tn16 // 16) < 10:",
          f"{i}    asc.pipe_barrier(asc.PipeID.PIPE_M)  # a small tile: the hardware does not order the Mmads (Mmad.md)",
          f"{i}if k0 == 0:  # C starts from the bias row",
          f"{i}    asc.mmad(c1, a2, b2, bt1, asc.MmadParams(mm, tn, tk, 0, False, False))",
          f"{i}else:",
          f"{i}    asc.mmad(c1, a2, b2, asc.MmadParams(mm, tn, tk, 0, False, False))"]
    if not bias_dtype:
        L[-4:] = [f"{i}asc.mmad(c1, a2, b2, asc.MmadParams(mm, tn, tk, 0, False, k0 == 0))"]
    L += [
          f"{i}qa2.free_tensor(a2)", f"{i}qb2.free_tensor(b2)",
          "                qc.enque(c1)",
          f"                c1 = qc.deque({ac})"]
    if bias_dtype:
        L.append("                qbias2.free_tensor(bt1)")
    ws = " scale1[n1:]," if fix and fix.vector else ""
    L += [f"                asc.fixpipe(c_gm[(bt * M + m0) * N + n0:], c1,{ws}",
          f"                            asc.FixpipeParamsV220(tn, tm, tm16, N, asc.QuantModes.{mode}, "
          f"{'deq' if fix and fix.scale and not fix.vector else 0}, 1, 0, 0, {relu}))",
          "                qc.free_tensor(c1)"]
    body = next(x for x, line in enumerate(L) if "c1 = qc.alloc_tensor" in line)
    tile = L[body:]
    for p in range(1, products):  # the same tile of the next product: its B and C (A's tile is copied again)
        L += [line.replace("b_gm[", f"b_gm_{p}[").replace("c_gm[", f"c_gm_{p}[") for line in tile]
    bands = ["    for j in range((row1 - row0 + BASE_M - 1) // BASE_M):  # band j: rows [blo, bhi)",
             "        blo = row0 + j * BASE_M",
             "        bhi = min(blo + BASE_M, row1)"]
    L[loop:] = bands + ["    " + line for line in L[loop:]]
    if mix:
        L += [f"        if j >= {FLOW_WINDOW}:  # the AIVs have taken band j - {FLOW_WINDOW}: the sets stay under 15 pending",
              "            asc.cross_core_wait_flag(1, 2, asc.PipeID.PIPE_FIX)",
              "        # this band's C is in the workspace: release both AIVs (mode 2, after its last Fixpipe)",
              "        asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)",
              "    bands = (row1 - row0 + BASE_M - 1) // BASE_M",
              f"    for j in range(max(bands - {FLOW_WINDOW}, 0), bands):",
              "        asc.cross_core_wait_flag(1, 2, asc.PipeID.PIPE_FIX)  # the AIVs' last flags: none left pending"]
    if conv:
        L += ["    if image >= 0:", "        qfm.free_tensor(fm)"]
    if bias_dtype:
        L.append("    qbias1.free_tensor(bias1)")
    if fix and fix.vector:
        L.append("    qscale.free_tensor(scale1)")
    return L + ["\n"]


def _block_elements(program: Program) -> int:
    """Elements that are whole 32 B blocks of every GM tensor of the epilogue ``program``."""
    return math.lcm(*(32 // math.gcd(32, dtypes.as_dtype(t).sizeof()) for t in program.gm_dtypes.values()))


def _product_gms(products: int) -> list:
    """The B and C GM tensors of ``aic_share`` for ``products`` products sharing A."""
    return ["b_gm", "c_gm"] + [f"{x}_gm_{p}" for p in range(1, products) for x in ("b", "c")]


def kernel_source(name: str, s: Split, in_dtype: str, fix: "FixStage | None", epilogue: "Program | None",
                  expression: str, variant: str, bias_dtype: "str | None" = None, l0c_bytes: int = 128 * 1024) -> str:
    """The pyasc source of the operator: an AIC_ONLY kernel (``fix``: the whole epilogue in Fixpipe) or a
    MIX_AIC_1_2 kernel whose AIVs run ``epilogue`` (module doc); ``bias_dtype``: GM dtype of ``s.bias``."""
    from .source import row_kernel_source

    acc = s.epilogue.input_dtypes[s.acc]
    where = placement(s, fix)
    kind = "AIC_ONLY" if fix else "MIX_AIC_1_2"
    a_shape = "(..., K, M)" if s.transpose_a else "(..., M, K)"
    b_shape = "(N, K) or (..., N, K)" if s.transpose_b else "(K, N) or (..., K, N)"
    L = [f'"""{name}: {kind} kernel generated by fusekit.gen ({variant}).\n',
         f"Expression: {expression}",
         f"Product: {s.a} {a_shape} x {s.b} {b_shape} of {in_dtype}, accumulated in {acc} in L0C (Mmad.md 表7).",
         "Epilogue, where each step runs and why:"] + [f"  - {w}" for w in where] + [
         "This file is what fusekit runs: edit it and run it with fusekit.simulate.", '"""\n',
         "from fusekit import asc", "from fusekit.pyasc.shim import config\n\n"]
    mix = fix is None
    l0c = ACC[in_dtype]
    work = fix or FixStage(FIXPIPE_MODES[(l0c, acc)], False, acc)  # a mix kernel's workspace: NoQuant or a cast
    L += _aic_share(in_dtype, l0c, s.transpose_a, s.transpose_b, work, s.bias and bias_dtype, 1 + len(s.more), mix,
                    l0c_bytes, s.conv is not None)
    geom = ", GEOM" if s.conv else ""
    extra_gms, _ = _share_params(s.bias, fix)
    bs = [b for b, _ in s.more]
    gm_names = [s.a, s.b] + bs + [s.bias if g == "bias_gm" else f"{fix.scale}_words" for g in extra_gms]
    dims = "ROWS: int, ROWS_PER_CORE: int, COLS_PER_CORE: int, M: int, N: int, K: int, B_STRIDE: int"
    base = "BASE_M: asc.ConstExpr[int], BASE_N: asc.ConstExpr[int], BASE_K: asc.ConstExpr[int]" + (
        ", GEOM: asc.ConstExpr[tuple]" if s.conv else "")
    products = "".join(f"{b}_gm, c_gm_{p + 1}, " for p, b in enumerate(bs))
    passed = products + "".join(f"{x}_gm, " for x in gm_names[2 + len(bs):])
    share = ["        # AIC i: row share i % bands of column slab i // bands (plan, CubeOp._slab): the AICs of one slab are",
             "        # consecutive, their GM offsets equally spaced (a lockstep group's cores stay one group)",
             "        bands = (ROWS + ROWS_PER_CORE - 1) // ROWS_PER_CORE",
             "        row0 = asc.get_block_idx() % bands * ROWS_PER_CORE",
             "        col0 = asc.get_block_idx() // bands * COLS_PER_CORE",
             f"        aic_share({s.a}_gm, {s.b}_gm, c_gm, {passed}row0, min(row0 + ROWS_PER_CORE, ROWS), col0,",
             f"                  min(col0 + COLS_PER_CORE, N), M, N, K, B_STRIDE, BASE_M, BASE_N, BASE_K{geom})"]
    gms = [f"    {x}_gm = asc.GlobalTensor()\n    {x}_gm.set_global_buffer({x})" for x in gm_names]
    if fix:
        out = s.epilogue.output_names[0]
        L += ["@asc.jit(kernel_type=config.KernelType.AIC_ONLY)",
              f"def {name}({''.join(f'{x}: asc.GlobalAddress, ' for x in gm_names)}{out}: asc.GlobalAddress, {dims},",
              f"{' ' * (len(name) + 5)}{base}):",
              f'    """One AIC\'s rows of {expression}; the epilogue in Fixpipe: {"; ".join(where)}."""'] + gms + [
              f"    c_gm = asc.GlobalTensor()\n    c_gm.set_global_buffer({out})"] + [x[4:] for x in share]
        return "\n".join(L) + "\n"
    epi_name = f"{name}_epilogue"
    epi_text = row_kernel_source(epi_name, epilogue, expression=s.epilogue.text(), variant=variant, share=True,
                                 bands=True)
    names = list(epilogue.inputs) + list(epilogue.broadcast) + list(epilogue.outputs)
    scalars = "".join(f", {x}: float" for x in epilogue.scalars)
    call_scalars = "".join(f", {x}" for x in epilogue.scalars)
    args = ", ".join(f"{x}: asc.GlobalAddress" for x in gm_names + names)
    fields = "AIV_STEP: int, AIV_COLS: int"
    call = f"{epi_name}({', '.join(names)}, row0, row1 - row0, BASE_M, AIV_STEP, col0, cols, GM_ROW{call_scalars}, " \
           "TILE_ROWS, row_pad, LOG_ROWS, RTMP, BUFFER_NUM)"
    granule = 32 // min(dtypes.as_dtype(t).sizeof() for t in epilogue.gm_dtypes.values())
    works = [s.acc] + [a for _, a in s.more]
    pad = " " * (len(name) + 5)
    L += [epi_text.split('"""', 2)[2].split("\n\n", 1)[1], "",
          "@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)",
          f"def {name}({args},", f"{pad}{dims},", f"{pad}{fields},",
          f"{pad}GM_ROW: int{scalars}, TILE_ROWS: int, LOG_ROWS: int, RTMP: int,",
          f"{pad}BUFFER_NUM: asc.ConstExpr[int], {base}):",
          f'    """One AI Core\'s rows of {expression}: the AIC computes them band by band into the workspace',
          f'    {", ".join(works)} ({acc}), its two AIVs run the epilogue on each band of their halves as it lands."""',
          "    if asc.ascend_is_aic():"] + ["    " + g.replace("\n", "\n    ") for g in gms] + [
          f"        c_gm{'_' + str(p) if p else ''} = asc.GlobalTensor()\n"
          f"        c_gm{'_' + str(p) if p else ''}.set_global_buffer({w})" for p, w in enumerate(works)] + share + [
          "    if asc.ascend_is_aiv():"] + [f"        # {w}" for w in where] + [
          "        # AIV v of 2 x block_dim: half of each band of AIC v // 2 (GetBlockIdx.md), as each band lands,",
          "        # in the AIC's column slab",
          "        aic = asc.get_block_idx() // 2",
          "        bands = (ROWS + ROWS_PER_CORE - 1) // ROWS_PER_CORE",
          "        row0 = aic % bands * ROWS_PER_CORE",
          "        row1 = min(row0 + ROWS_PER_CORE, ROWS)",
          "        col0 = aic // bands * COLS_PER_CORE",
          "        cols = min(COLS_PER_CORE, N - col0)",
          "        if AIV_COLS > 0:  # the two AIVs split the slab's columns (AIV_STEP 0): AIV_COLS each, the odd the rest",
          "            col0 = col0 + asc.get_block_idx() % 2 * AIV_COLS",
          "            cols = min(AIV_COLS, cols - asc.get_block_idx() % 2 * AIV_COLS)",
          f"        row_pad = (cols + {granule - 1}) // {granule} * {granule}  # ROW_PAD of these rows (a narrower "
          "last slab: no UB lanes past its 32 B blocks)",
          "        " + call]
    return "\n".join(L) + "\n"


# -- host


def _operands(s: Split, named: dict):
    """(batch shape, M, N, K, A as (batch, M, K), B as (batch or 1, K, N), whether B is batched) of the inputs; for
    a conv2d: ((N,), Ho x Wo, Cout, K, img2col matrices, the packed weights, False).

    Raises:
        ValueError: operands under 2-D, K that differ, or leading axes of b that are neither none nor a's.
    """
    a, b = named[s.a], named[s.b]
    if s.conv is not None:
        g = conv_geometry(s, a.shape, b.shape, a.dtype.itemsize)
        return ((g["n"],), g["ho"] * g["wo"], g["cout"], g["k"], img2col(a, g, *s.conv), pack_weights(b, g)[None],
                False)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul({s.a}{list(a.shape)}, {s.b}{list(b.shape)}): both operands are 2-D or batched")
    m, ka = a.shape[-1:-3:-1] if s.transpose_a else a.shape[-2:]
    n, kb = b.shape[-2:] if s.transpose_b else b.shape[-1:-3:-1]
    if ka != kb:
        raise ValueError(f"matmul({s.a}{list(a.shape)}, {s.b}{list(b.shape)}): K differs ({ka} and {kb}"
                         + (f"; transpose_a={s.transpose_a}, transpose_b={s.transpose_b}" if s.transpose_a or s.transpose_b else "") + ")")
    lead = a.shape[:-2]
    if b.shape[:-2] not in ((), lead):
        raise ValueError(f"{s.b}{list(b.shape)}: its leading axes must be none (one B for every batch) or {s.a}'s "
                         f"{list(lead)}; other broadcasts are not generated")
    batch = int(np.prod(lead, dtype=np.int64))
    a3 = a.reshape(batch, *a.shape[-2:])
    a3 = a3.transpose(0, 2, 1) if s.transpose_a else a3
    b3 = b.reshape(-1, *b.shape[-2:])
    b3 = b3.transpose(0, 2, 1) if s.transpose_b else b3
    return lead, m, n, ka, a3, b3, b.ndim > 2


def _check_dtypes(s: Split, a, b, spec: SoC, base_n: int, n: int) -> str:
    """The operands' dtype, after the rules of Mmad.md 表7 and of the loads.

    Raises:
        TypeError: a pair Mmad does not take.
        GraphError: a transpose the loads cannot do (the message gives the layout that works).
    """
    from fusekit.asc.cube.mmad import TYPES

    ta, tb = dtypes.from_numpy(a.dtype).name, dtypes.from_numpy(b.dtype).name
    if (ta, tb) not in TYPES:
        listed = ", ".join(f"{x} x {y} -> {TYPES[(x, y)][0]}" for x, y in TYPES)
        raise TypeError(f"matmul of {ta} x {tb}: {spec.name}'s Mmad takes {listed} (Mmad.md 表7)")
    size = dtypes.as_dtype(ta).sizeof()
    if s.transpose_a and size != 2:
        raise GraphError(f"transpose_a with {ta}: only b16 fractals transpose in load_data (LoadData_2D.md, 约束说明); "
                         f"pass {s.a} as (M, K)")
    if size == 1 and not s.transpose_b and (n % 32 or base_n % 32):
        raise GraphError(f"an int8 {s.b} in ND (K x N) with N={n}, base_n={base_n}: its 32 x 32 transposing loads "
                         "need multiples of 32 (LoadData2dTranspose); pass it as (N, K) with transpose_b=True")
    return ta


class CubeOp:
    """The host side of a GeneratedOp holding a matmul: variants, launch, references (module doc)."""

    def __init__(self, op):
        self.op = op
        self._variants: dict = {}
        split(op.graph, op.dtypes[0])  # a graph the cube cannot take fails when the operator is made

    def split(self, dtype: str) -> Split:
        return split(self.op.graph, dtype)

    def epilogue_op(self, s: Split):
        from .op import GeneratedOp

        return GeneratedOp(self.op.fn, self.op.dtypes + ("float32",), name=f"{self.op.name}_epilogue",
                           graph=s.epilogue, row_outputs=self.op.row_outputs)

    def variant(self, dtype: str, in_dtype: str, precision: str, spec: SoC, scalar_inputs=frozenset(),
                row_inputs=frozenset()):
        """The kernel for GM dtype ``dtype``, operands of ``in_dtype``, the epilogue in ``precision``."""
        from .op import Variant
        from .source import load_kernel

        key = (dtype, in_dtype, precision, spec.name, frozenset(scalar_inputs), frozenset(row_inputs))
        if key not in self._variants:
            started = time.perf_counter()
            s, fix = self.placed(dtype, scalar_inputs, row_inputs, precision)
            if fix:
                program = Program([], {}, {}, [], "float32", natural_dtypes(s.epilogue, dtype))
            else:
                names = {n.name for n in s.epilogue.inputs}
                program = lower(s.epilogue, dtype, precision, spec, frozenset(scalar_inputs) & names,
                                frozenset(row_inputs) & names, True, self.op.row_outputs)
            bias_dtype = natural_dtypes(self.op.graph, dtype)[s.bias] if s.bias else None
            text = kernel_source(self.op.name, s, in_dtype, fix, None if fix else program, self.op.graph.text(),
                                 f"{in_dtype} operands, {dtype}, precision {precision}, {spec.name}", bias_dtype,
                                 spec.l0c_bytes)
            kernel, path = load_kernel(self.op.name, text)
            self._variants[key] = (Variant(program, text, path, kernel, time.perf_counter() - started), s, fix)
        return self._variants[key]

    def placed(self, dtype: str, scalar_inputs=frozenset(), row_inputs=frozenset(), precision: str = "fp32") -> tuple:
        """(the split with the bias peeled into Mmad where it can be, its Fixpipe stage or None): where each
        epilogue step runs for inputs whose 0-d / (N,) ones are ``scalar_inputs`` / ``row_inputs``. In
        ``precision`` native the AIVs of a mix kernel read C in the GM dtype (float16 / bfloat16, cast by the
        workspace's Fixpipe with CAST_RINT: half the bytes of float32 both ways, the unfused chain's numerics)."""
        s = peel_bias(self.split(dtype), dtype, frozenset(row_inputs))
        fix = fixpipe_stage(s, frozenset(scalar_inputs), frozenset(row_inputs))
        g = s.epilogue
        if fix is None and precision == "native" and (g.input_dtypes[s.acc], dtype) in FIXPIPE_MODES and \
                dtype != g.input_dtypes[s.acc]:
            accs = [s.acc] + [x for _, x in s.more]
            s = replace(s, epilogue=Graph(g.name, g.inputs, g.attrs, g.outputs, g.output_names,
                                          dict(g.input_dtypes, **{x: dtype for x in accs}), g.defaults))
        return s, fix

    @staticmethod
    def pixel_rows(s: Split, named: dict) -> dict:
        """A conv2d's epilogue inputs, which broadcast to its NHWC result (N, Ho, Wo, Cout), as the product's
        (N, Ho x Wo, Cout) rows: the two pixel axes merged (broadcast to (Ho, Wo) first where only one of them is
        1); a (Cout,) row or one element as it is. Any other operator's inputs as they are."""
        if s.conv is None:
            return named
        g = conv_geometry(s, named[s.a].shape, named[s.b].shape, named[s.a].itemsize)
        out = dict(named)
        for name, x in named.items():
            if name in (s.a, s.b) or x.ndim < 2:
                continue
            x4 = x.reshape((1,) * (4 - x.ndim) + x.shape)
            if x4.shape[1:3] not in ((1, 1), (g["ho"], g["wo"])):
                x4 = np.broadcast_to(x4, (x4.shape[0], g["ho"], g["wo"], x4.shape[3]))
            out[name] = x4.reshape(x4.shape[0], x4.shape[1] * x4.shape[2], x4.shape[3])
        return out

    def layout(self, s: Split, named: dict) -> tuple:
        """(0-d inputs, (N,) inputs) of the epilogue of ``s`` for the operator's inputs ``named`` (a conv2d's:
        :meth:`pixel_rows`).

        Raises:
            ValueError: epilogue inputs that do not broadcast to the product's shape."""
        lead, m, n, *_ = _operands(s, named)
        shape = tuple(lead) + (m, n)
        epi = self.epilogue_op(s)
        accs = {x: np.zeros(shape, np.float32) for x in [s.acc] + [y for _, y in s.more]}
        epi_named = {**accs, **{x.name: named[x.name] for x in s.epilogue.inputs[len(accs):]}}
        got, scalar_inputs, row_inputs = epi._shapes(epi_named)
        if got != shape:
            raise ValueError(f"{self.op.name}: the epilogue's inputs broadcast to {list(got)}, not to the product's "
                             f"{list(shape)}")
        return scalar_inputs, row_inputs

    def resolve_precision(self, precision, dtype, spec) -> str:
        """The epilogue's precision: fp32 by default (it reads a float32 accumulator), else as GeneratedOp's."""
        return self.op.resolve_precision("fp32" if precision is None else precision, dtype, spec)

    def run(self, *arrays, soc=None, core_num=None, buffer_num: int = 2, precision=None, tile_length=None,
            dtype=None, launcher=None, base=None, **kwargs):
        """As :meth:`GeneratedOp.run`; ``core_num`` counts AI Cores (AICs), ``base`` = (BASE_M, BASE_N, BASE_K)
        forces the cube's base block (see :func:`base_sizes`), ``tile_length`` the epilogue's rows per UB tile."""
        from fusekit.asc import launch, overflow

        from .op import GenRun

        spec = get_soc(soc)
        named, attrs = self.op._bind(arrays, kwargs)
        dt = self.op._dtype(named, dtype)
        precision = self.resolve_precision(precision, dt, spec)
        s = self.split(dt)
        named = self.pixel_rows(s, named)
        lead, m, n, k, a3, b3, b_batched = _operands(s, named)
        bm, bn, bk = base_sizes(m, n, k, dtypes.from_numpy(a3.dtype).name, spec, base)
        in_dtype = _check_dtypes(s, a3, b3, spec, bn, n)
        for b, _ in s.more:  # the second B of a gate and up: B's shape and dtype
            if named[b].shape != named[s.b].shape or named[b].dtype != named[s.b].dtype:
                raise ValueError(f"{self.op.name}: {b}{list(named[b].shape)} ({named[b].dtype}) and "
                                 f"{s.b}{list(named[s.b].shape)} ({named[s.b].dtype}) share A in one kernel: give them "
                                 "one shape and dtype")
        shape = tuple(lead) + (m, n)
        scalar_inputs, row_inputs = self.layout(s, named)
        var, s, fix = self.variant(dt, in_dtype, precision, spec, scalar_inputs, row_inputs)
        work = np.zeros(shape, dtypes.as_dtype(s.epilogue.input_dtypes[s.acc]).np)  # the mix kernel's workspace
        epi_named = {s.acc: work, **{y: work for _, y in s.more},
                     **{x.name: named[x.name] for x in s.epilogue.inputs[1 + len(s.more):]}}
        epi = self.epilogue_op(s)
        values = dict(attrs)
        for x in scalar_inputs:
            values[x] = float(np.asarray(named[x]).reshape(-1)[0].astype(np.float64))
        a_gm = np.ascontiguousarray(named[s.a])
        b_gm = np.ascontiguousarray(named[s.b])
        geom, fmap = {}, 0
        if s.conv is not None:  # the maps in NC1HWC0, the weights as the (K, Cout) B; one map in L1 at a time
            g = conv_geometry(s, a_gm.shape, b_gm.shape, a_gm.itemsize)
            a_gm, b_gm, geom, fmap = pack_fmap(a_gm, g), pack_weights(b_gm, g), {"GEOM": g["geom"]}, g["fmap"]
        extra, ints = self._share_args(s, fix, named, values, n)
        # L1: A and B buffers (two each), the conv's map, the whole bias and scale rows (ceil16(N) each)
        rows_l1 = sum(x.nbytes for x in extra)
        need = 2 * (bm + bn) * bk * a_gm.itemsize + fmap * a_gm.itemsize + rows_l1
        if need > spec.l1_bytes:
            raise ValueError(f"{self.op.name}: the base block's buffers ({2 * (bm + bn) * bk * a_gm.itemsize} B), "
                             f"one image's map ({fmap * a_gm.itemsize} B) and the bias / scale rows ({rows_l1} B) need "
                             f"{need} B of L1, more than {spec.name}'s {spec.l1_bytes} (docs/cube.md Data path and "
                             "buffers); a map tiled in rows with halos is not generated: smaller images, N or base sizes")
        tilings = []
        if fix:
            cube = plan(int(np.prod(lead, dtype=np.int64)), m, n, k, b_batched, in_dtype, spec, core_num, (bm, bn, bk),
                        self._aligned_rows(shape, spec, core_num, fix.out),
                        32 // math.gcd(32, dtypes.as_dtype(fix.out).sizeof()))
            out = np.zeros(shape, dtypes.as_dtype(fix.out).np)
            args, kernel_kwargs = (a_gm, b_gm, *extra, out), dict(cube.kernel_args(), **ints, **geom)
            block_dim = cube.block_dim
            outputs = {s.epilogue.output_names[0]: out}
            finish = lambda: outputs  # noqa: E731
        else:
            rows = int(np.prod(shape[:-1], dtype=np.int64))  # at least 16 rows (8 per AIV) per AI Core
            cores = 2 * max(1, min(core_num or spec.cube_cores, -(-rows // 16)))
            rows_plan, row_args, row_kwargs, outs, finish = epi.row_launch(var.program, epi_named, values, shape, spec,
                                                                           cores, buffer_num, tile_length, step=8)
            row_args = list(row_args)
            works = [work] + [np.zeros(shape, work.dtype) for _ in s.more]
            for name, w in zip([s.acc] + [x for _, x in s.more], works):
                row_args[list(var.program.inputs).index(name)] = w.reshape(-1)
            # an AIV's rows of a band: whole 32 B blocks of every output row (no GM block written by both AIVs)
            gm_row = row_kwargs["GM_ROW"]
            step = math.lcm(8, *(32 // math.gcd(gm_row * dtypes.as_dtype(var.program.gm_dtypes[x]).sizeof(), 32)
                                 for x in var.program.outputs))
            cube = plan(int(np.prod(lead, dtype=np.int64)), m, n, k, b_batched, in_dtype, spec, None, (bm, bn, bk),
                        self._shares(rows, spec, core_num, math.lcm(16, 2 * step)))
            band, cols = self._slab(var.program, cube, spec, core_num)
            aiv_cols = 0
            if cols:  # each AI Core a column slab of a band of rows, each AIV half of the slab's columns
                cube = plan(int(np.prod(lead, dtype=np.int64)), m, n, k, b_batched, in_dtype, spec, None,
                            (bm, bn, bk), band)
                aiv_cols = self._halves(var.program, cols, n)
                width, cores = (aiv_cols, cube.block_dim) if aiv_cols else (cols, 2 * cube.block_dim)
                rows_plan, slab = epi.row_geometry(var.program, shape[:-1] + (width,), spec, cores, buffer_num,
                                                   tile_length, step=8)
                row_kwargs.update({x: slab[x] for x in ("TILE_ROWS", "LOG_ROWS", "RTMP")})
                cube = replace(cube, cols_per_core=cols, block_dim=cube.block_dim * -(-n // cols))
                step = 0 if aiv_cols else step
            args = (a_gm, b_gm, *[x for b_name, _ in s.more for x in (np.ascontiguousarray(named[b_name]),)],
                    *extra, *row_args)
            fields = rows_plan.kernel_args()
            kernel_kwargs = dict(cube.kernel_args(), **ints, **{x: v for x, v in row_kwargs.items()
                                                                if x not in fields and x not in ("ROW", "ROW_PAD")},
                                 AIV_STEP=step, AIV_COLS=aiv_cols, **geom)
            block_dim = cube.block_dim
            tilings.append(rows_plan)
        tilings.insert(0, cube)
        started = time.perf_counter()
        launches = []
        if block_dim:
            if launcher is None:
                launches.append(launch(var.kernel, block_dim, args, kernel_kwargs, soc=spec, **kwargs))
            else:
                launches.append(launcher(var.kernel, block_dim, args, kernel_kwargs, spec))
        launches = [r for r in launches if r is not None]
        elapsed = time.perf_counter() - started
        return GenRun(self._nhwc(s, named, finish()), precision, dt, spec, tilings, launches, elapsed,
                      overflow.choose(spec, kwargs.get("overflow")), var)

    @staticmethod
    def _slab(program: Program, cube: CubePlan, spec: SoC, core_num) -> tuple:
        """(rows per AI Core, columns per AI Core) of a mix kernel whose row shares leave AICs idle (small M), or
        (rows_per_core, 0) to keep whole rows: the rows go in bands of BASE_M (B is read once per band, not once
        per AIC: the GM traffic of the plain matmul's tiling, :func:`plan`) and the columns in equal slabs of
        whole BASE_N tiles starting on a 32 B block of every GM tensor of the epilogue; when the epilogue is
        elementwise (a row reduction needs whole rows) and every output row is whole 32 B blocks (the last slab of
        a row and the first of the next are two cores' and share no block)."""
        keep = (cube.rows_per_core, 0)
        budget = max(1, core_num or spec.cube_cores)
        blocks = _block_elements(program)
        # n whole blocks of every GM tensor: no slab or half leaves undefined UB lanes, no output block is two cores'
        if program.reductions or program.row_slots or not spec.data_copy_pad or not cube.block_dim or \
                cube.n <= cube.base_n or cube.n % blocks:
            return keep
        rows = _band_rows(cube.rows_per_core, cube.base_m, cube.rows)
        bands = -(-cube.rows // rows)
        unit = math.lcm(cube.base_n, blocks)
        groups = min(budget // bands, -(-cube.n // unit))
        cols = _up(-(-cube.n // groups), unit) if groups > 1 else cube.n
        return (rows, cols) if cols < cube.n else keep

    @staticmethod
    def _halves(program: Program, cols: int, n: int) -> int:
        """Columns of each AIV in a slab of ``cols`` (0: the two AIVs split each band's rows instead): half the slab
        in whole 32 B blocks of every GM tensor, when the last slab (``n`` columns in all) leaves the odd AIV some.
        Column halves keep the AIVs' GM offsets equally spaced in block order (one lockstep group)."""
        half = _up(-(-cols // 2), _block_elements(program))
        last = n - (-(-n // cols) - 1) * cols
        return half if half < cols and last > half else 0

    @staticmethod
    def _share_args(s: Split, fix: "FixStage | None", named: dict, values: dict, n: int) -> tuple:
        """(the GM arrays after the operands, {DEQ: packed per-tensor scale}) of the kernel (:func:`_share_params`):
        the bias and the per-column scales padded to whole fractal columns (the kernel copies NP = ceil16(N))."""
        gms, _ = _share_params(s.bias, fix)
        padded = _up(n, 16)
        extra = []
        for g in gms:
            if g == "bias_gm":
                row = np.asarray(named[s.bias]).reshape(-1)
            else:
                scale = values[fix.scale] if fix.scale in values else np.asarray(named[fix.scale], np.float32)
                row = pack_scales(np.asarray(scale, np.float32).reshape(-1), fix.out)
            extra.append(np.concatenate([row, np.zeros(padded - row.size, row.dtype)]))
        return extra, {}

    @classmethod
    def _aligned_rows(cls, shape, spec: SoC, core_num, out: str) -> int:
        """Rows per AIC: equal shares, each starting on a 32 B block of the output (no two cores write one block)."""
        rows = int(np.prod(shape[:-1], dtype=np.int64))
        width = shape[-1] * dtypes.as_dtype(out).sizeof()
        return cls._shares(rows, spec, core_num, math.lcm(32 // math.gcd(width, 32) if width else 1, 16))

    @staticmethod
    def _shares(rows: int, spec: SoC, core_num, step: int) -> int:
        """Rows per AIC: equal shares over ``core_num`` (default the SoC's AICs) rounded up to ``step`` rows (whole
        fractal rows, 16, where there are more: a band's Mmads stay full; whole 32 B blocks of the outputs)."""
        cores = max(1, min(core_num or spec.cube_cores, rows))
        return max(min(_up(-(-rows // cores), step), rows), 1)

    # -- references
    def product(self, s: Split, named: dict) -> np.ndarray:
        """C as the cube computes it (fusekit.asc.cube.mmad.product: docs/cube.md Numerics), from 0 or from the bias
        row ``s.bias`` (widened exactly to float32 / int32), in the output shape."""
        from fusekit.asc.cube.mmad import product

        lead, m, n, k, a3, b3, _ = _operands(s, named)
        acc = dtypes.as_dtype(ACC[dtypes.from_numpy(a3.dtype).name]).np
        init = np.zeros((m, n), acc)
        if s.bias is not None:
            init += np.asarray(named[s.bias]).reshape(1, n).astype(acc)
        c = [product(a3[i], b3[i % len(b3)], init) for i in range(len(a3))]
        return np.stack(c).reshape(tuple(lead) + (m, n)) if c else np.zeros(tuple(lead) + (m, n), acc)

    def reference(self, model: str, *arrays, soc=None, precision_dtype=None, overflow_mode=None, overflowed=None,
                  **attrs) -> dict:
        """As :meth:`GeneratedOp.reference`: ``hardware`` / ``fp32`` run the product as the cube does, then the
        Fixpipe's conversion or the epilogue's program; ``exact`` is float64 throughout, rounded once."""
        from fusekit.asc.cube.fixpipe import QuantModes, Scale, convert

        spec = get_soc(soc)
        named, values = self.op._bind(arrays, dict(attrs))
        dt = self.op._dtype(named, precision_dtype)
        s = self.split(dt)
        named = self.pixel_rows(s, named)
        if model == "exact":
            return self._exact(s, named, values, dt, rounded=True)
        if model not in ("hardware", "fp32"):
            raise ValueError(f"unknown reference model {model!r}; use hardware, fp32 or exact")
        precision = "native" if model == "hardware" else "fp32"
        s, fix = self.placed(dt, *self.layout(s, named), precision)
        c = self.product(s, named)
        mode = overflow_mode or spec.overflow_default
        if fix:
            scale = None
            if fix.scale is not None:
                words = pack_scales(np.asarray(values.get(fix.scale, named.get(fix.scale)), np.float32), fix.out)
                scale = Scale(words.reshape(-1) if fix.vector else words.reshape(-1)[0])
            y = convert(c, QuantModes[fix.mode], fix.out, scale, fix.relu, mode == "saturation")
            return self._nhwc(s, named, {s.epilogue.output_names[0]: y})
        cs = [c] + [self.product(replace(s, b=b, more=(), bias=None), named) for b, _ in s.more]
        work = s.epilogue.input_dtypes[s.acc]
        if work != c.dtype.name:  # the workspace's Fixpipe cast (native precision, see placed)
            cs = [convert(x, QuantModes[FIXPIPE_MODES[(c.dtype.name, work)]], work, None, False,
                          mode == "saturation") for x in cs]
        rest = [named[x.name] for x in s.epilogue.inputs[len(cs):]]
        return self._nhwc(s, named, self.epilogue_op(s).reference(model, *cs, *rest, soc=spec, precision_dtype=dt,
                                                                  overflow_mode=mode, overflowed=overflowed,
                                                                  **values))

    def exact(self, *arrays, soc=None, **attrs) -> dict:
        named, values = self.op._bind(arrays, dict(attrs))
        dt = self.op._dtype(named, None)
        s = self.split(dt)
        return self._exact(s, self.pixel_rows(s, named), values, dt, rounded=False)

    def _exact(self, s: Split, named: dict, values: dict, dt: str, rounded: bool) -> dict:
        """float64 A @ B, the epilogue in float64 (fusekit.gen.reference.exact), rounded once to each output's dtype."""
        from fusekit.verify import model as vmodel

        from .reference import exact as exact_model

        lead, m, n, k, a3, b3, _ = _operands(s, named)
        c = np.matmul(a3.astype(np.float64), b3.astype(np.float64)).reshape(tuple(lead) + (m, n))
        shape = c.shape
        flat = {s.acc: c.reshape(-1, n)}
        for b, acc in s.more:
            b3 = _operands(replace(s, b=b, more=()), named)[5]
            flat[acc] = np.matmul(a3.astype(np.float64), b3.astype(np.float64)).reshape(-1, n)
        for x in s.epilogue.inputs[1 + len(s.more):]:
            v = np.asarray(named[x.name])
            if v.size == 1 and v.shape != shape:
                flat[x.name] = np.float64(v.reshape(-1)[0])
                values[x.name] = float(v.reshape(-1)[0])
            else:
                flat[x.name] = np.broadcast_to(v, shape).reshape(-1, n)
        wide = exact_model(s.epilogue, flat, values, n)
        gm = natural_dtypes(self.op.graph, dt)
        out = {}
        for key, v in wide.items():
            v = np.broadcast_to(np.asarray(v, np.float64), (c.size // max(n, 1), n)).reshape(shape)
            if rounded:
                target = dtypes.as_dtype(gm[key])
                v = vmodel("exact").result(v, target.np) if target.name in FLOATS else v.astype(target.np)
            out[key] = v
        return self._nhwc(s, named, out)

    @staticmethod
    def _nhwc(s: Split, named: dict, outputs: dict) -> dict:
        """A conv2d's outputs (N, Ho x Wo, Cout) as (N, Ho, Wo, Cout); others as they are."""
        if s.conv is None:
            return outputs
        g = conv_geometry(s, named[s.a].shape, named[s.b].shape, named[s.a].itemsize)
        return {k: v.reshape(g["n"], g["ho"], g["wo"], g["cout"]) for k, v in outputs.items()}


# -- timing


def predicted_us(op, arrays, soc=None, **options) -> float:
    """The timing model's kernel time (µs) of ``op`` on inputs shaped like ``arrays`` (values not computed)."""
    from fusekit.timing import NO_VALUES, predict

    spec = get_soc(soc)
    result = op.run(*arrays, soc=spec, executor=NO_VALUES, sample_cores=True, **options)
    return sum(predict([r.trace], spec).kernel_time_us for r in result.launches)


def unfused_chain(op, dtype: str) -> list:
    """The unfused chain of a matmul operator: the plain matmuls (AIC_ONLY kernels writing C in its natural dtype;
    two for a gate and up) and, unless the epilogue is a cast or ReLU Fixpipe does on the way out, the epilogue as a
    vector operator reading those C from GM."""
    from .graph import conv2d as _conv2d, matmul as _matmul
    from .op import GeneratedOp

    s = split(op.graph, dtype)
    node = {n.name: n for n in op.graph.inputs}
    chain, mm_dtype = [], None
    for b in [s.b] + [x for x, _ in s.more]:
        a_, b_ = node[s.a], node[b]
        if s.conv is not None:
            out = _conv2d(_sym(a_), _sym(b_), *s.conv).node
        else:
            out = _matmul(_sym(a_), _sym(b_), s.transpose_a, s.transpose_b).node
        product = Graph(f"{op.name}_{'conv2d' if s.conv else 'matmul'}", [a_, b_], [], [out], ("c",),
                        {k: v for k, v in op.graph.input_dtypes.items() if k in (s.a, b)}, {})
        chain.append(GeneratedOp(op.fn, op.dtypes, name=product.name, graph=product))
        mm_dtype = natural_dtypes(product, dtype)["c"]
    fix = fixpipe_stage(s)
    if fix is None or fix.scale is not None:
        epi = s.epilogue
        accs = [s.acc] + [x for _, x in s.more]
        graph = Graph(epi.name, epi.inputs, epi.attrs, epi.outputs, epi.output_names,
                      dict(epi.input_dtypes, **{x: mm_dtype for x in accs}), epi.defaults)
        chain.append(GeneratedOp(op.fn, op.dtypes + ("float32",), name=epi.name, graph=graph))
    return chain


def _sym(node: Node):
    from .graph import Sym

    return Sym(node)


def compare_unfused(op, arrays, soc=None, **options) -> tuple:
    """(fused µs, unfused chain µs) by the timing model for inputs shaped like ``arrays``; ``options`` go to run
    (attributes, precision)."""
    attrs = {k: v for k, v in options.items() if k in op.graph.defaults}
    fused = predicted_us(op, arrays, soc, **options)
    return fused, sum(us for _, us in unfused_times(op, arrays, soc, attrs))


def unfused_times(op, arrays, soc=None, attrs=None) -> list:
    """[(kernel name, predicted µs)] of :func:`unfused_chain` for inputs shaped like ``arrays`` (values not
    computed): each product reads A and its B, the epilogue the products' C in their natural dtype."""
    named, _ = op._bind(arrays, dict(attrs or {}))
    dt = op._dtype(named, None)
    s = split(op.graph, dt)
    chain = unfused_chain(op, dt)
    lead, m, n, *_ = _operands(s, named)
    bs = [s.b] + [x for x, _ in s.more]
    times = [(mm.name, predicted_us(mm, [named[s.a], named[b]], soc)) for mm, b in zip(chain, bs)]
    if len(chain) > len(bs):
        c = np.zeros(tuple(lead) + (m, n), dtypes.as_dtype(natural_dtypes(chain[0].graph, dt)["c"]).np)
        c = CubeOp._nhwc(s, named, {"c": c})["c"]
        rest = [named[x.name] for x in s.epilogue.inputs[len(bs):]]
        fp32 = {"precision": "fp32"} if c.dtype.kind == "i" else {}  # an int32 C: dequantised in float32
        times.append((chain[-1].name, predicted_us(chain[-1], [c] * len(bs) + rest, soc, **fp32, **dict(attrs or {}))))
    return times


def tune(op, arrays, soc=None, cores=None, **options) -> dict:
    """Search the cube's base block (BASE_M 64 / 128, BASE_N 64 / 128 / 256, BASE_K 128 / 256 B of k) and the AI Core count
    with the timing model; returns {"base": (m, n, k), "core_num": c, "us": predicted µs, "tried": count,
    "default_us": the default plan's µs}."""
    spec = get_soc(soc)
    named, _ = op._bind(arrays, {k: v for k, v in options.items() if k in op.graph.defaults})
    s = split(op.graph, op._dtype(named, None))
    lead, m, n, k, a3, *_ = _operands(s, named)
    size = a3.dtype.itemsize
    unit = K_UNIT[size]
    best, tried = None, 0
    counts = cores or sorted({max(1, spec.cube_cores // 2), spec.cube_cores})
    for bm in sorted({min(v, _up(m, 16)) for v in (64, 128)}):
        for bn in sorted({min(v, _up(n, 16)) for v in (64, 128, 256)}):
            for bk in sorted({min(max(v // size, unit), _up(k, unit)) for v in (128, 256)}):
                for c in counts:
                    try:
                        us = predicted_us(op, arrays, spec, base=(bm, bn, bk), core_num=c, **options)
                    except (ValueError, GraphError):  # a base block that does not fit the buffers
                        continue
                    tried += 1
                    if best is None or us < best["us"]:
                        best = {"base": (bm, bn, bk), "core_num": c, "us": us}
    return dict(best or {}, tried=tried, default_us=predicted_us(op, arrays, spec, **options))
