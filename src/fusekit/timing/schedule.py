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
- a wait ends no earlier than the set it pairs with;
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

from fusekit.asc.trace import Instr, Mem, Pipe, SyncKind, Trace
from fusekit.hb import PIPE_INDEX, core_order

from fusekit.asc import dtypes

from .params import CPP_DTYPES, TimingParams

S = PIPE_INDEX[Pipe.S]
DMA_OPS = ("data_copy", "data_copy_pad")


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


def schedule(trace: Trace, params: TimingParams) -> LaunchSchedule:
    """Schedule every core of ``trace`` with the costs of ``params``."""
    streams = [trace.cores[trace.stand_ins.get(c, c)] for c in range(trace.block_dim)]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for core, instrs in enumerate(streams):
        groups[_shape(instrs)].append(core)
    transfers = _Transfers(params)
    barrier = _Barrier(len(groups), params)
    sims = [_CoreSim(streams[members[0]], params, len(members), transfers, barrier) for members in groups.values()]
    for sim in sims:
        sim.begin()
    transfers.run()
    schedules: list[CoreSchedule | None] = [None] * trace.block_dim
    for sim, members in zip(sims, groups.values()):
        result = sim.result()
        for core in members:
            schedules[core] = result
    return LaunchSchedule(trace, schedules, params.launch_overhead_us)


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


def _gm_offset(instr: Instr) -> int:
    for acc in instr.reads + instr.writes:
        if acc.mem is Mem.GM:
            return acc.start
    return 0


