"""The lockstep executor: a launch's cores run in groups that follow one instruction stream, the kernel's Python
once per group (issue 20's performance study, design (i) "lockstep SPMD cores").

The launch starts as one group of all its cores (of at most :data:`GROUP_BYTES` of stacked local memory: a launch
of more cores starts as several groups of consecutive cores). Where the cores of a group part ways (a branch or a
plain-int conversion on a lane value, a GM layout that is not one strided view: :class:`~.signals.Divergence`), the
group's GM writes are undone, its records dropped, and it reruns as two groups: the cores that went its first core's
way, then the others (``core_share``'s ``get_block_idx() == get_block_num() - 1`` splits 48 cores into 47 + 1
before the first instruction). Groups run one after another. A KernelError, the first faulting core in block order
and the partial Trace are the reference executor's: the launch reruns there (below). The order groups run in is not
the block order, but it never shows: a core that could see another's GM writes sends the launch to the reference
executor.

The result is exact or not used. The launch goes to the reference executor (``fusekit.asc.runtime``: one core after
another in block order), from the original GM contents, when:

- before it starts (:func:`refusal`): ``FUSEKIT_EXECUTOR=reference``, an executor (the sanitizer's race replay),
  ``sample_cores``, ``reverse_cores``, ``initial_state``, one core, a compiled C++ kernel (:mod:`fusekit.cpp`), a kernel that
  synchronises cores (``sync_all``, cross-core flags), or one whose Python has effects outside the simulator
  (``fusekit.asc.lockstep.purity``);
- while it runs: an instruction or effect the groups do not run (``fusekit.asc.lockstep.group``), any KernelError
  (the reference names its first faulting core in block order, with its partial Trace; under the sanitizer it
  collects the access faults, ``launch(faults=)``), any other exception of the kernel;
- after it ran: a core read or wrote GM bytes another core wrote (``fusekit.asc.lockstep.crossing``): the reference's
  sequential order decides what such a kernel computes.

Otherwise its outputs and its Trace (every field of every ``Instr`` of every core, built on first read of
``Trace.cores``) are the reference executor's; ``Trace.executor`` says which one ran and ``Trace.fallback`` why the
lockstep executor did not. ``progress`` is called once per core when the launch has run (the reference executor
calls it as each core ends).
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import Callable

from .. import corestate
from ..runtime import GlobalAddress, KernelError, KernelFunction, _calls_sync_all, _set_current
from ..trace import Trace
from . import expand, purity
from .crossing import crossing
from .group import GroupCore
from .memory import GroupGm
from .signals import Divergence, Unsupported

ENV = "FUSEKIT_EXECUTOR"  # "reference" forces the reference executor; "lockstep" or unset: the default choice
EXECUTORS = ("lockstep", "reference")
GROUP_BYTES = 64 << 20  # the most local memory one group stacks: a launch of more cores starts as several groups


@dataclass
class Refused:
    """The lockstep executor gave the launch back, having called ``progress`` for none of its cores: ``reason``
    (``Trace.fallback``)."""

    reason: str


def refusal(kernel: KernelFunction, core_num: int, bound: dict, *, executor=None, faults=None,
            sample_cores: bool = False, reverse_cores: bool = False, initial_state=None) -> str | None:
    """Why the launch runs on the reference executor without trying the lockstep one (module docstring), or None.

    Raises:
        ValueError: ``FUSEKIT_EXECUTOR`` names no executor.
    """
    chosen = os.environ.get(ENV, "") or "lockstep"
    if chosen not in EXECUTORS:
        raise ValueError(f"{ENV}={chosen!r}: expected one of {', '.join(EXECUTORS)}")
    if chosen == "reference":
        return f"{ENV}=reference"
    if executor is not None:
        return "an executor decides when effects land (the sanitizer's race replay)"
    # a faults list (the sanitizer's first run) is no reason: an access fault is a KernelError here, which sends the
    # launch to the reference, where it is collected; without one, collecting changes nothing
    if sample_cores:
        return "sample_cores"
    if reverse_cores:
        return "reverse_cores"
    if initial_state is not None:
        return "initial_state"
    if core_num == 1:
        return "one core"
    if getattr(kernel, "runs_natively", False):
        return "a compiled C++ kernel (its scalar code runs natively, once per core)"
    if _calls_sync_all(kernel.fn):
        return "the kernel synchronises cores (sync_all, cross-core flags)"
    why = purity.refusal(kernel, bound)
    return None if why is None else f"the kernel's Python has effects outside the simulator: {why}"


@dataclass
class _Ran:
    """A group that ended: its cores, templates, overflows (``GroupCore.lane_overflows``), end states per core."""

    members: tuple[int, ...]
    templates: list
    overflows: list
    end_states: list


def run(kernel: KernelFunction, core_num: int, bound: dict, gm: dict, trace: Trace, soc, strict: bool,
        overflow_mode: str, progress: Callable[[], None] | None) -> "Trace | Refused":
    """Run the launch in lockstep groups and fill ``trace`` (module docstring).

    Args:
        bound: the kernel's arguments as ``fusekit.asc.runtime.launch`` bound them (GM buffers as GlobalAddress).
        gm: the launch's GmArray by argument name (copied back here when written).

    Returns:
        ``trace``, filled, with the outputs copied back; or :class:`Refused`, with GM as the run left it (the caller
        reloads it from the arguments).
    """
    ran: list[_Ran] = []
    local = sum(space.size(soc) for space in GroupCore.kind.spaces) or 1
    width = max(GROUP_BYTES // local, 1)  # cores per starting group (48 x 192 KiB = 9 MiB: all of a 910B's)
    work = [tuple(range(first, min(first + width, core_num))) for first in range(0, core_num, width)]
    collector_was_on = gc.isenabled()
    gc.disable()  # the groups only add to the templates (as the reference launch, which pauses the collector too)
    try:
        while work:
            members = work.pop(0)
            try:
                ran.append(_group(kernel, members, core_num, bound, gm, soc, strict, overflow_mode))
            except Divergence as split:
                keep = split.keep
                first = tuple(m for m, k in zip(members, keep) if k)
                rest = tuple(m for m, k in zip(members, keep) if not k)
                if not first or not rest:
                    return Refused("a divergence that does not split its group")
                work[:0] = [first, rest]
                continue
            except Unsupported as exc:
                return Refused(exc.reason)
            except KernelError as exc:
                return Refused(f"a KernelError on a core group ({exc.op}): the reference executor names its first "
                               "faulting core in block order")
            except Exception as exc:  # noqa: BLE001 - the kernel's own exception: the reference run raises it again
                return Refused(f"the kernel raised {type(exc).__name__}")
    finally:
        if collector_was_on:
            gc.enable()
    clash = crossing([(g.members, g.templates) for g in ran])
    if clash is not None:
        return Refused(f"{clash}: the reference executor's block order decides what the kernel computes")
    _fill(trace, core_num, ran)
    # progress once per core only now: a reference rerun after a refusal calls it for the cores it runs, and stops at
    # the first faulting core in block order, so no call made here may be one the reference would not make
    for _ in range(core_num if progress is not None else 0):
        progress()
    written = {a.buffer for g in ran for t in g.templates for a in t.writes}  # as runtime._copy_back reads the Trace
    for array in gm.values():
        if array.name in written:
            array.store()
    return trace


def _group(kernel: KernelFunction, members: tuple[int, ...], core_num: int, bound: dict, gm: dict, soc, strict: bool,
           overflow_mode: str) -> _Ran:
    """Run the kernel once for the cores ``members``.

    Raises:
        Divergence: the cores part ways (the group's GM writes are undone first).
        Unsupported, KernelError, Exception: the launch goes to the reference executor.
    """
    group = GroupCore(members, core_num, soc, strict)
    group.overflow = overflow_mode
    corestate.restore(group, None)
    views = {name: GroupGm(array, len(members)) for name, array in gm.items()}
    group.gm = {name: view.data for name, view in views.items()}
    args = {name: GlobalAddress(views[value.gm.name], value.offset) if isinstance(value, GlobalAddress) else value
            for name, value in bound.items()}
    _set_current(group)
    try:
        kernel.fn(**args)
        for que in group.queues:  # every queue buffer must be free, as runtime._finish checks
            que.check_released()
        if group.state_setters:
            raise Unsupported("a register state left set for the next kernel (its setter is a core's instruction)")
        return _Ran(members, group.instrs, group.lane_overflows, [corestate.snapshot(group) for _ in members])
    except Divergence:
        if group.undo is not None:
            group.undo.undo()
        raise
    finally:
        _set_current(None)
        group.release()


def _fill(trace: Trace, core_num: int, ran: list[_Ran]) -> None:
    """The Trace's per-core fields from the groups: ``cores`` on first read, overflows, end states."""
    groups = [(g.members, g.templates) for g in ran]
    trace.executor, trace.fallback = "lockstep", ""
    trace.cores_later(lambda: expand.cores(core_num, groups))
    end_states: list = [None] * core_num
    flagged: dict[int, list[int]] = {}
    for g in ran:
        for k, core in enumerate(g.members):
            end_states[core] = g.end_states[k]
            flagged[core] = [index for index, flags in g.overflows if flags[k]]
    trace.end_state = end_states
    if any(flagged.values()):  # rare: the Trace's own Instr objects, so the lists are built now
        trace.overflows = [trace.cores[core][index] for core in range(core_num) for index in flagged[core]]
