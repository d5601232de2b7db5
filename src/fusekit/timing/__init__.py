"""Timing model and profiler: predict a simulated kernel's per-pipe timeline and its time on the NPU.

    prof = fusekit.profile(kernel, soc="Ascend910B1")[48](*args)
    prof.kernel_time_us; print(prof.table()); prof.write_trace("trace.json"); prof.write_csv(...); prof.plot(...)

The recorded Trace is scheduled on each core's pipes (``fusekit.timing.schedule``) with costs from
the SoC's data file (``fusekit.timing.params``), as msprof's op simulator lays out an instruction
timeline (PROF). Outputs follow msprof: kernel time in microseconds, ``PipeUtilization.csv``
columns, a Chrome-trace ``trace.json`` that opens in Perfetto.

Model (``fusekit.timing.schedule``): per-pipe in-order timelines joined by the sanitizer's
happens-before edges; vector costs from the documented throughput table and the UB bank-conflict
rules; GM transfers pipelined in the MTE engine (per-request, per-burst and per-byte costs, 512 B
alignment of each burst) and sharing, chip-wide, the HBM bandwidth (misses, bypassing accesses,
write-backs) and the L2 bandwidth (hits) by processor sharing; an L2 of ``l2_bytes`` whose hits
come from each access's reuse distance (bytes allocated since, times the cores), with
``GlobalTensor.set_l2_cache_hint`` (CACHE_MODE_DISABLE bypasses); cores reading the same GM window
at once serialise on it; each launch pays a head overhead growing with its core count.

Calibration (``benchmarks/calibrate_timing.py``; every value's source is in the SoC data file).
Fitted, each to one published figure: the MTE engine's request, burst and byte costs (closed form,
DataCopy scenarios 1 and 2 and the add study's case 1 aiv_mte2_time), the transfer latency (add
case 1, 6909.6 us: it reaches its bound 0 and the case stays +6.5 %: the model's flag chain
of a single-buffered tile is ~25 ns longer than measured), the HBM efficiency of small bursts
(DataCopy scenario 3) and of large ones (add case 5), the same-window rate (DataCopy scenario 7),
the small-burst HBM efficiency of transfers that bypass L2 (DataCopy scenario 8: 48 cores reading
distinct 128 B rows with CACHE_MODE_DISABLE reach 0.94 TB/s where the same bursts reach 1.37 TB/s
through L2 in scenario 2; the documents do not say why, so this one parameter is fitted to the one
case that shows it), and the vector start-up and bank-conflict cycles (bank_conflict_ub
scenarios 1, 2, 5). Derived from
published figures without fitting the model: the head overhead per launch (Task Duration - aiv_time
and aiv_time - aiv_mte2_time of the published rows; 0.46 us on 1 core, 14.3 us on 48), the L2
size (192 MB), line (128 B) and bandwidth (5.2 TB/s), the GM bandwidth (1.8 TB/s).

Validation (``fusekit validate-timing``, ``fusekit.timing.studies``): everything else is predicted
only: DataCopy scenarios 1, 2 (Task Durations), 4, 5 and 6, add cases 2-4 and case 1's MTE2
ratio, the bank study's other five layouts, the throughput table, and the seed article's 1.8x;
all within 10 %. The article's ratio comes out at 1.97x on
fusekit's default tiling (47-48 cores at 256K): the documented head overhead (14.3 us per 48-core
launch) dwarfs the ~1-2 us of work, so two launches cost about twice one. The model's ratio falls
with the core count as the head overhead does (1.71x on 8 cores, 1.83x on 12, where the 256K
kernel is also fastest: ``fusekit tune``); the article does not say how many cores it used.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Callable

from fusekit.asc.runtime import KernelFunction, launch
from fusekit.asc.trace import Instr, Pipe
from fusekit.files import write_atomic
from fusekit.machine import AIV, CORE_KINDS, PATHS, PIPES

from .params import TimingParams, load
from .schedule import CoreSchedule, LaunchSchedule, schedule

__all__ = ["NO_VALUES", "Profile", "TimingParams", "load", "profile", "predict", "schedule"]

STUDY_NAMES = ("bank_conflict_ub", "throughput", "add", "data_copy", "matmul")  # fusekit.timing.studies.STUDIES

KIND = AIV  # the default core kind: its row names msprof's columns (fusekit.machine.cores)


def pipe_columns(kind=KIND) -> list[tuple[object, str, str]]:
    """(pipe, time column, ratio column) of msprof's PipeUtilization.csv per pipe of ``kind``, in msprof's order:
    ``<kind prefix>_<pipe's msprof stem>_time(us)`` / ``_ratio`` (``aiv_vec_time(us)``, ``aiv_vec_ratio``, ...)."""
    return [(pipe, f"{kind.msprof_prefix}_{pipe.msprof}_time(us)", f"{kind.msprof_prefix}_{pipe.msprof}_ratio")
            for pipe in kind.profiled]


