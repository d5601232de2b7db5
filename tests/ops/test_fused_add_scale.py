"""FusedAddScale end to end: sweep of sizes, dtypes, precisions, cores and BUFFER_NUM; API errors."""

import ml_dtypes
import numpy as np
import pytest

import fusekit
from fusekit import tiling
from fusekit.ops import fused_add_scale as fas
from fusekit.soc import get_soc
from fusekit.verify import compare

SIZES = [0, 1, 15, 16, 17, 255, 256, 257, 1000, 2**16 + 3, 2**20 + 5]
MODES = [(np.float16, "native"), (np.float16, "fp32"), (np.float32, "native"), (np.float32, "fp32"),
         (ml_dtypes.bfloat16, "fp32")]


def random_inputs(n, dtype, seed=0, shape=None):
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.standard_normal(n, dtype=np.float32).astype(dtype) for _ in range(2))
    return (x1, x2) if shape is None else (x1.reshape(shape), x2.reshape(shape))


def check_run(x1, x2, scale, **kwargs):
    result = fas.run(x1, x2, scale, **kwargs)
    model = fas.model_of(result.precision)
    own = compare(result.y, fas.reference(x1, x2, scale, model), reference=model)
    assert own.bit_identical, own.summary()
    return result


@pytest.mark.parametrize("buffer_num", [1, 2])
@pytest.mark.parametrize("cores", [1, 2, 7, 48])
@pytest.mark.parametrize("dtype, precision", MODES, ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("n", SIZES)
def test_sweep_bit_identical_to_model_and_within_tolerance_of_exact(n, dtype, precision, cores, buffer_num):
    x1, x2 = random_inputs(n, dtype, seed=n)
    result = check_run(x1, x2, 1.5, core_num=cores, buffer_num=buffer_num, precision=precision)
    exact = compare(result.y, fas.reference(x1, x2, 1.5, "exact"), reference="exact")
    assert exact.passed, exact.summary()
    assert result.y.dtype == x1.dtype and result.y.shape == x1.shape
    plan = result.tilings[0]
    assert plan.block_dim <= cores and plan.buffer_num == buffer_num
    ops = result.launches[0].trace.ops() if result.launches else {}
    assert ops.get("alloc_tensor", 0) == ops.get("free_tensor", 0)
    # an unaligned tail is moved with data_copy_pad, exactly once in and once out per input
    unaligned = n * x1.dtype.itemsize % 32 != 0
    assert ops.get("data_copy_pad", 0) == (3 if unaligned else 0)


@pytest.mark.parametrize("scale", [3.14159, -0.7, 1e-3, 0.0, 1e5, float("inf")])
@pytest.mark.parametrize("dtype, precision", MODES, ids=lambda v: getattr(v, "__name__", v))
def test_awkward_scales_match_the_model_bit_for_bit(scale, dtype, precision):
    x1, x2 = random_inputs(3001, dtype)
    check_run(x1, x2, scale, precision=precision)


@pytest.mark.parametrize("dtype, precision", MODES, ids=lambda v: getattr(v, "__name__", v))
def test_special_values(dtype, precision):
    info = ml_dtypes.finfo(dtype)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, float(info.max), -float(info.max),
                        float(info.smallest_subnormal), float(info.tiny), 1.0], dtype=np.float64).astype(dtype)
    x1 = np.repeat(special, len(special))
    x2 = np.tile(special, len(special))
    check_run(x1, x2, 0.75, precision=precision)


def test_native_float16_with_an_unrepresentable_scale_misses_the_exact_tolerance_but_fp32_passes():
    x1, x2 = random_inputs(100_000, np.float16)
    native = fusekit.fused_add_scale(x1, x2, 3.14159, precision="native")
    fp32 = fusekit.fused_add_scale(x1, x2, 3.14159, precision="fp32")
    exact = fas.reference(x1, x2, 3.14159, "exact")
    assert not compare(native, exact).passed
    assert compare(fp32, exact).passed


