"""Edges of the happens-before model and of UB placement, each a small kernel run under ``fusekit.sanitize``.

Each rule comes with its source and with both sides where the documents give both: the correct
kernel has no findings, the kernel missing its synchronisation has exactly the finding the rule
implies. They pin what the sanitizer must keep doing while hb.py changes:

- the scalar pipe keeps its own order: ``PipeBarrier<PIPE_S>`` does not exist because scalar
  ordering is kept by hardware (``docs/ascendc-model.md``, "Same-pipe dependences"; AD-API
  核内同步能力概述.md lists no PIPE_S barrier), so set_value / get_value of one address never race;
- a scalar ``get_value`` returns its value before the next instruction issues, so it happens before
  everything after it (``fusekit.hb`` docstring; "The scalar unit issues everything");
- different pipes are ordered only by a flag pair, ``pipe_barrier(PIPE_ALL)`` or a queue: without
  automatic synchronisation a scalar read of UB written by PIPE_V needs a V_S pair, and a scalar
  write read by PIPE_V or PIPE_MTE3 an S_V / S_MTE3 pair (AD-G 技术附录/.../内存访问原理/Scalar读写数据.md,
  "Scalar读写数据时的同步": with the project's automatic synchronisation on, SetValue / GetValue need
  no manual sync; with it off, its example inserts S_V and S_MTE3). Those tests run with
  ``auto_sync=False``;
- a ``set_flag`` covers the instructions of its pipe issued before it, not later ones;
- across cores only ``sync_all`` orders GM accesses (``docs/ascendc-model.md``, "Cross-core synchronisation": SyncAll);
- a hand-placed ``LocalTensor(dtype, pos, addr, tile_size)`` must end inside the core's UB: 196608 B
  on Ascend910B1, 262144 B on Ascend310P3 (``docs/ascendc-model.md``, "Hardware (vector side)";
  ``fusekit.soc``), to the last byte.
"""

from __future__ import annotations


import numpy as np
import pytest

from fusekit import asc
from fusekit.sanitizer import sanitize
from support import gm_view, line_of

E = asc.HardEvent
THIS_FILE = __file__
UB_BYTES = {"Ascend910B1": 196608, "Ascend310P3": 262144}


def at(kernel, *markers) -> tuple[str, ...]:
    return tuple(f"{THIS_FILE}:{line_of(kernel, m)}" for m in markers)


def findings(kernel, *args, cores: int = 1, **options):
    """The findings of one sanitized launch, less "output never written" (some kernels here write
    one element of y on purpose)."""
    report = sanitize(kernel, **options)[cores](*args)
    return [f for f in report.findings if f.kind != "output never written"]


def keys(found) -> list[tuple]:
    return sorted((f.tool, f.kind, f.pipes, f.locations) for f in found)


# ------------------------------------------------------------------------------------------
# the scalar pipe keeps its order
# ------------------------------------------------------------------------------------------

@asc.jit
def scalar_order_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    xg = gm_view(x, 8)
    yg = gm_view(y, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=32)
    t = buf.get(asc.float32)
    if MODE == "ub":       # write, read back, overwrite, read again: all on PIPE_S, one address
        t.set_value(0, 1.5)  # <ub-set1>
        v = t.get_value(0)  # <ub-get1>
        t.set_value(0, v + 2.0)  # <ub-set2>
        yg.set_value(0, t.get_value(0))  # <ub-get2>
    if MODE == "gm":       # the same on GM through scalar accesses
        yg.set_value(1, xg.get_value(1) * 2.0)  # <gm-set1>
        yg.set_value(1, yg.get_value(1) + 1.0)  # <gm-rmw>
    if MODE == "ub-then-mte3":  # a scalar write copied out without S -> MTE3 sync
        for i in range(8):
            t.set_value(i, 1.0 * i)  # <s-write>
        asc.data_copy(yg, t, 8)  # <mte3-read>
    if MODE == "ub-then-mte3-synced":
        for i in range(8):
            t.set_value(i, 1.0 * i)
        asc.set_flag(E.S_MTE3, 0)
        asc.wait_flag(E.S_MTE3, 0)
        asc.data_copy(yg, t, 8)


@pytest.mark.parametrize("auto_sync", [True, False])
def test_scalar_accesses_of_one_ub_address_never_race(auto_sync):
    y = np.zeros(8, np.float32)
    assert findings(scalar_order_kernel, np.zeros(8, np.float32), y, "ub", auto_sync=auto_sync) == []
    assert y[0] == 3.5  # the read-modify-write saw the earlier store: 1.5 + 2


