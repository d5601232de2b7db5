"""Small schedules computed by hand from the SoC params file (item L of issue 8).

Each expected time is computed here from the numbers in ``fusekit/timing/socs/Ascend910B1.json``
by the formula the schedule documents (``fusekit.timing.schedule`` module docstring), not from
fusekit's output, and asserted to well under a nanosecond. Traces are written by hand so that
nothing but the schedule decides the times. The rules pinned: one GM copy = issue + latency +
bytes / rate; a GM address off 512 B slows the copy (AD-G GM地址尽量512B对齐.md); a wait ends
no earlier than its set; sync_all waits for every core; a scalar access holds the issue; a vector
instruction costs start-up + ceil(repeats x lanes / documented elements per cycle).
"""

import json
import math
from importlib import resources

import pytest

from fusekit.asc.trace import Access, Instr, Mem, Pipe, Sync, SyncKind, Trace
from fusekit.timing import load, schedule

SOC = "Ascend910B1"
RAW = {k: v["value"] for k, v in json.loads(
    resources.files("fusekit.timing").joinpath("socs", f"{SOC}.json").read_text(encoding="utf-8")).items()}
THROUGHPUT = json.loads(resources.files("fusekit.timing").joinpath(
    "socs", RAW["vector_throughput_table"]).read_text(encoding="utf-8"))["elements_per_cycle"]
NS = 1e-3  # one nanosecond in microseconds
EXACT = 1e-6  # float round-off only: far below a nanosecond


def cyc(n):
    """Microseconds of n core cycles."""
    return n / (RAW["clock_ghz"] * 1e3)


ISSUE, SYNC = cyc(RAW["scalar_cycles_per_call"]), cyc(RAW["sync_cycles"])


def copy_us(nbytes, gm_offset=0, sharers=1, bursts=1, l2=False):
    """latency + bytes / rate; from HBM (a read miss, ``l2=False``): rate = min(engine x align factor x request
    factor, GM bandwidth x efficiency / sharers); request factor = payload / (payload + request + bursts x
    burst cost), payload = bytes / engine rate (the engine's fixed costs per request and burst, folded into its
    rate); efficiency = small + (peak - small) x min(1, bytes / full). Through L2 (a write that stays in L2,
    ``l2=True``): rate = min(L2 engine x align factor x request factor, L2 bandwidth / sharers)."""
    lead = gm_offset % RAW["gm_align_bytes"]  # a burst that touches one more 512 B segment than it needs
    misaligned = lead and lead + nbytes > math.ceil(nbytes / RAW["gm_align_bytes"]) * RAW["gm_align_bytes"]
    factor = RAW["misaligned_efficiency"] if misaligned else 1.0
    ramp = min(1.0, nbytes / RAW["full_efficiency_bytes"])
    small, peak = RAW["small_transfer_efficiency"], RAW["gm_peak_efficiency"]
    eff = (small + (peak - small) * ramp) * factor
    payload_ns = nbytes / RAW["mte_engine_gbps"]
    request = payload_ns / (payload_ns + RAW["mte_request_ns"] + bursts * RAW["mte_burst_ns"])
    if l2:
        rate = min(RAW["mte_l2_gbps"] * 1e3 * factor * request, RAW["l2_bandwidth_gbps"] * 1e3 / sharers)
    else:
        rate = min(RAW["mte_engine_gbps"] * 1e3 * factor * request, RAW["gm_bandwidth_gbps"] * 1e3 * eff / sharers)
    return RAW["mte_latency_ns"] / 1e3 + nbytes / rate


def gm_copy(seq, nbytes, gm_offset=0, core=0, pipe=Pipe.MTE2):
    gm = Access(Mem.GM, "x", gm_offset, gm_offset + nbytes, "x")
    ub = Access(Mem.UB, "UB", 0, nbytes, "t")
    reads, writes = ((gm,), (ub,)) if pipe is Pipe.MTE2 else ((ub,), (gm,))
    return Instr(core, seq, "data_copy", pipe, reads=reads, writes=writes, count=nbytes // 4, nbytes=nbytes,
                 dtype="float32")


