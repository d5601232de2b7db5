"""Core identity and explicit synchronisation (AD-API 核内同步能力概述.md, SetFlag/WaitFlag.md, PipeBarrier.md).

The simulator runs instructions in program order, so a sync never changes a value here; it is
recorded in the Trace, where the sanitizer checks it and the timing model obeys it.
"""

from __future__ import annotations

import enum

from fusekit.machine import Ordering, hard_events, pipe_ids

from .runtime import current
from .scalar import int32
from .tensor import LocalTensor
from .trace import Pipe, Sync, SyncKind

EVENT_IDS = 8  # event ids 0..7 per HardEvent; 6 and 7 are reserved for the framework


# PipeID and HardEvent are derived from the machine's pipe table (fusekit.machine.pipes), so a new pipe brings its
# PIPE_<name> and its <src>_<dst> events with it
PipeID = enum.Enum("PipeID", pipe_ids(), module=__name__)
PipeID.__doc__ = "``PipeID``: ``PIPE_<pipe>`` for each pipe (the member's value is the pipe), and ``PIPE_ALL``."

HardEvent = enum.Enum("HardEvent", hard_events(), module=__name__)
HardEvent.__doc__ = "``HardEvent::SRC_DST``: a flag set by the SRC pipe and waited on by the DST pipe."


def _barriered(core) -> tuple:
    """The pipes of ``core``'s kind a PipeBarrier can order: all but those in order by themselves (PIPE_S has no
    barrier, PipeBarrier(ISASI).md)."""
    return tuple(p for p in core.kind.pipes if p.ordering is not Ordering.ALWAYS)


def get_block_idx() -> int:
    """Index of this core in [0, get_block_num()), an int32 scalar as pyasc types it (``scalar.py``)."""
    return current("get_block_idx").block_idx()  # one per core in a lockstep group (fusekit.asc.lockstep)


def get_block_num() -> int:
    """Number of cores launched (block_dim), an int32 scalar as pyasc types it (``scalar.py``)."""
    return int32(current("get_block_num").block_num)


def pipe_barrier(pipe: PipeID) -> None:
    """``PipeBarrier<pipe>``: later instructions of ``pipe`` wait for its earlier ones. PIPE_S is not allowed."""
    core, op = current("pipe_barrier"), "pipe_barrier"
    barriered = _barriered(core)
    if not isinstance(pipe, PipeID) or (pipe is not PipeID.PIPE_ALL and pipe.value not in barriered):
        raise core.error(op, f"pipe_barrier on an {core.kind.name} core takes PipeID."
                             f"{', '.join(f'PIPE_{p.name}' for p in barriered)} or PIPE_ALL, got {pipe!r}")
    for p in (barriered if pipe is PipeID.PIPE_ALL else (pipe.value,)):
        core.record(op, p, sync=Sync(SyncKind.BARRIER, p, p, (pipe.name,)))


def _flag(op: str, kind: SyncKind, event: HardEvent, event_id: int) -> None:
    core = current(op)
    if not isinstance(event, HardEvent):
        raise core.error(op, f"expected an asc.HardEvent (e.g. HardEvent.MTE2_V), got {event!r}")
    if not isinstance(event_id, int) or not 0 <= event_id < EVENT_IDS:
        raise core.error(op, f"event id {event_id!r} outside [0, {EVENT_IDS})")
    src, dst = event.value
    if src not in core.kind.pipes or dst not in core.kind.pipes:
        raise core.error(op, f"HardEvent.{event.name} joins PIPE_{src.name} and PIPE_{dst.name}, but an {core.kind.name} "
                             f"core's pipes are {', '.join(f'PIPE_{p.name}' for p in core.kind.pipes)} "
                             "(核内同步能力概述.md 表1)")
    core.record(op, src if kind is SyncKind.SET else dst, sync=Sync(kind, src, dst, ("flag", event.name, event_id)))


def set_flag(event: HardEvent, event_id: int = 0) -> None:
    """``SetFlag<event>(id)``: issued on the event's source pipe once its earlier instructions finish."""
    _flag("set_flag", SyncKind.SET, event, event_id)


def wait_flag(event: HardEvent, event_id: int = 0) -> None:
    """``WaitFlag<event>(id)``: the destination pipe waits for the matching set_flag."""
    _flag("wait_flag", SyncKind.WAIT, event, event_id)


def sync_all(gm_workspace=None, ub_workspace=None, used_cores: int = 0, is_aiv_only: bool = True) -> None:
    """``SyncAll()`` / ``SyncAll<isAIVOnly>(gmWorkspace, ubWorkspace, usedCores)``: every core waits until all
    cores of the launch reach it. The software form's GM/UB workspaces are accepted but not modelled as data
    (the barrier is); ``used_cores`` other than 0 or the launch's core count is not simulated (KernelError).
    """
    core = current("sync_all")
    if used_cores and used_cores != core.block_num:
        raise core.error("sync_all", f"SyncAll over used_cores={used_cores} of a {core.block_num}-core launch is "
                                     "not simulated yet: fusekit's barrier spans every core of the launch")
    core.record("sync_all", Pipe.S, sync=Sync(SyncKind.ALL, Pipe.S, Pipe.S))
    core.sync_all_hook()


def printf(desc: str, *params) -> None:
    """Device printf: C-style format ``desc`` with the core's prefix, printed when the launch ends (as on the NPU)."""
    core = current("printf")
    text = desc % params if params else desc
    core.log.append(f"[aiv({core.idx})] {text.replace(chr(92) + 'n', chr(10))}")


def dump_tensor(tensor: LocalTensor, desc: int, dump_size: int, shape_info=None) -> None:
    """Print the first ``dump_size`` elements of a UB tensor with a user tag ``desc`` (``shape_info``, pyasc's
    optional ShapeInfo, only shapes the NPU's printout and is accepted as is)."""
    core = current("dump_tensor")
    start, stop = tensor.span(core, "dump_tensor", dump_size)
    core.record("dump_tensor", Pipe.S, reads=(tensor.access(start, stop),), count=dump_size, nbytes=stop - start,
                dtype=tensor.dtype.name)
    core.log.append(f"[aiv({core.idx})] dump {desc}: {tensor.array(dump_size)}\n")
