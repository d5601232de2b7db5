"""fusekit.gen on the cube: ``matmul`` in an operator, lowered to an AIC_ONLY kernel (the epilogue in Fixpipe) or a
MIX_AIC_1_2 kernel (the epilogue on the AIVs, through a GM workspace and a mode-2 cross-core flag).

Independent checks: float64 numpy products (np.matmul) and math.erf / numpy for the epilogues; the product's
bits against an fma sequence (gen_cube_models; docs/cube.md Numerics: ascending k, each addition rounded once to
float32), the CANN samples' tolerance against float64 (fusekit.verify through GeneratedOp.check)."""

import math

import ml_dtypes
import numpy as np
import pytest

import fusekit
from fusekit.gen import GraphError
from fusekit.gen import catalogue as cat
from fusekit.gen.cube import fixpipe_stage, split

from gen_cube_models import fma_sequence, passes, rand

M, N, K = 32, 48, 40  # tails: N and K are not multiples of the 16 x 16 fractal's 32 / 48 ... K = 40 = 2.5 fractals


@fusekit.op(dtypes=("float16", "bfloat16", "float32"))
def mm(a, b):
    return fusekit.matmul(a, b)


@fusekit.op(dtypes=("float16",))
def mm_relu_t(a, b):
    return fusekit.relu(fusekit.matmul(a, b, transpose_a=True, transpose_b=True))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_a_b16_matmul_runs_on_the_aic_and_casts_in_fixpipe(dtype):
    a, b = rand((M, K), dtype, 1), rand((K, N), dtype, 2)
    run = passes(mm.check(a, b))
    np.testing.assert_array_equal(run.y, fma_sequence(a, b).astype(dtype))  # F322F16 / F322BF16: CAST_RINT
    assert run.y.dtype == np.dtype(dtype)
    assert run.launches[0].trace.core_label(0).startswith("aic")
    assert "AIC_ONLY" in run.variant.source and "QuantModes.F322" in run.variant.source


def test_transposed_operands_and_relu_in_fixpipe():
    a, b = rand((K, M), np.float16, 3), rand((N, K), np.float16, 4)  # A^T and B^T in GM
    run = passes(mm_relu_t.check(a, b, base=(16, 32, 16), core_num=1))  # several bands, tiles and K steps
    want = np.maximum(fma_sequence(a.T, b.T), 0).astype(np.float16)
    np.testing.assert_array_equal(run.y, want)
    assert "relu: in Fixpipe" in run.variant.source


def test_batched_float32_with_one_b_for_every_batch():
    a, b = rand((2, 3, 20, K), np.float32, 5), rand((K, 24), np.float32, 6)
    run = passes(mm.check(a, b, base=(16, 16, 16)))
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(run.y, exact, rtol=1e-5, atol=1e-5)
    assert run.y.shape == (2, 3, 20, 24) and run.tilings[0].batch == 6


def test_int8_accumulates_in_int32_exactly():
    @fusekit.op(dtypes=("float32",))
    def qmm(a: "int8", b: "int8"):
        return fusekit.matmul(a, b, transpose_b=True)

    a, b = rand((M, 64), np.int8, 7), rand((N, 64), np.int8, 8)
    run = qmm.run(a, b, dtype="float32")
    np.testing.assert_array_equal(run.y, a.astype(np.int64) @ b.astype(np.int64).T)
    assert run.y.dtype == np.int32


def test_an_epilogue_fixpipe_lacks_runs_on_the_aivs_of_a_mix_kernel():
    a, b, bias = rand((M, K), np.float16, 9), rand((K, N), np.float16, 10), rand(N, np.float16, 11)
    op = cat.get("matmul_bias_gelu_erf")
    run = passes(op.check(a, b, bias))
    z = np.matmul(a.astype(np.float64), b.astype(np.float64)) + bias
    want = z * 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    np.testing.assert_allclose(run.y.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    trace = run.launches[0].trace
    labels = {trace.core_label(i)[:3] for i in range(len(trace.cores))}
    assert labels == {"aic", "aiv"}
    src = run.variant.source
    assert "MIX_AIC_1_2" in src and "cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)" in src
    assert "gelu_erf: on the AIVs (Fixpipe has no gelu_erf" in src


@pytest.mark.parametrize("name", ["matmul_bias", "matmul_bias_gelu"])
def test_catalogue_matmul_ops_are_sanitizer_clean_and_exact_within_tolerance(name):
    op = cat.get(name)
    a, b, bias = rand((40, K), np.float32, 12), rand((K, N), np.float32, 13), rand(N, np.float32, 14)
    passes(op.check(a, b, bias, precision="fp32", core_num=2))
    reports = op.sanitize(a, b, bias, core_num=2)
    assert all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


def test_attention_score_is_a_row_softmax_of_the_scaled_masked_product():
    q, k, mask = rand((2, 16, 32), np.float16, 15), rand((2, 48, 32), np.float16, 16), rand(48, np.float16, 17)
    run = passes(cat.get("attention_score").check(q, k, mask, scale=0.125))
    z = np.matmul(q.astype(np.float64), k.astype(np.float64).transpose(0, 2, 1)) * 0.125 + mask
    e = np.exp(z - z.max(-1, keepdims=True))
    np.testing.assert_allclose(run.y.astype(np.float64), e / e.sum(-1, keepdims=True), atol=2e-3)


def test_where_each_epilogue_runs():
    assert fixpipe_stage(split(mm.graph, "float16")).mode == "F322F16"
    assert fixpipe_stage(split(mm.graph, "float32")).mode == "NoQuant"
    assert fixpipe_stage(split(cat.get("matmul_bias").graph, "float16")) is None


def test_shapes_and_dtypes_it_cannot_take_are_refused_with_the_rule():
    a = rand((M, K), np.float16, 0)
    with pytest.raises(ValueError, match="K differs"):
        mm.run(a, rand((K + 1, N), np.float16, 0))
    with pytest.raises(ValueError, match="leading axes"):
        mm.run(rand((2, M, K), np.float16, 0), rand((3, K, N), np.float16, 0))
    with pytest.raises(GraphError, match="transpose_a with float32"):
        fusekit.define_op("matmul(a, b, transpose_a=True)", "mt").run(rand((K, M), np.float32, 0),
                                                                     rand((K, N), np.float32, 0))
    with pytest.raises(GraphError, match="input tensors"):
        fusekit.define_op("matmul(a + 1, b)", "mp").run(a, rand((K, N), np.float16, 0))
    with pytest.raises(ValueError, match="does not fit"):
        mm.run(a, rand((K, N), np.float16, 0), base=(256, 256, 64))


def test_predicted_time_against_the_unfused_chain_and_tune():
    from fusekit.gen import cube

    a, b, bias = np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16), np.zeros(64, np.float16)
    fused, unfused = cube.compare_unfused(cat.get("matmul_bias"), [a, b, bias])
    assert 0 < fused < unfused  # one launch instead of two, C never written to GM in float16 and read back
    same = cube.compare_unfused(mm, [a, b])
    assert same[0] == pytest.approx(same[1])  # the epilogue is Fixpipe's: the chain is the kernel itself
    best = cube.tune(cat.get("matmul_bias"), [a, b, bias])
    assert best["tried"] >= 2 and best["base"][0] in (64,) and best["us"] > 0
