"""ATen's matrix products as one graph node the partitioner can fuse with its epilogue.

AOTAutograd spells ``nn.Linear`` on a (B, S, K) input as ``view(addmm(bias, view(x, [B*S, K]), t(w)), [B, S, N])``
and ``q @ k.transpose(-1, -2)`` as ``view(bmm(view(expand(q)), view(expand(transpose(k)))), [1, H, S, S])``.
:func:`canonicalize` rewrites each ``mm`` / ``addmm`` / ``bmm`` / ``baddbmm`` (``linear`` and ``matmul`` reach the
graph as these) into one call of a :class:`MatmulCall`, whose operands are the tensors before those views:

- a ``t`` / ``transpose`` of the last two axes becomes ``transpose_b`` (any float) or ``transpose_a`` (float16 and
  bfloat16 only: load_data transposes b16 fractals only, LoadData_2D.md 约束说明, as ``fusekit.gen.cube`` checks);
- an ``expand`` to its operand's own shape is dropped;
- a ``view`` folding leading axes into rows, when the product's only use is the ``view`` unfolding them again, is
  dropped on both sides: the generator multiplies a batched ``a`` by a 2-D ``b`` (one B for every batch) or by a ``b``
  of ``a``'s leading axes, so the product has the shape the epilogue sees.

The call runs the original ATen op eagerly (same op, same operands up to the views it re-applies: the same answer),
so a group the generator refuses stays exactly as eager PyTorch. In a fused group it is ``fusekit.matmul`` times
``alpha`` plus ``beta`` times the bias (ATen's addmm formula; beta = 0 ignores the bias, NaN included, as ATen does).
With beta = 0 the call is the plain product times alpha (ATen reads no bias). Products with K = 0 (ATen gives
``beta * bias`` or zeros) stay eager: the cube's tiling needs K >= 1. ``torch._int_mm`` (int8 x int8 -> int32, the
product of a W8A8 quantised linear) is a product too: its epilogue (the int32 -> float cast, the per-channel and
per-token scales) joins it, and Fixpipe or the AIVs dequantise.

A 2-D ``convolution`` (not transposed, one group, static sizes) becomes a :class:`ConvCall` on (x, w[, bias]):
``fusekit.conv2d`` lowered through img2col, whose kernel writes NHWC (a row per pixel, the channels along it). The
graph keeps ATen's NCHW: the fused call lays its epilogue inputs out channels-last and its outputs back
(:func:`channels_last`, :func:`channels_first`), and a reduction after a convolution stays eager (the kernel's rows
are pixels, not NCHW's last axis).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from . import shapes as S

aten = torch.ops.aten
PRODUCTS = {aten.mm.default: "mm", aten.addmm.default: "addmm", aten.bmm.default: "bmm",
            aten.baddbmm.default: "baddbmm", aten._int_mm.default: "_int_mm"}  # _int_mm: int8 x int8 -> int32
_FOLDS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
_B16 = (torch.float16, torch.bfloat16)


def _val(n):
    return n.meta.get("val") if isinstance(n, torch.fx.Node) else None


def _shape(n) -> tuple:
    """The shape as a key (fusekit.torch.shapes: symbolic sizes compare by structure, without guards)."""
    return S.key(_val(n).shape)


@dataclass(frozen=True)
class MatmulSpec:
    """What one product computes: ``kind`` (the ATen op), transposes, alpha / beta, and the ranks the ATen op
    takes its operands in (``fold_a`` / ``fold_b``: the leading axes folded into one, down to that rank; None when
    the operand is passed as it is) and whether its result's leading axes are unfolded again (``unfold``: a's).
    Ranks, not sizes: the call folds whatever sizes it is given (a graph with dynamic shapes is compiled once)."""

    kind: str
    transpose_a: bool
    transpose_b: bool
    alpha: float
    beta: float
    fold_a: "int | None"
    fold_b: "int | None"
    unfold: bool = False

    @property
    def has_bias(self) -> bool:
        return self.kind in ("addmm", "baddbmm")


class MatmulCall:
    """A graph node's target: the product of ``spec`` on (a, b[, bias]), run as the original ATen op."""

    def __init__(self, spec: MatmulSpec):
        self.spec = spec
        self.__name__ = self.__qualname__ = f"fusekit_{spec.kind}"

    def __call__(self, a, b, bias=None):
        s = self.spec
        given = a
        a = a.transpose(-1, -2) if s.transpose_a else a
        b = b.transpose(-1, -2) if s.transpose_b else b
        a = _fold(a, s.fold_a) if s.fold_a else a
        b = _fold(b, s.fold_b) if s.fold_b else b
        op = getattr(aten, s.kind).default
        out = op(bias, a, b, beta=s.beta, alpha=s.alpha) if s.has_bias else op(a, b)
        if not s.has_bias and s.alpha != 1:  # addmm(..., beta=0, alpha) rewritten as alpha * mm
            out = out * s.alpha
        if not s.unfold:
            return out
        # a's leading axes back: (L..., M) rows of mm, or the L... batch of bmm
        lead = tuple(given.shape[:-1]) if s.kind in ("mm", "addmm") else tuple(given.shape[:-2]) + (out.shape[-2],)
        return out.view(lead + (out.shape[-1],))

    def __repr__(self) -> str:
        return self.__name__


