"""Mix kernels in column slabs (fusekit.gen.cube.CubeOp._slab): where the row shares leave AICs idle (small M) and
the epilogue is elementwise, each AI Core takes a band of BASE_M rows of one column slab, so B is read once per
band as by the plain matmul's tiling, and its two AIVs take the two column halves of the slab (or, where the last
slab leaves the odd AIV nothing, halves of each band's rows). A row reduction keeps whole rows.

Expected values: float64 numpy products and epilogues, the fma sequence of gen_cube_models for the product's bits;
the sanitizer for the synchronisation; GM traffic from the shapes (B's bytes once per band)."""

import numpy as np
import pytest

import fusekit
from fusekit.gen import cube
from fusekit.soc import get_soc
from fusekit.timing import NO_VALUES, predict

from gen_cube_models import fma_sequence, passes, rand


@fusekit.op(dtypes=("float16", "float32"))
def mm_silu_mul(x, w, up):
    g = fusekit.matmul(x, w, transpose_b=True)
    return g / (1.0 + fusekit.exp(-g)) * up


@fusekit.op(dtypes=("float16", "float32"))
def mm_add_row(x, w, bias_row):  # a (N,) input broadcast along rows (not Mmad's bias: it follows a scale)
    return fusekit.matmul(x, w) * 0.5 + bias_row


@fusekit.op(dtypes=("float16",))
def mm_relu(a, b):  # ReLU in Fixpipe: an AIC_ONLY kernel
    return fusekit.relu(fusekit.matmul(a, b))


@fusekit.op(dtypes=("float32",))
def mm_rms(x, w):
    z = fusekit.matmul(x, w)
    return z * fusekit.rsqrt(fusekit.mean(z * z, axis=-1, keepdims=True) + 1e-6)


def _clean(reports):
    assert reports and all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [1376, 400, 272])  # 11 slabs (the last 96: column halves); 4 (last 16: row halves)
def test_a_small_m_matmul_splits_its_columns_and_matches_the_models(dtype, n):
    x, w, up = rand((64, 96), dtype, 1), rand((n, 96), dtype, 2), rand((64, n), dtype, 3)
    run = passes(mm_silu_mul.check(x, w, up, precision="fp32"))
    plan = run.tilings[0]
    assert plan.cols_per_core and plan.cols_per_core % 128 == 0 and plan.rows_per_core == 64
    assert plan.block_dim == -(-n // plan.cols_per_core)
    g = fma_sequence(x, w.T).astype(np.float64)
    np.testing.assert_allclose(run.y.astype(np.float64), g / (1 + np.exp(-g)) * up, rtol=2e-3, atol=2e-3)


def test_the_aivs_split_a_slab_s_columns_unless_the_last_slab_leaves_the_odd_one_none():
    """Slabs of 128 float32 columns: halves of 64 when the last slab is wider than 64 (n = 1376: 96), else each
    band's rows (n = 272: the last slab 16 wide; AIV_COLS 0). Both run race-free under the sanitizer."""
    program = mm_silu_mul.cube.variant("float32", "float32", "fp32", get_soc(None))[0].program
    assert cube.CubeOp._halves(program, 128, 1376) == 64 and cube.CubeOp._halves(program, 128, 272) == 0
    x, w, up = rand((64, 96), np.float32, 4), rand((272, 96), np.float32, 5), rand((64, 272), np.float32, 6)
    assert mm_silu_mul.run(x, w, up).tilings[0].cols_per_core == 128
    _clean(mm_silu_mul.sanitize(x, w, up))


def test_column_halves_of_the_aivs_are_race_free_and_one_lockstep_group_per_slab_width():
    x, w, up = rand((64, 96), np.float32, 7), rand((1376, 96), np.float32, 8), rand((64, 1376), np.float32, 9)
    run = mm_silu_mul.run(x, w, up)
    assert run.launches[0].trace.executor == "lockstep"
    _clean(mm_silu_mul.sanitize(x, w, up))


def test_a_row_input_is_read_at_the_slab_s_columns():
    x, w, row = rand((32, 64), np.float32, 10), rand((64, 640), np.float32, 11), rand(640, np.float32, 12)
    run = passes(mm_add_row.check(x, w, row))
    assert run.tilings[0].cols_per_core
    np.testing.assert_allclose(run.y, fma_sequence(x, w) * 0.5 + row, rtol=1e-6, atol=1e-6)


def test_a_row_reduction_keeps_whole_rows():
    x, w = rand((32, 64), np.float32, 13), rand((64, 640), np.float32, 14)
    run = passes(mm_rms.check(x, w))
    assert not run.tilings[0].cols_per_core


def test_b_is_read_once_per_band_not_once_per_aic():
    """The timing model's GM bytes: B (1376 x 512 float32, 2.8 MB) once for the one band of 128 rows, A once per
    slab, the workspace written and read once, the up input read and the output written once."""
    x = np.zeros((128, 512), np.float32)
    w, up = np.zeros((1376, 512), np.float32), np.zeros((128, 1376), np.float32)
    run = mm_silu_mul.run(x, w, up, executor=NO_VALUES, sample_cores=True)
    slabs = run.tilings[0].block_dim
    expected = w.nbytes + slabs * x.nbytes + 4 * up.nbytes  # B, A per slab, C written + read, up, y
    got = predict([run.launches[0].trace], run.soc).gm_bytes
    assert expected * 0.95 <= got <= expected * 1.1, (got, expected)
    assert run.tilings[0].rows_per_core == 128 and slabs == 11


@pytest.mark.parametrize("n, slabs", [(1000, False), (1008, True)])
def test_an_aic_only_kernel_splits_columns_only_where_output_rows_are_whole_blocks(n, slabs):
    """relu in Fixpipe (AIC_ONLY), float16 out: a row of 1000 halves is 2000 B, not whole 32 B blocks, so a column
    split would let the last slab of a row and the first of the next (two AICs) write one GM block; 1008 splits."""
    a, b = rand((16, 64), np.float16, 15), rand((64, n), np.float16, 16)
    run = passes(mm_relu.check(a, b))
    assert bool(run.tilings[0].cols_per_core) is slabs
    _clean(mm_relu.sanitize(a, b))
