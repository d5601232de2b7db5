"""A lockstep group: the cores of a launch that run one instruction stream, simulated as one :class:`GroupCore`.

A ``GroupCore`` is a ``fusekit.asc.runtime.Core`` whose block index is a lane value (``get_block_idx()`` gives one
int32 per core, ``fusekit.asc.lockstep.values``), whose local arenas hold one row per core and whose GM buffers are
viewed per core (``fusekit.asc.lockstep.memory``). Every check of every instruction runs once for the group, on
values that are the same on every core or on lane values (a bounds check of GM ranges that differ per core compares
lane values); every effect runs once, over all the cores' lanes.

``record`` keeps each instruction as a template (one for the group; its GM Accesses may hold lane values) and lands
its effect only if the lockstep executor knows it to be exact over a leading core axis (:func:`admit`):

- an effect record (``fusekit.asc.effect.Effect``, count form or lane indices: ``apply`` indexes the last axis) of
  the vector instructions whose ``compute`` is elementwise, or a data move (GM <-> UB, UB <-> UB) without store
  atomics;
- the closures written to take a leading core axis: a UB ``get_value`` / ``set_value``, ``data_copy_pad``'s GM -> UB
  copy, ReduceSum / ReduceMax / ReduceMin;
- an instruction with no effect (queues, flags, barriers).

Anything else raises :class:`~.signals.Unsupported` before its effect changes memory: the scalar unit's data cache
(GM ``get_value`` / ``set_value``, ``data_cache_clean_and_invalid``), store atomics, cross-core flags and ``sync_all``
(their hooks), device output (``printf``, ``dump_tensor``, ``print``: the log), analyses that observe instructions
(``check_local_memory_ia``, ``LocalTensorAuto``), and every other closure effect.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..effect import Effect, run as run_effect
from ..runtime import Core, kernel_frame
from ..scalar import Int32, int32
from ..trace import Access, PipeSpec, Sync
from .memory import LaneArena, LaneBytes, UndoLog
from .signals import Unsupported
from .values import LaneInt

# the vector instructions whose Effect computes each lane from the same lanes of its operands: exact over any
# leading axis. Left out: cast_deq (a VDEQ table in UB) and add_deq_relu (DEQSCALE), whose effects were not checked
# for a core axis
EFFECT_SPECS = frozenset({
    "add", "sub", "mul", "div", "max", "min", "add_relu", "sub_relu", "mul_add_dst", "fused_mul_add",
    "fused_mul_add_relu", "mul_cast", "bitwise_and", "bitwise_or",
    "adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right",
    "exp", "ln", "sqrt", "abs", "relu", "rsqrt", "reciprocal", "bitwise_not",
    "duplicate", "axpy", "cast", "add_relu_cast", "sub_relu_cast",
})
# the closures written for a leading core axis, by (module, qualname)
CLOSURES = frozenset({
    ("fusekit.asc.tensor", "_scalar_read.<locals>.effect"),          # LocalTensor.get_value (GM: refused below)
    ("fusekit.asc.tensor", "LocalTensor.set_value.<locals>.effect"),
    ("fusekit.asc.datamove", "_pad_in.<locals>.effect"),             # data_copy_pad GM -> UB
    ("fusekit.asc.basic.vec_reduce", "_whole_tensor.<locals>.instr.<locals>.effect"),  # ReduceSum/Max/Min
})
DMA = frozenset({"data_copy", "data_copy_pad"})  # the instructions that may touch GM here: the DMA, no data cache


class Template(NamedTuple):
    """One instruction of a group, as ``Core.record`` got it; :func:`fusekit.asc.lockstep.expand.instrs` makes each
    core's ``Instr`` from it (``lanes``: some GM Access holds lane offsets)."""

    op: str
    pipe: PipeSpec
    reads: tuple
    writes: tuple
    undefined: tuple
    sync: Sync | None
    count: int
    nbytes: int
    dtype: str
    file: str
    line: int
    repeats: int
    cost: str
    lines: tuple
    lanes: bool


def _has_lanes(accesses) -> bool:
    return any(isinstance(a.start, LaneInt) or isinstance(a.stop, LaneInt) for a in accesses)