def _fold(x: torch.Tensor, rank: int) -> torch.Tensor:
    """``x`` with its leading axes folded into one, to ``rank`` axes: (L..., [M,] K) -> (prod L, [M,] K)."""
    return x.reshape((-1,) + tuple(x.shape[x.dim() - rank + 1:]))


@dataclass(frozen=True)
class ConvSpec:
    """A 2-D convolution's stride, padding and dilation ((height, width) each) and whether it adds a bias."""

    stride: tuple
    padding: tuple
    dilation: tuple
    has_bias: bool


class ConvCall:
    """A graph node's target: the convolution of ``spec`` on (x, w[, bias]), run as ATen's ``convolution``."""

    def __init__(self, spec: ConvSpec):
        self.spec = spec
        self.__name__ = self.__qualname__ = "fusekit_convolution"

    def __call__(self, x, w, bias=None):
        s = self.spec
        return aten.convolution.default(x, w, bias, list(s.stride), list(s.padding), list(s.dilation), False,
                                        [0, 0], 1)

    def __repr__(self) -> str:
        return self.__name__


def is_call(node) -> bool:
    """A product node of the rewritten graph (a MatmulCall or a ConvCall)."""
    return isinstance(node, torch.fx.Node) and isinstance(node.target, (MatmulCall, ConvCall))


def is_conv(node) -> bool:
    return isinstance(node, torch.fx.Node) and isinstance(node.target, ConvCall)


def channels_last(x):
    """An NCHW epilogue operand of a convolution (a tensor or numpy array broadcasting to (N, C, H, W)) as the NHWC
    kernel takes it: one element as it is, else its axes padded to four and permuted to (N, H, W, C) (a (1, C, 1, 1)
    per-channel tensor becomes a (1, 1, 1, C) row)."""
    if x.ndim == 0 or math.prod(x.shape) == 1:
        return x
    x = x.reshape((1,) * (4 - x.ndim) + tuple(x.shape))
    return x.permute(0, 2, 3, 1) if isinstance(x, torch.Tensor) else x.transpose(0, 2, 3, 1)


def channels_first(y: torch.Tensor) -> torch.Tensor:
    """A convolution kernel's NHWC output as ATen's contiguous NCHW."""
    return y.permute(0, 3, 1, 2).contiguous()


