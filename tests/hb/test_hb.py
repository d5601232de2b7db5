"""Happens-before and the Trace analyses on hand-made traces."""

from fusekit.asc.trace import Access, GmBuffer, Instr, Mem, Pipe, Sync, SyncKind, Trace
from fusekit.hb import core_order
from fusekit.sanitizer import analyze

V, MTE2, MTE3, S = Pipe.V, Pipe.MTE2, Pipe.MTE3, Pipe.S


def ub(start, stop):
    return Access(Mem.UB, "UB", start, stop, "t")


def gm(start, stop, name="y"):
    return Access(Mem.GM, name, start, stop, name)


def instrs(*specs, core=0):
    """specs: (op, pipe, reads, writes, sync) -> Instr list with lines 1, 2, ..."""
    out = []
    for i, (op, pipe, reads, writes, sync) in enumerate(specs):
        out.append(Instr(core, i, op, pipe, tuple(reads), tuple(writes), (), sync, file="k.py", line=i + 1))
    return out


def flag(kind, event="MTE2_V", event_id=0, src=MTE2, dst=V):
    return Sync(kind, src, dst, ("flag", event, event_id))


def trace_of(*cores, gm_bytes=64):
    return Trace("k", "Ascend910B1", len(cores), 196608, {"y": GmBuffer("y", "float16", gm_bytes)}, list(cores))


def test_program_order_orders_the_vector_pipe_but_not_overlapping_transfers():
    order = core_order(instrs(("data_copy", MTE2, [], [ub(0, 32)], None),
                              ("data_copy", MTE2, [], [ub(32, 64)], None),
                              ("add", V, [ub(0, 32)], [ub(64, 96)], None),
                              ("mul", V, [ub(64, 96)], [ub(96, 128)], None),
                              ("pipe_barrier", MTE2, [], [], Sync(SyncKind.BARRIER, MTE2, MTE2, ("PIPE_MTE2",))),
                              ("data_copy", MTE2, [], [ub(0, 32)], None)))
    assert order.before(2, 3)          # the vector pipe sees its own results
    assert not order.before(0, 1)      # transfers of one MTE pipe may overlap...
    assert order.before(0, 5)          # ...until a pipe_barrier of that pipe
    assert not order.before(0, 2)      # MTE2 -> V needs a sync


def test_get_value_returns_before_the_next_instruction_is_issued():
    order = core_order(instrs(("get_value", S, [ub(0, 2)], [], None), ("muls", V, [ub(0, 32)], [ub(0, 32)], None)))
    assert order.before(0, 1)


def test_overlapping_back_to_back_copies_need_a_barrier():
    racy = instrs(("data_copy", MTE2, [gm(0, 64)], [ub(0, 64)], None),
                  ("data_copy", MTE2, [gm(64, 96)], [ub(32, 64)], None))
    (finding,) = [f for f in analyze(trace_of(racy, gm_bytes=96)) if f.tool == "racecheck"]
    assert finding.kind == "WAW" and finding.pipes == ("MTE2", "MTE2") and "PIPE_MTE2" in finding.message


def test_set_wait_orders_earlier_producer_with_later_consumer():
    order = core_order(instrs(("data_copy", MTE2, [], [ub(0, 32)], None),
                              ("set_flag", MTE2, [], [], flag(SyncKind.SET)),
                              ("data_copy", MTE2, [], [ub(32, 64)], None),
                              ("wait_flag", V, [], [], flag(SyncKind.WAIT)),
                              ("add", V, [ub(0, 32)], [ub(64, 96)], None)))
    assert order.before(0, 4)          # the copy before the set is finished when add starts
    assert not order.before(2, 4)      # the copy after the set is not
    assert order.matched == {3: 1}


def test_waits_pair_in_order_and_first_alloc_waits_for_nothing():
    free = lambda kind, pipe: Sync(kind, V, MTE2, ("free", 0, 0))  # noqa: E731
    order = core_order(instrs(("alloc_tensor", MTE2, [], [], free(SyncKind.WAIT, MTE2)),
                              ("free_tensor", V, [], [], free(SyncKind.SET, V)),
                              ("alloc_tensor", MTE2, [], [], free(SyncKind.WAIT, MTE2))))
    assert order.matched == {2: 1}


def test_pipe_all_barrier_orders_everything():
    order = core_order(instrs(("data_copy", MTE2, [], [ub(0, 32)], None),
                              ("pipe_barrier", V, [], [], Sync(SyncKind.BARRIER, V, V, ("PIPE_ALL",))),
                              ("add", V, [ub(0, 32)], [ub(64, 96)], None),
                              ("data_copy", MTE3, [ub(64, 96)], [gm(0, 32)], None)))
    assert order.before(0, 2) and order.before(0, 3)


