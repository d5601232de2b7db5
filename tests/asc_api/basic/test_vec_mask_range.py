"""Vector mask ranges: continuous and bit masks, counter mode.

Mask facts (asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明/掩码.md 表5 and
掩码操作/SetVectorMask.md): a continuous mask is in [0, 128] (16-bit) / [0, 64] (32-bit), "mask超出范围按照
对应数据类型下mask最大值计算" (a larger one runs as the maximum) and 0 is a NOP; a bit mask for 32-bit
operands has maskHigh = 0 ("当操作数为32位时，maskHigh为0").

Regression: tester reports, issues 9 and 11 (split from test_tester_fixes_mask_conformance.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError
from vector_harness import run

F32, F16 = np.float32, np.float16



def test_bit_mask_with_high_bits_on_a_32_bit_type_is_refused_citing_the_page():
    """Regression: tester report, issues 9 and 11."""
    a = np.arange(64, dtype=F32)
    with pytest.raises(KernelError, match="maskHigh must be 0.*掩码.md") as info:
        run(lambda d, x, y: asc.add(d, x, y, [1, 1], 1, asc.BinaryRepeatParams()), a.copy(), a, a)
    assert info.value.kind == "mask-range"
    # [low, 0] and [low] are the documented forms and run
    for mask in ([0b101, 0], [0b101]):
        out, _ = run(lambda d, x, y: asc.add(d, x, y, mask, 1, asc.BinaryRepeatParams()), np.zeros(64, F32), a, a)
        want = np.zeros(64, F32)
        want[[0, 2]] = 2 * a[[0, 2]]
        np.testing.assert_array_equal(out, want)


def test_set_vector_mask_refuses_high_bits_for_32_bit_types():
    """Regression: tester report, issues 9 and 11."""
    a = np.arange(64, dtype=F32)

    def body(d, x, y):
        asc.set_vector_mask(1, 1, dtype=asc.float32, mode=asc.MaskMode.NORMAL)

    with pytest.raises(KernelError, match="maskHigh must be 0"):
        run(body, a.copy(), a, a)


def test_half_bit_mask_may_use_both_words():
    """Regression: tester report, issues 9 and 11."""
    a = np.ones(128, F16)
    out, _ = run(lambda d, x, y: asc.add(d, x, y, [0, 1 << 63], 1, asc.BinaryRepeatParams()), np.zeros(128, F16), a, a)
    assert out[127] == 2 and not out[:127].any()


@pytest.mark.parametrize("dtype,mask,lanes", [(F16, 129, 128), (F32, 65, 64)])
def test_continuous_mask_past_the_lanes_runs_as_the_maximum_as_documented(dtype, mask, lanes):
    """Regression: tester report, issues 9 and 11."""
    # 掩码.md 表5: "连续模式下，mask超出范围按照对应数据类型下mask最大值计算" - documented, not an error
    a = np.arange(lanes, dtype=dtype)
    out, _ = run(lambda d, x, y: asc.add(d, x, y, mask, 1, asc.BinaryRepeatParams()), np.zeros(lanes, dtype), a, a)
    np.testing.assert_array_equal(out, a + a)


def test_counter_mode_bit_mask_is_an_element_count_not_a_lane_mask():
    """Regression: tester report, issues 9 and 11."""
    # 掩码.md 接口内设置Mask / Counter模式: mask[0] (the low 64 bits) is the element count, e.g. {130, 0}
    a = np.ones(192, F32)

    def body(d, x, y):
        asc.set_mask_count()
        asc.add(d, x, y, [130, 0], 1, asc.BinaryRepeatParams())
        asc.set_mask_norm()

    out, _ = run(body, np.zeros(192, F32), a, a)
    assert (out[:130] == 2).all() and not out[130:].any()