def flag(seq, kind, src, dst, core=0):
    pipe = src if kind is SyncKind.SET else dst
    op = "set_flag" if kind is SyncKind.SET else "wait_flag"
    return Instr(core, seq, op, pipe, sync=Sync(kind, src, dst, ("flag", f"{src.value}_{dst.value}", 0)))


def vadd(seq, count, dtype="float16", core=0, base=0):
    size = 2 if dtype == "float16" else 4
    n = count * size
    srcs = (Access(Mem.UB, "UB", base, base + n, "a"), Access(Mem.UB, "UB", base + 0x10100, base + 0x10100 + n, "b"))
    return Instr(core, seq, "add", Pipe.V, reads=srcs, writes=(Access(Mem.UB, "UB", base + 0x20000, base + 0x20000 + n,
                                                                         "c"),),
                 count=count, nbytes=n, dtype=dtype, repeats=math.ceil(n / 256), cost="Add")


def scalar(seq, mem=Mem.UB, core=0):
    return Instr(core, seq, "get_value", Pipe.S, reads=(Access(mem, "UB" if mem is Mem.UB else "x", 0, 4, "t"),),
                 count=1, nbytes=4, dtype="float32")


def sync_all(seq, core):
    return Instr(core, seq, "sync_all", Pipe.S, sync=Sync(SyncKind.ALL, Pipe.S, Pipe.S))


def run(*cores):
    trace = Trace("hand", SOC, len(cores), 192 * 1024, cores=[list(c) for c in cores])
    return schedule(trace, load(SOC))


def test_one_copy_is_issue_plus_latency_plus_bytes_over_rate():
    sched = run([gm_copy(0, 65536)])
    assert sched.makespan_us == pytest.approx(ISSUE + copy_us(65536), abs=EXACT)
    head = RAW["launch_overhead_us"] + RAW["launch_per_core_us"]  # one core
    assert sched.time_us == pytest.approx(head + ISSUE + copy_us(65536), abs=EXACT)


def test_a_copy_off_512_bytes_is_slower_by_the_documented_factor():
    aligned, misaligned = run([gm_copy(0, 65536)]), run([gm_copy(0, 65536, gm_offset=32)])
    assert misaligned.makespan_us == pytest.approx(ISSUE + copy_us(65536, gm_offset=32), abs=EXACT)
    # the penalty is visible: more than a nanosecond per KiB
    assert misaligned.makespan_us - aligned.makespan_us > 64 * NS


def test_two_pipes_joined_by_a_flag_pair():
    # MTE2 copy; set MTE2->V on MTE2; wait on V; Add on V
    sched = run([gm_copy(0, 16384), flag(1, SyncKind.SET, Pipe.MTE2, Pipe.V), flag(2, SyncKind.WAIT, Pipe.MTE2, Pipe.V),
                 vadd(3, 2048)])
    copy_end = ISSUE + copy_us(16384)
    set_end = max(2 * ISSUE, copy_end) + SYNC
    wait_end = max(3 * ISSUE, set_end) + SYNC
    beats = math.ceil(2048 * 2 / 256 * 128 / THROUGHPUT["Add"]["half"])
    add_end = max(4 * ISSUE, wait_end) + cyc(RAW["vector_startup_cycles"] + beats)
    core = sched.cores[0]
    assert core.end[1] == pytest.approx(set_end, abs=EXACT)
    assert core.end[2] == pytest.approx(wait_end, abs=EXACT)
    assert core.end[3] == pytest.approx(add_end, abs=EXACT)


