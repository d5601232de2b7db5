"""Findings and the sanitizer report: grouped text for people, JSON for tools.

A finding names what msSanitizer names (SAN, "Tools we mirror" in ``docs/ascendc-model.md``):
the tool, the kind of error, the memory (GM or UB), the byte range and its size, the core
(``aiv(3)``), the pipes involved and the kernel ``file:line`` of both instructions. Repeats of the
same pair of source lines are merged into one finding with a count.
"""

from __future__ import annotations

import json
import linecache
import os
from dataclasses import asdict, dataclass, field

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck", "api")


@dataclass
class Finding:
    """One problem the sanitizer found.

    Attributes:
        tool: memcheck, racecheck, initcheck, synccheck, or api (a misused call the simulator refused).
        kind: e.g. ``RAW``, ``WAR``, ``WAW``, ``uninitialized read``, ``deadlock``, ``out-of-bounds``.
        message: one sentence saying what happens on the NPU and how to fix it.
        mem, buffer: ``GM`` and the kernel argument name, or ``UB`` and ``UB``; empty if no memory.
        start, stop: byte range ``[start, stop)`` in that buffer.
        cores: block indices involved.
        pipes: pipe names of the two instructions (or one).
        locations: kernel ``file:line`` of the two instructions (or one).
        ops: API names of those instructions.
        tensor: tensor name as the kernel called it, if known.
        count: how many times this pair of source lines was found.
    """

    tool: str
    kind: str
    message: str
    mem: str = ""
    buffer: str = ""
    start: int = 0
    stop: int = 0
    cores: tuple[int, ...] = ()
    pipes: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()
    tensor: str = ""
    count: int = 1

    @property
    def size(self) -> int:
        return self.stop - self.start

    @property
    def key(self) -> tuple:
        """Repeats share tool, kind, pipes, source lines and tensor (whichever buffer or part of it)."""
        return self.tool, self.kind, self.pipes, self.locations, self.tensor.split("[", 1)[0]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["size"] = self.size
        return data


def merge(findings: list[Finding]) -> list[Finding]:
    """One finding per (tool, kind, pipes, source lines), counting repeats, in first-seen order."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        if f.key in merged:
            kept = merged[f.key]
            kept.count += f.count
            kept.cores = tuple(sorted(set(kept.cores) | set(f.cores)))
        else:
            merged[f.key] = f
    return list(merged.values())


@dataclass
class Report:
    """What :func:`fusekit.sanitize` found in one launch.

    Attributes:
        kernel: kernel name.
        block_dim: cores launched.
        findings: merged findings, grouped by tool order.
        error: the KernelError that stopped the kernel, if any (also reported as a finding).
        replay: differences the adversarial replay produced (buffer -> description), if it ran.
        trace: the Trace analysed (of the part that ran, if the kernel stopped).
        notes: what the reader should know about how the kernel was checked.
    """

    kernel: str
    block_dim: int
    findings: list[Finding] = field(default_factory=list)
    error: Exception | None = None
    replay: dict[str, str] | None = None
    trace: object = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def by_tool(self, tool: str) -> list[Finding]:
        return [f for f in self.findings if f.tool == tool]

    def to_json(self) -> str:
        return json.dumps({"kernel": self.kernel, "block_dim": self.block_dim, "ok": self.ok,
                           "findings": [f.to_dict() for f in self.findings], "replay": self.replay,
                           "notes": self.notes}, indent=2)

    def to_text(self) -> str:
        """Findings grouped by tool, each with the kernel source lines involved."""
        notes = [f"note: {note}" for note in self.notes]
        from fusekit.asc.autosync import summary  # syncs placed for LocalTensorAuto (pyasc's insert_sync)
        auto = summary(self.trace)
        notes += ["automatic syncs inserted (LocalTensorAuto):", *auto] if auto else []
        kinds = getattr(self.trace, "kinds", ())
        where = (f"{self.block_dim} AI Core(s) ({len(kinds)} cores)" if kinds else f"{self.block_dim} core(s)")
        if self.ok:
            return "\n".join([f"{self.kernel} on {where}: no findings"] + notes)
        lines = [f"{self.kernel} on {where}: {len(self.findings)} finding(s)"] + notes
        label = self.trace.core_label if self.trace is not None else (lambda core: f"aiv({core})")
        for tool in TOOLS:
            group = self.by_tool(tool)
            if group:
                lines.append(f"{tool}: {len(group)}")
                lines.extend(_describe(f, label) for f in group)
        if self.replay:
            lines.append("race replay (a legal order on the NPU):")
            lines.extend(f"  {name}: {text}" for name, text in self.replay.items())
        return "\n".join(lines)


def _describe(f: Finding, label) -> str:
    where = ""
    if f.mem:
        where = f" {f.mem} {f.buffer if f.mem == 'GM' else ''}".rstrip() + f" bytes [{f.start}, {f.stop}) ({f.size} B)"
    cores = ", ".join(label(c) for c in f.cores)
    pipes = " -> ".join(f"PIPE_{p}" for p in f.pipes)
    times = f", x{f.count}" if f.count > 1 else ""
    tensor = f" ({f.tensor})" if f.tensor and f.tensor != f.buffer else ""
    head = f"  [{f.kind}]{where}{tensor}" + (f" on {cores}" if cores else "") + (f", {pipes}" if pipes else "") + times
    out = [head, f"    {f.message}"]
    for op, loc in zip(f.ops or ("",) * len(f.locations), f.locations):
        out.append(f"    {op:<13} {_short(loc):<28} {_source(loc)}")
    return "\n".join(out)


def _short(location: str) -> str:
    path, _, line = location.rpartition(":")
    return f"{os.path.basename(path)}:{line}"


def _source(location: str) -> str:
    path, _, line = location.rpartition(":")
    return linecache.getline(path, int(line)).strip() if line.isdigit() else ""
