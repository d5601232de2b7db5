"""The lockstep executor: a launch's cores run in groups that follow one instruction stream, the kernel's Python
once per group (issue 20's performance study, design (i) "lockstep SPMD cores").

The launch starts as one group of all its cores of a kind (of at most :data:`GROUP_BYTES` of stacked local memory: a
launch of more cores starts as several groups of consecutive cores; a mix launch as its AIVs and its AICs). Where
the cores of a group part ways (a branch or a plain-int conversion on a lane value, a GM layout that is not one
strided view: :class:`~.signals.Divergence`), the group's GM writes are undone, its records dropped, and it reruns
as two groups: the cores that went its first core's way, then the others (``core_share``'s ``get_block_idx() ==
get_block_num() - 1`` splits 48 cores into 47 + 1 before the first instruction). Groups run one after another; those
of a kernel with cross-core flags run together under the reference executor's scheduler (``runtime._Scheduler``: one
group at a time, a wait hands the turn on until its sets have run; only mode 2, between an AIC and its AIVs, whose
releasing sets a wait names), and a divergence there restarts the launch with the group split, since the other
groups have seen its flags. A KernelError, the first faulting core in block order and the partial Trace are the
reference executor's: the launch reruns there (below). The order groups run in is not the block order, but it never
shows: a core that could see another's GM writes sends the launch to the reference executor.

The result is exact or not used. The launch goes to the reference executor (``fusekit.asc.runtime``: one core after
another in block order), from the original GM contents, when:

- before it starts (:func:`refusal`): ``FUSEKIT_EXECUTOR=reference``, an executor (the sanitizer's race replay),
  ``sample_cores``, ``reverse_cores``, ``initial_state``, one core, a compiled C++ kernel (:mod:`fusekit.cpp`), a kernel that
  synchronises cores otherwise than by cross-core flags (``sync_all``, GM flags, a Matmul server), or one whose Python
  has effects outside the simulator
  (``fusekit.asc.lockstep.purity``);
- while it runs: an instruction or effect the groups do not run (``fusekit.asc.lockstep.group``), any KernelError
  (the reference names its first faulting core in block order, with its partial Trace; under the sanitizer it
  collects the access faults, ``launch(faults=)``), any other exception of the kernel;
- after it ran: a core read or wrote GM bytes another core wrote (``fusekit.asc.lockstep.crossing``): the reference's
  sequential order decides what such a kernel computes; with cross-core flags, only such a pair that no flag orders
  (a pair the flags order runs in the same order in either executor: an AIV reading the workspace its AIC wrote
  before setting the flag it waited for).

Otherwise its outputs and its Trace (every field of every ``Instr`` of every core, built on first read of
``Trace.cores``) are the reference executor's; ``Trace.executor`` says which one ran and ``Trace.fallback`` why the
lockstep executor did not. ``progress`` is called once per core when the launch has run (the reference executor
calls it as each core ends).
"""

from __future__ import annotations

import gc
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from .. import corestate
from ..runtime import (_CROSS_CORE_SYNC, GlobalAddress, KernelError, KernelFunction, _refers_to, _Scheduler,
                       _set_current, running_core)
from ..trace import Trace
from . import expand, purity
from .crossing import crossing, ordered
from .group import GroupCore
from .memory import GroupGm
from .signals import Divergence, Unsupported

ENV = "FUSEKIT_EXECUTOR"  # "reference" forces the reference executor; "lockstep" or unset: the default choice
EXECUTORS = ("lockstep", "reference")
# what makes cores wait for each other: the groups run cross-core flags (mode 2) together; the rest is the reference's
CROSS_CORE_FLAGS = frozenset({"cross_core_set_flag", "cross_core_wait_flag"})
CORE_BARRIERS = _CROSS_CORE_SYNC - CROSS_CORE_FLAGS
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
    if _refers_to(kernel.fn, CORE_BARRIERS):
        return "the kernel synchronises cores (sync_all, GM flags, a Matmul server)"
    why = purity.refusal(kernel, bound)
    return None if why is None else f"the kernel's Python has effects outside the simulator: {why}"


