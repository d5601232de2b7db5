"""Shadow memory: for every byte range, its last writer, its readers since, and whether it is defined.

Kept as sorted segments, split only where accesses begin and end, so a 16 KiB copy costs one
segment, not 16 Ki entries. Race detection follows ThreadSanitizer's scheme: an access is checked
against the last write and the reads since it; a race with an older access implies one with
these (happens-before is transitive), so every racy location is reported at least once.
"""

from __future__ import annotations

from bisect import bisect_right

# definedness of a byte range
UNWRITTEN = 0   # never written (fresh UB is poisoned; an output GM buffer before the kernel writes it)
DEFINED = 1
UNDEFINED = 2   # written with garbage (DataCopyPad pad bytes with is_pad=False)


class Segment:
    """``tensor``: the placement (tensor name without sub-tensor offsets) of the last write.
    ``atomics``: earlier atomic GM writes of the last writer's kind that are not ordered before it
    (``fusekit.asc.atomic``): they commute with it, and later accesses are checked against them too."""

    __slots__ = ("writer", "readers", "state", "tensor", "atomics")

    def __init__(self, writer, readers: list, state: int, tensor: str = "", atomics: list | None = None):
        self.writer, self.readers, self.state, self.tensor = writer, readers, state, tensor
        self.atomics = atomics or []

    def copy(self) -> "Segment":
        return Segment(self.writer, list(self.readers), self.state, self.tensor, list(self.atomics))


class Shadow:
    """Segments covering ``[0, inf)``; segment k covers ``[starts[k], starts[k + 1])``."""

    def __init__(self, state: int):
        self.starts = [0]
        self.segments = [Segment(None, [], state)]

    def _split(self, at: int) -> int:
        k = bisect_right(self.starts, at) - 1
        if self.starts[k] == at:
            return k
        self.starts.insert(k + 1, at)
        self.segments.insert(k + 1, self.segments[k].copy())
        return k + 1

    def covering(self, start: int, stop: int) -> list[tuple[int, int, Segment]]:
        """The segments of ``[start, stop)`` as (start, stop, segment), split at both ends."""
        first = self._split(start)
        last = self._split(stop)
        bounds = self.starts[first:last + 1]
        return [(bounds[i], bounds[i + 1], self.segments[first + i]) for i in range(last - first)]