def admit(op: str, reads, writes, undefined, lines, effect) -> None:
    """Refuse an instruction the lockstep executor cannot run exactly (module docstring).

    Raises:
        Unsupported: naming what it met.
    """
    if lines:
        raise Unsupported(f"{op} cleans data-cache lines (the scalar unit's data cache)")
    if op not in DMA and any(a.mem.is_global for a in (*reads, *writes, *undefined)):
        raise Unsupported(f"{op} on GM (the scalar unit's data cache or an atomic)")
    if any(a.atomic for a in writes):
        raise Unsupported(f"{op} under store atomics")
    if effect is None:
        return
    if isinstance(effect, Effect):
        if effect.spec is not None and effect.spec.name not in EFFECT_SPECS:
            raise Unsupported(f"{op}: the effect of {effect.spec.name} is not checked for a core axis")
        return
    key = (getattr(effect, "__module__", ""), getattr(effect, "__qualname__", ""))
    if key not in CLOSURES:
        raise Unsupported(f"{op}: its effect {key[1] or effect!r} is not written for a core axis")


class _DeviceOutput(list):
    """A group's printf log: device output is per core, in block order, so the group hands the launch over."""

    def append(self, text) -> None:
        raise Unsupported("device output (printf, dump_tensor, print, print_time_stamp)")

    extend = append


class _CrossCoreFlags(dict):
    """A group's view of the launch's cross-core flag counters: each core counts its own, so the group hands over."""

    def _refuse(self, *args, **kwargs):
        raise Unsupported("cross-core flags")

    __getitem__ = __setitem__ = __contains__ = get = setdefault = pop = _refuse


def _sync_all() -> None:
    raise Unsupported("sync_all")


def _cross_core_wait(ready, why=None) -> None:
    raise Unsupported("a cross-core wait")


class GroupCore(Core):
    """The cores ``members`` (block indices, ascending) of a launch running one instruction stream (module docstring).

    ``idx`` is the first member (messages of checks that do not depend on the core). ``gm``: buffer name -> its
    :class:`~.memory.LaneBytes`, for the undo log; ``undo``: None for a group of one core, which cannot diverge.
    """

    def __init__(self, members: tuple[int, ...], block_num: int, soc, strict: bool):
        self.members = members
        super().__init__(members[0], block_num, soc, strict, _DeviceOutput())
        self.sync_all_hook, self.wait_hook, self.launch_flags = _sync_all, _cross_core_wait, _CrossCoreFlags()
        self.gm: dict[str, LaneBytes] = {}
        self.undo = UndoLog() if len(members) > 1 else None
        self.lane_overflows: list[tuple[int, tuple[bool, ...]]] = []  # (instruction, per core: it overflowed)

    def make_arenas(self, soc) -> None:
        """One stacked, pooled arena per local space: a row per core (``memory.LaneArena``)."""
        self.arenas = {space: LaneArena(len(self.members), space.size(soc)) for space in self.kind.spaces}

    def block_idx(self):
        """``get_block_idx()``: one int32 per core (a plain int32 for a group of one)."""
        return LaneInt(self.members, Int32) if len(self.members) > 1 else int32(self.idx)

    def record(self, op: str, pipe: PipeSpec, *, reads: tuple[Access, ...] = (), writes: tuple[Access, ...] = (),
               undefined: tuple[Access, ...] = (), sync: Sync | None = None, count: int = 0, nbytes: int = 0,
               dtype: str = "", effect=None, repeats: int = 0, cost: str = "", lines: tuple[Access, ...] = (),
               frame=None) -> None:
        """``Core.record`` for the group: check that the instruction can run here (:func:`admit`), keep its template,
        save the GM bytes it overwrites (undo log), then land its effect over every core's lanes."""
        if self.observers:
            raise Unsupported(f"{op}: an analysis observes the instructions (check_local_memory_ia, LocalTensorAuto)")
        admit(op, reads, writes, undefined, lines, effect)
        if frame is None:
            frame = kernel_frame()
        self.instrs.append(Template(op, pipe, reads, writes, undefined, sync, int(count), int(nbytes), dtype,
                                    frame.f_code.co_filename if frame else "", frame.f_lineno if frame else 0,
                                    int(repeats), cost, lines, _has_lanes((*reads, *writes, *undefined))))
        if effect is None:
            return
        if self.undo is not None:
            for a in writes:
                if a.mem.is_global:
                    self.undo.save(self.gm[a.buffer], a.start, a.stop)
        run_effect(effect)

    def note_overflow(self, index: int, overflowed) -> None:
        """Instruction ``index``'s float result left its dtype's range on the cores where ``overflowed`` (one bool per
        core, or one for all) holds (``Trace.overflows``)."""
        flags = np.broadcast_to(np.asarray(overflowed, bool), (len(self.members),))
        if flags.any():
            self.lane_overflows.append((index, tuple(bool(f) for f in flags)))

    def release(self) -> None:
        """The group has ended (or stopped): its arenas go back to the pool, and nothing reaches them any more."""
        for arena in self.arenas.values():
            arena.release()
        self.arenas, self.ub, self.gm, self.undo = {}, None, {}, None
