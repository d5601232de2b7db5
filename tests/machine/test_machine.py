"""The machine as data (``fusekit.machine``): memory spaces, pipes, core kinds, data paths and the core's state are
tables, and everything above reads them.

- ``PipeID`` and ``HardEvent`` are derived from the pipe table with pyasc's names and the values they had when
  they were written by hand (AD-API PipeBarrier(ISASI).md, SetFlag/WaitFlag.md);
- the happens-before clocks have one component per pipe of the table (``fusekit.hb``);
- every register a kernel can leave on a core is declared in ``fusekit.machine.state.CoreState``;
- a new memory space and its data paths are table rows: a kernel copies through them, and the Trace, the
  sanitizer and the timing model handle them with no code of their own (the proof that adding a space or a path
  needs no edit of ``hb.py``, ``sanitizer/scan.py``, ``asc/tensor.py`` or ``timing/``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fusekit.asc.runtime as runtime
from fusekit import asc, machine, timing
from fusekit.hb import core_order
from fusekit.machine import COUNT, Mem, MemSpace, Pipe, Scope
from fusekit.sanitizer import sanitize

from corpus import all_cases
from support import gm_view

E = asc.HardEvent


def test_pipe_id_and_hard_event_keep_their_names_and_values():
    """The members pyasc's kernels name, in the order and with the values the hand-written enums had, then the
    AIC's pipes and every pair 核内同步能力概述.md 表2 lists as legal on the AIC."""
    S, V, MTE2, MTE3 = Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3
    assert [(m.name, m.value) for m in asc.PipeID] == [
        ("PIPE_S", S), ("PIPE_V", V), ("PIPE_MTE2", MTE2), ("PIPE_MTE3", MTE3), ("PIPE_MTE1", Pipe.MTE1),
        ("PIPE_M", Pipe.M), ("PIPE_FIX", Pipe.FIX), ("PIPE_ALL", "ALL")]
    vector = [(m.name, m.value) for m in asc.HardEvent if {*m.value} <= {S, V, MTE2, MTE3}]
    assert vector == [
        ("S_V", (S, V)), ("S_MTE2", (S, MTE2)), ("S_MTE3", (S, MTE3)), ("V_S", (V, S)), ("V_MTE2", (V, MTE2)),
        ("V_MTE3", (V, MTE3)), ("MTE2_S", (MTE2, S)), ("MTE2_V", (MTE2, V)), ("MTE2_MTE3", (MTE2, MTE3)),
        ("MTE3_S", (MTE3, S)), ("MTE3_V", (MTE3, V)), ("MTE3_MTE2", (MTE3, MTE2))]
    aic_pairs = ["M_MTE1", "M_MTE2", "M_FIX", "MTE1_M", "MTE1_MTE2", "MTE1_MTE3", "MTE1_FIX", "MTE2_M", "MTE2_MTE1",
                 "MTE2_MTE3", "MTE3_MTE1", "MTE3_MTE2", "FIX_M", "FIX_MTE1"]
    assert all(asc.HardEvent[name].value == tuple(getattr(Pipe, side) for side in name.split("_"))
               for name in aic_pairs)
    assert repr(Pipe.MTE2) == "PIPE_MTE2" and Pipe.MTE2.value == "MTE2"
    assert repr(Mem.UB) == "<Mem.UB: 'UB'>" and Mem.GM.value == "GM"


def test_rows_copy_and_pickle_as_themselves():
    """Rows stand where enum members did: copies and pickles are the row itself (``is`` comparisons hold)."""
    import copy
    import pickle

    for row in (*machine.PIPES, Mem.GM, Mem.UB):
        assert copy.deepcopy(row) is row and pickle.loads(pickle.dumps(row)) is row


@asc.jit
def _add_one(x, y, n: asc.ConstExpr[int]):
    xg, yg = gm_view(x, n), gm_view(y, n)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, n)
    asc.data_copy(t, xg, n)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    asc.adds(t, t, 1.0, n)
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(yg, t, n)


def test_clocks_have_one_component_per_pipe():
    """``fusekit.hb`` sizes its clocks from the pipe table."""
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    trace = _add_one[1](x, y, 8).trace
    order = core_order(trace.cores[0])
    assert all(len(clock) == len(machine.PIPES) for clock in order.clock)


