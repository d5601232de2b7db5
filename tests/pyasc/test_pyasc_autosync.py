"""Issue 11 item 1: ``asc.LocalTensorAuto`` and the syncs pyasc's insert-sync pass places.

Rule (pyasc ``lib/Dialect/Asc/Transforms/InsertSync.cpp`` + ``HoistUBAllocation.cpp``, github
hicann/pyasc): each auto tensor becomes a one-slot queue; after a write on one pipe and before a
use on another there is an enque/deque pair (a set_flag / wait_flag from producer to consumer
pipe), and the allocation is hoisted out of loops, so iterations reuse the buffer and a refill
waits for the previous readers (free/alloc: consumer -> producer).

The kernels below carry no manual sync at all: without the inserted syncs every cross-pipe pair
is a race (the same trace with the auto syncs removed is checked to have them).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc import autosync
from fusekit.asc.trace import Trace
from fusekit.sanitizer import analyze, sanitize

TILE = 256


@asc.jit
def auto_scale_add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, tiles: asc.ConstExpr[int]):
    """z = (x + y) * 2 per tile of 256 float32, all tensors auto-synced."""
    xg, yg, zg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    zg.set_global_buffer(z)
    for i in range(tiles):
        xl = asc.LocalTensorAuto(x.dtype, TILE)
        yl = asc.LocalTensorAuto(y.dtype, [TILE])
        zl = asc.LocalTensorAuto(z.dtype, TILE)
        asc.data_copy(xl, xg[i * TILE:], count=TILE)  # <load-x>
        asc.data_copy(yl, yg[i * TILE:], count=TILE)
        asc.add(zl, xl, yl, TILE)                      # <add>
        asc.muls(zl, zl, 2.0, TILE)
        asc.data_copy(zg[i * TILE:], zl, count=TILE)   # <store>


@asc.jit
def auto_scalar(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """z[0:256] = x * x[3]: a scalar read of UB written by MTE2 (pyasc's V_S / S_V pairs)."""
    xg, zg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    xl = asc.LocalTensorAuto(asc.float32, TILE)
    zl = asc.LocalTensorAuto(asc.float32, TILE)
    asc.data_copy(xl, xg, count=TILE)
    s = xl.get_value(3)
    asc.muls(zl, xl, s, TILE)
    asc.data_copy(zg, zl, count=TILE)


def _data(tiles):
    rng = np.random.default_rng(11)
    x, y = (rng.standard_normal(tiles * TILE).astype(np.float32) for _ in range(2))
    return x, y, np.zeros_like(x)


def _without_auto(trace: Trace) -> Trace:
    cores = [[i for i in core if not autosync.is_auto(i)] for core in trace.cores]
    cores = [[dataclasses.replace(i, seq=n) for n, i in enumerate(core)] for core in cores]
    return dataclasses.replace(trace, cores=cores)


def test_result_and_clean_report():
    x, y, z = _data(4)
    auto_scale_add[1](x, y, z, 4)
    np.testing.assert_array_equal(z, (x + y) * np.float32(2))  # float32 add then exact doubling
    report = sanitize(auto_scale_add, outputs=["z"])[1](x, y, np.zeros_like(z), 4)
    assert report.ok, report.to_text()


def test_inserted_syncs_are_the_dependences():
    x, y, z = _data(2)
    trace = auto_scale_add[1](x, y, z, 2).trace
    events = [i.sync.event[1] for i in trace.cores[0] if autosync.is_auto(i) and i.sync.kind.value == "wait"]
    # tile 0: x, y loaded (MTE2) -> add (V) needs MTE2_V once per buffer; z (V) -> store (MTE3)
    # tile 1: refilling x, y after V read them: V_MTE2 (WAR); add over z after MTE3 read it: MTE3_V
    assert events == ["MTE2_V", "MTE2_V", "V_MTE3",
                      "V_MTE2", "V_MTE2", "MTE2_V", "MTE2_V", "MTE3_V", "V_MTE3"]
    lines = autosync.inserted(trace)
    assert len(lines) == len(events)
    assert "after" in lines[0] and "test_pyasc_autosync.py" in lines[0] and "-> before" in lines[0]


def test_without_the_inserted_syncs_the_kernel_races():
    x, y, z = _data(2)
    trace = auto_scale_add[1](x, y, z, 2).trace
    assert not [f for f in analyze(trace) if f.tool == "racecheck"]
    races = [f for f in analyze(_without_auto(trace)) if f.tool == "racecheck"]
    kinds = {f.kind for f in races}
    assert races and {"RAW", "WAR"} <= {k.split()[0] for k in kinds}, kinds


def test_scalar_read_is_ordered_after_the_load():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(TILE).astype(np.float32)
    z = np.zeros_like(x)
    trace = auto_scalar[1](x, z).trace
    np.testing.assert_array_equal(z, x * x[3])
    waits = [i.sync.event[1] for i in trace.cores[0] if autosync.is_auto(i) and i.sync.kind.value == "wait"]
    assert waits[0] == "MTE2_S"
    assert sanitize(auto_scalar, outputs=["z"])[1](x, np.zeros_like(z)).ok


def test_bad_shape_is_a_kernel_error():
    @asc.jit
    def bad(x: asc.GlobalAddress):
        asc.LocalTensorAuto(asc.float32, 0)

    with pytest.raises(asc.KernelError, match="positive integer dimensions"):
        bad[1](np.zeros(8, np.float32))


def test_ub_exhausted_names_the_tensor():
    @asc.jit
    def big(x: asc.GlobalAddress):
        asc.LocalTensorAuto(asc.float32, 1 << 20)

    with pytest.raises(asc.KernelError, match="auto@"):
        big[1](np.zeros(8, np.float32))


def test_report_prints_each_inserted_sync_with_its_two_lines():
    x, y, z = _data(2)
    text = sanitize(auto_scale_add, outputs=["z"])[1](x, y, z, 2).to_text()
    assert "automatic syncs inserted (LocalTensorAuto):" in text
    load = next(line for line in text.splitlines() if "MTE2_V" in line and "<load-x>" in line)
    assert "<add>" in load.split("-> before")[1]  # the load's line, then the add's line


# -- issue 18 A follow-up: one buffer per traced call (pyasc: one local_tensor_auto op per traced call) --
# pyasc's tracer (codegen/function_visitor.py) visits a range / asc.range body once (one scf.for: its ops are
# hoisted and reused, HoistUBAllocation.cpp), unrolls asc.static_range, runs plain Python helpers as Python and
# inlines @asc.jit helpers per call (runtime/compiler.py add_inliner); MaterializeTensor.cpp gives each op its own
# TBuf / TQue. So two calls on one line, two helper calls, two iterations of a helper's Python loop or of a
# static_range are two buffers; the iterations of a traced loop share theirs.

def _make():
    return asc.LocalTensorAuto(asc.float32, 8)


def _make_two():
    out = []
    for _ in range(2):  # plain Python: unrolled when pyasc traces the helper
        out.append(asc.LocalTensorAuto(asc.float32, 8))
    return out


@asc.jit
def _jit_make():
    return asc.LocalTensorAuto(asc.float32, 8)


@asc.jit
def two_inputs(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    """y = x[:8] + x[8:16], the two halves in two auto tensors made as MODE says, three times (a traced loop)."""
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, 16)
    yg.set_global_buffer(y, 8)
    for _ in range(3):
        if MODE == "one line":
            a, b = asc.LocalTensorAuto(asc.float32, 8), asc.LocalTensorAuto(asc.float32, 8)
        elif MODE == "helper":
            a = _make()
            b = _make()
        elif MODE == "helper loop":
            a, b = _make_two()
        elif MODE == "jit helper":
            a = _jit_make()
            b = _jit_make()
        else:
            made = []
            for _ in asc.static_range(2):
                made.append(asc.LocalTensorAuto(asc.float32, 8))
            a, b = made
        asc.data_copy(a, xg, 8)
        asc.data_copy(b, xg[8:], 8)
        c = asc.LocalTensorAuto(asc.float32, 8)
        asc.add(c, a, b, 8)
        asc.data_copy(yg, c, 8)


@pytest.mark.parametrize("mode", ["one line", "helper", "helper loop", "jit helper", "static_range"])
def test_each_traced_call_is_its_own_buffer(mode):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(8, np.float32)
    trace = two_inputs[1](x, y, mode).trace
    np.testing.assert_array_equal(y, x[:8] + x[8:])  # aliased, b's copy overwrote a: y = 2 * x[8:]
    ub = sorted({acc.start for instr in trace.cores[0] for acc in instr.writes if acc.mem.name == "UB"})
    assert len(ub) == 3, ub  # a, b, c: the loop's three iterations reuse them
    report = sanitize(two_inputs, outputs=["y"])[1](x, np.zeros(8, np.float32), mode)
    assert report.ok, report.to_text()  # no WAW MTE2 -> MTE2 between a's and b's copies


def test_static_range_exhausting_ub_is_a_kernel_error_naming_the_call():
    @asc.jit
    def many(x: asc.GlobalAddress):
        for _ in asc.static_range(256):  # 256 allocations of 1 KiB: more than the 192 KiB of UB
            asc.LocalTensorAuto(asc.float32, 256)

    with pytest.raises(asc.KernelError, match=r"auto@test_pyasc_autosync.py:\d+#\d+ needs 1024 B of UB") as err:
        many[1](np.zeros(8, np.float32))
    assert err.value.kind == "ub-overflow"


def test_a_traced_loop_reuses_its_buffer():
    @asc.jit
    def looped(x: asc.GlobalAddress):
        for _ in range(256):  # one op, hoisted: one buffer
            asc.LocalTensorAuto(asc.float32, 256)

    looped[1](np.zeros(8, np.float32))
