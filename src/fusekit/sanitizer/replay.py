"""Race replay: run a racy kernel again in an adversarial order the NPU may legally choose.

For a race between instruction A (earlier in program order) and B on another pipe of the same
core, the replay holds back A's effect, and the effect of every instruction that must come after
A (happens-before, ``fusekit.hb``), until B has run. No synchronisation forbids that order, so it
is one the NPU can produce: a consumer reading before an unsynchronised producer has finished
(RAW), a write landing before an earlier read (WAR), or the older of two writes landing last
(WAW). Races whose first instruction is a scalar read (its value is needed at once) are not
reordered. Races between cores are replayed by running the cores last block first, another order
the NPU's concurrently running cores can produce.
"""

from __future__ import annotations

from fusekit.asc.effect import run as land  # an Effect record through the interpreter, a closure called
from fusekit.asc.kinds import properties
from fusekit.hb import CoreOrder


class ReplayExecutor:
    """An ``asc`` executor (see ``fusekit.asc.runtime.Executor``) that reorders racy pairs."""

    def __init__(self, orders: list[CoreOrder], pairs: list[tuple[tuple[int, int], tuple[int, int]]],
                 scalar_reads: set[tuple[int, int]]):
        self.orders = orders
        self.windows: dict[tuple[int, int], int] = {}  # (core, first) -> second
        taken_until: dict[int, int] = {}
        for (ca, ia), (cb, ib) in sorted(pairs):
            if ca != cb or (ca, ia) in scalar_reads or ia <= taken_until.get(ca, -1):
                continue
            self.windows[(ca, ia)] = ib
            taken_until[ca] = ib
        self.active: dict[int, tuple[int, int]] = {}
        self.held: dict[int, list] = {}
        self.reordered = 0

    def run(self, instr, effect) -> None:
        core, i = instr.core, instr.seq
        window = self.active.get(core)
        if window is None and (core, i) in self.windows:
            self.active[core] = (i, self.windows[(core, i)])
            self.held[core] = [effect]
            return
        if window is not None:
            first, second = window
            if i == second:
                land(effect)
                self._release(core)
                self.reordered += 1
                return
            if self.orders[core].before(first, i):
                if properties(instr).blocks_scalar:  # its value is needed now: the reordering has to end here
                    self._release(core)
                    land(effect)
                    return
                self.held[core].append(effect)
                return
        land(effect)

    def end_core(self, core: int) -> None:
        self._release(core)

    def _release(self, core: int) -> None:
        for effect in self.held.pop(core, []):
            land(effect)
        self.active.pop(core, None)
