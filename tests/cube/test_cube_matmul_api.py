"""The high-level Matmul (asc.adv.Matmul, register_matmul, TCubeTiling; fusekit.asc.adv.matmul) and its host tiling
(asc.lib.host.MultiCoreMatmulTiling; fusekit.asc.adv.matmul_tiling), in the two ways pyasc's tutorials use it:
AIC_ONLY with iterate_all into GM (04_matmul_cube_only), and MIX with iterate + get_tensor_c into UB and vector
work on the AIVs (05_matmul_leakyrelu). Integer-valued inputs make every product and sum exact in float32, so C
is compared for equality."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.adv.matmul_tiling import choose
from fusekit.asc.cube.load import square_offsets
from fusekit.pyasc.shim import host
from fusekit.sanitizer import sanitize


DT = {np.float16: host.DataType.DT_FLOAT16, np.float32: host.DataType.DT_FLOAT, np.int8: host.DataType.DT_INT8,
      np.int32: host.DataType.DT_INT32}


def tiling_for(m, n, k, dim, a=np.float16, c=np.float32, c_pos=host.TPosition.GM, bias=False, fix=None, b_trans=False):
    t = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    t.set_a_type(host.TPosition.GM, host.CubeFormat.ND, DT[a], False)
    t.set_b_type(host.TPosition.GM, host.CubeFormat.ND, DT[a], b_trans)
    t.set_c_type(c_pos, host.CubeFormat.ND, DT[c])
    t.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    t.set_dim(dim)
    t.set_org_shape(m, n, k)
    t.set_shape(m, n, k)
    t.enable_bias(bias)
    if fix:
        t.set_fix_split(*fix)
    tiling = asc.adv.TCubeTiling()
    assert t.get_tiling(tiling) == 0
    return tiling


@asc.jit(matmul_cube_only=True)
def cube_only(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, bias: asc.GlobalAddress,
              tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress, b_trans: asc.ConstExpr[bool]):
    """04_matmul_cube_only's kernel: each AIC its share of C, its tail from set_tail."""
    block = asc.get_block_idx()
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    n_index, m_index = block // m_blocks, block % m_blocks
    ag, bg, cg, biasg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ag.set_global_buffer(a + m_index * tiling.k_a * tiling.single_core_m)
    bg.set_global_buffer(b + (n_index * tiling.k_b * tiling.single_core_n if b_trans else n_index * tiling.single_core_n))
    cg.set_global_buffer(c + m_index * tiling.n * tiling.single_core_m + n_index * tiling.single_core_n)
    biasg.set_global_buffer(bias + n_index * tiling.single_core_n)
    tail_m = min(tiling.single_core_m, tiling.m - m_index * tiling.single_core_m)
    tail_n = min(tiling.single_core_n, tiling.n - n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, b_trans),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype),
                        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, biasg.dtype))
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    if block < tiling.used_core_num:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg, b_trans)
        if tiling.is_bias:
            mm.set_bias(biasg)
        mm.set_tail(tail_m, tail_n, tiling.k_a)
        mm.iterate_all(cg)
        mm.end()


def _integers(shape, dtype, seed):
    return np.random.default_rng(seed).integers(-4, 5, shape).astype(dtype)


@pytest.mark.parametrize("dtype, out, b_trans, n", [(np.float16, np.float32, False, 96), (np.float16, np.float16, True, 96),
                                                    (np.float32, np.float32, False, 96), (np.int8, np.int32, False, 128),
                                                    (np.int8, np.int32, True, 96)])
def test_cube_only_iterate_all(dtype, out, b_trans, n):
    """float B in ND goes through load_data_with_transpose's 16 x 16 squares, int8's through its 32 x 32 ones (whole
    squares: shares of 32 columns); K = 100 leaves a tail step."""
    m, k = 80, 100
    a, b = _integers((m, k), dtype, 1), _integers((k, n), dtype, 2)
    bias = _integers((1, n), np.float32, 3) if out is not np.int32 else np.zeros((1, n), np.float32)
    tiling = tiling_for(m, n, k, 4, dtype, out, bias=out is not np.int32, b_trans=b_trans)
    c = np.zeros((m, n), out)
    cube_only[tiling.used_core_num](a, np.ascontiguousarray(b.T) if b_trans else b, c, bias, tiling,
                                    np.zeros(1 << 16, np.uint8), b_trans)
    expected = a.astype(np.int64) @ b.astype(np.int64) + (bias.astype(np.int64) if out is not np.int32 else 0)
    np.testing.assert_array_equal(c, expected.astype(out))


