"""When the lockstep executor gives a launch to the reference executor, and what stays as it was (issue 20).

Behaviour that must not change with the lockstep executor as ``fusekit.asc.launch``'s default: every KernelError
names the core, tensor, byte range and file:line of the first faulting core in block order; printf output stays per
core in block order; progress bars advance once per core; a racy kernel's plain-run output is the one the reference
executor's block order gives (one the NPU may legally produce: cores run in any order, AD-G 核函数). Each case here
checks the fallback reason (``Trace.fallback``) and the behaviour against values worked out in the test from the
kernel's definition, not from fusekit.
"""

from __future__ import annotations

import io

import os

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc import launch

from lockstep_harness import assert_same_error, assert_same_trace, executor, run_both
from support import gm_view, line_of, ub_buf

N = 64  # float32 elements per core


@asc.jit
def _copy_scaled(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y = 2 x, each core its N elements."""
    start = asc.get_block_idx() * N
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + start, N), N)
    asc.muls(t, t, 2.0, N)
    asc.data_copy(gm_view(y + start, N), t, N)


def _run(kernel, cores, *arrays, **options):
    return launch(kernel, cores, arrays, **options)


def test_lockstep_is_the_default_and_the_environment_forces_the_reference(monkeypatch):
    x = np.arange(4 * N, dtype=np.float32)
    y = np.zeros_like(x)
    trace = _run(_copy_scaled, 4, x, y).trace
    assert (trace.executor, trace.fallback) == ("lockstep", "")
    np.testing.assert_array_equal(y, 2 * x)
    monkeypatch.setenv("FUSEKIT_EXECUTOR", "reference")
    trace = _run(_copy_scaled, 4, x, np.zeros_like(x)).trace
    assert (trace.executor, trace.fallback) == ("reference", "FUSEKIT_EXECUTOR=reference")
    monkeypatch.setenv("FUSEKIT_EXECUTOR", "fast")
    with pytest.raises(ValueError, match="FUSEKIT_EXECUTOR='fast': expected one of lockstep, reference"):
        _run(_copy_scaled, 4, x, y)


def test_options_the_lockstep_executor_does_not_take():
    class Immediate:  # an executor that lands each effect at once (the sanitizer's replay holds them back)
        def run(self, instr, effect):
            from fusekit.asc.effect import run
            run(effect)

        def end_core(self, core):
            pass

    x = np.arange(4 * N, dtype=np.float32)
    for options, reason in (({"executor": Immediate()}, "an executor"), ({"reverse_cores": True}, "reverse_cores"),
                            ({"sample_cores": True}, "sample_cores")):
        trace = _run(_copy_scaled, 4, x, np.zeros_like(x), **options).trace
        assert trace.executor == "reference" and trace.fallback.startswith(reason), trace.fallback
    assert _run(_copy_scaled, 1, x, np.zeros_like(x)).trace.fallback == "one core"


@asc.jit
def _neighbour(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Each core writes 2 x of its row into y, then reads the next core's row of y (a race between cores) into x."""
    idx = asc.get_block_idx()
    nxt = (idx + 1) % asc.get_block_num()
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + idx * N, N), N)
    asc.muls(t, t, 2.0, N)
    asc.data_copy(gm_view(y + idx * N, N), t, N)
    asc.data_copy(t, gm_view(y + nxt * N, N), N)
    asc.data_copy(gm_view(x + idx * N, N), t, N)


def test_a_racy_kernel_gives_the_block_order_output():
    cores = 4
    x0 = np.arange(cores * N, dtype=np.float32) + 1
    x, y = x0.copy(), np.full(cores * N, -1, np.float32)
    trace = _run(_neighbour, cores, x, y).trace
    assert trace.executor == "reference" and "reads what" in trace.fallback, trace.fallback
    # block order: core i reads core i+1's row before core i+1 ran (still -1), except the last core, which reads
    # core 0's row, written already (2 x0)
    rows = x0.reshape(cores, N)
    want = np.full((cores, N), -1, np.float32)
    want[-1] = 2 * rows[0]
    np.testing.assert_array_equal(x.reshape(cores, N), want)
    np.testing.assert_array_equal(y, 2 * x0)


