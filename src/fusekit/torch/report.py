"""The fusekit backend's report: what it fused in a model, where in the source, and what it predicts.

One :class:`GroupRecord` per group (fused, or left eager with the reason), per compiled graph
(``forward`` / ``backward`` / ``inference``); the ATen ops that could not join any group, counted by
reason. Times are the timing model's predictions for the NPU (``fusekit.gen.perf.compare``: the
group as one generated kernel against one kernel per primitive, launches included), in
microseconds; ``launch share`` is the fused kernel's launch + scheduling over its time (the seed
article's rule: above half, the kernel is too small to stand alone). Written atomically
(:func:`fusekit.files.write_atomic`) as text, or as JSON when the path ends in ``.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fusekit.files import write_atomic


@dataclass
class GroupRecord:
    """One group of ATen ops.

    Attributes:
        name: the generated operator's name (``torch.ops.fusekit.<name>``), "" if not fused.
        graph: "forward", "backward" or "inference".
        ops: the ATen ops of the group, in graph order.
        sources: "file:line: code" of the model lines the ops come from (FX ``stack_trace``).
        expression: the fusekit.gen expression (``y0 = ...; y1 = ...``).
        inputs, outputs: "shape dtype" per tensor.
        fused: whether the group runs as the generated kernel; reason: why not.
        kernel: the generated pyasc kernel file; project: the CANN project directory (or why not).
        fused_us, unfused_us: predicted NPU time (us) fused and as one kernel per primitive.
        unfused_kernels: that chain's kernel count. launch_share: of the fused time. verify: the
            compile-time check against eager PyTorch (fusekit.verify's summary).
        reused, reused_from: the generated op came from the cache, made for "an identical group" of this
            compile or for "an earlier compile". fallbacks: calls the runtime guard reran eagerly (the
            generated op's output overflowed where eager PyTorch's did not, or refused the call's sizes).
        refusals: {the generator's reason: calls}: calls of a dynamic-shape group whose sizes the generator
            refused at run time (a row longer than UB, ...), run eagerly.
    """

    name: str
    graph: str
    ops: list
    sources: list
    expression: str = ""
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    fused: bool = False
    reason: str = ""
    kernel: str = ""
    project: str = ""
    fused_us: "float | None" = None
    unfused_us: "float | None" = None
    unfused_kernels: int = 0
    launch_share: "float | None" = None
    verify: str = ""
    reused: bool = False
    reused_from: str = ""  # "an identical group" (this compile) or "an earlier compile"
    fallbacks: int = 0     # calls whose output overflowed and were recomputed eagerly (the runtime guard)
    refusals: dict = field(default_factory=dict)  # reason -> calls refused at run time (dynamic shapes), run eagerly

    @property
    def saving_us(self) -> float:
        if self.fused and self.fused_us is not None and self.unfused_us is not None:
            return self.unfused_us - self.fused_us
        return 0.0


@dataclass
class Report:
    """Everything the backend did for one compiled model (see module doc)."""

    soc: str
    precision: str
    groups: list = field(default_factory=list)
    eager: dict = field(default_factory=dict)      # graph -> {reason: count}
    compile_s: dict = field(default_factory=dict)  # graph -> seconds spent in the fusekit backend
    warnings: list = field(default_factory=list)
    traffic: dict = field(default_factory=dict)          # graph -> fusekit.torch.traffic.Traffic
    eager_matmul_us: dict = field(default_factory=dict)  # graph -> (predicted us, count) of its eager products
    dynamic: dict = field(default_factory=dict)          # graph -> its symbolic sizes (["s0", "s1"]; static: absent)

    def saving_us(self, graph: str) -> float:
        """Predicted NPU time saved by the fused groups of ``graph`` per call (us)."""
        return sum(g.saving_us for g in self.groups if g.graph == graph)

    def totals(self, graph: str) -> "tuple[float, float]":
        """(unfused, fused) predicted time of ``graph``'s fused groups (us)."""
        gs = [g for g in self.groups if g.graph == graph and g.fused and g.fused_us is not None]
        return sum(g.unfused_us for g in gs), sum(g.fused_us for g in gs)

    def text(self) -> str:
        lines = [f"fusekit torch.compile report ({self.soc}, precision {self.precision})"]
        for w in self.warnings:
            lines.append(f"warning: {w}")
        for graph in dict.fromkeys([g.graph for g in self.groups] + list(self.eager)):
            gs = [g for g in self.groups if g.graph == graph]
            fused = [g for g in gs if g.fused]
            lines.append("")
            lines.append(f"== {graph} graph: {len(fused)} fused group(s), {len(gs) - len(fused)} left eager"
                         f" (backend time {self.compile_s.get(graph, 0.0):.2f} s)")
            if graph in self.dynamic:
                lines.append(f"  dynamic shapes: sizes {', '.join(self.dynamic[graph])} are symbolic; each group is "
                             "generated once for all their values, which it takes at run time (checked and predicted "
                             "at the example inputs' sizes)")
            for i, g in enumerate(gs):
                lines += _group_lines(i, g)
            unfused, fusedt = self.totals(graph)
            missing = [g for g in fused if g.fused_us is None and g.reason.startswith("no prediction")]
            if fused and unfused:
                lines.append(f"  predicted NPU time of the fused groups: {unfused:.2f} us unfused -> {fusedt:.2f} us "
                             f"fused, saving {unfused - fusedt:.2f} us per call ({unfused / fusedt:.2f}x)"
                             + (f"; {len(missing)} fused group(s) without a prediction not counted" if missing else ""))
            elif missing:
                lines.append(f"  predicted NPU time: none; {len(missing)} fused group(s) without a prediction")
            lines += self._totals(graph)
            eager = self.eager.get(graph, {})
            if eager:
                lines.append("  ops left to eager PyTorch:")
                for reason, count in sorted(eager.items(), key=lambda kv: -kv[1]):
                    lines.append(f"    {count:3d} x {reason}")
        return "\n".join(lines) + "\n"

    def npu_us(self, graph: str) -> "float | None":
        """Predicted NPU time (us) of ``graph``'s fused groups plus its products left eager (each a plain matmul
        kernel); None without predictions. The other eager ops are not predicted."""
        gs = [g for g in self.groups if g.graph == graph and g.fused and g.fused_us is not None]
        mm = self.eager_matmul_us.get(graph)
        if not gs and mm is None:
            return None
        return sum(g.fused_us for g in gs) + (mm[0] if mm else 0.0)

    def _totals(self, graph: str) -> list:
        lines = []
        t = self.traffic.get(graph)
        if t is not None and t.flops:
            flops, gm = t.share()
            lines.append(f"  in fused kernels: {flops:.0%} of the graph's FLOPs ({t.fused_flops:,} of {t.flops:,}), "
                         f"{gm:.0%} of its GM bytes ({t.fused_gm_bytes:,} of {t.gm_bytes:,}; matmul 2MNK, others one "
                         "per output element; GM bytes read + written per kernel)")
        total = self.npu_us(graph)
        if total is not None:
            mm = self.eager_matmul_us.get(graph, (0.0, 0))
            with_mm = sum(1 for g in self.groups if g.graph == graph and g.fused and
                          any(o.startswith("fusekit_") for o in g.ops))
            lines.append(f"  predicted NPU time, matmuls included: {total:.2f} us ({with_mm} fused group(s) with a "
                         f"matmul; {mm[1]} eager matmul(s) as plain cube kernels: {mm[0]:.2f} us; the other eager "
                         "ops not predicted)")
        return lines

    def to_json(self) -> dict:
        return {"soc": self.soc, "precision": self.precision, "warnings": self.warnings,
                "traffic": {k: dict(asdict(v), flops_share=v.share()[0], gm_bytes_share=v.share()[1])
                            for k, v in self.traffic.items()},
                "npu_us": {g: self.npu_us(g) for g in dict.fromkeys(x.graph for x in self.groups)},
                "eager_matmul_us": self.eager_matmul_us,
                "compile_s": self.compile_s, "eager": self.eager, "dynamic": self.dynamic,
                "saving_us": {g: self.saving_us(g) for g in dict.fromkeys(x.graph for x in self.groups)},
                "groups": [dict(asdict(g), saving_us=g.saving_us) for g in self.groups]}

    def write(self, path) -> None:
        """Write the report to ``path`` atomically (JSON if it ends in .json, else text)."""
        path = Path(path)
        data = json.dumps(self.to_json(), indent=2) + "\n" if path.suffix == ".json" else self.text()
        write_atomic(path, lambda f: f.write(data.encode()))


def _group_lines(i: int, g: GroupRecord) -> list:
    head = f"  [{i}] {g.name or 'not fused'}: {len(g.ops)} ops ({', '.join(g.ops)})"
    lines = [head]
    for s in g.sources:
        lines.append(f"      at {s}")
    if not g.fused:
        lines.append(f"      left eager: {g.reason}")
        if g.expression:
            lines.append(f"      expression: {g.expression}")
        return lines
    lines.append(f"      expression: {g.expression}")
    lines.append(f"      inputs: {', '.join(g.inputs)}  ->  outputs: {', '.join(g.outputs)}")
    if g.fused_us is None and g.reason.startswith("no prediction"):
        lines.append(f"      predicted: none ({g.reason[len('no prediction: '):]})")
    if g.fused_us is not None:
        lines.append(f"      predicted: unfused {g.unfused_us:.2f} us ({g.unfused_kernels} kernels) -> fused "
                     f"{g.fused_us:.2f} us, saving {g.saving_us:.2f} us"
                     + ("" if g.launch_share is None else
                        f"; launch + scheduling {g.launch_share:.0%} of the fused kernel"
                        + (" (over half: the seed article's rule says this kernel is too small to stand alone)"
                           if g.launch_share > 0.5 else "")))
    if g.verify:
        lines.append(f"      check vs eager: {g.verify}")
    if g.kernel:
        lines.append(f"      kernel: {g.kernel}")
    if g.project:
        lines.append(f"      CANN project: {g.project}")
    if g.reused:
        lines.append(f"      (generated op reused from {g.reused_from or 'an identical group'})")
    overflowed = g.fallbacks - sum(g.refusals.values())
    if overflowed:
        lines.append(f"      runtime guard: {overflowed} call(s) overflowed and ran eagerly")
    for reason, calls in g.refusals.items():
        lines.append(f"      runtime guard: {calls} call(s) ran eagerly, sizes the generator refuses: {reason}")
    return lines
