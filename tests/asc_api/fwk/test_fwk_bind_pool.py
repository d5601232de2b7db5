"""TQueBind, TBufPool, LocalMemAllocator, TBuf alloc_tensor / get_with_offset, runtime names (issue 9 item 8),
with our own kernels. Rules cited from the asc-devkit pages named in each test."""

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Pipe, SyncKind
from fusekit.hb import core_order
from fusekit.sanitizer import analyze
from support import gm_view

N = 128  # float16 elements: 256 B


@asc.jit
def bound_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: int):
    """GM -> VECIN -> VECOUT -> GM through one TQueBind<VECIN, VECOUT> (TQueBind简介.md: no vector work)."""
    pipe = asc.TPipe()
    que = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=que, num=2, len=N * 2)
    for t in range(tiles):
        a = que.alloc_tensor(asc.float16)
        asc.data_copy(a, gm_view(x + t * N, N), count=N)
        que.enque(a)
        b = que.deque(asc.float16)
        asc.data_copy(gm_view(z + t * N, N), b, count=N)
        que.free_tensor(b)


def test_vecin_vecout_bind_copies_through_one_buffer_with_mte2_to_mte3_sync():
    x = (np.arange(4 * N) % 251).astype(np.float16)
    z = np.zeros_like(x)
    trace = bound_copy[1](x, z, 4).trace
    np.testing.assert_array_equal(z, x)
    instrs = trace.cores[0]
    enq = next(i for i in instrs if i.op == "enque")
    deq = next(i for i in instrs if i.op == "deque")
    assert (enq.pipe, enq.sync.src, enq.sync.dst) == (Pipe.MTE2, Pipe.MTE2, Pipe.MTE3)
    assert (deq.pipe, deq.sync.kind) == (Pipe.MTE3, SyncKind.WAIT)
    order = core_order(instrs)
    load = next(k for k, i in enumerate(instrs) if i.op == "data_copy")
    store = next(k for k, i in enumerate(instrs) if i.op == "data_copy" and i.writes[0].mem.value == "GM")
    assert order.before(load, store)  # the bind queue's set/wait orders MTE2's load before MTE3's store
    assert not [f for f in analyze(trace) if f.tool == "racecheck"]


@asc.jit
def bind_forms(x: asc.GlobalAddress, z: asc.GlobalAddress):
    pipe = asc.TPipe()
    q_in = asc.TQueBind(asc.TPosition.GM, asc.TPosition.VECIN, 1)
    q_out = asc.TQueBind(asc.TPosition.VECOUT, asc.TPosition.GM, 1)
    q0 = asc.TQueBind(asc.TPosition.VECCALC, asc.TPosition.VECCALC, 0)
    pipe.init_buffer(que=q_in, num=1, len=N * 2)
    pipe.init_buffer(que=q_out, num=1, len=N * 2)
    pipe.init_buffer(que=q0, num=1, len=N * 2)
    a = q_in.alloc_tensor(asc.float16)
    asc.data_copy(a, gm_view(x, N), count=N)
    q_in.enque(a, asc.TPosition.GM, asc.TPosition.VECIN)
    a = q_in.deque(asc.float16, asc.TPosition.GM, asc.TPosition.VECIN)
    tmp = asc.LocalTensor(asc.float16)
    q0.alloc_tensor(tmp)  # the in-place form: tmp now views q0's buffer
    asc.muls(tmp, a, 3.0, count=N)
    b = q_out.alloc_tensor(asc.float16)
    asc.adds(b, tmp, 1.0, count=N)
    q0.free_tensor(tmp)
    q_in.free_tensor(a)
    q_out.enque(b)
    b = q_out.deque(asc.float16)
    asc.data_copy(gm_view(z, N), b, count=N)
    q_out.free_tensor(b)


def test_gm_vecin_and_vecout_gm_binds_and_the_in_place_form():
    x = (np.arange(N) / 8).astype(np.float16)
    z = np.zeros_like(x)
    bind_forms[1](x, z)
    expected = ((x.astype(np.float32) * 3).astype(np.float16).astype(np.float32) + 1).astype(np.float16)
    np.testing.assert_array_equal(z, expected)


