"""Issue 8 F and J: the sanitizer reports every access fault of a run; sanitizer options go on
``sanitize``.

msSanitizer's memcheck reports each illegal read or write of a run (SAN, ``docs/ascendc-model.md``
"Tools we mirror"). Under ``fusekit.sanitize`` an out-of-bounds or misaligned access is collected
as a finding and the run goes on: a ``data_copy`` is clipped to what lies inside both tensors (the
rest of the destination gets garbage, as the NPU reads whatever memory lies past the end), other
instructions are skipped. A plain launch still raises KernelError at the first fault.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import fusekit
from fusekit import asc
from fusekit.sanitizer import sanitize

E = asc.HardEvent
N = 1000
TILE = 1232  # loaded from element 8: [8, 1240) reaches 240 elements past the end of a 1000-element view


def at(kernel, marker: str) -> str:
    lines, first = inspect.getsourcelines(kernel.fn)
    (hit,) = [first + i for i, text in enumerate(lines) if f"# <{marker}>" in text]
    return f"{__file__}:{hit}"


@asc.jit
def past_both_ends(a: asc.GlobalAddress, b: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    """y = a[8:] + b[8:] on one core, loading elements [8, 1240) of a and of b (the issue's kernel)."""
    a_gm, b_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, n)
    b_gm.set_global_buffer(b, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=3 * TILE * 2)
    t = buf.get(asc.half)
    a_ub, b_ub, y_ub = t, t[TILE:], t[2 * TILE:]
    asc.data_copy(a_ub, a_gm[8:], TILE)  # <load-a>
    asc.data_copy(b_ub, b_gm[8:], TILE)  # <load-b>
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.add(y_ub, a_ub, b_ub, n)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_ub, 992)
    y_gm.set_value(999, y_ub.get_value(999))


def inputs():
    rng = np.random.default_rng(8)
    return rng.standard_normal(N).astype(np.float16), rng.standard_normal(N).astype(np.float16), np.zeros(N, np.float16)


def test_one_run_shows_both_out_of_bounds_loads():
    a, b, y = inputs()
    report = sanitize(past_both_ends, outputs="y")[1](a, b, y, N)
    oob = [(f.tool, f.kind, f.buffer, f.start, f.stop, f.locations) for f in report.findings if f.kind == "out-of-bounds"]
    assert oob == [("memcheck", "out-of-bounds", "a", 16, 2480, (at(past_both_ends, "load-a"),)),
                   ("memcheck", "out-of-bounds", "b", 16, 2480, (at(past_both_ends, "load-b"),))]
    assert "outside its GlobalTensor view [0, 1000)" in report.findings[0].message
    # the copies were clipped: the in-bounds part arrived, so y[0:992] is right
    np.testing.assert_array_equal(y[:992], (a[8:].astype(np.float32) + b[8:].astype(np.float32)).astype(np.float16))
    assert any("clipped or skipped" in note for note in report.notes)


def test_a_plain_launch_still_stops_at_the_first_fault():
    with pytest.raises(asc.KernelError, match=r"accesses a elements \[8, 1240\) outside") as info:
        past_both_ends[1](*inputs(), N)
    assert (info.value.kind, info.value.line) == ("out-of-bounds", int(at(past_both_ends, "load-a").rsplit(":", 1)[1]))


@asc.jit
def many_faults(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """One of each: a misaligned operand, an out-of-bounds vector count, scalar accesses past a
    tensor, a sub-tensor offset past the end, a store past the end of y."""
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm.set_global_buffer(y, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=512)
    t = buf.get(asc.float32)                    # 128 float32
    asc.data_copy(t, x_gm, 64)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.adds(t[4:], t[4:], 1.0, 8)  # <misaligned>  16 B into UB: not 32 B aligned
    asc.adds(t[64:], t, 1.0, 128)  # <vector-oob>  t[64:] holds 64
    v = t.get_value(200)  # <get-oob>
    t.set_value(300, 1.0)  # <set-oob>
    u = t[129:]  # <sub-oob>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm[32:], t, 64)  # <store-oob>  y has 64
    assert v != v and u.get_length() == 0  # garbage (NaN) was read; the offset was clipped to the end


def test_every_kind_of_access_fault_is_reported_and_the_run_goes_on():
    report = sanitize(many_faults)[1](np.arange(64, dtype=np.float32), np.zeros(64, np.float32))
    got = [(f.kind, f.locations) for f in report.findings if f.tool == "memcheck"]
    want = [("misaligned", (at(many_faults, "misaligned"),))] + [
        ("out-of-bounds", (at(many_faults, m),)) for m in ("vector-oob", "get-oob", "set-oob", "sub-oob", "store-oob")]
    assert got == want
    with pytest.raises(asc.KernelError, match="not 32-byte aligned"):
        many_faults[1](np.arange(64, dtype=np.float32), np.zeros(64, np.float32))


# ------------------------------------------------------------------------------------------
# J: launch options given to the sanitized launch
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("option, value", [("soc", "Ascend310P3"), ("strict", False), ("auto_sync", False),
                                           ("outputs", "y"), ("replay", True)])
def test_sanitizer_options_belong_on_sanitize(option, value):
    with pytest.raises(TypeError, match=rf"pass it as fusekit\.sanitize\(past_both_ends, {option}={value!r}\)"):
        fusekit.sanitize(past_both_ends)[1](*inputs(), N, **{option: value})


@asc.jit
def has_soc_param(y: asc.GlobalAddress, soc: int):
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 8)
    y_gm.set_value(0, soc)


def test_a_kernel_parameter_of_that_name_is_an_argument():
    y = np.zeros(8, np.float32)
    assert fusekit.sanitize(has_soc_param)[1](y, soc=3).error is None
    assert y[0] == 3.0
