"""One pass over every memory access of a Trace: races (racecheck), undefined reads (initcheck) and
lost values (memcheck).

racecheck: two accesses to overlapping bytes, at least one a write, neither happening before the
other (``fusekit.hb``): RAW, WAR or WAW, between two pipes of a core (UB or GM), two instructions
of one pipe with no barrier between them (MTE2, MTE3; V without ``auto_sync``), or two cores (GM).
memcheck "lost value": a write through one tensor over UB bytes that an earlier instruction wrote
through another placement (a different LocalTensor, not a sub-tensor or cast of it) and nothing has
read since: two tensors share UB and the earlier one's data is gone before its use. Overwriting a
tensor's own unread bytes (reloading a buffer, ``duplicate`` then ``set_value``) is the kernel's
business and not reported.
initcheck: a read of UB bytes never written (fresh UB is garbage, NaN-poisoned here), of
DataCopyPad pad bytes left undefined (``is_pad=False``), or of output GM bytes no core has written;
and, at the end, output GM bytes that no core wrote at all (the host would read garbage there).
"""

from __future__ import annotations

from fusekit.asc.kinds import properties
from fusekit.asc.sync import HardEvent
from fusekit.asc.trace import Access, Pipe, Trace
from fusekit.hb import CoreOrder, before_across, program_order
from fusekit.machine import Ordering

from .findings import Finding
from .shadow import DEFINED, UNDEFINED, UNWRITTEN, Shadow


def scan(trace: Trace, orders: list[CoreOrder], outputs: "set[str] | None") -> tuple[list[Finding], list[Finding], list,
                                                                                 list[Finding]]:
    """Race findings, initcheck findings, the racy instruction pairs ((core, index), (core, index))
    and lost-value findings.

    ``outputs``: GM buffers whose initial contents mean nothing (reads before a write are
    reported); None: none are declared, and the buffers the kernel writes are checked as outputs
    only for bytes left unwritten at the end.
    """
    return _Scan(trace, orders, outputs or set()).run(outputs)


