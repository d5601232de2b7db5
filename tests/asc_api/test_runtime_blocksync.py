"""Inter-block sync through a GM workspace (IBSet.md / IBWait.md, NotifyNextBlock.md / WaitPreBlock.md) and
DataSyncBarrier(ISASI).md, with our own kernels. Expected values come from the pages' semantics written here."""

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Pipe, SyncKind
from fusekit.hb import before_across, core_order, trace_order
from fusekit.sanitizer import analyze
from support import gm_view

THIS_FILE = __file__
N = 64  # float32 per core: 256 B


def line_of(marker):
    return next(k for k, text in enumerate(open(THIS_FILE).read().splitlines(), 1) if marker in text)


@asc.jit
def relay(x: asc.GlobalAddress, out: asc.GlobalAddress, ws: asc.GlobalAddress, synced: asc.ConstExpr[bool]):
    """Core 0 writes x + 1 to out[0:N]; core 1 reads it back (after ib_wait) and writes 2 * it to out[N:2N]."""
    idx = asc.get_block_idx()
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    flag_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=q_in, num=1, len=N * 4)
    pipe.init_buffer(que=q_out, num=1, len=N * 4)
    pipe.init_buffer(buf=flag_buf, num=32)
    ws_gm = gm_view(ws, asc.get_block_num() * 8)
    ub_ws = flag_buf.get(asc.int32)
    src = gm_view(x, N) if idx == 0 else gm_view(out, N)
    if idx == 1 and synced:
        asc.ib_wait(ws_gm, ub_ws, 0, 0)
    a = q_in.alloc_tensor(asc.float32)
    asc.data_copy(a, src, count=N)
    q_in.enque(a)
    a = q_in.deque(asc.float32)
    b = q_out.alloc_tensor(asc.float32)
    if idx == 0:
        asc.adds(b, a, 1.0, count=N)
    else:
        asc.muls(b, a, 2.0, count=N)
    q_out.enque(b)
    q_in.free_tensor(a)
    b = q_out.deque(asc.float32)
    asc.data_copy(gm_view(out + idx * N, N), b, count=N)
    q_out.free_tensor(b)
    if idx == 0 and synced:
        asc.ib_set(ws_gm, ub_ws, 0, 0)


@pytest.mark.parametrize("reverse", [False, True])
def test_ib_wait_sees_what_the_setting_core_wrote(reverse):
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(2 * N, np.float32)
    ws = np.zeros(2 * 8, np.int32)
    result = asc.launch(relay, 2, (x, out, ws, True), reverse_cores=reverse)
    np.testing.assert_array_equal(out[:N], x + 1)
    np.testing.assert_array_equal(out[N:], (x + 1) * 2)
    assert ws.tolist() == [0] * 16  # IBSet wrote 1, IBWait cleared it (kernel_operator_block_sync_intf_impl.h)
    assert not [f for f in analyze(result.trace) if f.tool == "racecheck"]


def test_ib_trace_links_the_wait_to_the_set_for_happens_before():
    trace = relay[2](np.zeros(N, np.float32), np.zeros(2 * N, np.float32), np.zeros(16, np.int32), True).trace
    c0, c1 = trace.cores
    s = next(i for i in c0 if i.op == "ib_set" and i.sync.kind is SyncKind.SET)
    w = next(i for i in c1 if i.op == "ib_wait" and i.sync.kind is SyncKind.WAIT)
    assert (s.pipe, w.pipe) == (Pipe.S, Pipe.S)
    assert w.sync.event[-1] == ((0, s.seq),)
    orders = trace_order(trace)
    store0 = next(i for i in c0 if i.op == "data_copy" and i.writes and i.writes[0].buffer == "out")
    load1 = next(i for i in c1 if i.op == "data_copy" and i.reads and i.reads[0].buffer == "out")
    assert before_across(orders, (0, store0.seq), (1, load1.seq))
    assert not before_across(orders, (1, load1.seq), (0, store0.seq))


def test_without_ib_sync_the_sanitizer_reports_the_cross_core_race():
    trace = relay[2](np.zeros(N, np.float32), np.zeros(2 * N, np.float32), np.zeros(16, np.int32), False).trace
    races = [f for f in analyze(trace) if f.tool == "racecheck"]
    assert races and set(races[0].cores) == {0, 1}


@asc.jit
def lonely_wait(ws: asc.GlobalAddress):
    ws_gm = gm_view(ws, 24)
    ub = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 8)
    if asc.get_block_idx() == 1:
        asc.ib_wait(ws_gm, ub, 0, 1)  # <lonely>


def test_an_ib_wait_nobody_sets_is_a_deadlock_at_the_wait():
    with pytest.raises(asc.KernelError, match="deadlock") as info:
        lonely_wait[2](np.zeros(24, np.int32))
    assert info.value.kind == "deadlock" and info.value.line == line_of("# <lonely>")
    assert "ib_set" in str(info.value)


