"""The published Atlas A2 matmul runs rebuilt as a pyasc cube kernel, for ``validate-timing`` (study "matmul").

Source: AD ``examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/`` (README.md
Case 0-8 tables and "Atlas A2训练系列芯片性能数据", matmul.h, matmul.asc): C = A x B, M = N = K = 8192, A half ND,
B half ND passed transposed (N x K), C half ND, the high-level Matmul, msprof's Task Duration and the AIC's
PipeUtilization columns (us). Case by case (:data:`CASES`): 0 and 1 one core, Norm template with one block of A
and B in L1 (``SetL1``: depthA1 = depthB1 = 1), base 64/64/64 and 128/256/64; 2 and 3 the same on 24 cores split
2 x 12 (single 4096 x 683, tail 679) and 4 x 6 (2048 x 1536); 4 the MDL template (L1 double-buffered, depthA1 = 4
so stepKa = 2; depthB1 = 8, stepKb = 4: case 5's README gives depthB1 = 8 as the automatic value it kept, and
``depthB1 / (stepN x stepKb) = 2`` is the README's rule); 5 depthA1 = 16, stepKa = 8; 6 the A split along M in two
rounds (single 1024 x 1536); 7 constant tiling; 8 UnitFlag. The 950PR rows are out of scope (A2 only).

The kernel (:func:`matmul_study_kernel`) issues what those templates issue, in the basic API: per K step of
base_k, when a new L1 block is due, A's (base_m x step_ka base_k) and B's (base_n x step_kb base_k) tiles GM -> L1
(ND2NZ, MTE2) into one of ``l1_buffers`` buffers; L1 -> L0A (one load_data per column of fractals) and L0B (one
load), L0A / L0B double-buffered; a Mmad into L0C; after the last K step a Fixpipe (F322F16, NZ2ND) into C. The
stages are ordered by set_flag / wait_flag per buffer.

Method (8192^3 cannot be simulated whole: a tile is 128 K steps, a core has up to 16384 tiles): the sub-problem is,
on every core of the case, the core's own loop over full K for two consecutive output tiles of each distinct tile
shape (case 2: two of 256 columns, two of 171). Every tile of one shape does the same work on the same pipes, so
a core's time and pipe times extrapolate as the first tile plus (count - 1) times the second tile of its shape
(the span between the two tiles' Fixpipe ends; a pipe's busy time of the instructions in between) for each shape.
Error bound: a steady tile's span varies by under 0.5 % between the second and third tile (checked in
tests/timing/test_timing_cube_studies.py). What the sub-problem cannot see is the L2 state of the whole problem
(its tiles read lines first touched by their own core; the full problem's cores share them, and A's and B's
blocks come back while they are still in L2): :func:`l2_steady_state` replays the whole problem's blocks through
the L2 and gives each core's HBM share of its A and B bytes, which replaces the sub-problem's own
(``schedule(hbm_shares=...)``).

Fitted on cases 0 and 1 only, in closed form from their per-pipe times and the sub-problem's instruction counts
(:func:`fit`): the Mmad head (aic_mac_time), the MTE1 head per load (aic_mte1_time), the AIC's MTE2 cost per copy
and per row (aic_mte2_time; its byte rate aic_mte2_gbps is assumed, 256 B/cycle, bounded below by data_copy's GM -> L1
L2Cache scenario 5: the SoC file says how), the Fixpipe -> GM head and rate
(aic_fixpipe_time). Every other figure is a prediction. aic_scalar_time is shown but not modelled (the Matmul API's
own scalar work is not in the basic-API kernel): its role says so.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from fusekit import asc
from fusekit.asc.sync import HardEvent as E
from fusekit.asc.trace import Pipe
from fusekit.machine import PIPES

from . import NO_VALUES, load
from .schedule import LaunchSchedule, schedule

MATMUL = "AD examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/README.md"
M = N = K = 8192
COLUMNS = ("Task Duration", "aicore_time", "aic_mac_time", "aic_scalar_time", "aic_mte1_time", "aic_mte2_time",
           "aic_fixpipe_time")
# the README's "Atlas A2训练系列芯片性能数据" table, us, in COLUMNS' order
PUBLISHED = {
    0: (759363.98, 759363.46, 141699.459, 508787.509, 162104.184, 582515.828, 34303.063),
    1: (249467.08, 249466.54, 81477.188, 63608.818, 52003.703, 195613.432, 11313.746),
    2: (12541.22, 12537.56, 3462.802, 2987.47, 2260.551, 10177.798, 875.439),
    3: (12283.84, 10870.96, 3394.884, 2656.33, 2166.824, 8616.671, 488.829),
    4: (5039.86, 4487.89, 3116.472, 2073.97, 2332.914, 4051.458, 44.749),
    5: (4156.76, 3925.61, 3352.087, 1464.492, 2750.454, 3778.555, 47.853),
    6: (4088.36, 3786.26, 3254.31, 1753.463, 2680.849, 3625.42, 47.398),
    7: (4053.44, 3665.12, 3163.682, 968.616, 2609.617, 3513.806, 45.76),
    8: (4012.44, 3559.06, 3076.396, 1026.069, 2533.512, 3435.584, 272.576),
}
FITTED_CASES = (0, 1)


@dataclass(frozen=True)
class Tiling:
    """One case's tiling and data path (matmul.asc / matmul.h / README, module docstring)."""

    label: str = field(compare=False)  # cases with one data path share one simulation
    cores: int
    single_m: int
    single_n: int
    m_blocks: int  # cores along M: block i takes M share i % m_blocks, N share i // m_blocks (CalcOffset)
    base_m: int
    base_n: int
    base_k: int = 64
    step_ka: int = 1  # K steps per L1 block of A / B
    step_kb: int = 1
    l1_buffers: int = 1  # 2: MDL's L1 double buffer
    rounds: int = 1  # IterateAll calls per core (case 6-8: A split along M in two)


