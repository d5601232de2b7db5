"""Happens-before over a Trace: which instruction is certainly finished before another starts.

The rules, each with its source (AD-API = asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核内同步/``;
AD-G = ``docs/zh/guide/``):

1. **Queues and pipes.** The scalar unit (PIPE_S) executes scalar instructions itself and issues
   every other instruction, in program order, into the queue of its pipe (V, MTE2, MTE3); the
   pipes run concurrently (AD-G 编程指南/高级编程/硬件实现/基本架构.md, "典型的指令流"; AD-API
   核内同步能力概述.md). Scalar instructions keep their own order: "Scalar流水之间的同步由硬件自动保证",
   so there is no ``PipeBarrier<PIPE_S>`` (AD-API PipeBarrier(ISASI).md, 约束说明).
2. **One pipe is in order but overlaps.** Instructions of one queue start in order, "but that does
   not mean the previous one has finished when the next starts"; ``PipeBarrier<pipe>`` makes every
   read and write of the earlier ones complete first (基本架构.md; PipeBarrier(ISASI).md). So two
   dependent instructions of one pipe are ordered only by a barrier (or a chain of syncs):
   - PIPE_V: the PipeBarrier page's example is ``Add(d, a, b)`` then ``Mul(e, d, c)``. With
     automatic synchronisation (``--cce-auto-sync``, on by default in kernel-launch and custom
     operator projects, and pyasc's ``@asc.jit(auto_sync=True)`` default) the compiler inserts that
     ``PipeBarrier<PIPE_V>`` (PipeBarrier(ISASI).md, 调用示例 note; 关键特性说明.md, 表3: PIPE_V ->
     PIPE_V "支持"). ``auto_sync=True`` therefore treats PIPE_V as in order; ``auto_sync=False``
     does not, and a dependent pair with no barrier is a race.
   - The same compiler pass inserts the flags between a scalar tensor access and a dependent
     instruction of PIPE_V, PIPE_MTE2 or PIPE_MTE3, both ways (关键特性说明.md, 表3: S <-> V, MTE2,
     MTE3 "支持"), for the scalar interfaces it lists: LocalTensor GetValue / SetValue and
     GlobalTensor GetValue, not GlobalTensor SetValue (使用约束); AD-G 技术附录/.../Scalar读写数据.md:
     with automatic synchronisation "不需要手动插入同步事件". ``auto_sync=True`` orders those pairs
     with exactly the flags a developer would write there (Scalar读写数据.md), and those flags mean
     what rules 3 and 4 say a written pair means (:class:`_ScalarFlags`): before a scalar access of
     bytes that pipe X last wrote (a read) or last read or wrote (a write), a ``set_flag(X_S)``
     right after that X instruction and a ``wait_flag(X_S)`` before the access, a wait on S that
     stalls the scalar unit (rule 4); before an X instruction touching bytes a scalar store wrote,
     a ``set_flag(S_X)`` right after the store and a ``wait_flag(S_X)`` on X. The set is placed
     right after the producer: the least the compiler's pair guarantees, so fusekit never assumes
     more order than the NPU gives.
   - PIPE_MTE2 / PIPE_MTE3: transfers with overlapping destinations need ``PipeBarrier<PIPE_MTE2>``
     / ``<PIPE_MTE3>`` from the developer even with automatic synchronisation on: 关键特性说明.md,
     "支持的同步类型 / 单流水同步": "PIPE_MTE2/PIPE_MTE3在搬运地址有重叠的情况下需要开发者插入同步",
     and 表3 has no MTE2 -> MTE2 or MTE3 -> MTE3 entry. They are never in order here.
   - PIPE_M (the cube's Mmad), PIPE_MTE1, PIPE_FIX: the developer's barrier, except that "当Mmad计算的M、N较大时
     (m/16 * n/16 >= 10)，硬件会自动处理同一L0C上的写后读依赖" (Mmad.md, 同步优化说明): a Mmad writing at least
     :data:`MMAD_ORDERED_BYTES` of L0C fractals (its record's ``nbytes``: ceil(m/16) x ceil(n/16) x 1 KB) starts
     after every earlier M instruction has finished; a smaller one after another on the same L0C bytes without a
     ``PipeBarrier<PIPE_M>`` is a race.
3. **Flags.** A set on pipe P (``set_flag``, ``enque``, ``free_tensor``) executes once every
   earlier P instruction has completed its reads and writes; the matching wait on pipe Q
   (``wait_flag``, ``deque``, ``alloc_tensor``) blocks Q's later instructions until then
   (AD-API 核内同步能力概述.md, SetFlag/WaitFlag; the framework's EnQue/DeQue, AllocTensor/FreeTensor
   are such pairs: AD-G TPipe-TQue框架编程原理.md). The n-th wait of an event takes the n-th set; the
   first ``alloc_tensor`` of a buffer waits for nothing.
4. **A blocked scalar unit blocks everything.** Because the scalar unit issues every later
   instruction (rule 1), whatever stalls it stalls the issue of every later instruction on every
   pipe (``docs/ascendc-model.md``, "The scalar unit issues everything"):
   - a wait whose destination pipe is S (``HardEvent.MTE2_S``, ``V_S``, ``MTE3_S``): everything
     after it in program order, on any pipe, happens after what the wait waited for (the producer
     pipe's instructions before the set);
   - a scalar read (``get_value`` of UB or GM, any PIPE_S instruction that reads memory): its value
     is needed before the scalar unit goes on, so it, and the scalar instructions before it, happen
     before everything after it;
   - ``pipe_barrier(PIPE_ALL)`` "waits for every earlier instruction of every pipe" (PipeBarrier(ISASI).md,
     约束说明) and ``sync_all`` waits for the core's earlier instructions: both order everything
     before them before everything after them.
5. **Across cores** only ``sync_all`` and ``cross_core_wait_flag`` (mode 0: all AIV cores) order anything: an access in epoch e (after the core's e-th
   ``sync_all``) happens before every access of another core in a later epoch.
6. **Flags between two cores** (``ib_set`` / ``ib_wait``, ``notify_next_block`` / ``wait_pre_block``;
   ``fusekit.asc.blocksync``; cross-core flags in modes 1 and 2, ``fusekit.asc.crosscore``): the wait's Sync
   names the sets that released it, ``("inter_block", flag, ((core, instr), ...))``, and every instruction of a
   setting core finished when its set ran happens before every instruction of the waiting core after the wait,
   transitively along chains of such pairs (:func:`link_cores`, :func:`finished_at`). A GM-flag set runs after
   a ``PipeBarrier<PIPE_ALL>`` and its wait polls GM on the scalar unit (asc-devkit
   ``kernel_operator_block_sync_intf_impl.h``): everything before the set; a ``CrossCoreSetFlag<mode, pipe>``
   runs once ``pipe``'s earlier instructions are done: what that pipe had finished.

Each instruction gets a **clock**: for every pipe, how many of that pipe's instructions are known
to be finished when it starts. ``a`` happens before ``b`` (same core, ``a`` first in program
order) when both are on a pipe kept in order (S; V with ``auto_sync``), or when ``b``'s clock
covers ``a``'s position on its pipe. The sanitizer checks accesses against these edges; the timing
model schedules along them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from dataclasses import dataclass

from fusekit.asc.kinds import properties
from fusekit.asc.trace import Instr, Pipe, SyncKind
from fusekit.machine import PIPES, Ordering

# a clock has one component per pipe of the machine's table (fusekit.machine.pipes), in its order
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
S = PIPE_INDEX[Pipe.S]
V = PIPE_INDEX[Pipe.V]
M = PIPE_INDEX[Pipe.M]
MMAD_ORDERED_BYTES = 10 * 1024  # rule 2: 10 L0C fractals of 16 x 16 x 4 B
# pipes kept in order without a barrier (rule 2): with automatic synchronisation, and without it (auto_sync=False)
IN_ORDER = tuple(i for i, p in enumerate(PIPES) if p.ordering in (Ordering.ALWAYS, Ordering.AUTO_SYNC))
IN_ORDER_MANUAL = tuple(i for i, p in enumerate(PIPES) if p.ordering is Ordering.ALWAYS)


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
        in_order: pipe indices whose dependent instructions need no barrier (rule 2): S, and V
            when the kernel is built with automatic synchronisation.
        barriers: the PIPE_V instructions before which automatic synchronisation inserts
            ``PipeBarrier<PIPE_V>`` (they depend on an earlier V instruction since the last barrier).
        inserted: per instruction, the producers (indices) whose automatically inserted
            ``set_flag`` the automatic synchronisation's ``wait_flag`` before it waits for (rule 2;
            empty without auto_sync). The timing model charges these pairs like written ones.
    """

    pipe: list[int]
    seq: list[int]
    clock: list[tuple[int, ...]]  # one component per pipe (PIPES)
    epoch: list[int]
    matched: dict[int, int]
    hung: list[bool]
    in_order: tuple[int, ...] = IN_ORDER
    inserted: "dict[int, tuple[int, ...]] | None" = None
    barriers: "set[int] | None" = None  # V instructions automatic synchronisation puts a PipeBarrier<PIPE_V> before
    remote: "list[tuple[int, dict[int, int]]] | None" = None  # rule 6: (wait index, {core: instructions done})

    def before(self, a: int, b: int) -> bool:
        """Whether instruction ``a`` finishes before instruction ``b`` starts (``a`` precedes ``b`` in program order)."""
        pa, pb = self.pipe[a], self.pipe[b]
        return (pa == pb and pa in self.in_order) or self.clock[b][pa] > self.seq[a]