@asc.jit
def double_set(ws: asc.GlobalAddress):
    ws_gm = gm_view(ws, 8)
    ub = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 8)
    asc.ib_set(ws_gm, ub, 0, 0)
    asc.ib_set(ws_gm, ub, 0, 0)  # <again>: waits for the flag to read 0 again


def test_a_second_set_before_any_wait_hangs():
    with pytest.raises(asc.KernelError, match="deadlock") as info:
        double_set[1](np.zeros(8, np.int32))
    assert info.value.line == line_of("# <again>")


@pytest.mark.parametrize("size, block_idx, event_id, match", [
    (8, 0, 1, "needs block_num"),          # flag of event 1 sits at 1 * 8 * 1 + 0 = element 8: past 8 int32
    (16, 1, 0, r"block_idx=1: must be an integer in \[0, 1\)"),
    (16, 0, -1, "event_id=-1"),
])
def test_ib_workspace_size_and_ranges_are_checked(size, block_idx, event_id, match):
    @asc.jit
    def k(ws: asc.GlobalAddress):
        ub = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 8)
        asc.ib_set(gm_view(ws, size), ub, block_idx, event_id)

    with pytest.raises(asc.KernelError, match=match):
        k[1](np.zeros(16, np.int32))


def test_ib_refuses_a_mixed_launch_and_non_int32_workspaces():
    @asc.jit
    def mix(ws: asc.GlobalAddress):
        asc.ib_set(gm_view(ws, 8), asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 8), 0, 0, False)

    @asc.jit
    def f32(ws: asc.GlobalAddress):
        asc.ib_wait(gm_view(ws, 8), asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 8), 0, 0)

    with pytest.raises(asc.KernelError, match="mixed launch"):
        mix[1](np.zeros(8, np.int32))
    with pytest.raises(asc.KernelError, match="int32"):
        f32[1](np.zeros(8, np.float32))


@asc.jit
def ordered_fold(acc: asc.GlobalAddress, ws: asc.GlobalAddress, rounds: int):
    """acc = acc * 10 + (block index + 1), each round in block order: only ascending order gives 1234."""
    n = asc.get_block_num()
    idx = asc.get_block_idx()
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=q, num=1, len=32)
    pipe.init_buffer(que=q_out, num=1, len=32)
    pipe.init_buffer(buf=buf, num=n * 32 + 32)
    ub_ws = buf.get(asc.int32)
    ub_ws.set_value(n * 8, 1)  # the round counter (InitDetermineComputeWorkspace's job in Ascend C)
    ws_gm = gm_view(ws, n * 8)
    acc_gm = gm_view(acc, 8)
    for r in range(rounds):
        asc.wait_pre_block(ws_gm, ub_ws)
        a = q.alloc_tensor(asc.int32)
        asc.data_copy(a, acc_gm, count=8)
        q.enque(a)
        a = q.deque(asc.int32)
        b = q_out.alloc_tensor(asc.int32)
        asc.muls(b, a, 10, count=8)
        asc.adds(b, b, idx + 1, count=8)
        q_out.enque(b)
        q.free_tensor(a)
        b = q_out.deque(asc.int32)
        asc.data_copy(acc_gm, b, count=8)
        q_out.free_tensor(b)
        asc.notify_next_block(ws_gm, ub_ws)


def fold_model(n, rounds):
    value = 0
    for _ in range(rounds):
        for i in range(n):  # ascending block order, as WaitPreBlock.md promises
            value = value * 10 + i + 1
    return value


@pytest.mark.parametrize("n, rounds, reverse", [(4, 1, False), (4, 1, True), (3, 2, True), (1, 3, False)])
def test_wait_pre_block_runs_the_section_in_block_order(n, rounds, reverse):
    acc = np.zeros(8, np.int32)
    ws = np.zeros(n * 8, np.int32)
    result = asc.launch(ordered_fold, n, (acc, ws, rounds), reverse_cores=reverse)
    assert acc.tolist() == [fold_model(n, rounds)] * 8
    # every round ends with the last block clearing the slots (NotifyNextBlock on blockIdx + 1 == blockNum)
    assert ws.tolist() == [0] * (n * 8)
    findings = analyze(result.trace)
    assert not [f for f in findings if f.tool in ("racecheck", "memcheck")], findings


def test_block_order_is_transitive_in_happens_before():
    trace = ordered_fold[3](np.zeros(8, np.int32), np.zeros(24, np.int32), 1).trace
    orders = trace_order(trace)
    store0 = next(i for i in trace.cores[0] if i.op == "data_copy" and i.writes[0].buffer == "acc")
    load2 = next(i for i in trace.cores[2] if i.op == "data_copy" and i.reads and i.reads[0].buffer == "acc")
    assert before_across(orders, (0, store0.seq), (2, load2.seq))


def test_a_workspace_that_does_not_start_as_zeros_hangs():
    with pytest.raises(asc.KernelError, match="deadlock") as info:
        ordered_fold[2](np.zeros(8, np.int32), np.ones(16, np.int32), 1)
    assert "must start as zeros" in str(info.value) and info.value.op == "wait_pre_block"