def test_every_register_a_kernel_leaves_is_declared(monkeypatch):
    """After the corpus kernels and a kernel setting the persistent registers, a core holds only the attributes
    ``CoreState`` declares and ``Core.__init__`` sets (nothing created ad hoc by a family module)."""

    seen: set[str] = set()
    finish = runtime._finish

    def spy(core):
        seen.update(vars(core))
        finish(core)

    monkeypatch.setattr(runtime, "_finish", spy)

    @asc.jit
    def registers(x):
        asc.set_atomic_add(asc.float32)
        asc.set_vector_mask(0, 0xFF, dtype=asc.float32)
        asc.set_pad_value(0.0)
        asc.set_atomic_none()
        asc.reset_mask()

    registers[1](np.zeros(8, np.float32))
    for case in all_cases():
        args, kwargs = case.args(case.size)
        try:
            runtime.launch(case.kernel, case.cores, args, kwargs, strict=case.strict, device_output=None)
        except asc.KernelError:
            pass  # kernels of the corpus that stop with an error still leave their state
    declared = {f.name for f in dataclasses.fields(machine.CoreState)}
    own = {"idx", "place", "faults", "executor", "log", "block_num", "soc", "strict", "ub", "instrs", "pipe", "queues",
           "sync_all_hook", "wait_hook", "launch_flags", "progress", "overflowed", "observers"}
    assert seen - declared - own == set()
    assert {"atomic", "vector_mask", "pad_value"} <= seen & set(machine.PERSISTENT)


# -- a new memory space and its paths, as rows only -------------------------------------------------------------

XB = MemSpace("XB", Scope.LOCAL, "ub_tiling_bytes", 32, ("A1",), "AIV", "a fake space for this test")


@pytest.fixture
def xb(monkeypatch):
    """The fake local space XB (TPosition A1 on an AIV core), with paths GM -> XB (MTE2), XB -> UB (V) and
    XB -> GM (MTE3, store atomics): rows added to the tables, nothing else."""
    monkeypatch.setitem(machine.SPACES, "XB", XB)
    for path in (machine.DataPath(Mem.GM, XB, Pipe.MTE2, frozenset({COUNT}), False, "test"),
                 machine.DataPath(XB, Mem.UB, Pipe.V, frozenset({COUNT}), False, "test"),
                 machine.DataPath(XB, Mem.GM, Pipe.MTE3, frozenset({COUNT}), True, "test")):
        monkeypatch.setitem(machine.PATHS, (path.src, path.dst), path)
    return XB


def _through_xb(sync_in: bool):
    @asc.jit
    def kernel(x, y, z, n: asc.ConstExpr[int]):
        xg, yg, zg = gm_view(x, n), gm_view(y, n), gm_view(z, n)
        far = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, n)  # XB byte 0
        near = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, n)  # UB byte 0: another arena
        asc.data_copy(far, xg, n)  # <in>
        if sync_in:
            asc.set_flag(E.MTE2_V, 0)
            asc.wait_flag(E.MTE2_V, 0)
        asc.data_copy(near, far, n)  # <move>
        asc.adds(near, near, 1.0, n)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(yg, near, n)
        asc.data_copy(zg, far, n)

    return kernel


def test_a_new_space_and_its_paths_are_rows(xb):
    n = 64
    x = np.arange(n, dtype=np.float32)
    y, z = np.zeros(n, np.float32), np.zeros(n, np.float32)
    trace = _through_xb(True)[1](x, y, z, n).trace
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(z, x)  # XB kept x: the UB at the same address is another arena
    copies = [i for i in trace.cores[0] if i.op == "data_copy"]
    assert [(i.pipe, i.reads[0].mem, i.writes[0].mem) for i in copies] == [
        (Pipe.MTE2, Mem.GM, xb), (Pipe.V, xb, Mem.UB), (Pipe.MTE3, Mem.UB, Mem.GM), (Pipe.MTE3, xb, Mem.GM)]
    assert copies[1].reads[0].buffer == "XB"
    profile = timing.predict([trace])
    assert profile.kernel_time_us > 0


def test_the_sanitizer_sees_the_new_space(xb):
    """The copy into XB on MTE2 and the reads of XB on V and MTE3 need a flag (the MTE3 read is ordered through the
    V -> MTE3 flag once MTE2 -> V is there): without it racecheck reports both RAWs in XB, keyed per core."""
    n = 64
    args = (np.ones(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32), n)
    clean = sanitize(_through_xb(True), outputs=("y", "z"))[1](*args)
    assert clean.findings == []
    racy = sanitize(_through_xb(False), outputs=("y", "z"))[1](*args)
    assert [(f.tool, f.kind, f.mem, f.buffer, f.pipes) for f in racy.findings] == [
        ("racecheck", "RAW", "XB", "XB", ("MTE2", "V")), ("racecheck", "RAW", "XB", "XB", ("MTE2", "MTE3"))]


def test_a_space_without_a_path_is_refused(xb):
    @asc.jit
    def kernel(x, n: asc.ConstExpr[int]):
        far = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, n)
        near = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, n)
        asc.data_copy(far, near, n)

    with pytest.raises(asc.KernelError, match="no data path UB -> XB"):
        kernel[1](np.zeros(8, np.float32), 8)