def blocks_issue(instr: Instr) -> bool:
    """Whether ``instr`` stalls the scalar unit, and with it the issue of every later instruction (rule 4)."""
    if instr.pipe is not Pipe.S:
        return False
    sync = instr.sync
    if sync is not None:
        return sync.kind is SyncKind.WAIT or sync.kind is SyncKind.ALL
    return bool(instr.reads)  # a scalar load: its value is needed before the next instruction


def auto_synced(instr: Instr) -> bool:
    """Whether automatic synchronisation orders this scalar access against the other pipes (rule 2):
    LocalTensor get_value / set_value and GlobalTensor get_value (``Properties.auto_synced``, 关键特性说明.md,
    cce-auto-sync 使用约束); GlobalTensor set_value is not in the list."""
    return (instr.pipe is Pipe.S and properties(instr).auto_synced
            and not any(w.mem.is_global for w in instr.writes))


def core_order(instrs: list[Instr], auto_sync: bool = True) -> CoreOrder:
    """Compute clocks for one core's instructions (program order).

    ``auto_sync``: the kernel is built with automatic synchronisation (rule 2; default, as CANN's
    projects and pyasc build), so dependent PIPE_V instructions are ordered without a barrier and
    scalar tensor accesses get the flag pairs a developer would write (:class:`_ScalarFlags`).
    """
    issued = [0] * len(PIPES)                   # instructions issued per pipe
    know = [[0] * len(PIPES) for _ in PIPES]    # know[p][q]: q-instructions finished before p's next one
    pending: dict[tuple, deque] = defaultdict(deque)
    pipe, seq, clock, epoch, matched, hung = [], [], [], [], {}, []
    flags = _ScalarFlags.of(instrs) if auto_sync else None
    vector = _VectorBarriers() if auto_sync else None
    inserted: dict[int, tuple[int, ...]] = {}
    barriers: set[int] = set()
    stuck = False
    passed = 0
    for i, instr in enumerate(instrs):
        p = PIPE_INDEX[instr.pipe]
        hung.append(stuck)
        pipe.append(p)
        seq.append(issued[p])
        issued[p] += 1
        if vector is not None and p == V:  # rule 2: the PipeBarrier<PIPE_V> the compiler puts before it
            if vector.before(instr, seq[i], know[p][V]):
                barriers.add(i)
                know[p][V] = seq[i]
        if p == M and instr.sync is None and instr.nbytes >= MMAD_ORDERED_BYTES:  # rule 2: the hardware orders it
            know[p][M] = seq[i]
        if flags is not None:  # rule 2: the waits automatic synchronisation puts before this instruction
            kept = []
            for j in reversed(flags.producers(instr, p, know[p], seq)):  # latest first: it may cover the others
                if know[p][pipe[j]] <= seq[j]:
                    know[p] = [max(x, y) for x, y in zip(know[p], _after(j, pipe, seq, clock))]
                    kept.append(j)
            if kept:
                inserted[i] = tuple(sorted(kept))
        clock.append(tuple(know[p]))
        epoch.append(passed)
        sync = instr.sync
        if sync is not None:
            if sync.kind is SyncKind.WAIT and sync.event[:1] == ("cross_core",):
                passed += 1  # rule 5: a cross-core wait (crosscore.py) orders the cores as sync_all does
            if sync.kind is SyncKind.SET:
                token = list(know[p])
                token[p] = issued[p]
                producer = placed_after(sync, p, pipe)
                if producer is not None:  # an inserted set stands right after the instruction it follows
                    token = _after(producer, pipe, seq, clock)
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
        loaded = blocks_issue(instr)
        if loaded or (p == S and i in inserted):  # rule 4: an inserted wait on S stalls the scalar unit too
            done = list(know[S])
            if loaded and sync is None:  # a scalar load has returned, and the scalar instructions before it
                done[S] = issued[S]
            know = [[max(x, y) for x, y in zip(k, done)] for k in know]
        if flags is not None:
            flags.note(i, instr, p)
    if not auto_sync:
        return CoreOrder(pipe, seq, clock, epoch, matched, hung, IN_ORDER_MANUAL)
    return CoreOrder(pipe, seq, clock, epoch, matched, hung, IN_ORDER, inserted, barriers)


