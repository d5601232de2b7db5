"""Explicit synchronisation rules fusekit.asc enforces: flag event ids, pipe_barrier.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import pytest

from fusekit import asc
from fusekit.asc.trace import Pipe, Sync, SyncKind

from support import raises_at


# ---------------------------------------------------------------------------------------------
# Explicit synchronisation
# ---------------------------------------------------------------------------------------------

@asc.jit
def flag_kernel(OP: asc.ConstExpr, ARG: asc.ConstExpr, EVENT_ID: asc.ConstExpr):
    if OP is asc.pipe_barrier:
        OP(ARG)  # <barrier>
    else:
        OP(ARG, EVENT_ID)  # <flag>


@pytest.mark.parametrize("op", [asc.set_flag, asc.wait_flag], ids=["set_flag", "wait_flag"])
@pytest.mark.parametrize("event_id", [-1, 8, 100])
def test_flag_event_id_outside_0_8_raises(op, event_id):
    with raises_at(flag_kernel, "flag", rf"{op.__name__} on aiv\(0\).*event id {event_id} outside \[0, 8\)"):
        flag_kernel[1](op, asc.HardEvent.MTE2_V, event_id)


@pytest.mark.parametrize("event_id", [0, 7])
def test_flag_event_ids_0_to_7_work(event_id):
    result = flag_kernel[1](asc.set_flag, asc.HardEvent.V_MTE3, event_id)
    (instr,) = result.trace.cores[0]
    assert (instr.pipe, instr.sync) == (Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, ("flag", "V_MTE3", event_id)))


def test_pipe_barrier_pipe_s_raises():
    with raises_at(flag_kernel, "barrier", r"pipe_barrier on an AIV core takes PipeID\.PIPE_V, PIPE_MTE2, PIPE_MTE3 or PIPE_ALL"):
        flag_kernel[1](asc.pipe_barrier, asc.PipeID.PIPE_S, None)


def test_pipe_barrier_all_orders_v_mte2_mte3():
    result = flag_kernel[1](asc.pipe_barrier, asc.PipeID.PIPE_ALL, None)
    assert [(i.pipe, i.sync.kind) for i in result.trace] == [
        (Pipe.V, SyncKind.BARRIER), (Pipe.MTE2, SyncKind.BARRIER), (Pipe.MTE3, SyncKind.BARRIER)]
