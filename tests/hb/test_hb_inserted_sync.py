"""Every synchronisation automatic synchronisation inserts means what the same instruction written by hand means.

Sources (asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核内同步/``; AD-G = ``docs/zh/guide/``):
- 关键特性说明.md, 表3 and 使用约束: with ``--cce-auto-sync`` (pyasc's ``auto_sync=True`` default) the compiler
  inserts the PIPE_V barriers and the S <-> V / MTE2 / MTE3 flags around LocalTensor GetValue / SetValue and
  GlobalTensor GetValue; AD-G Scalar读写数据.md shows the pairs a developer writes without it.
- 核内同步能力概述.md, SetFlag/WaitFlag: a set runs once its pipe's earlier instructions are done; a wait blocks its
  pipe. AD-G 基本架构.md ("典型的指令流"): the scalar unit issues every instruction, so a wait on S stalls all of them
  (``docs/ascendc-model.md``, "The scalar unit issues everything").
- pyasc ``lib/Dialect/Asc/Transforms/InsertSync.cpp``: a LocalTensorAuto's enque is placed right after its writer.

Each test runs one kernel twice: built with automatic synchronisation and no flags of that kind, and built without
it (``auto_sync=False``) with the same flags written by hand, placed as the compiler places them. Expected: the same
findings, the same happens-before answer for every pair of conflicting data instructions, the same schedule.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.hb import trace_order
from fusekit.sanitizer import sanitize
from fusekit.timing import load, schedule

E = asc.HardEvent
TILES = 4


def _flag(event, hand: bool) -> None:
    if hand:
        asc.set_flag(event, 0)
        asc.wait_flag(event, 0)


@asc.jit
def scalar_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str], HAND: asc.ConstExpr[bool]):
    """One member of the class per MODE; HAND writes the flags automatic synchronisation would insert."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 16)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 16)
    if MODE == "set_value":
        asc.duplicate(t, 1.0, 16)
    for i in range(TILES):
        if MODE == "set_value" and HAND:
            asc.pipe_barrier(asc.PipeID.PIPE_V)  # adds reads t: written by duplicate, or the last tile's adds
        if MODE == "mte2_s":      # the issue's example: a per-tile scale copied into one UB slot, read by S
            asc.data_copy(t, x_gm[i * 16:], 16)
            _flag(E.MTE2_S, HAND)
            s = t.get_value(0)
            asc.duplicate(u, s, 16)
            asc.set_flag(E.V_MTE3, 0)
            asc.wait_flag(E.V_MTE3, 0)
            asc.data_copy(y_gm[i * 16:], u, 16)
            asc.set_flag(E.MTE3_V, 0)
            asc.wait_flag(E.MTE3_V, 0)
        if MODE == "v_s":         # V writes u then t; S reads t: the stall orders the copy-out of u
            asc.duplicate(u, float(i), 16)
            asc.duplicate(t, 2.0, 16)
            _flag(E.V_S, HAND)
            s = t.get_value(0)
            asc.data_copy(y_gm[i * 16:], u, 16)
            asc.set_flag(E.MTE3_V, 0)
            asc.wait_flag(E.MTE3_V, 0)
        if MODE == "mte3_s":      # MTE3 reads t, S overwrites it (WAR): the stall orders the read before V's refill
            _flag(E.S_V, HAND and i > 0)  # duplicate overwrites what the last tile's set_value wrote (WAW)
            asc.duplicate(t, float(i), 16)
            asc.set_flag(E.V_MTE3, 0)
            asc.wait_flag(E.V_MTE3, 0)
            asc.data_copy(y_gm[i * 16:], t, 16)
            _flag(E.MTE3_S, HAND)
            t.set_value(0, 5.0)
        if MODE == "set_value":   # V reads t, S overwrites it (WAR), V reads it again (RAW)
            asc.adds(u, t, 1.0, 16)
            _flag(E.V_S, HAND)
            t.set_value(0, float(i))
            asc.data_copy(y_gm[i * 16:], u, 16)    # ordered after adds by the V_S stall
            asc.set_flag(E.MTE3_V, 0)
            asc.wait_flag(E.MTE3_V, 0)
            _flag(E.S_V, HAND)
            asc.adds(t, t, 0.0, 16)