@pytest.mark.parametrize("auto_sync", [True, False])
def test_scalar_read_modify_write_of_gm_never_races(auto_sync):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    assert findings(scalar_order_kernel, x, y, "gm", auto_sync=auto_sync) == []
    assert y[1] == 3.0  # 1 * 2, then + 1


def test_scalar_write_then_mte3_read_needs_s_mte3_without_auto_sync():
    y = np.zeros(8, np.float32)
    found = findings(scalar_order_kernel, np.zeros(8, np.float32), y, "ub-then-mte3", auto_sync=False)
    assert keys(found) == [("racecheck", "RAW", ("S", "MTE3"), at(scalar_order_kernel, "s-write", "mte3-read"))]
    (race,) = found
    assert (race.mem, race.start, race.cores, race.count) == ("UB", 0, (0,), 8)  # one per set_value of the loop
    assert findings(scalar_order_kernel, np.zeros(8, np.float32), y, "ub-then-mte3-synced", auto_sync=False) == []
    assert y.tolist() == list(range(8))


def test_scalar_write_then_mte3_read_is_synchronised_by_auto_sync():
    """Scalar读写数据.md: with automatic synchronisation on, SetValue / GetValue need no manual sync."""
    y = np.zeros(8, np.float32)
    assert findings(scalar_order_kernel, np.zeros(8, np.float32), y, "ub-then-mte3", auto_sync=True) == []
    assert y.tolist() == list(range(8))


# ------------------------------------------------------------------------------------------
# scalar and vector: get_value returns before anything later issues; V <-> S needs flags
# ------------------------------------------------------------------------------------------

@asc.jit
def scalar_vector_kernel(y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    yg = gm_view(y, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=32)
    t = buf.get(asc.float32)
    asc.duplicate(t, 2.0, 8)  # <dup>
    if MODE == "v-then-s":                  # a scalar read of a vector result, no V -> S sync
        yg.set_value(0, t.get_value(3))  # <v-s-read>
    if MODE == "v-then-s-synced":
        asc.set_flag(E.V_S, 0)
        asc.wait_flag(E.V_S, 0)
        yg.set_value(0, t.get_value(3))
    if MODE == "s-read-then-v-write":       # WAR: the read has returned before adds is issued
        asc.set_flag(E.V_S, 0)
        asc.wait_flag(E.V_S, 0)
        v = t.get_value(3)  # <s-read>
        asc.adds(t, t, 1.0, 8)  # <v-write>
        yg.set_value(0, v)
    if MODE == "s-write-then-v":            # a scalar store read by PIPE_V without S -> V sync
        asc.set_flag(E.V_S, 0)
        asc.wait_flag(E.V_S, 0)
        t.set_value(3, t.get_value(3) + 5.0)  # <s-store>
        asc.adds(t, t, 1.0, 8)  # <v-read>
        asc.set_flag(E.V_S, 1)
        asc.wait_flag(E.V_S, 1)
        yg.set_value(0, t.get_value(3))
    if MODE == "s-write-then-v-synced":
        asc.set_flag(E.V_S, 0)
        asc.wait_flag(E.V_S, 0)
        t.set_value(3, t.get_value(3) + 5.0)    # 2 + 5: read first, so no written value is lost
        asc.set_flag(E.S_V, 0)
        asc.wait_flag(E.S_V, 0)
        asc.adds(t, t, 1.0, 8)
        asc.set_flag(E.V_S, 1)
        asc.wait_flag(E.V_S, 1)
        yg.set_value(0, t.get_value(3))


@pytest.mark.parametrize("mode, want", [
    ("v-then-s", [("racecheck", "RAW", ("V", "S"), ("dup", "v-s-read"))]),
    ("v-then-s-synced", []),
    ("s-read-then-v-write", []),
    ("s-write-then-v", [("racecheck", "RAW", ("S", "V"), ("s-store", "v-read")),
                        ("racecheck", "WAW", ("S", "V"), ("s-store", "v-read"))]),
    ("s-write-then-v-synced", []),
])
def test_scalar_and_vector_pipes_are_ordered_only_by_flags_without_auto_sync(mode, want):
    y = np.zeros(8, np.float32)
    found = findings(scalar_vector_kernel, y, mode, auto_sync=False)
    assert keys(found) == sorted((t, k, p, at(scalar_vector_kernel, *m)) for t, k, p, m in want)
    if mode == "s-read-then-v-write":
        assert y[0] == 2.0  # the value read before adds
    if mode == "s-write-then-v-synced":
        assert y[0] == 8.0


@pytest.mark.parametrize("mode", ["v-then-s", "s-read-then-v-write", "s-write-then-v"])
def test_auto_sync_orders_scalar_and_vector_accesses(mode):
    """The same kernels built with automatic synchronisation need no flags (Scalar读写数据.md)."""
    assert findings(scalar_vector_kernel, np.zeros(8, np.float32), mode, auto_sync=True) == []


# ------------------------------------------------------------------------------------------
# a set_flag covers what its pipe issued before it, not what comes after
# ------------------------------------------------------------------------------------------

@asc.jit
def early_set_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, EARLY: asc.ConstExpr[bool]):
    xg = gm_view(x, 8)
    yg = gm_view(y, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    a = buf.get(asc.float32)
    b = a[8:]
    if EARLY:
        asc.set_flag(E.MTE2_V, 0)  # before the copy: it orders nothing the copy does
    asc.data_copy(a, xg, 8)  # <copy-in>
    if not EARLY:
        asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.muls(b, a, 2.0, 8)  # <muls>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(yg, b, 8)


def test_a_set_flag_before_the_producer_orders_nothing():
    x = np.arange(8, dtype=np.float32)
    assert findings(early_set_kernel, x, np.zeros(8, np.float32), False) == []
    found = findings(early_set_kernel, x, np.zeros(8, np.float32), True)
    assert keys(found) == [("racecheck", "RAW", ("MTE2", "V"), at(early_set_kernel, "copy-in", "muls"))]


# ------------------------------------------------------------------------------------------
# across cores only sync_all orders GM
# ------------------------------------------------------------------------------------------

@asc.jit
def cross_core_kernel(y: asc.GlobalAddress, SYNC: asc.ConstExpr[bool]):
    yg = gm_view(y, 16)
    idx = asc.get_block_idx()
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=32)
    t = buf.get(asc.float32)
    if idx == 0:
        asc.duplicate(t, 5.0, 8)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(yg, t, 8)  # <write>
    if SYNC:
        asc.sync_all()
    if idx == 1:
        asc.data_copy(t, yg, 8)  # <read>
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy(yg[8:], t, 8)


