"""synccheck: set_flag / wait_flag pairing (AD-API 核内同步能力概述.md, SetFlag/WaitFlag.md; SAN synccheck).

Per core and per (HardEvent, event id), in program order:
- a ``wait_flag`` with no earlier unmatched ``set_flag`` waits forever on the NPU: a deadlock;
- a ``set_flag`` of an id that is already set and not yet waited is redundant (the flag is one bit:
  the second set is lost and a later wait may pair with the wrong producer);
- a ``set_flag`` never waited leaves the flag set at kernel end;
- event ids 6 and 7 are reserved for the framework.
"""

from __future__ import annotations

from collections import defaultdict

from fusekit.asc.trace import SyncKind, Trace

from .findings import Finding

RESERVED_IDS = (6, 7)


def synccheck(trace: Trace) -> list[Finding]:
    findings: list[Finding] = []
    for core, instrs in enumerate(trace.cores):
        pending: dict[tuple, list] = defaultdict(list)
        for instr in instrs:
            sync = instr.sync
            if sync is None or not sync.event or sync.event[0] != "flag":
                continue
            _, event, event_id = sync.event
            pipes = (sync.src.value, sync.dst.value)
            if sync.kind is SyncKind.SET:
                if event_id in RESERVED_IDS:
                    findings.append(_finding("reserved event id", f"event id {event_id} of HardEvent.{event} is "
                                             "reserved for the framework's own synchronisation; use ids 0 to 5",
                                             core, pipes, [instr]))
                if pending[sync.event]:
                    findings.append(_finding("redundant set_flag", f"HardEvent.{event} id {event_id} is set again "
                                             "before anything waited on it: the flag is one bit, so the two sets can "
                                             "merge and a later wait_flag then hangs or pairs with the wrong producer; "
                                             "wait_flag between the two sets or use another event id",
                                             core, pipes, [pending[sync.event][-1], instr]))
                pending[sync.event].append(instr)
            elif sync.kind is SyncKind.WAIT:
                if pending[sync.event]:
                    pending[sync.event].pop(0)
                else:
                    findings.append(_finding("deadlock", f"PIPE_{pipes[1]} waits for HardEvent.{event} id {event_id} "
                                             f"but PIPE_{pipes[0]} never set it before: on the NPU this wait hangs "
                                             "forever; set_flag the same event and id first", core, pipes, [instr]))
        for waiting in pending.values():
            for instr in waiting:
                _, event, event_id = instr.sync.event
                findings.append(_finding("set_flag never waited", f"HardEvent.{event} id {event_id} is set but no "
                                         "wait_flag consumes it: either the wait is missing (no synchronisation) or "
                                         "the set is superfluous", core,
                                         (instr.sync.src.value, instr.sync.dst.value), [instr]))
    return findings


def _finding(kind: str, message: str, core: int, pipes: tuple[str, str], instrs: list) -> Finding:
    return Finding("synccheck", kind, message, cores=(core,), pipes=pipes, locations=tuple(i.where for i in instrs),
                   ops=tuple(i.op for i in instrs))
