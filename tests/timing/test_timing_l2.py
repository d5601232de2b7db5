"""L2 cache, cache hints, same-window contention and the head overhead of the timing model (issue 10).

Expected values are computed here from the SoC params file by the rules the schedule documents
(``fusekit.timing.schedule.l2_miss_share``, ``_Transfers``), on hand-written Traces, not from
fusekit's output. The published figures they stand for are in ``fusekit.timing.studies``.
"""

import json
from importlib import resources

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Instr, Mem, Pipe, Trace
from fusekit.timing import NO_VALUES, load, schedule
from fusekit.timing.schedule import l2_miss_share, window_sharers

SOC = "Ascend910B1"
RAW = {k: v["value"] for k, v in json.loads(
    resources.files("fusekit.timing").joinpath("socs", f"{SOC}.json").read_text(encoding="utf-8")).items()}
EXACT = 1e-6
DISABLE = "CACHE_MODE_DISABLE/RW"


def cyc(n):
    return n / (RAW["clock_ghz"] * 1e3)


ISSUE = cyc(RAW["scalar_cycles_per_call"])


def copy(seq, nbytes, start=0, write=False, hint="", core=0, buffer="x"):
    gm = Access(Mem.GM, buffer, start, start + nbytes, buffer, l2=hint)
    ub = Access(Mem.UB, "UB", 0, nbytes, "t")
    reads, writes = ((ub,), (gm,)) if write else ((gm,), (ub,))
    return Instr(core, seq, "data_copy", Pipe.MTE3 if write else Pipe.MTE2, reads=reads, writes=writes,
                 count=nbytes // 2, nbytes=nbytes, dtype="float16")


def rows_copy(core, rows, row_bytes):
    """GM -> UB of ``rows`` contiguous bursts of ``row_bytes`` each, L2 disabled (DataCopyParams' block form)."""
    reads = tuple(Access(Mem.GM, "x", r * row_bytes, (r + 1) * row_bytes, "x", l2=DISABLE) for r in range(rows))
    nbytes = rows * row_bytes
    return Instr(core, 0, "data_copy", Pipe.MTE2, reads=reads, writes=(Access(Mem.UB, "UB", 0, nbytes, "t"),),
                 count=nbytes // 2, nbytes=nbytes, dtype="float16")


def request_factor(nbytes):
    payload = nbytes / RAW["mte_engine_gbps"]
    return payload / (payload + RAW["mte_request_ns"] + RAW["mte_burst_ns"])


def hbm_us(nbytes, sharers=1, bypass=False):
    small = RAW["bypass_small_efficiency" if bypass else "small_transfer_efficiency"]
    eff = small + (RAW["gm_peak_efficiency"] - small) * min(1.0, nbytes / RAW["full_efficiency_bytes"])
    return nbytes / min(RAW["mte_engine_gbps"] * 1e3 * request_factor(nbytes),
                        RAW["gm_bandwidth_gbps"] * 1e3 * eff / sharers)


def l2_us(nbytes, sharers=1):
    return nbytes / min(RAW["mte_l2_gbps"] * 1e3 * request_factor(nbytes), RAW["l2_bandwidth_gbps"] * 1e3 / sharers)


LATENCY = RAW["mte_latency_ns"] / 1e3


def run(*cores):
    return schedule(Trace("hand", SOC, len(cores), 192 * 1024, cores=[list(c) for c in cores]), load(SOC))


# --- the documented figures behind the parameters ------------------------------------------------
def test_the_l2_figures_are_the_documented_ones():
    # AD data_copy README: A2/A3 L2Cache 192MB, peak about 5.2 TB/s, GM about 1.8 TB/s; its scenario 5 counters
    # (r0 + r1 read_cache_miss_allocate = 9437187 for 1207959552 B read) give one allocation per 128 B
    assert RAW["l2_bytes"] == 192 * 2**20 and RAW["l2_bandwidth_gbps"] == 5200 and RAW["gm_bandwidth_gbps"] == 1800
    assert 1207959552 / (4718595 + 4718592) == pytest.approx(RAW["l2_line_bytes"], rel=1e-5)


def test_every_parameter_has_a_source_and_fitted_ones_say_to_what():
    data = json.loads(resources.files("fusekit.timing").joinpath("socs", f"{SOC}.json").read_text(encoding="utf-8"))
    for name, entry in data.items():
        assert entry["source"] and "placeholder" not in entry["source"], name
        if entry["source"].startswith("calibrated"):
            assert "README" in entry["source"], name  # names the published figure it was fitted to


# --- set_l2_cache_hint ------------------------------------------------------------------------------
@asc.jit
def hinted_copy(x: asc.GlobalAddress, MODE: asc.ConstExpr[int], RW: asc.ConstExpr[int]):
    gm = asc.GlobalTensor()
    gm.set_global_buffer(x, 1024)
    ub = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 512)
    asc.data_copy(ub, gm, 512)  # before the hint: default
    gm.set_l2_cache_hint(MODE, RW)  # plain ints: the enums are IntEnums
    asc.data_copy(ub, gm[512:], 512)  # a sub-tensor keeps its parent's hint
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_set_l2_cache_hint_is_recorded_on_each_later_gm_access():
    trace = asc.launch(hinted_copy, 1, (np.zeros(1024, np.float16), 1, 1), executor=NO_VALUES).trace
    hints = [i.reads[0].l2 for i in trace.cores[0] if i.op == "data_copy"]
    assert hints == ["", "CACHE_MODE_DISABLE/READ"]
    normal = asc.launch(hinted_copy, 1, (np.zeros(1024, np.float16), 0, 3), executor=NO_VALUES).trace
    assert [i.reads[0].l2 for i in normal.cores[0] if i.op == "data_copy"] == ["", ""]
    # the pyasc enum values (python/asc/language/core/enums.py)
    assert [m.value for m in asc.CacheMode] == [0, 1, 2, 4] and [m.value for m in asc.CacheRwMode] == [1, 2, 3]


def test_a_bad_cache_mode_names_the_call():
    with pytest.raises(asc.KernelError, match="set_l2_cache_hint.*CacheMode"):
        asc.launch(hinted_copy, 1, (np.zeros(1024, np.float16), 3, 3), executor=NO_VALUES)


# --- L2 hit rate from reuse distance ------------------------------------------------------------
def test_a_reread_within_capacity_hits_and_a_first_touch_misses():
    instrs = [copy(0, 65536), copy(1, 65536)]
    assert l2_miss_share(instrs, load(SOC), cores=1) == {0: 1.0, 1: 0.0}


def test_a_reread_whose_chip_wide_reuse_distance_exceeds_l2_misses():
    # 48 cores each re-reading their 8 MiB: 384 MiB allocated in between > 192 MiB (DataCopy scenario 5's situation)
    mib8 = 8 * 2**20
    instrs = [copy(0, mib8), copy(1, mib8)]
    assert l2_miss_share(instrs, load(SOC), cores=48) == {0: 1.0, 1: 1.0}
    assert l2_miss_share(instrs, load(SOC), cores=16)[1] == 0.0  # 128 MiB in between: fits


def test_a_partial_overlap_hits_on_its_overlapping_lines_only():
    line = RAW["l2_line_bytes"]
    instrs = [copy(0, 64 * line), copy(1, 64 * line, start=48 * line)]
    assert l2_miss_share(instrs, load(SOC), cores=1)[1] == pytest.approx(48 / 64)


def test_cache_mode_disable_bypasses_and_allocates_nothing():
    instrs = [copy(0, 65536, hint=DISABLE), copy(1, 65536), copy(2, 65536, hint="CACHE_MODE_DISABLE/WRITE")]
    # the bypassing read leaves nothing behind; a WRITE-only hint does not apply to reads: line 2 hits line 1's
    assert l2_miss_share(instrs, load(SOC), cores=1) == {0: 1.0, 1: 1.0, 2: 0.0}


def test_writes_stay_in_l2_unless_the_launch_overflows_it():
    small = [copy(0, 65536), copy(1, 65536, start=65536, write=True)]
    assert l2_miss_share(small, load(SOC), cores=48)[1] == 0.0
    big = [copy(0, 4 * 2**20), copy(1, 4 * 2**20, start=4 * 2**20, write=True)]  # 8 MiB x 48 = 2 x 192 MiB
    assert l2_miss_share(big, load(SOC), cores=48)[1] == 1.0
    assert l2_miss_share(big, load(SOC), cores=36)[1] == pytest.approx(8 * 36 / 192 - 1)  # 1.5 x: half written back


def test_a_hit_runs_at_the_l2_rate():
    sched = run([copy(0, 65536), copy(1, 65536)])
    core = sched.cores[0]
    first_free = ISSUE + hbm_us(65536)
    assert core.free[0] == pytest.approx(first_free, abs=EXACT)
    assert core.end[1] == pytest.approx(max(2 * ISSUE, first_free) + l2_us(65536) + LATENCY, abs=EXACT)


def test_small_bursts_that_bypass_l2_use_hbm_at_their_own_efficiency():
    # DataCopy scenario 8's situation: 48 cores, distinct 2 KiB reads with CACHE_MODE_DISABLE, HBM-bound
    cores = [[copy(0, 2048, start=c * 2048, hint=DISABLE, core=c)] for c in range(48)]
    assert run(*cores).makespan_us == pytest.approx(ISSUE + hbm_us(2048, sharers=48, bypass=True) + LATENCY, abs=EXACT)
    assert hbm_us(2048, sharers=48, bypass=True) > hbm_us(2048, sharers=48)


# --- same-window contention -------------------------------------------------------------------------
def test_cores_reading_the_same_window_at_once_share_its_rate():
    # DataCopy scenario 7's situation: 48 cores, one window; the window's share binds before the engine or HBM
    # (its 128 rows of 128 B: the window serves accesses, counted in gm_window_burst_bytes bursts)
    cores = [[rows_copy(c, 128, 128)] for c in range(48)]
    assert window_sharers(cores, load(SOC))[0] == 48
    window = RAW["gm_window_gbps"] * 1e3 / 48
    assert window < 16384 / hbm_us(16384, sharers=48)
    assert run(*cores).makespan_us == pytest.approx(ISSUE + 16384 / window + LATENCY, abs=EXACT)


def test_cores_reading_different_windows_do_not_contend():
    cores = [[copy(0, 16384, start=c * 16384, hint=DISABLE, core=c)] for c in range(48)]
    assert window_sharers(cores, load(SOC)) is None
    assert run(*cores).makespan_us == pytest.approx(ISSUE + hbm_us(16384, sharers=48) + LATENCY, abs=EXACT)


# --- head overhead -----------------------------------------------------------------------------------
def test_the_head_overhead_grows_with_the_core_count_through_the_published_gaps():
    params = load(SOC)
    # add study case 1: Task Duration - aiv_time = 6909.6 - 6909.14 us on one core
    assert params.launch_us(1) == pytest.approx(6909.6 - 6909.14, abs=0.01)
    # 48 cores: between the smallest and largest published Task Duration - aiv_time (2.53, 12.98 us) plus the
    # cores' own head and tail (aiv_time - aiv_mte2_time of DataCopy 1-3: 6.1-6.4 us)
    assert 2.53 + 6.1 < params.launch_us(48) < 12.98 + 6.4
    assert run([copy(0, 4096)]).overhead_us == pytest.approx(params.launch_us(1))
