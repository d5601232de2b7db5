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

- the cube unit's data moves and Mmad (GM -> L1, L1 -> L0A / L0B / bias table, img2col, Mmad, Fixpipe): their
  ``operands.Elements`` index the last axis and their numerics take leading axes;
- cross-core flags in mode 2, each core of the group counting its own (``lanes``), keeping a vector clock per wait
  (``note_wait``: what the releasing cores had done, for ``crossing.ordered``).

Anything else raises :class:`~.signals.Unsupported` before its effect changes memory: the scalar unit's data cache
(GM ``get_value`` / ``set_value``, ``data_cache_clean_and_invalid``), store atomics, cross-core flags in modes 0 and
1 and ``sync_all`` (their hooks), device output (``printf``, ``dump_tensor``, ``print``: the log), analyses that
observe instructions (``check_local_memory_ia``, ``LocalTensorAuto``), and every other closure effect.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..effect import Effect, run as run_effect
from ..runtime import Core, Place, kernel_frame
from ..scalar import Int32
from ..trace import Access, PipeSpec, Sync
from .memory import LaneArena, LaneBytes, UndoLog
from .signals import Unsupported
from .values import LaneInt, ints

# the vector instructions whose Effect computes each lane from the same lanes of its operands: exact over any
# leading axis. Left out: cast_deq (a VDEQ table in UB) and add_deq_relu (DEQSCALE), whose effects were not checked
# for a core axis
EFFECT_SPECS = frozenset({
    "add", "sub", "mul", "div", "max", "min", "add_relu", "sub_relu", "mul_add_dst", "fused_mul_add",
    "fused_mul_add_relu", "mul_cast", "bitwise_and", "bitwise_or",
    "adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right",
    "exp", "ln", "sqrt", "abs", "relu", "rsqrt", "reciprocal", "bitwise_not",
    "duplicate", "axpy", "cast", "add_relu_cast", "sub_relu_cast", "brcb", "copy",
})
# the closures written for a leading core axis, by (module, qualname)
CLOSURES = frozenset({
    ("fusekit.asc.tensor", "_scalar_read.<locals>.effect"),          # LocalTensor.get_value (GM: refused below)
    ("fusekit.asc.tensor", "LocalTensor.set_value.<locals>.effect"),
    ("fusekit.asc.datamove", "_pad_in.<locals>.effect"),             # data_copy_pad GM -> UB
    ("fusekit.asc.basic.vec_reduce", "_whole_tensor.<locals>.instr.<locals>.effect"),  # ReduceSum/Max/Min
    ("fusekit.asc.basic.vec_reduce", "_per_repeat.<locals>.effect"),  # WholeReduce*, BlockReduce*, PairReduceSum
    # the cube unit's moves and Mmad: operands.Elements index the last axis, the numerics take leading axes
    ("fusekit.asc.cube.copy_in", "data_copy_nd2nz.<locals>.effect"),   # GM -> L1 (ND2NZ)
    ("fusekit.asc.cube.copy_in", "data_copy_bias.<locals>.effect"),  # L1 -> bias table
    ("fusekit.asc.cube.copy_in", "init_const_value.<locals>.effect"),
    ("fusekit.asc.cube.load", "_move.<locals>.effect"),                # L1 -> L0A / L0B (LoadData 2D, transposes)
    ("fusekit.asc.cube.load3d", "load_data_3dv2.<locals>.effect"),     # img2col
    ("fusekit.asc.cube.mmad", "mmad.<locals>.effect"),
    ("fusekit.asc.cube.fixpipe", "fixpipe.<locals>.effect"),           # L0C -> GM / L1
})
# the instructions that may touch GM here: the DMA (MTE2 / MTE3 on an AIV, MTE2 and FIX on an AIC), no data cache
DMA = frozenset({"data_copy", "data_copy_pad", "fixpipe"})


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


class LaneSyncs(tuple):
    """A template's Sync record that differs between the group's cores (a cross-core wait names the sets that released
    each core's): one per core, in ``members`` order (``fusekit.asc.lockstep.expand`` gives core k the k-th)."""