NORM_1 = dict(m_blocks=1, single_m=M, single_n=N, cores=1)
MDL = dict(cores=24, single_n=1536, m_blocks=4, base_m=128, base_n=256, step_kb=4, l1_buffers=2)
CASES = {
    0: Tiling("one core, Norm, base 64/64/64", base_m=64, base_n=64, **NORM_1),
    1: Tiling("one core, Norm, base 128/256/64", base_m=128, base_n=256, **NORM_1),
    2: Tiling("24 cores 2x12 (4096x683), Norm", 24, 4096, 683, 2, 128, 256),
    3: Tiling("24 cores 4x6 (2048x1536), Norm", 24, 2048, 1536, 4, 128, 256),
    4: Tiling("4x6, MDL, stepKa 2, stepKb 4", single_m=2048, step_ka=2, **MDL),
    5: Tiling("4x6, MDL, stepKa 8, stepKb 4", single_m=2048, step_ka=8, **MDL),
    6: Tiling("4x6, MDL 8/4, L2 split (2 x 1024x1536)", single_m=1024, step_ka=8, rounds=2, **MDL),
    7: Tiling("as 6, constant tiling", single_m=1024, step_ka=8, rounds=2, **MDL),
    8: Tiling("as 7, UnitFlag", single_m=1024, step_ka=8, rounds=2, **MDL),
}
# what the kernel does not simulate, per case: the model predicts the figure without it
NOT_MODELLED = {7: "constant tiling changes only the API's scalar work", 8: "UnitFlag's 512 B Mmad/Fixpipe handshake "
                "is not simulated (its aic_fixpipe_time includes waits, README)"}
MDL_FIXPIPE = ("the MDL runs write a 128x256 tile in 0.47 us where the Norm runs take 5.1-5.5 us (one core: 5.5 us); "
               "no document says why, and the Fixpipe cost is fitted on the Norm cases, so the MDL tiles' spans "
               "carry the Norm Fixpipe (+5 us per tile, about 11 %)")


