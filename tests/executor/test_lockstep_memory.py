"""Memory as a lockstep group sees it, and the check that the cores kept to their own GM bytes
(``fusekit.asc.lockstep.memory``, ``fusekit.asc.lockstep.crossing``).

- A group's GM view of equally spaced per-core ranges is one strided view of the buffer: what a core writes lands in
  its own bytes; ranges that are not equally spaced make the group split (the equally spaced first cores go on).
- The undo log puts back the bytes the group overwrote.
- A stacked arena starts as a core's fresh arena does, all 0xFF bytes (fresh local memory holds garbage, which
  fusekit poisons: ``fusekit.machine.state.POISON``), even when its array comes from the pool.
- The float16 arithmetic of ``fusekit.asc.native`` gives numpy's bits on such ``(cores, n)`` views too.
- Which GM ranges cores may share: a core may read its own writes; reading or writing what another core writes is a
  crossing (the reference executor's block order then decides).
Expected values are worked out here with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit.asc import native
from fusekit.asc.lockstep.crossing import crossing
from fusekit.asc.lockstep.group import Template
from fusekit.asc.lockstep.memory import LaneArena, LaneBytes, UndoLog
from fusekit.asc.lockstep.signals import Divergence
from fusekit.asc.lockstep.values import LaneInt
from fusekit.asc.trace import Access, Pipe
from fusekit.machine import space_named

GM = space_named("GM")


def test_equally_spaced_ranges_are_one_view_of_gm():
    data = np.arange(64, dtype=np.uint8)
    gm = LaneBytes(data, 3)
    view = gm[LaneInt((4, 14, 24)):LaneInt((8, 18, 28))]
    assert view.shape == (3, 4) and view.tolist() == [[4, 5, 6, 7], [14, 15, 16, 17], [24, 25, 26, 27]]
    view[1] = 0
    assert data[14:18].tolist() == [0, 0, 0, 0] and data[13] == 13 and data[18] == 18


def test_ranges_that_are_not_equally_spaced_split_the_group():
    gm = LaneBytes(np.zeros(64, np.uint8), 4)
    with pytest.raises(Divergence) as split:
        gm[LaneInt((0, 8, 16, 40)):LaneInt((4, 12, 20, 44))]
    assert split.value.keep == (True, True, True, False)
    with pytest.raises(Divergence) as split:  # downwards: only the first core goes on
        gm[LaneInt((24, 16, 8, 0)):LaneInt((28, 20, 12, 4))]
    assert split.value.keep == (True, False, False, False)


def test_the_undo_log_puts_back_what_the_group_overwrote():
    data = np.arange(32, dtype=np.uint8)
    before = data.copy()
    gm, undo = LaneBytes(data, 2), UndoLog()
    lo, hi = LaneInt((0, 16)), LaneInt((8, 24))
    undo.save(gm, lo, hi)
    gm[lo:hi] = 255
    undo.save(gm, 2, 6)  # a range every core writes
    gm[2:6] = 7
    undo.undo()
    np.testing.assert_array_equal(data, before)


def test_a_stacked_arena_starts_as_poison_every_time():
    arena = LaneArena(3, 256)
    assert (arena.rows == 0xFF).all()
    arena[0:16] = 1
    rows = arena.rows
    arena.release()
    again = LaneArena(3, 256)
    assert again.rows is rows and (again.rows == 0xFF).all()  # the pooled array, refilled
    again.release()


def test_float16_arithmetic_on_a_group_s_rows_gives_numpy_s_bits():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 16, (4, 512), dtype=np.uint16)  # every pattern: NaN, inf, subnormal, -0
    stacked = np.zeros((4, 4096), np.uint16)
    stacked[:, 100:612] = bits
    stacked[:, 1000:1512] = rng.integers(0, 1 << 16, (4, 512), dtype=np.uint16)
    a, b = stacked[:, 100:612].view(np.float16), stacked[:, 1000:1512].view(np.float16)
    column = rng.standard_normal((4, 1)).astype(np.float16)
    for fn in (np.add, np.subtract, np.multiply, np.divide):
        for other in (b, column, np.float16(1.5)):
            want = np.empty(a.shape, np.float16)
            with np.errstate(all="ignore"):
                fn(a, other, out=want)
                out = np.empty_like(stacked)[:, 2000:2512].view(np.float16)
                native.evaluate(fn, a, other, out=out)
            np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def _copy(reads, writes) -> Template:
    return Template("data_copy", Pipe.MTE2, tuple(reads), tuple(writes), (), None, 0, 0, "", "", 0, 0, "", (), True)


def _gm(buffer: str, start, stop) -> Access:
    return Access(GM, buffer, start, stop, buffer)


def test_a_core_may_read_its_own_writes_but_not_another_s():
    own = [((0, 1), [_copy([], [_gm("y", LaneInt((0, 64)), LaneInt((64, 128)))]),
                     _copy([_gm("y", LaneInt((0, 64)), LaneInt((32, 96)))], [])])]
    assert crossing(own) is None
    other = [((0, 1), [_copy([], [_gm("y", LaneInt((0, 64)), LaneInt((64, 128)))])]),
             ((2,), [_copy([_gm("y", 60, 70)], [])])]
    assert crossing(other) == "GM y bytes [60, 64): aiv(2) reads what aiv(0) writes"
    both = [((0, 1), [_copy([], [_gm("y", LaneInt((0, 40)), LaneInt((48, 88)))])])]
    assert crossing(both) == "GM y bytes [40, 48) are written by aiv(0) and aiv(1)"