def test_gm_between_cores_is_ordered_by_sync_all_only():
    y = np.zeros(16, np.float32)
    assert findings(cross_core_kernel, y, True, cores=2) == []
    assert y.tolist() == [5.0] * 16
    found = findings(cross_core_kernel, np.zeros(16, np.float32), False, cores=2)
    assert keys(found) == [("racecheck", "RAW", ("MTE3", "MTE2"), at(cross_core_kernel, "write", "read"))]
    (race,) = found
    assert (race.mem, race.buffer, race.start, race.stop, race.cores) == ("GM", "y", 0, 32, (0, 1))


# ------------------------------------------------------------------------------------------
# hand-placed LocalTensors end inside UB
# ------------------------------------------------------------------------------------------

@asc.jit
def placed_kernel(y: asc.GlobalAddress, ADDR: asc.ConstExpr[int], LEN: asc.ConstExpr[int]):
    yg = gm_view(y, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, ADDR, LEN)  # <place>
    asc.duplicate(t, 1.0, 8)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(yg, t, 8)


@pytest.mark.parametrize("soc", list(UB_BYTES))
def test_local_tensor_placed_up_to_the_last_byte_of_ub_is_accepted(soc):
    ub = UB_BYTES[soc]
    y = np.zeros(8, np.float32)
    assert findings(placed_kernel, y, ub - 32, 8, soc=soc) == []   # [ub - 32, ub): the last 32 B block
    assert y.tolist() == [1.0] * 8


@pytest.mark.parametrize("soc", list(UB_BYTES))
@pytest.mark.parametrize("addr, length", [(None, 16), ("end", 8), (0, None)], ids=["straddles", "at-end", "too-long"])
def test_local_tensor_placed_past_the_end_of_ub_is_a_finding(soc, addr, length):
    ub = UB_BYTES[soc]
    addr = ub - 32 if addr is None else ub if addr == "end" else addr
    length = ub // 4 + 8 if length is None else length
    with pytest.raises(asc.KernelError, match=rf"LocalTensor at UB byte {addr} with {length} x float32 ends past "
                                              rf"the {ub} B of UB") as info:
        placed_kernel[1](np.zeros(8, np.float32), addr, length, soc=soc)
    assert (info.value.core, info.value.file, info.value.line) == (0, THIS_FILE, line_of(placed_kernel, "place"))
    found = findings(placed_kernel, np.zeros(8, np.float32), addr, length, soc=soc)
    assert [(f.tool, f.kind, f.locations) for f in found] == [("memcheck", "ub-overflow", at(placed_kernel, "place"))]


# ------------------------------------------------------------------------------------------
# queues pair in order: the n-th deque waits for the n-th enque (a FIFO; AD-G TPipe-TQue框架编程原理.md:
# EnQue sets, DeQue waits; a tensor used before its DeQue has no MTE2 -> V sync)
# ------------------------------------------------------------------------------------------