class _Scan:
    def __init__(self, trace: Trace, orders: list[CoreOrder], declared: set[str]):
        self.trace, self.orders = trace, orders
        self.shadows: dict[tuple, Shadow] = {}
        self.declared = declared
        self.races: dict[tuple, Finding] = {}
        self.inits: dict[tuple, Finding] = {}
        self.lost: dict[tuple, Finding] = {}
        self.gm_written: dict[str, list[tuple[int, int]]] = {}

    def run(self, outputs: "set[str] | None"):
        for core, i in self._program():
            instr = self.trace.cores[core][i]
            me = (core, i)
            for acc in instr.reads:
                self._read(me, acc)
            for acc in instr.writes:
                self._write(me, acc, DEFINED)
            for acc in instr.undefined:
                self._write(me, acc, UNDEFINED)
        written = set(self.gm_written) - set(getattr(self.trace, "workspaces", ()))  # an API scratch is no output
        for name in sorted(written | self.declared if outputs is None else self.declared):
            self._never_written(name)
        pairs = list(dict.fromkeys((first, second) for (_, first, second, _) in self.races))
        lost = [self._lost_finding(first, second, f) for (first, second), f in self.lost.items()]
        return list(self.races.values()), list(self.inits.values()), pairs, lost

    def _program(self):
        """(core, index) of every instruction, in an order consistent with happens-before: by
        sync_all epoch, then core, then program order."""
        for core, i in program_order(self.orders):  # GM-flag waits too (hb rule 6)
            if not self.orders[core].hung[i]:  # behind a deadlocked wait: it never runs
                yield core, i

    def _shadow(self, core: int, acc: Access) -> Shadow:
        # a local space is one arena per core, a global one a buffer per kernel argument (fusekit.machine.spaces)
        key = (acc.mem.name, acc.buffer) if acc.mem.is_global else (acc.mem.name, core)
        shadow = self.shadows.get(key)
        if shadow is None:
            fresh = UNWRITTEN if not acc.mem.is_global or acc.buffer in self.declared else DEFINED
            shadow = self.shadows[key] = Shadow(fresh)
        return shadow

    def _ordered(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        if a[0] == b[0]:
            return a[1] == b[1] or self.orders[a[0]].before(a[1], b[1])
        return before_across(self.orders, a, b)

    def _read(self, me, acc: Access) -> None:
        for start, stop, seg in self._shadow(me[0], acc).covering(acc.start, acc.stop):
            # an atomic store's read of GM (asc.atomic.gm_reads) commutes with atomic writes of its kind
            if seg.writer is not None and not self._ordered(seg.writer, me) and not self._commutes(seg.writer, acc):
                self._race("RAW", seg.writer, me, acc, start, stop)
            for w in seg.atomics:  # the other unordered atomic writes into these bytes
                if not self._ordered(w, me) and not self._commutes(w, acc):
                    self._race("RAW", w, me, acc, start, stop)
            if seg.state != DEFINED and not properties(self._instr(me)).moves_padding:
                self._uninitialized(me, acc, seg, start, stop)
            seg.readers = [r for r in seg.readers if not self._ordered(r, me)] + [me]

    def _write(self, me, acc: Access, state: int) -> None:
        if acc.mem.is_global:
            self.gm_written.setdefault(acc.buffer, []).append((acc.start, acc.stop))
        for start, stop, seg in self._shadow(me[0], acc).covering(acc.start, acc.stop):
            # atomic GM writes of one kind (asc.atomic: add / max / min in one dtype) commute: not a race
            earlier = ([seg.writer] if seg.writer is not None else []) + seg.atomics
            unordered = [w for w in earlier if w != me and not self._ordered(w, me)]
            commuting = [w for w in unordered if acc.atomic and self._atomic(w) == acc.atomic]
            for w in unordered:
                if w not in commuting:
                    self._race("WAW", w, me, acc, start, stop)
            seg.atomics = commuting
            if (not unordered and not acc.mem.is_global and seg.state == DEFINED and seg.writer is not None and not seg.readers
                  and seg.writer != me and seg.tensor != _placement(acc.tensor)):
                self._lost(seg.writer, me, acc, start, stop)
            for reader in seg.readers:
                if reader != me and not self._ordered(reader, me) and not self._commutes(reader, acc):
                    self._race("WAR", reader, me, acc, start, stop)
            seg.writer, seg.readers, seg.state, seg.tensor = me, [], state, _placement(acc.tensor)

    def _commutes(self, ref, acc: Access) -> bool:
        """Whether instruction ``ref`` and access ``acc`` are atomic GM accesses of one kind (no race)."""
        return bool(acc.atomic) and self._atomic(ref) == acc.atomic

    def _atomic(self, ref) -> str:
        """The atomic kind (``Access.atomic``) of instruction ``ref``'s GM writes, "" if plain."""
        return next((w.atomic for w in self._instr(ref).writes if w.atomic), "")

    # -- findings --
    def _instr(self, ref):
        return self.trace.cores[ref[0]][ref[1]]

    def _race(self, kind: str, first, second, acc: Access, start: int, stop: int) -> None:
        key = (kind, first, second, acc)
        if key in self.races:
            f = self.races[key]
            f.start, f.stop = min(f.start, start), max(f.stop, stop)
            return
        a, b = self._instr(first), self._instr(second)
        self.races[key] = Finding(
            "racecheck", kind, _race_message(kind, a, b, self.trace.core_label), acc.mem.value, acc.buffer, start, stop,
            tuple(dict.fromkeys((a.core, b.core))), (a.pipe.value, b.pipe.value), (a.where, b.where), (a.op, b.op),
            acc.tensor)

    def _lost(self, first, second, acc: Access, start: int, stop: int) -> None:
        key = (first, second)
        if key in self.lost:
            f = self.lost[key]
            f.start, f.stop = min(f.start, start), max(f.stop, stop)
            return
        a, b = self._instr(first), self._instr(second)
        self.lost[key] = Finding("memcheck", "lost value", "", acc.mem.value, acc.buffer, start, stop, (a.core,),
                                 (a.pipe.value, b.pipe.value), (a.where, b.where), (a.op, b.op), acc.tensor)

    def _lost_finding(self, first, second, f: Finding) -> Finding:
        a, b, earlier = self._instr(first), self._instr(second), self._wrote(first, f)
        f.message = (f"{b.op} writes through {f.tensor} {f.mem} bytes that {a.op} wrote through {earlier} and nothing "
                     f"has read since: {earlier}'s value there is lost before any use. The two tensors share {f.mem}; "
                     "place them on disjoint ranges (address + tile_size * sizeof(dtype) of one must not reach "
                     "the other)")
        return f

    def _wrote(self, writer, where: Finding) -> str:
        """The tensor through which ``writer`` wrote bytes of ``where``'s range (of a local space)."""
        return next((w.tensor for w in self._instr(writer).writes
                     if w.mem.value == where.mem and w.start < where.stop and where.start < w.stop), "")

    def _uninitialized(self, me, acc: Access, seg, start: int, stop: int) -> None:
        key = (me, seg.state, acc)
        if key in self.inits:
            f = self.inits[key]
            f.start, f.stop = min(f.start, start), max(f.stop, stop)
            return
        reader = self._instr(me)
        refs = [seg.writer, me] if seg.state == UNDEFINED and seg.writer is not None else [me]
        instrs = [self._instr(r) for r in refs]
        if acc.mem.is_global:
            kind, text = "uninitialized read", (f"reads output GM {acc.buffer} before any core wrote it: it holds "
                                                "whatever was in memory; write it first or read an input")
        elif seg.state == UNDEFINED and len(instrs) == 2 and instrs[0].op != "data_copy_pad":
            # an asc.adv API's temporary space, or a source it may overwrite (is_reuse_source)
            kind, text = "undefined read", (f"reads {acc.mem.name} bytes of {acc.tensor} that {instrs[0].op} left undefined (its "
                                            "temporary space, or a source it may use as scratch): write them first")
        elif seg.state == UNDEFINED:
            kind, text = "undefined pad read", (f"reads {acc.mem.name} bytes of {acc.tensor} that data_copy_pad left undefined "
                                                "(is_pad=False pads to 32 B with garbage): read only the copied "
                                                "elements or pass is_pad=True with a padding_value")
        else:
            kind, text = "uninitialized read", (f"reads {acc.mem.name} bytes of {acc.tensor} that nothing wrote (fresh "
                                                f"{acc.mem.name} holds "
                                                "garbage, NaN here): check the operand order (destination first) "
                                                "and that the data was copied in")
        self.inits[key] = Finding("initcheck", kind, text, acc.mem.value, acc.buffer, start, stop, (reader.core,),
                                  tuple(i.pipe.value for i in instrs), tuple(i.where for i in instrs),
                                  tuple(i.op for i in instrs), acc.tensor)

    def _never_written(self, name: str) -> None:
        size = self.trace.gm[name].nbytes if name in self.trace.gm else 0
        gaps, reached = [], 0
        for start, stop in sorted(self.gm_written.get(name, [])) + [(size, size)]:
            if start > reached:
                gaps.append((reached, min(start, size)))
            reached = max(reached, stop)
        gaps = [(a, b) for a, b in gaps if a < b]
        if gaps:
            total = sum(b - a for a, b in gaps)
            more = f" (and {len(gaps) - 1} more ranges, {total} B in all)" if len(gaps) > 1 else ""
            self.inits[("never", name)] = Finding(
                "initcheck", "output never written",
                f"no core wrote these bytes of output {name}{more}: the host reads garbage there; check the "
                "per-core ranges and the tail (a DataCopy length is rounded down to 32 B on the NPU)",
                "GM", name, gaps[0][0], gaps[0][1], tensor=name)


def _placement(tensor: str) -> str:
    """The tensor a sub-tensor belongs to: ``UB@0[16:]`` -> ``UB@0`` (``memcheck.placement_overlaps``)."""
    return tensor.split("[", 1)[0]


def _race_message(kind: str, a, b, label) -> str:
    verb = {"RAW": ("writes", "reads"), "WAR": ("reads", "writes"), "WAW": ("writes", "writes")}[kind]
    if a.core != b.core:
        return (f"{label(a.core)} {verb[0]} and {label(b.core)} {verb[1]} the same GM bytes with nothing ordering "
                "them (a sync_all, or a cross-core flag set after the first and waited for before the second): on "
                "the NPU the cores run at the same time, so the result depends on timing")
    if a.pipe is b.pipe is Pipe.M:
        return ("two Mmads on the same L0C bytes with no PipeBarrier<PIPE_M> between them: the hardware orders them "
                "only from ceil(m/16) x ceil(n/16) >= 10 fractals (Mmad.md, 同步优化说明); put "
                "pipe_barrier(PipeID.PIPE_M) between them")
    event = f"{a.pipe.value}_{b.pipe.value}"
    if a.pipe is b.pipe and a.pipe.ordering is Ordering.AUTO_SYNC:  # the pipe the compiler's barrier orders (V)
        return ("two dependent PIPE_V instructions with no barrier between them: the second can start before the first "
                "has finished its reads and writes (PipeBarrier page: Add then Mul). Put "
                "pipe_barrier(PipeID.PIPE_V) between them, or build with automatic synchronisation (auto_sync=True, "
                "the default of CANN's projects and pyasc), which inserts it")
    if a.pipe is b.pipe:
        return (f"two PIPE_{a.pipe.value} transfers touch the same bytes back to back: the engine may overlap them, "
                f"so the later one can land first; put pipe_barrier(PipeID.PIPE_{a.pipe.value}) between them "
                "(needed even with automatic synchronisation)")
    fix = (f"set_flag/wait_flag(HardEvent.{event}, id) or pass the tensor through a TQue (enque/deque)"
           if event in HardEvent.__members__ else "a pipe_barrier(PipeID.PIPE_ALL)")
    return (f"PIPE_{a.pipe.value} {verb[0]} and PIPE_{b.pipe.value} {verb[1]} the same bytes with no synchronisation: "
            f"the pipes run concurrently, so the {'read may see old data' if kind == 'RAW' else 'later access may land first'}; "
            f"order them with {fix}")

