"""What a stalled scalar unit orders (``fusekit.hb`` rule 4; issue 8 A).

Sources: the scalar unit issues every other instruction into the queues of the pipes (AD-G
编程指南/高级编程/硬件实现/基本架构.md, "典型的指令流": "其他指令会被Scalar单元调度到独立的分类序列");
a WaitFlag blocks every later instruction of its destination pipe until the matching SetFlag, which
runs once the source pipe's earlier instructions have finished (AD-API 核内同步/SetFlag-WaitFlag,
核内同步能力概述.md). With the scalar unit as destination, nothing after the wait is issued, on any
pipe, before the awaited producer is done; the same for a scalar read (its value is needed),
``pipe_barrier(PIPE_ALL)`` (PipeBarrier(ISASI).md: waits for every earlier instruction of every
pipe) and ``sync_all``. A wait on another pipe orders only that pipe.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Instr, Mem, Pipe, Sync, SyncKind
from fusekit.hb import core_order
from fusekit.sanitizer import sanitize

E = asc.HardEvent
V, MTE2, MTE3, S = Pipe.V, Pipe.MTE2, Pipe.MTE3, Pipe.S


def found(kernel, *args, **options):
    return sorted((f.tool, f.kind, f.pipes) for f in sanitize(kernel, **options)[1](*args).findings)


# ------------------------------------------------------------------------------------------
# the issue's example and its fix-free variants
# ------------------------------------------------------------------------------------------

@asc.jit
def mte2_s_kernel(s: asc.GlobalAddress, y: asc.GlobalAddress, WAIT: asc.ConstExpr[bool]):
    s_gm = asc.GlobalTensor()
    s_gm.set_global_buffer(s, 16)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 8)
    s_local = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    asc.data_copy(s_local, s_gm, 8)
    asc.set_flag(E.MTE2_S, 0)
    if WAIT:
        asc.wait_flag(E.MTE2_S, 0)
    asc.data_copy(s_local, s_gm[8:], 8)   # a later MTE2 copy: issued only after the wait
    asc.set_flag(E.MTE2_MTE3, 0)
    asc.wait_flag(E.MTE2_MTE3, 0)
    asc.data_copy(y_gm, s_local, 8)
    if not WAIT:
        asc.wait_flag(E.MTE2_S, 0)


def test_issue_example_a_wait_on_s_orders_later_mte2_copies():
    """Regression: issue 8, item A (a stalled scalar unit)."""
    s, y = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    assert found(mte2_s_kernel, s, y, True) == []  # issue 8 A: "Expected: no findings"
    assert y.tolist() == list(range(8, 16))
    # the same copies with the wait moved after them: nothing orders the two MTE2 copies (PipeBarrier
    # page: overlapping MTE2 destinations need PipeBarrier<PIPE_MTE2>)
    assert found(mte2_s_kernel, s, np.zeros(8, np.float32), False) == [("racecheck", "WAW", ("MTE2", "MTE2"))]


@asc.jit
def waits_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 16)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 16)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 256, 8)
    if MODE in ("mte3_s", "mte3_v"):          # MTE3 reads t, then MTE2 refills t (WAR)
        asc.duplicate(t, 3.0, 8)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm, t, 8)
        event = E.MTE3_S if MODE == "mte3_s" else E.MTE3_V
        asc.set_flag(event, 0)
        asc.wait_flag(event, 0)
        asc.data_copy(t, x_gm, 8)
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy(y_gm[8:], t, 8)
    if MODE in ("v_s", "v_mte2"):            # V writes t, MTE3 copies it out (RAW)
        asc.duplicate(t, 5.0, 8)
        event = E.V_S if MODE == "v_s" else E.V_MTE2
        asc.set_flag(event, 0)
        asc.wait_flag(event, 0)
        asc.data_copy(y_gm, t, 8)
        asc.data_copy(y_gm[8:], t, 8)
    if MODE == "get_value":                  # a scalar read after its wait; later MTE2 -> V needs no flag
        asc.data_copy(t, x_gm, 8)
        asc.set_flag(E.MTE2_S, 0)
        asc.wait_flag(E.MTE2_S, 0)
        first = t.get_value(0)
        asc.muls(u, t, first, 8)             # reads t (MTE2's) and is issued after the read returned
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm, u, 8)
        asc.data_copy(y_gm[8:], u, 8)
    if MODE == "get_value_then_refill":      # a scalar read, then MTE2 overwrites what it read (WAR)
        asc.data_copy(t, x_gm, 8)
        asc.set_flag(E.MTE2_S, 0)
        asc.wait_flag(E.MTE2_S, 0)
        first = t.get_value(0)
        asc.data_copy(t, x_gm[8:], 8)        # no MTE2 barrier needed either: the wait ordered the copies
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy(y_gm, t, 8)
        asc.data_copy(y_gm[8:], t, 8)
        assert first == 0.0  # x[0], read before the refill
    if MODE in ("pipe_all", "sync_all"):     # V writes t, MTE3 reads it after the barrier
        asc.duplicate(t, 7.0, 8)
        if MODE == "pipe_all":
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        else:
            asc.sync_all()
        asc.data_copy(y_gm, t, 8)
        asc.data_copy(y_gm[8:], t, 8)


@pytest.mark.parametrize("mode, want", [
    ("mte3_s", []),                                           # the MTE3 read is done before MTE2 is issued
    # a wait on V orders only V: the refill races with the MTE3 read and with duplicate's write
    ("mte3_v", [("racecheck", "WAR", ("MTE3", "MTE2")), ("racecheck", "WAW", ("V", "MTE2"))]),
    ("v_s", []),                                              # the copies out are issued after V finished
    ("v_mte2", [("racecheck", "RAW", ("V", "MTE3")), ("racecheck", "RAW", ("V", "MTE3"))]),  # orders MTE2 only
    ("get_value", []),
    ("get_value_then_refill", []),
    ("pipe_all", []),
    ("sync_all", []),
])
def test_what_a_blocked_scalar_unit_orders(mode, want):
    """Regression: issue 8, item A (a stalled scalar unit)."""
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    report = sanitize(waits_kernel)[1](x, y, mode)
    assert sorted((f.tool, f.kind, f.pipes) for f in report.findings for _ in range(f.count)) == sorted(want)


def test_values_of_the_blocked_scalar_kernels():
    """Regression: issue 8, item A (a stalled scalar unit)."""
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    waits_kernel[1](x, y, "get_value")
    assert y.tolist() == [0.0] * 16  # muls by x[0] = 0
    y = np.zeros(16, np.float32)
    waits_kernel[1](x, y, "get_value_then_refill")
    assert y.tolist() == list(range(8, 16)) * 2


# ------------------------------------------------------------------------------------------
# the clocks themselves, on hand-made traces
# ------------------------------------------------------------------------------------------

def ub(a, b):
    return Access(Mem.UB, "UB", a, b, "t")


def make(*specs):
    return [Instr(0, i, op, pipe, tuple(r), tuple(w), (), sync, file="k.py", line=i + 1)
            for i, (op, pipe, r, w, sync) in enumerate(specs)]


def flag(kind, event, src, dst):
    return Sync(kind, src, dst, ("flag", event, 0))


@pytest.mark.parametrize("event, src", [("MTE2_S", MTE2), ("V_S", V), ("MTE3_S", MTE3)])
def test_a_wait_on_s_orders_every_later_pipe(event, src):
    """Regression: issue 8, item A (a stalled scalar unit)."""
    producer = {MTE2: ("data_copy", MTE2, [], [ub(0, 32)], None), V: ("adds", V, [], [ub(0, 32)], None),
                MTE3: ("data_copy", MTE3, [ub(0, 32)], [], None)}[src]
    order = core_order(make(producer,
                            ("set_flag", src, [], [], flag(SyncKind.SET, event, src, S)),
                            ("wait_flag", S, [], [], flag(SyncKind.WAIT, event, src, S)),
                            ("data_copy", MTE2, [], [ub(64, 96)], None),
                            ("adds", V, [], [ub(96, 128)], None),
                            ("data_copy", MTE3, [ub(128, 160)], [], None),
                            ("set_value", S, [], [ub(160, 164)], None)), auto_sync=False)
    assert all(order.before(0, later) for later in (3, 4, 5, 6))


def test_a_wait_on_another_pipe_orders_that_pipe_only():
    """Regression: issue 8, item A (a stalled scalar unit)."""
    order = core_order(make(("data_copy", MTE2, [], [ub(0, 32)], None),
                            ("set_flag", MTE2, [], [], flag(SyncKind.SET, "MTE2_V", MTE2, V)),
                            ("wait_flag", V, [], [], flag(SyncKind.WAIT, "MTE2_V", MTE2, V)),
                            ("data_copy", MTE2, [], [ub(64, 96)], None),
                            ("adds", V, [], [ub(96, 128)], None),
                            ("data_copy", MTE3, [ub(128, 160)], [], None)))
    assert order.before(0, 4)
    assert not order.before(0, 3) and not order.before(0, 5)


def test_a_scalar_read_orders_everything_after_it_but_a_scalar_store_does_not():
    """Regression: issue 8, item A (a stalled scalar unit)."""
    instrs = make(("get_value", S, [ub(0, 4)], [], None),
                  ("data_copy", MTE2, [], [ub(0, 32)], None),
                  ("set_value", S, [], [ub(64, 68)], None),
                  ("adds", V, [ub(64, 96)], [ub(64, 96)], None))
    manual = core_order(instrs, auto_sync=False)
    assert manual.before(0, 1)
    assert not manual.before(2, 3)  # without auto sync a store needs S_V before PIPE_V reads it (Scalar读写数据.md)
    assert core_order(instrs).before(2, 3)  # with it the compiler inserts S_V (关键特性说明.md, 表3)
