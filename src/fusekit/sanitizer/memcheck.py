"""memcheck: illegal accesses and frees (KernelErrors), cores writing the same 32-byte GM block
(SAN memcheck "multi-core overlapping writes"), and UB tensors placed on overlapping bytes.

A plain launch stops a kernel at its first out-of-bounds or misaligned access, partial operand
overlap, UB overflow, leak or bad free, raising KernelError. Under the sanitizer the access faults
are collected and the kernel goes on (``fusekit.asc.runtime.Core.fault``), so every one becomes a
finding, as msSanitizer reports each illegal access; the sanitizer turns each error into a finding
of the tool msSanitizer would report it under. Two cores writing bytes of one 32-byte
block in the same sync_all epoch is found on the Trace: GM moves in 32 B blocks (AD-API
DataCopy), so the writes of neighbouring cores can clobber each other.
"""

from __future__ import annotations

from collections import defaultdict

from fusekit.asc.runtime import KernelError
from fusekit.asc.trace import Trace
from fusekit.hb import CoreOrder, before_across

from .findings import Finding

BLOCK = 32


def from_error(error: KernelError) -> Finding:
    """The finding a KernelError stands for."""
    tool = error.kind.tool  # each ErrorKind names its tool (fusekit.asc.errorkind)
    location = (f"{error.file}:{error.line}",) if error.file else ()
    cores = () if error.core is None else (error.core,)
    start, stop = error.byte_range or (0, 0)
    return Finding(tool, error.kind.value, error.detail, error.mem, error.buffer, start, stop, cores, error.pipes, location,
                   (error.op,), error.tensor)


def placement_overlaps(trace: Trace, orders: list[CoreOrder]) -> list[Finding]:
    """Findings for two tensors (placements) of one core's local space (the UB) that share bytes while both are
    in use.

    TPipe gives every queue and TBuf buffer its own UB range (AD-G TPipe-TQue框架编程原理.md), so
    overlaps come from hand-placed ``LocalTensor(dtype, pos, addr, tile_size)``. A placement is the
    tensor a kernel made (sub-tensors ``t[k:]`` and casts belong to it); it is in use from its first
    access to its last, in program order. Two placements whose uses interleave and whose accessed
    bytes intersect hold their data in the same memory: whichever is written last destroys the other's
    (the lost value of ``scan``, or worse, the order of the writes decides the result). Every local space
    (``MemSpace.is_local``) is checked on its own: the same address in two spaces is two arenas.
    """
    findings = []
    for core, instrs in enumerate(trace.cores):
        by_space: dict = {}  # local space -> placement -> [first index, last index, byte ranges]
        for i, instr in enumerate(instrs):
            if orders[core].hung[i]:
                continue
            for acc in instr.reads + instr.writes + instr.undefined:
                if acc.mem.is_local and acc.stop > acc.start:
                    use = by_space.setdefault(acc.mem, {}).setdefault(_placement(acc.tensor), [i, i, []])
                    use[1] = i
                    use[2].append((acc.start, acc.stop))
        for space, uses in by_space.items():
            findings += _space_overlaps(trace, core, space.name, uses)
    return findings


def _space_overlaps(trace: Trace, core: int, space: str, uses: dict) -> list[Finding]:
    """The overlapping placements among one core's ``uses`` of local space ``space``."""
    findings = []
    names = sorted(uses, key=lambda name: uses[name][0])
    spans = {name: _merge(uses[name][2]) for name in names}
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            if uses[b][0] > uses[a][1]:
                continue  # b is first used after a's last use: the memory is reused, not shared
            shared = _intersect(spans[a], spans[b])
            if shared:
                findings.append(_overlap_finding(trace, core, space, a, b, uses, shared))
    return findings


def _placement(tensor: str) -> str:
    """The placement a tensor name belongs to: ``UB@0[16:]`` -> ``UB@0``, ``q_x[1][8:]`` -> ``q_x``."""
    return tensor.split("[", 1)[0]


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, stop in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], stop)
        else:
            out.append([start, stop])
    return [(a, b) for a, b in out]


def _intersect(xs: list[tuple[int, int]], ys: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, i, j = [], 0, 0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if lo < hi:
            out.append((lo, hi))
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


def _overlap_finding(trace: Trace, core: int, space: str, a: str, b: str, uses: dict, shared: list) -> Finding:
    first_a, first_b = trace.cores[core][uses[a][0]], trace.cores[core][uses[b][0]]
    total = sum(hi - lo for lo, hi in shared)
    return Finding("memcheck", "overlapping placements",
                   f"{a} and {b} share {total} B of {space} while both are in use (from {first_a.op} at "
                   f"{first_a.where} and {first_b.op} at {first_b.where} to their last uses): what one writes "
                   f"overwrites the other's data. Give each hand-placed LocalTensor its own {space} range (address + "
                   "tile_size * sizeof(dtype) must not reach the next one), or let a TPipe place the buffers",
                   space, space, shared[0][0], shared[-1][1], (core,), (first_a.pipe.value, first_b.pipe.value),
                   (first_a.where, first_b.where), (first_a.op, first_b.op), f"{a} / {b}")


def _flag_ordered(orders: list[CoreOrder], a, b) -> bool:
    """Two cores' whole-block writes ordered by a GM-flag wait (ib_wait, wait_pre_block: hb rule 6): the later one
    rewrites the blocks on purpose (e.g. a block-ordered accumulation); a partial block could still be clobbered."""
    whole = all(w.start % BLOCK == 0 and w.stop % BLOCK == 0 for i in (a, b) for w in i.writes if w.mem.is_global)
    return whole and (before_across(orders, (a.core, a.seq), (b.core, b.seq)) or
                      before_across(orders, (b.core, b.seq), (a.core, a.seq)))


def block_overlaps(trace: Trace, orders: list[CoreOrder]) -> list[Finding]:
    """Findings for 32-byte GM blocks written by two cores in the same sync_all epoch."""
    spans: dict[tuple[str, int], list] = defaultdict(list)  # (buffer, epoch) -> (first block, last block, core, instr)
    for core, instrs in enumerate(trace.cores):
        for i, instr in enumerate(instrs):
            for acc in instr.writes:
                # an atomic store (asc.atomic) combines element by element with what GM holds, so it
                # clobbers no neighbour's bytes; byte-level conflicts with it are racecheck's. Only the
                # global space is shared by cores (a local space is one arena per core)
                if acc.mem.is_global and acc.stop > acc.start and not acc.atomic:
                    spans[(acc.buffer, orders[core].epoch[i])].append(
                        (acc.start // BLOCK, (acc.stop - 1) // BLOCK, core, instr))
    findings: dict[tuple, Finding] = {}
    for (buffer, _), items in spans.items():
        items.sort(key=lambda item: item[0])
        reach: dict[int, tuple] = {}  # core -> its interval reaching furthest so far
        for lo, hi, core, instr in items:
            other = max((r for c, r in reach.items() if c != core), key=lambda r: r[1], default=None)
            if other is not None and other[1] >= lo and not _flag_ordered(orders, other[3], instr):
                first = other[3]
                key = (first.where, instr.where)
                if key not in findings:
                    shared = (lo * BLOCK, (min(hi, other[1]) + 1) * BLOCK)
                    findings[key] = Finding(
                        "memcheck", "overlapping block write",
                        f"{trace.core_label(first.core)} and {trace.core_label(core)} write the same 32-byte GM block(s) of "
                        f"{buffer}: GM moves "
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