def _after(j: int, pipe: list[int], seq: list[int], clock: list) -> list[int]:
    """What a ``set_flag`` placed right after instruction ``j`` (a data instruction, not a sync) carries
    (rule 3): what ``j``'s pipe knew when ``j`` started, and ``j`` itself finished."""
    token = list(clock[j])
    token[pipe[j]] = seq[j] + 1
    return token


def placed_after(sync, p: int, pipe: list[int]) -> "int | None":
    """The instruction an inserted set (``fusekit.asc.autosync``: event ``("auto", name, n, where, index)``)
    stands right after, as pyasc places a LocalTensorAuto's enque after its writer; None for a written set."""
    event = sync.event
    if event[:1] != ("auto",) or len(event) < 5:
        return None
    j = event[4]
    return j if 0 <= j < len(pipe) and pipe[j] == p else None


class _VectorBarriers:
    """The ``PipeBarrier<PIPE_V>`` automatic synchronisation inserts (rule 2; PipeBarrier(ISASI).md: between
    ``Add(d, a, b)`` and a dependent ``Mul(e, d, c)``): before a V instruction that reads bytes a V instruction
    not yet known finished wrote, or writes bytes one read or wrote. Once V knows every noted instruction
    finished (a written barrier, PIPE_ALL, or a wait whose set followed them), nothing is pending."""

    def __init__(self):
        self.reads: dict[tuple, list[list[int]]] = {}   # (mem, buffer) -> disjoint sorted [start, stop]
        self.writes: dict[tuple, list[list[int]]] = {}
        self.last = -1                                  # V position of the last noted instruction

    def before(self, instr: Instr, seq: int, known: int) -> bool:
        """Whether a barrier goes before ``instr`` (a PIPE_V instruction at V position ``seq``; ``known``: V
        instructions V knows finished); then notes its accesses."""
        if known > self.last:  # every noted instruction is known finished: they need no barrier
            self.reads, self.writes = {}, {}
        if instr.sync is not None:
            return False
        written = instr.writes + instr.undefined
        needed = (any(_overlaps(self.writes, a) for a in instr.reads + written)
                  or any(_overlaps(self.reads, a) for a in written))
        if needed:
            self.reads, self.writes = {}, {}
        self.last = seq
        for table, accesses in ((self.reads, instr.reads), (self.writes, written)):
            for acc in accesses:
                _add(table.setdefault((acc.mem, acc.buffer), []), acc.start, acc.stop)
        return needed