@asc.jit
def fifo_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, EARLY: asc.ConstExpr[bool]):
    xg = gm_view(x, 16)
    yg = gm_view(y, 8)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q, num=2, len=32)
    pipe.init_buffer(que=out, num=1, len=32)
    a = q.alloc_tensor(asc.float32)
    b = q.alloc_tensor(asc.float32)
    asc.data_copy(a, xg, 8)
    q.enque(a)
    asc.data_copy(b, xg[8:], 8)  # <copy-b>
    q.enque(b)
    first = q.deque(asc.float32)
    c = out.alloc_tensor(asc.float32)
    if EARLY:                                # b is read after the first deque only: its copy is not awaited
        asc.add(c, first, b, 8)  # <add-early>
    second = q.deque(asc.float32)
    if not EARLY:
        asc.add(c, first, second, 8)
    out.enque(c)
    q.free_tensor(first)
    q.free_tensor(second)
    c = out.deque(asc.float32)
    asc.data_copy(yg, c, 8)
    out.free_tensor(c)


def test_the_first_deque_waits_for_the_first_enque_only():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(8, np.float32)
    assert findings(fifo_kernel, x, y, False) == []
    assert y.tolist() == [i + i + 8 for i in range(8)]
    found = findings(fifo_kernel, x, np.zeros(8, np.float32), True)
    assert keys(found) == [("racecheck", "RAW", ("MTE2", "V"), at(fifo_kernel, "copy-b", "add-early"))]


# ------------------------------------------------------------------------------------------
# every unordered reader counts: a write must come after each earlier read, not only the last
# ------------------------------------------------------------------------------------------

@asc.jit
def two_readers_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, FLAG: asc.ConstExpr[bool]):
    xg = gm_view(x, 8)
    yg = gm_view(y, 8)
    zg = gm_view(z, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    t = buf.get(asc.float32)
    u = t[8:]
    asc.data_copy(t, xg, 8)
    asc.set_flag(E.MTE2_MTE3, 0)
    asc.wait_flag(E.MTE2_MTE3, 0)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.data_copy(yg, t, 8)  # <read-mte3>    reader 1, on PIPE_MTE3
    asc.adds(u, t, 1.0, 8)                   # reader 2, on PIPE_V
    if FLAG:
        asc.set_flag(E.MTE3_V, 0)
        asc.wait_flag(E.MTE3_V, 0)
    asc.duplicate(t, 0.0, 8)  # <overwrite>  after reader 2 (same pipe), not after reader 1 without the flag
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(zg, u, 8)


def test_a_write_after_two_readers_waits_for_both():
    x = np.arange(8, dtype=np.float32)
    y, z = np.zeros(8, np.float32), np.zeros(8, np.float32)
    assert findings(two_readers_kernel, x, y, z, True) == []
    assert y.tolist() == x.tolist() and z.tolist() == (x + 1).tolist()
    found = findings(two_readers_kernel, x, np.zeros(8, np.float32), np.zeros(8, np.float32), False)
    assert keys(found) == [("racecheck", "WAR", ("MTE3", "V"), at(two_readers_kernel, "read-mte3", "overwrite"))]


# ------------------------------------------------------------------------------------------
# a flag is one bit: a second set before the wait is redundant, and the wait is released by the
# first set (fusekit.hb: "the n-th wait of an event takes the n-th set"; AD-API 核内同步能力概述.md:
# do not set the same event id twice in a row)
# ------------------------------------------------------------------------------------------

@asc.jit
def double_set_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress):
    xg = gm_view(x, 16)
    yg = gm_view(y, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=96)
    a = buf.get(asc.float32)
    b = a[8:]
    c = a[16:]
    asc.data_copy(a, xg, 8)
    asc.set_flag(E.MTE2_V, 0)  # <set-1>
    asc.data_copy(b, xg[8:], 8)  # <copy-2>
    asc.set_flag(E.MTE2_V, 0)  # <set-2>
    asc.wait_flag(E.MTE2_V, 0)  # released by set-1: copy-2 may still be in flight
    asc.add(c, a, b, 8)  # <add>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(yg, c, 8)


def test_a_wait_pairs_with_the_first_of_two_sets():
    found = findings(double_set_kernel, np.arange(16, dtype=np.float32), np.zeros(8, np.float32))
    k = double_set_kernel
    assert keys(found) == sorted([("racecheck", "RAW", ("MTE2", "V"), at(k, "copy-2", "add")),
                                  ("synccheck", "redundant set_flag", ("MTE2", "V"), at(k, "set-1", "set-2")),
                                  ("synccheck", "set_flag never waited", ("MTE2", "V"), at(k, "set-2"))])
