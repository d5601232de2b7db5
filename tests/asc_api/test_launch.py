"""Kernel launch rules fusekit.asc enforces: core_num, block order, arguments, jit helpers, sync_all.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Mem, Pipe, Sync, SyncKind

from support import assert_bits_equal, gm_view, line_of


# ---------------------------------------------------------------------------------------------
# Launch
# ---------------------------------------------------------------------------------------------

@asc.jit
def nothing_kernel(x: asc.GlobalAddress):
    pass


@pytest.mark.parametrize("core_num", [0, 65536, -1, True, 2.0])
def test_core_num_outside_1_to_65535_raises(core_num):
    with pytest.raises(ValueError, match=r"core_num must be an integer in \[1, 65535\]"):
        nothing_kernel[core_num](np.zeros(8, np.float32))


def test_core_num_65535_is_accepted_and_runs():  # about 0.5 s: cores without sync_all run one at a time
    @asc.jit
    def last_core_writes(y: asc.GlobalAddress):
        if asc.get_block_idx() == asc.get_block_num() - 1:
            gm_view(y, 1).set_value(0, asc.get_block_idx())

    y = np.zeros(1, np.int32)
    result = last_core_writes[65535](y)
    assert y[0] == 65534 and len(result.trace.cores) == 65535


@asc.jit
def order_kernel(order: asc.GlobalAddress):
    g = gm_view(order, asc.get_block_num() + 1)
    seen = g.get_value(0)
    g.set_value(1 + seen, asc.get_block_idx())
    g.set_value(0, seen + 1)


def test_cores_run_in_block_order_and_trace_is_per_core():
    order = np.zeros(6, np.int32)
    result = order_kernel[5](order)
    assert order.tolist() == [5, 0, 1, 2, 3, 4]
    assert result.trace.block_dim == 5 and len(result.trace.cores) == 5
    for idx, instrs in enumerate(result.trace.cores):
        assert [(i.core, i.seq, i.op, i.pipe) for i in instrs] == [
            (idx, 0, "get_value", Pipe.S), (idx, 1, "set_value", Pipe.S), (idx, 2, "set_value", Pipe.S)]
        assert instrs[1].writes == (Access(Mem.GM, "order", 4 * (1 + idx), 4 * (2 + idx), "order"),)


@asc.jit
def scalar_kernel(y: asc.GlobalAddress, h: asc.GlobalAddress, i: asc.GlobalAddress, s: float, n: int):
    gm_view(y, 1).set_value(0, s)
    gm_view(h, 1).set_value(0, s)
    gm_view(i, 1).set_value(0, n)


@pytest.mark.parametrize("s", [0.1, 1 + 2**-11 + 2**-40, 1e-50, -3.0000001])
def test_float_arguments_are_rounded_to_float32(s):
    y, h, i = np.zeros(8, np.float32), np.zeros(16, np.float16), np.zeros(8, np.int32)
    scalar_kernel[1](y, h, i, s, 5)
    assert_bits_equal(y[:1], np.array([s], np.float32))
    assert_bits_equal(h[:1], np.array([s], np.float32).astype(np.float16))  # double rounding, as pyasc does


@pytest.mark.parametrize("n", [2**31 - 1, -2**31])
def test_int_arguments_within_int32_are_accepted(n):
    i = np.zeros(8, np.int32)
    scalar_kernel[1](np.zeros(8, np.float32), np.zeros(16, np.float16), i, 0.0, n)
    assert i[0] == n


@pytest.mark.parametrize("n", [2**31, -2**31 - 1, np.int64(2**40)])
def test_int_arguments_outside_int32_raise(n):
    with pytest.raises(ValueError, match=rf"argument n={n} does not fit the kernel's int32 scalar"):
        scalar_kernel[1](np.zeros(8, np.float32), np.zeros(16, np.float16), np.zeros(8, np.int32), 0.0, n)


def test_kernel_called_without_core_num_raises_type_error():
    with pytest.raises(TypeError, match=r"nothing_kernel is an @asc\.jit kernel: launch it with nothing_kernel\[core_num\]"):
        nothing_kernel(np.zeros(8, np.float32))
    with pytest.raises(TypeError, match=r"gm_view is an @asc\.jit kernel"):
        gm_view(None, 1)


def test_jit_helpers_are_plain_calls_inside_a_kernel():
    seen = []

    @asc.jit
    def helper(a, b):
        seen.append(asc.get_block_idx())
        return a * 10 + b

    @asc.jit
    def k(y: asc.GlobalAddress):
        gm_view(y, 2).set_value(asc.get_block_idx(), helper(asc.get_block_idx(), 7))

    y = np.zeros(8, np.int32)
    k[2, None](y)  # kernel[core_num, stream] form
    assert y[:2].tolist() == [7, 17] and seen == [0, 1]


@asc.jit
def sync_kernel(g: asc.GlobalAddress, WHO: asc.ConstExpr[str]):
    t = gm_view(g, 4)
    idx = asc.get_block_idx()
    if WHO == "all":
        if idx == 0:
            t.set_value(0, 7)          # core 0 writes before the barrier ...
        if idx == 1:
            t.set_value(1, 42)         # ... and so does core 1, which runs after core 0
        # scalar stores stay in the core's data cache until cleaned, and a cached line goes stale
        # (AD-API DataCacheCleanAndInvalid.md): write back before the barrier, drop it after
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
        asc.sync_all()
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
        if idx == 0:
            t.set_value(2, t.get_value(1) + 1)  # core 0 sees core 1's write only thanks to sync_all
        if idx == 1:
            t.set_value(3, t.get_value(0))
        # both stores share one 64 B line: written back at once they would overwrite each other
        # (the cores run one after another here, so the write-back of each lands in turn)
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
    if WHO == "core0" and idx == 0:
        asc.sync_all()  # <sync-core0>
    if WHO == "core1" and idx == 1:
        asc.sync_all()  # <sync-core1>


def test_sync_all_makes_other_cores_writes_visible():
    g = np.zeros(4, np.int32)
    result = sync_kernel[2](g, "all")
    assert g.tolist() == [7, 42, 43, 7]
    syncs = [i for i in result.trace if i.op == "sync_all"]
    assert [(i.core, i.pipe, i.sync) for i in syncs] == [(c, Pipe.S, Sync(SyncKind.ALL, Pipe.S, Pipe.S)) for c in (0, 1)]


@pytest.mark.parametrize("who, waiting, done", [("core0", 0, 1), ("core1", 1, 0)])
def test_sync_all_on_some_cores_only_is_a_deadlock(who, waiting, done):
    with pytest.raises(asc.KernelError, match=rf"sync_all.*deadlock: aiv\({waiting}\) wait in sync_all but "
                                              rf"aiv\({done}\) finished without calling it") as info:
        sync_kernel[2](np.zeros(4, np.int32), who)
    # the waiting core's own sync_all call is the line that never returns
    assert (info.value.core, info.value.file, info.value.line) == (waiting, __file__, line_of(sync_kernel, f"sync-{who}"))


@asc.jit
def hidden_sync_kernel(g: asc.GlobalAddress, BARRIER: asc.ConstExpr):
    t = gm_view(g, 4)
    idx = asc.get_block_idx()
    asc.printf("core %d starts\\n", idx)
    t.set_value(idx, t.get_value(idx) + 1)
    if idx == 1:
        t.set_value(2, 42)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)  # scalar stores reach GM (data cache)
    BARRIER()  # sync_all, which the kernel's source does not name
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
    if idx == 0:
        t.set_value(3, t.get_value(2))


def test_sync_all_reached_through_a_callable_argument_still_synchronises():
    g = np.zeros(4, np.int32)
    result = hidden_sync_kernel[2](g, asc.sync_all)
    assert g.tolist() == [1, 1, 42, 42]  # each core incremented its counter exactly once
    assert result.trace.ops() == {"get_value": 3, "set_value": 4, "sync_all": 2, "data_cache_clean_and_invalid": 4}


def test_sync_all_reached_through_a_callable_argument_prints_once(capsys):
    hidden_sync_kernel[2](np.zeros(4, np.int32), asc.sync_all)
    assert capsys.readouterr().out == "[aiv(0)] core 0 starts\n[aiv(1)] core 1 starts\n"


def test_sync_all_deadlock_with_three_cores_names_all_finished_cores():
    with pytest.raises(asc.KernelError, match=r"aiv\(0\) wait in sync_all but aiv\(1, 2\) finished"):
        sync_kernel[3](np.zeros(4, np.int32), "core0")
