"""Fit the timing model's calibrated parameters for the Atlas A2 SoCs and write them to their data files.

Targets (see ``fusekit.timing``'s docstring):
  A. Add z = x + y, 8192 x 8192 float16, 1 core, 8 KB copies, BUFFER_NUM 2: 6909.6 us, aiv_mte2_ratio 0.873
     (AD add_high_performance README);
  B. the same on 48 cores: 306.58 us (same README);
  C. FusedAddScale vs the unfused Add + Muls pair at 256K float16, default settings: 1.8x (seed
     article, section 1.1; 3p).
  D. bank_conflict_ub (AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/
     README.md): 1000 float Adds of 64 repeats take 2390 (scenario 1, no conflict), 4167 (scenario 2,
     read-read) and 3751 (scenario 5, read-write) system cycles at 50 MHz.
  E. DataCopy study (AD .../04_memory_access/data_copy/README.md) aiv_mte2_time of scenarios 1 and 2.
E with A's MTE2 time (ratio x time) fixes mte_engine_gbps, mte_request_ns and mte_burst_ns in closed
form (fit_engine); A's total then fixes mte_latency_ns, C launch_overhead_us and B
small_transfer_efficiency (bisection / fixed point on the model, three rounds); A's ratio is predicted. D fixes vector_startup_cycles, ub_read_read_conflict_cycles and
ub_read_write_conflict_cycles in closed form (the Adds run back to back on PIPE_V: each costs
start-up + 64 repeats + the conflict cycles; repeat 0 has no earlier write to conflict with).
The other scenarios of D and the DataCopy study are predicted only (``fusekit validate-timing``).

    python benchmarks/calibrate_timing.py [--write]
"""

import argparse
import dataclasses
import json
from pathlib import Path

from fusekit.timing import load, schedule, workloads
from fusekit.timing.params import TimingParams

N_ADD = 8192 * 8192
TILE = 4096  # 8 KB of float16
TARGET_A_US, TARGET_A_RATIO, TARGET_B_US, TARGET_C_RATIO = 6909.6, 0.873, 306.58, 1.8
SOCS = ("Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4")
DATA = Path(__file__).resolve().parents[1] / "src" / "fusekit" / "timing" / "socs"


def time_of(traces, params: TimingParams) -> float:
    return sum(schedule(trace, params).time_us for trace in traces)


def mte2_ratio(trace, params: TimingParams) -> float:
    sched = schedule(trace, params)
    core = sched.cores[0]
    busy = sum(b for pipe, b in zip(core.pipes, core.busy) if pipe == 2)
    return busy / core.finish_us


# MTE2 times of the DataCopy study (AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/
# README.md, aiv_mte2_time, 48 cores): scenario 1 = 49152 single-burst 128 B copies per core, scenario 2 = 768 copies
# of 64 bursts of 128 B per core
COPY1_MTE2_US, COPY1_COPIES, COPY2_MTE2_US, COPY2_COPIES = 548.161, 49152, 220.772, 768


