"""Is fusing worth it: the fused kernel's predicted time against the unfused chain, and launch overhead.

The unfused chain runs one generated kernel per primitive of the expression graph (a composite
such as silu counts as one primitive, as a framework's one-op kernel would), each reading its
operands from GM and writing its result back, with its own launch. Approximations for row
reductions: a reduction kernel is timed writing its (N, 1) result broadcast over the rows (more
GM writes than a real one), arithmetic on (N, 1) values as a flat kernel of N elements, and a
consumer reads an (N, 1) operand like a (C,) row (fewer GM reads). Times come from the timing
model (``fusekit.timing.predict``); the kernels run with ``fusekit.timing.NO_VALUES`` and
``sample_cores`` (the Trace only), since the timing does not depend on the values.

The seed article's rule (section 5): when launch and scheduling take more than half of a kernel's
time, the operator is too small to stand alone and should be fused into its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusekit.asc import dtypes
from fusekit.timing import NO_VALUES, predict

from .graph import Graph, Node
from .lower import natural_dtypes, per_row
from .op import GeneratedOp

LAUNCH_SHARE_WARNING = 0.5


@dataclass
class Comparison:
    """Predicted times (us) of the fused kernel and of the unfused chain, and the fused kernel's
    launch + scheduling share.

    Attributes:
        fused_us: the fused kernel, launch overhead included.
        unfused_us: the chain of one kernel per primitive, launches included.
        kernels: the chain's kernels as (primitive, us).
        launch_us: launch overhead of the fused kernel.
        scalar_us: scalar-pipe (issue) time of the fused kernel's slowest core: the scheduling part.
        gm_bytes: GM bytes the fused kernel moves. roofline_us: those bytes at the SoC's GM bandwidth.
        profile: the fused kernel's ``fusekit.timing.Profile`` (its timeline: ``write_trace``, ``plot``,
            ``write_csv``).
    """

    op: str
    n: int
    dtype: str
    soc: str
    fused_us: float
    unfused_us: float
    kernels: list
    launch_us: float
    scalar_us: float
    gm_bytes: int
    roofline_us: float
    profile: object = None

    @property
    def speedup(self) -> float:
        return self.unfused_us / self.fused_us if self.fused_us else float("inf")

    @property
    def launch_share(self) -> float:
        """(launch overhead + scheduling) / fused time."""
        return (self.launch_us + self.scalar_us) / self.fused_us if self.fused_us else 0.0

    @property
    def roofline_fraction(self) -> float:
        """The GM roofline (bytes / peak bandwidth) over the predicted fused time."""
        return self.roofline_us / self.fused_us if self.fused_us else 0.0

    @property
    def warning(self) -> str | None:
        if self.launch_share <= LAUNCH_SHARE_WARNING:
            return None
        return (f"warning: launch and scheduling take {self.launch_share:.0%} of {self.op}'s {self.fused_us:.2f} us at "
                f"n={self.n}: more than half, so fuse this operator into its neighbours instead of launching it alone")

    def table(self) -> str:
        lines = [f"{self.op} at n={self.n} {self.dtype} on {self.soc}: fused {self.fused_us:.2f} us vs unfused chain "
                 f"{self.unfused_us:.2f} us ({len(self.kernels)} kernels): {self.speedup:.2f}x",
                 f"  launch overhead {self.launch_us:.2f} us + scheduling {self.scalar_us:.2f} us = "
                 f"{self.launch_share:.0%} of the fused time; GM roofline {self.roofline_fraction:.0%}"]
        lines += [f"  unfused: {name:<12} {us:8.2f} us" for name, us in self.kernels]
        if self.warning:
            lines.append(self.warning)
        return "\n".join(lines)


def _time(op: GeneratedOp, arrays, attrs, soc, **kw):
    result = op.run(*arrays, soc=soc, executor=NO_VALUES, sample_cores=True, **attrs, **kw)
    return predict([r.trace for r in result.launches], soc), result


def _single(node: Node, dtype_of) -> "tuple[GeneratedOp, list[Node]]":
    """A one-primitive operator for ``node``: its tensor operands become inputs."""
    inputs, args = [], []
    for i, a in enumerate(node.args):
        if a.is_scalar:
            args.append(a)
        else:
            leaf = Node("input", name=f"x{i}")
            inputs.append((leaf, a))
            args.append(leaf)
    out = Node(node.op, tuple(args), dict(node.params))
    attrs = sorted({a.name: a for a in node.args if a.op == "attr"}.values(), key=lambda a: a.name)
    graph = Graph(node.op, [leaf for leaf, _ in inputs], list(attrs), [out], ("y",),
                  {leaf.name: dtype_of(src) for leaf, src in inputs}, {a.name: 0.0 for a in attrs})
    return GeneratedOp(None, ("float16", "float32", "bfloat16"), name=f"unfused_{node.op}", graph=graph,
                       row_outputs=True), [src for _, src in inputs]


def compare(op: GeneratedOp, n: int = 2**20, dtype: str = "float16", *, soc=None, precision: str | None = None,
            attrs: dict | None = None, shapes: dict | None = None, core_num: int | None = None, buffer_num: int = 2,
            tile_length: int | None = None) -> Comparison:
    """Predict ``op`` fused and unfused on ``n`` elements of ``dtype`` (inputs of shape (n,) unless
    ``shapes`` gives one per input name; attributes default to 1.0). ``core_num``: the most AIV cores
    the fused kernel and each unfused kernel may use (default: all of the SoC's); ``buffer_num``: BUFFER_NUM
    of every kernel; ``tile_length``: the fused kernel's (see ``GeneratedOp.run``; the unfused kernels keep
    their own UB-limited tiles).

    Raises:
        GraphError: the expression cannot be generated on the SoC.
    """
    from fusekit.soc import get_soc

    spec = get_soc(soc)
    attrs = {a.name: (attrs or {}).get(a.name, 1.0) for a in op.graph.attrs}
    gm = natural_dtypes(op.graph, dtype)
    arrays = [np.zeros((shapes or {}).get(node.name, (n,)), dtypes.as_dtype(gm[node.name]).np)
              for node in op.graph.inputs]
    fused, run = _time(op, arrays, attrs, spec, precision=precision, core_num=core_num, buffer_num=buffer_num,
                       tile_length=tile_length)
    precision = run.precision
    out_shape = np.broadcast_shapes(*(a.shape for a in arrays)) if op.cube is None else None
    if op.cube is not None:  # a matmul operator: its unfused chain is the plain matmul(s), then the epilogue
        from .cube import unfused_times

        return _comparison(op, fused, unfused_times(op, arrays, spec, attrs), dtype, spec,
                           int(np.prod(next(iter(run.outputs.values())).shape)))
    memo = {}

    def dtype_of(node):
        if node.op == "input":
            return gm[node.name]
        if node.op == "cast":
            return node.params["dtype"]
        kinds = [dtype_of(a) for a in node.args if not a.is_scalar]
        return kinds[0] if kinds else dtype

    names = [i.name for i in op.graph.inputs]
    chain = []
    for node in op.graph.nodes():
        if node.op in ("input", "attr", "const") or node.is_scalar:
            continue
        single, sources = _single(node, dtype_of)
        ins = []
        for s in sources:
            if s.op == "input":
                shape = arrays[names.index(s.name)].shape
            elif per_row(s):  # an (N, 1) intermediate: N values; read like a (C,) row by its consumer
                shape = (int(np.prod(out_shape[:-1])),) if per_row(node) and node.op not in ("sum", "mean", "max",
                                                                                               "min") else out_shape[-1:]
            else:
                shape = out_shape
            ins.append(np.zeros(shape, dtypes.as_dtype(dtype_of(s)).np))
        key = (node.op, tuple(x.shape for x in ins))
        first = dtype_of(sources[0]) if sources else dtype
        if key not in memo:
            memo[key] = _time(single, ins, {a.name: 1.0 for a in single.graph.attrs}, spec, precision=precision,
                              core_num=core_num, buffer_num=buffer_num,
                              dtype=first if first in ("float16", "float32", "bfloat16") else dtype)[0].kernel_time_us
        chain.append((node.op, memo[key]))
    return _comparison(op, fused, chain, dtype, spec, int(np.prod(out_shape)))


def _comparison(op: GeneratedOp, fused, chain: list, dtype: str, spec, n: int) -> Comparison:
    """The Comparison of the fused Profile ``fused`` and the unfused ``chain`` [(kernel, µs)]; the scheduling time
    is the busiest core's scalar time (AIV or, in an AIC kernel, AIC)."""
    rows = fused.utilization()
    scalar = max((r.get("aiv_scalar_time(us)", r.get("aic_scalar_time(us)", 0.0)) for r in rows), default=0.0)
    launch_us = sum(s.overhead_us for s in fused.launches)
    roofline = fused.gm_bytes / (fused.params.gm_bandwidth_gbps * 1e3)
    return Comparison(op.name, n, dtype, spec.name, fused.kernel_time_us, sum(us for _, us in chain), chain,
                      launch_us, scalar, fused.gm_bytes, roofline, fused)
