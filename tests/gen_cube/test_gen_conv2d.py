"""conv2d in the generator (fusekit.gen.cube): img2col by LoadData 3Dv2 from the NC1HWC0 map in L1, the packed
weights as B, any epilogue after it; the seed article's Conv2dBiasReluQuant in one AIC_ONLY kernel.

Expected values, independently: a direct float64 cross-correlation (torch.nn.functional.conv2d's definition) for
the tolerance, and for the bits an img2col built here element by element in LoadData_3D.md's column order
(k = ((c1 x kh + i) x kw + j) x C0 + c0) through gen_cube_models' fma sequence and Fixpipe's steps."""

import numpy as np
import pytest

import fusekit
from fusekit.gen import catalogue as cat

from gen_cube_models import fma_sequence, m1, passes, rand


def direct_conv(x, w, stride, padding, dilation):
    """y (N, Ho, Wo, Cout) in float64: sum over c, i, j of x[c, ho*sh + i*dh - ph, wo*sw + j*dw - pw] * w[o, c, i, j]."""
    n, cin, h, wd = x.shape
    cout, _, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ho, wo = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, ho, wo, cout))
    for p in range(ho):
        for q in range(wo):
            for i in range(kh):
                for j in range(kw):
                    r, c = p * sh + i * dh - ph, q * sw + j * dw - pw
                    if 0 <= r < h and 0 <= c < wd:
                        y[:, p, q, :] += x[:, :, r, c].astype(np.float64) @ w[:, :, i, j].astype(np.float64).T
    return y


def im2col_documented(x, w, stride, padding, dilation, c0=16):
    """(A (N, Ho*Wo, K), B (K, Cout)) with K in LoadData_3D.md's order, zero where the window is padding or a padded
    channel: element by element."""
    n, cin, h, wd = x.shape
    cout, _, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    c1 = -(-cin // c0)
    ho, wo = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    k = c1 * kh * kw * c0
    a, b = np.zeros((n, ho * wo, k), x.dtype), np.zeros((k, cout), w.dtype)
    for cb in range(c1):
        for i in range(kh):
            for j in range(kw):
                for cc in range(c0):
                    col, ch = ((cb * kh + i) * kw + j) * c0 + cc, cb * c0 + cc
                    if ch >= cin:
                        continue
                    b[col] = w[:, ch, i, j]
                    for p in range(ho):
                        for q in range(wo):
                            r, c = p * sh + i * dh - ph, q * sw + j * dw - pw
                            if 0 <= r < h and 0 <= c < wd:
                                a[:, p * wo + q, col] = x[:, ch, r, c]
    return a, b


GEOMETRY = dict(stride=(1, 2), padding=(1, 2), dilation=(2, 1))


@fusekit.op(dtypes=("float16",))
def conv(x, w):
    return fusekit.conv2d(x, w, **GEOMETRY)


def test_conv2d_through_img2col_is_bit_exact_to_the_fma_sequence():
    x, w = rand((2, 20, 9, 11), np.float16, 1), rand((24, 20, 3, 2), np.float16, 2)  # Cin 20: C1 = 2, half padding
    run = passes(conv.check(x, w, core_num=2, base=(32, 16, 32)))  # several bands, Cout tiles and K steps
    geometry = tuple(GEOMETRY.values())
    a, b = im2col_documented(x, w, *geometry)
    want = np.stack([fma_sequence(a[i], b) for i in range(2)]).astype(np.float16).reshape(run.y.shape)
    np.testing.assert_array_equal(run.y, want)
    np.testing.assert_allclose(run.y.astype(np.float64), direct_conv(x, w, *geometry), rtol=2e-3, atol=2e-2)
    assert run.y.shape == (2, 7, 7, 24) and "LoadData3DParamsV2" in run.variant.source


def test_conv2d_bias_relu_quant_runs_on_the_aic_alone():
    x, w, bias = rand((1, 16, 8, 8), np.float16, 3), rand((32, 16, 3, 3), np.float16, 4), rand(32, np.float16, 5)
    op = cat.get("Conv2dBiasReluQuant")
    run = passes(op.check(x, w, bias, scale=3.0, core_num=2))
    a, b = im2col_documented(x, w, (1, 1), (1, 1), (1, 1))
    y = np.maximum(fma_sequence(a[0], b, bias), 0) * m1(3.0)
    np.testing.assert_array_equal(run.y.reshape(-1, 32), np.clip(np.rint(y), -128, 127).astype(np.int8))
    src = run.variant.source
    assert "AIC_ONLY" in src and "+ bias: in Mmad" in src and "QuantModes.QF322B8_PRE" in src
    reports = op.sanitize(x, w, bias, scale=3.0, core_num=2)
    assert all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


def test_conv2d_with_an_aiv_epilogue_and_its_refusals():
    x, w = rand((1, 16, 6, 6), np.float16, 6), rand((16, 16, 3, 3), np.float16, 7)
    gelu_conv = fusekit.define_op("gelu(conv2d(x, w, padding=1))", "gc")
    run = passes(gelu_conv.check(x, w))
    assert "MIX_AIC_1_2" in run.variant.source and run.y.shape == (1, 6, 6, 16)
    with pytest.raises(ValueError, match="one Cin"):
        conv.run(x, rand((16, 8, 3, 3), np.float16, 8))
    with pytest.raises(ValueError, match="L1"):
        conv.run(rand((1, 64, 64, 64), np.float16, 9), rand((16, 64, 1, 1), np.float16, 10))