@asc.jit(matmul_cube_only=True)
def matmul_study_kernel(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, SM: asc.ConstExpr[int],
                        SN: asc.ConstExpr[int], MB: asc.ConstExpr[int], BM: asc.ConstExpr[int], BN: asc.ConstExpr[int],
                        BK: asc.ConstExpr[int], SKA: asc.ConstExpr[int], SKB: asc.ConstExpr[int],
                        L1BUF: asc.ConstExpr[int], TILES: asc.ConstExpr[tuple]):
    """The Matmul templates' data path for the output tiles ``TILES`` ((m0, n0) in the core's share) over full K
    (module docstring). A: M x K half, bt: B transposed (N x K) half, c: M x N half."""
    ag, bg, cg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(bt)
    cg.set_global_buffer(c)
    block = asc.get_block_idx()
    mi, ni = block % MB, block // MB
    tn = min(SN, N - ni * SN)  # the last N share is the tail (case 2: 679)
    a_bytes, b_bytes = BM * BK * SKA * 2, BN * BK * SKB * 2
    # the README's case 5 fills 512 KB of L1, 128 B past TOTAL_L1_SIZE: the last B buffer starts that much early
    # (timing only: the kernel runs without values)
    over = max(0, L1BUF * (a_bytes + b_bytes) - (512 * 1024 - 128))
    a1 = [asc.LocalTensor(asc.float16, asc.TPosition.A1, i * a_bytes, a_bytes // 2) for i in range(L1BUF)]
    b1 = [asc.LocalTensor(asc.float16, asc.TPosition.B1, L1BUF * a_bytes + i * b_bytes - (over if i else 0),
                          b_bytes // 2) for i in range(L1BUF)]
    a2 = [asc.LocalTensor(asc.float16, asc.TPosition.A2, i * BM * BK * 2, BM * BK) for i in range(2)]
    b2 = [asc.LocalTensor(asc.float16, asc.TPosition.B2, i * BN * BK * 2, BN * BK) for i in range(2)]
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, BM * BN)
    for i in range(L1BUF):  # every buffer starts free
        asc.set_flag(E.MTE1_MTE2, i)
        asc.set_flag(E.MTE1_MTE2, 2 + i)
    for i in range(2):
        asc.set_flag(E.M_MTE1, i)
    asc.set_flag(E.FIX_M, 0)
    k1 = BK // 16
    copies_a = copies_b = steps_done = 0
    for m0, n0 in TILES:
        bm, bn = min(BM, SM - m0), min(BN, tn - n0)
        bm16, bn16 = (bm + 15) // 16 * 16, (bn + 15) // 16 * 16  # kernel scalars: C's truncating division
        gm0, gn0 = mi * SM + m0, ni * SN + n0
        m1s, n1s = bm16 // 16, bn16 // 16
        for s in range(K // BK):
            ka, kb = s % SKA, s % SKB
            if ka == 0:  # a new L1 block of A: step_ka K steps of base_m rows
                buf = copies_a % L1BUF
                asc.wait_flag(E.MTE1_MTE2, buf)
                asc.data_copy(a1[buf], ag[gm0 * K + s * BK:], asc.Nd2NzParams(1, bm, BK * SKA, 0, K, bm16, 1, 0))
                asc.set_flag(E.MTE2_MTE1, buf)
                copies_a += 1
            if kb == 0:
                buf = copies_b % L1BUF
                asc.wait_flag(E.MTE1_MTE2, 2 + buf)
                asc.data_copy(b1[buf], bg[gn0 * K + s * BK:], asc.Nd2NzParams(1, bn, BK * SKB, 0, K, bn16, 1, 0))
                asc.set_flag(E.MTE2_MTE1, 2 + buf)
                copies_b += 1
            abuf, bbuf, l0 = (copies_a - 1) % L1BUF, (copies_b - 1) % L1BUF, steps_done % 2
            if ka == 0:
                asc.wait_flag(E.MTE2_MTE1, abuf)
            if kb == 0:
                asc.wait_flag(E.MTE2_MTE1, 2 + bbuf)
            asc.wait_flag(E.M_MTE1, l0)
            for kk in range(k1):  # A: Nz -> Zz, one column of fractals per load
                asc.load_data(a2[l0][kk * 256:], a1[abuf][(ka * k1 + kk) * m1s * 256:],
                              asc.LoadData2DParams(0, m1s, 1, 0, k1 - 1, False, 0))
            asc.load_data(b2[l0], b1[bbuf][kb * k1 * n1s * 256:], asc.LoadData2DParams(0, k1 * n1s, 1, 0, 0, False, 0))
            if ka == SKA - 1:
                asc.set_flag(E.MTE1_MTE2, abuf)
            if kb == SKB - 1:
                asc.set_flag(E.MTE1_MTE2, 2 + bbuf)
            asc.set_flag(E.MTE1_M, l0)
            asc.wait_flag(E.MTE1_M, l0)
            if s == 0:
                asc.wait_flag(E.FIX_M, 0)  # the previous tile's Fixpipe has read L0C
            asc.mmad(c1, a2[l0], b2[l0], asc.MmadParams(bm, bn, BK, 0, False, s == 0))
            asc.set_flag(E.M_MTE1, l0)
            steps_done += 1
        asc.set_flag(E.M_FIX, 0)
        asc.wait_flag(E.M_FIX, 0)
        asc.fixpipe(cg[gm0 * N + gn0:], c1, asc.FixpipeParamsV220(bn, bm, bm16, N, asc.QuantModes.F322F16))
        asc.set_flag(E.FIX_M, 0)
    for i in range(L1BUF):
        asc.wait_flag(E.MTE1_MTE2, i)
        asc.wait_flag(E.MTE1_MTE2, 2 + i)
    for i in range(2):
        asc.wait_flag(E.M_MTE1, i)
    asc.wait_flag(E.FIX_M, 0)


def tile_shapes(t: Tiling, core: int) -> dict[tuple, list]:
    """(rows, columns) of a tile -> the core's tiles of that shape, (m0, n0) in its share, N outer and M inner."""
    tn = min(t.single_n, N - core // t.m_blocks * t.single_n)
    shapes: dict[tuple, list] = {}
    for n0 in range(0, tn, t.base_n):
        for m0 in range(0, t.single_m, t.base_m):
            shapes.setdefault((min(t.base_m, t.single_m - m0), min(t.base_n, tn - n0)), []).append((m0, n0))
    return shapes


def sub_problem(t: Tiling, per_shape: int = 2) -> tuple:
    """The simulated tiles: ``per_shape`` consecutive tiles of each tile shape of core 0 (the tail cores run the
    same positions with their own widths)."""
    return tuple(tile for tiles in tile_shapes(t, 0).values() for tile in tiles[:per_shape])


def core_tiles(t: Tiling, core: int) -> list[tuple[int, int, int, int]]:
    """The output tiles of ``core`` over the whole problem, in the order it computes them: (row, column, rows,
    columns) in C, round by round (case 6-8: round r takes A's rows from r x M / 2, matmul.asc)."""
    mi, ni = core % t.m_blocks, core // t.m_blocks
    tiles = [tile for shape_tiles in tile_shapes(t, core).values() for tile in shape_tiles]
    tiles.sort(key=lambda mn: (mn[1], mn[0]))  # N outer, M inner
    tn = min(t.single_n, N - ni * t.single_n)
    return [(r * (M // t.rounds) + mi * t.single_m + m0, ni * t.single_n + n0, min(t.base_m, t.single_m - m0),
             min(t.base_n, tn - n0)) for r in range(t.rounds) for m0, n0 in tiles]


@functools.lru_cache(maxsize=16)
def l2_steady_state(t: Tiling, soc: str = "Ascend910B1") -> dict[int, tuple[float, float]]:
    """Per core, the share of its A and of its B bytes that HBM serves over the whole problem: (A, B).

    The L2 (``l2_bytes``, LRU; AD data_copy README 优化点3, 192 MB on A2) is replayed over the full problem at the
    grain of one tile's blocks: A's base_m rows over full K, B's base_n columns over full K, the tile of C (written,
    allocated: AD add_high_performance README). The cores go in lock step, tile after tile (they do the same work);
    within one tile step a block that another core has already brought in hits (the cores that read the same A or B
    share its lines; the README's case 6 counts A once from HBM per pass, then L2). A block that is in L2 hits, one
    that is not is read from HBM and evicts the least recently used blocks. This is the state the sub-problem's two
    tiles per shape cannot see (their lines are first touches)."""
    from collections import OrderedDict

    capacity = load(soc).l2_bytes
    lru: OrderedDict = OrderedDict()
    used = 0
    tiles = [core_tiles(t, core) for core in range(t.cores)]
    misses = {core: [0, 0, 0, 0] for core in range(t.cores)}  # A missed, A read, B missed, B read (bytes)
    for step in range(max(len(x) for x in tiles)):
        for core, mine in enumerate(tiles):
            if step >= len(mine):
                continue
            m0, n0, bm, bn = mine[step]
            for k, (key, size) in enumerate(((("a", m0), bm * K * 2), (("b", n0), bn * K * 2),
                                             (("c", m0, n0), bm * bn * 2))):
                hit = key in lru
                if hit:
                    lru.move_to_end(key)
                else:
                    lru[key] = size
                    used += size
                    while used > capacity:
                        used -= lru.popitem(last=False)[1]
                if k < 2:
                    misses[core][2 * k] += 0 if hit else size
                    misses[core][2 * k + 1] += size
    return {core: (a / max(1, ar), b / max(1, br)) for core, (a, ar, b, br) in misses.items()}


def hbm_shares(t: Tiling, trace, soc: str = "Ascend910B1"):
    """core -> {index of a GM -> L1 copy in its stream: its HBM share}: the steady state of
    :func:`l2_steady_state` for the copies of A (kernel argument ``a``) and of B (``bt``)."""
    steady = l2_steady_state(t, soc)

    def shares(core: int) -> dict[int, float]:
        out = {}
        for i, instr in enumerate(trace.cores[trace.stand_ins.get(core, core)]):
            if instr.op == "data_copy":
                buffer = next(acc.buffer for acc in instr.reads if acc.mem.is_global)
                out[i] = steady[core][0 if buffer == "a" else 1]
        return out

    return shares


@functools.lru_cache(maxsize=16)
def simulate(t: Tiling, per_shape: int = 2, soc: str = "Ascend910B1") -> LaunchSchedule:
    """The schedule of the sub-problem of ``t`` on all its cores (values not computed)."""
    a = np.zeros((M, K), np.float16)
    bt, c = np.zeros((N, K), np.float16), np.zeros((M, N), np.float16)
    args = (a, bt, c, t.single_m, t.single_n, t.m_blocks, t.base_m, t.base_n, t.base_k, t.step_ka, t.step_kb,
            t.l1_buffers, sub_problem(t, per_shape))
    trace = asc.launch(matmul_study_kernel, t.cores, args, soc=soc, executor=NO_VALUES).trace
    return schedule(trace, load(soc), hbm_shares(t, trace, soc))


@dataclass
class TileCost:
    """What one tile takes on one core: its span (us), per pipe busy time (us), its instructions and the busy time
    of each."""

    span: float
    busy: dict
    instrs: list
    instr_busy: list

    def busy_of(self, op: str) -> float:
        """Busy time (us) of the tile's ``op`` instructions."""
        return sum(b for i, b in zip(self.instrs, self.instr_busy) if i.op == op)


def tile_costs(sched: LaunchSchedule, core: int) -> list[TileCost]:
    """Per simulated tile of ``core``: from the previous tile's Fixpipe end to its own; the instructions up to and
    including its Fixpipe (the first tile also holds the start, the last the final waits)."""
    cs = sched.cores[core]
    ends = [i for i, instr in enumerate(cs.instrs) if instr.op == "fixpipe"]
    costs, start, t0 = [], 0, 0.0
    for k, i in enumerate(ends):
        stop = len(cs.instrs) if k == len(ends) - 1 else i + 1
        busy: dict = {}
        for j in range(start, stop):
            busy[PIPES[cs.pipes[j]]] = busy.get(PIPES[cs.pipes[j]], 0.0) + cs.busy[j]
        end = cs.finish_us if k == len(ends) - 1 else cs.end[i]
        costs.append(TileCost(end - t0, busy, cs.instrs[start:stop], cs.busy[start:stop]))
        start, t0 = stop, end
    return costs


def extrapolate(t: Tiling, sched: LaunchSchedule, core: int, params, per_shape: int = 2) -> dict[str, float]:
    """One core's predicted time and pipe times (us) over its whole share: the first simulated tile, then the second
    tile of each shape for every further tile of that shape (module docstring); the scalar column is the issue slots
    of every instruction (``scalar_cycles_per_call``), as ``fusekit.timing.Profile`` counts it."""
    shapes = tile_shapes(t, core)
    costs = tile_costs(sched, core)
    issue = params.cycles_us(params.scalar_cycles_per_call)
    total = {"time": 0.0, "scalar": 0.0, **{p: 0.0 for p in (Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.FIX)}}
    k = 0
    for n, tiles in enumerate(shapes.values()):
        per = min(len(tiles), per_shape)
        first, steady = costs[k], costs[k + per - 1]
        count = len(tiles) * t.rounds
        for tile, weight in ((first, 1), (steady, count - 1)):
            total["time"] += weight * tile.span
            total["scalar"] += weight * len(tile.instrs) * issue
            for pipe in (Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.FIX):
                total[pipe] += weight * tile.busy.get(pipe, 0.0)
        k += per
    return total


def predict_case(case: int, soc: str = "Ascend910B1", per_shape: int = 2) -> tuple[float, ...]:
    """The predicted figures of one case, in :data:`COLUMNS`' order (us): launch overhead plus the slowest core,
    then the mean over cores of the core time and of each pipe's time (msprof's aicore_time is the mean).
    ``per_shape``: simulated tiles per tile shape (the last one is the steady tile)."""
    t, params = CASES[case], load(soc)
    sched = simulate(t, per_shape, soc)
    cores = [extrapolate(t, sched, core, params, per_shape) for core in range(t.cores)]
    mean = {key: sum(c[key] for c in cores) / len(cores) for key in cores[0]}
    task = params.launch_us(t.cores) + max(c["time"] for c in cores)
    return (task, mean["time"], mean[Pipe.M], mean["scalar"], mean[Pipe.MTE1], mean[Pipe.MTE2], mean[Pipe.FIX])


def _tiles_per_core(t: Tiling) -> int:
    return sum(len(v) for v in tile_shapes(t, 0).values()) * t.rounds


def fit(soc: str = "Ascend910B1") -> dict[str, float]:
    """The cube parameters from cases 0 and 1 alone, in closed form: the published per-tile pipe time (column /
    tiles of the core) against the sub-problem's steady tile, whose other instructions on the pipe (its flags, at
    ``sync_cycles`` each) keep their model cost.

    - ``mmad_head_cycles``: aic_mac_time = Mmads x head + their cube cycles + flags; the mean of the two cases.
    - ``mte1_head_cycles``: aic_mte1_time = loads x head + bytes / the documented L1 -> L0A / L0B rates + flags; the
      mean, not below 0.
    - ``aic_mte2_request_ns``, ``aic_mte2_row_ns``: aic_mte2_time = copies x request + rows x row + bytes / PTO's
      GM -> L1 rate + flags; two cases, two unknowns (both cases copy rows of 128 B, so the byte rate is not
      separable from the row cost there: it is PTO's, 3p).
    - ``fix_gm_head_ns``, ``fix_gm_gbps``: aic_fixpipe_time = Fixpipes x head + bytes / rate + flags; two cases, two
      unknowns.
    Returns the values by parameter name.
    """
    params = load(soc)
    cycles = params.clock_ghz * 1e3  # per us
    heads, load_heads, mte2_rows, fix_rows = [], [], [], []
    for case in FITTED_CASES:
        t = CASES[case]
        steady = tile_costs(simulate(t, 2, soc), 0)[1]
        per_tile = [v / _tiles_per_core(t) for v in PUBLISHED[case]]

        def others(pipe, op):  # busy (us) of the pipe's instructions but ``op``
            return steady.busy.get(pipe, 0.0) - steady.busy_of(op)

        mmads = [i for i in steady.instrs if i.op == "mmad"]
        heads.append(((per_tile[2] - others(Pipe.M, "mmad")) * cycles - sum(i.repeats for i in mmads)) / len(mmads))
        loads = [i for i in steady.instrs if i.op == "load_data"]
        rate = {"L0A": params.mte1_l0a_bytes_per_cycle, "L0B": params.mte1_l0b_bytes_per_cycle}
        moved = sum(-(-i.nbytes // rate[i.writes[0].mem.name]) for i in loads)
        load_heads.append(((per_tile[4] - others(Pipe.MTE1, "load_data")) * cycles - moved) / len(loads))
        copies = [i for i in steady.instrs if i.op == "data_copy"]
        rows = sum(sum(1 for acc in i.reads if acc.mem.is_global) for i in copies)
        payload = sum(i.nbytes for i in copies) / params.aic_mte2_gbps
        mte2_rows.append((len(copies), rows, (per_tile[5] - others(Pipe.MTE2, "data_copy")) * 1e3 - payload))
        fixes = [i for i in steady.instrs if i.op == "fixpipe"]
        fix_rows.append((len(fixes), sum(i.nbytes for i in fixes), (per_tile[6] - others(Pipe.FIX, "fixpipe")) * 1e3))
    request, row = np.linalg.solve(np.array([r[:2] for r in mte2_rows], float), [r[2] for r in mte2_rows])
    head_ns, ns_per_byte = np.linalg.solve(np.array([r[:2] for r in fix_rows], float), [r[2] for r in fix_rows])
    return {"mmad_head_cycles": float(np.mean(heads)), "mte1_head_cycles": max(0.0, float(np.mean(load_heads))),
            "aic_mte2_request_ns": float(request), "aic_mte2_row_ns": float(row),
            "fix_gm_head_ns": float(head_ns), "fix_gm_gbps": float(1 / ns_per_byte)}


def roles(case: int) -> list[str]:
    """Per column of :data:`COLUMNS`: "fitted (...)", "validated" or "not modelled (...)"."""
    if case in FITTED_CASES:
        fitted = ["fitted (consequence)", "fitted (consequence)", "fitted (mmad_head_cycles)", "",
                  "fitted (mte1_head_cycles)", "fitted (aic_mte2_*)", "fitted (fix_gm_*)"]
    else:
        fitted = ["validated"] * len(COLUMNS)
        if CASES[case].l1_buffers > 1:
            fitted[6] = "not modelled (MDL Fixpipe)"
        if case == 8:
            fitted[6] = "not modelled (UnitFlag)"
    fitted[3] = "not modelled (API scalar)"
    return fitted


def cube_cases(soc: str = "Ascend910B1"):
    """Every case's published figures with the prediction, as ``fusekit.timing.studies`` rows."""
    from .studies import Case

    rows = []
    for case, published in PUBLISHED.items():
        predicted = predict_case(case, soc)
        for column, value, pub, role in zip(COLUMNS, predicted, published, roles(case)):
            label = f"case {case} {column}" + (f" ({CASES[case].label})" if column == COLUMNS[0] else "")
            rows.append((Case("matmul_high_perf", label, pub, "us", f"{MATMUL}, Case {case}", role), value))
    return rows
