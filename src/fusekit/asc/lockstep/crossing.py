"""Whether the cores of a lockstep launch touched each other's GM bytes (after the run, from the templates).

The reference executor runs the cores one after another in block order, so a core reads what every earlier core
wrote. A lockstep group runs an instruction for all its cores at once, and groups run in the order their splits gave.
Both are orders the NPU may produce, but they are different ones, and the reference's is what the rest of fusekit
(and a racy kernel's plain-run output) has always had. So a lockstep run counts only if no core reads or writes GM
bytes that another core of the launch writes; otherwise the launch reruns on the reference executor
(``Trace.fallback`` names the first such range). A core that reads its own writes (an in-place kernel) is fine: its
instructions run in program order in either executor.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .group import DMA
from .values import LaneInt


def _lanes(x, m: int):
    return x.v if isinstance(x, LaneInt) else (x,) * m


def _collect(groups) -> dict:
    """buffer -> {"r": [starts, stops, cores], "w": [...]}, every GM Access of every core."""
    table: dict = defaultdict(lambda: {"r": ([], [], []), "w": ([], [], [])})
    for members, templates in groups:
        m = len(members)
        for t in templates:
            if t.op not in DMA:  # only the DMA touches GM in a lockstep group (group.admit)
                continue
            for kind, accesses in (("r", t.reads), ("w", t.writes)):
                for a in accesses:
                    if a.mem.is_global:
                        starts, stops, cores = table[a.buffer][kind]
                        starts.extend(_lanes(a.start, m))
                        stops.extend(_lanes(a.stop, m))
                        cores.extend(members)
    return table


def _union(starts, stops, cores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each core's byte ranges merged: (starts, stops, cores) of disjoint ranges per core."""
    s, e, c = (np.asarray(x, np.int64) for x in (starts, stops, cores))
    keep = s < e
    s, e, c = s[keep], e[keep], c[keep]
    if not s.size:
        return s, e, c
    order = np.lexsort((s, c))
    s, e, c = s[order], e[order], c[order]
    band = c * (int(e.max()) + 1)  # each core's ranges in a band of its own: one running maximum serves them all
    reach = np.maximum.accumulate(e + band) - band
    new = np.ones(s.size, bool)
    new[1:] = (c[1:] != c[:-1]) | (s[1:] > reach[:-1])
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first), c[first]


def crossing(groups) -> str | None:
    """The first GM range one core reads or writes while another core of the launch writes it, or None.

    ``groups``: (members, templates) of each group that ran.
    """
    for buffer, kinds in _collect(groups).items():
        ws, we, wc = _union(*kinds["w"])
        if not ws.size:
            continue
        order = np.argsort(ws, kind="stable")
        ws, we, wc = ws[order], we[order], wc[order]
        reach = np.maximum.accumulate(we)
        clash = np.flatnonzero(ws[1:] < reach[:-1])
        if clash.size:  # per-core ranges are disjoint, so two overlapping ranges belong to two cores
            i = int(clash[0]) + 1
            j = int(np.argmax(we[:i] > ws[i]))
            return (f"GM {buffer} bytes [{ws[i]}, {min(we[i], we[j])}) are written by aiv({wc[j]}) and aiv({wc[i]})")
        rs, re, rc = _union(*kinds["r"])
        if not rs.size:
            continue
        lo = np.searchsorted(we, rs, side="right")  # the first write range ending after the read starts
        hi = np.searchsorted(ws, re, side="left")   # the write ranges starting before the read ends: [lo, hi)
        run = np.concatenate([[0], np.cumsum(wc[1:] != wc[:-1])])  # ranges of one core in a row share a run
        last = wc.size - 1
        a, b = np.minimum(lo, last), np.clip(hi - 1, 0, last)
        own = (hi <= lo) | ((run[a] == run[b]) & (wc[a] == rc))
        bad = np.flatnonzero(~own)
        if bad.size:
            k = int(bad[0])
            j = next(j for j in range(int(lo[k]), int(hi[k])) if wc[j] != rc[k])
            return (f"GM {buffer} bytes [{max(rs[k], ws[j])}, {min(re[k], we[j])}): aiv({rc[k]}) reads what "
                    f"aiv({wc[j]}) writes")
    return None