def test_any_rank_and_non_contiguous_inputs():
    x1, x2 = random_inputs(6 * 5 * 7, np.float32, shape=(6, 5, 7))
    y = fusekit.fused_add_scale(x1[:, ::2], x2[:, ::2], 2.0)
    np.testing.assert_array_equal(y, (x1[:, ::2] + x2[:, ::2]) * np.float32(2.0))
    assert y.shape == (6, 3, 7)
    t1, t2 = x1.T, x2.T
    np.testing.assert_array_equal(fusekit.fused_add_scale(t1, t2, 2.0), (t1 + t2) * np.float32(2.0))


def test_inputs_are_not_modified():
    x1, x2 = random_inputs(1000, np.float16)
    before = x1.copy(), x2.copy()
    fusekit.fused_add_scale(x1, x2, 1.5)
    np.testing.assert_array_equal(x1, before[0])
    np.testing.assert_array_equal(x2, before[1])


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend310P3"])
@pytest.mark.parametrize("n", [17, 1000, 70_001])
def test_other_socs(soc, n):
    x1, x2 = random_inputs(n, np.float16)
    result = check_run(x1, x2, 1.5, soc=soc)
    assert result.tilings[0].block_dim <= get_soc(soc).vector_cores
    if soc == "Ascend310P3":  # no DataCopyPad: the host pads GM to whole 32 B blocks
        assert "data_copy_pad" not in result.launches[0].trace.ops()


def test_inputs_too_long_for_32_bit_lengths_are_split_into_launches(monkeypatch):
    monkeypatch.setattr(tiling, "MAX_LAUNCH_ELEMENTS", 5000)
    x1, x2 = random_inputs(12_345, np.float16)
    result = check_run(x1, x2, 1.5)
    assert len(result.launches) == 3
    assert [p.total_length for p in result.tilings] == [4864, 4864, 2617]


@pytest.mark.parametrize("call, error, match", [
    (lambda: fusekit.fused_add_scale([1.0], np.ones(1, np.float16), 1.0), TypeError, "x1 must be a numpy.ndarray"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(4, np.float16), 1.0), ValueError,
     r"x1 has shape \(3,\) but x2 has shape \(4,\)"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float32), 1.0), TypeError,
     "x1 is float16 but x2 is float32"),
    (lambda: fusekit.fused_add_scale(np.ones(3), np.ones(3), 1.0), TypeError, "FusedAddScale takes float16, float32, "
     "bfloat16.*got float64"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.int32), np.ones(3, np.int32), 1.0), TypeError, "got int32"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), "2"), TypeError, "scale must be"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), True), TypeError, "scale must be"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), 1.0, precision="fp64"),
     ValueError, "precision must be one of"),
    (lambda: fusekit.fused_add_scale(*random_inputs(3, ml_dtypes.bfloat16), 1.0, precision="native"), ValueError,
     "use precision='fp32'"),
    (lambda: fusekit.fused_add_scale(*random_inputs(3, ml_dtypes.bfloat16), 1.0, soc="Ascend310P3"), ValueError,
     "has no bfloat16 support"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), 1.0, soc="910B"), ValueError,
     "unknown SoC"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), 1.0, core_num=0), ValueError,
     "core_num=0"),
    (lambda: fusekit.fused_add_scale(np.ones(3, np.float16), np.ones(3, np.float16), 1.0, buffer_num=0), ValueError,
     "buffer_num=0"),
])
def test_bad_input_gets_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_prototype_kernel_name_typo_is_caught_with_a_suggestion():
    with pytest.raises(fusekit.pyasc.opdef.OpDefError, match="Did you mean 'fused_add_scale'"):
        fas.OP.check_kernel_name("fused_add_scala")
    fas.OP.check_kernel_name("fused_add_scale")
    fas.OP.check_kernel_name("FusedAddScale")