def csv_columns(kind=KIND) -> tuple[str, ...]:
    """msprof's PipeUtilization.csv columns for cores of ``kind`` (``aiv_time(us)`` ... / ``aic_time(us)`` ...), then
    which launch a row is."""
    prefix = kind.msprof_prefix
    return ("block_id", f"{prefix}_time(us)", f"{prefix}_total_cycles",
            *(column for _, time, ratio in pipe_columns(kind) for column in (time, ratio)), "launch_id")


CSV_COLUMNS = csv_columns()
TIME_COLUMN, CYCLES_COLUMN = CSV_COLUMNS[1], CSV_COLUMNS[2]


class _NoValues:
    """An executor that records instructions but computes nothing: for timing a Trace only."""

    def run(self, instr: Instr, effect) -> None:
        pass

    def end_core(self, core: int) -> None:
        pass


NO_VALUES = _NoValues()


@dataclass
class Profile:
    """Predicted timing of one or more launches run one after another (e.g. Add then Muls).

    Attributes:
        launches: the schedule of every launch.
        params: the SoC's timing parameters.
    """

    launches: list[LaunchSchedule]
    params: TimingParams
    findings: list = field(default_factory=list)  # sanitizer findings: a racy or hanging kernel's time means little

    @property
    def kernel_time_us(self) -> float:
        """Predicted time of all launches, launch overheads included, in microseconds."""
        return sum(run.time_us for run in self.launches)

    @property
    def gm_bytes(self) -> int:
        """Bytes moved between GM and UB by all cores: the records of the pipes of the data paths with a global end
        (MTE2, MTE3; ``fusekit.machine.paths``)."""
        pipes = {path.pipe for path in PATHS.values() if path.src.is_global or path.dst.is_global}
        return sum(instr.nbytes for run in self.launches for sched in run.cores for instr in sched.instrs
                   if instr.pipe in pipes)

    @property
    def bandwidth_gbps(self) -> float:
        """Achieved GM bandwidth over the kernel time, GB/s (compare ``params.gm_bandwidth_gbps``)."""
        return self.gm_bytes / self.kernel_time_us / 1e3 if self.kernel_time_us else 0.0

    @property
    def kind(self):
        """The core kind of the first launch (its msprof columns head :meth:`table`; ``fusekit.machine.cores``)."""
        return CORE_KINDS[self.launches[0].trace.core_kind] if self.launches else KIND

    def utilization(self) -> list[dict]:
        """One row per core (per launch) in msprof PipeUtilization.csv's columns for the launch's core kind."""
        rows = []
        for index, run in enumerate(self.launches):
            for core, sched in enumerate(run.cores):
                kind = CORE_KINDS[run.trace.kind_of(core)]
                _, time_column, cycles_column = csv_columns(kind)[:3]
                busy = _pipe_busy(sched, self.params)
                total = sched.finish_us
                row = {"block_id": run.trace.block_of(core), time_column: round(total, 4),
                       cycles_column: round(total * self.params.clock_ghz * 1e3)}
                for pipe, time, ratio in pipe_columns(kind):
                    row[time], row[ratio] = round(busy[pipe], 4), _ratio(busy[pipe], total)
                row["launch_id"] = index
                rows.append(row)
        return rows

    def table(self, cores: int = 4) -> str:
        """Kernel time, bandwidth and the utilisation of the first ``cores`` cores and the last of each core kind
        (one table for the AIVs, one for the AICs of a mix kernel), as text."""
        heads = ", ".join(sorted({f"{run.overhead_us:.3g}" for run in self.launches}))
        lines = [f"kernel time {self.kernel_time_us:.2f} us on {self.params.soc} ({len(self.launches)} launch(es), "
                 f"{heads} us launch overhead each); GM traffic {self.gm_bytes / 2**20:.2f} "
                 f"MiB at {self.bandwidth_gbps:.0f} GB/s of {self.params.gm_bandwidth_gbps:.0f} GB/s peak"]
        all_rows = self.utilization()
        for kind in self.kinds:
            columns, time_column = pipe_columns(kind), csv_columns(kind)[1]
            rows = [row for row in all_rows if time_column in row]
            shown = rows if len(rows) <= cores + 1 else rows[:cores] + rows[-1:]
            lines.append(f"{'core':>5} {time_column:>13} " + " ".join(f"{p.msprof:>{_width(p)}}" for p, _, _ in columns))
            for row in shown:
                lines.append(f"{row['block_id']:>5} {row[time_column]:>13.2f} "
                             + " ".join(f"{row[ratio]:>{_width(p)}.3f}" for p, _, ratio in columns))
            if len(rows) > len(shown):
                lines.insert(len(lines) - 1, f"{'...':>5}")
        if self.findings:
            kinds = ", ".join(sorted({f"{f.tool} {f.kind}" for f in self.findings}))
            lines.append(f"warning: the sanitizer finds {len(self.findings)} problem(s) ({kinds}); on the NPU this kernel "
                         "may hang or compute garbage, so its predicted time means little (fusekit.sanitize for details)")
        return "\n".join(lines)

    @property
    def kinds(self) -> list:
        """The core kinds of the launches' cores, in order of appearance (``fusekit.machine.cores``)."""
        return list(dict.fromkeys(CORE_KINDS[run.trace.kind_of(core)] for run in self.launches
                                  for core in range(len(run.cores)))) or [KIND]

    def write_csv(self, path) -> None:
        """PipeUtilization.csv (msprof's columns), written atomically."""
        buffer = io.StringIO()
        fields = list(dict.fromkeys(column for kind in self.kinds for column in csv_columns(kind)))
        fields.append(fields.pop(fields.index("launch_id")))
        writer = csv.DictWriter(buffer, fieldnames=fields, restval="")
        writer.writeheader()
        writer.writerows(self.utilization())
        write_atomic(path, lambda f: f.write(buffer.getvalue().encode()))

    def chrome_trace(self) -> dict:
        """The timeline in Chrome trace format: one process per core, one track (thread) per pipe, in us."""
        events, offset = [], 0.0
        for run in self.launches:
            offset += run.overhead_us
            issue = self.params.cycles_us(self.params.scalar_cycles_per_call)
            for core, sched in enumerate(run.cores):
                for instr, at in zip(sched.instrs, sched.issue):  # the scalar unit issuing each call (PIPE_S busy)
                    ts, until = round(offset + at - issue, 4), round(offset + at, 4)
                    events.append({"name": f"issue {instr.op}", "ph": "X", "ts": ts, "dur": round(until - ts, 4),
                                   "pid": core, "tid": 0, "args": {}})
                for instr, pipe, start, end in zip(sched.instrs, sched.pipes, sched.start, sched.free or sched.end):
                    ts, until = round(offset + start, 4), round(offset + end, 4)  # rounded ends keep a track free of overlaps
                    events.append({"name": f"{instr.op} {instr.file.rsplit('/', 1)[-1]}:{instr.line}", "ph": "X",
                                   "ts": ts, "dur": round(until - ts, 4), "pid": core, "tid": pipe,
                                   "args": {"bytes": instr.nbytes}})
            offset += run.makespan_us
        widest = max(self.launches, key=lambda run: len(run.trace.cores), default=None)
        for core in range(len(widest.trace.cores) if widest else 0):
            trace = widest.trace
            events.append({"name": "process_name", "ph": "M", "pid": core, "args": {"name": trace.core_label(core)}})
            for index, pipe in enumerate(PIPES):  # a track per pipe of the core's kind, numbered as in PIPES
                if pipe in CORE_KINDS[trace.kind_of(core)].pipes:
                    events.append({"name": "thread_name", "ph": "M", "pid": core, "tid": index,
                                   "args": {"name": f"PIPE_{pipe.value}"}})
        return {"traceEvents": events}

    def write_trace(self, path) -> None:
        """Chrome-trace JSON (open it in https://ui.perfetto.dev), written atomically."""
        text = json.dumps(self.chrome_trace())
        write_atomic(path, lambda f: f.write(text.encode()))

    def plot(self, path, cores: int = 4) -> None:
        """PNG: the pipe timeline of the first ``cores`` cores and every core's pipe utilisation.

        Raises:
            ImportError: matplotlib is not installed (``pip install 'ascend-fusekit[plot]'``).
            ValueError: nothing ran (no launches, e.g. n = 0).
        """
        from .plot import plot_profile

        if not self.launches:
            raise ValueError("nothing to plot: no kernel was launched (n = 0)")
        plot_profile(self, path, cores)


