"""The published Atlas A2 studies rebuilt as pyasc kernels, with their figures, for ``validate-timing``.

Each case carries the published figure, its source and whether the SoC params were fitted to it
(``fitted``) or it is only predicted (``validated``). Sources (asc-devkit, AD):

- ``bank_conflict_ub``: ``examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/``
  (README.md table "打点性能", config.h, bank_conflict_ub.asc): 1000 float ``Add`` of 64 repeats
  on one core, three hand-placed 16 KiB UB tensors, measured with ``GetSystemCycle`` between two
  ``PipeBarrier<PIPE_ALL>``. GetSystemCycle counts at 50 MHz on A2 (AD-API
  工具接口/系统资源与变量/GetSystemCycle(ISASI).md).
- ``data_copy``: ``.../04_memory_access/data_copy/`` (README.md "GM 到 UB" tables, data_copy_ub.h):
  a 12288 x 12288 (or 12287) half matrix read GM -> UB with ``DataCopyPad`` by 48 AIV cores, one
  hand-placed UB buffer, no compute; the figure is msprof's Task Duration.
- ``add_high_performance``: ``.../00_vector_compute/add_high_performance/`` (README.md tables, add.asc):
  z = x + y on 8192 x 8192 half, hand-placed UB buffers and flags, cases 1-5 (case 5 sets
  ``set_l2_cache_hint(CACHE_MODE_DISABLE)`` on x and y).
- ``matmul_high_performance``: ``examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/``,
  the cube study, Cases 0-8 of the high-level Matmul at 8192^3 half (``fusekit.timing.cube_studies``).
- the seed article's fused / unfused ratio at 256K float16 (3p), from the shipped operators' Traces, which
  the caller passes in (``validate(workloads=fusekit.ops.workloads)``: the operators are a layer above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusekit import asc
from fusekit.asc.trace import SyncKind, Trace

from . import NO_VALUES, load, predict
from .schedule import schedule, vector_cycles

BANK = "AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/bank_conflict_ub/README.md"
COPY = "AD examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy/README.md"
ADD = "AD examples/01_simd_cpp_api/05_best_practices/00_vector_compute/add_high_performance/README.md"
SYSTEM_CYCLE_MHZ = 50  # AD-API GetSystemCycle(ISASI).md: A2 counts at 50 MHz


@dataclass(frozen=True)
class Case:
    """One published figure: what it measures, its value and unit, its source, fitted or validated."""

    study: str
    name: str
    published: float
    unit: str
    source: str
    role: str  # "fitted" (the params file was fitted to it) or "validated" (only predicted)


# --- bank_conflict_ub ------------------------------------------------------------------------
ADD_LOOPS, BANK_LENGTH = 1000, 4096
# scenario -> (src0, src1, dst byte addresses (config.h), src0 (block, repeat) stride, published system cycles)
BANK_SCENARIOS = {
    1: (0x0000, 0x10100, 0x20000, (1, 8), 2390),
    2: (0x0000, 0x4000, 0x10000, (1, 8), 4167),
    3: (0x0000, 0x10000, 0x14100, (1, 8), 4167),
    4: (0x0000, 0x10100, 0x4000, (1, 8), 2389),
    5: (0x0000, 0x10100, 0x4020, (1, 8), 3751),
    6: (0x0000, 0x10100, 0x10100, (1, 8), 2390),
    7: (0x0000, 0x10100, 0x10100, (0, 1), 3584),
    8: (0x0000, 0x10100, 0x10100, (0, 8), 2389),
}
BANK_FITTED = {1: "vector_startup_cycles", 2: "ub_read_read_conflict_cycles", 5: "ub_read_write_conflict_cycles"}


@asc.jit
def bank_conflict_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, X_ADDR: asc.ConstExpr[int],
                         Y_ADDR: asc.ConstExpr[int], Z_ADDR: asc.ConstExpr[int], SRC0_BLK: asc.ConstExpr[int],
                         SRC0_REP: asc.ConstExpr[int]):
    """bank_conflict_ub.asc's KernelAdd::Process in pyasc syntax (one core, float, 4096 elements)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, BANK_LENGTH)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, BANK_LENGTH)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, BANK_LENGTH)
    x_local = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, X_ADDR, BANK_LENGTH)
    y_local = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, Y_ADDR, BANK_LENGTH)
    z_local = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, Z_ADDR, BANK_LENGTH)
    asc.data_copy(x_local, xg, BANK_LENGTH)
    asc.data_copy(y_local, yg, BANK_LENGTH)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    lanes = 256 // 4
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for _ in range(ADD_LOOPS):
        asc.add(z_local, x_local, y_local, lanes, BANK_LENGTH // lanes,
                asc.BinaryRepeatParams(1, SRC0_BLK, 1, 8, SRC0_REP, 8))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, z_local, BANK_LENGTH)