def test_bind_refusals_cite_the_page():
    @asc.jit
    def cube():
        asc.TQueBind(asc.TPosition.GM, asc.TPosition.A1, 1)

    @asc.jit
    def depth0():
        pipe = asc.TPipe()
        q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 0)
        pipe.init_buffer(que=q, num=1, len=64)
        q.alloc_tensor(asc.float16)

    @asc.jit
    def in_place_deep():
        pipe = asc.TPipe()
        q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 1)
        pipe.init_buffer(que=q, num=1, len=64)
        q.alloc_tensor(asc.LocalTensor(asc.float16))

    with pytest.raises(asc.KernelError, match="TPosition.A1 is the AIC's L1, which an AIV core does not have: declare "
                                              "the kernel @asc.jit.kernel_type=config.KernelType.AIC_ONLY"):
        cube[1]()
    with pytest.raises(asc.KernelError, match="depth 0"):
        depth0[1]()
    with pytest.raises(asc.KernelError, match="needs a TQueBind of depth 0"):
        in_place_deep[1]()


def test_tque_is_a_tquebind():
    @asc.jit
    def k(out: asc.GlobalAddress):
        q = asc.TQue(asc.TPosition.VECIN, 1)
        gm_view(out, 1).set_value(0, int(isinstance(q, asc.TQueBind)))

    out = np.zeros(16, np.int32)
    k[1](out)
    assert out[0] == 1


# -- TBuf.alloc_tensor / get_with_offset, TPipe.get_base_addr, GlobalTensor.get_phy_addr -----------------