def _ratio(busy: float, total: float) -> float:
    return round(busy / total, 4) if total else 0.0


def _width(pipe) -> int:
    """Width of a pipe's ratio column in :meth:`Profile.table`: its msprof stem and a space, at least 6."""
    return max(6, len(pipe.msprof) + 1)


def _pipe_busy(sched: CoreSchedule, params: TimingParams) -> dict[Pipe, float]:
    busy = {pipe: 0.0 for pipe in PIPES}
    for pipe_index, b in zip(sched.pipes, sched.busy):
        busy[PIPES[pipe_index]] += b
    busy[Pipe.S] += len(sched.instrs) * params.cycles_us(params.scalar_cycles_per_call)  # issuing every call
    return busy


def predict(traces, soc=None) -> Profile:
    """Schedule the Traces of launches run one after another on ``soc`` (default: the first trace's SoC)."""
    traces = list(traces)
    params = load(soc or (traces[0].soc if traces else None))
    return Profile([schedule(trace, params) for trace in traces], params)


def profile(kernel: KernelFunction, *, soc=None, values: bool = True, strict: bool = True,
            progress: Callable[[], None] | None = None, overflow: "str | None" = None,
            auto_sync: "bool | None" = None, initial_state=None) -> "Profiler":
    """Wrap ``kernel`` so that ``profile(kernel)[core_num](*args)`` runs it and returns a :class:`Profile`.

    Args:
        kernel: any ``@asc.jit`` kernel.
        soc: SoC to simulate and time (default Ascend910B1).
        values: compute the kernel's results too (False: only record the Trace, faster).
        strict, progress, overflow, auto_sync, initial_state: launch options, as ``fusekit.sanitize``
            takes them (see ``fusekit.asc.launch``). They are given here, not to ``[core_num](...)``,
            which takes only the kernel's arguments (a launch option there is refused, naming this place).
    """
    options = {"soc": soc, "strict": strict, "progress": progress, "auto_sync": auto_sync}
    if overflow is not None:
        options["overflow"] = overflow
    if initial_state is not None:
        options["initial_state"] = initial_state
    return Profiler(kernel, values, options)