@asc.jit
def _past_the_end(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int):
    """Each core copies N elements from idx * (N + 8): the cores from the one whose range passes total on fault."""
    start = asc.get_block_idx() * (N + 8)
    xg = gm_view(x, total)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, xg[start:], N)  # <read>
    asc.data_copy(gm_view(y + asc.get_block_idx() * N, N), t, N)


def test_an_out_of_bounds_kernel_names_the_first_faulting_core():
    cores, total = 6, 4 * (N + 8) + N  # cores 0..4 fit ([4 * 72, 4 * 72 + 64) ends at total); core 5 passes it
    (ref, _), (got, _) = run_both(lambda: [np.zeros(total, np.float32), np.zeros(cores * N, np.float32)],
                                  lambda x, y: _run(_past_the_end, cores, x, y, total))
    assert isinstance(got, asc.KernelError) and got.kind == "out-of-bounds"
    assert (got.core, got.line, got.buffer) == (5, line_of(_past_the_end, "read"), "x")
    assert got.byte_range == (5 * (N + 8) * 4, (5 * (N + 8) + N) * 4)
    assert_same_error(ref, got)
    assert got.trace.executor == "reference" and "KernelError" in got.trace.fallback
    assert [len(c) for c in got.trace.cores[:5]] == [len(c) for c in ref.trace.cores[:5]]


def test_under_the_sanitizer_a_clean_kernel_runs_lockstep_and_a_faulting_one_collects_its_faults():
    """The sanitizer's first run passes a faults list: no reason to refuse, since a fault sends the launch back."""
    x = np.arange(4 * N, dtype=np.float32)
    faults: list = []
    trace = _run(_copy_scaled, 4, x, np.zeros_like(x), faults=faults).trace
    assert (trace.executor, faults) == ("lockstep", [])
    cores, total = 6, 4 * (N + 8) + N
    got, want = [], []
    for env, collected in (("lockstep", got), ("reference", want)):
        os.environ["FUSEKIT_EXECUTOR"] = env
        try:
            result = _run(_past_the_end, cores, np.zeros(total, np.float32), np.zeros(cores * N, np.float32), total,
                          faults=collected)
        finally:
            del os.environ["FUSEKIT_EXECUTOR"]
        assert result.trace.executor == "reference"
    assert [str(e) for e in got] == [str(e) for e in want] and got  # core 5's read, collected, the kernel went on


@asc.jit
def _hello(x: asc.GlobalAddress):
    idx = asc.get_block_idx()
    asc.printf("core %d of %d\n", idx, asc.get_block_num())


def test_printf_stays_per_core_in_block_order():
    out = io.StringIO()
    trace = _run(_hello, 3, np.zeros(8, np.float32), device_output=out).trace
    assert out.getvalue() == "".join(f"[aiv({i})] core {i} of 3\n" for i in range(3))
    assert trace.executor == "reference" and "device output" in trace.fallback


def test_progress_is_called_once_per_core():
    calls = []
    x = np.arange(8 * N, dtype=np.float32)
    trace = _run(_copy_scaled, 8, x, np.zeros_like(x), progress=lambda: calls.append(1)).trace
    assert trace.executor == "lockstep" and len(calls) == 8
    calls.clear()
    trace = _run(_late_printf, 8, x, np.zeros_like(x), progress=lambda: calls.append(1), device_output=None).trace
    assert trace.executor == "reference" and "device output" in trace.fallback
    assert len(calls) == 8