def _overlaps(table: dict, acc) -> bool:
    spans = table.get((acc.mem, acc.buffer))
    if not spans:
        return False
    k = bisect_left(spans, [acc.stop])  # spans starting before acc.stop: only the last can reach acc.start
    return k > 0 and spans[k - 1][1] > acc.start and acc.start < acc.stop


def _add(spans: list, start: int, stop: int) -> None:
    """Insert [start, stop) into disjoint sorted ``spans``, merging what it overlaps or touches."""
    if start >= stop:
        return
    lo = bisect_left(spans, [start])
    if lo and spans[lo - 1][1] >= start:
        lo -= 1
    hi = lo
    while hi < len(spans) and spans[hi][0] <= stop:
        hi += 1
    if lo < hi:
        start, stop = min(start, spans[lo][0]), max(stop, spans[hi - 1][1])
    spans[lo:hi] = [[start, stop]]


class _ScalarFlags:
    """The flag pairs automatic synchronisation inserts around scalar tensor accesses (rule 2), derived
    from the bytes the instructions touch: only bytes some auto-synced scalar access touches are watched.

    For each watched byte range: the last writer and last reader of each pipe, and the last scalar store.
    A scalar access waits (on S) for the last other-pipe writer of its bytes, and a store also for the last
    readers (WAR); an instruction of another pipe waits for the last scalar store of its bytes (S_X).
    """

    def __init__(self, watched: "dict[tuple, list[tuple[int, int]]]"):
        self.ranges = {key: sorted(spans) for key, spans in watched.items()}
        self.starts = {key: [a for a, _ in spans] for key, spans in self.ranges.items()}
        self.widest = {key: max(b - a for a, b in spans) for key, spans in self.ranges.items()}
        self.writer: dict[tuple, list[int]] = {}   # (key, start, stop) -> last writer per pipe (-1: none)
        self.reader: dict[tuple, list[int]] = {}   # ... last reader per pipe
        self.store: dict[tuple, int] = {}          # ... last auto-synced scalar store

    @classmethod
    def of(cls, instrs: list[Instr]) -> "_ScalarFlags | None":
        """The model for ``instrs``, or None when no instruction is an auto-synced scalar access (nothing to do)."""
        watched: dict[tuple, set] = defaultdict(set)
        for instr in instrs:
            if auto_synced(instr):
                for acc in instr.reads + instr.writes:
                    watched[(acc.mem, acc.buffer)].add((acc.start, acc.stop))
        return cls({key: list(spans) for key, spans in watched.items()}) if watched else None

    def _touched(self, acc) -> list[tuple]:
        key = (acc.mem, acc.buffer)
        starts = self.starts.get(key)
        if starts is None:
            return []
        first = bisect_right(starts, acc.start - self.widest[key])
        last = bisect_left(starts, acc.stop)
        return [(key, a, b) for a, b in self.ranges[key][first:last] if a < acc.stop and acc.start < b]

    def producers(self, instr: Instr, p: int, known: list[int], seq: list[int]) -> tuple[int, ...]:
        """Indices of the instructions whose inserted set the wait before ``instr`` (on pipe ``p``) takes,
        leaving out those pipe ``p`` already knows finished (``known``: its clock; ``seq``: pipe positions)."""
        found: dict[int, int] = {}  # pipe -> its latest producer: one pair per pipe covers the earlier ones
        if p == S:
            if not auto_synced(instr):
                return ()
            tables = [(self.writer, instr.reads + instr.writes)] + ([(self.reader, instr.writes)] if instr.writes else [])
            for table, accesses in tables:
                for acc in accesses:
                    for w in self._touched(acc):
                        for q, j in enumerate(table.get(w, ())):
                            if j >= 0 and known[q] <= seq[j]:
                                found[q] = max(found.get(q, j), j)
        else:
            for acc in instr.reads + instr.writes + instr.undefined:
                for w in self._touched(acc):
                    j = self.store.get(w, -1)
                    if j >= 0 and known[S] <= seq[j]:
                        found[S] = max(found.get(S, j), j)
        return tuple(sorted(found.values()))

    def note(self, i: int, instr: Instr, p: int) -> None:
        """Record instruction ``i``'s accesses of watched bytes."""
        if p == S:
            if auto_synced(instr):
                for acc in instr.writes:
                    for w in self._touched(acc):
                        self.store[w] = i
            return
        for table, accesses in ((self.reader, instr.reads), (self.writer, instr.writes + instr.undefined)):
            for acc in accesses:
                for w in self._touched(acc):
                    table.setdefault(w, [-1, -1, -1, -1])[p] = i