def test_racecheck_raw_war_waw_and_their_fix():
    racy = instrs(("data_copy", MTE2, [gm(0, 32)], [ub(0, 32)], None),
                  ("add", V, [ub(0, 32)], [ub(0, 32)], None),           # RAW with the copy; WAW too
                  ("data_copy", MTE3, [ub(0, 32)], [gm(0, 32)], None))  # RAW with add; and GM WAR with line 1
    kinds = {(f.kind, f.locations) for f in analyze(trace_of(racy)) if f.tool == "racecheck"}
    assert ("RAW", ("k.py:1", "k.py:2")) in kinds
    assert ("WAW", ("k.py:1", "k.py:2")) in kinds
    assert ("RAW", ("k.py:2", "k.py:3")) in kinds
    assert ("WAR", ("k.py:1", "k.py:3")) in kinds
    fixed = instrs(("data_copy", MTE2, [gm(0, 32)], [ub(0, 32)], None),
                   ("set_flag", MTE2, [], [], flag(SyncKind.SET)),
                   ("wait_flag", V, [], [], flag(SyncKind.WAIT)),
                   ("add", V, [ub(0, 32)], [ub(0, 32)], None),
                   ("set_flag", V, [], [], flag(SyncKind.SET, "V_MTE3", 0, V, MTE3)),
                   ("wait_flag", MTE3, [], [], flag(SyncKind.WAIT, "V_MTE3", 0, V, MTE3)),
                   ("data_copy", MTE3, [ub(0, 32)], [gm(0, 32)], None))
    assert analyze(trace_of(fixed, gm_bytes=32)) == []


def test_cross_core_gm_race_needs_sync_all():
    writer = instrs(("set_value", S, [], [gm(0, 2)], None), core=0)
    reader = instrs(("get_value", S, [gm(0, 2)], [], None), core=1)
    races = [f for f in analyze(trace_of(writer, reader)) if f.tool == "racecheck"]
    assert [(f.kind, f.cores) for f in races] == [("RAW", (0, 1))]
    barrier = Sync(SyncKind.ALL, S, S)
    writer = instrs(("set_value", S, [], [gm(0, 2)], None), ("sync_all", S, [], [], barrier), core=0)
    reader = instrs(("sync_all", S, [], [], barrier), ("get_value", S, [gm(0, 2)], [], None), core=1)
    assert [f for f in analyze(trace_of(writer, reader)) if f.tool == "racecheck"] == []


def test_initcheck_unwritten_ub_and_unwritten_output():
    findings = analyze(trace_of(instrs(("add", V, [ub(0, 32)], [ub(32, 64)], None),
                                       ("data_copy", MTE3, [ub(32, 64)], [gm(0, 32)], None))))
    init = [(f.kind, f.start, f.stop) for f in findings if f.tool == "initcheck"]
    assert ("uninitialized read", 0, 32) in init
    assert ("output never written", 32, 64) in init          # y has 64 bytes, only [0, 32) written


def test_synccheck_kinds():
    findings = analyze(trace_of(instrs(("wait_flag", V, [], [], flag(SyncKind.WAIT)),
                                       ("set_flag", MTE2, [], [], flag(SyncKind.SET, event_id=6)),
                                       ("set_flag", MTE2, [], [], flag(SyncKind.SET, event_id=6)))))
    kinds = sorted(f.kind for f in findings if f.tool == "synccheck")
    assert kinds == ["deadlock", "redundant set_flag", "reserved event id", "reserved event id",
                     "set_flag never waited", "set_flag never waited"]
    deadlock = next(f for f in findings if f.kind == "deadlock")
    assert deadlock.pipes == ("MTE2", "V") and "PIPE_V waits" in deadlock.message


def test_overlapping_block_writes_between_cores():
    a = instrs(("data_copy_pad", MTE3, [ub(0, 52)], [gm(0, 52)], None), core=0)
    b = instrs(("data_copy_pad", MTE3, [ub(0, 52)], [gm(52, 104)], None), core=1)
    findings = [f for f in analyze(trace_of(a, b, gm_bytes=104)) if f.kind == "overlapping block write"]
    assert len(findings) == 1 and findings[0].cores == (0, 1) and (findings[0].start, findings[0].stop) == (32, 64)


def test_repeats_are_merged_with_a_count():
    body = [("data_copy", MTE2, [gm(0, 32)], [ub(0, 32)], None), ("add", V, [ub(0, 32)], [ub(32, 64)], None)] * 3
    races = [f for f in analyze(trace_of(instrs(*body))) if f.kind == "RAW"]
    assert sum(f.count for f in races) >= 3 and len({f.key for f in races}) == len(races)
