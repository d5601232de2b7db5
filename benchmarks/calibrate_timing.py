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
A fixes mte_engine_gbps and mte_latency_ns (one core does not share GM bandwidth); B and C fix
small_transfer_efficiency and launch_overhead_us. Each pair is solved by fixed-point iteration on
the model itself. D fixes vector_startup_cycles, ub_read_read_conflict_cycles and
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


def fit(params: TimingParams, single, multi, fused, unfused) -> TimingParams:
    copies = sum(1 for i in single[0].cores[0] if i.pipe.value == "MTE2" and i.nbytes)
    for _ in range(30):
        # A: per-copy occupancy sets the single-core time, its busy part the MTE2 ratio
        t, r = time_of(single, params), mte2_ratio(single[0], params)
        busy_per_copy = 8192 / (params.mte_engine_gbps * 1e3)
        latency_us = params.mte_latency_ns / 1e3
        occupancy = busy_per_copy + latency_us + (TARGET_A_US - t) / copies
        params = dataclasses.replace(params, mte_engine_gbps=params.mte_engine_gbps * r / TARGET_A_RATIO,
                                     mte_latency_ns=max(1.0, (occupancy - busy_per_copy * TARGET_A_RATIO / r) * 1e3))
        # C: the launch overhead sets the fused / unfused ratio at 256K (two launches against one)
        tf, tu = time_of(fused, params), time_of(unfused, params)
        overhead = params.launch_overhead_us + (TARGET_C_RATIO * tf - tu) / (2 - TARGET_C_RATIO)
        params = dataclasses.replace(params, launch_overhead_us=max(0.0, overhead))
        # B: the 48-core time sets the GM efficiency of 8 KB transfers
        tb = time_of(multi, params)
        eff8k = (params.small_transfer_efficiency + 1) / 2 * (tb - params.launch_overhead_us) / (
            TARGET_B_US - params.launch_overhead_us)
        params = dataclasses.replace(params, small_transfer_efficiency=min(1.0, max(0.05, 2 * eff8k - 1)))
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
    "mte_engine_gbps": "calibrated (benchmarks/calibrate_timing.py): single-core Add 8192x8192 fp16 = 6909.6 us with "
                       "aiv_mte2_ratio 0.873 (AD add_high_performance README)",
    "mte_latency_ns": "calibrated (benchmarks/calibrate_timing.py): the same single-core Add measurement",
    "launch_overhead_us": "calibrated (benchmarks/calibrate_timing.py): unfused Add+Mul = 1.8x FusedAddScale at 256K "
                          "fp16 (seed article, section 1.1; 3p)",
    "small_transfer_efficiency": "calibrated (benchmarks/calibrate_timing.py): 48-core Add 8192x8192 fp16 with 8 KB "
                                 "copies = 306.58 us (AD add_high_performance README)",
}


if __name__ == "__main__":
    main()