@dataclass
class _Ran:
    """A group that ended: its cores, templates, overflows (``GroupCore.lane_overflows``), end states per core."""

    members: tuple[int, ...]
    templates: list
    overflows: list
    end_states: list
    clocks: list = ()  # per core: its vector clocks (GroupCore.clocks), for a kernel with cross-core flags


def run(kernel: KernelFunction, core_num: int, places: list, bound: dict, gm: dict, trace: Trace, soc, strict: bool,
        overflow_mode: str, progress: Callable[[], None] | None) -> "Trace | Refused":
    """Run the launch in lockstep groups and fill ``trace`` (module docstring).

    Args:
        core_num: block_dim; ``places``: every core of the launch in ``Trace.cores`` order (``runtime.core_plan``:
            a mix launch's AIVs, then its AICs), each group of one kind.
        bound: the kernel's arguments as ``fusekit.asc.runtime.launch`` bound them (GM buffers as GlobalAddress).
        gm: the launch's GmArray by argument name (copied back here when written).

    Returns:
        ``trace``, filled, with the outputs copied back; or :class:`Refused`, with GM as the run left it (the caller
        reloads it from the arguments).
    """
    key = _partition_key(kernel, places, bound, soc)
    work = list(_PARTITIONS.get(key) or _starting_groups(places, soc))
    together = _refers_to(kernel.fn, CROSS_CORE_FLAGS)
    collector_was_on = gc.isenabled()
    gc.disable()  # the groups only add to the templates (as the reference launch, which pauses the collector too)
    try:
        ran = (_run_together if together else _run_in_turn)(kernel, work, places, core_num, bound, gm, soc, strict,
                                                           overflow_mode)
    except _Halves as split:
        return Refused(split.reason)
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
    if together:
        clash = ordered([(g.members, g.templates, g.clocks) for g in ran], places)
        if clash is not None:
            return Refused(f"{clash}: which runs first decides what the kernel computes")
    else:
        clash = crossing([(g.members, g.templates) for g in ran])
        if clash is not None:
            return Refused(f"{clash}: the reference executor's block order decides what the kernel computes")
    _remember(key, [g.members for g in ran])
    _fill(trace, len(places), ran)
    # progress once per core only now: a reference rerun after a refusal calls it for the cores it runs, and stops at
    # the first faulting core in block order, so no call made here may be one the reference would not make
    for _ in range(len(places) if progress is not None else 0):
        progress()
    written = {a.buffer for g in ran for t in g.templates for a in t.writes}  # as runtime._copy_back reads the Trace
    for array in gm.values():
        if array.name in written:
            array.store()
    return trace


