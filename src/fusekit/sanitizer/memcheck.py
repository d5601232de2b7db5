"""memcheck: illegal accesses and frees (the KernelError that stopped the kernel) and cores writing
the same 32-byte GM block (SAN memcheck "multi-core overlapping writes").

The simulator stops a kernel at its first out-of-bounds or misaligned access, partial operand
overlap, UB overflow, leak or bad free, raising KernelError; the sanitizer turns that error into a
finding of the tool msSanitizer would report it under. Two cores writing bytes of one 32-byte
block in the same sync_all epoch is found on the Trace: GM moves in 32 B blocks (AD-API
DataCopy), so the writes of neighbouring cores can clobber each other.
"""

from __future__ import annotations

from collections import defaultdict

from fusekit.asc.runtime import KernelError
from fusekit.asc.trace import Mem, Trace
from fusekit.hb import CoreOrder

from .findings import Finding

BLOCK = 32
TOOL_OF_KIND = {
    "deadlock": "synccheck",
    "unsupported": "api",
    "api": "api",
}


def from_error(error: KernelError) -> Finding:
    """The finding a KernelError stands for."""
    tool = TOOL_OF_KIND.get(error.kind, "memcheck")
    location = (f"{error.file}:{error.line}",) if error.file else ()
    cores = () if error.core is None else (error.core,)
    start, stop = error.byte_range or (0, 0)
    return Finding(tool, error.kind, error.detail, error.mem, error.buffer, start, stop, cores, error.pipes, location,
                   (error.op,), error.tensor)


def block_overlaps(trace: Trace, orders: list[CoreOrder]) -> list[Finding]:
    """Findings for 32-byte GM blocks written by two cores in the same sync_all epoch."""
    spans: dict[tuple[str, int], list] = defaultdict(list)  # (buffer, epoch) -> (first block, last block, core, instr)
    for core, instrs in enumerate(trace.cores):
        for i, instr in enumerate(instrs):
            for acc in instr.writes:
                if acc.mem is Mem.GM and acc.stop > acc.start:
                    spans[(acc.buffer, orders[core].epoch[i])].append(
                        (acc.start // BLOCK, (acc.stop - 1) // BLOCK, core, instr))
    findings: dict[tuple, Finding] = {}
    for (buffer, _), items in spans.items():
        items.sort(key=lambda item: item[0])
        reach: dict[int, tuple] = {}  # core -> its interval reaching furthest so far
        for lo, hi, core, instr in items:
            other = max((r for c, r in reach.items() if c != core), key=lambda r: r[1], default=None)
            if other is not None and other[1] >= lo:
                first = other[3]
                key = (first.where, instr.where)
                if key not in findings:
                    shared = (lo * BLOCK, (min(hi, other[1]) + 1) * BLOCK)
                    findings[key] = Finding(
                        "memcheck", "overlapping block write",
                        f"aiv({first.core}) and aiv({core}) write the same 32-byte GM block(s) of {buffer}: GM moves "
                        "in whole 32 B blocks, so one core's write can clobber the other's. Give each core a range "
                        "that is a multiple of 32 B (align block_length)", "GM", buffer, *shared,
                        (first.core, core), (first.pipe.value, instr.pipe.value), (first.where, instr.where),
                        (first.op, instr.op), buffer)
                else:
                    found = findings[key]
                    found.count += 1
                    found.cores = tuple(sorted(set(found.cores) | {first.core, core}))
            if core not in reach or hi > reach[core][1]:
                reach[core] = (lo, hi, core, instr)
    return list(findings.values())
