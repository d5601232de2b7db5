"""The Trace fusekit.asc records: every instruction with pipe, sync, source line and byte ranges.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import numpy as np

from fusekit import asc
from fusekit.asc.trace import Access, Mem, Pipe, Sync, SyncKind

from support import assert_bits_equal, gm_view, line_of

UB_910B1, UB_310P3 = 196608, 262144


# ---------------------------------------------------------------------------------------------
# Trace
# ---------------------------------------------------------------------------------------------

@asc.jit
def trace_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: float, TILE: asc.ConstExpr[int]):
    start = asc.get_block_idx() * TILE
    xg = gm_view(x + start, TILE)
    yg = gm_view(y + start, TILE)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_in, num=1, len=TILE * 2)
    pipe.init_buffer(que=q_out, num=1, len=TILE * 2)
    a = q_in.alloc_tensor(asc.float16)  # <alloc_in>
    asc.data_copy(a, xg, TILE)  # <copy_in>
    q_in.enque(a)  # <enque_in>
    a = q_in.deque(asc.float16)  # <deque_in>
    b = q_out.alloc_tensor(asc.float16)  # <alloc_out>
    asc.muls(b, a, s, TILE)  # <muls>
    q_out.enque(b)  # <enque_out>
    q_in.free_tensor(a)  # <free_in>
    b = q_out.deque(asc.float16)  # <deque_out>
    asc.data_copy(yg, b, TILE)  # <copy_out>
    q_out.free_tensor(b)  # <free_out>
    asc.set_flag(asc.HardEvent.MTE3_S, 3)  # <set_flag>
    asc.wait_flag(asc.HardEvent.MTE3_S, 3)  # <wait_flag>
    v = yg.get_value(0)  # <get_value>
    yg.set_value(1, v)  # <set_value>
    asc.pipe_barrier(asc.PipeID.PIPE_V)  # <pipe_barrier>


def _data(q, slot=0):
    return ("data", q, slot)


def _free(q, slot=0):
    return ("free", q, slot)


# marker, op, pipe, sync. q_in (VECIN) is queue 0: MTE2 -> V; q_out (VECOUT) is queue 1: V -> MTE3.
TRACE_EXPECTED = [
    ("alloc_in", "alloc_tensor", Pipe.MTE2, Sync(SyncKind.WAIT, Pipe.V, Pipe.MTE2, _free(0))),
    ("copy_in", "data_copy", Pipe.MTE2, None),
    ("enque_in", "enque", Pipe.MTE2, Sync(SyncKind.SET, Pipe.MTE2, Pipe.V, _data(0))),
    ("deque_in", "deque", Pipe.V, Sync(SyncKind.WAIT, Pipe.MTE2, Pipe.V, _data(0))),
    ("alloc_out", "alloc_tensor", Pipe.V, Sync(SyncKind.WAIT, Pipe.MTE3, Pipe.V, _free(1))),
    ("muls", "muls", Pipe.V, None),
    ("enque_out", "enque", Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, _data(1))),
    ("free_in", "free_tensor", Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE2, _free(0))),
    ("deque_out", "deque", Pipe.MTE3, Sync(SyncKind.WAIT, Pipe.V, Pipe.MTE3, _data(1))),
    ("copy_out", "data_copy", Pipe.MTE3, None),
    ("free_out", "free_tensor", Pipe.MTE3, Sync(SyncKind.SET, Pipe.MTE3, Pipe.V, _free(1))),
    ("set_flag", "set_flag", Pipe.MTE3, Sync(SyncKind.SET, Pipe.MTE3, Pipe.S, ("flag", "MTE3_S", 3))),
    ("wait_flag", "wait_flag", Pipe.S, Sync(SyncKind.WAIT, Pipe.MTE3, Pipe.S, ("flag", "MTE3_S", 3))),
    ("get_value", "get_value", Pipe.S, None),
    ("set_value", "set_value", Pipe.S, None),
    ("pipe_barrier", "pipe_barrier", Pipe.V, Sync(SyncKind.BARRIER, Pipe.V, Pipe.V, ("PIPE_V",))),
]


def test_trace_records_every_instruction_with_pipe_sync_and_source_line():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    result = trace_kernel[2](x, y, 0.5, 32)
    expected = x * np.float16(0.5)
    expected[1], expected[33] = expected[0], expected[32]
    assert_bits_equal(y, expected)

    trace = result.trace
    assert (trace.kernel, trace.soc, trace.block_dim, trace.ub_bytes) == ("trace_kernel", "Ascend910B1", 2, UB_910B1)
    assert {n: (b.dtype, b.nbytes) for n, b in trace.gm.items()} == {"x": ("float16", 128), "y": ("float16", 128)}
    assert len(trace) == 2 * len(TRACE_EXPECTED)
    for core, instrs in enumerate(trace.cores):
        got = [(i.core, i.seq, i.op, i.pipe, i.sync, i.file, i.line) for i in instrs]
        want = [(core, seq, op, pipe, sync, __file__, line_of(trace_kernel, marker))
                for seq, (marker, op, pipe, sync) in enumerate(TRACE_EXPECTED)]
        assert got == want


def test_trace_data_copy_byte_ranges():
    x = np.arange(64, dtype=np.float16)
    result = trace_kernel[2](x, np.zeros(64, np.float16), 0.5, 32)
    core1 = result.trace.cores[1]
    copy_in, muls, copy_out = core1[1], core1[5], core1[9]
    # aiv(1) handles elements [32, 64): GM bytes [64, 128); q_in at UB 0, q_out at UB 64
    assert (copy_in.reads, copy_in.writes, copy_in.undefined) == (
        (Access(Mem.GM, "x", 64, 128, "x"),), (Access(Mem.UB, "UB", 0, 64, "q_in[0]"),), ())
    assert (copy_in.count, copy_in.nbytes, copy_in.dtype) == (32, 64, "float16")
    assert (muls.reads, muls.writes) == ((Access(Mem.UB, "UB", 0, 64, "q_in[0]"),),
                                         (Access(Mem.UB, "UB", 64, 128, "q_out[0]"),))
    assert (copy_out.reads, copy_out.writes) == ((Access(Mem.UB, "UB", 64, 128, "q_out[0]"),),
                                                 (Access(Mem.GM, "y", 64, 128, "y"),))
    get_value, set_value = core1[13], core1[14]
    assert get_value.reads == (Access(Mem.GM, "y", 64, 66, "y"),) and get_value.writes == ()
    assert set_value.writes == (Access(Mem.GM, "y", 66, 68, "y"),) and set_value.reads == ()
    assert result.trace.ops() == {op: 2 * n for op, n in {
        "alloc_tensor": 2, "data_copy": 2, "enque": 2, "deque": 2, "muls": 1, "free_tensor": 2, "set_flag": 1,
        "wait_flag": 1, "get_value": 1, "set_value": 1, "pipe_barrier": 1}.items()}