def test_a_wait_waits_for_its_set_even_on_an_idle_pipe():
    # MTE3 has nothing to do but wait: its copy starts only after the wait, which ends after the set
    sched = run([gm_copy(0, 32768), flag(1, SyncKind.SET, Pipe.MTE2, Pipe.MTE3),
                 flag(2, SyncKind.WAIT, Pipe.MTE2, Pipe.MTE3), gm_copy(3, 4096, pipe=Pipe.MTE3)])
    core = sched.cores[0]
    set_end = max(2 * ISSUE, ISSUE + copy_us(32768)) + SYNC
    assert core.start[2] == pytest.approx(set_end, abs=EXACT)
    assert core.start[3] == pytest.approx(set_end + SYNC, abs=EXACT)
    # the 4 KiB written stay in L2 (the launch allocates far less than l2_bytes): the write runs at L2 rates
    assert core.end[3] == pytest.approx(set_end + SYNC + copy_us(4096, l2=True), abs=EXACT)


def test_sync_all_waits_for_the_slowest_core():
    slow = [gm_copy(0, 65536), sync_all(1, 0), vadd(2, 128)]
    fast = [sync_all(0, 1), vadd(1, 128, core=1)]
    sched = run(slow, fast)
    arrive_slow = max(2 * ISSUE, ISSUE + copy_us(65536))  # sync_all waits for the core's earlier copy
    arrive_fast = ISSUE
    release = max(arrive_slow, arrive_fast) + SYNC
    add = cyc(RAW["vector_startup_cycles"] + 1)
    for core in sched.cores:  # the scalar unit stalls on sync_all, so the Add is issued after the release
        assert core.end[-2] == pytest.approx(release, abs=EXACT)
        assert core.end[-1] == pytest.approx(release + ISSUE + add, abs=EXACT)


def test_a_scalar_loop_holds_the_issue():
    loop = [scalar(i, Mem.UB if i % 2 else Mem.GM) for i in range(6)]
    sched = run(loop)
    t = 0.0
    for i in range(6):
        t += ISSUE + cyc(RAW["scalar_ub_access_cycles"] if i % 2 else RAW["scalar_gm_access_cycles"])
        assert sched.cores[0].end[i] == pytest.approx(t, abs=EXACT)


@pytest.mark.parametrize("count, dtype, name", [(128, "float16", "Add"), (129, "float16", "Add"),
                                                (65, "float32", "Add"), (200, "float16", "Exp")])
