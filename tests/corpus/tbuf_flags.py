"""Raw TBuf buffers carry no implicit synchronisation: each pipe hand-over needs set_flag/wait_flag.

``y = x * scale``, N float32 per core, in two TBufs (no TQue, so no enque/deque to order the pipes):

- ``tbuf_no_mte2_v``: no MTE2 -> V flag between the copy-in and the Muls. On the NPU the Muls may
  read x_local before the DataCopy has landed. racecheck RAW, PIPE_MTE2 -> PIPE_V, on UB x_local.
- ``tbuf_no_v_mte3``: no V -> MTE3 flag between the Muls and the copy-out: the copy-out may read
  y_local before the Muls wrote it. racecheck RAW, PIPE_V -> PIPE_MTE3, on UB y_local.
- ``tbuf_flags``: the corrected kernel, one set_flag/wait_flag pair for each hand-over.

Race replay holds the producer's write back until the consumer has run, so the consumer sees the
never-written (NaN-poisoned) UB: y comes out NaN, unlike the in-order run.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand

E = asc.HardEvent


@asc.jit
def tbuf_no_mte2_v(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    start = asc.get_block_idx() * N
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, N)
    y_gm.set_global_buffer(y + start, N)
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    x_local = x_buf.get(asc.float32)
    y_local = y_buf.get(asc.float32)
    asc.data_copy(x_local, x_gm, N)  # <raw1-in>
    asc.muls(y_local, x_local, scale, N)  # <raw1-muls>   no wait_flag(MTE2_V) before it
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def tbuf_no_v_mte3(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    start = asc.get_block_idx() * N
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, N)
    y_gm.set_global_buffer(y + start, N)
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    x_local = x_buf.get(asc.float32)
    y_local = y_buf.get(asc.float32)
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.muls(y_local, x_local, scale, N)  # <raw2-muls>
    asc.data_copy(y_gm, y_local, N)  # <raw2-out>   no wait_flag(V_MTE3) before it


@asc.jit
def tbuf_flags(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    start = asc.get_block_idx() * N
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, N)
    y_gm.set_global_buffer(y + start, N)
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    x_local = x_buf.get(asc.float32)
    y_local = y_buf.get(asc.float32)
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.muls(y_local, x_local, scale, N)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


N, CORES = 256, 2
NB = N * 4


def build(size: int):
    return (rand(size, np.float32, 3), np.zeros(size, np.float32), 2.0, N), {}


CASES = [
    Case("tbuf/no-mte2-v", tbuf_no_mte2_v, CORES, N * CORES, build, replay=True,
         expect=(Expect("racecheck", "RAW", ("raw1-in", "raw1-muls"), cores=(0, 1), pipes=("MTE2", "V"), mem="UB",
                        buffer="UB", span=(0, NB), count=CORES, says=("HardEvent.MTE2_V",)),),
         defect="no set_flag/wait_flag(MTE2_V) between copy-in and Muls"),
    Case("tbuf/no-v-mte3", tbuf_no_v_mte3, CORES, N * CORES, build, replay=True,
         expect=(Expect("racecheck", "RAW", ("raw2-muls", "raw2-out"), cores=(0, 1), pipes=("V", "MTE3"), mem="UB",
                        buffer="UB", span=(NB, 2 * NB), count=CORES, says=("HardEvent.V_MTE3",)),),
         defect="no set_flag/wait_flag(V_MTE3) between Muls and copy-out"),
    Case("tbuf/flags", tbuf_flags, CORES, N * CORES, build, replay=True,
         check=lambda a: np.testing.assert_array_equal(a["y"], a["x"] * np.float32(2.0))),
]
