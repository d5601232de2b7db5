"""The sanitizer: msSanitizer's four tools on any CPU, as analyses of the simulator's Trace.

    report = fusekit.sanitize(kernel)[core_num](*args)
    print(report.to_text()); assert report.ok

- memcheck: out-of-bounds and misaligned accesses (every one of a run: the access is clipped or
  skipped and the kernel goes on), partial operand overlap, UB overflow, leaked or badly freed
  queue tensors, two cores writing one 32-byte GM block, UB values overwritten before anything read
  them, hand-placed UB tensors that overlap while both are in use, scalar GM accesses the data
  cache gets wrong (``cachecheck``);
- racecheck: RAW / WAR / WAW between pipes of a core, between instructions of one pipe with no
  barrier (MTE2, MTE3; V without ``auto_sync``), or between cores, with no happens-before;
- initcheck: reads of never-written UB, of undefined DataCopyPad padding, of output GM before it
  is written, and output GM bytes no core writes;
- synccheck: wait_flag without an earlier set_flag (deadlock), redundant or unwaited set_flag,
  reserved event ids, state a core's kernel leaves set for the next kernel (atomic mode, Counter mask
  mode, a set_vector_mask mask) and a read of a register inherited from the previous kernel
  (``launch(initial_state=)``): ``statecheck``.

CANN's CPU twin debug runs instructions in order and cannot see races; msSanitizer needs an NPU.
Here the pipes' concurrency is reasoned about from the Trace's synchronisation (``fusekit.hb``).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from fusekit.asc.kinds import properties
from fusekit.asc.runtime import LAUNCH_OPTIONS, KernelError, KernelFunction, launch
from fusekit.asc.trace import Trace
from fusekit.hb import trace_order

from .cachecheck import cachecheck
from .findings import TOOLS, Finding, Report, merge
from .memcheck import block_overlaps, from_error, placement_overlaps
from .replay import ReplayExecutor
from .scan import scan
from .statecheck import statecheck
from .synccheck import synccheck

__all__ = ["Finding", "Report", "TOOLS", "analyze", "sanitize"]


def analyze(trace: Trace, *, error: KernelError | None = None, outputs=None, faults=()) -> list[Finding]:
    """All findings of one launch's Trace (and of the KernelError that stopped it, if any).

    Args:
        trace: the launch's Trace (for a failed launch, ``error.trace``).
        error: the KernelError the launch raised, reported as a finding.
        outputs: names of GM arguments that are pure outputs (reading them before writing is
            reported); default: the written buffers are checked only for bytes never written.
        faults: access faults collected during the launch (``launch(faults=)``), one finding each.
    """
    return _analyze(trace, trace_order(trace), error, outputs, faults)[0]


def _names(outputs) -> "set[str] | None":
    """outputs as a set of names (a single name may be given as a string)."""
    return None if outputs is None else {outputs} if isinstance(outputs, str) else set(outputs)


def _analyze(trace: Trace, orders, error, outputs, faults=()) -> tuple[list[Finding], list]:
    races, inits, pairs, lost = scan(trace, orders, _names(outputs))
    findings = [from_error(e) for e in faults] + ([from_error(error)] if error is not None else [])
    findings += block_overlaps(trace, orders) + placement_overlaps(trace, orders) + lost
    findings += cachecheck(trace, orders) + races + inits + synccheck(trace) + statecheck(trace)
    if error is not None or any(f.kind == "deadlock" for f in findings):
        # bytes a stopped or hung kernel did not write are a consequence, not a finding of their own
        findings = [f for f in findings if f.kind != "output never written"]
    return sorted(merge(findings), key=lambda f: TOOLS.index(f.tool)), pairs


SANITIZE_OPTIONS = ("outputs", "replay", *LAUNCH_OPTIONS)  # keywords of sanitize(kernel, ...)


def sanitize(kernel: KernelFunction, *, outputs=None, replay: bool = False, soc=None,
             strict: bool = True, auto_sync: "bool | None" = None, overflow: "str | None" = None,
             initial_state=None) -> "Sanitizer":
    """Wrap ``kernel`` so that ``sanitize(kernel)[core_num](*args)`` runs it and returns a :class:`Report`.

    Every out-of-bounds or misaligned access of the run is a memcheck finding:
    the access is clipped (``data_copy``) or skipped and the kernel goes on, so one run shows all
    of them, as msSanitizer does. A plain launch raises KernelError at the first.

    Args:
        kernel: an ``@asc.jit`` kernel.
        outputs: GM argument names that are pure outputs (see :func:`analyze`).
        replay: if races are found, run the kernel again in an adversarial legal order and report
            how the outputs differ (the numbers the NPU could produce).
        soc, strict, overflow: launch options (see ``fusekit.asc.launch``).
        initial_state: an earlier launch's LaunchResult, Trace or Report: each core starts with the
            registers that launch's core left (``fusekit.asc.launch``), to check a kernel as the NPU runs it
            after that one.
        auto_sync: the kernel is built with automatic synchronisation (default: the kernel's
            ``@asc.jit(auto_sync=)``, else True as CANN's projects and pyasc build). False: dependent
            PIPE_V instructions need ``pipe_barrier(PIPE_V)`` and a pair without one is a race
            (``fusekit.hb``, rule 2).

    Raises:
        TypeError, ValueError: bad launch parameters (not kernel mistakes, which become findings),
            including a sanitizer option passed to the launch instead of to ``sanitize``.
    """
    options = {"soc": soc, "strict": strict, "auto_sync": auto_sync}
    if overflow is not None:
        options["overflow"] = overflow
    if initial_state is not None:
        options["initial_state"] = initial_state
    return Sanitizer(kernel, outputs, replay, options)


class Sanitizer:
    def __init__(self, kernel: KernelFunction, outputs, replay: bool, options: dict):
        self.kernel, self.outputs, self.replay, self.options = kernel, outputs, replay, options

    @property
    def soc(self):
        return self.options["soc"]

    @property
    def strict(self) -> bool:
        return self.options["strict"]

    def __getitem__(self, key) -> Callable[..., Report]:
        core_num = key[0] if isinstance(key, tuple) else key

        def launcher(*args, **kwargs) -> Report:
            self._check_options(kwargs)
            return self.run(core_num, args, kwargs)

        return launcher

    def _check_options(self, kwargs: dict) -> None:
        """A sanitizer option given to the launch (``sanitize(k)[n](..., soc=...)``) is refused
        with the right place for it, unless the kernel has a parameter of that name."""
        params = self.kernel.signature.parameters
        misplaced = [k for k in SANITIZE_OPTIONS if k in kwargs and k not in params]
        if misplaced:
            name = self.kernel.fn.__name__
            given = ", ".join(f"{k}={kwargs[k]!r}" for k in misplaced)
            raise TypeError(f"{given} is an option of the sanitizer, not an argument of {name}: pass it as "
                            f"fusekit.sanitize({name}, {given})[core_num](...); sanitize(kernel)[core_num](...) "
                            "takes only the kernel's arguments")

    def run(self, core_num: int, args: tuple, kwargs: dict) -> Report:
        self._check_outputs(args, kwargs)
        pristine = _copy_arrays(args, kwargs) if self.replay else None
        error, faults = None, []
        try:
            trace = launch(self.kernel, core_num, args, kwargs, faults=faults, **self.options).trace
        except KernelError as exc:
            error, trace = exc, exc.trace
        orders = trace_order(trace)
        findings, pairs = _analyze(trace, orders, error, self.outputs, faults)
        report = Report(self.kernel.fn.__name__, int(core_num), findings, error, trace=trace)
        if self.kernel.options.get("insert_sync"):
            report.notes.append("the kernel asks pyasc to insert synchronisation (insert_sync=True); fusekit checks "
                                "the kernel as written, so races pyasc would fix are reported too")
        if faults:
            report.notes.append(f"{len(faults)} faulty access(es) were clipped or skipped so that the run could go on; "
                                "outputs computed after the first are not what the NPU would give")
        if pristine is not None and pairs and error is None and not faults:
            report.replay = self._replay(core_num, trace, orders, pairs, args, kwargs, pristine)
        return report

    def _check_outputs(self, args: tuple, kwargs: dict) -> None:
        if self.outputs is None:
            return
        arrays = _arrays_by_name(self.kernel, args, kwargs)
        unknown = sorted(_names(self.outputs) - set(arrays))
        if unknown:
            raise ValueError(f"outputs={unknown} are not GM arguments of {self.kernel.fn.__name__}; its GM arguments "
                             f"are {', '.join(arrays) or 'none'}")

    def _replay(self, core_num: int, trace: Trace, orders, pairs, args: tuple, kwargs: dict,
                pristine) -> dict[str, str]:
        scalar_reads = {(c, i) for c, instrs in enumerate(trace.cores) for i, ins in enumerate(instrs)
                        if properties(ins).blocks_scalar}
        executor = ReplayExecutor(orders, pairs, scalar_reads)
        across_cores = any(a[0] != b[0] for a, b in pairs)
        replay_args, replay_kwargs = pristine
        try:
            launch(self.kernel, core_num, replay_args, replay_kwargs, executor=executor, reverse_cores=across_cores,
                   device_output=None, **self.options)
        except KernelError as exc:
            return {"(replay)": f"the reordered run stopped: {exc}"}
        before = _arrays_by_name(self.kernel, args, kwargs)
        after = _arrays_by_name(self.kernel, replay_args, replay_kwargs)
        diffs = {name: _difference(before[name], after[name]) for name in before}
        diffs = {name: text for name, text in diffs.items() if text}
        if not executor.reordered and not across_cores:
            return {"(replay)": "no race could be replayed: races whose first access is a scalar read are not "
                                "reordered"}
        return diffs or {"(replay)": f"{executor.reordered} racy pair(s) reordered; the outputs happen to be the same"}


def _copy_arrays(args: tuple, kwargs: dict):
    copy = lambda v: v.copy() if isinstance(v, np.ndarray) else v  # noqa: E731
    return tuple(copy(a) for a in args), {k: copy(v) for k, v in kwargs.items()}


def _arrays_by_name(kernel: KernelFunction, args: tuple, kwargs: dict) -> dict[str, np.ndarray]:
    try:
        bound = inspect.signature(kernel.fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{kernel.fn.__name__}: {exc}") from None
    return {k: v for k, v in bound.arguments.items() if isinstance(v, np.ndarray)}


def _difference(in_order: np.ndarray, racy: np.ndarray) -> str:
    a, b = in_order.reshape(-1), racy.reshape(-1)
    differ = ~((a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))))
    if not differ.any():
        return ""
    first = int(np.argmax(differ))
    return (f"{int(differ.sum())} of {a.size} elements differ; first at [{first}]: in program order {a[first]}, "
            f"in the racy order {b[first]}")