@asc.jit
def tbuf_forms(x: asc.GlobalAddress, z: asc.GlobalAddress, info: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    whole = buf.alloc_tensor(asc.float16)            # all 512 B
    second = buf.get_with_offset(N, N * 2, asc.float16)  # bytes [256, 512)
    asc.data_copy(second, gm_view(x, N), count=N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(whole, second, 2.0, count=N)           # bytes [0, 256)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gm_view(z, N), whole, count=N)
    buf.free_tensor(whole)
    g = gm_view(info, 16)
    g.set_value(0, whole.get_length())
    g.set_value(1, second.get_phy_addr() - pipe.get_base_addr(asc.TPosition.VECCALC))
    moved = asc.GlobalTensor()
    moved.set_global_buffer(gm_view(info, 16).get_phy_addr(8), 8)
    moved.set_value(0, 77)                         # info[8]
    asc.data_cache_clean_and_invalid(asc.CacheLine.ENTIRE_DATA_CACHE, moved)


def test_tbuf_alloc_tensor_get_with_offset_and_addresses():
    x = (np.arange(N) % 17).astype(np.float16)
    z = np.zeros_like(x)
    info = np.zeros(16, np.int32)
    tbuf_forms[1](x, z, info)
    np.testing.assert_array_equal(z, x + np.float16(2))
    assert info[0] == 4 * N // 2 * 2 // 2  # 512 B of float16: 256 elements
    assert info[1] == N * 2                # second starts 256 B after the buffer (UB base 0)
    assert info[8] == 77


@pytest.mark.parametrize("size, offset, match", [(N, 16, "multiple of 32"), (N + 1, 2 * N, "must not pass")])
def test_get_with_offset_rules(size, offset, match):
    @asc.jit
    def k():
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4 * N)
        buf.get_with_offset(size, offset, asc.float16)

    with pytest.raises(asc.KernelError, match=match):
        k[1]()


# -- TBufPool ---------------------------------------------------------------------------------------------

@asc.jit
def two_stages(x: asc.GlobalAddress, z: asc.GlobalAddress, do_reset: asc.ConstExpr[bool]):
    """Stage 1 (pool1) computes x * 2 into z[0:N]; stage 2 (pool2, the same UB) computes x + 5 into z[N:2N]."""
    pipe = asc.TPipe()
    pool1 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pool2 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pipe.init_buf_pool(pool1, 4 * N)
    pipe.init_buf_pool(pool2, 4 * N, pool1)
    q_in1 = asc.TQue(asc.TPosition.VECIN, 1)
    q_out1 = asc.TQue(asc.TPosition.VECOUT, 1)
    q_in2 = asc.TQue(asc.TPosition.VECIN, 1)
    q_out2 = asc.TQue(asc.TPosition.VECOUT, 1)
    pool1.init_buffer(que=q_in1, num=1, len=2 * N)
    pool1.init_buffer(que=q_out1, num=1, len=2 * N)
    stage(x, z, q_in1, q_out1, 0, 2.0, 0.0)
    if do_reset:
        pool1.reset()
    pool2.init_buffer(que=q_in2, num=1, len=2 * N)
    pool2.init_buffer(que=q_out2, num=1, len=2 * N)
    stage(x, z + N, q_in2, q_out2, 1, 1.0, 5.0)
    pool2.reset()
    pipe.reset()


@asc.jit
def stage(x: asc.GlobalAddress, z: asc.GlobalAddress, q_in: asc.TQue, q_out: asc.TQue, which: int, mul: float,
          add: float):
    a = q_in.alloc_tensor(asc.float16)
    asc.data_copy(a, gm_view(x, N), count=N)
    q_in.enque(a)
    a = q_in.deque(asc.float16)
    b = q_out.alloc_tensor(asc.float16)
    asc.muls(b, a, mul, count=N)
    asc.adds(b, b, add, count=N)
    q_out.enque(b)
    q_in.free_tensor(a)
    b = q_out.deque(asc.float16)
    asc.data_copy(gm_view(z, N), b, count=N)
    q_out.free_tensor(b)


def test_two_pools_share_one_region_and_reset_separates_the_stages():
    x = (np.arange(N) % 13).astype(np.float16)
    z = np.zeros(2 * N, np.float16)
    trace = two_stages[1](x, z, True).trace
    np.testing.assert_array_equal(z[:N], x * np.float16(2))
    np.testing.assert_array_equal(z[N:], x + np.float16(5))
    instrs = trace.cores[0]
    ub = [i for i in instrs if i.op == "data_copy" and i.writes[0].mem.value == "UB"]
    assert ub[0].writes[0].start == ub[1].writes[0].start == 0  # pool2 reuses pool1's first bytes (share_buf)
    assert not [f for f in analyze(trace) if f.tool == "racecheck"]


def test_without_the_pool_reset_the_reuse_is_a_race():
    x = (np.arange(N) % 13).astype(np.float16)
    findings = analyze(two_stages[1](x, np.zeros(2 * N, np.float16), False).trace)
    assert [f for f in findings if f.tool == "racecheck"]


@pytest.mark.parametrize("body, match", [
    ("pipe.init_buf_pool(p1, 256); pipe.init_buf_pool(p2, 512, p1)", "must not exceed the reused pool"),
    ("pipe.init_buf_pool(p1, 256); p1.init_buffer(que=q, num=2, len=256)", "only 256 B of its 256 B"),
    ("pipe.init_buf_pool(p1, 4096); p1.init_buffer(que=q, num=5, len=32)", "buf_id_size is 4"),
    ("p1.init_buffer(que=q, num=1, len=32)", "has no memory"),
    ("pipe.init_buf_pool(p1, 10 ** 7)", "UB"),
    ("asc.TBufPool(asc.TPosition.VECIN, 17)", "1 to 16"),
    ("pipe.init_buf_pool(p1, 256); p1.reset(); p1.init_buffer(que=q, num=1, len=32)", "was reset"),
    ("pipe.init_buf_pool(p1, 256); a = p1.init_buffer(que=q, num=1, len=64); t = q.alloc_tensor(asc.half); p1.reset()",
     "before its reset"),
])
def test_pool_rules(body, match):
    namespace = {"asc": asc}
    exec("def k():\n    pipe = asc.TPipe(); p1 = asc.TBufPool(asc.TPosition.VECCALC, 4); "
         "p2 = asc.TBufPool(asc.TPosition.VECCALC, 4); q = asc.TQue(asc.TPosition.VECIN, 1)\n    " + body, namespace)
    with pytest.raises(asc.KernelError, match=match):
        asc.jit(namespace["k"])[1]()


# -- LocalMemAllocator ------------------------------------------------------------------------------------

@asc.jit
def static_tensors(x: asc.GlobalAddress, z: asc.GlobalAddress, addrs: asc.GlobalAddress):
    asc.init_soc_state()
    allocator = asc.LocalMemAllocator()
    a0 = allocator.get_cur_addr()
    a = allocator.alloc(asc.TPosition.VECIN, asc.float16, N)
    a1 = allocator.get_cur_addr()
    b = allocator.alloc(asc.TPosition.VECOUT, asc.float16, N)
    asc.data_copy(a, gm_view(x, N), count=N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(b, a, 0.5, count=N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gm_view(z, N), b, count=N)
    g = gm_view(addrs, 16)
    g.set_value(0, a0)
    g.set_value(1, a1)
    g.set_value(2, b.get_phy_addr())


def test_local_mem_allocator_places_tensors_back_to_back():
    x = (np.arange(N) * 2).astype(np.float16)
    z = np.zeros_like(x)
    addrs = np.zeros(16, np.int32)
    static_tensors[1](x, z, addrs)
    np.testing.assert_array_equal(z, x * np.float16(0.5))
    assert addrs[:3].tolist() == [0, 2 * N, 2 * N]  # head += tile_size * sizeof (kernel_tensor_impl.h)


def test_allocator_overflow_and_mixing_with_tpipe_are_kernel_errors():
    @asc.jit
    def too_big():
        allocator = asc.LocalMemAllocator()
        allocator.alloc(asc.TPosition.VECIN, asc.float32, 40000)
        allocator.alloc(asc.TPosition.VECIN, asc.float32, 20000)  # 240000 B > 192 KiB

    @asc.jit
    def mixed():
        asc.TPipe()
        asc.LocalMemAllocator()

    with pytest.raises(asc.KernelError, match="Alloc.md") as info:
        too_big[1]()
    assert info.value.kind == "ub-overflow"
    with pytest.raises(asc.KernelError, match="cannot be mixed"):
        mixed[1]()


# -- runtime names --------------------------------------------------------------------------------------

def test_sys_workspace_round_trip_and_unset():
    @asc.jit
    def k(ws: asc.GlobalAddress, flag: asc.ConstExpr[bool]):
        if flag:
            asc.set_sys_workspace(ws + 4)
        w = gm_view(asc.get_sys_workspace(), 4)
        w.set_value(0, 9)
        asc.data_cache_clean_and_invalid(asc.CacheLine.ENTIRE_DATA_CACHE, w)

    ws = np.zeros(16, np.int32)
    k[1](ws, True)
    assert ws[4] == 9
    with pytest.raises(asc.KernelError, match="set_sys_workspace"):
        k[1](ws, False)


def test_init_soc_state_resets_mask_and_atomic_but_not_deq_scale_on_a2():
    """InitSocState.md 表3 (A2): atomics off, mask Normal and all ones; DEQSCALE is reset on Ascend 950 only."""
    from fusekit.asc.atomic import mode_of
    from fusekit.asc.basic.deq import scale_of
    from fusekit.asc.basic.mask import FULL, MaskMode, register_of
    from fusekit.asc.runtime import current

    seen = {}

    @asc.jit
    def k():
        asc.set_deq_scale(0.5)
        asc.set_mask_count()
        asc.set_vector_mask(0, 5, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
        asc.set_atomic_add(asc.float32)
        asc.init_soc_state()
        core = current()
        reg = register_of(core)
        seen.update(mode=reg.mode, bits=(reg.high, reg.low), atomic=mode_of(core).op, deq=scale_of(core, "t"))

    k[1]()
    assert seen == dict(mode=MaskMode.NORMAL, bits=(FULL, FULL), atomic=None, deq=np.float16(0.5))


def test_scalar_names():
    @asc.jit
    def k(out: asc.GlobalAddress):
        g = gm_view(out, 8)
        g.set_value(0, int(asc.ascend_is_aiv()))
        g.set_value(1, asc.get_task_ratio())
        g.set_value(2, asc.ONE_BLK_SIZE)
        g.set_value(3, asc.DataType("int32").sizeof() + asc.int_.sizeof())
        g.set_value(4, asc.float64.sizeof() + asc.double.sizeof())

    out = np.zeros(8, np.int32)
    k[1](out)
    assert out[:5].tolist() == [1, 1, 32, 8, 16]
    assert asc.DataType("float16") is asc.float16
    with pytest.raises(TypeError, match="no Ascend C counterpart"):
        k[1](np.zeros(8, np.float64))  # float64 is a scalar type: not a GM buffer


# -- LocalTensor / GlobalTensor methods of pyasc's core pages --------------------------------------------

@asc.jit
def tensor_methods(x: asc.GlobalAddress, info: asc.GlobalAddress):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    calc = asc.TQue(asc.TPosition.VECCALC, 1)
    pipe.init_buffer(que=q, num=1, len=4 * N)
    pipe.init_buffer(que=calc, num=1, len=4 * N)
    a = q.alloc_tensor(asc.float16)       # 256 float16
    a.set_buffer_len(2 * N)               # bytes (kernel_tensor_impl.h: dataLen): 128 float16
    t = calc.alloc_tensor(asc.int32)      # 128 int32 = 512 B
    h = asc.LocalTensor(asc.float16)
    h.set_addr_with_offset(t, 16)         # 16 int32 = 64 B further, length: t's 512 B clipped to the 448 B left
    g = gm_view(info, 16)
    whole = asc.GlobalTensor()
    whole.set_global_buffer(x)            # pointer only: GetSize is 0
    g.set_value(0, a.get_size())
    g.set_value(1, h.get_phy_addr() - t.get_phy_addr())
    g.set_value(2, h.get_size())
    g.set_value(3, int(a.get_position() == asc.TPosition.VECIN) + 2 * int(t.get_position() == asc.TPosition.VECCALC))
    g.set_value(4, gm_view(x, 7).get_size())
    g.set_value(5, whole.get_size())
    q.free_tensor(a)
    calc.free_tensor(t)


def test_set_buffer_len_set_addr_with_offset_get_position_get_size():
    info = np.zeros(16, np.int32)
    tensor_methods[1](np.zeros(N, np.float16), info)
    assert info[:6].tolist() == [N, 64, 448 // 2, 3, 7, 0]


def test_set_buffer_len_past_the_buffer_clips_and_the_access_fails():
    """SetBufferLen itself makes no check: a length past the buffer is clipped to it (256 B = 128 float16), and
    the instruction that really reaches past the buffer is the out-of-bounds KernelError."""
    @asc.jit
    def k(out: asc.GlobalAddress, past: asc.ConstExpr[bool]):
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=1, len=256)
        a = q.alloc_tensor(asc.float16)
        a.set_buffer_len(512)
        gm_view(out, 8).set_value(0, a.get_size())
        if past:
            asc.duplicate(a, 0.0, 256)
        q.free_tensor(a)

    out = np.zeros(8, np.int32)
    k[1](out, False)
    assert out[0] == 128
    with pytest.raises(asc.KernelError) as info:
        k[1](out, True)
    assert info.value.kind == "out-of-bounds"


def test_global_shape_info_has_no_default():
    @asc.jit
    def k(x: asc.GlobalAddress, out: asc.GlobalAddress, set_it: asc.ConstExpr[bool]):
        t = gm_view(x, N)
        if set_it:
            t.set_shape_info(asc.ShapeInfo([4, 32]))
        gm_view(out, 8).set_value(0, t.get_shape_info().shape(1))

    out = np.zeros(8, np.int32)
    k[1](np.zeros(N, np.float16), out, True)
    assert out[0] == 32
    with pytest.raises(asc.KernelError, match="no ShapeInfo"):
        k[1](np.zeros(N, np.float16), out, False)


# -- check_local_memory_ia (CheckLocalMemoryIA(ISASI).md) -------------------------------------------------

@asc.jit
def watched(x: asc.GlobalAddress, z: asc.GlobalAddress, watch_vector_write: asc.ConstExpr[bool],
            enable: asc.ConstExpr[bool]):
    src = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, N)
    dst = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 2 * N, N)
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(
        0, dst.get_phy_addr() // 32, (dst.get_phy_addr() + 2 * N) // 32, is_vector_write=watch_vector_write,
        is_mte_read=not watch_vector_write, is_enable=enable))
    asc.data_copy(src, gm_view(x, N), count=N)  # MTE2 writes src: outside the range
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(dst, src, 1.0, count=N)  # <vector write>
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gm_view(z, N), dst, count=N)  # <mte read>
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(0, is_enable=False))


