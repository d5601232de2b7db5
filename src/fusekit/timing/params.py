"""Timing-model parameters, one JSON data file per SoC (``fusekit/timing/socs/<SoC>.json``).

Each entry is ``{"value": number, "source": "where it comes from"}``. Sources use the tags of
``docs/ascendc-model.md`` (AD, AD-G, AD-API, PROF, 3p); ``calibrated`` marks a value fitted by
``benchmarks/calibrate_timing.py`` against the published measurements (see ``fusekit.timing``);
``assumed`` marks a value no document gives, chosen so that it does not decide any result the
calibration constrains (e.g. the scalar and sync cycles). The vector throughput table is a separate
data file (``vector_throughput_2201.json``, written by ``benchmarks/extract_vector_throughput.py``
from AD ``docs/zh/api/附录/Vector指令理论性能汇总.md``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, fields
from importlib import resources
from types import MappingProxyType
from typing import Mapping

from fusekit.soc import SoC, get_soc


@dataclass(frozen=True)
class TimingParams:
    """Costs of instructions on one SoC.

    Attributes (units in the names):
        clock_ghz: AI core clock.
        launch_overhead_us / launch_per_core_us: a launch's head overhead is launch_overhead_us +
            launch_per_core_us x block_dim (:meth:`launch_us`): task dispatch, core start, TLB misses
            and the cores' first same-address reads, which grow with the core count (AD-G
            设置合适的核数和算子Kernel类型.md); added once per launch.
        scalar_cycles_per_call: scalar-unit cycles to issue one API call (address arithmetic, dispatch).
        scalar_ub_access_cycles / scalar_gm_access_cycles: a get_value/set_value on UB / on GM.
        sync_cycles: a set/wait of a flag, a queue operation's flag, a pipe_barrier, on its pipe.
        vector_startup_cycles: fixed cost of one vector instruction.
        vector_bytes_per_cycle: bytes one repeat processes per cycle (256 B: 8 blocks of 32 B).
        mte_latency_ns: time from a transfer's last byte leaving the engine to its data being
            usable by another pipe (the engine already works on the next request meanwhile).
        mte_engine_gbps: most one MTE2 or MTE3 engine of one core moves, GB/s.
        mte_request_ns / mte_burst_ns: engine time per transfer instruction / per burst (row of a
            multi-burst copy) on top of its bytes; requests are pipelined, so the latency is not
            paid per transfer in series.
        gm_bandwidth_gbps: the chip's GM (HBM/DDR) bandwidth, shared by every transfer in flight
            that misses L2 (a read miss, a bypassing read or write, a write-back).
        l2_bytes / l2_line_bytes: L2 capacity and its allocation granularity (0 = no L2 model).
        l2_bandwidth_gbps: the chip's L2 bandwidth, shared by every transfer in flight that hits L2.
        mte_l2_gbps: most one core's MTE moves from or to L2 (a hit is not bound by HBM latency).
        gm_window_gbps / gm_window_bytes: cores reading the same ``gm_window_bytes`` window of a
            GM buffer at the same time are served one after another at ``gm_window_gbps`` in all.
        gm_window_burst_bytes: the burst length at which ``gm_window_gbps`` holds: a window serves accesses, so
            bursts b bytes long are served at ``gm_window_gbps`` x b / gm_window_burst_bytes.
        full_efficiency_bytes: bursts this large or larger get the best share of GM bandwidth.
        small_transfer_efficiency / gm_peak_efficiency: share of ``gm_bandwidth_gbps`` a vanishingly
            small burst / a burst of ``full_efficiency_bytes`` or more uses; linear in between.
        bypass_small_efficiency: the small-burst share for a transfer that bypasses L2.
        misaligned_efficiency: factor for a GM address not aligned to ``gm_align_bytes``.
        gm_align_bytes: the GM alignment with full bandwidth.
        vector_throughput_table: data file (next to the SoC files) of documented elements per cycle
            per row (the page's Ascend C names; each Spec names its row, ``Spec.cost``) and dtype;
            "" = none (the SoC's source says so), every instruction costs one 256 B repeat per cycle.
        ub_bank_group_count / ub_bank_bytes: UB address decoding for bank conflicts: bank group =
            (address // 32) % count, bank id = address // ub_bank_bytes; 0 = conflicts not modelled.
        ub_read_read_conflict_cycles: extra cycles of a vector repeat whose two sources read one bank group.
        ub_read_write_conflict_cycles: extra cycles of a repeat that reads a bank the previous repeat's
            (delayed) write uses; a repeat pays the larger of the two, not both.
        mmad_head_cycles: cycles of a Mmad on top of its cube cycles (``fusekit.asc.cube.mmad.cube_cycles``): the
            page's dt.
        mte1_head_cycles: cycles of an MTE1 copy (load_data, L1 -> BT) on top of its bytes / bandwidth.
        mte1_l0a_bytes_per_cycle / mte1_l0b_bytes_per_cycle / mte1_bt_bytes_per_cycle: MTE1 bandwidth from L1 into
            L0A, L0B and the bias table.
        fix_l1_elements_per_cycle: Fixpipe L0C -> L1 elements per cycle; L0C -> GM is a GM transfer.
        fix_head_cycles: cycles of a Fixpipe into L1 on top of its elements / rate.
        aic_mte2_gbps / aic_mte2_request_ns / aic_mte2_row_ns: the AIC's MTE2 (GM -> L1, ND2NZ included): per-core
            byte rate, engine time per copy and per row (burst) of the copy on top of its bytes; its share of the
            chip's HBM / L2 bandwidth is that of every GM transfer.
        fix_gm_head_ns / fix_gm_gbps: a Fixpipe L0C -> GM: time per instruction and its byte rate (of the bytes
            written), on the FIX pipe.
        sources: attribute name -> source text.
        elements_per_cycle: row -> {dtype (Ascend C spelling, e.g. "half") -> elements per cycle}.
    """

    soc: str
    clock_ghz: float
    launch_overhead_us: float
    launch_per_core_us: float
    scalar_cycles_per_call: float
    scalar_ub_access_cycles: float
    scalar_gm_access_cycles: float
    sync_cycles: float
    vector_startup_cycles: float
    vector_bytes_per_cycle: float
    mte_latency_ns: float
    mte_engine_gbps: float
    mte_request_ns: float
    mte_burst_ns: float
    gm_bandwidth_gbps: float
    l2_bytes: int
    l2_line_bytes: int
    l2_bandwidth_gbps: float
    mte_l2_gbps: float
    gm_window_gbps: float
    gm_window_bytes: int
    gm_window_burst_bytes: int
    full_efficiency_bytes: float
    small_transfer_efficiency: float
    gm_peak_efficiency: float
    bypass_small_efficiency: float
    misaligned_efficiency: float
    gm_align_bytes: int
    vector_throughput_table: str
    ub_bank_group_count: int
    ub_bank_bytes: int
    ub_read_read_conflict_cycles: float
    ub_read_write_conflict_cycles: float
    mmad_head_cycles: float
    mte1_head_cycles: float
    mte1_l0a_bytes_per_cycle: float
    mte1_l0b_bytes_per_cycle: float
    mte1_bt_bytes_per_cycle: float
    fix_l1_elements_per_cycle: float
    fix_head_cycles: float
    aic_mte2_gbps: float
    aic_mte2_request_ns: float
    aic_mte2_row_ns: float
    fix_gm_head_ns: float
    fix_gm_gbps: float
    sources: Mapping[str, str]
    elements_per_cycle: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def cycles_us(self, cycles: float) -> float:
        """Microseconds of ``cycles`` at the core clock."""
        return cycles / (self.clock_ghz * 1e3)

    def launch_us(self, cores: int) -> float:
        """Head overhead (us) of one launch on ``cores`` cores."""
        return self.launch_overhead_us + self.launch_per_core_us * max(1, cores)

    def transfer_efficiency(self, nbytes: int, gm_offset: int, bypass: bool = False) -> float:
        """Share of GM bandwidth a transfer of ``nbytes`` bursts at byte ``gm_offset`` of its buffer uses.

        ``bypass``: the transfer bypasses L2 (CACHE_MODE_DISABLE), so its small bursts start from
        ``bypass_small_efficiency``. GM buffers start 512 B aligned (the runtime's allocator does), so
        the offset's alignment is the address's.
        """
        ramp = min(1.0, nbytes / self.full_efficiency_bytes)
        small = self.bypass_small_efficiency if bypass else self.small_transfer_efficiency
        eff = small + (self.gm_peak_efficiency - small) * ramp
        return eff * (self.misaligned_efficiency if gm_offset % self.gm_align_bytes else 1.0)


# fusekit dtype names -> the Ascend C spelling of the throughput page
CPP_DTYPES = {"float16": "half", "float32": "float", "bfloat16": "bfloat16_t", "int8": "int8_t", "uint8": "uint8_t",
              "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t",
              "uint64": "uint64_t"}


def load(soc: "str | SoC | None" = None) -> TimingParams:
    """The timing parameters of a SoC (default Ascend910B1).

    Raises:
        ValueError: unknown SoC (see ``fusekit.soc``).
    """
    return _load(get_soc(soc).name)


@functools.lru_cache(maxsize=None)
def _load(name: str) -> TimingParams:
    spec = get_soc(name)
    text = resources.files("fusekit.timing").joinpath("socs", f"{spec.name}.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    names = [f.name for f in fields(TimingParams) if f.name not in ("soc", "sources", "elements_per_cycle")]
    missing = [n for n in names if n not in raw]
    if missing:
        raise ValueError(f"timing data of {spec.name} lacks {missing}")
    table = raw["vector_throughput_table"]["value"]
    throughput = {}
    if table:
        text = resources.files("fusekit.timing").joinpath("socs", table).read_text(encoding="utf-8")
        throughput = {name: MappingProxyType(rows) for name, rows in json.loads(text)["elements_per_cycle"].items()}
    return TimingParams(soc=spec.name, **{n: raw[n]["value"] for n in names},
                        sources=MappingProxyType({n: raw[n]["source"] for n in names}),
                        elements_per_cycle=MappingProxyType(throughput))
