"""Conv2dBiasReluQuant over several images: the tiles of one row. C's rows (N x Ho x Wo pixels) go in bands of
BASE_M, so a band can end one row into an image (or start at its last row): that tile's Mmad has m = 1, which the
cube runs as GEMV, reading A as one ND row (AD-API Mmad计算关键特性说明/GEMV.md), while LoadData 3Dv2 (and the
matmul's LoadData) leave A in Zz fractals. The generated kernel must not hand Mmad m = 1 for a Zz A.

Expected values, independently: the bits from an img2col built element by element in LoadData_3D.md's column order
through gen_cube_models' fma sequence, ReLU and Fixpipe's rint to int8; the tolerance from a direct float64
cross-correlation (test_gen_conv2d's models)."""

import numpy as np
import pytest

from fusekit.gen import catalogue as cat

from gen_cube_models import fma_sequence, m1, passes, rand
from test_gen_conv2d import direct_conv, im2col_documented

UNIT = ((1, 1), (1, 1), (1, 1))  # stride, padding, dilation of the catalogue's operator


def quantised(acc, scale):
    """int8(rint(relu(acc) x M1(scale))), saturated: Fixpipe's ReLU and QF322B8_PRE (随路量化.md 表1)."""
    return np.clip(np.rint(np.maximum(acc, 0) * m1(scale)), -128, 127).astype(np.int8)


# (N, C, H, kernel, cores): `fusekit run conv2d_bias_relu_quant --shape N C H H` takes w (C, C, H, H), Ho = Wo = 3,
# 9 rows an image: with bands of 16 rows a band holds one row of image 7 (row 63), and of image 8 (row 80); the
# last case (36 rows an image) never makes a one-row tile: the control
CASES = [(8, 8, 8, 8, 1), (8, 8, 8, 8, 8), (12, 8, 8, 8, 2), (9, 16, 8, 8, 2), (16, 16, 16, 16, 2), (8, 16, 6, 3, 5)]


@pytest.mark.parametrize("n, c, h, kern, cores", CASES)
def test_every_image_is_bit_exact_when_a_tile_has_one_row(n, c, h, kern, cores):
    x, w, bias = rand((n, c, h, h), np.float16, 11), rand((c, c, kern, kern), np.float16, 12), rand(c, np.float16, 13)
    scale = 2.0
    run = passes(cat.get("Conv2dBiasReluQuant").check(x, w, bias, scale=scale, core_num=cores))
    a, b = im2col_documented(x, w, *UNIT)
    acc = fma_sequence(a.reshape(-1, a.shape[-1]), b, bias)
    np.testing.assert_array_equal(run.y.reshape(n, -1, c), quantised(acc, scale).reshape(n, -1, c))
    exact = np.clip(np.rint(np.maximum(direct_conv(x, w, *UNIT) + bias.astype(np.float64), 0) * m1(scale)), -128, 127)
    assert np.abs(run.y.astype(np.float64) - exact).max() <= 1  # float32 accumulation: at most one step of rint


def test_a_one_row_matmul_is_not_run_as_gemv():
    x, w, bias = rand((1, 64), np.float16, 14), rand((64, 32), np.float16, 15), rand(32, np.float16, 16)
    op = cat.get("matmul_bias")
    run = passes(op.check(x, w, bias, core_num=1))
    assert all(r.ok for r in op.sanitize(x, w, bias, core_num=1))
    np.testing.assert_array_equal(run.y, fma_sequence(x, w, bias).astype(np.float16))
    np.testing.assert_allclose(run.y.astype(np.float64), x.astype(np.float64) @ w + bias, rtol=2e-3, atol=2e-2)
