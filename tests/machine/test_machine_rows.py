"""A memory space, its queue position and its data paths are table rows plus one copy handler, and nothing else.

A made-up local space "L1" (TPosition A1, on the AIV core) is added to the tables of ``fusekit.machine`` with two
data paths, UB -> L1 on MTE3 (the count form and a ``data_copy_pad`` form of its own, run by the handler this file
registers) and L1 -> UB on MTE2 (count form), and a position row for A1 (filled from the UB, drained back to it).
With only those rows, a kernel copies between the UB and L1: the copies run on their paths' pipes, the sanitizer
checks L1 (racecheck, initcheck, memcheck's placements, all keyed by the space's row), the timing model costs the
copies on their pipes' tracks, and a queue at A1 gets its pipes from the rows; the rows then go away and the
machine is as before. This is the proof ``docs/developer-guide.md`` gives for "Adding a memory space" and "Adding a
data path": no edit of ``hb.py``, the sanitizer's scan, ``asc/tensor.py`` or the timing model.

The rows are invented (their pipes are this test's choice); each expected value follows from the rows, the handler
and the kernel. The rest pins what the real rows say: the queue pipes of VECIN / VECOUT / VECCALC (AD-G
TPipe-TQue框架编程原理.md), msprof's per-pipe PipeUtilization.csv columns named by the pipe and core-kind rows
(``docs/ascendc-model.md``, "Tools we mirror"), and ``Core.observe``, how an analysis sees every record.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from fusekit import asc, machine, timing
from fusekit.asc.runtime import current
from fusekit.machine import COUNT, PAD, CoreKind, DataPath, Mem, MemSpace, Ordering, Pipe, PipeSpec, Position, Scope
from fusekit.sanitizer import sanitize

from support import gm_view

E = asc.HardEvent
N = 64  # float32 elements: 256 B
HALF = N // 2  # one block of the copy into L1: 128 B
GAP = 32  # bytes the handler leaves in L1 between the two blocks (dst_stride)

L1 = MemSpace("L1", Scope.LOCAL, "ub_tiling_bytes", 32, ("A1",), "AIV", "made up for this test")
A1 = Position("A1", Mem.UB, Mem.UB, Pipe.V, "made up: filled from the UB, drained back to it")
UB_TO_L1 = DataPath(Mem.UB, L1, Pipe.MTE3, frozenset({COUNT, PAD}), False, "made up")
L1_TO_UB = DataPath(L1, Mem.UB, Pipe.MTE2, frozenset({COUNT}), False, "made up")


def _pad_to_l1(core, op, dst, src, p, pad=None):
    """The made-up path's ``data_copy_pad`` UB -> L1: block b takes ``block_len`` bytes from ``b * block_len`` of the
    UB tensor and puts them ``dst_stride`` bytes after the previous block's end in L1. Its reads and writes go
    through ``core.record``, on the path's pipe."""
    size = src.dtype.sizeof()
    n, gap = p.block_len // size, p.dst_stride // size
    pairs = [(src.span(core, op, n, first=b * n), dst.span(core, op, n, first=b * (n + gap)))
             for b in range(p.block_count)]
    frm, to = core.arenas[src.space], core.arenas[dst.space]

    def effect():
        for (s0, s1), (d0, d1) in pairs:
            to[d0:d1] = frm[s0:s1]

    core.record(op, machine.path_between(src.space, dst.space).pipe, reads=tuple(src.access(*s) for s, _ in pairs),
                writes=tuple(dst.access(*d) for _, d in pairs), count=p.block_count * n,
                nbytes=p.block_count * p.block_len, dtype=dst.dtype.name, effect=effect)