def trace_order(trace) -> list[CoreOrder]:
    """:func:`core_order` of every core of a Trace (with the launch's ``auto_sync``), linked by :func:`link_cores`."""
    auto_sync = getattr(trace, "auto_sync", True)
    orders = [core_order(instrs, auto_sync) for instrs in trace.cores]
    link_cores(orders, trace.cores)
    return orders


def releasers(instr: Instr) -> tuple:
    """The (core, instruction) of the other cores' sets a wait names (rule 6), or () for any other instruction."""
    sync = instr.sync
    if sync is not None and sync.kind is SyncKind.WAIT and sync.event[:1] == ("inter_block",):
        return sync.event[-1]
    return ()


def link_cores(orders: list[CoreOrder], cores: list[list[Instr]]) -> None:
    """Rule 6: fill ``order.remote`` of each core with what it knows of the other cores after each wait released by
    their sets: per core, ``(token, reach)``, how many of its instructions of each pipe have finished and the program
    position below which all of those lie. Transitive: a wait inherits what the setting core knew at its set. Waits
    are processed once the sets they name are (the launch ran without deadlock, so this terminates; a set never
    reached leaves the wait unlinked)."""
    waits = [[(i, releasers(instr)) for i, instr in enumerate(instrs) if releasers(instr)] for instrs in cores]
    if not any(waits):
        return
    known: list[dict] = [{} for _ in cores]   # running knowledge of each core
    cursor = [0] * len(cores)                # next wait of each core to resolve
    at: dict[tuple[int, int], dict] = {}     # (core, wait index) -> knowledge after it
    for order in orders:
        order.remote = []

    def clock_at(core: int, index: int) -> "dict | None":
        """What ``core`` knew just before its set at ``index``, plus its own instructions that set finds finished."""
        done = [w for w, _ in waits[core][:cursor[core]] if w < index]
        if cursor[core] < len(waits[core]) and waits[core][cursor[core]][0] < index:
            return None  # an earlier wait of that core is not resolved yet
        clock = dict(at[(core, done[-1])]) if done else {}
        clock[core] = _merged(clock.get(core), finished_at(orders[core], index))
        return clock

    progress = True
    while progress:
        progress = False
        for c in range(len(cores)):
            while cursor[c] < len(waits[c]):
                w, setters = waits[c][cursor[c]]
                clocks = [clock_at(rc, ri) for rc, ri in setters]
                if any(k is None for k in clocks):
                    break
                merged = dict(known[c])
                for k in clocks:
                    for other, entry in k.items():
                        merged[other] = _merged(merged.get(other), entry)
                known[c] = at[(c, w)] = merged
                orders[c].remote.append((w, merged))
                cursor[c] += 1
                progress = True


