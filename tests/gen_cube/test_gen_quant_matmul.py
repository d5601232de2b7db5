"""Quantisation and the bias on the cube (fusekit.gen.cube): a (N,) bias folded into Mmad (bias table), ReLU and
(de)quantisation in Fixpipe (QF322B8_PRE, DEQF16 and their per-column V forms), and the steps Fixpipe lacks left
to the AIVs.

Expected values from independent models (gen_cube_models): the exact int64 product for int8, the fma sequence from
the bias row for floats (docs/cube.md Numerics, Mmad.md's bias overload), Fixpipe's steps as 随路量化.md and the
golden scripts give them -- y = float32(x) * M1 (M1 = the scale at 10 mantissa bits), int8 = saturate(rint(y)),
float16 = fp16(y) -- and float64 numpy for the tolerance checks."""

import numpy as np
import pytest

import fusekit
from fusekit.gen import catalogue as cat
from fusekit.gen.cube import fixpipe_stage, peel_bias, split

from gen_cube_models import fma_sequence, m1, passes, rand

M, N, K = 40, 48, 64


def _int_product(x, w):
    return x.astype(np.int64) @ w.astype(np.int64).T


@pytest.mark.parametrize("per_channel", [True, False])
def test_quant_matmul_dequant_in_fixpipe(per_channel):
    x, w = rand((M, K), np.int8, 1), rand((N, K), np.int8, 2)
    scale = np.random.default_rng(3).uniform(1e-4, 2e-3, N if per_channel else ()).astype(np.float32)
    op = cat.get("quant_matmul_dequant")
    run = passes(op.check(x, w, scale, core_num=2))
    want = (_int_product(x, w).astype(np.float32) * m1(scale)).astype(np.float16)  # DEQF16: fp16(x * M1)
    np.testing.assert_array_equal(run.y, want)
    src = run.variant.source
    assert "AIC_ONLY" in src and ("QuantModes.VDEQF16" if per_channel else "QuantModes.DEQF16") in src
    assert ("scale1[n1:]" in src) == per_channel  # the V mode reads its column scales from L1
    reports = op.sanitize(x, w, scale, core_num=2)
    assert all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


def test_bias_in_mmad_then_relu_and_int8_quantisation_in_fixpipe():
    a, b, bias = rand((M, 40), np.float16, 4), rand((40, N), np.float16, 5), rand(N, np.float16, 6)
    op = cat.get("matmul_bias_relu_quant")
    run = passes(op.check(a, b, bias, scale=9.5, core_num=2, base=(16, 32, 16)))
    y = np.maximum(fma_sequence(a, b, bias), 0) * m1(9.5)  # C starts from the bias; relu_en: M2 = 0
    np.testing.assert_array_equal(run.y, np.clip(np.rint(y), -128, 127).astype(np.int8))
    assert 0 < (np.abs(run.y) == 127).sum() < run.y.size  # some saturate, most do not
    src = run.variant.source
    assert "+ bias: in Mmad" in src and "QuantModes.QF322B8_PRE" in src and "relu: in Fixpipe" in src
    assert "asc.mmad(c1, a2, b2, bt1," in src
    reports = op.sanitize(a, b, bias, scale=9.5, core_num=2, base=(16, 32, 16))
    assert all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


def test_matmul_bias_runs_on_the_aic_alone():
    a, b, bias = rand((M, 40), np.float32, 7), rand((40, N), np.float32, 8), rand(N, np.float32, 9)
    run = passes(cat.get("matmul_bias").check(a, b, bias, precision="fp32"))
    np.testing.assert_array_equal(run.y, fma_sequence(a, b, bias))
    assert {run.launches[0].trace.core_label(i)[:3] for i in range(len(run.launches[0].trace.cores))} == {"aic"}


def test_what_fixpipe_cannot_do_goes_to_the_aivs():
    """An offset added before rounding (Fixpipe adds a 9-bit integer after it), a full-shape residual (no bias
    row), a bfloat16 bias (the bias table takes half / float): each leaves its step on the AIVs."""
    quant_offset = fusekit.define_op("cast(matmul(a, b) * scale + 3.5, 'int8')", "qo")
    s = split(quant_offset.graph, "float16")
    assert fixpipe_stage(s) is None
    a, b = rand((32, K), np.float16, 10), rand((K, 64), np.float16, 11)  # int8 UB rows: whole 32 B
    run = passes(quant_offset.check(a, b, np.array(4.0, np.float16)))
    assert "MIX_AIC_1_2" in run.variant.source
    residual = cat.get("matmul_bias")
    s = split(residual.graph, "float16")
    assert peel_bias(s, "float16", frozenset()).bias is None  # (M, N) "bias": a residual, not a row
    assert peel_bias(s, "float16", frozenset({"bias"})).bias == "bias"
    assert peel_bias(split(residual.graph, "bfloat16"), "bfloat16", frozenset({"bias"})).bias is None


def test_small_m_splits_the_columns_over_the_aics():
    """16 rows: one row share, so the AIC_ONLY kernel gives the AICs column groups (whole base tiles, whole 32 B
    blocks of the int8 rows); the per-column scales and the bias follow their columns."""
    x, w = rand((16, K), np.int8, 12), rand((96, K), np.int8, 13)
    scale = np.random.default_rng(14).uniform(1e-4, 2e-3, 96).astype(np.float32)
    op = cat.get("quant_matmul_dequant")
    run = passes(op.check(x, w, scale, core_num=4, base=(16, 32, 32)))
    cube_plan = run.tilings[0]
    assert cube_plan.block_dim == 3 and cube_plan.cols_per_core == 32
    np.testing.assert_array_equal(run.y, (_int_product(x, w).astype(np.float32) * m1(scale)).astype(np.float16))
    a, b, bias = rand((16, 40), np.float16, 15), rand((40, 96), np.float16, 16), rand(96, np.float16, 17)
    run = passes(cat.get("matmul_bias_relu_quant").check(a, b, bias, scale=9.5, core_num=4, base=(16, 32, 16)))
    assert run.tilings[0].block_dim == 3
    want = np.clip(np.rint(np.maximum(fma_sequence(a, b, bias), 0) * m1(9.5)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(run.y, want)
    reports = op.sanitize(x, w, scale, core_num=4, base=(16, 32, 32))
    assert all(r.ok for r in reports), [f.message for r in reports for f in r.findings]
