"""More of the cube's data path: Fixpipe's int8 NZ output, which Int8 Channel Merge lays out (AD-API 矩阵搬出关键特性说明/
Int8-Channel-Merge.md), and static tensors of the AIC's memories through LocalMemAllocator<L1 / L0A / L0B / L0C>
(资源管理/LocalMemAllocator/LocalMemAllocator简介.md, Alloc.md). Expected layouts are worked by hand from the pages."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from cube_kernels import AIC

Q = asc.QuantModes
ONE = int(np.float32(1.0).view(np.uint32)) | 1 << 46  # deq_scalar: M1 = 1, int8 (bit 46: 随路量化.md 表1)


def _merge_kernel(n: int, dst_stride: int):
    """C = A (16 x n half) x I through L0C, out as int8 NZ (QF322B8_PRE, M1 = 1: the values as they are)."""

    @asc.jit(kernel_type=AIC)
    def merge(x: asc.GlobalAddress, y: asc.GlobalAddress):
        xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x)
        yg.set_global_buffer(y)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 16 * n)
        b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 8192, n * n)
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 16 * n)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, n * n)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 16 * n)
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, n, 0, n, 16, 1, 0))
        asc.data_copy(b1, xg[16 * n:], asc.Nd2NzParams(1, n, n, 0, n, n, 1, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.load_data(a2, a1, asc.LoadData2DParams(0, n // 16, 1, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, (n // 16) ** 2, 1, 0, 0, False, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.mmad(c, a2, b2, asc.MmadParams(16, n, n, 0, False, True))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(n, 16, 16, dst_stride, Q.QF322B8_PRE, ONE),
                    asc.FixpipeConfig.cfg_nz())

    return merge


def _merge(a: np.ndarray, dst_stride: int = 16) -> np.ndarray:
    n = a.shape[1]
    x = np.concatenate([a.astype(np.float16).ravel(), np.eye(n, dtype=np.float16).ravel()])  # B^T = I
    y = np.full(2048, -99, np.int8)
    _merge_kernel(n, dst_stride)[1](x, y)
    return y


A48 = ((np.arange(16 * 48) % 23) - 11).reshape(16, 48)  # small integers: exact in half, float and int8


def test_int8_nz_output_merges_pairs_of_fractals_into_16_x_32():
    """n = 64, an even multiple of 16: column blocks of 32 channels, each row 32 B; dst_stride 16 (x 32 B) puts block
    1 at byte 512 (Int8-Channel-Merge.md)."""
    a = ((np.arange(16 * 64) % 29) - 14).reshape(16, 64)
    y = _merge(a)
    for i, j in [(0, 0), (0, 31), (1, 0), (5, 17), (15, 31), (0, 32), (3, 40), (15, 63)]:
        assert y[(j // 32) * 512 + i * 32 + j % 32] == a[i, j], (i, j)
    assert (y[1024:] == -99).all()  # nothing past the two blocks


def test_the_last_16_channels_of_an_odd_multiple_stay_unmerged():
    """n = 48: channels 0-31 merge into one 16 x 32 block; the last 16 stay a 16 x 16 fractal, rows 16 B apart
    ("最后16个通道保持不变，不进行合并")."""
    y = _merge(A48)
    for i, j in [(0, 0), (7, 31), (15, 31)]:
        assert y[i * 32 + j] == A48[i, j], (i, j)
    for i, j in [(0, 32), (1, 32), (9, 40), (15, 47)]:
        assert y[512 + i * 16 + (j - 32)] == A48[i, j], (i, j)
    assert (y[512 + 256:] == -99).all()


def test_a_dst_stride_shorter_than_a_block_writes_twice_and_is_refused():
    """dst_stride 8 (256 B) puts block 1 inside block 0's 16 rows of 32 B."""
    with pytest.raises(asc.KernelError, match="writes some elements of .* twice"):
        _merge(A48, dst_stride=8)


# -- LocalMemAllocator on the AIC -------------------------------------------------------------------------------