class _CoreSim:
    """One core's instructions placed as soon as their issue slot and predecessors are known."""

    def __init__(self, instrs: list[Instr], params: TimingParams, weight: int, transfers: "_Transfers",
                 barrier: "_Barrier"):
        self.instrs, self.p, self.weight = instrs, params, weight
        self.transfers, self.barrier = transfers, barrier
        order = core_order(instrs)
        self.pipes = order.pipe
        n = len(instrs)
        by_pipe: list[list[int]] = [[], [], [], []]
        self.deps: list[list[int]] = []
        prevs: list = []
        self.dependents: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            p = order.pipe[i]
            deps = [by_pipe[p][-1]] if by_pipe[p] else []
            self_prev = deps[0] if deps else None
            deps += [by_pipe[q][k - 1] for q, k in enumerate(order.clock[i]) if q != p and k > 0]
            if i in order.matched:  # a wait ends no earlier than the set it waits for
                deps.append(order.matched[i])
            if instrs[i].sync is not None and instrs[i].sync.kind is SyncKind.ALL:  # every earlier instruction
                deps += [pipe_instrs[-1] for pipe_instrs in by_pipe if pipe_instrs]
            by_pipe[p].append(i)
            self.deps.append(deps)
            prevs.append(None if (instrs[i].sync is not None and instrs[i].sync.kind is SyncKind.ALL) else self_prev)
            for d in deps:
                self.dependents[d].append(i)
        self.unknown = [len(d) for d in self.deps]
        self.prev = prevs
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
        """Issue times in program order; a scalar access holds the issue until it ends."""
        while self.issued < len(self.instrs):
            i = self.issued
            at = 0.0
            if i:
                at = self.issue[i - 1]
                if self.pipes[i - 1] == S:
                    if self.end[i - 1] is None:
                        return
                    at = max(at, self.end[i - 1])
            self.issue[i] = at + self.issue_cost
            self.issued += 1
            if not self.unknown[i]:
                self.ready.append(i)

    def _place(self, i: int) -> None:
        # only a transfer may follow a transfer before its data has landed: a flag set on the pipe
        # (or any other instruction) waits for the data (the previous transfer's end, latency included)
        prev = self.prev[i] if self.instrs[i].op in DMA_OPS else None
        start = max([self.issue[i]] + [self.free[d] if d == prev else self.end[d] for d in self.deps[i]])
        self.start[i] = start
        instr = self.instrs[i]
        if instr.op in DMA_OPS and instr.pipe in (Pipe.MTE2, Pipe.MTE3) and instr.nbytes:
            bursts = [acc for acc in instr.reads + instr.writes if acc.mem is Mem.GM]
            misaligned = _alignment_factor(bursts, self.p)
            efficiency = self.p.transfer_efficiency(instr.nbytes // max(1, len(bursts)), 0) * misaligned
            self.transfers.add(self, i, start, instr.nbytes, efficiency, misaligned * _engine_factor(instr, bursts, self.p),
                               self.weight)
        elif instr.sync is not None and instr.sync.kind is SyncKind.ALL:
            self.barrier.arrive(self, i, start)
        else:
            cost = _cost(instr, self.p)
            self.end[i] = self.free[i] = start + cost
            self.busy[i] = cost
            self._known(i)

    def _known(self, i: int) -> None:
        for d in self.dependents[i]:
            self.unknown[d] -= 1
            if not self.unknown[d] and self.issue[d] is not None:
                self.ready.append(d)


def _cost(instr: Instr, p: TimingParams) -> float:
    """Duration (us) of an instruction that is not a GM transfer."""
    if instr.sync is not None:
        return p.cycles_us(p.sync_cycles)
    if instr.pipe is Pipe.S:
        on_gm = any(acc.mem is Mem.GM for acc in instr.reads + instr.writes)
        return p.cycles_us(p.scalar_gm_access_cycles if on_gm else p.scalar_ub_access_cycles)
    return p.cycles_us(vector_cycles(instr, p))


def vector_cycles(instr: Instr, p: TimingParams) -> float:
    """Cycles of one vector (or UB -> UB) instruction: start-up + ceil(beats + bank-conflict cycles).

    beats = repeats x lanes / (elements per cycle): the documented parallelism of the instruction
    (``Instr.cost``, its Ascend C name, and its dtype) in the SoC's throughput table (AD
    Vector指令理论性能汇总.md); one repeat per cycle (256 B) when the table has no figure. A record
    without ``repeats`` counts ceil(bytes / 256) repeats. Bank-conflict cycles: :func:`conflict_cycles`.
    """
    nbytes = max([acc.nbytes for acc in instr.reads + instr.writes] + [instr.nbytes, 0])
    repeats = instr.repeats or math.ceil(nbytes / p.vector_bytes_per_cycle)
    beats = float(repeats)
    rows = p.elements_per_cycle.get(instr.cost or _cpp_name(instr.op))
    if rows and instr.dtype:
        per_cycle = rows.get(CPP_DTYPES.get(instr.dtype, instr.dtype))
        if per_cycle:
            beats = repeats * (p.vector_bytes_per_cycle / dtypes.as_dtype(instr.dtype).sizeof()) / per_cycle
    return p.vector_startup_cycles + math.ceil(beats + conflict_cycles(instr, repeats, p) - 1e-9)


def _cpp_name(op: str) -> str:
    """The Ascend C name of a pyasc op (``whole_reduce_sum`` -> ``WholeReduceSum``), for old records without cost."""
    return "".join(part.capitalize() for part in op.split("_"))


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
    operands: dict[str, list] = {}  # a split-form operand has one range per block run: group them by tensor
    for a in instr.reads:
        if a.mem is Mem.UB:
            operands.setdefault(a.tensor, []).append((a.start, a.stop))
    reads = tuple(tuple(ranges) for ranges in operands.values())
    writes = tuple((a.start, a.stop) for a in instr.writes if a.mem is Mem.UB)
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
    """GM transfers in flight on all cores, sharing the GM bandwidth (processor sharing)."""

    def __init__(self, params: TimingParams):
        self.p = params
        self.pending: list = []   # (begin us, seq, sim, index, bytes, efficiency, engine factor, weight)
        self.active: list = []    # [remaining bytes, sim, index, efficiency, weight, begin, engine factor]
        self.now = 0.0
        self.seq = 0

    def add(self, sim: _CoreSim, i: int, begin: float, nbytes: int, efficiency: float, engine_factor: float,
            weight: int) -> None:
        heapq.heappush(self.pending, (begin, self.seq, sim, i, nbytes, efficiency, engine_factor, weight))
        self.seq += 1

    def run(self) -> None:
        engine = self.p.mte_engine_gbps * 1e3  # bytes per microsecond
        total = self.p.gm_bandwidth_gbps * 1e3
        while self.pending or self.active:
            sharers = sum(a[4] for a in self.active)
            rates = [min(engine * a[6], total * a[3] / sharers) for a in self.active]
            step = min((a[0] / r for a, r in zip(self.active, rates)), default=math.inf)
            if self.pending:
                step = min(step, max(0.0, self.pending[0][0] - self.now))
            for a, r in zip(self.active, rates):
                a[0] -= r * step
            self.now += step
            finished = [a for a in self.active if a[0] <= 1e-9]
            self.active = [a for a in self.active if a[0] > 1e-9]
            while self.pending and self.pending[0][0] <= self.now + 1e-12:
                begin, _, sim, i, nbytes, efficiency, factor, weight = heapq.heappop(self.pending)
                self.active.append([float(nbytes), sim, i, efficiency, weight, begin, factor])
            latency = self.p.mte_latency_ns / 1e3
            for _, sim, i, _, _, begin, _ in finished:
                sim.done(i, self.now, self.now - begin, latency)


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
