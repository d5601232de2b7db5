"""Reference models and the comparison report."""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fusekit.ops.fused_add_scale import reference
from fusekit.verify import compare, model, tolerance


def test_hardware_model_rounds_every_operation_and_the_scale():
    x1 = np.array([2048.0], np.float16)
    x2 = np.array([1.0], np.float16)  # 2049 is not a float16: the sum rounds to 2048 (tie to even)
    assert reference(x1, x2, 1.0, "hardware")[0] == 2048
    assert reference(x1, x2, 1.0, "exact")[0] == 2048  # 2049 rounded once is 2048 too
    assert reference(x1, x2, 1.0009765625, "hardware")[0] == np.float16(2048 * np.float16(1.0009765625))
    # scale 0.1 is used as float16(float32(0.1)) in a float16 kernel
    one = np.ones(1, np.float16)
    assert reference(one, one, 0.1, "hardware")[0] == np.float16(2) * np.float16(np.float32(0.1))


def test_fp32_model_rounds_once_at_the_end():
    x1 = np.array([2048.0], np.float16)
    x2 = np.array([1.0], np.float16)
    # (2048 + 1) * 1.001 = 2051.049 -> float16 2052; per-op float16 rounding gives 2050
    assert reference(x1, x2, 1.001, "fp32")[0] == 2052
    assert reference(x1, x2, 1.001, "hardware")[0] == 2050


def test_exact_model_rounds_float64_to_bfloat16_once():
    # 1 + 2**-8 + 2**-30: ml_dtypes' float64 -> bfloat16 cast double-rounds it to 1.0; correct is 1 + 2**-7
    x1 = np.array([1.0], ml_dtypes.bfloat16)
    x2 = np.array([0.0], ml_dtypes.bfloat16)
    y = reference(x1, x2, 1 + 2**-8 + 2**-30, "exact")
    assert float(y[0]) == 1 + 2**-7


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_exact_model_rounds_the_float64_result_once_to_nearest(dtype):
    rng = np.random.default_rng(1)
    x1 = rng.standard_normal(200).astype(dtype)
    x2 = rng.standard_normal(200).astype(dtype)
    scale = 0.3
    y = reference(x1, x2, scale, "exact")
    for a, b, got in zip(x1, x2, y):
        exact = Fraction((float(a) + float(b)) * scale)  # the float64 result the model rounds
        # got must be at least as near as both representable neighbours
        err = abs(Fraction(float(got)) - exact)
        up = np.nextafter(np.array(got, dtype), np.array(np.inf, dtype))
        down = np.nextafter(np.array(got, dtype), np.array(-np.inf, dtype))
        assert err <= abs(Fraction(float(up)) - exact) and err <= abs(Fraction(float(down)) - exact)


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown reference model 'fast'"):
        model("fast")


def test_comparison_counts_mismatches_under_the_samples_rule():
    expected = np.array([1.0, 2.0, 100.0, 0.0005, np.nan, np.inf], np.float32)
    actual = np.array([1.0, 2.001, 100.05, 0.0, np.nan, np.inf], np.float32)
    c = compare(actual, expected, reference="exact", loss=1e-4)
    # 2.001: abs 1e-3 > 1e-4 and rel 5e-4 > 1e-4 -> mismatch; 100.05: mismatch; 0.0005 vs 0: abs 5e-4 > 1e-4 and
    # rel 1 > 1e-4 -> mismatch; NaN == NaN and inf == inf match
    assert c.mismatches == 3 and c.first_mismatch == (1,)
    assert c.allowed == 0 and not c.passed and not c.bit_identical
    assert c.max_abs_err == pytest.approx(0.05, rel=1e-3)
    assert "FAIL" in c.summary() and "first at index [1]" in c.summary()


def test_comparison_small_absolute_errors_pass_beside_data_of_order_one():
    """The samples' rule where the reference reaches 1: an absolute error below loss passes, however large
    relative to a tiny element (atol = loss * min(1, max |expected|) = loss here)."""
    expected = np.full(10_000, 1e-5, np.float16)
    expected[::100] = 1.0  # data of order one, as the samples' inputs
    actual = expected.copy()
    actual[expected != 1] += np.float16(5e-4)  # relative error huge, absolute error below 1e-3
    c = compare(actual, expected)
    assert c.mismatches == 0 and c.passed and c.atol == 1e-3


def test_comparison_absolute_bound_scales_with_a_reference_below_one():
    """The same errors on a reference that is tiny everywhere are 50 times the answer: they fail (the samples'
    absolute bound 1e-3 would pass any output below it)."""
    expected = np.full(10_000, 1e-5, np.float16)
    c = compare(expected + np.float16(5e-4), expected)
    assert not c.passed and c.mismatches == 10_000
    assert c.atol == pytest.approx(1e-3 * float(np.float16(1e-5)))
    assert "absolute error beyond" in c.reason()


def test_comparison_allows_a_thousandth_of_mismatches_for_float16():
    expected = np.ones(2000, np.float16)
    actual = expected.copy()
    actual[:2] = 2
    assert compare(actual, expected).passed  # 2 <= 2000 * 1e-3
    actual[:3] = 2
    assert not compare(actual, expected).passed


def test_nan_against_number_fails_outside_the_allowance_and_signed_zero_is_not_bit_identical():
    c = compare(np.array([np.nan], np.float32), np.array([1.0], np.float32))
    assert c.mismatches == 0 and c.invalid == 1 and not c.passed and c.reasons == (("nan", 1),)
    assert "NaN where the exact result is a number" in c.reason()
    z = compare(np.array([-0.0], np.float32), np.array([0.0], np.float32))
    assert z.passed and not z.bit_identical


def test_tolerances_and_shape_errors():
    assert tolerance("float16") == 1e-3 and tolerance(np.float32) == 1e-4 and tolerance("bfloat16") == 1.6e-2
    assert tolerance("int32") == 1e-4  # the integer samples' ERROR_TOL (test_verdict_dtypes.py)
    with pytest.raises(ValueError, match="no default tolerance"):
        tolerance(np.float64)
    with pytest.raises(ValueError, match="cannot compare"):
        compare(np.ones(3, np.float16), np.ones(4, np.float16))


def test_round_once_settles_a_float64_value_on_a_tie_from_the_exact_value():
    from fusekit.verify import round_once

    tie = 1 + 2**-11  # halfway between float16 1 and 1 + 2^-10
    exact = {0: Fraction(tie) + Fraction(1, 2**70), 1: Fraction(tie) - Fraction(1, 2**70), 2: Fraction(tie)}
    got = round_once(np.full(3, tie), np.float16, lambda index: [exact[int(i)] for i in index])
    assert got.tolist() == [1 + 2**-10, 1.0, 1.0]  # above: up; below: down; the tie itself: to even
    # bfloat16 (p = 8): 1 + 2^-8 is a tie; the same holds through float32 rounded to odd
    got = round_once(np.full(2, 1 + 2**-8), ml_dtypes.bfloat16,
                     lambda index: [Fraction(1 + 2**-8) + (Fraction(1, 2**80) if i == 0 else 0) for i in index])
    assert [float(v) for v in got] == [1 + 2**-7, 1.0]


def test_round_once_overflows_exactly_at_the_threshold():
    from fusekit.verify import round_once

    exact = [Fraction(65520) - Fraction(1, 2**60), Fraction(65520)]  # just below max + ulp/2, and on it
    got = round_once(np.full(2, 65520.0), np.float16, lambda index: [exact[int(i)] for i in index])
    assert got.tolist() == [65504.0, np.inf]