def test_vector_cost_rounds_beats_up(count, dtype, name):
    instr = vadd(0, count, dtype)
    instr.cost, instr.op = name, name.lower()
    size = 2 if dtype == "float16" else 4
    repeats = math.ceil(count * size / 256)
    cpp = "half" if dtype == "float16" else "float"
    beats = math.ceil(repeats * (256 // size) / THROUGHPUT[name][cpp])
    sched = run([instr])
    assert sched.makespan_us == pytest.approx(ISSUE + cyc(RAW["vector_startup_cycles"] + beats), abs=EXACT)


def test_exp_costs_its_documented_four_times_add():
    add, exp = vadd(0, 4096), vadd(0, 4096)
    exp.cost, exp.op = "Exp", "exp"
    t_add, t_exp = run([add]).makespan_us, run([exp]).makespan_us
    repeats = 4096 * 2 // 256
    assert t_exp - t_add == pytest.approx(cyc(repeats * 128 / THROUGHPUT["Exp"]["half"] - repeats), abs=EXACT)


def test_the_scalar_pipe_has_slices_matching_its_busy_time(tmp_path):
    """Issue 8 K: PIPE_S had a busy ratio but no slices; its slices are the issue slots and scalar accesses."""
    from fusekit.timing import predict

    loop = [scalar(0), gm_copy(1, 4096), scalar(2, Mem.GM)]
    prof = predict([Trace("hand", SOC, 1, 192 * 1024, cores=[loop])], SOC)
    events = [e for e in prof.chrome_trace()["traceEvents"] if e["ph"] == "X" and e["tid"] == 0]
    assert len(events) == 3 + 2  # three issue slots, two scalar accesses
    busy = sum(e["dur"] for e in events)
    expected = 3 * ISSUE + cyc(RAW["scalar_ub_access_cycles"]) + cyc(RAW["scalar_gm_access_cycles"])
    assert busy == pytest.approx(expected, abs=5e-4)  # slices are rounded to 0.1 ns
    assert prof.utilization()[0]["aiv_scalar_time(us)"] == pytest.approx(expected, abs=1e-4)
    track = sorted((e["ts"], e["ts"] + e["dur"]) for e in events)
    assert all(a_end <= b_start + 1e-9 for (_, a_end), (b_start, _) in zip(track, track[1:]))
    prof.plot(tmp_path / "p.png")


def test_misaligned_copies_of_many_cores_share_less_bandwidth():
    # 48 cores copy 64 KiB at a 32 B offset at once: each gets 1/48 of the GM bandwidth, scaled by the penalty
    # (each core its own range: cores reading the same window would also contend for it, tests/test_timing_l2.py)
    cores = [[gm_copy(0, 65536, gm_offset=32 + c * 65536, core=c)] for c in range(48)]
    sched = run(*cores)
    assert sched.makespan_us == pytest.approx(ISSUE + copy_us(65536, gm_offset=32, sharers=48), abs=EXACT)
    assert sched.makespan_us > ISSUE + copy_us(65536, sharers=48) + 100 * NS


def uadd(seq, repeats, src0, src1, dst, nbytes=None):
    """A float Add of ``repeats`` full repeats on hand-placed UB operands (the bank_conflict_ub layouts)."""
    n = nbytes if nbytes is not None else repeats * 256
    acc = [Access(Mem.UB, "UB", a, a + n, name) for a, name in ((src0, "x"), (src1, "y"), (dst, "z"))]
    return Instr(0, seq, "add", Pipe.V, reads=tuple(acc[:2]), writes=(acc[2],), count=n // 4, nbytes=n,
                 dtype="float32", repeats=repeats if nbytes is None else 0, cost="Add")


@pytest.mark.parametrize("repeats", [1, 2, 4, 64])
def test_bank_conflicts_cost_the_fitted_cycles_per_repeat_rounded_up(repeats):
    # bank_conflict_ub README, UB address = {bank[17:16], row, bank group[8:5], offset[4:0]}
    start = cyc(RAW["vector_startup_cycles"])
    free = run([uadd(0, repeats, 0x0, 0x10100, 0x20000)]).makespan_us  # scenario 1: no conflict
    assert free == pytest.approx(ISSUE + start + cyc(repeats), abs=EXACT)
    rr = run([uadd(0, repeats, 0x0, 0x4000, 0x10000)]).makespan_us  # scenario 2: both sources in bank groups 0-7
    assert rr == pytest.approx(ISSUE + start + cyc(math.ceil(repeats * (1 + RAW["ub_read_read_conflict_cycles"]))),
                               abs=EXACT)
    # scenario 5: the write of repeat r - 1 (bank 0, groups 1-8) meets the read of repeat r in bank 0
    rw = run([uadd(0, repeats, 0x0, 0x10100, 0x4020)]).makespan_us
    extra = (repeats - 1) * RAW["ub_read_write_conflict_cycles"]
    assert rw == pytest.approx(ISSUE + start + cyc(math.ceil(repeats + extra - 1e-9)), abs=EXACT)


def test_a_record_without_repeats_counts_whole_256_byte_repeats():
    sched = run([uadd(0, 0, 0x0, 0x10100, 0x20000, nbytes=257 + 3)])  # 260 B: two repeats
    assert sched.makespan_us == pytest.approx(ISSUE + cyc(RAW["vector_startup_cycles"] + 2), abs=EXACT)


def test_a_short_burst_inside_one_512_byte_segment_is_not_penalised():
    # 128 B at offset 128 stays inside [0, 512): full speed; 128 B at offset 448 crosses into the next segment
    assert run([gm_copy(0, 128, gm_offset=128)]).makespan_us == pytest.approx(ISSUE + copy_us(128), abs=EXACT)
    crossing = run([gm_copy(0, 128, gm_offset=448)]).makespan_us
    assert crossing == pytest.approx(ISSUE + copy_us(128, gm_offset=448), abs=EXACT)
    assert crossing > ISSUE + copy_us(128) + NS