# keywords that profile() takes and its launcher refuses (the launch options and values=)
PROFILE_OPTIONS = ("soc", "strict", "overflow", "auto_sync", "initial_state", "values", "progress")


class Profiler:
    def __init__(self, kernel: KernelFunction, values: bool, options: dict):
        self.kernel, self.values, self.options = kernel, values, options

    @property
    def soc(self):
        return self.options["soc"]

    def __getitem__(self, key) -> Callable[..., Profile]:
        core_num = key[0] if isinstance(key, tuple) else key

        def launcher(*args, **kwargs) -> Profile:
            from fusekit.sanitizer import analyze

            params = self.kernel.signature.parameters
            misplaced = [k for k in PROFILE_OPTIONS if k in kwargs and k not in params]
            if misplaced:
                name = self.kernel.fn.__name__
                given = ", ".join(f"{k}={kwargs[k]!r}" if len(repr(kwargs[k])) <= 40
                                  else f"{k}=<{type(kwargs[k]).__name__}>" for k in misplaced)
                raise TypeError(f"{given} is an option of the profiler, not an argument of {name}: pass it as "
                                f"fusekit.profile({name}, {given})[core_num](...); profile(kernel)[core_num](...) "
                                "takes only the kernel's arguments")
            result = launch(self.kernel, core_num, args, kwargs,
                            executor=None if self.values else NO_VALUES, **self.options)
            prof = predict([result.trace], self.soc)
            prof.findings = analyze(result.trace)
            return prof

        return launcher