@asc.jit
def queue_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, HAND: asc.ConstExpr[bool]):
    """A VECIN queue's deque waits on V only (MTE2_V): the scalar read after it needs its own MTE2_S."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 64)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 1024, 16)
    for i in range(TILES):
        t = q.alloc_tensor(asc.float32)
        asc.data_copy(t, x_gm[i * 16:], 16)
        q.enque(t)
        t = q.deque(asc.float32)
        _flag(E.MTE2_S, HAND)
        s = t.get_value(0)
        asc.muls(u, t, s, 16)
        q.free_tensor(t)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm[i * 16:], u, 16)
        asc.set_flag(E.MTE3_V, 0)
        asc.wait_flag(E.MTE3_V, 0)


@asc.jit
def vector_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, HAND: asc.ConstExpr[bool]):
    """The PipeBarrier page's Add then dependent Mul, per tile."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 16)
    d = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 16)
    e = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 512, 16)
    for i in range(TILES):
        asc.data_copy(a, x_gm[i * 16:], 16)
        asc.set_flag(E.MTE2_V, 0)
        asc.wait_flag(E.MTE2_V, 0)
        asc.add(d, a, a, 16)
        if HAND:
            asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.mul(e, d, a, 16)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm[i * 16:], e, 16)
        asc.set_flag(E.V_MTE2, 0)     # the next tile's copy overwrites a, which add and mul read
        asc.wait_flag(E.V_MTE2, 0)
        asc.set_flag(E.MTE3_V, 0)
        asc.wait_flag(E.MTE3_V, 0)


def _run(kernel, *args):
    """(findings, data instructions, their pairwise hb answers on conflicting accesses, schedule) of both builds."""
    out = []
    for hand in (False, True):
        x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
        report = sanitize(kernel, auto_sync=not hand, outputs=["y"])[1](x, y, *args, hand)
        trace = report.trace
        found = sorted((f.tool, f.kind, f.pipes) for f in report.findings)
        order = trace_order(trace)[0]
        data = [i for i, ins in enumerate(trace.cores[0]) if ins.sync is None]
        ops = [trace.cores[0][i].op for i in data]
        hb = {(n, m): order.before(data[n], data[m]) for n in range(len(data)) for m in range(n + 1, len(data))
              if _conflict(trace.cores[0][data[n]], trace.cores[0][data[m]])}
        sched = schedule(trace, load("Ascend910B1")).cores[0]
        starts = [sched.start[i] for i in data]
        out.append((found, ops, hb, starts, sched.finish_us, y.copy()))
    return out


def _conflict(a, b) -> bool:
    """Whether two instructions touch overlapping bytes of one memory, at least one of them writing."""
    def hits(xs, ys):
        return any(p.mem is q.mem and p.buffer == q.buffer and p.start < q.stop and q.start < p.stop
                   for p in xs for q in ys)
    return hits(a.writes, b.reads + b.writes) or hits(a.reads, b.writes)


def _same(auto, hand, findings=None):
    assert auto[0] == hand[0], (auto[0], hand[0])
    if findings is not None:
        assert auto[0] == findings
    assert auto[1] == hand[1]
    assert auto[2] == hand[2]
    assert auto[3] == pytest.approx(hand[3], abs=1e-9), "data instructions start at other times"
    assert auto[4] == pytest.approx(hand[4], abs=1e-9)
    np.testing.assert_array_equal(auto[5], hand[5])


@pytest.mark.parametrize("mode", ["mte2_s", "v_s", "mte3_s", "set_value"])
def test_an_inserted_scalar_flag_pair_means_the_written_pair(mode):
    """An inserted X_S / S_X pair orders (and costs) what the same pair written by hand does."""
    auto, hand = _run(scalar_kernel, mode)
    _same(auto, hand, findings=[])


def test_the_issue_example_orders_the_tiles_copies_through_the_stall():
    """Issue 18 A: the inserted MTE2_S wait stalls S, so tile i+1's copy into the slot follows tile i's."""
    auto, _ = _run(scalar_kernel, "mte2_s")
    ops = auto[1]
    copies = [n for n, op in enumerate(ops) if op == "data_copy"][::2]  # the copies into the slot
    assert all(auto[2][(a, b)] for a, b in zip(copies, copies[1:]))


def test_a_queue_deque_then_scalar_read_gets_the_mte2_s_pair():
    """A VECIN deque waits on V; the inserted MTE2_S before get_value is a stall as a written one is."""
    auto, hand = _run(queue_kernel)
    _same(auto, hand, findings=[])


def test_an_inserted_pipe_v_barrier_means_the_written_barrier():
    """The PIPE_V barrier automatic synchronisation inserts between add and mul costs what a written one costs."""
    auto, hand = _run(vector_kernel)
    _same(auto, hand, findings=[])