@pytest.mark.parametrize("vector, marker", [(True, "# <vector write>"), (False, "# <mte read>")])
def test_a_watched_access_raises_at_the_instruction(vector, marker):
    x = np.ones(N, np.float16)
    with pytest.raises(asc.KernelError, match="exception register 0") as info:
        watched[1](x, np.zeros(N, np.float16), vector, True)
    line = next(k for k, t in enumerate(open(__file__).read().splitlines(), 1) if marker in t and "def" not in t)
    assert info.value.kind == "ia-exception" and info.value.line == line


def test_a_disabled_register_watches_nothing():
    z = np.zeros(N, np.float16)
    watched[1](np.ones(N, np.float16), z, True, False)
    np.testing.assert_array_equal(z, np.full(N, 2, np.float16))


def test_local_tensor_print_and_to_file(tmp_path, capsys):
    path = tmp_path / "t.bin"

    @asc.jit
    def k():
        t = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 16)
        for i in range(16):
            t.set_value(i, i * 3)
        t.print(12)          # 8 int32 per 32 B block (Print.md: one data block per line)
        assert t.to_file(str(path)) == 0

    k[1]()
    out = capsys.readouterr().out
    assert "0000: 0 3 6 9 12 15 18 21" in out and "0008: 24 27 30 33\n" in out
    assert np.fromfile(path, np.int32).tolist() == [3 * i for i in range(16)]


