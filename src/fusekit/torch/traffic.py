"""Per graph: how much of a model's work and GM traffic the fused kernels carry (the backend's report).

Each ATen op that is a kernel in eager PyTorch (not a view: view, reshape, expand, transpose, ...) counts its
FLOPs -- 2 M N K per matrix product (times the batch), one per output element for the other ops (a
pointwise op or one step of a reduction: the convention of counting an element operation as one FLOP) -- and
its GM bytes: every tensor it reads plus every tensor it writes, once each (an eager kernel reads its operands
from GM and writes its result there). A fused group's FLOPs are its ops' FLOPs; its GM bytes are those of the
one kernel: its inputs and outputs only, the intermediates staying in UB / L0C. Symbolic sizes (dynamic shapes)
count at the example inputs' sizes.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch

from . import matmul as MM
from . import shapes as S

aten = torch.ops.aten
VIEW_OPS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.expand.default, aten.t.default,
            aten.transpose.int, aten.permute.default, aten.unsqueeze.default, aten.squeeze.dim, aten.slice.Tensor,
            aten.select.int, aten.detach.default, aten.alias.default, aten.as_strided.default}


@dataclass
class Traffic:
    """FLOPs and GM bytes of one graph, all of it and the part in fused kernels."""

    flops: int = 0
    fused_flops: int = 0
    gm_bytes: int = 0
    fused_gm_bytes: int = 0

    def share(self) -> "tuple[float, float]":
        """(FLOPs share, GM bytes share) in fused kernels, 0..1."""
        return (self.fused_flops / self.flops if self.flops else 0.0,
                self.fused_gm_bytes / self.gm_bytes if self.gm_bytes else 0.0)


def _tensors(v) -> list:
    vs = v if isinstance(v, (tuple, list)) else (v,)
    return [t for t in vs if isinstance(t, torch.Tensor)]


def _bytes(node) -> int:
    return sum(S.numel_hint(t.shape) * t.element_size() for t in _tensors(node.meta.get("val")))


def is_kernel(node) -> bool:
    """Whether ``node`` runs as a kernel in eager PyTorch (a call, neither a view nor a tuple's getitem)."""
    return node.op == "call_function" and node.target is not operator.getitem and node.target not in VIEW_OPS


def node_flops(node) -> int:
    return MM.flops(node) or sum(S.numel_hint(t.shape) for t in _tensors(node.meta.get("val")))


def measure(graph: torch.fx.Graph, fused_groups: list) -> Traffic:
    """The :class:`Traffic` of ``graph`` (before the groups are replaced) when ``fused_groups`` run fused."""
    fused = set()
    t = Traffic()
    for g in fused_groups:
        members = [n for n in g.nodes if is_kernel(n)]
        fused |= set(g.nodes)
        flops = sum(node_flops(n) for n in members)
        outs = [n for n in g.nodes if any(u not in g.members for u in n.users)]
        ins = {a for n in g.nodes for a in n.all_input_nodes if a not in g.members}
        moved = sum(_bytes(n) for n in ins) + sum(_bytes(n) for n in outs)
        t.flops += flops
        t.fused_flops += flops
        t.gm_bytes += moved
        t.fused_gm_bytes += moved
    for n in graph.nodes:
        if n in fused or not is_kernel(n):
            continue
        t.flops += node_flops(n)
        t.gm_bytes += _bytes(n) + sum(_bytes(a) for a in dict.fromkeys(n.all_input_nodes))
    return t


def eager_matmul_us(graph: torch.fx.Graph, fused_groups: list, soc: str) -> "tuple[float, int]":
    """(predicted µs, count) of the graph's products left eager, each as a plain generated matmul (or conv2d) kernel
    (fusekit.gen.cube.predicted_us on operands of its shapes: AIC_ONLY, C in its dtype through Fixpipe)."""
    import numpy as np

    from fusekit.gen import cube, define_op

    from .backend import _np as _np_dtype

    fused = {n for g in fused_groups for n in g.nodes}
    total, count = 0.0, 0
    for n in graph.nodes:
        if not MM.is_call(n) or n in fused:
            continue
        s = n.target.spec
        a, b = (n.args[0].meta["val"], n.args[1].meta["val"])
        expression, kind = (f"conv2d(a, b, stride={s.stride}, padding={s.padding}, dilation={s.dilation})",
                            "convolution") if MM.is_conv(n) else \
            (f"matmul(a, b, transpose_a={s.transpose_a}, transpose_b={s.transpose_b})", s.kind)
        op = define_op(expression, f"eager_{kind}", dtypes=(str(a.dtype).replace("torch.", ""),))
        arrays = [np.zeros(S.hint(t.shape), _np_dtype(t.dtype)) for t in (a, b)]
        total += cube.predicted_us(op, arrays, soc)
        count += 1
    return total, count
