"""Issue 8 E: hand-placed UB tensors that overlap, and values overwritten before anything read them.

A hand-placed ``LocalTensor(dtype, pos, addr, tile_size)`` covers UB bytes
``[addr, addr + tile_size * sizeof(dtype))`` (pyasc LocalTensor; AD-API LocalTensor): two placements
whose ranges intersect share those bytes, so the later write replaces the earlier tensor's data
there. TPipe never does this to its own buffers (AD-G TPipe-TQue框架编程原理.md). The
``pipe_barrier(PIPE_MTE2)`` between the loads orders them (PipeBarrier(ISASI).md), so there is no race:
only memcheck can tell.
"""

from __future__ import annotations

import inspect

import numpy as np

from fusekit import asc
from fusekit.sanitizer import sanitize

E = asc.HardEvent


def at(kernel, marker: str) -> str:
    lines, first = inspect.getsourcelines(kernel.fn)
    (hit,) = [first + i for i, text in enumerate(lines) if f"# <{marker}>" in text]
    return f"{__file__}:{hit}"


@asc.jit
def two_placements(a: asc.GlobalAddress, b: asc.GlobalAddress, y: asc.GlobalAddress, B_ADDR: asc.ConstExpr[int]):
    """The issue's kernel: float32 a at UB [0, 2048), b at [B_ADDR, B_ADDR + 2048), y = a + b."""
    a_gm, b_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, 512)
    b_gm.set_global_buffer(b, 512)
    y_gm.set_global_buffer(y, 512)
    a_ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 512)
    b_ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, B_ADDR, 512)
    y_ub = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 8192, 512)
    asc.data_copy(a_ub, a_gm, 512)  # <load-a>
    asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
    asc.data_copy(b_ub, b_gm, 512)  # <load-b>
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.add(y_ub, a_ub, b_ub, 512)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(y_gm, y_ub, 512)


def inputs():
    return np.arange(512, dtype=np.float32), np.full(512, 1000.0, np.float32), np.zeros(512, np.float32)


def test_issue_example_overlapping_placements_and_the_lost_value():
    a, b, y = inputs()
    report = sanitize(two_placements)[1](a, b, y, 1024)
    got = sorted((f.tool, f.kind, f.mem, f.start, f.stop, f.locations) for f in report.findings)
    loads = (at(two_placements, "load-a"), at(two_placements, "load-b"))
    assert got == [("memcheck", "lost value", "UB", 1024, 2048, loads),          # a[256:512] overwritten unread
                   ("memcheck", "overlapping placements", "UB", 1024, 2048, loads)]
    # the wrong output the NPU computes, from the byte layout alone: a_ub[256:512] now holds b[0:256]
    expected = a + b
    expected[256:] = b[:256] + b[:256]
    np.testing.assert_array_equal(y, expected)


def test_disjoint_placements_have_no_findings():
    a, b, y = inputs()
    assert sanitize(two_placements)[1](a, b, y, 2048).findings == []      # [0, 2048) and [2048, 4096)
    np.testing.assert_array_equal(y, a + b)


@asc.jit
def three_placements(a: asc.GlobalAddress, y: asc.GlobalAddress):
    """Three float32 tensors of 512 at UB 0, 1024 and 2048: A-B and B-C overlap, A-C only touch."""
    a_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, 512)
    y_gm.set_global_buffer(y, 1536)
    ts = [asc.LocalTensor(asc.float32, asc.TPosition.VECIN, addr, 512) for addr in (0, 1024, 2048)]
    asc.data_copy(ts[0], a_gm, 512)  # <p0>
    asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
    asc.data_copy(ts[1], a_gm, 512)  # <p1>
    asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
    asc.data_copy(ts[2], a_gm, 512)  # <p2>
    asc.set_flag(E.MTE2_MTE3, 0)
    asc.wait_flag(E.MTE2_MTE3, 0)
    for k in range(3):
        asc.data_copy(y_gm[512 * k:], ts[k], 512)


def test_three_way_overlap_reports_each_overlapping_pair():
    report = sanitize(three_placements)[1](np.arange(512, dtype=np.float32), np.zeros(1536, np.float32))
    p = [at(three_placements, f"p{k}") for k in range(3)]
    got = sorted((f.kind, f.start, f.stop, f.locations) for f in report.findings)
    assert got == [("lost value", 1024, 2048, (p[0], p[1])), ("lost value", 2048, 3072, (p[1], p[2])),
                   ("overlapping placements", 1024, 2048, (p[0], p[1])),
                   ("overlapping placements", 2048, 3072, (p[1], p[2]))]


@asc.jit
def reuse_in_phases(a: asc.GlobalAddress, y: asc.GlobalAddress):
    """One UB range used by one tensor, then (its data consumed) by another: reuse, not sharing."""
    a_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, 512)
    y_gm.set_global_buffer(y, 1024)
    first = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 512)
    asc.data_copy(first, a_gm, 512)
    asc.set_flag(E.MTE2_MTE3, 0)
    asc.wait_flag(E.MTE2_MTE3, 0)
    asc.data_copy(y_gm, first, 512)
    asc.set_flag(E.MTE3_MTE2, 0)
    asc.wait_flag(E.MTE3_MTE2, 0)
    second = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1024, 512)
    asc.data_copy(second, a_gm, 512)
    asc.set_flag(E.MTE2_MTE3, 1)
    asc.wait_flag(E.MTE2_MTE3, 1)
    asc.data_copy(y_gm[512:], second, 512)


def test_reuse_after_the_last_use_is_not_a_finding():
    a, y = np.arange(512, dtype=np.float32), np.zeros(1024, np.float32)
    assert sanitize(reuse_in_phases)[1](a, y).findings == []
    np.testing.assert_array_equal(y, np.concatenate([a, a]))


@asc.jit
def reload_one_tensor(a: asc.GlobalAddress, y: asc.GlobalAddress):
    """Overwriting a tensor's own unread data (a reload, or duplicate then set_value) is not a lost value."""
    a_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, 16)
    y_gm.set_global_buffer(y, 8)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
    asc.data_copy(t, a_gm, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
    asc.data_copy(t, a_gm[8:], 8)
    asc.set_flag(E.MTE2_MTE3, 0)
    asc.wait_flag(E.MTE2_MTE3, 0)
    asc.data_copy(y_gm, t, 8)


def test_reloading_the_same_tensor_is_not_a_finding():
    y = np.zeros(8, np.float32)
    assert sanitize(reload_one_tensor)[1](np.arange(16, dtype=np.float32), y).findings == []
    assert y.tolist() == list(range(8, 16))
