"""Happens-before over a Trace: which instruction is certainly finished before another starts.

The pipes of an AIV core (S, V, MTE2, MTE3) run concurrently; each executes its own
instructions in order. Apart from that, only synchronisation orders instructions
(``docs/ascendc-model.md``, "TPipe / TQue / TBuf and implicit synchronisation"; AD-API 核内同步):

- the V and S pipes see their own earlier results (a vector instruction reads what the previous
  one wrote). The MTE pipes may overlap consecutive transfers: back-to-back DataCopy with
  overlapping destinations needs ``PipeBarrier<PIPE_MTE2>`` / ``<PIPE_MTE3>`` (``docs/ascendc-model.md``,
  "Data movement"), so an MTE transfer is ordered after an earlier one of its pipe only by a
  ``pipe_barrier`` of that pipe or a chain of syncs;
- a scalar ``get_value`` returns its value before the next instruction is issued, so it happens
  before everything after it in program order;
- a **set** on pipe P (``set_flag``, ``enque``, ``free_tensor``) completes once every earlier P
  instruction has; the matching **wait** on pipe Q (``wait_flag``, ``deque``, ``alloc_tensor``)
  holds every later Q instruction until then. Sets and waits pair in order per event: the n-th
  wait of an event takes the n-th set. The first ``alloc_tensor`` of a buffer waits for nothing;
- ``pipe_barrier(PIPE_ALL)`` and ``sync_all`` order everything before them before everything
  after them; ``pipe_barrier`` of one pipe orders that pipe's earlier instructions before its later ones;
- across cores only ``sync_all`` orders anything: an access in epoch e (after the core's e-th
  ``sync_all``) happens before every access of another core in a later epoch.

Each instruction gets a **clock**: for every pipe, how many of that pipe's instructions are known
to be finished when it starts. ``a`` happens before ``b`` (same core, ``a`` first in program
order) when both are on the V or S pipe, or when ``b``'s clock covers ``a``'s position on its pipe.
The sanitizer checks accesses against these edges; the timing model schedules along them.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from fusekit.asc.trace import Instr, Pipe, SyncKind

PIPES = (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3)
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
IN_ORDER = (PIPE_INDEX[Pipe.S], PIPE_INDEX[Pipe.V])  # pipes whose instructions see their predecessors' results


@dataclass
class CoreOrder:
    """Happens-before data of one core's instructions, indexed by position in program order.

    Attributes:
        pipe: pipe index of each instruction (see :data:`PIPES`).
        seq: position of each instruction among its pipe's instructions.
        clock: per instruction, instructions of each pipe finished before it starts.
        epoch: per instruction, ``sync_all`` calls the core passed before it.
        matched: per wait instruction, the index of the set it pairs with (absent: none).
        hung: per instruction, whether it comes after a ``wait_flag`` that no earlier ``set_flag``
            releases: that pipe hangs and with it the kernel, so on the NPU it never completes.
    """

    pipe: list[int]
    seq: list[int]
    clock: list[tuple[int, int, int, int]]
    epoch: list[int]
    matched: dict[int, int]
    hung: list[bool]

    def before(self, a: int, b: int) -> bool:
        """Whether instruction ``a`` finishes before instruction ``b`` starts (``a`` precedes ``b`` in program order)."""
        pa = self.pipe[a]
        return (pa == self.pipe[b] and pa in IN_ORDER) or self.clock[b][pa] > self.seq[a]


def core_order(instrs: list[Instr]) -> CoreOrder:
    """Compute clocks for one core's instructions (program order)."""
    issued = [0, 0, 0, 0]                       # instructions issued per pipe
    know = [[0, 0, 0, 0] for _ in PIPES]        # know[p][q]: q-instructions finished before p's next one
    pending: dict[tuple, deque] = defaultdict(deque)
    pipe, seq, clock, epoch, matched, hung = [], [], [], [], {}, []
    stuck = False
    passed = 0
    for i, instr in enumerate(instrs):
        p = PIPE_INDEX[instr.pipe]
        hung.append(stuck)
        pipe.append(p)
        seq.append(issued[p])
        issued[p] += 1
        clock.append(tuple(know[p]))
        epoch.append(passed)
        sync = instr.sync
        if instr.op == "get_value":
            for k in know:
                k[p] = max(k[p], issued[p])
        if sync is None:
            continue
        if sync.kind is SyncKind.SET:
            token = list(know[p])
            token[p] = issued[p]
            pending[sync.event].append((i, token))
        elif sync.kind is SyncKind.WAIT and pending[sync.event]:
            j, token = pending[sync.event].popleft()
            matched[i] = j
            know[p] = [max(x, y) for x, y in zip(know[p], token)]
        elif sync.kind is SyncKind.WAIT and sync.event[0] == "flag":
            stuck = True
        elif sync.kind is SyncKind.ALL or (sync.kind is SyncKind.BARRIER and sync.event == ("PIPE_ALL",)):
            passed += sync.kind is SyncKind.ALL
            know = [list(issued) for _ in PIPES]
        elif sync.kind is SyncKind.BARRIER:
            know[p][p] = issued[p]
    return CoreOrder(pipe, seq, clock, epoch, matched, hung)


def trace_order(trace) -> list[CoreOrder]:
    """:func:`core_order` of every core of a Trace."""
    return [core_order(instrs) for instrs in trace.cores]
