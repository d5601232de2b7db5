"""Memory as the cores of a lockstep group see it: every core's local arena stacked into one array, and each GM
buffer viewed per core.

- :class:`LaneArena`: a local space (the UB) of every core of the group, one row per core. ``arena[a:b]`` is the
  ``(cores, b - a)`` byte view of every core's bytes ``[a, b)``, so a tensor's ``array(n)`` is ``(cores, n)`` and a
  count-form vector instruction is one numpy call over all the cores. The arrays are pooled across launches (a fresh
  ~9 MB array costs ~20 ms of page faults, as issue 20's performance study measured); each is refilled with the
  poison bytes fresh memory holds (``fusekit.machine.POISON``).
- :class:`LaneBytes`: a GM buffer's bytes, where a slice whose bounds are lane values
  (``fusekit.asc.lockstep.values.LaneInt``) is the ``(cores, width)`` view of each core's range: one strided numpy view,
  so a DataCopy moves every core's tile with one copy, and writes land in GM. Ranges must be equally spaced (the cores'
  offsets affine in the block index, as a core's share is); the group splits where they are not.
- :class:`GroupGm`: a kernel argument's GM buffer (``runtime.GmArray``) as one group sees it.
- :class:`UndoLog`: the bytes a group's GM writes replaced, so that a group that diverges after writing GM can be
  undone before its cores rerun.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from fusekit.machine import POISON

from .signals import Divergence, Unsupported
from .values import LaneInt

_POOL: "OrderedDict[int, np.ndarray]" = OrderedDict()  # id -> a stacked array to reuse, oldest first
_FREE: "dict[tuple, list[np.ndarray]]" = {}  # shape -> the pooled arrays of that shape, oldest first
_POOL_LOCK = threading.Lock()
_pooled_bytes = 0
POOL_BYTES = 96 << 20  # what the pool keeps at most: ten 48-core UBs of a 910B (launches of other sizes evict them)


def _take(cores: int, nbytes: int) -> np.ndarray:
    global _pooled_bytes
    with _POOL_LOCK:
        free = _FREE.get((cores, nbytes))
        rows = free.pop() if free else None  # the newest
        if rows is not None:
            del _POOL[id(rows)]
            _pooled_bytes -= rows.nbytes
    if rows is None:
        rows = np.empty((cores, nbytes), np.uint8)
    rows.fill(POISON)  # fresh local memory is garbage: the poison every core's arena starts with
    return rows


def _give_back(rows: np.ndarray) -> None:
    global _pooled_bytes
    if rows.nbytes > POOL_BYTES:
        return
    with _POOL_LOCK:
        _POOL[id(rows)] = rows
        _FREE.setdefault(rows.shape, []).append(rows)
        _pooled_bytes += rows.nbytes
        while _pooled_bytes > POOL_BYTES:
            _, oldest = _POOL.popitem(last=False)  # the oldest goes: the first of its shape's list
            _FREE[oldest.shape].pop(0)
            _pooled_bytes -= oldest.nbytes


class LaneArena:
    """A local space of every core of a group (module docstring): ``rows[k]`` is core k's arena."""

    __slots__ = ("rows",)

    def __init__(self, cores: int, nbytes: int):
        self.rows = _take(cores, nbytes)

    def __getitem__(self, key):
        return self.rows[:, key]

    def __setitem__(self, key, value) -> None:
        self.rows[:, key] = value

    def release(self) -> None:
        """Hand the array back to the pool (the group has ended; nothing reads it any more)."""
        rows, self.rows = self.rows, None
        if rows is not None:
            _give_back(rows)


def _starts(lo, cores: int) -> tuple[int, ...]:
    return lo.v if isinstance(lo, LaneInt) else (int(lo),) * cores


class LaneBytes:
    """The bytes of a GM buffer as ``cores`` cores see them (module docstring)."""

    __slots__ = ("data", "cores")

    def __init__(self, data: np.ndarray, cores: int):
        self.data, self.cores = data, cores

    def view(self, lo, hi) -> np.ndarray:
        """The ``(cores, hi - lo)`` view of bytes ``[lo, hi)`` of each core (``lo``, ``hi``: ints or lane ints).

        Raises:
            Divergence: the cores' ranges differ in width or are not equally spaced (they split there).
            Unsupported: a range outside the buffer (the bounds checks come first: not reached by a kernel).
        """
        width = hi - lo
        width = int(width)  # one width for every core: a lane width makes the cores part ways here
        starts = _starts(lo, self.cores)
        first = starts[0]
        step = starts[1] - first if len(starts) > 1 else 0
        bad = next((k for k in range(2, len(starts)) if starts[k] - starts[k - 1] != step), None)
        if step < 0:
            bad = 1
        if bad is not None:  # not one strided view: the equally spaced first cores go on together, the rest apart
            raise Divergence(tuple(k < bad for k in range(len(starts))))
        if width < 0 or first < 0 or starts[-1] + width > self.data.size:
            raise Unsupported("a GM range outside its buffer")
        base = self.data[first:]
        return np.lib.stride_tricks.as_strided(base, (len(starts), width), (step, 1), writeable=True)

    def __getitem__(self, key: slice) -> np.ndarray:
        return self.view(key.start, key.stop)

    def __setitem__(self, key: slice, value) -> None:
        self.view(key.start, key.stop)[...] = value


class GroupGm:
    """A kernel argument's GM buffer (``fusekit.asc.runtime.GmArray``) as one group sees it: the same name, dtype
    and length; ``data`` is a :class:`LaneBytes` over the same bytes."""

    __slots__ = ("name", "dtype", "length", "source", "data", "array")

    def __init__(self, array, cores: int):
        self.array = array  # the GmArray
        self.name, self.dtype, self.length, self.source = array.name, array.dtype, array.length, array.source
        self.data = LaneBytes(array.data, cores)


class UndoLog:
    """The bytes each GM write of a group replaced, newest last (module docstring)."""

    __slots__ = ("entries",)

    def __init__(self):
        self.entries: list[tuple[LaneBytes, object, object, np.ndarray]] = []

    def save(self, data: LaneBytes, lo, hi) -> None:
        """Keep bytes ``[lo, hi)`` of every core as they are now (call before the write)."""
        self.entries.append((data, lo, hi, np.array(data.view(lo, hi), copy=True)))

    def undo(self) -> None:
        """Put every saved range back, newest first."""
        for data, lo, hi, old in reversed(self.entries):
            data.view(lo, hi)[...] = old
        self.entries.clear()
