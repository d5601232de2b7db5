"""The fractal layouts (AD-API 矩阵计算分形介绍/关键分形格式详解.md; DataCopy（GMToL1随路转换-ND2NZ搬运）.md;
LoadData_2D.md): element offsets computed by hand for small matrices, and the bytes ND2NZ and load_data leave in
L1 and L0A / L0B, for each C0 (16 for b16, 32 for b8, 8 for b32)."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.cube import layout

from cube_kernels import AIC, Snapshots


def test_c0_is_32_bytes_of_elements():
    assert [layout.c0(s) for s in (1, 2, 4)] == [32, 16, 8]


def test_zz_of_a_32_x_32_half_matrix():
    """A (32 x 32, b16) in L0A: fractals 16 x 16 in row-major order of fractals (Zz): (m1, k1) is fractal
    m1 * 2 + k1, rows inside."""
    off = layout.zz(32, 32, 16)
    assert off[0, 0] == 0 and off[0, 15] == 15 and off[1, 0] == 16      # fractal 0, row-major inside
    assert off[0, 16] == 256                                            # fractal 1: (m1 0, k1 1)
    assert off[16, 0] == 512 and off[17, 18] == 768 + 16 + 2            # fractals 2 and 3
    assert sorted(off.ravel()) == list(range(1024))


def test_zn_of_a_32_x_32_half_matrix():
    """B (K 32 x N 32, b16) in L0B: fractals in row-major order of fractals (k1, n1); inside each, B's columns are
    the rows (the fractal holds B transposed): (kk, j) of fractal (0, 0) at j * 16 + kk."""
    off = layout.zn(32, 32, 16)
    assert off[0, 0] == 0 and off[1, 0] == 1 and off[0, 1] == 16        # k runs inside a row, n across rows
    assert off[0, 16] == 256                                            # fractal (k1 0, n1 1)
    assert off[16, 0] == 512 and off[18, 17] == 768 + 16 + 2           # fractals (1, 0), (1, 1)


def test_int8_fractals_are_16_x_32_in_l0a_and_32_x_16_in_l0b():
    """LoadData_2D.md: b8 is 16 x 32 in L0A and 32 x 16 in L0B, 512 B each."""
    a, b = layout.zz(16, 64, 32), layout.zn(64, 16, 32)
    assert a[0, 31] == 31 and a[1, 0] == 32 and a[0, 32] == 512
    assert b[31, 0] == 31 and b[0, 1] == 32 and b[32, 0] == 512


def test_float_fractals_are_16_x_8():
    a = layout.zz(16, 16, 8)
    assert a[0, 7] == 7 and a[1, 0] == 8 and a[0, 8] == 128


def test_l0c_is_nz_of_16_x_16_fractals_whatever_m():
    """C (m x n) in L0C: column blocks of 16, ceil(m / 16) * 256 elements apart; m = 1 (GEMV) still takes a whole
    fractal per block (GEMV.md: each 1 x 16 occupies 1024 B)."""
    off = layout.l0c(20, 32)
    assert off[0, 0] == 0 and off[0, 15] == 15 and off[1, 0] == 16 and off[19, 0] == 19 * 16
    assert off[0, 16] == 32 * 16                                        # ceil16(20) = 32 rows per block
    assert layout.l0c(1, 32)[0, 16] == 256


def _nd2nz_kernel(dtype, rows: int, cols: int, c0: int):
    @asc.jit(kernel_type=AIC)
    def kernel(x: asc.GlobalAddress):
        gm = asc.GlobalTensor()
        gm.set_global_buffer(x)
        l1 = asc.LocalTensor(dtype, asc.TPosition.A1, 0, 16 * -(-cols // c0) * c0)
        asc.data_copy(l1, gm, asc.Nd2NzParams(1, rows, cols, 0, cols, 16, 1, 0))

    return kernel


@pytest.mark.parametrize("np_dtype, dtype, cols, c0", [(np.float16, asc.float16, 23, 16),
                                                       (np.int8, asc.int8, 40, 32),
                                                       (np.float32, asc.float32, 10, 8)])
def test_nd2nz_bytes_in_l1_with_the_zero_pad(np_dtype, dtype, cols, c0):
    """The page's example (half, 16 rows x 23 columns, dstNzC0Stride 16) and its b8 / b32 twins: column block j of
    row r at j * 16 * C0 + r * C0; each row's columns past d_value up to the next 32 B are zeros; the rows past
    n_value are not written (they keep L1's fresh bytes)."""
    rows = 3
    x = (np.arange(rows * cols) % 100 + 1).astype(np_dtype).reshape(rows, cols)
    snaps = Snapshots("data_copy")
    asc.launch(_nd2nz_kernel(dtype, rows, cols, c0), 1, (x,), executor=snaps)
    l1 = snaps.after[0][1]["L1"].view(np_dtype)
    blocks = -(-cols // c0)
    for r in range(rows):
        for c in range(blocks * c0):
            expected = x[r, c] if c < cols else 0
            assert l1[(c // c0) * 16 * c0 + r * c0 + c % c0] == expected
    assert (l1[rows * c0:16 * c0].view(np.uint8) == 0xFF).all()         # row 3.. of block 0: never written


def test_load_data_turns_nz_into_zz_and_transposes_into_zn():
    """A 32 x 32 half matrix in L1 Nz (two column blocks of 32 rows) into L0A Zz, one load per row of fractals
    (start_index m1, repeat 2, src_stride 2), and into L0B Zn with if_transpose (each 16 x 16 fractal transposed,
    fractal (k1, n1) from Nz fractal n1 * 2 + k1)."""
    x = np.arange(32 * 32, dtype=np.float16).reshape(32, 32)

    @asc.jit(kernel_type=AIC)
    def kernel(g: asc.GlobalAddress):
        gm = asc.GlobalTensor()
        gm.set_global_buffer(g)
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 1024)
        l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 1024)
        l0b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 1024)
        asc.data_copy(l1, gm, asc.Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        for m1 in range(2):
            asc.load_data(l0a[m1 * 512:], l1[m1 * 256:], asc.LoadData2DParams(0, 2, 2, 0, 0, False, 0))
        for k1 in range(2):
            asc.load_data(l0b[k1 * 512:], l1[k1 * 256:], asc.LoadData2DParams(0, 2, 2, 0, 0, True, 0))

    snaps = Snapshots("load_data")
    asc.launch(kernel, 1, (x,), executor=snaps)
    l0a, l0b = snaps.after[-1][1]["L0A"].view(np.float16), snaps.after[-1][1]["L0B"].view(np.float16)
    for i, j in [(0, 0), (0, 17), (5, 3), (16, 0), (31, 31), (20, 9)]:
        assert l0a[((i // 16) * 2 + j // 16) * 256 + (i % 16) * 16 + j % 16] == x[i, j]   # Zz
        assert l0b[((i // 16) * 2 + j // 16) * 256 + (j % 16) * 16 + i % 16] == x[i, j]   # Zn: B[k=i, n=j]


def test_init_const_value_fills_blocks_with_gaps():
    """Fill.md 表3: repeat_times runs of block_num blocks (32 B in L1, 512 B in L0A), dst_gap blocks apart; the
    page's L1 example fills 3 blocks a run, 5 runs, 5 blocks between them."""

    @asc.jit(kernel_type=AIC)
    def kernel():
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 40 * 16)
        l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4 * 256)
        asc.init_const_value(l1, asc.InitConstValueParams(5, 3, 5, 0))
        asc.init_const_value(l0a, asc.InitConstValueParams(2, 1, 1, 2.5))

    snaps = Snapshots("init_const_value")
    asc.launch(kernel, 1, executor=snaps)
    l1, l0a = snaps.after[-1][1]["L1"].view(np.float16), snaps.after[-1][1]["L0A"].view(np.float16)
    for block in range(40):
        filled = (block % 8) < 3  # runs of 3 blocks, 8 blocks from one run's start to the next
        assert (l1[block * 16:(block + 1) * 16] == 0).all() == filled
    np.testing.assert_array_equal(l0a[:256], np.full(256, 2.5, np.float16))    # fractal 0
    assert np.isnan(l0a[256:512]).all()                                        # fractal 1: the gap
    np.testing.assert_array_equal(l0a[512:768], np.full(256, 2.5, np.float16))  # fractal 2
