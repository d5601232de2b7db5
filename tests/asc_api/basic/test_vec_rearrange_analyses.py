"""The data-rearrangement instructions in the analyses (issue 9: "every instruction, in every analysis"):
a clean queue-synchronised kernel that gathers, packs, broadcasts and sorts is reported clean by the
sanitizer (the gathered bytes are exactly the ones written before) and gets a timing profile; a
gather whose offsets reach bytes nobody wrote is an uninitialised read."""

from __future__ import annotations

import numpy as np

import fusekit
from fusekit import asc
from fusekit.timing import predict

N = 256


@asc.jit
def rearrange(x: asc.GlobalAddress, idx: asc.GlobalAddress, y: asc.GlobalAddress, GATHER_N: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q_x, q_i = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=N * 4)
    pipe.init_buffer(que=q_i, num=1, len=N * 4)
    pipe.init_buffer(que=q_y, num=1, len=N * 8 * 2)
    gx, gi, gy = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x, N)
    gi.set_global_buffer(idx, N)
    gy.set_global_buffer(y, N * 3)
    tx, ti = q_x.alloc_tensor(asc.float32), q_i.alloc_tensor(asc.uint32)
    asc.data_copy(tx, gx, N)
    asc.data_copy(ti, gi, N)
    q_x.enque(tx)
    q_i.enque(ti)
    tx, ti = q_x.deque(asc.float32), q_i.deque(asc.uint32)
    ty = q_y.alloc_tensor(asc.float32)
    asc.gather(ty, tx, ti, 0, GATHER_N)                      # ty[0:N] = x[idx]
    asc.sort32(ty[N:], ty, ti, N // 32)                      # ty[N:3N] = sorted (score, index) pairs
    q_y.enque(ty)
    ty = q_y.deque(asc.float32)
    asc.data_copy(gy, ty, N * 3)
    q_y.free_tensor(ty)
    q_x.free_tensor(tx)
    q_i.free_tensor(ti)


def _inputs():
    x = np.arange(N, dtype=np.float32)
    idx = (np.random.default_rng(1).permutation(N) * 4).astype(np.uint32)
    return x, idx, np.zeros(N * 3, np.float32)


def test_clean_kernel_is_clean_and_timed():
    x, idx, y = _inputs()
    report = fusekit.sanitize(rearrange, outputs=["y"])[1](x, idx, y, N)
    assert report.ok, report.to_text()
    result = rearrange[1](x, idx, y, N)
    np.testing.assert_array_equal(y[:N], x[idx // 4])
    profile = predict([result.trace])
    assert profile.kernel_time_us > 0


def test_gather_past_written_bytes_is_an_uninitialised_read():
    x, idx, y = _inputs()

    @asc.jit
    def partial(x: asc.GlobalAddress, idx: asc.GlobalAddress, y: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=N * 12)
        t = buf.get(asc.float32)
        ti, td = t[N:].reinterpret_cast(asc.uint32), t[2 * N:]
        gx, gi, gy = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x, N)
        gi.set_global_buffer(idx, N)
        gy.set_global_buffer(y, N)
        asc.data_copy(t, gx, 64)                           # only x[0:64] reaches UB
        asc.data_copy(ti, gi, N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.gather(td, t, ti, 0, 8)                         # the offsets reach far past element 64
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(gy, td, 8)

    report = fusekit.sanitize(partial, outputs=["y"])[1](x, idx, y)
    text = report.to_text()
    assert not report.ok and "initcheck" in text, text
