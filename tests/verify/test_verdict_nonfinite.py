"""Verdicts never pass NaN or infinite outputs the exact result does not excuse; scale range and
overflow warnings (issue 8, item H).

Expected values come from exact arithmetic: ``fractions.Fraction`` for real-number results and the
IEEE 754 binary16/binary32 parameters (largest finite value (2 - 2^-10) * 2^15 = 65504 and
(2 - 2^-23) * 2^127; round to nearest even overflows from max + ulp/2, IEEE 754-2019 section 7.4).
"""

from fractions import Fraction

import numpy as np
import pytest

import fusekit
from fusekit.cli import main
from fusekit.verify import compare, overflow_threshold

F16_MAX = Fraction(2 - Fraction(1, 2**10)) * 2**15  # 65504
F16_OVERFLOW = F16_MAX + Fraction(2**5, 2)  # ulp at the top binade is 2^(15 - 10) = 32
F32_OVERFLOW = Fraction(2 - Fraction(1, 2**23)) * 2**127 + Fraction(2**104, 2)


def test_overflow_thresholds_are_max_plus_half_an_ulp():
    assert Fraction(overflow_threshold(np.float16)) == F16_OVERFLOW == 65520
    assert Fraction(overflow_threshold(np.float32)) == F32_OVERFLOW


def exact_of(a, b, scale):
    """(a + b) * scale in rational arithmetic, then to float64 (only its finiteness and sign matter)."""
    return np.array([float((Fraction(float(x)) + Fraction(float(y))) * Fraction(scale)) for x, y in zip(a, b)])


def test_an_overflow_the_rounded_reference_shares_still_fails():
    a = np.array([40000, 1, 2, 30000], np.float16)
    b = np.array([40000, 1, 2, 5000], np.float16)
    exact = exact_of(a, b, 1)  # 80000 is finite; it exceeds float16's range
    actual = np.array([np.inf, 2, 4, 35000], np.float16)
    with np.errstate(over="ignore"):
        expected = exact.astype(np.float16)  # the exact reference rounded: inf too
    c = compare(actual, expected, reference="exact", exact=exact)
    assert not c.passed and c.invalid == 1 and c.mismatches == 0 and c.reasons == (("exceeds", 1),)
    assert c.first_mismatch == (0,)
    assert "exceeds float16's range" in c.reason()


def test_without_the_exact_result_the_rounded_reference_decides():
    actual = np.array([np.inf, 1], np.float16)
    assert compare(actual, np.array([np.inf, 1], np.float16)).passed
    assert not compare(actual, np.array([65504, 1], np.float16)).passed


def test_one_nonfinite_output_fails_whatever_the_allowance():
    n = 10_000  # float16 allows floor(1e-3 * n) = 10 mismatches
    x = np.linspace(-3, 3, n).astype(np.float16)
    exact = x.astype(np.float64)
    for bad in (np.nan, np.inf, -np.inf):
        actual = x.copy()
        actual[1234] = bad
        c = compare(actual, x, reference="exact", exact=exact)
        assert c.allowed == 10 and c.invalid == 1 and not c.passed and c.first_mismatch == (1234,)
    within = x.copy()
    within[:10] += np.float16(1)  # ten finite mismatches: allowed
    assert compare(within, x, exact=exact).passed


def test_infinity_of_the_other_sign_fails_and_the_same_infinity_passes():
    exact = np.array([np.inf, -np.inf, np.nan], np.float64)  # e.g. inf inputs, inf - inf
    expected = exact.astype(np.float32)
    assert compare(expected.copy(), expected, exact=exact).passed
    c = compare(np.array([-np.inf, -np.inf, np.nan], np.float32), expected, exact=exact)
    assert not c.passed and dict(c.reasons) == {"sign": 1}
    c = compare(np.array([np.inf, -np.inf, np.inf], np.float32), expected, exact=exact)
    assert not c.passed and dict(c.reasons) == {"inf-not-nan": 1}


def test_nan_where_the_exact_result_is_a_number_fails():
    c = compare(np.array([np.nan, 1], np.float32), np.array([np.nan, 1], np.float32), exact=np.array([0.0, 1.0]))
    assert not c.passed and c.reasons == (("nan", 1),) and c.bit_identical  # the model may be NaN as well


def run_cli(capsys, *argv):
    code = main(["run", "fused_add_scale", *argv])
    return code, capsys.readouterr().out


def test_cli_scale_beyond_float16_fails_with_the_reason(capsys):
    code, out = run_cli(capsys, "--size", "1000", "--scale", "1e10")
    assert code == 1 and out.rstrip().endswith("FAIL")
    assert "1000 output(s) are inf because the exact result exceeds float16's range" in out
    assert "warning: scale=10000000000.0 overflows float16 in native precision" in out


@pytest.mark.parametrize("scale", ["nan", "inf", "-inf"])
def test_cli_a_scale_that_is_not_a_real_number_fails(capsys, scale):
    code, out = run_cli(capsys, "--size", "1000", "--scale", scale)
    assert code == 1 and f"FAIL: scale is {float(scale)}, not a real number" in out and out.rstrip().endswith("FAIL")


def test_cli_fp32_precision_still_fails_where_the_exact_result_leaves_float16(capsys):
    code, out = run_cli(capsys, "--size", "1000", "--scale", "1e5", "--precision", "fp32")
    assert code == 1 and "exceeds float16's range" in out
    assert "warning: scale=" not in out  # fp32 keeps the scale in float32, where 1e5 fits