@asc.jit(kernel_type=AIC)
def allocated_matmul(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, addrs: asc.GlobalAddress):
    """C (16 x 16 float) = A (16 x 32 half) x B, every tensor from an allocator; the L1 heads go to ``addrs``."""
    ag, bg, cg, out = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(bt)
    cg.set_global_buffer(c)
    out.set_global_buffer(addrs)
    l1 = asc.LocalMemAllocator(asc.Hardware.L1)
    l0a, l0b = asc.LocalMemAllocator(asc.Hardware.L0A), asc.LocalMemAllocator(asc.Hardware.L0B)
    l0c = asc.LocalMemAllocator(asc.Hardware.L0C)
    a1 = l1.alloc(asc.TPosition.A1, asc.float16, 16 * 32)
    out.set_value(0, l1.get_cur_addr())
    b1 = l1.alloc(asc.TPosition.B1, asc.float16, 32 * 16)
    out.set_value(1, l1.get_cur_addr())
    out.set_value(2, b1.get_phy_addr())
    a2, b2 = l0a.alloc(asc.TPosition.A2, asc.float16, 512), l0b.alloc(asc.TPosition.B2, asc.float16, 512)
    c1 = l0c.alloc(asc.TPosition.CO1, asc.float32, 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 32, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(16, 16, 16, 16, Q.NoQuant))


def test_allocators_of_l1_and_l0_place_the_cube_tensors_back_to_back():
    rng = np.random.default_rng(7)
    a, b = rng.integers(-4, 5, (16, 32)).astype(np.float16), rng.integers(-4, 5, (32, 16)).astype(np.float16)
    c, addrs = np.zeros((16, 16), np.float32), np.zeros(8, np.int32)
    allocated_matmul[1](a, np.ascontiguousarray(b.T), c, addrs)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))  # small integers: exact
    assert addrs[:3].tolist() == [1024, 2048, 1024]  # head += tile_size * sizeof(half) (kernel_tensor_impl.h)


def _refused(body: str, kernel_type=AIC):
    namespace = {"asc": asc}
    exec("def k():\n    " + body, namespace)
    with pytest.raises(asc.KernelError) as info:
        jit = asc.jit(kernel_type=kernel_type) if kernel_type is not None else asc.jit
        jit(namespace["k"])[1]()
    return info.value


def test_an_alloc_outside_the_allocators_memory_is_refused():
    error = _refused("asc.LocalMemAllocator(asc.Hardware.L1).alloc(asc.TPosition.A2, asc.float16, 16)")
    assert "this allocator's memory is L1, whose positions are A1, B1, C1" in str(error)


def test_more_than_l0a_holds_is_an_overflow():
    error = _refused("l0a = asc.LocalMemAllocator(asc.Hardware.L0A)\n"
                     "    l0a.alloc(asc.TPosition.A2, asc.float16, 16384)\n"
                     "    l0a.alloc(asc.TPosition.A2, asc.float16, 16384 + 256)")  # 64 KiB + 512 B
    assert error.kind == "ub-overflow" and "needs 33280 B but only 32768 B of the 65536 B L0A" in str(error)


def test_l1_on_a_vector_core_and_the_fixpipe_buffer_are_refused():
    error = _refused("asc.LocalMemAllocator(asc.Hardware.L1).alloc(asc.TPosition.A1, asc.float16, 16)", kernel_type=None)
    assert "TPosition.A1 is the AIC's L1, which an AIV core does not have" in str(error)
    error = _refused("asc.LocalMemAllocator(asc.Hardware.FIXBUF)")
    assert error.kind == "unsupported" and "the Fixpipe buffer is not a simulated space" in str(error)


# -- L1 -> GM on the AIC's MTE3 -------------------------------------------------------------------------------

@asc.jit(kernel_type=AIC)
def through_l1(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """x (256 half) -> L1 -> y: the count form for the first 128, DataCopyParams (2 blocks of 2 x 32 B, 1 block
    apart in L1) for the rest."""
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 512)
    asc.data_copy(l1, xg, count=256)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, l1, count=128)
    asc.data_copy(yg[128:], l1[128:], asc.DataCopyParams(2, 2, 1, 0))


def test_l1_to_gm_copies_run_on_the_aics_mte3():
    """核内同步能力概述.md 表2 gives the AIC PIPE_MTE3 (MTE2_MTE3 among its flags); 数据搬运导览/GM与L1或L0数据搬运.md
    lists A1 / B1 -> GM with a count or DataCopyParams (blockLen, srcGap in 32 B units)."""
    x = np.arange(256, dtype=np.float16)
    y = np.full(256, -1, np.float16)
    trace = through_l1[1](x, y).trace
    np.testing.assert_array_equal(y[:128], x[:128])
    # block 0: L1 halfs [128, 160) -> y[128:160]; block 1 starts one 32 B block (16 halfs) after block 0's end
    np.testing.assert_array_equal(y[128:160], x[128:160])
    np.testing.assert_array_equal(y[160:192], x[176:208])
    assert (y[192:] == -1).all()
    assert [i.pipe.name for i in trace.cores[0] if i.op == "data_copy"] == ["MTE2", "MTE3", "MTE3"]
