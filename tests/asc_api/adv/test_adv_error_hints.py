"""The adv APIs' error hints: a temporary buffer below the minimum, a tiling function called in a kernel.

Regression: tester reports, issues 9 and 11 (split from test_tester_fixes_mask_conformance.py).
"""

from __future__ import annotations


import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError
from adv_harness import run_rmsnorm
from vector_harness import run

F32 = np.float32


def test_rmsnorm_hint_names_the_minimum_when_the_buffer_is_below_it():
    """Regression: tester report, issues 9 and 11."""
    h, size = 64, 4
    need = asc.adv.get_rms_norm_max_min_tmp_size([1, 2, h], size)[1]
    tiling = asc.adv.get_rms_norm_tiling_info([1, 2, h], [1, 2, h], need, size)
    with pytest.raises(KernelError) as info:
        run_rmsnorm(np.ones((1, 2, h), F32), np.ones(h, F32), tmp=need - 32, tiling=tiling)
    assert f"at least the minimum {need} B" in str(info.value)
    assert f"get_rms_norm_tiling_info(..., {need - 32}" not in str(info.value)  # that call itself would raise
    with pytest.raises(ValueError, match="below the minimum"):
        asc.adv.get_rms_norm_tiling_info([1, 2, h], [1, 2, h], need - 32, size)


def test_softmax_tiling_func_in_a_kernel_is_a_kernel_error_with_the_line():
    """Regression: tester report, issues 9 and 11."""
    a = np.zeros(64, F32)
    too_little = (8 + 64 + 64) * 4 - 1  # get_softmax_min_tmp_size([4, 64], 4) - 1

    def body(d, x, y):
        asc.adv.softmax_tiling_func([4, 64], 4, too_little)

    with pytest.raises(KernelError, match="below") as info:
        run(body, a.copy(), a, a)
    assert info.value.line and info.value.file
    with pytest.raises(ValueError, match="below"):  # on the host: a ValueError, as before
        asc.adv.softmax_tiling_func([4, 64], 4, too_little)