def test_wait_pre_block_workspace_sizes_cite_the_page():
    @asc.jit
    def small(ws: asc.GlobalAddress):
        ub = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 2 * 8)  # needs 2 * 8 + 1
        asc.wait_pre_block(gm_view(ws, 16), ub)

    with pytest.raises(asc.KernelError, match=r"block_num \* 32 \+ 32 B"):
        small[2](np.zeros(16, np.int32))


# -- data_sync_barrier -----------------------------------------------------------------------------------

@asc.jit
def dsb(x: asc.GlobalAddress, kind: asc.ConstExpr[int]):
    ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    asc.data_copy(ub, gm_view(x, N), count=N)
    asc.data_sync_barrier(asc.MemDsbT(kind))
    asc.adds(ub, ub, 1.0, count=N)


@pytest.mark.parametrize("kind", [asc.MemDsbT.ALL, asc.MemDsbT.DDR, asc.MemDsbT.UB])
def test_data_sync_barrier_orders_earlier_memory_accesses_before_later_instructions(kind):
    instrs = dsb[1](np.zeros(N, np.float32), int(kind)).trace.cores[0]
    order = core_order(instrs, auto_sync=False)
    load = next(i for i, ins in enumerate(instrs) if ins.op == "data_copy")
    add = next(i for i, ins in enumerate(instrs) if ins.op == "adds")
    assert order.before(load, add)  # MTE2 load -> V add: only the barrier orders them here


def test_without_data_sync_barrier_the_pair_is_unordered():
    @asc.jit
    def bare(x: asc.GlobalAddress):
        ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
        asc.data_copy(ub, gm_view(x, N), count=N)
        asc.adds(ub, ub, 1.0, count=N)

    instrs = bare[1](np.zeros(N, np.float32)).trace.cores[0]
    assert not core_order(instrs, auto_sync=False).before(0, 1)


def test_data_sync_barrier_refusals():
    with pytest.raises(asc.KernelError, match="SEQ"):
        dsb[1](np.zeros(N, np.float32), int(asc.MemDsbT.SEQ))
    with pytest.raises(asc.KernelError, match="Atlas A2/A3 only"):
        asc.launch(dsb, 1, (np.zeros(N, np.float32), 0), soc="Ascend310P3")


@asc.jit
def halves(out: asc.GlobalAddress, ws: asc.GlobalAddress, whole: asc.ConstExpr[bool]):
    """Core 0 then core 1 (ordered by ib_set / ib_wait) store into the same 32 B block of out: each its own
    half (16 B, data_copy_pad), or each the whole block."""
    idx = asc.get_block_idx()
    ub = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 0, 8)
    flag = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 256, 8)
    ws_gm = gm_view(ws, 16)
    if idx == 1:
        asc.ib_wait(ws_gm, flag, 0, 0)
    asc.duplicate(ub, float(idx + 1), 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    if whole:
        asc.data_copy(gm_view(out, 8), ub, count=8)
    else:
        asc.data_copy_pad(gm_view(out + 4 * idx, 4), ub, asc.DataCopyExtParams(1, 16, 0, 0, 0))
    if idx == 0:
        asc.ib_set(ws_gm, flag, 0, 0)


def test_memcheck_keeps_partial_block_writes_even_when_ordered():
    # ordered whole-block rewrites (a block-ordered accumulation) are fine; halves of one block still share it
    whole = analyze(halves[2](np.zeros(8, np.float32), np.zeros(16, np.int32), True).trace)
    assert not [f for f in whole if f.tool == "memcheck"], whole
    out = np.zeros(8, np.float32)
    half = analyze(halves[2](out, np.zeros(16, np.int32), False).trace)
    assert out.tolist() == [1.0] * 4 + [2.0] * 4
    assert [f for f in half if f.kind == "overlapping block write"], half


@asc.jit
def backwards(out: asc.GlobalAddress, ws: asc.GlobalAddress):
    """Core 1 produces out[0:N] and sets; core 0 waits, then reads it: the dependency runs from the higher block
    to the lower one, so the sanitizer's scan must order core 1's store before core 0's load (hb.program_order)."""
    idx = asc.get_block_idx()
    ub = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, N)
    flag = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 4 * N, 8)
    ws_gm = gm_view(ws, 16)
    if idx == 1:
        asc.duplicate(ub, 7.0, N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(gm_view(out, N), ub, count=N)
        asc.ib_set(ws_gm, flag, 1, 0)
    else:
        asc.ib_wait(ws_gm, flag, 1, 0)
        asc.data_copy(ub, gm_view(out, N), count=N)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.adds(ub, ub, 1.0, count=N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(gm_view(out + N, N), ub, count=N)


def test_a_higher_block_can_release_a_lower_one():
    out = np.zeros(2 * N, np.float32)
    result = backwards[2](out, np.zeros(16, np.int32))
    assert out.tolist() == [7.0] * N + [8.0] * N
    findings = analyze(result.trace, outputs=["out"])
    assert not [f for f in findings if f.tool in ("racecheck", "initcheck")], findings