def _merged(a: "tuple | None", b: tuple) -> tuple:
    """The union of two knowledges ``(token, reach)`` of one core."""
    if a is None:
        return b
    return tuple(max(x, y) for x, y in zip(a[0], b[0])), max(a[1], b[1])


def finished_at(order: CoreOrder, j: int) -> tuple[tuple[int, ...], int]:
    """What a core's set at ``j`` finds finished: per pipe, how many of its instructions (the set's pipe: all before
    it, rule 3, and what that pipe knew; S: all before it, the scalar unit executed them before it issued the set,
    rule 1), and the program position below which those lie. A GM-flag set follows a PipeBarrier<PIPE_ALL>, so it
    finds everything before it finished; a CrossCoreSetFlag on PIPE_FIX, what FIX's clock covers."""
    token = list(order.clock[j])
    token[order.pipe[j]] = order.seq[j]
    token[S] = sum(1 for k in range(j) if order.pipe[k] == S)
    reach = 0
    for k in range(j):
        if order.seq[k] < token[order.pipe[k]]:
            reach = k + 1
    return tuple(token), reach


def before_across(orders: list[CoreOrder], a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether instruction ``a`` = (core, index) finishes before ``b`` of another core starts: rule 5 (sync_all /
    cross-core epochs) or rule 6 (flags between cores)."""
    if orders[a[0]].epoch[a[1]] < orders[b[0]].epoch[b[1]]:
        return True
    remote = orders[b[0]].remote
    if not remote:
        return False
    last = None
    for w, clock in remote:  # few waits per core: a scan is enough
        if w >= b[1]:
            break
        last = clock
    entry = last.get(a[0]) if last is not None else None
    order = orders[a[0]]
    return entry is not None and order.seq[a[1]] < entry[0][order.pipe[a[1]]]


def program_order(orders: list[CoreOrder]):
    """(core, index) of every instruction in an order consistent with happens-before: by sync_all epoch, then
    core, then program order; an instruction after a GM-flag wait (rule 6) only once what the wait knows of
    the other cores has been given."""
    epochs = max((o.epoch[-1] for o in orders if o.epoch), default=0)
    position = [0] * len(orders)
    for epoch in range(epochs + 1):
        moved = True
        while moved:
            moved = False
            for core, order in enumerate(orders):
                i = position[core]
                waits = iter(order.remote or ())
                pending = next(waits, None)
                while pending is not None and pending[0] < i:
                    pending = next(waits, None)
                while i < len(order.epoch) and order.epoch[i] <= epoch:
                    if pending is not None and pending[0] < i:  # past a wait: its releasers must have been given
                        if any(position[o] < reach for o, (_, reach) in pending[1].items() if o != core):
                            break
                        pending = next(waits, None)
                        continue
                    yield core, i
                    i += 1
                moved |= i != position[core]
                position[core] = i
    for core, order in enumerate(orders):  # only if the links were inconsistent: keep every instruction
        yield from ((core, i) for i in range(position[core], len(order.epoch)))
