"""Each core's Trace from its group's templates: the instruction list the reference executor records for that core.

A group records each instruction once (``fusekit.asc.lockstep.group.Template``); core ``members[k]`` of the group
executed it with its own GM offsets, the k-th value of each lane offset. So its ``Instr`` is the template with the
core's block index, the position in its program order and, in every GM Access whose bounds are lane values, its own
bounds, and its own Sync where the group's differ (a cross-core wait's releasing sets: ``group.LaneSyncs``). Everything
else (op, pipe, counts, dtype, cost, file:line) is the group's. The result equals,
field for field, the ``Instr`` the reference executor records for that core.
"""

from __future__ import annotations

import gc

from ..trace import Access, Instr
from .group import LaneSyncs
from .values import LaneInt


def _at(a: Access, k: int) -> Access:
    """Access ``a`` as the group's k-th core made it."""
    start = a.start.v[k] if isinstance(a.start, LaneInt) else a.start
    stop = a.stop.v[k] if isinstance(a.stop, LaneInt) else a.stop
    return Access(a.mem, a.buffer, start, stop, a.tensor, a.atomic, a.l2)


def _per_core(accesses, k: int):
    """The accesses of the k-th core, in the container the record was given (a tuple, as the families pass)."""
    if not any(isinstance(a.start, LaneInt) or isinstance(a.stop, LaneInt) for a in accesses):
        return accesses
    return type(accesses)(_at(a, k) for a in accesses)


def instrs(members: tuple[int, ...], templates: list) -> list[list[Instr]]:
    """The instruction list of each core of a group, in ``members`` order."""
    out = []
    for k, core in enumerate(members):
        mine = []
        for seq, t in enumerate(templates):
            reads, writes, undefined = t.reads, t.writes, t.undefined
            if t.lanes:
                reads, writes, undefined = _per_core(reads, k), _per_core(writes, k), _per_core(undefined, k)
            sync = t.sync[k] if isinstance(t.sync, LaneSyncs) else t.sync
            mine.append(Instr(core, seq, t.op, t.pipe, reads, writes, undefined, sync, t.count, t.nbytes, t.dtype,
                              t.file, t.line, t.repeats, t.cost, t.lines))
        out.append(mine)
    return out


def cores(block_dim: int, groups: list[tuple[tuple[int, ...], list]]) -> list[list[Instr]]:
    """``Trace.cores`` of a lockstep launch from its groups' (members, templates)."""
    collector_was_on = gc.isenabled()
    gc.disable()  # the lists only add objects: a full collection would rescan them all (as the reference launch)
    try:
        per_core: list = [[] for _ in range(block_dim)]
        for members, templates in groups:
            for core, lst in zip(members, instrs(members, templates)):
                per_core[core] = lst
        return per_core
    finally:
        if collector_was_on:
            gc.enable()
