"""GM rules fusekit.asc enforces: every access stays inside the GlobalTensor view and the GM buffer.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from fusekit import asc

from support import assert_bits_equal, assert_poisoned, gm_view, raises_at, ub_buf


# ---------------------------------------------------------------------------------------------
# GM: every access stays inside the GlobalTensor view and the GM buffer
# ---------------------------------------------------------------------------------------------

@asc.jit
def gm_access_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, per_core: int, extra: int,
                     VIEW: asc.ConstExpr[int], MODE: asc.ConstExpr[str]):
    idx = asc.get_block_idx()
    start = idx * per_core
    n = per_core + (extra if idx == 1 else 0)  # only aiv(1) oversteps
    xg = gm_view(x + start, VIEW)
    yg = gm_view(y + start, VIEW)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float16, 128)
    if MODE == "copy_in":
        asc.data_copy(t, xg, n)  # <copy_in>
        asc.data_copy(yg, t, per_core)
    if MODE == "copy_out":
        asc.data_copy(t, xg, per_core)
        asc.data_copy(yg, t, n)  # <copy_out>
    params = asc.DataCopyExtParams(1, n * 2, 0, 0, 0)
    if MODE == "pad_in":
        asc.data_copy_pad(t, xg, params, asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))  # <pad_in>
    if MODE == "pad_out":
        asc.data_copy_pad(yg, t, params)  # <pad_out>
    if MODE == "get":
        yg.set_value(0, xg.get_value(n - 1))  # <get>
    if MODE == "set":
        yg.set_value(n - 1, 1.0)  # <set>


# mode, API call, extra elements on aiv(1), tensor, element range [lo, hi) aiv(1) asks for (its view starts at 32)
GM_CASES = [
    ("copy_in", "data_copy", 16, "x", 32, 80), ("copy_out", "data_copy", 16, "y", 32, 80),
    ("pad_in", "data_copy_pad", 5, "x", 32, 69), ("pad_out", "data_copy_pad", 5, "y", 32, 69),
    ("get", "get_value", 1, "x", 64, 65), ("set", "set_value", 1, "y", 64, 65),
]


@pytest.mark.parametrize("mode, op, extra, tensor, lo, hi", GM_CASES, ids=[c[0] for c in GM_CASES])
@pytest.mark.parametrize("view, what", [(32, "outside its GlobalTensor view [32, 64)"),
                                         (64, "outside the GM buffer {tensor} of 64 elements")], ids=["view", "buffer"])
def test_gm_access_outside_view_or_buffer_names_core_tensor_range_and_line(mode, op, extra, tensor, lo, hi, view, what):
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    expected = f"accesses {tensor} elements [{lo}, {hi}) " + what.format(tensor=tensor)
    with raises_at(gm_access_kernel, mode, f"^{op} on aiv\\(1\\) at .*: " + re.escape(expected), core=1) as info:
        gm_access_kernel[2](x, y, 32, extra, view, mode)
    assert (info.value.tensor, info.value.start, info.value.stop) == (tensor, lo, hi)
    assert not y.any(), "a failed launch must not copy results back"


@pytest.mark.parametrize("mode", [c[0] for c in GM_CASES])
def test_gm_access_inside_view_works(mode):
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    gm_access_kernel[2](x, y, 32, 0, 32, mode)   # each core: its own 32 elements, nothing more
    expected = np.zeros(64, np.float16)
    if mode in ("copy_in", "copy_out"):
        expected = x
    if mode == "get":                               # y[start] = x[start + 31]
        expected[0], expected[32] = x[31], x[63]
    if mode == "set":                               # y[start + 31] = 1
        expected[31] = expected[63] = 1
    if mode == "pad_out":                           # the never-written UB tile, copied out
        assert_poisoned(y)
    else:
        assert_bits_equal(y, expected)


def test_gm_get_value_negative_index_is_outside_the_view():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    with raises_at(gm_access_kernel, "get", r"get_value.*outside its GlobalTensor view \[0, 32\)", core=0) as info:
        gm_access_kernel[2](x, y, 0, 0, 32, "get")  # n - 1 = -1 on aiv(0)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("x", -1, 0)