class _Halves(Exception):
    """A divergence that does not split its group (``reason``)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _halves(members: tuple[int, ...], split: Divergence) -> list[tuple[int, ...]]:
    """The two groups a divergence splits ``members`` into: the cores that went the first core's way, then the rest.

    Raises:
        _Halves: one of them is empty.
    """
    first = tuple(m for m, k in zip(members, split.keep) if k)
    rest = tuple(m for m, k in zip(members, split.keep) if not k)
    if not first or not rest:
        raise _Halves("a divergence that does not split its group")
    return [first, rest]


def _run_in_turn(kernel: KernelFunction, work: list, places: list, core_num: int, bound: dict, gm: dict, soc,
                 strict: bool, overflow_mode: str) -> list[_Ran]:
    """The groups one after another (a kernel whose cores do not synchronise); a group that diverges is undone and
    reruns as its two halves."""
    ran: list[_Ran] = []
    while work:
        members = work.pop(0)
        try:
            ran.append(_group(kernel, members, places, core_num, bound, gm, soc, strict, overflow_mode))
        except Divergence as split:
            work[:0] = _halves(members, split)
    return ran


def _run_together(kernel: KernelFunction, work: list, places: list, core_num: int, bound: dict, gm: dict, soc,
                  strict: bool, overflow_mode: str) -> list[_Ran]:
    """The groups of a kernel with cross-core flags, under the reference's scheduler (``runtime._Scheduler``): one
    group runs at a time, a cross-core wait hands the turn on until its sets have run. Other groups have seen a
    group's flags before it diverges, so a divergence restarts the whole launch, from the original GM contents,
    with that group split."""
    while True:
        made: dict[int, GroupCore] = {}

        def make_core(g: int) -> GroupCore:
            made[g] = _new_group(kernel, work[g], places, core_num, bound, gm, soc, strict, overflow_mode)
            return made[g]

        def body() -> None:
            group = running_core()
            try:
                kernel.fn(**group.args)
            except Divergence as split:
                split.members = group.members
                raise
            if group.state_setters:
                raise Unsupported("a register state left set for the next kernel (its setter is a core's instruction)")

        try:
            _Scheduler(list(range(len(work))), make_core, body).run()
        except Divergence as split:
            at = work.index(split.members)
            work[at:at + 1] = _halves(split.members, split)
            for array in gm.values():
                array.load()
            continue
        finally:
            _set_current(None)
            for group in made.values():
                group.release()
        return [_Ran(g.members, g.instrs, g.lane_overflows, [corestate.snapshot(g) for _ in g.members], g.clocks)
                for _, g in sorted(made.items())]


# the groups each launch ended with, by kernel, cores, SoC and scalar arguments: the next launch alike starts from
# them, without the divergences (and, with cross-core flags, the restarts) that found them. Any partition into groups
# of one kind is a correct start (a group that still diverges splits), so a key that is too coarse costs only time
_PARTITIONS: "OrderedDict[tuple, tuple]" = OrderedDict()
PARTITIONS_KEPT = 256


def _partition_key(kernel: KernelFunction, places: list, bound: dict, soc) -> tuple:
    scalars = repr(sorted((name, value) for name, value in bound.items() if not isinstance(value, GlobalAddress)))
    return kernel.fn, len(places), soc.name, scalars


def _remember(key: tuple, groups: list) -> None:
    _PARTITIONS[key] = tuple(groups)
    _PARTITIONS.move_to_end(key)
    while len(_PARTITIONS) > PARTITIONS_KEPT:
        _PARTITIONS.popitem(last=False)


def _starting_groups(places: list, soc) -> list[tuple[int, ...]]:
    """The launch's first groups: each run of consecutive cores of one kind, in groups of at most :data:`GROUP_BYTES`
    of stacked local memory (48 AIVs x 192 KiB = 9 MiB: all of a 910B's in one)."""
    work: list[tuple[int, ...]] = []
    first = 0
    while first < len(places):
        kind = places[first].kind
        end = next((i for i in range(first, len(places)) if places[i].kind is not kind), len(places))
        width = max(GROUP_BYTES // (sum(space.size(soc) for space in kind.spaces) or 1), 1)
        work += [tuple(range(lo, min(lo + width, end))) for lo in range(first, end, width)]
        first = end
    return work


def _new_group(kernel: KernelFunction, members: tuple[int, ...], places: list, core_num: int, bound: dict, gm: dict,
               soc, strict: bool, overflow_mode: str) -> GroupCore:
    """The GroupCore of ``members`` (indices into ``places``), its GM views and the kernel's arguments for it
    (``args``)."""
    group = GroupCore(members, tuple(places[i] for i in members), core_num, soc, strict)
    group.overflow = overflow_mode
    corestate.restore(group, None)
    views = {name: GroupGm(array, len(members)) for name, array in gm.items()}
    group.gm = {name: view.data for name, view in views.items()}
    group.args = {name: GlobalAddress(views[value.gm.name], value.offset) if isinstance(value, GlobalAddress) else value
                  for name, value in bound.items()}
    return group


def _group(kernel: KernelFunction, members: tuple[int, ...], places: list, core_num: int, bound: dict, gm: dict, soc,
           strict: bool, overflow_mode: str) -> _Ran:
    """Run the kernel once for the cores ``members`` (indices into ``places``).

    Raises:
        Divergence: the cores part ways (the group's GM writes are undone first).
        Unsupported, KernelError, Exception: the launch goes to the reference executor.
    """
    group = _new_group(kernel, members, places, core_num, bound, gm, soc, strict, overflow_mode)
    _set_current(group)
    try:
        kernel.fn(**group.args)
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
