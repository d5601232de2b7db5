"""Schedule a Trace on the pipes of each core: when every instruction starts and ends.

Rules (PROF: msprof's op simulator shows the same per-pipe timeline):

- the scalar unit issues the instructions of a core in program order, ``scalar_cycles_per_call``
  each; a scalar access (get_value/set_value) holds the issue until it is done;
- an instruction starts once it is issued, its pipe has finished the previous instruction of that
  pipe (pipes execute in order) and its happens-before predecessors (``fusekit.hb``: the queue
  and flag synchronisation the sanitizer uses) have finished;
- costs: vector = ``vector_startup_cycles`` + ceil(repeats x lanes / documented elements per cycle
  + UB bank-conflict cycles) (:func:`vector_cycles`, :func:`conflict_cycles`); sync
  instructions ``sync_cycles``; scalar accesses their access cycles; a GM transfer = latency +
  bytes / rate, where the rate is the engine's maximum or an equal share of the GM bandwidth among
  all transfers in flight on all cores at that moment (processor sharing), whichever is lower. The
  share is scaled by the transfer's efficiency (small bursts use GM bandwidth less well: the ramp of
  ``TimingParams.transfer_efficiency`` on the burst size, i.e. a multi-burst ``data_copy_pad``'s
  block length); a burst whose start is off the 512 B grid and touches one more 512 B segment than
  its length needs slows both the share and the engine by ``misaligned_efficiency``
  (``_alignment_factor``);
- the share of a transfer's bytes served by L2 rather than HBM comes from each line's reuse distance
  (:func:`l2_miss_share`; ``set_l2_cache_hint(CACHE_MODE_DISABLE)`` bypasses L2); HBM and L2
  bandwidths are shared separately (:class:`_Transfers`); cores reading the same GM window at the
  same time share that window's rate (:func:`window_sharers`);
- a launch adds a head overhead growing with its core count (``TimingParams.launch_us``);
- a wait ends no earlier than the set it pairs with;
- a flag pair that automatic synchronisation inserts (``fusekit.hb`` rule 2, ``CoreOrder.inserted``)
  costs what the same pair written by hand just before its consumer costs: the scalar unit issues
  the set and the wait (an issue slot each); the set ends ``sync_cycles`` after its producer, the
  wait ``sync_cycles`` after the set; the consumer starts after the wait, and a wait on S holds the
  issue of every later instruction until it ends; a ``PipeBarrier<PIPE_V>`` it inserts between
  dependent vector instructions (``CoreOrder.barriers``) costs an issue slot and ``sync_cycles`` on V;
- a ``LocalTensorAuto`` pair (``fusekit.asc.autosync``) costs what pyasc's inserted code costs: the set is
  issued in the slot right after its producer (where InsertSync.cpp puts the enque), the wait in the slot
  before its consumer;
- ``sync_all`` waits for every earlier instruction of its core and ends when every core has reached it.

Cores whose instruction streams have the same shape are scheduled once and counted as many
times as they occur (their transfers share the bandwidth with the weight of their number), which
keeps the model cheap for 48 identical cores.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from fusekit.asc.trace import Instr, Pipe, SyncKind, Trace
from fusekit.hb import PIPE_INDEX, core_order, placed_after, releasers
from fusekit.machine import PIPES, space_named

from fusekit.asc import dtypes
from fusekit.asc.basic.spec import cost_row
from fusekit.asc.kinds import Kind, properties

from .params import CPP_DTYPES, TimingParams

S = PIPE_INDEX[Pipe.S]


@dataclass
class CoreSchedule:
    """Times of one core's instructions, in microseconds from the core's start.

    ``busy`` is how long each instruction occupies its pipe doing work (a transfer's latency is
    not busy time: msprof's MTE time counts cycles that move data). ``issue`` is when the scalar
    unit finished issuing each instruction (its issue slot is the ``scalar_cycles_per_call`` before).
    """

    instrs: list[Instr]
    pipes: list[int]
    start: list[float]
    end: list[float]
    busy: list[float]
    issue: list[float] = field(default_factory=list)
    free: list[float] = field(default_factory=list)  # when each instruction released its pipe (end less latency)

    @property
    def finish_us(self) -> float:
        return max(self.end, default=0.0)


@dataclass
class LaunchSchedule:
    """The schedule of one launch: per core (``cores[i]``), the launch overhead and the makespan (us)."""

    trace: Trace
    cores: list[CoreSchedule]
    overhead_us: float

    @property
    def makespan_us(self) -> float:
        return max((c.finish_us for c in self.cores), default=0.0)

    @property
    def time_us(self) -> float:
        """Kernel time: launch overhead plus the slowest core."""
        return self.overhead_us + self.makespan_us


def schedule(trace: Trace, params: TimingParams, hbm_shares=None) -> LaunchSchedule:
    """Schedule every core of ``trace`` with the costs of ``params``.

    ``hbm_shares``: None (each transfer's HBM share from the launch's own L2 reuse, :func:`l2_miss_share`) or a
    function core -> {program index: share of the transfer's bytes served by HBM} that replaces it, for a trace
    that stands for part of a bigger launch whose L2 state it does not see (``fusekit.timing.cube_studies``);
    cores scheduled as one group get the mean over the group of their shares."""
    count = len(trace.cores)  # block_dim, or every AIC and AIV of a mix launch
    streams = [trace.cores[trace.stand_ins.get(c, c)] for c in range(count)]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for core, instrs in enumerate(streams):
        groups[_shape(instrs)].append(core)
    transfers = _Transfers(params)
    barrier = _Barrier(len(groups), params)
    remote = _Remote(params)
    sims = []
    for members in groups.values():
        stream = streams[members[0]]
        real = [streams[c] for c in members if c not in trace.stand_ins]  # stand-ins do other cores' data
        sharers = window_sharers(real, params) if len(real) > 1 and params.gm_window_gbps else None
        shares = _mean_shares([hbm_shares(c) for c in members]) if hbm_shares else l2_miss_share(stream, params, count)
        sims.append(_CoreSim(stream, params, len(members), transfers, barrier, shares,
                             sharers, auto_sync=getattr(trace, "auto_sync", True), remote=remote))
    remote.sims = {core: sim for sim, members in zip(sims, groups.values()) for core in members}
    for sim in sims:
        sim.begin()
    transfers.run()
    schedules: list[CoreSchedule | None] = [None] * count
    for sim, members in zip(sims, groups.values()):
        result = sim.result()
        for core in members:
            schedules[core] = result
    return LaunchSchedule(trace, schedules, params.launch_us(count))


def _mean_shares(shares: list[dict[int, float]]) -> dict[int, float]:
    """Per program index, the mean of ``shares`` (a missing key means 1.0, all HBM)."""
    keys = set().union(*shares)
    return {i: sum(s.get(i, 1.0) for s in shares) / len(shares) for i in keys}


def _bypasses(hint: str, write: bool) -> bool:
    """Whether an access with L2 hint ``hint`` (``Access.l2``) bypasses L2 (CACHE_MODE_DISABLE for its direction)."""
    if not hint.startswith("CACHE_MODE_DISABLE"):
        return False  # NORMAL; LAST and PERSISTENT allocate like NORMAL (their replacement priority is not modelled)
    rw = hint.rsplit("/", 1)[-1]
    return rw == "RW" or rw == ("WRITE" if write else "READ")


def l2_miss_share(instrs: list[Instr], p: TimingParams, cores: int) -> dict[int, float]:
    """Share of each GM transfer's bytes that goes to HBM (the rest is served by L2), by program index.

    L2 (``l2_bytes``, LRU, ``l2_line_bytes`` lines, empty at launch; AD data_copy README 优化点3):
    - a read of a line allocated earlier hits when its reuse distance, the bytes this core allocated
      since, times ``cores`` (every core streams its own data at the same pace, so the L2 holds all
      cores' allocations) fits the capacity; otherwise, and on first touch, it misses (HBM);
    - a write allocates its line (write-back, AD add_high_performance README: "z 写数据时会命中 L2
      Cache"). A launch allocating A bytes (this core's, times ``cores``) into an L2 of C writes back
      the share clip(A / C - 1, 0, 1) of every write within the launch: none when its data fits,
      all from twice the capacity (the add study: with L2-allocating reads, A = 402 MB, case 4 runs
      at the HBM time of the reads plus all writes; with bypassing reads, A = 134 MB, case 5 at
      that of the reads alone; no published point lies in between, hence the linear ramp).
    - an access whose GlobalTensor has ``CACHE_MODE_DISABLE`` for its direction bypasses L2: it
      costs HBM and allocates nothing.
    Reuse distance counts bytes allocated, not distinct bytes: exact for the streaming and
    repeated-sweep patterns of the studies, an upper bound otherwise. Missing keys mean 1.0 (all HBM).
    """
    if not p.l2_bytes:
        return {}
    line = p.l2_line_bytes
    firsts, counts, owner, write, alloc, buffers = [], [], [], [], [], {}
    for i, instr in enumerate(instrs):
        if not is_transfer(instr) or not instr.nbytes:
            continue
        for accesses, is_write in ((instr.reads, False), (instr.writes, True)):
            for acc in accesses:
                if acc.mem.is_global and acc.stop > acc.start:
                    first = acc.start // line
                    firsts.append((buffers.setdefault(acc.buffer, len(buffers)) << 44) + first)
                    counts.append((acc.stop - 1) // line - first + 1)
                    owner.append(i)
                    write.append(is_write)
                    alloc.append(not _bypasses(acc.l2, is_write))
    if not firsts:
        return {}
    counts_a = np.asarray(counts, np.int64)
    total = int(counts_a.sum())
    starts = np.repeat(np.cumsum(counts_a) - counts_a, counts_a)
    lines = np.repeat(np.asarray(firsts, np.int64), counts_a) + (np.arange(total, dtype=np.int64) - starts)
    owner_l = np.repeat(np.asarray(owner, np.int64), counts_a)
    write_l = np.repeat(np.asarray(write, bool), counts_a)
    alloc_l = np.repeat(np.asarray(alloc, bool), counts_a)
    hbm = ~alloc_l  # bypassing lines always cost HBM
    allocated = np.flatnonzero(alloc_l)
    if allocated.size:
        ids = lines[allocated]
        pos = np.arange(allocated.size, dtype=np.float64) * line * cores  # chip-wide bytes allocated before
        order = np.argsort(ids, kind="stable")
        sorted_ids, sorted_pos = ids[order], pos[order]
        reuse = np.full(allocated.size, np.inf)
        again = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1]) + 1
        reuse[order[again]] = sorted_pos[again] - sorted_pos[again - 1]
        is_write = write_l[allocated]
        written_back = min(1.0, max(0.0, (pos[-1] + line * cores) / p.l2_bytes - 1))
        hbm = hbm.astype(np.float64)
        hbm[allocated] = np.where(is_write, written_back, reuse > p.l2_bytes)
    per_instr = np.bincount(owner_l, minlength=len(instrs))
    cost = np.bincount(owner_l, weights=hbm, minlength=len(instrs))
    return {i: float(cost[i] / per_instr[i]) for i in set(owner)}


def window_sharers(streams: list[list[Instr]], p: TimingParams) -> list[int] | None:
    """For each instruction of ``streams[0]``: how many of these cores (same-shape, in lock step) read
    the same ``gm_window_bytes`` window of the same GM buffer with it (AD-G
    设置合适的核数和算子Kernel类型.md: cores accessing the same address at once conflict; AD data_copy
    README 优化点4). None: no window shared.
    """
    rep = streams[0]
    dma = [i for i, instr in enumerate(rep) if is_transfer(instr) and instr.nbytes]

    def key(instr: Instr):
        for acc in instr.reads:
            if acc.mem.is_global:
                return acc.buffer, acc.start // p.gm_window_bytes
        return None

    probe = dma[:8]  # cores that start their transfers in distinct windows are taken to stay apart (cheap)
    if all(len({key(s[i]) for s in streams}) == len(streams) for i in probe):
        return None
    sharers = [1] * len(rep)
    for i in dma:
        mine = key(rep[i])
        if mine is not None:
            sharers[i] = sum(1 for s in streams if key(s[i]) == mine)
    return sharers


def _shape(instrs: list[Instr]) -> tuple:
    """What decides an instruction stream's timing (not its addresses, except GM alignment)."""
    return tuple((i.op, i.pipe, i.nbytes, _gm_offset(i) % 512, i.sync.kind if i.sync else None,
                  i.sync.event if i.sync else None) for i in instrs)


def _alignment_factor(bursts: list, p: TimingParams) -> float:
    """Speed factor of a transfer from the alignment of each burst's GM start (AD-G GM地址尽量512B对齐.md).

    A burst whose start is off the 512 B grid so that it touches one more 512 B segment than its
    length needs moves at ``misaligned_efficiency`` (a 32 B-aligned copy gets ~70 % of a 512 B-aligned
    one); a short burst inside one segment does not. The transfer's factor is the time-weighted mean
    over its bursts. GM buffers start 512 B aligned (the runtime's allocator does), so an offset's
    alignment is the address's.
    """
    align, total, slow = p.gm_align_bytes, 0, 0
    for acc in bursts:
        n, lead = acc.nbytes, acc.start % align
        total += n
        if lead and lead + n > -(-n // align) * align:
            slow += n
    return total / (total - slow + slow / p.misaligned_efficiency) if slow else 1.0


def _engine_factor(instr: Instr, bursts: list, p: TimingParams) -> float:
    """Share of the engine's peak rate a transfer gets once its fixed costs are paid.

    The engine pays ``mte_request_ns`` per instruction and ``mte_burst_ns`` per burst (a
    multi-burst ``data_copy_pad`` row) on top of bytes / ``mte_engine_gbps``; folded into one rate
    so that processor sharing stays a single rate per transfer. Requests are pipelined: the latency
    is not part of this (see :class:`_Transfers`).
    """
    payload = instr.nbytes / p.mte_engine_gbps  # ns
    return payload / (payload + p.mte_request_ns + max(1, len(bursts)) * p.mte_burst_ns)


def _aic_engine_factor(instr: Instr, bursts: list, p: TimingParams) -> float:
    """:func:`_engine_factor` of the AIC's MTE2 (GM -> L1): ``aic_mte2_request_ns`` per copy and ``aic_mte2_row_ns``
    per row (an ND2NZ row is one burst) on top of bytes / ``aic_mte2_gbps`` (fitted: ``fusekit.timing.cube_studies``)."""
    payload = instr.nbytes / p.aic_mte2_gbps  # ns
    return payload / (payload + p.aic_mte2_request_ns + max(1, len(bursts)) * p.aic_mte2_row_ns)


def _gm_offset(instr: Instr) -> int:
    for acc in instr.reads + instr.writes:
        if acc.mem.is_global:
            return acc.start
    return 0


class _CoreSim:
    """One core's instructions placed as soon as their issue slot and predecessors are known."""

    def __init__(self, instrs: list[Instr], params: TimingParams, weight: int, transfers: "_Transfers",
                 barrier: "_Barrier", hbm_share: dict[int, float] | None = None, sharers: list[int] | None = None,
                 auto_sync: bool = True, remote: "_Remote | None" = None):
        self.instrs, self.p, self.weight = instrs, params, weight
        self.hbm_share, self.sharers = hbm_share or {}, sharers
        self.transfers, self.barrier, self.remote = transfers, barrier, remote
        order = core_order(instrs, auto_sync)
        self.inserted = order.inserted or {}  # i -> producers of the flag pairs inserted before i
        self.barriers = order.barriers or set()  # V instructions with an inserted PipeBarrier<PIPE_V> before them
        self.sync_cost = params.cycles_us(params.sync_cycles)
        self.waited: dict[int, float] = {}  # i -> when the last flag pair inserted before i ends
        self.pipes = order.pipe
        n = len(instrs)
        by_pipe: list[list[int]] = [[] for _ in PIPES]
        last: list = [None] * len(PIPES)  # per pipe, its last instruction but inserted sets (they stand after their producer)
        self.deps: list[list[int]] = []
        prevs: list = []
        self.dependents: list[list[int]] = [[] for _ in range(n)]
        follows: dict[int, list[int]] = {}  # producer -> the LocalTensorAuto sets issued right after it
        for i in range(n):
            p = order.pipe[i]
            producer = placed_after(instrs[i].sync, p, order.pipe) if instrs[i].sync is not None else None
            if producer is not None:
                follows.setdefault(producer, []).append(i)
            deps = [last[p]] if last[p] is not None else []
            self_prev = deps[0] if deps else None
            if producer is not None:  # a LocalTensorAuto set: right after its producer, not at the pipe's end
                deps, self_prev = [producer], None
            else:
                last[p] = i
                deps += [by_pipe[q][k - 1] for q, k in enumerate(order.clock[i]) if q != p and k > 0]
            if i in order.matched:  # a wait ends no earlier than the set it waits for
                deps.append(order.matched[i])
            deps += [j for j in self.inserted.get(i, ()) if j not in deps]
            if instrs[i].sync is not None and instrs[i].sync.kind is SyncKind.ALL:  # every earlier instruction
                deps += [pipe_instrs[-1] for pipe_instrs in by_pipe if pipe_instrs]
            by_pipe[p].append(i)
            self.deps.append(deps)
            prevs.append(None if (instrs[i].sync is not None and instrs[i].sync.kind is SyncKind.ALL) else self_prev)
            for d in deps:
                self.dependents[d].append(i)
        self.unknown = [len(d) for d in self.deps]
        self.prev = prevs
        # issue order: program order, but a LocalTensorAuto set is issued right after its producer, where pyasc's
        # InsertSync places the enque (fusekit.asc.autosync records it just before its consumer)
        moved = {j for sets in follows.values() for j in sets}
        self.order = [k for i in range(n) if i not in moved for k in (i, *follows.get(i, ()))]
        self.issue: list[float | None] = [None] * n
        self.start: list[float | None] = [None] * n
        self.end: list[float | None] = [None] * n
        self.free: list[float | None] = [None] * n  # when the instruction's pipe may start the next one
        self.busy = [0.0] * n
        self.issued = 0
        self.ready: deque[int] = deque()
        self.issue_cost = params.cycles_us(params.scalar_cycles_per_call)

    def begin(self) -> None:
        self._drain()

    def done(self, i: int, when: float, busy: float, latency: float = 0.0) -> None:
        """Instruction i (a transfer or a sync_all) freed its pipe at ``when``; its data lands ``latency`` later."""
        self.free[i], self.end[i], self.busy[i] = when, when + latency, busy
        self._known(i)
        self._drain()

    def result(self) -> CoreSchedule:
        return CoreSchedule(self.instrs, self.pipes, [s or 0.0 for s in self.start], [e or 0.0 for e in self.end],
                            self.busy, [t or 0.0 for t in self.issue], [f or 0.0 for f in self.free])

    def _drain(self) -> None:
        while True:
            self._issue()
            if not self.ready:
                return
            self._place(self.ready.popleft())

    def _issue(self) -> None:
        """Issue times in issue order (``self.order``); a scalar access holds the issue until it ends."""
        while self.issued < len(self.instrs):
            i = self.order[self.issued]
            at = 0.0
            if self.issued:
                before = self.order[self.issued - 1]
                at = self.issue[before]
                if self.pipes[before] == S:
                    if self.end[before] is None:
                        return
                    at = max(at, self.end[before])
            producers = self.inserted.get(i, ())
            if producers:  # the scalar unit issues the inserted sets, then the waits, then i
                if any(self.end[j] is None for j in producers):
                    return  # a wait on S holds the issue until the producer's set has come
                at, self.waited[i] = self._pairs(i, at)
            if i in self.barriers:  # the inserted barrier takes an issue slot as a written one does
                at += self.issue_cost
            self.issue[i] = at + self.issue_cost
            self.issued += 1
            if not self.unknown[i]:
                self.ready.append(i)

    def _pairs(self, i: int, at: float) -> tuple[float, float]:
        """The flag pairs inserted before ``i``, as the same pairs written just before it would run: the sets,
        then the waits, each issued in its slot after ``at`` (the issue of the instruction before) and costing
        ``sync_cycles``; a set ends after its producer, a wait after its set; one on S holds the issue until it
        ends. Returns (the issue of the last wait, when the last wait ends). Every producer has ended by now (an
        S producer held the issue; an S consumer's issue waited for it)."""
        ic, sync, ends = self.issue_cost, self.sync_cost, []
        for j in self.inserted[i]:
            at += ic
            ends.append(max(at, self.end[j]) + sync)
            if self.pipes[j] == S:  # a set on S (an S_X pair) holds the issue
                at = max(at, ends[-1])
        waited = 0.0
        for end in ends:
            at += ic
            waited = max(waited, max(at, end) + sync)
            if self.pipes[i] == S:  # a wait on S holds the issue
                at = max(at, waited)
        return at, waited

    def _place(self, i: int) -> None:
        # only a transfer may follow a transfer before its data has landed: a flag set on the pipe
        # (or any other instruction) waits for the data (the previous transfer's end, latency included)
        prev = self.prev[i] if is_transfer(self.instrs[i]) else None
        start = max([self.issue[i]] + [self.free[d] if d == prev else self.end[d] for d in self.deps[i]])
        if i in self.inserted:
            start = max(start, self.waited[i])
        if i in self.barriers and self.prev[i] is not None:  # the barrier runs after the previous V instruction
            start = max(start, self.end[self.prev[i]] + self.sync_cost)
        self.start[i] = start
        instr = self.instrs[i]
        bursts = [acc for acc in instr.reads + instr.writes if acc.mem.is_global]
        if is_transfer(instr) and bursts and instr.nbytes and instr.pipe is not Pipe.FIX:  # a GM transfer
            misaligned = _alignment_factor(bursts, self.p)
            bypass = any(_bypasses(acc.l2, acc in instr.writes) for acc in bursts)
            efficiency = self.p.transfer_efficiency(instr.nbytes // max(1, len(bursts)), 0, bypass) * misaligned
            into_l1 = bool(instr.writes) and instr.writes[0].mem.name == "L1"  # the AIC's MTE2: its own engine
            factor = misaligned * (_aic_engine_factor if into_l1 else _engine_factor)(instr, bursts, self.p)
            self.transfers.add(self, i, start, instr.nbytes, efficiency, factor, self.weight,
                               self.hbm_share.get(i, 1.0), self._window_load(i, bursts),
                               self.p.aic_mte2_gbps * 1e3 if into_l1 else 0.0)
        elif instr.sync is not None and instr.sync.kind is SyncKind.ALL:
            self.barrier.arrive(self, i, start)
        elif self.remote is not None and releasers(instr):
            self.remote.wait(self, i, start)
        else:
            cost = _cost(instr, self.p)
            self.end[i] = self.free[i] = start + cost
            self.busy[i] = cost
            self._known(i)

    def _window_load(self, i: int, bursts: list) -> float:
        """The sharers of the transfer's GM window (:func:`window_sharers`) in units of ``gm_window_burst_bytes``
        accesses: the hardware serialises accesses to one address (AD-G 设置合适的核数和算子Kernel类型.md), so a
        window serves a number of accesses per second, and k cores whose bursts are b bytes long load it as
        k x ``gm_window_burst_bytes`` / b cores of the calibration's bursts. Below 1: the window does not bind."""
        k = self.sharers[i] if self.sharers else 1
        if k <= 1:
            return 1.0
        return k * self.p.gm_window_burst_bytes / (self.instrs[i].nbytes / max(1, len(bursts)))

    def _known(self, i: int) -> None:
        if self.remote is not None:
            self.remote.ended(self, i)
        for d in self.dependents[i]:
            self.unknown[d] -= 1
            if not self.unknown[d] and self.issue[d] is not None:
                self.ready.append(d)


def is_transfer(instr: Instr) -> bool:
    """Whether ``instr`` is a data transfer (``fusekit.asc.kinds``), costed by bytes rather than by repeats."""
    return properties(instr).kind is Kind.TRANSFER


def _cost(instr: Instr, p: TimingParams) -> float:
    """Duration (us) of an instruction that is not a GM transfer."""
    if instr.sync is not None:
        return p.cycles_us(p.sync_cycles)
    if instr.pipe is Pipe.S:
        on_gm = any(acc.mem.is_global for acc in instr.reads + instr.writes)
        return p.cycles_us(p.scalar_gm_access_cycles if on_gm else p.scalar_ub_access_cycles)
    if instr.pipe in _CUBE_COSTS:
        return p.cycles_us(_CUBE_COSTS[instr.pipe](instr, p))
    return p.cycles_us(vector_cycles(instr, p))


def _mte1_cycles(instr: Instr, p: TimingParams) -> float:
    """An L1 -> L0A / L0B / BT copy: head + bytes / the path's bandwidth (Cube指令理论性能汇总.md)."""
    into = instr.writes[0].mem.name if instr.writes else ""
    rate = {"L0A": p.mte1_l0a_bytes_per_cycle, "L0B": p.mte1_l0b_bytes_per_cycle}.get(into, p.mte1_bt_bytes_per_cycle)
    return p.mte1_head_cycles + math.ceil(instr.nbytes / rate)


def _fix_cycles(instr: Instr, p: TimingParams) -> float:
    """A Fixpipe: into L1 its head and its elements at the L0C -> L1 rate (Cube指令理论性能汇总.md); into GM its
    head and bytes at the fitted FIX write rate (no document gives it: ``fusekit.timing.cube_studies``)."""
    if any(acc.mem.is_global for acc in instr.writes):
        return (p.fix_gm_head_ns + instr.nbytes / p.fix_gm_gbps) * p.clock_ghz
    return p.fix_head_cycles + math.ceil(instr.count / p.fix_l1_elements_per_cycle)


# the cube's pipes: a Mmad costs its head and its cube cycles (the record's repeats, fusekit.asc.cube.mmad)
_CUBE_COSTS = {
    Pipe.M: lambda instr, p: p.mmad_head_cycles + instr.repeats,
    Pipe.MTE1: _mte1_cycles,
    Pipe.FIX: _fix_cycles,
}


def vector_cycles(instr: Instr, p: TimingParams) -> float:
    """Cycles of one vector (or UB -> UB) instruction: start-up + ceil(beats + bank-conflict cycles).

    beats = repeats x lanes / (elements per cycle): the documented parallelism of the instruction
    (its dtype, in the SoC's throughput table (AD Vector指令理论性能汇总.md) at the row its Spec names:
    ``fusekit.asc.basic.spec.cost_row``); one repeat per cycle (256 B) where the Spec says the page has no
    figure or the SoC has no table. A record without ``repeats`` counts ceil(bytes / 256) repeats.
    Bank-conflict cycles: :func:`conflict_cycles`.
    """
    nbytes = max([acc.nbytes for acc in instr.reads + instr.writes] + [instr.nbytes, 0])
    repeats = instr.repeats or math.ceil(nbytes / p.vector_bytes_per_cycle)
    beats = float(repeats)
    row = cost_row(instr.cost, instr.op)
    rows = p.elements_per_cycle.get(row) if row else None
    if rows and instr.dtype:
        per_cycle = rows.get(CPP_DTYPES.get(instr.dtype, instr.dtype))
        if per_cycle:
            beats = repeats * (p.vector_bytes_per_cycle / dtypes.as_dtype(instr.dtype).sizeof()) / per_cycle
    return p.vector_startup_cycles + math.ceil(beats + conflict_cycles(instr, repeats, p) - 1e-9)


def conflict_cycles(instr: Instr, repeats: int, p: TimingParams) -> float:
    """Extra cycles from UB bank conflicts (AD ``05_best_practices/04_memory_access/bank_conflict_ub/README.md``).

    Each operand's 32 B blocks, in address order, are split evenly over the repeats (exact for the
    count form and for constant strides). In repeat r: the two sources reading one bank group is a
    read-read conflict; a read of a bank (bank id and group) that the write of repeat r - 1 uses
    is a read-write conflict (the hardware delays a repeat's write by one repeat, so a destination
    equal to a source does not conflict: the study's scenarios 4 and 6). A repeat pays the larger
    penalty.
    """
    if not p.ub_bank_group_count or repeats <= 0:
        return 0.0
    ub = space_named("UB")  # the bank groups and their parameters are the UB's (the page above)
    operands: dict[str, list] = {}  # a split-form operand has one range per block run: group them by tensor
    for a in instr.reads:
        if a.mem is ub:
            operands.setdefault(a.tensor, []).append((a.start, a.stop))
    reads = tuple(tuple(ranges) for ranges in operands.values())
    writes = tuple((a.start, a.stop) for a in instr.writes if a.mem is ub)
    if not reads or not writes:
        return 0.0
    return _conflicts(reads, writes, repeats, p.ub_bank_group_count, p.ub_bank_bytes,
                      p.ub_read_read_conflict_cycles, p.ub_read_write_conflict_cycles)


@functools.lru_cache(maxsize=4096)
def _conflicts(reads: tuple, writes: tuple, repeats: int, groups: int, bank_bytes: int, rr: float, rw: float) -> float:
    sources = [_per_repeat(ranges, repeats) for ranges in reads[:2]]
    dst = _per_repeat(writes, repeats)
    total = 0.0
    for r in range(repeats):
        read_groups = [{(b // 32) % groups for b in src[r]} for src in sources]
        clash_rr = len(read_groups) == 2 and bool(read_groups[0] & read_groups[1])
        clash_rw = False
        if r:
            written = {(b // bank_bytes, (b // 32) % groups) for b in dst[r - 1]}
            clash_rw = any((b // bank_bytes, (b // 32) % groups) in written for src in sources for b in src[r])
        total += max(rr if clash_rr else 0.0, rw if clash_rw else 0.0)
    return total


def _per_repeat(ranges: tuple, repeats: int) -> list[list[int]]:
    """The 32 B block addresses of ``ranges`` in address order, split evenly over ``repeats``."""
    blocks = sorted({b for start, stop in ranges for b in range(start - start % 32, stop, 32)})
    per = max(1, -(-len(blocks) // repeats))
    return [blocks[r * per:(r + 1) * per] for r in range(repeats)]


class _Transfers:
    """GM transfers in flight on all cores, sharing the HBM and L2 bandwidths (processor sharing).

    A transfer whose share ``f`` of bytes goes to HBM (:func:`l2_miss_share`) counts as ``f`` of a
    sharer of the HBM bandwidth and ``1 - f`` of one of the L2 bandwidth; its rate is the harmonic mix
    1 / (f / hbm rate + (1 - f) / L2 rate). HBM rate = min(engine x factor, HBM x efficiency /
    HBM sharers); L2 rate = min(``mte_l2_gbps`` x factor, L2 / L2 sharers). ``k`` cores reading the
    same window at once get at most ``gm_window_gbps`` / k each (:func:`window_sharers`; k in units of
    ``gm_window_burst_bytes`` bursts, ``_CoreSim._window_load``).
    """

    def __init__(self, params: TimingParams):
        self.p = params
        self.pending: list = []   # (begin us, seq, sim, index, bytes, efficiency, engine factor, weight, f, k, engine)
        self.active: list = []    # [remaining bytes, sim, index, efficiency, weight, begin, engine factor, f, k, engine]
        self.now = 0.0
        self.seq = 0

    def add(self, sim: _CoreSim, i: int, begin: float, nbytes: int, efficiency: float, engine_factor: float,
            weight: int, hbm_share: float = 1.0, sharers: float = 1.0, engine: float = 0.0) -> None:
        """``engine``: the transfer's engine rate in bytes/us, from HBM and from L2 (0: ``mte_engine_gbps`` and
        ``mte_l2_gbps``, the AIV's MTE2 / MTE3)."""
        heapq.heappush(self.pending, (begin, self.seq, sim, i, nbytes, efficiency, engine_factor, weight, hbm_share,
                                      sharers, engine))
        self.seq += 1

    def run(self) -> None:
        p = self.p
        engine, l2_engine = p.mte_engine_gbps * 1e3, p.mte_l2_gbps * 1e3  # bytes per microsecond
        total, l2_total, window = p.gm_bandwidth_gbps * 1e3, p.l2_bandwidth_gbps * 1e3, p.gm_window_gbps * 1e3
        inf = math.inf
        while self.pending or self.active:
            hbm_load = sum(a[4] * a[7] for a in self.active)
            l2_load = sum(a[4] * (1 - a[7]) for a in self.active)
            rates = []
            for a in self.active:
                f = a[7]
                t = f / min((a[9] or engine) * a[6], total * a[3] / hbm_load) if f else 0.0
                if f < 1:
                    # the AIC's ND2NZ copies (a[9]) use L2 as GM: by burst size (AD matmul_high_performance
                    # README: ND2NZ 时 L2Cache 带宽会降低; AD-G 分析性能数据.md: small transfers miss the peak)
                    t += (1 - f) / min((a[9] or l2_engine) * a[6], l2_total * (a[3] if a[9] else 1.0) / l2_load)
                r = 1 / t
                if a[8] > 1:
                    r = min(r, window / a[8])
                rates.append(r)
            step = min((a[0] / r for a, r in zip(self.active, rates)), default=inf)
            if self.pending:
                step = min(step, max(0.0, self.pending[0][0] - self.now))
            for a, r in zip(self.active, rates):
                a[0] -= r * step
            self.now += step
            finished = [a for a in self.active if a[0] <= 1e-9]
            self.active = [a for a in self.active if a[0] > 1e-9]
            while self.pending and self.pending[0][0] <= self.now + 1e-12:
                begin, _, sim, i, nbytes, efficiency, factor, weight, f, k, rate = heapq.heappop(self.pending)
                self.active.append([float(nbytes), sim, i, efficiency, weight, begin, factor, f, k, rate])
            latency = p.mte_latency_ns / 1e3
            for a in finished:
                a[1].done(a[2], self.now, self.now - a[5], latency)


class _Remote:
    """Waits released by other cores' sets (``fusekit.hb`` rule 6: cross-core flags of modes 1 and 2, GM flags): a
    wait ends ``sync_cycles`` after the latest of its start and the ends of the sets it names, as a flag wait of one
    core does after its set (rule 3)."""

    def __init__(self, params: TimingParams):
        self.cost = params.cycles_us(params.sync_cycles)
        self.sims: dict[int, _CoreSim] = {}  # core -> the simulation of its group
        self.pending: list[tuple[_CoreSim, int, float]] = []

    def wait(self, sim: _CoreSim, i: int, start: float) -> None:
        self.pending.append((sim, i, start))
        self._release()

    def ended(self, sim: _CoreSim, i: int) -> None:
        if self.pending:
            self._release()

    def _release(self) -> None:
        """Land every pending wait whose sets have all ended (landing one may end the sets another waits for)."""
        landed = True
        while landed:
            landed = False
            for k, (sim, i, start) in enumerate(self.pending):
                ends = [self.sims[core].end[j] for core, j in releasers(sim.instrs[i])]
                if all(end is not None for end in ends):
                    del self.pending[k]
                    sim.start[i] = begin = max([start] + ends)
                    sim.done(i, begin + self.cost, self.cost)
                    landed = True
                    break


class _Barrier:
    """sync_all: released when every core (group) has arrived, in arrival rounds."""

    def __init__(self, groups: int, params: TimingParams):
        self.groups, self.cost = groups, params.cycles_us(params.sync_cycles)
        self.waiting: list[tuple[_CoreSim, int, float]] = []

    def arrive(self, sim: _CoreSim, i: int, at: float) -> None:
        self.waiting.append((sim, i, at))
        if len(self.waiting) == self.groups:
            release = max(t for _, _, t in self.waiting) + self.cost
            arrived, self.waiting = self.waiting, []
            for s, j, _ in arrived:
                s.done(j, release, self.cost)