@pytest.mark.parametrize("m", [1, 17, 33])
def test_a_block_of_one_row_is_not_gemv(m):
    """m = 1 makes Mmad a GEMV reading A as one contiguous row (Mmad计算关键特性说明/GEMV.md); the Matmul's A sits
    in Zz fractals, so a block of one row (M = 1, or the last of 33 on one core's share of 16-row blocks) must not
    issue m = 1."""
    n, k = 96, 100
    a, b = _integers((m, k), np.float16, 7), _integers((k, n), np.float16, 8)
    bias = np.zeros((1, n), np.float32)
    tiling = tiling_for(m, n, k, 1, np.float16, np.float32, fix=(16, 32, -1))
    c = np.zeros((m, n), np.float32)
    cube_only[tiling.used_core_num](a, b, c, bias, tiling, np.zeros(1 << 16, np.uint8), False)
    np.testing.assert_array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32))


@asc.jit
def leaky(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, bias: asc.GlobalAddress, alpha: float,
          tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    """05_matmul_leakyrelu's kernel (MIX_AIC_1_2, as pyasc types a kernel with register_matmul): each AIV its share,
    a block at a time through UB."""
    block = asc.get_block_idx()
    m_blocks = tiling.m.ceildiv(tiling.single_core_m)
    m_index, n_index = block % m_blocks, block // m_blocks
    ag, bg, cg, biasg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ag.set_global_buffer(a + m_index * tiling.k_a * tiling.single_core_m)
    bg.set_global_buffer(b + n_index * tiling.single_core_n)
    cg.set_global_buffer(c + m_index * tiling.n * tiling.single_core_m + n_index * tiling.single_core_n)
    biasg.set_global_buffer(bias + n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=que, num=1, len=tiling.base_m * tiling.base_n * 4)
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, cg.dtype),
                        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, biasg.dtype))
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.set_bias(biasg)
    with mm.iterate() as count:
        t = que.alloc_tensor(asc.float32)
        mm.get_tensor_c(t, en_sequential_write=True)
        asc.leaky_relu(t, t, alpha, count=tiling.base_m * tiling.base_n)
        que.enque(t)
        t = que.deque(asc.float32)
        rounds = tiling.single_core_m // tiling.base_m
        start = count % rounds * tiling.base_m * tiling.n + count // rounds * tiling.base_n
        asc.data_copy(cg[start:], t, asc.DataCopyParams(tiling.base_m, tiling.base_n * 4 // 32, 0,
                                                        (tiling.n - tiling.base_n) * 4 // 32))
        que.free_tensor(t)
    mm.end()


def _leaky_args(m=64, n=64, k=96):
    a, b = _integers((m, k), np.float16, 4), _integers((k, n), np.float16, 5)
    bias = _integers((1, n), np.float32, 6)
    tiling = tiling_for(m, n, k, 2, c_pos=host.TPosition.VECCALC, bias=True, fix=(32, 32, -1))
    return a, b, bias, tiling, (a, b, np.zeros((m, n), np.float32), bias, 0.25, tiling, np.zeros(1 << 20, np.uint8))


def test_a_mix_matmul_serves_both_aivs_and_is_clean():
    a, b, bias, tiling, args = _leaky_args()
    result = leaky[tiling.used_core_num // 2](*args)
    mm = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_array_equal(args[2], np.where(mm >= 0, mm, np.float32(0.25) * mm))
    trace = result.trace
    assert trace.kinds == ("AIV", "AIV", "AIC")  # MIX_AIC_1_2: one AI Core
    assert {i.op for i in trace.cores[2]} >= {"mmad", "fixpipe", "load_data"}  # the AIC did the cube work
    assert not any(i.op == "mmad" for i in trace.cores[0])
    _, _, _, _, clean = _leaky_args()
    assert sanitize(leaky, outputs=("c",))[tiling.used_core_num // 2](*clean).findings == []


def test_the_tiling_splits_the_cores_and_fits_the_buffers():
    """05_matmul_leakyrelu's tiling (1024 x 640 x 256 on 2 cores, base 256 x 128 fixed): two shares of 512 rows, so
    that each is whole base blocks; base blocks fit half of L0A / L0B and L0C (all of L0C when fixed)."""
    t = choose(1024, 640, 256, 2, {"a": 2, "b": 2, "c": 4}, True, (256, 128, -1))
    assert (t["used_core_num"], t["single_core_m"], t["single_core_n"], t["base_m"], t["base_n"]) == (2, 512, 640, 256,
                                                                                                       128)
    assert t["base_m"] * t["base_k"] * 2 <= 32 * 1024 and t["base_m"] * t["base_n"] * 4 <= 128 * 1024
    auto = choose(128, 30720, 64, 24, {"a": 2, "b": 2, "c": 4}, False)  # 04_matmul_cube_only's
    assert auto["used_core_num"] == 24 and auto["single_core_n"] == 1280 and auto["base_n"] * auto["base_m"] * 4 <= 65536
    with pytest.raises(ValueError, match="does not fit"):
        choose(64, 64, 64, 1, {"a": 2, "b": 2, "c": 4}, False, (512, 512, 512))


def test_load_data_with_transpose_squares_by_hand():
    """LoadDataWithTranspose.md: a float square is two 16 x 8 fractals side by side, transposed, split by columns into
    two fractals (the second 1 + dst_frac_gap after the first); an int8 square two 16 x 32 fractals one above the
    other, split by rows."""
    src, dst, twice = square_offsets(0, 1, 0, 0, 2, 4)
    # destination (i, j) of the transposed square reads source (j, i): first fractal columns 0-7, second 8-15
    flat_src, flat_dst = src.reshape(-1), dst.reshape(-1)
    lookup = dict(zip(flat_dst.tolist(), flat_src.tolist()))
    # source S = [f0 | f1]: S[r][c] at r * 8 + c (c < 8), 128 + r * 8 + c - 8; destination T = S^T split by columns,
    # T[i][j] at i * 8 + j (j < 8), 3 * 128 + i * 8 + j - 8 (the second fractal 1 + dst_frac_gap = 3 fractals on)
    assert lookup[0] == 0                      # T[0][0] = S[0][0]
    assert lookup[1] == 8                      # T[0][1] = S[1][0]
    assert lookup[8] == 1                      # T[1][0] = S[0][1]
    assert lookup[3 * 128] == 64               # T[0][8] = S[8][0]
    assert lookup[64] == 128                   # T[8][0] = S[0][8], in f1
    assert not twice
    src8, dst8, _ = square_offsets(0, 1, 0, 0, 0, 1)
    lookup8 = dict(zip(dst8.reshape(-1).tolist(), src8.reshape(-1).tolist()))
    assert lookup8[1] == 32 and lookup8[16 * 32] == 16  # (0, 1) <- (1, 0); (16, 0) <- (0, 16)


def test_a_with_iterate_in_a_closure_loops():
    blocks = []

    @asc.jit(matmul_cube_only=True)
    def kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
               workspace: asc.GlobalAddress):
        ag, bg, cg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        ag.set_global_buffer(a)
        bg.set_global_buffer(b)
        cg.set_global_buffer(c)
        mm = asc.adv.Matmul(asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                            asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                            asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
        asc.adv.register_matmul(asc.TPipe(), workspace, mm, tiling)
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        with mm.iterate() as count:
            blocks.append(int(count))
            mm.get_tensor_c(cg[int(count) * 32 * 32:], en_sequential_write=True)
        mm.end()

    a, b = _integers((64, 32), np.float16, 7), _integers((32, 32), np.float16, 8)
    tiling = tiling_for(64, 32, 32, 1, fix=(32, 32, -1))
    c = np.zeros((2, 32, 32), np.float32)
    kernel[1](a, b, c, tiling, np.zeros(1024, np.uint8))
    assert blocks == [0, 1]
    np.testing.assert_array_equal(c.reshape(64, 32), a.astype(np.float32) @ b.astype(np.float32))


def test_calls_before_register_matmul_are_refused():
    @asc.jit(matmul_cube_only=True)
    def kernel(c: asc.GlobalAddress):
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        mm = asc.adv.Matmul(asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                            asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                            asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))
        mm.iterate_all(cg)

    with pytest.raises(asc.KernelError, match="before asc.adv.register_matmul"):
        kernel[1](np.zeros(16, np.float32))

