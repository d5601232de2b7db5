"""Flag pairing, cross-core GM races and DataCopyPad pad bytes.

All on ``y = x * scale`` with TBufs and explicit flags (one tile of N float32 per core):

- ``wait_without_set``: ``wait_flag(MTE2_V, 0)`` with no set_flag before it: on the NPU the V pipe
  waits forever. synccheck ``deadlock``, naming PIPE_MTE2 and PIPE_V.
- ``set_never_waited``: ``set_flag(MTE2_V, 0)`` but the wait_flag is missing: synccheck ``set_flag
  never waited``, and since nothing orders the Muls after the copy-in, racecheck RAW MTE2 -> V too
  (both true).
- ``reserved_event_id``: set_flag/wait_flag(MTE2_V, 6): ids 6 and 7 belong to the framework.
  synccheck ``reserved event id`` at the set_flag.
- ``flags_ok``: the corrected kernel.

Cross-core: ``ws_race`` has every core write ``x * scale`` of its block to a GM workspace, then
add aiv(0)'s block to its own (``y = x + ws[0:N]``). It synchronises MTE3 -> MTE2 with a flag,
which orders the pipes of one core only: aiv(1) reads ws[0:N] while aiv(0) may still be writing
it. racecheck RAW on GM ws, between aiv(0) (MTE3) and aiv(1) (MTE2). ``ws_sync_all`` uses
``sync_all()`` instead.

Pad bytes: ``pad_garbage`` copies 13 float32 with DataCopyPad ``is_pad=False``, then computes
over the whole 32 B block (16 lanes) because the host's y is padded to 16 and must hold zeros in
the pad lanes. Lanes 13..15 are undefined: initcheck ``undefined pad read`` naming the
DataCopyPad and the Muls. ``pad_zero`` pads with ``is_pad=True, padding_value=0``.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand

E = asc.HardEvent


@asc.jit
def views(x: asc.GlobalAddress, y: asc.GlobalAddress, N: asc.ConstExpr[int]):
    start = asc.get_block_idx() * N
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, N)
    y_gm.set_global_buffer(y + start, N)
    return x_gm, y_gm


@asc.jit
def buffers(N: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    return pipe, x_buf.get(asc.float32), y_buf.get(asc.float32)


@asc.jit
def wait_without_set(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    pipe, x_local, y_local = buffers(N)
    asc.data_copy(x_local, x_gm, N)  # <f-wns-in>
    asc.wait_flag(E.MTE2_V, 0)  # <f-wns-wait>
    asc.muls(y_local, x_local, scale, N)  # <f-wns-muls>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def set_never_waited(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    pipe, x_local, y_local = buffers(N)
    asc.data_copy(x_local, x_gm, N)  # <f-snw-in>
    asc.set_flag(E.MTE2_V, 0)  # <f-snw-set>
    asc.muls(y_local, x_local, scale, N)  # <f-snw-muls>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def reserved_event_id(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    pipe, x_local, y_local = buffers(N)
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 6)  # <f-reserved-set>
    asc.wait_flag(E.MTE2_V, 6)
    asc.muls(y_local, x_local, scale, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def flags_ok(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    pipe, x_local, y_local = buffers(N)
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.muls(y_local, x_local, scale, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


# ---------------------------------------------------------------------------------------------
# cross-core: a GM workspace written by one core and read by another
# ---------------------------------------------------------------------------------------------

@asc.jit
def scale_to_ws(x_gm: asc.GlobalTensor, ws_gm: asc.GlobalTensor, x_local: asc.LocalTensor,
                y_local: asc.LocalTensor, scale: float, N: asc.ConstExpr[int]):
    """ws_gm = x_gm * scale, one core's block."""
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.muls(y_local, x_local, scale, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(ws_gm, y_local, N)  # <ws-write>


@asc.jit
def add_first_block(x_gm: asc.GlobalTensor, ws: asc.GlobalAddress, y_gm: asc.GlobalTensor,
                    x_local: asc.LocalTensor, y_local: asc.LocalTensor, N: asc.ConstExpr[int]):
    """y_gm = x_gm + ws[0:N] (aiv(0)'s block of the workspace)."""
    first = asc.GlobalTensor()
    first.set_global_buffer(ws, N)
    asc.data_copy(y_local, first, N)  # <ws-read>
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.add(y_local, x_local, y_local, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def ws_race(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress, scale: float,
            N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    ws_gm = asc.GlobalTensor()
    ws_gm.set_global_buffer(ws + asc.get_block_idx() * N, N)
    pipe, x_local, y_local = buffers(N)
    scale_to_ws(x_gm, ws_gm, x_local, y_local, scale, N)
    asc.set_flag(E.MTE3_MTE2, 0)  # orders this core's pipes only
    asc.wait_flag(E.MTE3_MTE2, 0)
    add_first_block(x_gm, ws, y_gm, x_local, y_local, N)


@asc.jit
def ws_sync_all(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress, scale: float,
                N: asc.ConstExpr[int]):
    x_gm, y_gm = views(x, y, N)
    ws_gm = asc.GlobalTensor()
    ws_gm.set_global_buffer(ws + asc.get_block_idx() * N, N)
    pipe, x_local, y_local = buffers(N)
    scale_to_ws(x_gm, ws_gm, x_local, y_local, scale, N)
    asc.sync_all()  # every core's workspace block is written before any core reads one
    add_first_block(x_gm, ws, y_gm, x_local, y_local, N)


# ---------------------------------------------------------------------------------------------
# DataCopyPad pad bytes
# ---------------------------------------------------------------------------------------------

@asc.jit
def pad_garbage(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, BLOCK: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, BLOCK)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=BLOCK * 4)
    pipe.init_buffer(que=q_y, num=1, len=BLOCK * 4)
    x_local = q_x.alloc_tensor(asc.float32)
    asc.data_copy_pad(x_local, x_gm, asc.DataCopyExtParams(1, n * 4, 0, 0, 0),  # <pad-in>
                      asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))
    q_x.enque(x_local)
    x_local = q_x.deque(asc.float32)
    y_local = q_y.alloc_tensor(asc.float32)
    asc.muls(y_local, x_local, scale, BLOCK)  # <pad-muls>
    q_y.enque(y_local)
    q_x.free_tensor(x_local)
    y_local = q_y.deque(asc.float32)
    asc.data_copy(y_gm, y_local, BLOCK)
    q_y.free_tensor(y_local)


@asc.jit
def pad_zero(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, BLOCK: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, BLOCK)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=BLOCK * 4)
    pipe.init_buffer(que=q_y, num=1, len=BLOCK * 4)
    x_local = q_x.alloc_tensor(asc.float32)
    asc.data_copy_pad(x_local, x_gm, asc.DataCopyExtParams(1, n * 4, 0, 0, 0),
                      asc.DataCopyPadExtParams(asc.float32, True, 0, BLOCK - n, 0.0))
    q_x.enque(x_local)
    x_local = q_x.deque(asc.float32)
    y_local = q_y.alloc_tensor(asc.float32)
    asc.muls(y_local, x_local, scale, BLOCK)
    q_y.enque(y_local)
    q_x.free_tensor(x_local)
    y_local = q_y.deque(asc.float32)
    asc.data_copy(y_gm, y_local, BLOCK)
    q_y.free_tensor(y_local)