def _knowledge(groups) -> tuple[np.ndarray, np.ndarray]:
    """The groups' cores' vector clocks as arrays: ``starts[core, r]``, the instruction from which on the core knew
    ``known[core, r, other]`` (the other's instructions done, by position; -1 nothing); row 0 is before its first
    wait; unused rows start after every instruction."""
    members = [c for ms, _, _ in groups for c in ms]
    clocks = {c: cl for ms, _, lane_clocks in groups for c, cl in zip(ms, lane_clocks)}
    width, depth = max(members) + 1, 1 + max(len(cl) for cl in clocks.values())
    starts = np.full((width, depth), np.iinfo(np.int64).max, np.int64)
    known = np.full((width, depth, width), -1, np.int64)
    for core, cl in clocks.items():
        starts[core, 0] = -1
        for r, (start, seen) in enumerate(cl, 1):
            starts[core, r] = start
            for other, count in seen.items():
                known[core, r, other] = count
    return starts, known


def _pairs(ws, we, rs, re) -> tuple[np.ndarray, np.ndarray]:
    """Every (write, access) pair of overlapping byte ranges, as index arrays: writes ``[ws, we)`` and accesses
    ``[rs, re)``, each sorted by start. An access starting inside a write, then a write starting inside an access
    (strictly after it starts): each overlapping pair once."""
    def ranges(lo, hi):  # for each i, the indices lo[i] .. hi[i] - 1
        count = np.maximum(hi - lo, 0)
        owner = np.repeat(np.arange(count.size), count)
        return owner, lo[owner] + np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)

    w1, r1 = ranges(np.searchsorted(rs, ws, "left"), np.searchsorted(rs, we, "left"))
    r2, w2 = ranges(np.searchsorted(ws, rs, "right"), np.searchsorted(ws, re, "left"))
    return np.concatenate([w1, w2]), np.concatenate([r1, r2])


def ordered(groups, places) -> str | None:
    """For a launch whose groups ran together with cross-core flags: the first GM range one core writes while
    another core reads or writes it with no flag ordering the two (:func:`crossing`'s rule, less the pairs a flag
    orders: those run in the same order in either executor, so they compute the same), or None.

    A pair (core a's instruction i, core b's j) is ordered when b knew a's first i + 1 instructions done by j, or a
    knew b's by i (their vector clocks, ``GroupCore.note_wait``). ``groups``: (members, templates, clocks per member)
    of each group; ``places``: the launch's (for the labels).
    """
    written = {a.buffer for _, templates, _ in groups for t in templates if t.op in DMA for a in t.writes
               if a.mem.is_global}
    table: dict = defaultdict(lambda: ([], [], [], [], []))  # written buffer -> starts, stops, cores, instrs, writes
    for members, templates, _ in groups:
        m = len(members)
        for index, t in enumerate(templates):
            if t.op not in DMA:
                continue
            for write, accesses in ((False, t.reads), (True, t.writes)):
                for a in accesses:
                    if a.buffer in written and a.mem.is_global:
                        starts, stops, cores, instrs, writes = table[a.buffer]
                        starts.extend(_lanes(a.start, m))
                        stops.extend(_lanes(a.stop, m))
                        cores.extend(members)
                        instrs.extend((index,) * m)
                        writes.extend((write,) * m)
    if not table:
        return None
    starts, known = _knowledge(groups)
    label = lambda c: f"{places[c].kind.msprof_prefix}({places[c].block})"  # noqa: E731
    for buffer, columns in table.items():
        s, e, c, i, w = (np.asarray(x) for x in columns)
        keep = s < e
        s, e, c, i, w = s[keep], e[keep], c[keep], i[keep], w[keep]
        order = np.argsort(s, kind="stable")
        s, e, c, i, w = s[order], e[order], c[order], i[order], w[order]
        wi = np.flatnonzero(w)
        a, b = _pairs(s[wi], e[wi], s, e)
        a = wi[a]
        other = c[a] != c[b]
        a, b = a[other], b[other]
        if not a.size:
            continue
        # what b knew of a's instructions when it issued j, and a of b's when it issued i
        row_b = (starts[c[b]] <= i[b][:, None]).sum(axis=1) - 1
        row_a = (starts[c[a]] <= i[a][:, None]).sum(axis=1) - 1
        b_knows = known[c[b], row_b, c[a]] > i[a]
        a_knows = known[c[a], row_a, c[b]] > i[b]
        bad = np.flatnonzero(~(b_knows | a_knows))
        if bad.size:
            x, y = a[bad[0]], b[bad[0]]
            return (f"GM {buffer} bytes [{max(s[x], s[y])}, {min(e[x], e[y])}) are written by {label(c[x])} and "
                    f"{'written' if w[y] else 'read'} by {label(c[y])} with no cross-core flag between them")
    return None