def fit_engine() -> dict[str, float]:
    """E: the engine's cost per request, per burst and per byte, in closed form (ns).

    Per copy, the engine works request + bursts x burst + bytes / rate and the copies follow back to
    back (pipelined, engine-bound): scenario 1 gives request + burst + 128 B / rate, scenario 2
    request + 64 bursts + 8 KB / rate, and the single-core add row (MTE2 busy = ratio x time over
    32768 single-burst 8 KB copies) request + burst + 8 KB / rate.
    """
    one = COPY1_MTE2_US * 1e3 / COPY1_COPIES
    many = COPY2_MTE2_US * 1e3 / COPY2_COPIES
    add = TARGET_A_US * TARGET_A_RATIO * 1e3 / (2 * N_ADD // TILE)
    per_byte = (add - one) / (8192 - 128)
    burst = (many - one - (8192 - 128) * per_byte) / 63
    return {"mte_engine_gbps": 1 / per_byte, "mte_burst_ns": burst, "mte_request_ns": one - burst - 128 * per_byte}


def _bisect(f, lo: float, hi: float, target: float, steps: int = 12) -> float:
    """x in [lo, hi] with f(x) = target for an increasing f."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def fit(params: TimingParams, single, multi, fused, unfused) -> TimingParams:
    """A: latency to the single-core time; C: launch overhead to the 1.8x; B: 8 KB efficiency to 48 cores."""
    params = dataclasses.replace(params, **fit_engine())
    for _ in range(3):
        params = dataclasses.replace(params, mte_latency_ns=_bisect(
            lambda x: time_of(single, dataclasses.replace(params, mte_latency_ns=x)), 0.0, 400.0, TARGET_A_US))
        tf, tu = time_of(fused, params), time_of(unfused, params)
        overhead = params.launch_overhead_us + (TARGET_C_RATIO * tf - tu) / (2 - TARGET_C_RATIO)
        params = dataclasses.replace(params, launch_overhead_us=max(0.0, overhead))
        # more efficiency = faster: bisect on the negated time
        params = dataclasses.replace(params, small_transfer_efficiency=_bisect(
            lambda x: -time_of(multi, dataclasses.replace(params, small_transfer_efficiency=x)), 0.3, 1.0,
            -TARGET_B_US))
    return params


def fit_vector(clock_ghz: float) -> dict[str, float]:
    """D: the vector start-up and the bank-conflict cycles from the bank_conflict_ub figures."""
    from fusekit.timing.studies import ADD_LOOPS, BANK_SCENARIOS, SYSTEM_CYCLE_MHZ

    per_add = {s: BANK_SCENARIOS[s][-1] * clock_ghz * 1e3 / SYSTEM_CYCLE_MHZ / ADD_LOOPS for s in (1, 2, 5)}
    repeats = 64
    startup = per_add[1] - repeats
    return {"vector_startup_cycles": startup,
            "ub_read_read_conflict_cycles": (per_add[2] - startup) / repeats - 1,
            "ub_read_write_conflict_cycles": (per_add[5] - startup - repeats) / (repeats - 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the fitted values to the A2 data files")
    args = parser.parse_args()
    single = workloads.add(N_ADD, core_num=1, tile_length=TILE)
    multi = workloads.add(N_ADD, core_num=48, tile_length=TILE)
    fused, unfused = workloads.fused(256 * 1024), workloads.unfused(256 * 1024)
    vector = fit_vector(load("Ascend910B1").clock_ghz)
    params = fit(dataclasses.replace(load("Ascend910B1"), **vector), single, multi, fused, unfused)
    print(f"A: {time_of(single, params):.1f} us (target {TARGET_A_US}), mte2 ratio "
          f"{mte2_ratio(single[0], params):.3f} (target {TARGET_A_RATIO})")
    print(f"B: {time_of(multi, params):.2f} us (target {TARGET_B_US})")
    print(f"C: unfused / fused {time_of(unfused, params) / time_of(fused, params):.3f} (target {TARGET_C_RATIO})")
    fitted = {"mte_engine_gbps": params.mte_engine_gbps, "mte_latency_ns": params.mte_latency_ns,
              "mte_request_ns": params.mte_request_ns, "mte_burst_ns": params.mte_burst_ns,
              "launch_overhead_us": params.launch_overhead_us,
              "small_transfer_efficiency": params.small_transfer_efficiency, **vector}
    for name, value in fitted.items():
        print(f"  {name} = {value:.4g}")
    if args.write:
        for soc in SOCS + ("Ascend310P3",):
            path = DATA / f"{soc}.json"
            data = json.loads(path.read_text(encoding="utf-8"))
            for name, value in fitted.items():
                if soc not in SOCS and name in vector:
                    continue  # 310P: no bank or start-up figure (its data file says so)
                source = SOURCES[name] if soc in SOCS else "assumed: the Ascend910B calibration " \
                    "(benchmarks/calibrate_timing.py); not measured on 310P"
                data[name] = {"value": round(value, 4), "source": source}
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {', '.join(SOCS)} and, as an assumption, Ascend310P3")


BANK = "AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/README.md"
SOURCES = {
    "vector_startup_cycles": f"calibrated (benchmarks/calibrate_timing.py, D) to {BANK}, scenario 1: 1000 float Adds "
                             "of 64 repeats = 2390 system cycles at 50 MHz = 88.43 core cycles each at 1.85 GHz, minus "
                             "64 one-cycle repeats (Add float: 64 elements/cycle)",
    "ub_read_read_conflict_cycles": f"calibrated (D) to {BANK}, scenario 2 (4167 system cycles); predicted: scenarios "
                                    "3 and 7",
    "ub_read_write_conflict_cycles": f"calibrated (D) to {BANK}, scenario 5 (3751 system cycles, 63 conflicting "
                                     "repeats per Add); predicted: scenarios 4, 6 and 8 (no conflict)",
    "mte_engine_gbps": "calibrated in closed form (benchmarks/calibrate_timing.py, E) from three MTE2 times: DataCopy study scenario 1 (548.161 us for 49152 single-burst 128 B copies per core) and scenario 2 (220.772 us for 768 copies of 64 x 128 B bursts) (AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md, aiv_mte2_time) and the single-core Add study (6909.6 us x aiv_mte2_ratio 0.873 for 32768 8 KB copies; AD add_high_performance README)",
    "mte_request_ns": "calibrated in closed form (benchmarks/calibrate_timing.py, E) from three MTE2 times: DataCopy study scenario 1 (548.161 us for 49152 single-burst 128 B copies per core) and scenario 2 (220.772 us for 768 copies of 64 x 128 B bursts) (AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md, aiv_mte2_time) and the single-core Add study (6909.6 us x aiv_mte2_ratio 0.873 for 32768 8 KB copies; AD add_high_performance README)",
    "mte_burst_ns": "calibrated in closed form (benchmarks/calibrate_timing.py, E) from three MTE2 times: DataCopy study scenario 1 (548.161 us for 49152 single-burst 128 B copies per core) and scenario 2 (220.772 us for 768 copies of 64 x 128 B bursts) (AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md, aiv_mte2_time) and the single-core Add study (6909.6 us x aiv_mte2_ratio 0.873 for 32768 8 KB copies; AD add_high_performance README)",
    "mte_latency_ns": "calibrated (bisection on the model, benchmarks/calibrate_timing.py A): single-core Add 8192x8192 "
                      "fp16 = 6909.6 us (AD add_high_performance README); with pipelined requests it delays only a "
                      "transfer's consumers (flags, other pipes), not the next transfer",
    "launch_overhead_us": "calibrated (benchmarks/calibrate_timing.py): unfused Add+Mul = 1.8x FusedAddScale at 256K "
                          "fp16 (seed article, section 1.1; 3p)",
    "small_transfer_efficiency": "calibrated (benchmarks/calibrate_timing.py): 48-core Add 8192x8192 fp16 with 8 KB "
                                 "copies = 306.58 us (AD add_high_performance README)",
}


if __name__ == "__main__":
    main()
