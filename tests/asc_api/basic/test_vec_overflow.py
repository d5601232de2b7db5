"""Overflow modes (issue 8 C): saturation on 310P, INF/NaN by default on A2 with saturation as a launch
option, applied by every vector instruction family and followed by the FusedAddScale references.

The rule (hiascend INF_NAN_MODE_ENABLE, Pytorch 600 Envir_004; TF adapter set_device_sat_mode):
saturation mode turns an overflowing result (Inf) into the dtype's largest finite value with its
sign (+-MAX) and an invalid one (NaN) into 0; INF_NAN mode is IEEE 754. The page's own examples:
exp(12) in float16 -> 65504 (inf in INF_NAN mode), sqrt(-1) -> 0 (NaN).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import fusekit
from fusekit import asc
from fusekit.ops.fused_add_scale import host

from vector_harness import run

F16, F32 = np.float16, np.float32
MAX16 = 65504.0
SAT = [dict(soc="Ascend310P3"), dict(soc="Ascend910B1", overflow="saturation")]
IEEE = dict(soc="Ascend910B1")


def ref_saturate(values, dtype) -> np.ndarray:
    """The documented rule on exact float64 results: round once, then +-inf -> +-max, NaN -> 0."""
    big = float(ml_dtypes.finfo(dtype).max)
    out = []
    for v in values:
        with np.errstate(over="ignore"):
            r = float(np.array(v, np.float64).astype(dtype))
        out.append(0.0 if np.isnan(r) else (np.copysign(big, r) if np.isinf(r) else r))
    return np.array(out, dtype)


def test_fused_add_scale_saturates_on_310p():
    a = np.array([65504, 65504, -65504, 1000], F16)
    b = np.array([15, 16, -16, 1000], F16)
    with pytest.warns(fusekit.PrecisionWarning):
        y = fusekit.fused_add_scale(a, b, 1.0, soc="Ascend310P3")
    np.testing.assert_array_equal(y, np.array([65504, 65504, -65504, 2000], F16))


@pytest.mark.parametrize("model", ["hardware", "fp32"])
def test_fused_add_scale_references_follow_the_mode(model):
    a = np.array([65504, 65504, -65504, 1000, 60000], F16)
    b = np.array([15, 16, -16, 1000, 60000], F16)
    precision = {"hardware": "native", "fp32": "fp32"}[model]
    # the fp32 kernel casts back with CAST_RINT, which 310P's Cast float32 -> half does not take: A2 saturating
    launch = dict(soc="Ascend310P3") if model == "hardware" else dict(soc="Ascend910B1", overflow="saturation")
    result = host.run(a, b, 2.0, precision=precision, **launch)
    assert result.overflow == "saturation"
    reference = host.reference(a, b, 2.0, model, overflow_mode=result.overflow)
    np.testing.assert_array_equal(result.y, reference)
    np.testing.assert_array_equal(reference, np.array([MAX16, MAX16, -MAX16, 4000, MAX16], F16))
    # IEEE on A2 by default: the same inputs overflow to inf in the simulator and the reference
    ieee = host.run(a, b, 2.0, soc="Ascend910B1", precision=precision)
    assert ieee.overflow == "inf_nan" and np.isinf(ieee.y[1])
    np.testing.assert_array_equal(ieee.y, host.reference(a, b, 2.0, model))


@pytest.mark.parametrize("launch", SAT)
def test_binary_family_saturates(launch):
    a = np.array([65504, -65504, 300, 1, 0, 2] + [0] * 10, F16)
    b = np.array([16, -16, 300, 0, 0, 3] + [0] * 10, F16)

    exact = [65504 + 16, -65504 - 16, 90000, np.inf, np.nan, -1]
    out, _ = run(lambda d, x, y: asc.add(d, x, y, 16), np.zeros(16, F16), a, b, **launch)
    np.testing.assert_array_equal(out[:2], ref_saturate(exact[:2], F16))
    out, _ = run(lambda d, x, y: asc.mul(d, x, y, 16), np.zeros(16, F16), a, b, **launch)
    np.testing.assert_array_equal(out[2], ref_saturate([90000], F16)[0])
    out, _ = run(lambda d, x, y: asc.div(d, x, y, 16), np.zeros(16, F16), a, b, **launch)
    np.testing.assert_array_equal(out[3:5], np.array([MAX16, 0], F16))
    out, _ = run(lambda d, x, y: asc.sub(d, x, y, 16), np.zeros(16, F16), b, a, **launch)  # 16 - 65504 etc.
    np.testing.assert_array_equal(out[:2], ref_saturate([16 - 65504, -16 + 65504], F16))


def test_the_same_binary_ops_give_inf_and_nan_by_default_on_a2():
    a = np.array([65504, 1, 0] + [0] * 13, F16)
    b = np.array([16, 0, 0] + [0] * 13, F16)
    out, _ = run(lambda d, x, y: asc.add(d, x, y, 1), np.zeros(16, F16), a, b, **IEEE)
    assert np.isposinf(out[0])
    out, _ = run(lambda d, x, y: asc.div(d, x, y, 16), np.zeros(16, F16), a, b, **IEEE)
    assert np.isposinf(out[1]) and np.isnan(out[2])


@pytest.mark.parametrize("launch", SAT)
def test_binary_scalar_family_saturates(launch):
    a = np.array([1000, -1000, 7] + [0] * 13, F16)
    out, _ = run(lambda d, x, y: asc.muls(d, x, 100.0, 16), np.zeros(16, F16), a, **launch)
    np.testing.assert_array_equal(out[:3], ref_saturate([100000, -100000, 700], F16))
    out, _ = run(lambda d, x, y: asc.adds(d, x, 65000.0, 16), np.zeros(16, F16), a, **launch)
    np.testing.assert_array_equal(out[:3], ref_saturate([66000, 64000, 65007], F16))


@pytest.mark.parametrize("launch", SAT)
def test_unary_family_saturates_with_the_pages_examples(launch):
    x = np.array([12, -1, 0, 0] + [1] * 12, F16)
    out, _ = run(lambda d, s, _: asc.exp(d, s, 16), np.zeros(16, F16), x, **launch)
    assert out[0] == MAX16  # INF_NAN_MODE_ENABLE: exp(12) in float16 -> 65504
    out, _ = run(lambda d, s, _: asc.sqrt(d, s, 16), np.zeros(16, F16), x, **launch)
    assert out[1] == 0 and not np.signbit(out[1])  # sqrt(-1) -> 0
    out, _ = run(lambda d, s, _: asc.ln(d, s, 16), np.zeros(16, F16), x, **launch)
    assert out[2] == -MAX16  # ln(0) = -inf -> -max
    out, _ = run(lambda d, s, _: asc.reciprocal(d, s, 16), np.zeros(16, F16), x, **launch)
    assert out[3] == MAX16


def test_unary_examples_in_inf_nan_mode():
    x = np.array([12, -1] + [1] * 14, F16)
    out, _ = run(lambda d, s, _: asc.exp(d, s, 16), np.zeros(16, F16), x, **IEEE)
    assert np.isposinf(out[0])
    out, _ = run(lambda d, s, _: asc.sqrt(d, s, 16), np.zeros(16, F16), x, **IEEE)
    assert np.isnan(out[1])


@pytest.mark.parametrize("launch", SAT)
def test_cast_family_saturates(launch):
    x = np.array([1e6, -1e6, np.nan, 3.0] + [0] * 4, F32)
    out, _ = run(lambda d, s, _: asc.cast(d, s, asc.RoundMode.CAST_NONE, 8), np.zeros(16, F16), x, **launch)
    np.testing.assert_array_equal(out[:4], np.array([MAX16, -MAX16, 0, 3], F16))


@pytest.mark.parametrize("launch", SAT)
def test_split_form_saturates_only_the_active_lanes(launch):
    a = np.full(128, 65504, F16)
    d = np.full(128, 7, F16)
    out, _ = run(lambda dst, x, y: asc.add(dst, x, y, [0xFF, 0], 1, asc.BinaryRepeatParams()), d, a, a, **launch)
    np.testing.assert_array_equal(out, np.where(np.arange(128) < 8, MAX16, 7).astype(F16))


def test_duplicate_copies_the_scalar_in_either_mode():
    # Duplicate computes nothing: the scalar's bits are written as they are
    out, _ = run(lambda d, x, y: asc.duplicate(d, float("inf"), 16), np.zeros(16, F16), np.zeros(16, F16),
                 soc="Ascend310P3")
    assert np.isposinf(out).all()


def test_a_mode_the_soc_lacks_is_refused():
    with pytest.raises(ValueError, match=r"Ascend310P3 supports overflow=saturation only, not 'inf_nan' "
                                         r"\(hiascend INF_NAN_MODE_ENABLE"):
        run(lambda d, x, y: asc.add(d, x, y, 16), np.zeros(16, F16), np.zeros(16, F16), soc="Ascend310P3",
            overflow="inf_nan")
    with pytest.raises(ValueError, match=r"overflow must be one of inf_nan, saturation, got 'wrap'"):
        run(lambda d, x, y: asc.add(d, x, y, 16), np.zeros(16, F16), np.zeros(16, F16), overflow="wrap")


def test_fused_add_scale_takes_the_overflow_mode_on_910b_and_refuses_inf_nan_on_310p():
    """INF_NAN_MODE_ENABLE / set_device_sat_mode pages: A2/A3 can be switched to saturation; 310P has no IEEE mode."""
    a = np.array([65504, 65504, -65504, 1000], np.float16)
    b = np.array([15, 16, -16, 1000], np.float16)
    with pytest.warns(fusekit.PrecisionWarning):
        saturated = fusekit.fused_add_scale(a, b, 1.0, soc="Ascend910B1", overflow="saturation")
    assert saturated.tolist() == [65504, 65504, -65504, 2000]  # 65504 + 16 rounds to inf -> largest finite
    with pytest.warns(fusekit.PrecisionWarning):
        ieee = fusekit.fused_add_scale(a, b, 1.0, soc="Ascend910B1")
    assert ieee.tolist() == [65504, np.inf, -np.inf, 2000]
    with pytest.raises(ValueError, match="saturation only"):
        fusekit.fused_add_scale(a, b, 1.0, soc="Ascend310P3", overflow="inf_nan")