@asc.jit
def auto_tensor_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, AUTO: asc.ConstExpr[bool]):
    """a is refilled by MTE2 then read by V through an inserted (AUTO) or written MTE2_V pair; b, copied in after a,
    is read by V with no sync of its own: a race, since the pair's set stands right after a's copy."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    a = asc.LocalTensorAuto(asc.float32, 8) if AUTO else asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 256, 8)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 512, 8)
    asc.data_copy(a, x_gm, 8)
    if not AUTO:
        asc.set_flag(E.MTE2_V, 0)   # pyasc's enque right after the writer (InsertSync.cpp)
    asc.data_copy(b, x_gm[8:], 8)
    if not AUTO:
        asc.wait_flag(E.MTE2_V, 0)
    asc.add(c, a, b, 8)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, c, 8)


def test_a_local_tensor_auto_set_stands_after_its_producer():
    """The MTE2_V pair of a LocalTensorAuto orders a's copy only, not the MTE2 copy recorded after it."""
    reports = [sanitize(auto_tensor_kernel, outputs=["y"])[1](np.arange(64, dtype=np.float32),
                                                              np.zeros(64, np.float32), auto) for auto in (True, False)]
    races = [sorted((f.kind, f.pipes, f.tensor) for f in r.findings if f.tool == "racecheck") for r in reports]
    assert races[0] == races[1] and len(races[0]) == 1 and races[0][0][:2] == ("RAW", ("MTE2", "V"))
    assert races[0][0][2].startswith("UB@256")  # b, not the auto tensor


@asc.jit
def auto_tile_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, HAND: asc.ConstExpr[bool]):
    """Per tile: copy a in, read a[0] on S, c = a * a[0] on V, copy c out. Built with LocalTensorAuto (not HAND), or
    with plain tensors and, by hand, exactly the pairs fusekit inserts, placed where pyasc's InsertSync.cpp places
    them: each set right after its producer (the enque after the writer), each wait right before its consumer."""
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    for i in range(TILES):
        if HAND:
            a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 16)
            c = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 16)
        else:
            a = asc.LocalTensorAuto(asc.float32, 16)
            c = asc.LocalTensorAuto(asc.float32, 16)
        if HAND and i > 0:
            asc.wait_flag(E.S_MTE2, 0)
            asc.wait_flag(E.V_MTE2, 0)
        asc.data_copy(a, x_gm[i * 16:], 16)
        if HAND:
            asc.set_flag(E.MTE2_S, 0)
            asc.set_flag(E.MTE2_V, 0)
            asc.wait_flag(E.MTE2_S, 0)
        s = a.get_value(0)
        if HAND:
            if i < TILES - 1:
                asc.set_flag(E.S_MTE2, 0)
            asc.wait_flag(E.MTE2_V, 0)
            if i > 0:
                asc.wait_flag(E.MTE3_V, 0)
        asc.muls(c, a, s, 16)
        if HAND:
            asc.set_flag(E.V_MTE3, 0)
            if i < TILES - 1:
                asc.set_flag(E.V_MTE2, 0)
            asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm[i * 16:], c, 16)
        if HAND and i < TILES - 1:
            asc.set_flag(E.MTE3_V, 0)


def test_a_local_tensor_auto_pair_costs_what_the_pair_written_at_pyasc_places_costs():
    """The timing model issues a LocalTensorAuto set in the slot right after its producer (pyasc's enque), not in
    the slot before its consumer where the Trace records it: the auto kernel's schedule is the hand kernel's."""
    auto, hand = _run(auto_tile_kernel)
    _same(auto, hand, findings=[])


def test_local_tensor_auto_pairs_are_not_pruned():
    """pyasc's InsertSync.cpp is a fixed scheme (an enque/deque after every write, a pair around every scalar
    access), so a pair that adds no ordering is still emitted and costs its slots: the MTE2_V pair after the MTE2_S
    stall and the S_MTE2 pair after the get_value stay."""
    from fusekit.asc import autosync
    trace = auto_tile_kernel[1](np.arange(64, dtype=np.float32), np.zeros(64, np.float32), False).trace
    waits = [i.sync.event[1] for i in trace.cores[0] if autosync.is_auto(i) and i.sync.kind.value == "wait"]
    assert waits[:3] == ["MTE2_S", "MTE2_V", "V_MTE3"]
    assert waits[3:5] == ["S_MTE2", "V_MTE2"]
