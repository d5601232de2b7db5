"""Mix kernels band by band (fusekit.gen.cube): the AIC sets a mode-2 flag after each band of BASE_M rows and its
two AIVs run the epilogue on their halves of it while the cube goes on; the AIC waits the AIVs' flags back so that
no more than 15 sets are pending (CrossCoreSetFlag(ISASI).md). MatmulSwiGLU computes gate and up in one kernel.

Expected values: float64 numpy (np.matmul, silu = z / (1 + exp(-z))), the fma sequence of gen_cube_models for the
bits of the product; the sanitizer for the synchronisation."""

import numpy as np
import pytest

from fusekit.gen import GraphError, cube
from fusekit.gen import catalogue as cat
from fusekit.gen.graph import matmul, relu
from fusekit.gen.op import op as gen_op

from gen_cube_models import fma_sequence, passes, rand


def _clean(reports):
    assert reports and all(r.ok for r in reports), [f.message for r in reports for f in r.findings]


def test_many_bands_per_aic_stay_under_the_pending_flag_limit():
    """One AIC, 12 bands of 16 rows (the last 11): past cube.FLOW_WINDOW (8) the AIC waits the AIVs' flags; each
    AIV takes 8 rows of a band (the second AIV 3 of the last)."""
    a, b, bias = rand((12 * 16 - 5, 24), np.float16, 1), rand((24, 48), np.float16, 2), rand(48, np.float16, 3)
    op = cat.get("matmul_bias_gelu_erf")
    options = dict(core_num=1, base=(16, 32, 16))
    run = passes(op.check(a, b, bias, **options))
    assert run.tilings[0].block_dim == 1 and -(-run.tilings[0].rows // 16) > cube.FLOW_WINDOW
    src = run.variant.source
    assert src.count("cross_core_wait_flag(1, 2") == 2 and "cross_core_set_flag(1, 2" in src
    _clean(op.sanitize(a, b, bias, **options))


def test_matmul_swiglu_computes_gate_and_up_in_one_kernel():
    x, wg, wu = rand((40, 40), np.float16, 4), rand((40, 48), np.float16, 5), rand((40, 48), np.float16, 6)
    op = cat.get("matmul_swiglu")
    options = dict(core_num=2, base=(16, 32, 16))
    run = passes(op.check(x, wg, wu, **options))
    assert len(run.launches) == 1 and "MIX_AIC_1_2" in run.variant.source
    g = np.matmul(x.astype(np.float64), wg.astype(np.float64))
    u = np.matmul(x.astype(np.float64), wu.astype(np.float64))
    np.testing.assert_allclose(run.y.astype(np.float64), g / (1 + np.exp(-g)) * u, rtol=2e-3, atol=2e-3)
    _clean(op.sanitize(x, wg, wu, **options))
    s = cube.split(op.graph, "float16")
    assert s.b == "w_gate" and s.more == (("w_up", "acc1"),)


def test_two_products_that_do_not_share_a_are_refused():
    with pytest.raises(GraphError, match="share A"):  # refused when the operator is made
        @gen_op(dtypes=("float16",))
        def two(x, y, w, v):
            return matmul(x, w) + matmul(y, v)


def test_a_relu_between_two_products_is_exact_to_the_fma_sequence():
    @gen_op(dtypes=("float32",))
    def gated(x, w1, w2):
        return relu(matmul(x, w1)) * matmul(x, w2)

    x, w1, w2 = rand((24, 16), np.float32, 7), rand((16, 32), np.float32, 8), rand((16, 32), np.float32, 9)
    run = passes(gated.check(x, w1, w2, precision="fp32", core_num=1, base=(16, 16, 16)))
    want = (np.maximum(fma_sequence(x, w1), 0) * fma_sequence(x, w2)).astype(np.float32)
    np.testing.assert_array_equal(run.y, want)


def test_native_precision_reads_c_in_the_gm_dtype_from_the_workspace():
    """precision='native': the workspace's Fixpipe casts C to float16 (CAST_RINT), the AIVs compute natively from
    it -- the unfused chain's numerics, half its workspace bytes; fp32 keeps a float32 workspace."""
    a, b, bias = rand((40, 40), np.float16, 10), rand((40, 48), np.float16, 11), rand(48, np.float16, 12)
    op = cat.get("matmul_bias_gelu")
    native = passes(op.check(a, b, bias, precision="native", core_num=2))
    fp32 = passes(op.check(a, b, bias, precision="fp32", core_num=2))
    assert "QuantModes.F322F16" in native.variant.source and "QuantModes.F322F16" not in fp32.variant.source
    z = np.matmul(a.astype(np.float64), b.astype(np.float64)) + bias
    want = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    for run in (native, fp32):
        np.testing.assert_allclose(run.y.astype(np.float64), want, rtol=1e-2, atol=1e-2)
    _clean(op.sanitize(a, b, bias, precision="native", core_num=2))