def flops(node) -> int:
    """2 M N K per product (times the batch) of a product node (an ATen product or a MatmulCall; a convolution:
    2 x output elements x Cin x kh x kw), else 0; symbolic sizes at the example inputs' (fusekit.torch.shapes.hint)."""
    if is_conv(node) or (node.op == "call_function" and node.target is aten.convolution.default):
        return 2 * S.numel_hint(_val(node).shape) * S.numel_hint(_val(node.args[1]).shape[1:])
    if is_call(node):
        s = node.target.spec
        k = S.hint(_val(node.args[0]).shape)[-2 if s.transpose_a else -1]
        return 2 * S.numel_hint(_val(node).shape) * k
    if node.op == "call_function" and node.target in PRODUCTS:
        a = node.args[1] if PRODUCTS[node.target] in ("addmm", "baddbmm") else node.args[0]
        return 2 * S.numel_hint(_val(node).shape) * S.hint(_val(a).shape)[-1]
    return 0


def _peel_transpose(n):
    """(source, True) when ``n`` swaps the last two axes of its operand (t, transpose, permute), else (n, False)."""
    if n.op != "call_function":
        return n, False
    rank = len(_shape(n))
    if n.target is aten.t.default and rank == 2:
        return n.args[0], True
    if n.target is aten.transpose.int and rank >= 2 and {d % rank for d in n.args[1:3]} == {rank - 2, rank - 1}:
        return n.args[0], True
    if n.target is aten.permute.default and list(n.args[1]) and \
            [d % rank for d in n.args[1]] == list(range(rank - 2)) + [rank - 1, rank - 2]:
        return n.args[0], True
    return n, False


def _peel_expand(n):
    while n.op == "call_function" and n.target is aten.expand.default and _shape(n.args[0]) == _shape(n):
        n = n.args[0]
    return n


def _operand(n, may_transpose: bool, fold_ok: bool = True):
    """(node, transposed, fold): ``n`` with a no-op expand, a leading-axes fold (``fold``: the folded shape; only when
    ``fold_ok``) and a transpose of the last two axes (only when ``may_transpose``) peeled off (module doc)."""
    fold = None
    inner = _peel_expand(n)
    if fold_ok and inner.op == "call_function" and inner.target in _FOLDS:
        src = _peel_expand(inner.args[0])
        s, f = _shape(src), _shape(inner)
        if len(f) >= 2 and len(s) >= len(f) and s[len(s) - len(f) + 1:] == f[1:] and S.numel(s) == S.numel(f):
            fold, inner = f, src  # (L..., [M,] K) folded to (prod L, [M,] K): the leading axes only
    src, t = _peel_transpose(inner)
    if t and may_transpose:
        return src, True, fold
    return inner, False, fold


def _unfold_target(node):
    """The view unfolding the product's rows when it is the product's only use, else None."""
    users = list(node.users)
    if len(users) == 1 and users[0].op == "call_function" and users[0].target in _FOLDS:
        return users[0]
    return None