def test_cli_npy_inputs_with_one_overflowing_element_fail(tmp_path, capsys):
    x1 = np.ones(5000, np.float16)
    x1[4321] = 60000
    x2 = np.ones(5000, np.float16)
    x2[4321] = 10000  # 70000 * 1 exceeds float16; the other 4999 elements are exact
    np.save(tmp_path / "a.npy", x1)
    np.save(tmp_path / "b.npy", x2)
    code, out = run_cli(capsys, "--x1", str(tmp_path / "a.npy"), "--x2", str(tmp_path / "b.npy"), "--scale", "1")
    assert code == 1 and "first at index [4321]" in out and "1 of 5000 elements overflowed float16" in out


def test_scale_float32_cannot_hold_is_rejected():
    x = np.array([1e-10], np.float32)
    for scale in (1e40, -1e40, float(F32_OVERFLOW), 10**400):
        with pytest.raises(ValueError, match=r"outside float32's range \(\|scale\| <= 3.4028235e\+38\)"):
            fusekit.fused_add_scale(x, np.zeros(1, np.float32), scale)
    below = np.nextafter(float(F32_OVERFLOW), 0)  # rounds down to float32's largest finite value
    y = fusekit.fused_add_scale(np.ones(1, np.float32), np.zeros(1, np.float32), below)
    assert Fraction(float(y[0])) == F32_OVERFLOW - Fraction(2**104, 2)


@pytest.mark.parametrize("scale, precision, match", [
    (1e5, "native", "scale=100000.0 overflows float16 in native precision"),
    (1e-8, "native", "scale=1e-08 underflows float16 in native precision"),  # < 2^-25: rounds to 0
    (3 * 2.0**-26, "native", "underflows float16"),  # 0.75 * 2^-24 rounds to the subnormal 2^-24: inexact
])
def test_scale_overflow_and_underflow_warn(scale, precision, match):
    x = np.ones(4, np.float16)
    with pytest.warns(fusekit.PrecisionWarning, match=match):
        fusekit.fused_add_scale(x, x, scale, precision=precision)


@pytest.mark.parametrize("scale, precision", [(2.0**-20, "native"), (1e5, "fp32"), (1e-8, "fp32"), (0.0, "native")])
def test_scales_held_exactly_do_not_warn(scale, precision, recwarn):
    x = np.full(4, 0.25, np.float16)  # (0.25 + 0.25) * 1e5 = 50000 fits float16
    fusekit.fused_add_scale(x, x, scale, precision=precision)
    assert not [w for w in recwarn if issubclass(w.category, fusekit.PrecisionWarning)]


def test_overflowing_results_warn_with_their_count_and_can_be_filtered():
    assert issubclass(fusekit.PrecisionWarning, RuntimeWarning)
    a = np.array([65504, 65504, -65504, 1000], np.float16)
    b = np.array([15, 16, -16, 1000], np.float16)
    # exact sums 65519 (below 65520: rounds to 65504, no overflow), 65520 and -65520 (overflow), 2000
    with pytest.warns(fusekit.PrecisionWarning, match="2 of 4 elements overflowed float16"):
        fusekit.fused_add_scale(a, b, 1.0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=fusekit.PrecisionWarning)
        fusekit.fused_add_scale(a, b, 1.0)


def test_an_intermediate_overflow_counts_although_the_exact_result_fits():
    a = np.array([60000, 1], np.float16)
    # native float16: 60000 + 60000 = inf, then * 0.5 = inf; exactly 60000, which fits
    with pytest.warns(fusekit.PrecisionWarning, match="1 of 2 elements overflowed"):
        y = fusekit.fused_add_scale(a, a, 0.5)
    assert np.isinf(y[0]) and y[1] == 1


def test_a_finite_output_standing_for_an_out_of_range_result_fails():
    """310P saturates (overflow -> the largest finite value with its sign): still not the exact result."""
    exact = np.array([float(F16_OVERFLOW), -70000.0, float(F16_OVERFLOW) - 1, 2000.0])
    actual = np.array([65504, -65504, 65504, 2000], np.float16)
    with np.errstate(over="ignore"):
        expected = exact.astype(np.float16)
    c = compare(actual, expected, reference="exact", exact=exact)
    # 65519 rounds to 65504 (below max + ulp/2): right; 65520 and -70000 are beyond float16's range
    assert not c.passed and c.reasons == (("saturated", 2),) and c.mismatches == 0 and c.max_abs_err == 0


def test_cli_saturating_soc_fails_where_the_exact_result_leaves_the_range(tmp_path, capsys):
    # issue 8, item C's example: x1 + x2 = 65519, 65520, -65520, 2000 exactly
    np.save(tmp_path / "a.npy", np.array([65504, 65504, -65504, 1000], np.float16))
    np.save(tmp_path / "b.npy", np.array([15, 16, -16, 1000], np.float16))
    code, out = run_cli(capsys, "--x1", str(tmp_path / "a.npy"), "--x2", str(tmp_path / "b.npy"), "--scale", "1",
                        "--soc", "Ascend310P3")
    assert code == 1 and "2 output(s) are finite where the exact result exceeds float16's range" in out
    assert "first at index [1]" in out and "2 of 4 elements overflowed float16" in out