def test_progress_after_a_fault_counts_only_the_cores_the_reference_ran():
    """Core 5 of 8 faults: its group [5] runs after [0-4, 6, 7] ended, yet only cores 0-4 end on the reference."""
    cores, total = 8, 4 * (N + 8) + N
    counts = []
    for env in ("lockstep", "reference"):
        calls: list = []
        os.environ["FUSEKIT_EXECUTOR"] = env
        try:
            with pytest.raises(asc.KernelError) as caught:
                _run(_past_the_end, cores, np.zeros(total, np.float32), np.zeros(cores * N, np.float32), total,
                     progress=lambda: calls.append(1))
        finally:
            del os.environ["FUSEKIT_EXECUTOR"]
        assert caught.value.core == 5
        counts.append(len(calls))
    assert counts == [5, 5]


_STEPS = [0]


def _next_step(_count=_STEPS):  # state kept in a default argument: once per core on the reference
    _count[0] += 1
    return _count[0]


@asc.jit
def _counts_calls(x: asc.GlobalAddress, y: asc.GlobalAddress):
    start = asc.get_block_idx() * N
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + start, N), N)
    asc.adds(t, t, float(_next_step()), N)
    asc.data_copy(gm_view(y + start, N), t, N)


@asc.jit
def _asks_the_type(x: asc.GlobalAddress, y: asc.GlobalAddress):
    start = asc.get_block_idx() * N
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + start, N), N)
    if isinstance(asc.get_block_idx(), int):  # an int32 scalar on the reference
        asc.muls(t, t, 2.0, N)
    asc.data_copy(gm_view(y + start, N), t, N)


def test_python_that_sees_more_than_values_runs_on_the_reference():
    x = np.arange(4 * N, dtype=np.float32)
    _STEPS[0] = 0
    y = np.zeros_like(x)
    trace = _run(_counts_calls, 4, x, y).trace
    assert trace.executor == "reference" and "default argument" in trace.fallback, trace.fallback
    np.testing.assert_array_equal(y, x + np.repeat(np.arange(1, 5, dtype=np.float32), N))
    y = np.zeros_like(x)
    trace = _run(_asks_the_type, 4, x, y).trace
    assert trace.executor == "reference" and "isinstance" in trace.fallback, trace.fallback
    np.testing.assert_array_equal(y, 2 * x)


@asc.jit
def _late_printf(x: asc.GlobalAddress, y: asc.GlobalAddress):
    _copy_scaled(x, y)
    if asc.get_block_idx() == asc.get_block_num() - 1:
        asc.printf("done\n")


@asc.jit
def _barrier(x: asc.GlobalAddress):
    asc.sync_all()


@asc.jit
def _atomic(x: asc.GlobalAddress, y: asc.GlobalAddress):
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + asc.get_block_idx() * N, N), N)
    asc.set_atomic_add(asc.float32)
    asc.data_copy(gm_view(y, N), t, N)
    asc.set_atomic_none()


@asc.jit
def _scalar_gm(x: asc.GlobalAddress):
    g = gm_view(x + asc.get_block_idx() * 16, 16)
    g.set_value(0, g.get_value(1))