@asc.jit
def in_place_round_trip(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """Depth-0 TQueBind<VECIN, VECOUT>: alloc, enque and deque in place (kernel_tquebind_impl.h: no FIFO)."""
    pipe = asc.TPipe()
    que = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 0)
    pipe.init_buffer(que=que, num=1, len=N * 2)
    t = asc.LocalTensor(asc.float16)
    que.alloc_tensor(t)
    asc.data_copy(t, gm_view(x, N), count=N)
    que.enque(t)
    que.deque(t)
    asc.data_copy(gm_view(z, N), t, count=N)
    que.free_tensor(t)


def test_depth_zero_in_place_enque_deque():
    x = (np.arange(N) % 7).astype(np.float16)
    z = np.zeros_like(x)
    trace = in_place_round_trip[1](x, z).trace
    np.testing.assert_array_equal(z, x)
    assert not [f for f in analyze(trace) if f.tool == "racecheck"]


def test_in_place_deque_of_a_tensor_never_enqueued_is_a_deadlock():
    @asc.jit
    def k():
        pipe = asc.TPipe()
        que = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 0)
        pipe.init_buffer(que=que, num=1, len=64)
        t = asc.LocalTensor(asc.float16)
        que.alloc_tensor(t)
        que.deque(t)

    with pytest.raises(asc.KernelError, match="not enqueued") as info:
        k[1]()
    assert info.value.kind == "deadlock"