def bank_conflict_cycles(scenario: int, soc: str = "Ascend910B1") -> float:
    """Predicted system cycles (50 MHz) between the two PIPE_ALL barriers of one scenario."""
    x_addr, y_addr, z_addr, (blk, rep), _ = BANK_SCENARIOS[scenario]
    data = np.zeros(BANK_LENGTH, np.float32)
    trace = asc.launch(bank_conflict_kernel, 1, (data, data.copy(), data.copy(), x_addr, y_addr, z_addr, blk, rep),
                       soc=soc, executor=NO_VALUES).trace
    core = schedule(trace, load(soc)).cores[0]
    barriers = [i for i, instr in enumerate(core.instrs)
                if instr.sync is not None and instr.sync.kind is SyncKind.BARRIER and instr.op == "pipe_barrier"]
    first, last = barriers[0], barriers[-1]
    return (core.end[last] - core.end[first]) * SYSTEM_CYCLE_MHZ


def bank_cases() -> list[tuple[Case, float]]:
    rows = []
    for scenario, (*_, published) in BANK_SCENARIOS.items():
        role = f"fitted ({BANK_FITTED[scenario]})" if scenario in BANK_FITTED else "validated"
        case = Case("bank_conflict_ub", f"scenario {scenario}: {ADD_LOOPS} x Add float, 64 repeats", published,
                    "system cycles", f"{BANK}, table 打点性能, scenario {scenario}", role)
        rows.append((case, bank_conflict_cycles(scenario)))
    return rows


# --- data_copy (GM -> UB) ------------------------------------------------------------------------
PROCESS, REPEAT_WHOLE, SPLIT_FOUR, FULL_SAME, FULL_OFFSET = range(5)
# scenario -> (M, N, TILE_M, TILE_N, mode, published Task Duration us, published aiv_mte2_time us)
# (data_copy.asc UbScenario)
COPY_SCENARIOS = {
    1: (12288, 12288, 1, 64, PROCESS, 564.84, 548.161),
    2: (12288, 12288, 64, 64, PROCESS, 233.54, 220.772),
    3: (12288, 12288, 64, 1024, PROCESS, 215.82, 202.657),
    4: (12288, 12287, 64, 1024, PROCESS, 275.3, 259.047),
    5: (12288, 12288, 64, 1024, REPEAT_WHOLE, 828.06, None),
    6: (12288, 12288, 64, 1024, SPLIT_FOUR, 365.74, None),
    7: (6144, 512, 128, 64, FULL_SAME, 539.42, 474.717),
    8: (6144, 512, 128, 64, FULL_OFFSET, 328.88, 307.38),
}
COPY_CORES = 48
# 1 and 2: their aiv_mte2_time (not the Task Duration shown) fixes mte_request_ns, mte_burst_ns and
# mte_engine_gbps together with add case 1 (closed form); 3, 7, 8: their Task Duration (benchmarks/calibrate_timing.py)
COPY_FITTED: dict[int, str] = {1: "mte_request_ns, mte_burst_ns: aiv_mte2_time",
                               2: "mte_request_ns, mte_burst_ns: aiv_mte2_time", 3: "small_transfer_efficiency",
                               7: "gm_window_gbps", 8: "bypass_small_efficiency"}