def test_what_the_groups_do_not_run():
    x = np.arange(4 * N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    cases = ((_barrier, (x.copy(),), "synchronises cores"), (_atomic, (x.copy(), y), "store atomics"),
             (_scalar_gm, (x.copy(),), "on GM"))
    for kernel, args, reason in cases:
        trace = _run(kernel, 4, *args).trace
        assert trace.executor == "reference" and reason in trace.fallback, (kernel, trace.fallback)
    # the atomic sum is the same in any order here: every core adds its row
    np.testing.assert_array_equal(y, x.reshape(4, N).sum(axis=0))


def test_a_kernel_with_python_side_effects_runs_once_per_core():
    seen = []

    @asc.jit
    def k(x: asc.GlobalAddress):
        seen.append(int(asc.get_block_idx()))

    trace = launch(k, 3, (np.zeros(8, np.float32),)).trace
    assert seen == [0, 1, 2]
    assert trace.executor == "reference" and "effects outside the simulator" in trace.fallback


@asc.jit
def _split_late(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y += x; then the odd cores read their row of y back and add 1: the group splits after its GM writes, and its
    rerun must start from y as it was (a rerun over its own writes would add x twice)."""
    start = asc.get_block_idx() * N
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    u = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + start, N), N)
    asc.data_copy(u, gm_view(y + start, N), N)
    asc.add(t, t, u, N)
    asc.data_copy(gm_view(y + start, N), t, N)
    if asc.get_block_idx() % 2 == 1:
        asc.data_copy(t, gm_view(y + start, N), N)
        asc.adds(t, t, 1.0, N)
        asc.data_copy(gm_view(y + start, N), t, N)


def test_a_group_that_splits_after_writing_gm_is_undone_first():
    cores = 6
    x = np.arange(cores * N, dtype=np.float32)
    y0 = np.full(cores * N, 0.5, np.float32)
    y = y0.copy()
    result = launch(_split_late, cores, (x, y))
    assert result.trace.executor == "lockstep"
    want = (y0 + x).reshape(cores, N)
    want[1::2] += 1  # x added once: the odd cores' first pass was undone before they reran
    np.testing.assert_array_equal(y.reshape(cores, N), want)
    with executor("reference"):
        ref = launch(_split_late, cores, (x, y0.copy()))
    assert_same_trace(ref.trace, result.trace)


@asc.jit
def _compare_rows(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y's first 32 bytes per core: Compare's bit mask of x > x (a closure effect the groups do not run)."""
    idx = asc.get_block_idx()
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    bits = ub_buf(pipe, asc.uint8, 32)
    asc.data_copy(t, gm_view(x + idx * N, N), N)
    asc.compare(bits, t, t, asc.CMPMODE.GT, N)
    asc.data_copy(gm_view(y + idx * 32, 32), bits, 32)


@asc.jit
def _auto(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y = x through a LocalTensorAuto (its inserted syncs are an analysis that observes every instruction)."""
    start = asc.get_block_idx() * N
    t = asc.LocalTensorAuto(asc.float32, N)
    asc.data_copy(t, gm_view(x + start, N), count=N)
    asc.data_copy(gm_view(y + start, N), t, count=N)


@asc.jit
def _same_row(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """Every core writes its row of x into y's first row: the last core in block order leaves its row there."""
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, N)
    asc.data_copy(t, gm_view(x + asc.get_block_idx() * N, N), N)
    asc.data_copy(gm_view(y, N), t, N)


def test_more_launches_the_reference_executor_runs():
    cores = 4
    x = np.arange(cores * N, dtype=np.float32) - 100
    trace = _run(_compare_rows, cores, x, np.zeros(cores * 32, np.uint8)).trace
    assert trace.executor == "reference" and "compare" in trace.fallback, trace.fallback
    trace = _run(_auto, cores, x, np.zeros_like(x)).trace
    assert trace.executor == "reference" and "observes the instructions" in trace.fallback, trace.fallback
    y = np.zeros(N, np.float32)
    trace = _run(_same_row, cores, x, y).trace
    assert trace.executor == "reference" and "written by aiv(" in trace.fallback, trace.fallback
    np.testing.assert_array_equal(y, x[-N:])  # block order: the last core's copy lands last
    first = _run(_copy_scaled, cores, x, np.zeros_like(x))
    trace = _run(_copy_scaled, cores, x, np.zeros_like(x), initial_state=first).trace
    assert trace.executor == "reference" and trace.fallback == "initial_state"


def test_a_lockstep_trace_is_built_on_first_read_and_copies_as_its_lists():
    import copy
    import pickle

    x = np.arange(4 * N, dtype=np.float32)
    got = _run(_copy_scaled, 4, x, np.zeros_like(x)).trace
    assert got.__dict__["_build"] is not None  # nothing built yet
    with executor("reference"):
        ref = _run(_copy_scaled, 4, x, np.zeros_like(x)).trace
    for trace in (pickle.loads(pickle.dumps(got)), copy.deepcopy(got), got):
        assert trace.executor == "lockstep"
        assert_same_trace(ref, trace)
    assert got.__dict__["_build"] is None and got == ref