N, CORES = 64, 2
NB = N * 4


def build(size: int):
    return (rand(size, np.float32, 9), np.zeros(size, np.float32), 0.25, N), {}


def build_ws(size: int):
    return (rand(size, np.float32, 10), np.zeros(size, np.float32), np.zeros(size, np.float32), 0.25, N), {}


def build_pad(size: int):
    return (rand(size, np.float32, 11), np.full(16, -1.0, np.float32), size, 4.0, 16), {}


def scaled(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], arrays["x"] * np.float32(0.25))


def ws_correct(arrays: dict) -> None:
    x, y = arrays["x"], arrays["y"]
    first = x[:N] * np.float32(0.25)
    np.testing.assert_array_equal(y, x + np.tile(first, CORES))


def pad_lanes_zero(arrays: dict) -> None:
    x, y = arrays["x"], arrays["y"]
    np.testing.assert_array_equal(y, np.concatenate([x * np.float32(4), np.zeros(3, np.float32)]))


CASES = [
    Case("flags/wait-without-set", wait_without_set, CORES, N * CORES, build,
         expect=(Expect("synccheck", "deadlock", ("f-wns-wait",), cores=(0, 1), pipes=("MTE2", "V"), count=CORES,
                        says=("PIPE_V waits", "PIPE_MTE2 never set it", "hangs")),),
         defect="wait_flag(MTE2_V) with no set_flag"),
    Case("flags/set-never-waited", set_never_waited, CORES, N * CORES, build, replay=True,
         expect=(Expect("racecheck", "RAW", ("f-snw-in", "f-snw-muls"), cores=(0, 1), pipes=("MTE2", "V"), mem="UB",
                        buffer="UB", span=(0, NB), count=CORES),
                 Expect("synccheck", "set_flag never waited", ("f-snw-set",), cores=(0, 1), pipes=("MTE2", "V"),
                        count=CORES, says=("no wait_flag consumes it",))),
         defect="set_flag(MTE2_V) with no wait_flag"),
    Case("flags/reserved-event-id", reserved_event_id, CORES, N * CORES, build,
         expect=(Expect("synccheck", "reserved event id", ("f-reserved-set",), cores=(0, 1), pipes=("MTE2", "V"),
                        count=CORES, says=("event id 6", "reserved", "0 to 5")),),
         defect="event id 6 is reserved"),
    Case("flags/ok", flags_ok, CORES, N * CORES, build, replay=True, check=scaled),
    Case("flags/gm-race-between-cores", ws_race, CORES, N * CORES, build_ws, outputs=("ws", "y"),
         check=ws_correct,
         expect=(Expect("racecheck", "RAW", ("ws-write", "ws-read"), cores=(0, 1), pipes=("MTE3", "MTE2"), mem="GM",
                        buffer="ws", span=(0, NB), count=1, says=("aiv(0) writes and aiv(1) reads", "sync_all")),),
         defect="aiv(1) reads aiv(0)'s workspace block with no sync_all"),
    Case("flags/gm-sync-all", ws_sync_all, CORES, N * CORES, build_ws, outputs=("ws", "y"), replay=True,
         check=ws_correct),
    Case("flags/pad-bytes-undefined", pad_garbage, 1, 13, build_pad,
         expect=(Expect("initcheck", "undefined pad read", ("pad-in", "pad-muls"), cores=(0,), pipes=("MTE2", "V"),
                        mem="UB", buffer="UB", span=(52, 64), count=1, says=("is_pad=True",)),),
         defect="compute over DataCopyPad's undefined pad lanes (is_pad=False)"),
    Case("flags/pad-bytes-zero", pad_zero, 1, 13, build_pad, check=pad_lanes_zero),
]
