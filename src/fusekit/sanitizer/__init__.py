"""The sanitizer: msSanitizer's four tools on any CPU, as analyses of the simulator's Trace.

    report = fusekit.sanitize(kernel)[core_num](*args)
    print(report.to_text()); assert report.ok

- memcheck: out-of-bounds and misaligned accesses, partial operand overlap, UB overflow, leaked or
  badly freed queue tensors, two cores writing one 32-byte GM block;
- racecheck: RAW / WAR / WAW between pipes of a core or between cores with no happens-before;
- initcheck: reads of never-written UB, of undefined DataCopyPad padding, of output GM before it
  is written, and output GM bytes no core writes;
- synccheck: wait_flag without an earlier set_flag (deadlock), redundant or unwaited set_flag,
  reserved event ids.

CANN's CPU twin debug runs instructions in order and cannot see races; msSanitizer needs an NPU.
Here the pipes' concurrency is reasoned about from the Trace's synchronisation (``fusekit.hb``).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from fusekit.asc.runtime import KernelError, KernelFunction, launch
from fusekit.asc.trace import Trace
from fusekit.hb import trace_order

from .findings import TOOLS, Finding, Report, merge
from .memcheck import block_overlaps, from_error
from .replay import ReplayExecutor
from .scan import scan
from .synccheck import synccheck

__all__ = ["Finding", "Report", "TOOLS", "analyze", "sanitize"]


def analyze(trace: Trace, *, error: KernelError | None = None, outputs=None) -> list[Finding]:
    """All findings of one launch's Trace (and of the KernelError that stopped it, if any).

    Args:
        trace: the launch's Trace (for a failed launch, ``error.trace``).
        error: the KernelError the launch raised, reported as a finding.
        outputs: names of GM arguments that are pure outputs (reading them before writing is
            reported); default: the written buffers are checked only for bytes never written.
    """
    return _analyze(trace, trace_order(trace), error, outputs)[0]


def _names(outputs) -> "set[str] | None":
    """outputs as a set of names (a single name may be given as a string)."""
    return None if outputs is None else {outputs} if isinstance(outputs, str) else set(outputs)


def _analyze(trace: Trace, orders, error, outputs) -> tuple[list[Finding], list]:
    races, inits, pairs = scan(trace, orders, _names(outputs))
    findings = [from_error(error)] if error is not None else []
    findings += block_overlaps(trace, orders) + races + inits + synccheck(trace)
    if error is not None or any(f.kind == "deadlock" for f in findings):
        # bytes a stopped or hung kernel did not write are a consequence, not a finding of their own
        findings = [f for f in findings if f.kind != "output never written"]
    return sorted(merge(findings), key=lambda f: TOOLS.index(f.tool)), pairs


def sanitize(kernel: KernelFunction, *, outputs=None, replay: bool = False, soc=None,
             strict: bool = True) -> "Sanitizer":
    """Wrap ``kernel`` so that ``sanitize(kernel)[core_num](*args)`` runs it and returns a :class:`Report`.

    Args:
        kernel: an ``@asc.jit`` kernel.
        outputs: GM argument names that are pure outputs (see :func:`analyze`).
        replay: if races are found, run the kernel again in an adversarial legal order and report
            how the outputs differ (the numbers the NPU could produce).
        soc, strict: launch options (see ``fusekit.asc.launch``).

    Raises:
        TypeError, ValueError: bad launch parameters (not kernel mistakes, which become findings).
    """
    return Sanitizer(kernel, outputs, replay, soc, strict)


class Sanitizer:
    def __init__(self, kernel: KernelFunction, outputs, replay: bool, soc, strict: bool):
        self.kernel, self.outputs, self.replay, self.soc, self.strict = kernel, outputs, replay, soc, strict

    def __getitem__(self, key) -> Callable[..., Report]:
        core_num = key[0] if isinstance(key, tuple) else key

        def launcher(*args, **kwargs) -> Report:
            return self.run(core_num, args, kwargs)

        return launcher

    def run(self, core_num: int, args: tuple, kwargs: dict) -> Report:
        self._check_outputs(args, kwargs)
        pristine = _copy_arrays(args, kwargs) if self.replay else None
        error = None
        try:
            trace = launch(self.kernel, core_num, args, kwargs, soc=self.soc, strict=self.strict).trace
        except KernelError as exc:
            error, trace = exc, exc.trace
        orders = trace_order(trace)
        findings, pairs = _analyze(trace, orders, error, self.outputs)
        report = Report(self.kernel.fn.__name__, int(core_num), findings, error, trace=trace)
        if self.kernel.options.get("insert_sync"):
            report.notes.append("the kernel asks pyasc to insert synchronisation (insert_sync=True); fusekit checks "
                                "the kernel as written, so races pyasc would fix are reported too")
        if pristine is not None and pairs and error is None:
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
                        if ins.op == "get_value"}
        executor = ReplayExecutor(orders, pairs, scalar_reads)
        across_cores = any(a[0] != b[0] for a, b in pairs)
        replay_args, replay_kwargs = pristine
        try:
            launch(self.kernel, core_num, replay_args, replay_kwargs, soc=self.soc, strict=self.strict,
                   executor=executor, reverse_cores=across_cores, device_output=None)
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
