"""cross_core_set_flag / cross_core_wait_flag between AIV cores (CrossCoreSetFlag(ISASI).md, mode 0)."""


import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Pipe, SyncKind
from fusekit.hb import core_order
from fusekit.sanitizer import analyze
from support import gm_view

THIS_FILE = __file__


LINE = 16  # int32 per 64 B data-cache line: one slot per line, so write-backs never share a line


@asc.jit
def handoff(g: asc.GlobalAddress):
    """Each core writes its slot, all set flag 3, then core i reads core (i+1)'s slot into slot n + i.
    Scalar GM stores go through the data cache: flushed before the set, invalidated before the read."""
    n = asc.get_block_num()
    idx = asc.get_block_idx()
    t = gm_view(g, 2 * n * LINE)
    mine = gm_view(g + idx * LINE, LINE)
    mine.set_value(0, idx * 10 + 1)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, mine)
    asc.cross_core_set_flag(3, 0, asc.PipeID.PIPE_MTE3)
    asc.cross_core_wait_flag(3, 0, asc.PipeID.PIPE_MTE3)
    other = gm_view(g + ((idx + 1) % n) * LINE, LINE)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, other)
    out = gm_view(g + (n + idx) * LINE, LINE)
    out.set_value(0, other.get_value(0))
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, out)


def test_wait_sees_every_cores_write_before_the_set():
    # core 0 runs first; without the wait it would read core 1's slot before core 1 wrote it
    g = np.zeros(8 * LINE, np.int32)
    result = handoff[4](g)
    assert g[:4 * LINE:LINE].tolist() == [1, 11, 21, 31]
    assert g[4 * LINE::LINE].tolist() == [11, 21, 31, 1]
    ops = [i.op for i in result.trace.cores[0]]
    assert "cross_core_set_flag" in ops and "cross_core_wait_flag" in ops


def test_trace_records_set_on_its_pipe_and_wait_blocking_issue():
    g = np.zeros(4 * LINE, np.int32)
    trace = handoff[2](g).trace
    instrs = trace.cores[1]
    s = next(i for i in instrs if i.op == "cross_core_set_flag")
    w = next(i for i in instrs if i.op == "cross_core_wait_flag")
    assert (s.pipe, s.sync.kind, s.sync.event) == (Pipe.MTE3, SyncKind.SET, ("cross_core", 3))
    assert (w.pipe, w.sync.kind, w.sync.event) == (Pipe.S, SyncKind.WAIT, ("cross_core", 3))
    order = core_order(instrs)
    k = instrs.index(w)
    assert order.epoch[k] == 0 and order.epoch[k + 1] == 1  # later accesses are ordered after the other cores'


def test_sanitizer_sees_no_race_across_the_flag():
    g = np.zeros(4 * LINE, np.int32)
    findings = analyze(handoff[2](g).trace)
    assert not [f for f in findings if f.tool == "racecheck"], findings


@asc.jit
def no_sync(g: asc.GlobalAddress):
    n = asc.get_block_num()
    idx = asc.get_block_idx()
    mine = gm_view(g + idx * LINE, LINE)
    mine.set_value(0, idx + 1)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, mine)
    other = gm_view(g + ((idx + 1) % n) * LINE, LINE)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, other)
    out = gm_view(g + (n + idx) * LINE, LINE)
    out.set_value(0, other.get_value(0))
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, out)


def test_without_the_flag_the_sanitizer_reports_the_cross_core_race():
    g = np.zeros(4 * LINE, np.int32)
    findings = analyze(no_sync[2](g).trace)
    assert [f for f in findings if f.tool == "racecheck" and set(f.cores) == {0, 1}], findings


@asc.jit
def repeated(g: asc.GlobalAddress, rounds: int):
    n = asc.get_block_num()
    idx = asc.get_block_idx()
    for r in range(rounds):  # double buffered: round r reads half r % 2 and writes the other half
        mine = gm_view(g + (((r + 1) % 2) * n + idx) * LINE, LINE)
        old = gm_view(g + ((r % 2) * n + idx) * LINE, LINE)
        other = gm_view(g + ((r % 2) * n + (idx + 1) % n) * LINE, LINE)
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, other)
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, old)
        mine.set_value(0, old.get_value(0) + other.get_value(0) + 1)
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, mine)
        asc.cross_core_set_flag(0, 0, asc.PipeID.PIPE_V)
        asc.cross_core_wait_flag(0, 0, asc.PipeID.PIPE_V)


def test_the_kth_wait_takes_the_kth_round_of_sets():
    # model: every round reads the previous round's values of all cores (the flag ends each round)
    n, rounds = 3, 4
    prev = [0] * n
    for _ in range(rounds):
        prev = [prev[i] + prev[(i + 1) % n] + 1 for i in range(n)]
    g = np.zeros(2 * n * LINE, np.int32)
    repeated[n](g, rounds)
    assert g[(rounds % 2) * n * LINE:][:n * LINE:LINE].tolist() == prev
    findings = analyze(repeated[n](np.zeros(2 * n * LINE, np.int32), rounds).trace)
    assert not [f for f in findings if f.tool == "racecheck"], findings


@asc.jit
def waits_alone(g: asc.GlobalAddress):
    if asc.get_block_idx() == 0:
        asc.cross_core_set_flag(5, 0, asc.PipeID.PIPE_MTE3)
    asc.cross_core_wait_flag(5, 0, asc.PipeID.PIPE_MTE3)  # <deadlock>


def test_a_wait_no_core_releases_is_a_deadlock_at_the_wait():
    with pytest.raises(asc.KernelError, match="deadlock") as info:
        waits_alone[2](np.zeros(1, np.int32))
    assert info.value.kind == "deadlock" and info.value.file == THIS_FILE
    line = next(k for k, text in enumerate(open(THIS_FILE).read().splitlines(), 1) if "# <deadlock>" in text)
    assert info.value.line == line


@pytest.mark.parametrize("args, match", [((16, 0, asc.PipeID.PIPE_V), "flag ids are 0..15"),
                                         ((0, 4, asc.PipeID.PIPE_V), "mode 4 is Ascend 950's"),
                                         ((0, 2, asc.PipeID.PIPE_V), "launch a mix kernel"),
                                         ((0, 0, asc.PipeID.PIPE_S), "PIPE_S and PIPE_ALL"),
                                         ((0, 0, asc.PipeID.PIPE_ALL), "PIPE_S and PIPE_ALL")])
def test_refused_arguments_cite_the_page(args, match):
    @asc.jit
    def k():
        asc.cross_core_set_flag(*args)

    with pytest.raises(asc.KernelError, match=match):
        k[1]()