def _sync_all() -> None:
    raise Unsupported("sync_all")


def _cross_core_wait(ready, why=None) -> None:
    raise Unsupported("a cross-core wait")


class GroupCore(Core):
    """The cores ``members`` (block indices, ascending) of a launch running one instruction stream (module docstring).

    ``idx`` is the first member (messages of checks that do not depend on the core). ``gm``: buffer name -> its
    :class:`~.memory.LaneBytes`, for the undo log; ``undo``: None for a group of one core, which cannot diverge.
    """

    def __init__(self, members: tuple[int, ...], places: tuple[Place, ...], block_num: int, soc, strict: bool):
        self.members = members
        first = places[0]
        place = Place(first.kind, ints([p.block for p in places], Int32), ints([p.ai_core for p in places]),
                      first.ratio, ints([p.sub_block for p in places]), first.aics, first.aivs)
        super().__init__(members[0], block_num, soc, strict, _DeviceOutput(), kind=first.kind, place=place)
        self.sync_all_hook, self.wait_hook, self.launch_flags = _sync_all, _cross_core_wait, _CrossCoreFlags()
        self.gm: dict[str, LaneBytes] = {}
        self.undo = UndoLog() if len(members) > 1 else None
        self.lane_overflows: list[tuple[int, tuple[bool, ...]]] = []  # (instruction, per core: it overflowed)
        self.places_by_lane = tuple(zip(members, places))
        # per core: the other cores' instructions it knows are done (by Trace index: the last one's position), and
        # from which of its own instructions on (a vector clock per cross-core wait)
        self.known: list[dict[int, int]] = [{} for _ in members]
        self.clocks: list[list[tuple[int, dict]]] = [[] for _ in members]

    def lanes(self, mode: int = 0) -> tuple:
        """(Trace index, Place) of every core of the group; cross-core flags of mode 0 or 1 are not run here (a wait
        of theirs is released by every core of a kind, whose knowledge :meth:`note_wait` does not track)."""
        if mode != 2:
            raise Unsupported(f"cross-core flags in mode {mode}")
        return self.places_by_lane

    @staticmethod
    def per_lane(values: list):
        return values[0] if len(set(values)) == 1 else LaneSyncs(values)

    def note_set(self) -> None:
        """Keep what each core knew when it set the flag: its vector clock, with its own instructions so far."""
        at = len(self.instrs) - 1
        for k, core in enumerate(self.members):
            self.launch_flags[("clock", core, at)] = {**self.known[k], core: at}

    def note_wait(self, sets: list) -> None:
        """Core k now knows what the cores of ``sets[k]`` knew at their sets: from the next instruction on
        (``fusekit.asc.lockstep.crossing.ordered``)."""
        for k, released_by in enumerate(sets):
            known = self.known[k]
            for core, at in released_by:
                for other, count in self.launch_flags[("clock", core, at)].items():
                    if known.get(other, -1) < count:
                        known[other] = count
            self.clocks[k].append((len(self.instrs), dict(known)))

    def make_arenas(self, soc) -> None:
        """One stacked, pooled arena per local space: a row per core (``memory.LaneArena``)."""
        self.arenas = {space: LaneArena(len(self.members), space.size(soc)) for space in self.kind.spaces}
        self.pooled = list(self.arenas.values())  # released to the pool at the end, after runtime._finish drops them

    @property
    def label(self) -> str:
        """How messages name the group: ``aiv(0..15)``, its first and last core."""
        blocks = [place.block for _, place in self.places_by_lane]
        return f"{self.kind.msprof_prefix}({blocks[0]}..{blocks[-1]})" if len(blocks) > 1 else \
            f"{self.kind.msprof_prefix}({blocks[0]})"

    def block_idx(self):
        """``get_block_idx()``: one int32 per core (``place.block``: a plain int32 for a group of one)."""
        return self.place.block

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
        for arena in self.pooled:
            arena.release()
        self.arenas, self.pooled, self.ub, self.gm, self.undo = {}, [], None, {}, None
