"""memcheck for the scalar unit's data cache: scalar GM accesses that the NPU can get wrong.

``GlobalTensor.get_value`` / ``set_value`` go through the core's data cache of 64-byte lines, which
neither the DMA units (MTE2 / MTE3) nor other cores keep coherent; ``data_cache_clean_and_invalid``
writes a line back whole and drops it (AD-API 缓存控制/DataCacheCleanAndInvalid.md; the model is in
``fusekit.asc.cache``). On the Trace, per 64 B line of a GM buffer that a scalar instruction
touched, three kinds of finding:

- ``shared cache line``: a core's scalar store leaves a dirty line that another core's store or
  any MTE write also writes, and neither is ordered after the other's line write-back: the later
  whole-line write-back overwrites the other's bytes (the page's example 3, lost updates);
- ``dirty line read by MTE``: an MTE read (this core or another) of bytes a scalar store wrote,
  ordered after the store but not after a ``data_cache_clean_and_invalid`` of that line: GM still
  has the old bytes;
- ``stale cached read``: a ``get_value`` of bytes an MTE or another core's scalar store wrote
  before it, with no ``data_cache_clean_and_invalid`` of that line on the reading core ordered
  after that write (and, for a store, after its own write-back): the read may hit a stale line.
  This is the GetValue constraint (pyasc get_value doc: call data_cache_clean_and_invalid first
  when the GM may have been written by others), so it holds even when the simulated run happened
  not to cache the line earlier.

Accesses that are not ordered at all are races, which racecheck reports; here only pairs that
synchronisation orders but the cache still gets wrong. Instructions are told apart by their
properties: PIPE_S with GM accesses is a scalar access, ``Instr.lines`` a cache maintenance. The spaces the
cache sits in front of are those whose row says ``scalar_cached`` (``fusekit.machine.spaces``: GM).
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from fusekit.asc.trace import Access, Pipe, Trace
from fusekit.hb import CoreOrder, before_across

from .findings import Finding

LINE = 64  # bytes (fusekit.asc.cache.LINE; AD-API DataCacheCleanAndInvalid.md)
FIX = ("asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t[offset:], asc.DcciDst.CACHELINE_OUT)")


def cachecheck(trace: Trace, orders: list[CoreOrder]) -> list[Finding]:
    """Data-cache findings of a Trace (nothing to do, and no cost, when no scalar instruction touches GM)."""
    return _Check(trace, orders).run()


class _Episode:
    """A line's stay in one core's cache: loaded at ``fill``, stores, dropped at ``end`` (None: kernel end)."""

    __slots__ = ("core", "fill", "stores", "end")

    def __init__(self, core: int, fill: int):
        self.core, self.fill, self.stores, self.end = core, fill, [], None


class _Check:
    def __init__(self, trace: Trace, orders: list[CoreOrder]):
        self.trace, self.orders = trace, orders
        self.findings: dict[tuple, Finding] = {}

    def run(self) -> list[Finding]:
        scalar_lines = self._scalar_lines()
        if not scalar_lines:
            return []
        lines = {buf: sorted(idx for b, idx in scalar_lines if b == buf) for buf in {b for b, _ in scalar_lines}}
        episodes, reads, mte_writes, mte_reads = self._collect(lines)
        for key, eps in episodes.items():
            dirty = [e for e in eps if e.stores]
            self._shared(key, dirty, mte_writes.get(key, []))
            self._dirty_read(dirty, mte_reads.get(key, []))
        for read in reads:
            key = read[2]
            dirty = [e for e in episodes.get(key, []) if e.stores and e.core != read[0]]
            self._stale(read, mte_writes.get(key, []), dirty)
        return list(self.findings.values())

    # -- collection --
    def _live(self):
        for core, instrs in enumerate(self.trace.cores):
            hung = self.orders[core].hung if core < len(self.orders) else []
            for i, instr in enumerate(instrs):
                if not (i < len(hung) and hung[i]):
                    yield core, i, instr

    def _scalar_lines(self) -> set[tuple[str, int]]:
        found = set()
        for _, _, instr in self._live():
            if instr.pipe is Pipe.S:
                for acc in instr.reads + instr.writes:
                    if acc.mem.scalar_cached and acc.stop > acc.start:
                        found.update((acc.buffer, i) for i in _line_range(acc.start, acc.stop))
        return found

    def _collect(self, lines: dict[str, list[int]]):
        episodes: dict[tuple, list[_Episode]] = defaultdict(list)
        reads = []  # (core, index, key, access, last invalidation index or None)
        mte_writes: dict[tuple, list] = defaultdict(list)  # key -> (core, index, access)
        mte_reads: dict[tuple, list] = defaultdict(list)
        present: dict[tuple, _Episode] = {}
        invalidated: dict[tuple, int] = {}
        current = -1
        for core, i, instr in self._live():
            if core != current:
                present, invalidated, current = {}, {}, core
            for acc in instr.lines:  # data_cache_clean_and_invalid: write back, drop
                for key in ((acc.buffer, n) for n in _line_range(acc.start, acc.stop)):
                    invalidated[key] = i
                    episode = present.pop(key, None)
                    if episode is not None:
                        episode.end = i
            if instr.pipe is Pipe.S:
                for acc, store in [(a, False) for a in instr.reads] + [(a, True) for a in instr.writes]:
                    if not acc.mem.scalar_cached or acc.stop <= acc.start:
                        continue
                    for key in ((acc.buffer, n) for n in _line_range(acc.start, acc.stop)):
                        episode = present.get(key)
                        if episode is None:
                            episode = present[key] = _Episode(core, i)
                            episodes[key].append(episode)
                        if store:
                            episode.stores.append((i, acc))
                        else:
                            reads.append((core, i, key, acc, invalidated.get(key)))
                continue
            for accesses, table in ((instr.writes, mte_writes), (instr.reads, mte_reads)):
                for acc in accesses:
                    if acc.mem.scalar_cached and acc.buffer in lines:
                        for n in _lines_within(lines[acc.buffer], acc.start, acc.stop):
                            table[(acc.buffer, n)].append((core, i, acc))
        return episodes, reads, mte_writes, mte_reads

    # -- ordering --
    def _ordered(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """``a`` certainly finishes before ``b`` starts (hb on one core, sync_all epochs across cores)."""
        if a[0] == b[0]:
            return a[1] < b[1] and self.orders[a[0]].before(a[1], b[1])
        return before_across(self.orders, a, b)  # sync_all epochs and GM-flag waits (hb rules 5, 6)

    def _written_back_before(self, episode: _Episode, ref: tuple[int, int]) -> bool:
        return episode.end is not None and self._ordered((episode.core, episode.end), ref)

    # -- rules --
    def _shared(self, key, dirty: list[_Episode], writes: list) -> None:
        for k, a in enumerate(dirty):
            for b in dirty[k + 1:]:
                if a.core != b.core and not (self._written_back_before(a, (b.core, b.fill))
                                             or self._written_back_before(b, (a.core, a.fill))):
                    self._add("shared cache line", key, (a.core, a.stores[0][0]), (b.core, b.stores[0][0]),
                              a.stores[0][1], b.stores[0][1], _shared_text)
            for core, i, acc in writes:
                if not (self._ordered((core, i), (a.core, a.fill)) or self._written_back_before(a, (core, i))):
                    self._add("shared cache line", key, (a.core, a.stores[0][0]), (core, i), a.stores[0][1], acc,
                              _shared_text)

    def _dirty_read(self, dirty: list[_Episode], reads: list) -> None:
        for episode in dirty:
            for core, i, acc in reads:
                for s, stored in episode.stores:
                    if (_overlap(stored, acc) and self._ordered((episode.core, s), (core, i))
                            and not self._written_back_before(episode, (core, i))):
                        self._add("dirty line read by MTE", (acc.buffer, stored.start // LINE), (episode.core, s),
                                  (core, i), stored, acc, _dirty_text)
                        break

    def _stale(self, read, writes: list, dirty: list[_Episode]) -> None:
        core, i, key, acc, invalidated = read
        dropped = None if invalidated is None else (core, invalidated)
        for wc, wi, wacc in writes:
            if (_overlap(wacc, acc) and self._ordered((wc, wi), (core, i))
                    and not (dropped is not None and self._ordered((wc, wi), dropped))):
                self._add("stale cached read", key, (wc, wi), (core, i), wacc, acc, _stale_text)
        for episode in dirty:
            for s, stored in episode.stores:
                if not (_overlap(stored, acc) and self._ordered((episode.core, s), (core, i))):
                    continue
                if dropped is None or not self._written_back_before(episode, dropped):
                    self._add("stale cached read", key, (episode.core, s), (core, i), stored, acc, _stale_text)
                break

    # -- findings --
    def _add(self, kind: str, key, first, second, acc_a: Access, acc_b: Access, text) -> None:
        a, b = (self.trace.cores[c][i] for c, i in (first, second))
        ident = (kind, a.where, b.where)
        if ident in self.findings:
            found = self.findings[ident]
            found.count += 1
            found.cores = tuple(sorted(set(found.cores) | {a.core, b.core}))
            return
        buffer, line = key
        start, stop = line * LINE, (line + 1) * LINE
        self.findings[ident] = Finding(
            "memcheck", kind, text(a, b, acc_a, acc_b, buffer), "GM", buffer, start,
            min(stop, self.trace.gm[buffer].nbytes) if buffer in self.trace.gm else stop,
            tuple(dict.fromkeys((a.core, b.core))), (a.pipe.value, b.pipe.value), (a.where, b.where), (a.op, b.op),
            acc_b.tensor or buffer)


def _shared_text(a, b, acc_a: Access, acc_b: Access, buffer: str) -> str:
    other = f"aiv({b.core})'s {b.op}" if b.core != a.core else f"its own {b.op} on PIPE_{b.pipe.value}"
    return (f"aiv({a.core}) stores to {buffer} bytes [{acc_a.start}, {acc_a.stop}) with a scalar set_value and "
            f"{other} writes bytes [{acc_b.start}, {acc_b.stop}) of the same 64-byte data-cache line, with no "
            "write-back ordered between them: the data cache writes lines back whole, so one write-back can "
            "overwrite the other's bytes with stale ones (AD-API DataCacheCleanAndInvalid.md, example 3). Give each "
            f"core's scalar stores 64 B lines of their own, or clean the line with {FIX} and sync_all before the "
            "other write")


def _dirty_text(a, b, acc_a: Access, acc_b: Access, buffer: str) -> str:
    reader = f"aiv({b.core})'s" if b.core != a.core else "the"
    return (f"{reader} {b.op} on PIPE_{b.pipe.value} reads {buffer} bytes [{acc_b.start}, {acc_b.stop}) that "
            f"aiv({a.core})'s set_value left in its data cache: DMA reads GM, which still holds the old value until "
            f"the line is written back. After the store call {FIX}, and order the read after it")


def _stale_text(a, b, acc_a: Access, acc_b: Access, buffer: str) -> str:
    writer = f"aiv({a.core})'s set_value" if a.pipe is Pipe.S else f"aiv({a.core})'s {a.op} on PIPE_{a.pipe.value}"
    return (f"aiv({b.core})'s get_value reads {buffer} bytes [{acc_b.start}, {acc_b.stop}) through its data cache "
            f"after {writer} wrote them, with no data_cache_clean_and_invalid of that line on aiv({b.core}) "
            "ordered after the write: a line cached earlier returns the old value (pyasc get_value: clean and "
            f"invalidate first when others may have written the GM). Call {FIX} on the reading core after the "
            "write is complete and before the read")


def _line_range(start: int, stop: int) -> range:
    return range(start // LINE, (stop - 1) // LINE + 1)


def _lines_within(sorted_lines: list[int], start: int, stop: int) -> list[int]:
    lo = bisect.bisect_left(sorted_lines, start // LINE)
    hi = bisect.bisect_right(sorted_lines, (stop - 1) // LINE)
    return sorted_lines[lo:hi]


def _overlap(a: Access, b: Access) -> bool:
    return a.buffer == b.buffer and a.start < b.stop and b.start < a.stop