@asc.jit
def data_copy_kernel(src: asc.GlobalAddress, M: asc.ConstExpr[int], N: asc.ConstExpr[int], TILE_M: asc.ConstExpr[int],
                     TILE_N: asc.ConstExpr[int], MODE: asc.ConstExpr[int]):
    """data_copy_ub.h's KernelDataCopyPadGm2Ub in pyasc syntax: DataCopyPad GM -> one hand-placed UB buffer."""
    cores = asc.get_block_num()
    single_m = M // cores
    gm = asc.GlobalTensor()
    gm.set_global_buffer(src, M * N)
    ub = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, TILE_M * TILE_N)
    block = asc.get_block_idx()
    if MODE == PROCESS:
        for m_block in range(single_m // TILE_M):
            m_idx = block * single_m + m_block * TILE_M
            for n_block in range((N + TILE_N - 1) // TILE_N):
                n_idx = n_block * TILE_N
                cols = min(TILE_N, N - n_idx)
                params = asc.DataCopyExtParams(TILE_M, cols * 2, (N - cols) * 2, 0)
                asc.data_copy_pad(ub, gm[m_idx * N + n_idx:], params, asc.DataCopyPadExtParams(asc.float16))
    elif MODE == REPEAT_WHOLE or MODE == SPLIT_FOUR:
        parts = 1 if MODE == REPEAT_WHOLE else 4
        for part in range(parts):
            n_start, n_count = part * (N // parts), N // parts
            for _ in range(4):
                for m_block in range(single_m // TILE_M):
                    m_idx = block * single_m + m_block * TILE_M
                    for n_block in range(n_count // TILE_N):
                        params = asc.DataCopyExtParams(TILE_M, TILE_N * 2, (N - TILE_N) * 2, 0)
                        asc.data_copy_pad(ub, gm[m_idx * N + n_start + n_block * TILE_N:], params,
                                          asc.DataCopyPadExtParams(asc.float16))
    else:  # every core reads the whole matrix, in the same order or rotated by core, bypassing L2
        gm.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
        for m_block in range(M // single_m):
            group = (m_block // cores) * cores
            cur = group + (m_block + block) % cores if MODE == FULL_OFFSET else m_block
            for m_tile in range(single_m // TILE_M):
                m_idx = cur * single_m + m_tile * TILE_M
                for n_block in range(N // TILE_N):
                    params = asc.DataCopyExtParams(TILE_M, TILE_N * 2, (N - TILE_N) * 2, 0)
                    asc.data_copy_pad(ub, gm[m_idx * N + n_block * TILE_N:], params,
                                      asc.DataCopyPadExtParams(asc.float16))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def data_copy_trace(scenario: int, soc: str = "Ascend910B1"):
    """The Trace of one GM -> UB scenario on 48 cores (no values computed).

    Scenarios 1-6 record two cores (every core copies its own rows alike); 7 and 8 record all 48,
    whose GM addresses decide the same-window contention.
    """
    m, n, tile_m, tile_n, mode, *_ = COPY_SCENARIOS[scenario]
    data = np.zeros(m * n, np.float16)
    return asc.launch(data_copy_kernel, COPY_CORES, (data, m, n, tile_m, tile_n, mode), soc=soc, executor=NO_VALUES,
                      sample_cores=mode not in (FULL_SAME, FULL_OFFSET)).trace


def data_copy_us(scenario: int, soc: str = "Ascend910B1") -> float:
    """Predicted Task Duration (us) of one GM -> UB scenario on 48 cores."""
    return predict([data_copy_trace(scenario, soc)], soc).kernel_time_us


def copy_cases() -> list[tuple[Case, float]]:
    rows = []
    for scenario, (m, n, tile_m, tile_n, *_, published, _mte2) in COPY_SCENARIOS.items():
        role = f"fitted ({COPY_FITTED[scenario]})" if scenario in COPY_FITTED else "validated"
        case = Case("data_copy", f"scenario {scenario}: [{m},{n}] half, tile [{tile_m},{tile_n}], 48 AIV", published,
                    "us", f"{COPY}, GM 到 UB tables, Atlas A2/A3 scenario {scenario}", role)
        rows.append((case, data_copy_us(scenario)))
    return rows


# --- vector instruction throughput (AD docs/zh/api/附录/Vector指令理论性能汇总.md) ---------------------
THROUGHPUT = "AD docs/zh/api/附录/Vector指令理论性能汇总.md, Atlas A2/A3 表6 (基础算术)"
# pyasc call, its operands ("binary", "unary", "scalar"), dtype, documented elements per cycle
THROUGHPUT_CASES = [("add", "binary", "float16", 128), ("add", "binary", "float32", 64),
                    ("mul", "binary", "float16", 128),
                    ("div", "binary", "float16", 32), ("div", "binary", "float32", 32), ("exp", "unary", "float16", 32),
                    ("ln", "unary", "float32", 32), ("sqrt", "unary", "float16", 32), ("abs", "unary", "float32", 64),
                    ("relu", "unary", "float16", 128), ("muls", "scalar", "float16", 128),
                    ("adds", "scalar", "float32", 64)]
THROUGHPUT_ELEMENTS = 8192


@asc.jit
def throughput_kernel(OP: asc.ConstExpr[str], KIND: asc.ConstExpr[str], DTYPE: asc.ConstExpr[str]):
    """One count-form vector instruction on THROUGHPUT_ELEMENTS elements of hand-placed UB tensors."""
    dtype = getattr(asc, DTYPE)
    a = asc.LocalTensor(dtype, asc.TPosition.VECCALC, 0, THROUGHPUT_ELEMENTS)
    b = asc.LocalTensor(dtype, asc.TPosition.VECCALC, 0x10100, THROUGHPUT_ELEMENTS)
    c = asc.LocalTensor(dtype, asc.TPosition.VECCALC, 0x20000, THROUGHPUT_ELEMENTS)
    fn = getattr(asc, OP)
    if KIND == "binary":
        fn(c, a, b, THROUGHPUT_ELEMENTS)
    elif KIND == "unary":
        fn(c, a, THROUGHPUT_ELEMENTS)
    else:
        fn(c, a, 1.0, THROUGHPUT_ELEMENTS)


def throughput_cases(soc: str = "Ascend910B1") -> list[tuple[Case, float]]:
    """Model elements per cycle of each instruction (its repeat cycles without start-up) against the table."""
    params = load(soc)
    rows = []
    for op, kind, dtype, published in THROUGHPUT_CASES:
        trace = asc.launch(throughput_kernel, 1, (op, kind, dtype), soc=soc, executor=NO_VALUES).trace
        instr = next(i for i in trace.cores[0] if i.op == op)
        beats = vector_cycles(instr, params) - params.vector_startup_cycles
        case = Case("throughput", f"{instr.cost or op} {dtype}, {THROUGHPUT_ELEMENTS} elements", published,
                    "elements/cycle", THROUGHPUT, "validated")
        rows.append((case, THROUGHPUT_ELEMENTS / beats))
    return rows


# --- add_high_performance and the seed article ------------------------------------------------
ADD_N = 8192 * 8192
ADD_MAX_LEN = 16384  # add.asc MAX_DATA_COPY_LEN on A2: six 32 KB UB buffers (x, y, z ping and pong)
# case -> (cores, dataCopyLen, double-buffered, x and y read with CACHE_MODE_DISABLE, published Task Duration us)
# (README "Atlas A2 性能数据对比" table; add.asc Process for cases 1-3, ProcessDoubleBuffer for 4,
# ProcessDoubleBufferL2Bypass for 5)
ADD_CASES = {1: (1, 4096, False, False, 6909.6), 2: (48, 4096, False, False, 306.58),
             3: (48, 16384, False, False, 268.5), 4: (48, 16384, True, False, 264.02),
             5: (48, 16384, True, True, 187.68)}
ADD_MTE2_US = 6208.762  # case 1 aiv_mte2_time
ADD_MTE2_RATIO = 0.873  # case 1 aiv_mte2_ratio as published (6208.762 / 6909.14 = 0.899)
ADD_FITTED = {1: "mte_latency_ns; its aiv_mte2_time fixes the engine with data_copy 1, 2", 5: "gm_peak_efficiency"}
ARTICLE_N, ARTICLE_RATIO = 256 * 1024, 1.8


@asc.jit
def add_study_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, M: asc.ConstExpr[int],
                     N: asc.ConstExpr[int], LEN: asc.ConstExpr[int], DOUBLE: asc.ConstExpr[bool],
                     BYPASS: asc.ConstExpr[bool]):
    """add.asc's KernelAdd (Init, Process / ProcessDoubleBuffer[L2Bypass]) in pyasc syntax: z = x + y, half,
    rows split over the cores, hand-placed UB buffers synchronised with flags."""
    cores, block = asc.get_block_num(), asc.get_block_idx()
    base, rem = M // cores, M % cores
    rows = base + 1 if block < rem else base
    start_m = block * rows if block < rem else rem * (base + 1) + (block - rem) * base
    total = rows * N
    xg, yg, zg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + start_m * N, total)
    yg.set_global_buffer(y + start_m * N, total)
    zg.set_global_buffer(z + start_m * N, total)
    if BYPASS:
        xg.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
        yg.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
    size = ADD_MAX_LEN * 2
    ub = [asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, k * size, ADD_MAX_LEN) for k in range(6)]
    blocks = (total + LEN - 1) // LEN
    if DOUBLE:
        for event in (0, 1):
            asc.set_flag(asc.HardEvent.V_MTE2, event)
            asc.set_flag(asc.HardEvent.MTE3_V, event)
    for i in range(blocks):
        start = i * LEN
        cur = min(LEN, total - start)
        event = i % 2 if DOUBLE else 0
        x_l, y_l, z_l = ub[3 * event:3 * event + 3]
        if DOUBLE or i:
            asc.wait_flag(asc.HardEvent.V_MTE2, event)
        asc.data_copy(x_l, xg[start:], cur)
        asc.data_copy(y_l, yg[start:], cur)
        asc.set_flag(asc.HardEvent.MTE2_V, event)
        asc.wait_flag(asc.HardEvent.MTE2_V, event)
        if DOUBLE or i:
            asc.wait_flag(asc.HardEvent.MTE3_V, event)
        asc.add(z_l, x_l, y_l, cur)
        if DOUBLE or i != blocks - 1:
            asc.set_flag(asc.HardEvent.V_MTE2, event)
        asc.set_flag(asc.HardEvent.V_MTE3, event)
        asc.wait_flag(asc.HardEvent.V_MTE3, event)
        asc.data_copy(zg[start:], z_l, cur)
        if DOUBLE or i != blocks - 1:
            asc.set_flag(asc.HardEvent.MTE3_V, event)
    if DOUBLE:
        for event in (0, 1):
            asc.wait_flag(asc.HardEvent.V_MTE2, event)
            asc.wait_flag(asc.HardEvent.MTE3_V, event)


def add_trace(case: int, soc: str = "Ascend910B1") -> Trace:
    """The Trace of one add study case (48-core cases: two cores recorded, the others do core 0's work)."""
    cores, length, double, bypass, _ = ADD_CASES[case]
    data = np.zeros(ADD_N, np.float16)
    return asc.launch(add_study_kernel, cores, (data, data.copy(), data.copy(), 8192, 8192, length, double, bypass),
                      soc=soc, executor=NO_VALUES, sample_cores=True).trace


def mte2_ratio(sched) -> float:
    """aiv_mte2_ratio of core 0: MTE2 busy time over the core's time."""
    core = sched.cores[0]
    return sum(b for pipe, b in zip(core.pipes, core.busy) if pipe == 2) / core.finish_us


def article_ratio(workloads, soc: str = "Ascend910B1") -> float:
    """Predicted unfused Add + Muls over FusedAddScale at 256K float16, default settings (launch overheads included).

    ``workloads``: the operators' Traces, ``workloads.fused(n, soc=)`` and ``workloads.unfused(n, soc=)``
    (:mod:`fusekit.ops.workloads`); the shipped operators are a layer above the timing model, so they are passed in.
    """
    return (predict(workloads.unfused(ARTICLE_N, soc=soc), soc).kernel_time_us
            / predict(workloads.fused(ARTICLE_N, soc=soc), soc).kernel_time_us)


def add_cases(soc: str = "Ascend910B1", workloads=None) -> list[tuple[Case, float]]:
    """The add study's cases 1-5, case 1's aiv_mte2_ratio and, given the operators' ``workloads``
    (:func:`article_ratio`), the seed article's ratio."""
    params = load(soc)
    rows = []
    for case, (cores, length, double, bypass, published) in ADD_CASES.items():
        sched = schedule(add_trace(case, soc), params)
        role = f"fitted ({ADD_FITTED[case]})" if case in ADD_FITTED else "validated"
        label = (f"case {case}: Add 8192x8192 half, {cores} core{'s' if cores > 1 else ''}, {length * 2 // 1024} KB "
                 f"copies{', double buffer' if double else ''}{', reads bypass L2' if bypass else ''}")
        rows.append((Case("add_high_performance", label, published, "us", ADD, role), sched.time_us))
        if case == 1:
            rows.append((Case("add_high_performance", "case 1, aiv_mte2_ratio", ADD_MTE2_RATIO, "ratio", ADD,
                              "validated"), mte2_ratio(sched)))
    if workloads is not None:
        rows.append((Case("seed article", "unfused Add+Muls / FusedAddScale, 256K half", ARTICLE_RATIO, "ratio",
                          "seed article, section 1.1 (3p)", "validated"), article_ratio(workloads, soc)))
    return rows


def matmul_cases() -> list[tuple[Case, float]]:
    """The cube study (``fusekit.timing.cube_studies``): matmul_high_performance Cases 0-8."""
    from .cube_studies import cube_cases

    return cube_cases()


STUDIES = {"bank_conflict_ub": bank_cases, "throughput": throughput_cases, "add": add_cases, "data_copy": copy_cases,
           "matmul": matmul_cases}


def validate(studies=None, progress=None, workloads=None) -> list[tuple[Case, float]]:
    """Every published case of ``studies`` (names of :data:`STUDIES`; default all) with the model's prediction;
    ``workloads`` (the shipped operators' Traces, :func:`article_ratio`) adds the seed article's case to "add"."""
    rows = []
    for name in studies or STUDIES:
        if name not in STUDIES:
            raise ValueError(f"unknown study {name!r}; choose from {', '.join(STUDIES)}")
        rows += add_cases(workloads=workloads) if name == "add" else STUDIES[name]()
        if progress is not None:
            progress(name)
    return rows


def report(rows) -> str:
    """The side-by-side table: study, case, published, predicted, error, fitted or validated, source."""
    lines = [f"{'study':<21} {'case':<52} {'published':>11} {'predicted':>11} {'error':>8}  {'unit':<15} role"]
    for case, value in rows:
        error = value / case.published - 1
        lines.append(f"{case.study:<21} {case.name:<52} {case.published:>11.6g} {value:>11.6g} {error:>+8.1%}  "
                     f"{case.unit:<15} {case.role}")
    fitted = [abs(v / c.published - 1) for c, v in rows if c.role.startswith("fitted")]
    checked = [abs(v / c.published - 1) for c, v in rows if c.role == "validated"]
    for label, errors in (("fitted", fitted), ("validated", checked)):
        if errors:
            lines.append(f"{label}: {len(errors)} case(s), mean |error| {sum(errors) / len(errors):.1%}, "
                         f"max {max(errors):.1%}; within 10 %: {sum(e <= 0.10 for e in errors)}/{len(errors)}")
    shown = sum(1 for c, _ in rows if c.role.startswith("not modelled"))
    if shown:
        lines.append(f"not modelled: {shown} figure(s) shown for comparison only (their role says what is missing)")
    lines.append("sources: " + "; ".join(sorted({c.source.split(',')[0] for c, _ in rows})))
    return "\n".join(lines)