def _rewrite(graph: torch.fx.Graph, node) -> "str | None":
    """Replace ``node`` (an ATen product) by a MatmulCall; the reason it stays as it is, or None."""
    kind = PRODUCTS[node.target]
    bias, a, b = (node.args[0], node.args[1], node.args[2]) if kind in ("addmm", "baddbmm") else (None, *node.args[:2])
    alpha = float(node.kwargs.get("alpha", 1))
    beta = float(node.kwargs.get("beta", 1))
    if bias is not None and beta == 0:  # ATen ignores the bias (NaN included): the plain product, times alpha
        kind, bias = {"addmm": "mm", "baddbmm": "bmm"}[kind], None
    out = _val(node)
    if not isinstance(out, torch.Tensor):
        return None
    if out.dtype not in (torch.float16, torch.bfloat16, torch.float32) and kind != "_int_mm":
        return None
    if _shape(a)[-1] == 0:
        return f"{kind} with K = 0 (the result is beta * bias or zeros): the cube's tiling needs K >= 1"
    b16 = out.dtype in _B16
    ax, ta, fa = _operand(a, b16)
    bx, tb, fb = _operand(b, True)
    view = _unfold_target(node)
    folded = _shape(node)
    result = folded
    unfold = fa is not None and view is not None and (bias is None or _val(bias).dim() <= 1 or
                                                      _shape(bias)[:-1] in ((), (1,)))
    if unfold:
        lead = _shape(ax)[:-2]
        # a is (L..., M, K) with L folded into mm's rows or bmm's batch; b unbatched (mm) or batched alike (bmm)
        want = lead + (_shape(ax)[-1 if ta else -2], folded[-1])
        b_lead = _shape(bx)[:-2]
        if kind in ("mm", "addmm") and fb is None and _shape(view) == _shape(ax)[:-1] + (folded[-1],) and not ta:
            result = _shape(view)
        elif kind in ("bmm", "baddbmm") and fb is not None and b_lead == lead and _shape(view) == want:
            result = _shape(view)
        else:
            unfold = False
    if not unfold:  # the operands in the shapes the ATen op takes (only a transpose and a no-op expand peeled)
        ax, ta, fa = _operand(a, b16, fold_ok=False)
        bx, tb, fb = _operand(b, True, fold_ok=False)
    spec = MatmulSpec(kind, ta, tb, alpha, beta, fa and len(fa), fb and len(fb), result != folded)
    target = MatmulCall(spec)
    replaced = view if result != folded else node
    with graph.inserting_before(replaced):
        args = (ax, bx) + ((bias,) if spec.has_bias else ())
        call = graph.call_function(target, args)
    call.meta.update({k: v for k, v in replaced.meta.items() if k != "val"})
    call.meta["val"] = _val(replaced)
    replaced.replace_all_uses_with(call)
    for n in (replaced, node) if replaced is not node else (node,):
        if not n.users:
            graph.erase_node(n)
    _drop_dead(graph, [a, b])
    return None


def _drop_dead(graph, nodes) -> None:
    """Erase the views that fed only the rewritten product (now unused)."""
    todo = [n for n in nodes if isinstance(n, torch.fx.Node)]
    while todo:
        n = todo.pop()
        if n.op == "call_function" and not n.users and n.target in _VIEWS:
            todo += [a for a in n.all_input_nodes]
            graph.erase_node(n)


_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.expand.default, aten.t.default,
          aten.transpose.int, aten.permute.default)


def _rewrite_conv(graph: torch.fx.Graph, node) -> "str | None":
    """Replace ``node`` (ATen's convolution) by a ConvCall; the reason it stays as it is, or None."""
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = node.args
    out = _val(node)
    if not isinstance(out, torch.Tensor) or out.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        return None
    why = [w for w, bad in ((f"{out.dim() - 2}-D", out.dim() != 4), ("transposed", transposed),
                            (f"groups={groups}", groups != 1)) if bad]
    if why:
        return f"a {', '.join(why)} convolution: the generated conv2d is a 2-D cross-correlation of one group"
    if not all(S.is_static(_val(n).shape) for n in (x, w, node)):
        return "convolution with symbolic sizes: the img2col geometry is generated for static sizes"
    spec = ConvSpec(tuple(stride), tuple(padding), tuple(dilation), bias is not None)
    with graph.inserting_before(node):
        call = graph.call_function(ConvCall(spec), (x, w) + ((bias,) if bias is not None else ()))
    call.meta.update(node.meta)
    node.replace_all_uses_with(call)
    graph.erase_node(node)
    return None


def canonicalize(graph: torch.fx.Graph) -> dict:
    """Rewrite every float matrix product and 2-D convolution of ``graph`` in place (module doc); returns
    {node: reason} for those left as ATen ops."""
    kept: dict = {}
    for node in [n for n in graph.nodes if n.op == "call_function" and
                 (n.target in PRODUCTS or n.target is aten.convolution.default)]:
        reason = (_rewrite_conv if node.target is aten.convolution.default else _rewrite)(graph, node)
        if reason:
            kept[node] = reason
    return kept