@contextlib.contextmanager
def _l1_rows():
    """The rows (space, position, paths) and the handler, in the tables while the block runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(machine.SPACES, "L1", L1)
        mp.setitem(machine.POSITIONS, "A1", A1)
        for path in (UB_TO_L1, L1_TO_UB):
            mp.setitem(machine.PATHS, (path.src, path.dst), path)
        mp.setitem(machine.HANDLERS, (Mem.UB, L1, PAD), _pad_to_l1)  # what @copy_handler(UB, L1, PAD) registers
        yield L1


@pytest.fixture
def l1():
    with _l1_rows() as space:
        yield space


def _round_trip(sync_l1: bool = True, read_gap: bool = False):
    """x -> UB -> L1 (two blocks, GAP bytes apart) -> UB -> y. ``sync_l1``: the MTE3 -> MTE2 flag between writing
    L1 and reading it back; ``read_gap``: read L1 back as one contiguous range, gap included."""

    @asc.jit
    def kernel(x, y, n: asc.ConstExpr[int]):
        xg, yg = gm_view(x, n), gm_view(y, n)
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)  # UB [0, 256)
        b = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 512, n)  # UB [512, 768)
        far = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 2 * n)  # L1 [0, 512): another arena
        asc.data_copy(a, xg, n)
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy_pad(far, a, asc.DataCopyExtParams(2, HALF * 4, 0, GAP, 0))  # L1 [0, 128) and [160, 288)
        if sync_l1:
            asc.set_flag(E.MTE3_MTE2, 0)
            asc.wait_flag(E.MTE3_MTE2, 0)
        if read_gap:
            asc.data_copy(b, far, n)  # L1 [0, 256): the gap [128, 160) was never written
        else:
            asc.data_copy(b, far, HALF)
            asc.data_copy(b[HALF:], far[HALF + GAP // 4:], HALF)
        asc.set_flag(E.MTE2_MTE3, 1)
        asc.wait_flag(E.MTE2_MTE3, 1)
        asc.data_copy(yg, b, n)

    return kernel


def _args():
    return np.arange(N, dtype=np.float32), np.zeros(N, np.float32), N


def test_a_copy_between_the_ub_and_a_new_space_runs_on_its_paths_pipes(l1):
    x, y, n = _args()
    trace = _round_trip()[1](x, y, n).trace
    np.testing.assert_array_equal(y, x)  # through L1 and back, gap and all
    copies = [i for i in trace.cores[0] if i.op in ("data_copy", "data_copy_pad")]
    assert [(i.pipe, i.reads[0].mem, i.writes[0].mem) for i in copies] == [
        (Pipe.MTE2, Mem.GM, Mem.UB), (Pipe.MTE3, Mem.UB, l1), (Pipe.MTE2, l1, Mem.UB), (Pipe.MTE2, l1, Mem.UB),
        (Pipe.MTE3, Mem.UB, Mem.GM)]
    # the handler's layout: two 128 B blocks, GAP bytes apart, in the L1 arena
    assert [(w.buffer, w.start, w.stop) for w in copies[1].writes] == [("L1", 0, 128), ("L1", 160, 288)]
    assert [(r.start, r.stop) for r in copies[2].reads + copies[3].reads] == [(0, 128), (160, 288)]


def test_the_sanitizer_checks_the_new_space_by_its_row(l1):
    """Without the MTE3 -> MTE2 flag both read-backs race with the write into L1 (racecheck RAW on the written
    bytes); reading the gap the handler left is an uninitialised read of L1 (initcheck); the L1 shadow is per core
    (a local space) like the UB's."""
    clean = sanitize(_round_trip(), outputs=("y",))[1](*_args())
    assert clean.findings == []
    racy = sanitize(_round_trip(sync_l1=False), outputs=("y",))[1](*_args())
    assert [(f.tool, f.kind, f.mem, f.buffer, f.pipes, f.start, f.stop) for f in racy.findings] == [
        ("racecheck", "RAW", "L1", "L1", ("MTE3", "MTE2"), 0, 128),
        ("racecheck", "RAW", "L1", "L1", ("MTE3", "MTE2"), 160, 288)]
    gap = sanitize(_round_trip(read_gap=True), outputs=("y",))[1](*_args())
    assert [(f.tool, f.kind, f.mem, f.buffer, f.start, f.stop) for f in gap.findings] == [
        ("initcheck", "uninitialized read", "L1", "L1", 128, 160)]


