"""TPipe lifetime and event ids, TQue queries, LocalTensor size / address / tag (AD-API 资源管理/TPipe/*.md)."""

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import SyncKind

HE = asc.HardEvent


def run(body):
    """Run body() in a one-core kernel; return (value, trace)."""
    out = {}

    @asc.jit
    def k():
        out["v"] = body()

    result = k[1]()
    return out["v"], result.trace


def test_alloc_event_id_takes_the_lowest_free_id_and_release_returns_it():
    def body():  # AllocEventID.md: sff0 of the occupancy bits; FetchEventID.md: same id, not taken
        pipe = asc.TPipe()
        seen = [int(pipe.fetch_event_id(HE.V_MTE3))]
        a = pipe.alloc_event_id(HE.V_MTE3)
        b = pipe.alloc_event_id(HE.V_MTE3)
        seen += [int(a), int(b), int(pipe.fetch_event_id(HE.V_MTE3)), int(pipe.alloc_event_id())]  # default V_S
        pipe.release_event_id(a, HE.V_MTE3)
        seen.append(int(pipe.alloc_event_id(HE.V_MTE3)))
        asc.set_flag(HE.V_MTE3, b)
        asc.wait_flag(HE.V_MTE3, b)
        return seen

    seen, _ = run(body)
    assert seen == [0, 0, 1, 2, 0, 0]


def test_event_ids_run_out_after_eight():
    def body():
        pipe = asc.TPipe()
        for _ in range(9):
            pipe.alloc_event_id(HE.MTE2_V)

    with pytest.raises(asc.KernelError, match="all 8 event ids of HardEvent.MTE2_V"):
        run(body)


def test_release_of_an_id_never_allocated_is_refused():
    def body():
        asc.TPipe().release_event_id(3, HE.V_S)

    with pytest.raises(asc.KernelError, match="not allocated"):
        run(body)


def test_destroy_then_init_reuses_the_ub_after_a_barrier():
    def body():
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=1, len=1024)
        t = q.alloc_tensor(asc.float16)
        first = int(t.get_phy_addr())
        q.free_tensor(t)
        pipe.destroy()
        pipe.init()
        pipe.init_buffer(que=q, num=2, len=512)
        u = q.alloc_tensor(asc.float16)
        again = (int(u.get_phy_addr()), int(u.get_phy_addr(3)), pipe is asc.get_tpipe_ptr())
        q.free_tensor(u)
        return first, again

    (first, again), trace = run(body)
    assert first == 0 and again == (0, 6, True)  # a fresh pipe hands out UB from byte 0; element 3 of half = byte 6
    barriers = [i for i in trace.cores[0] if i.op == "destroy"]
    assert {i.pipe.value for i in barriers} == {"V", "MTE2", "MTE3"}
    assert all(i.sync.kind is SyncKind.BARRIER for i in barriers)


def test_destroy_with_a_held_buffer_is_refused():
    def body():
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECOUT, 1)
        pipe.init_buffer(que=q, num=1, len=64)
        q.alloc_tensor(asc.float32)
        pipe.destroy()

    with pytest.raises(asc.KernelError, match="free_tensor every buffer before pipe.destroy"):
        run(body)


def test_init_buffer_after_destroy_needs_init():
    def body():
        pipe = asc.TPipe()
        pipe.destroy()
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=64)

    with pytest.raises(asc.KernelError, match="call pipe.init"):
        run(body)


def test_reset_returns_to_the_constructed_state():
    def body():
        pipe = asc.TPipe()
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=4096)
        pipe.alloc_event_id(HE.V_S)
        pipe.reset()
        c = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=c, num=64)
        return int(c.get(asc.float32).get_phy_addr()), int(pipe.fetch_event_id(HE.V_S))

    assert run(body)[0] == (0, 0)


def test_get_tpipe_ptr_before_a_tpipe_is_refused():
    with pytest.raises(asc.KernelError, match="no TPipe yet"):
        run(asc.get_tpipe_ptr)


def test_queue_queries_follow_the_buffers():
    def body():
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 2)
        pipe.init_buffer(que=q, num=2, len=64)
        states = []

        def state():
            states.append((q.has_idle_buffer(), q.has_tensor_in_que(), int(q.get_tensor_count_in_que()),
                           q.vacant_in_que()))

        state()
        a = q.alloc_tensor(asc.float16)
        b = q.alloc_tensor(asc.float16)
        state()
        q.enque(a)
        q.enque(b)
        state()
        q.free_tensor(q.deque(asc.float16))
        state()
        q.free_tensor(q.deque(asc.float16))
        q.free_all_event()
        return states

    states, _ = run(body)
    assert states == [(True, False, 0, True), (False, False, 0, True), (False, True, 2, False), (True, True, 1, True)]


def test_local_tensor_size_tag_and_reinterpret():
    def body():
        pipe = asc.TPipe()
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=256)
        t = b.get(asc.float16, 16)
        out = [int(t.get_size())]
        t.set_size(128)               # the TBuf holds 256 B = 128 halves
        out.append(int(t.get_size()))
        t.set_user_tag(42)
        out.append(int(t.get_user_tag()))
        r = t.reinterpret_cast(asc.int32)
        out += [int(r.get_size()), int(r.get_phy_addr(2))]
        return out

    assert run(body)[0] == [16, 128, 42, 64, 8]


def test_set_size_past_the_buffer_is_refused():
    def body():
        pipe = asc.TPipe()
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=64)
        b.get(asc.float32).set_size(17)

    with pytest.raises(asc.KernelError, match="holds 16 x float32"):
        run(body)


def _tbuf_bytes(call):
    """The UB bytes a TBuf gets from ``call(pipe, buf)`` (its tensor's size at the buffer's full length, in bytes)."""
    def body():
        pipe = asc.TPipe()
        b = asc.TBuf(asc.TPosition.VECCALC)
        call(pipe, b)
        return b.get(asc.uint8).get_size()

    return run(body)[0]


@pytest.mark.parametrize("call", [lambda p, b: p.init_buffer(buf=b, len=96),  # pyasc after 1.1.1 (fwk/tpipe.py)
                                  lambda p, b: p.init_buffer(buf=b, num=96),  # pyasc 1.1.1's TPipe
                                  lambda p, b: p.init_buffer(b, 96),  # positional: the dispatcher matches by type
                                  lambda p, b: p.init_buffer(buf=b, num=96, len=96)],
                         ids=["len", "num", "positional", "both-agree"])
def test_tbuf_size_in_every_spelling_pyasc_accepts(call):
    """TPipe.init_buffer gives a TBuf the same bytes however pyasc spells the size."""
    assert _tbuf_bytes(call) == 96


def test_tbuf_sizes_that_disagree_are_refused():
    """len= and num= both given and different: one readable error, not a silent pick."""
    with pytest.raises(asc.KernelError, match="one size: len=64 and num=96"):
        _tbuf_bytes(lambda p, b: p.init_buffer(buf=b, num=96, len=64))


def test_tbuf_pool_takes_a_positional_tbuf():
    """TBufPool.init_buffer(b, 64) is the TBuf form, as on TPipe."""
    def body():
        pipe = asc.TPipe()
        pool = asc.TBufPool(asc.TPosition.VECCALC, 4)
        pipe.init_buf_pool(pool, 256)
        b = asc.TBuf(asc.TPosition.VECCALC)
        pool.init_buffer(b, 64)
        return b.get(asc.uint8).get_size()

    assert run(body)[0] == 64
