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

import bisect
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


MAX_PAIRS = 1 << 27  # writes x accesses of one buffer checked at most (beyond: the reference runs the launch)


def _known(clocks: list, index: int) -> dict:
    """What a core knew of the others when it issued instruction ``index`` (its vector clocks, ``GroupCore.clocks``:
    (from which of its instructions on, {core: instructions of that core done}))."""
    at = bisect.bisect_right([start for start, _ in clocks], index) - 1
    return clocks[at][1] if at >= 0 else {}


def _ordered(clocks: dict, a: int, i: int, b: int, j: int) -> bool:
    """Whether cross-core flags order core a's instruction i and core b's j, one way or the other."""
    return _known(clocks[b], j).get(a, -1) > i or _known(clocks[a], i).get(b, -1) > j


def ordered(groups, places) -> str | None:
    """For a launch whose groups ran together with cross-core flags: the first GM range one core writes while
    another core reads or writes it with no flag ordering the two (:func:`crossing`'s rule, less the pairs a flag
    orders: those run in the same order in either executor, so they compute the same), or None.

    ``groups``: (members, templates, clocks per member) of each group; ``places``: the launch's (for the labels).
    """
    clocks: dict = {}
    table: dict = defaultdict(list)  # buffer -> rows (start, stop, core, instruction, written)
    for members, templates, lane_clocks in groups:
        m = len(members)
        clocks.update(zip(members, lane_clocks))
        for index, t in enumerate(templates):
            if t.op not in DMA:
                continue
            for written, accesses in ((0, t.reads), (1, t.writes)):
                for a in accesses:
                    if a.mem.is_global:
                        table[a.buffer] += [(s, e, c, index, written)
                                            for c, s, e in zip(members, _lanes(a.start, m), _lanes(a.stop, m)) if s < e]
    label = lambda c: f"{places[c].kind.msprof_prefix}({places[c].block})"  # noqa: E731
    for buffer, rows in table.items():
        rows_ = np.asarray(rows, np.int64)
        writes = rows_[rows_[:, 4] == 1]
        if writes.size and len(writes) * len(rows_) > MAX_PAIRS:
            return f"GM {buffer}: {len(writes)} writes against {len(rows_)} accesses, too many to check for order"
        for s, e, c, i, _ in writes:
            near = np.flatnonzero((rows_[:, 0] < e) & (rows_[:, 1] > s) & (rows_[:, 2] != c))
            for k in near:
                s2, e2, c2, j, w2 = rows_[k]
                if not _ordered(clocks, int(c), int(i), int(c2), int(j)):
                    return (f"GM {buffer} bytes [{max(s, s2)}, {min(e, e2)}) are written by {label(c)} and "
                            f"{'written' if w2 else 'read'} by {label(c2)} with no cross-core flag between them")
    return None