def test_memcheck_finds_overlapping_placements_in_the_new_space(l1):
    """Two hand-placed A1 tensors sharing L1 bytes [128, 256) while both are in use (memcheck "overlapping
    placements", checked per local space: the same addresses in the UB are another arena); q's copy overwrites
    bytes of p before p is read (memcheck "lost value", from the sanitizer's scan of L1)."""

    @asc.jit
    def kernel(x, y, n: asc.ConstExpr[int]):
        xg, yg = gm_view(x, n), gm_view(y, n)
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
        b = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 128, n)  # UB [128, 384): used after a is done
        p = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, n)  # L1 [0, 256)
        q = asc.LocalTensor(asc.float32, asc.TPosition.A1, 128, n)  # L1 [128, 384)
        asc.data_copy(a, xg, n)
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy_pad(p, a, asc.DataCopyExtParams(1, n * 4, 0, 0, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_MTE3)
        asc.data_copy_pad(q, a, asc.DataCopyExtParams(1, n * 4, 0, 0, 0))
        asc.set_flag(E.MTE3_MTE2, 0)
        asc.wait_flag(E.MTE3_MTE2, 0)
        asc.data_copy(b, p, n)  # p is still in use after q's first use
        asc.set_flag(E.MTE2_MTE3, 1)
        asc.wait_flag(E.MTE2_MTE3, 1)
        asc.data_copy(yg, b, n)

    report = sanitize(kernel, outputs=("y",))[1](*_args())
    assert [(f.tool, f.kind, f.mem, f.buffer, f.start, f.stop) for f in report.findings] == [
        ("memcheck", "overlapping placements", "L1", "L1", 128, 256), ("memcheck", "lost value", "L1", "L1", 128, 256)]
    assert report.findings[0].tensor == "L1@0 / L1@128"


def test_the_timing_model_costs_the_copies_on_their_pipes(l1):
    """Each copy to or from L1 occupies its path's pipe track for a positive time, and msprof's MTE2 / MTE3 columns
    hold those pipes' busy time (``fusekit.timing.schedule.CoreSchedule``: busy time is what msprof counts)."""
    x, y, n = _args()
    profile = timing.predict([_round_trip()[1](x, y, n).trace])
    sched = profile.launches[0].cores[0]
    placed = [(instr.pipe, machine.PIPES[track], busy) for instr, track, busy in zip(sched.instrs, sched.pipes, sched.busy)
              if any(a.mem is l1 for a in instr.reads + instr.writes)]
    assert [pipe for pipe, _, _ in placed] == [Pipe.MTE3, Pipe.MTE2, Pipe.MTE2]
    assert all(track is pipe and busy > 0 for pipe, track, busy in placed)
    row = profile.utilization()[0]
    for pipe, column in ((Pipe.MTE2, "aiv_mte2_time(us)"), (Pipe.MTE3, "aiv_mte3_time(us)")):
        assert row[column] == round(sum(b for i, b in zip(sched.instrs, sched.busy) if i.pipe is pipe), 4)


def test_a_queue_position_gets_its_pipes_from_the_rows(l1):
    """A queue's producer is the pipe of the path that fills it, its consumer the path's that drains it (A1: filled
    from the UB by MTE3, drained back by MTE2), and the position's space is the row that lists it."""
    assert machine.queue_pipes("A1") == (Pipe.MTE3, Pipe.MTE2)
    assert machine.position_space("A1") is l1 and machine.space_at("AIV", "A1") is l1


def test_removing_the_rows_restores_the_machine():
    before = (dict(machine.SPACES), dict(machine.PATHS), dict(machine.HANDLERS), dict(machine.POSITIONS))
    with _l1_rows():
        assert machine.space_at("AIV", "A1") is L1 and machine.path_between(Mem.UB, L1) is UB_TO_L1
    assert (dict(machine.SPACES), dict(machine.PATHS), dict(machine.HANDLERS), dict(machine.POSITIONS)) == before
    assert machine.queue_pipes("A1") == (Pipe.MTE2, Pipe.MTE1)  # the real row: the AIC's L1
    with pytest.raises(LookupError, match="TPosition.A1 is the AIC's L1, which an AIV core does not have"):
        machine.space_at("AIV", "A1")
    assert machine.space_at("AIV", "CO2") is Mem.UB  # a position no space lists: the core's first local space
    assert machine.queue_pipes("CO2") is None


def test_the_vector_queue_positions_get_the_documented_pipes():
    """AD-G TPipe-TQue框架编程原理.md: VECIN is filled by MTE2 from GM and read by V; VECOUT is written by V and
    drained by MTE3 to GM; VECCALC is V's own."""
    assert {name: machine.queue_pipes(name) for name in ("VECIN", "VECOUT", "VECCALC")} == {
        "VECIN": (Pipe.MTE2, Pipe.V), "VECOUT": (Pipe.V, Pipe.MTE3), "VECCALC": (Pipe.V, Pipe.V)}


def test_msprof_columns_come_from_the_pipe_and_core_kind_rows():
    """PROF PipeUtilization.csv (``docs/ascendc-model.md``, "Tools we mirror"): the AIV columns in msprof's order;
    a core kind with other pipes (the cube's: msprof's ``aic_mac`` / ``aic_mte1`` columns) gets its columns from
    its rows alone."""
    assert timing.CSV_COLUMNS == (
        "block_id", "aiv_time(us)", "aiv_total_cycles", "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)",
        "aiv_scalar_ratio", "aiv_mte2_time(us)", "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "launch_id")
    cube = PipeSpec("M", "cube unit (made up here)", Ordering.NEVER, "mac", "made up")
    mte1 = PipeSpec("MTE1", "L1 -> L0A / L0B (made up here)", Ordering.NEVER, "mte1", "made up")
    aic = CoreKind("AIC", (Pipe.S, mte1, Pipe.MTE2, cube), "made up", (cube, Pipe.S, mte1, Pipe.MTE2))
    assert [(pipe.name, time, ratio) for pipe, time, ratio in timing.pipe_columns(aic)] == [
        ("M", "aic_mac_time(us)", "aic_mac_ratio"), ("S", "aic_scalar_time(us)", "aic_scalar_ratio"),
        ("MTE1", "aic_mte1_time(us)", "aic_mte1_ratio"), ("MTE2", "aic_mte2_time(us)", "aic_mte2_ratio")]


def test_an_analysis_observes_every_record_without_an_edit_to_record():
    """``Core.observe``: an observer sees each instruction before it is appended, with its reads and writes; one
    registered ``first`` runs ahead of the others; one that raises keeps the instruction out of the Trace."""
    seen, order = [], []

    def note(core, op, pipe, reads, writes, sync):
        seen.append((op, pipe, tuple(a.mem for a in reads), tuple(a.mem for a in writes)))

    def refuse(core, op, pipe, reads, writes, sync):
        order.append(op)
        if op == "adds":
            raise core.error(op, "refused by the test's observer")

    @asc.jit
    def kernel(x, n: asc.ConstExpr[int]):
        core = current()
        core.observe(note)
        core.observe(refuse, first=True)
        core.observe(note)  # already registered: stays where it is
        assert core.observers == [refuse, note]
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, n)
        asc.data_copy(t, gm_view(x, n), n)
        asc.set_flag(E.MTE2_V, 0)
        asc.wait_flag(E.MTE2_V, 0)
        asc.adds(t, t, 1.0, n)

    with pytest.raises(asc.KernelError, match="refused by the test's observer") as info:
        kernel[1](np.zeros(8, np.float32), 8)
    assert seen == [("data_copy", Pipe.MTE2, (Mem.GM,), (Mem.UB,)), ("set_flag", Pipe.MTE2, (), ()),
                    ("wait_flag", Pipe.V, (), ())]
    assert order == ["data_copy", "set_flag", "wait_flag", "adds"]
    assert [i.op for i in info.value.trace.cores[0]] == ["data_copy", "set_flag", "wait_flag"]
