"""The instruction pipes of a core, as a table: ``Pipe.S``, ``Pipe.V``, ``Pipe.MTE2``, ``Pipe.MTE3``.

A pipe is an in-order instruction queue with its own execution unit; the pipes of a core run
concurrently, and the scalar unit issues every instruction into its pipe (AD-API
核内同步能力概述.md; AD-G 编程指南/高级编程/硬件实现/基本架构.md, "典型的指令流"). Everything that
iterates over pipes (the happens-before clocks of ``fusekit.hb``, the timing model's tracks,
``PipeID`` and ``HardEvent`` of ``fusekit.asc.sync``) reads :data:`PIPES`, so a cube pipe (MTE1, M,
FIX) is one more row here.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from .rows import Row


class Ordering(enum.Enum):
    """Whether two dependent instructions of one pipe are ordered without a ``PipeBarrier`` (``fusekit.hb``, rule 2)."""

    ALWAYS = "always"        # PIPE_S: "Scalar流水之间的同步由硬件自动保证" (PipeBarrier(ISASI).md, 约束说明)
    AUTO_SYNC = "auto_sync"  # only when the compiler inserts the barrier (--cce-auto-sync; 关键特性说明.md, 表3)
    NEVER = "never"          # the developer's barrier, even with automatic synchronisation (关键特性说明.md, 单流水同步)


@dataclass(frozen=True, eq=False)
class PipeSpec(Row):
    """One pipe. The rows are the members of :class:`Pipe`; they compare by identity, as enum members do.

    Attributes:
        name: the pipe's name without the ``PIPE_`` prefix (``"MTE2"``); ``PipeID.PIPE_<name>`` and the
            ``HardEvent`` members ``<name>_<other>`` are derived from it.
        unit: what executes it.
        ordering: whether dependent instructions of this pipe need a barrier (:class:`Ordering`).
        msprof: the pipe's stem in msprof's ``PipeUtilization.csv`` columns (``"mte2"``: ``aiv_mte2_time(us)``,
            ``aiv_mte2_ratio``; PROF, ``docs/ascendc-model.md``, "Tools we mirror"); the timing model writes one
            time and one ratio column per pipe (``fusekit.timing``).
        source: where the facts come from.
    """

    name: str
    unit: str
    ordering: Ordering
    msprof: str
    source: str

    def __repr__(self) -> str:
        return f"PIPE_{self.name}"

    @classmethod
    def named(cls, name: str) -> "PipeSpec":
        return pipe_named(name)


_SYNC_PAGE = "AD-API 核内同步能力概述.md; AD-G 基本架构.md"


class Pipe:
    """The pipes of an AIV core (the table's rows by name)."""

    S = PipeSpec("S", "scalar unit: address arithmetic, get_value / set_value; issues every instruction",
                 Ordering.ALWAYS, "scalar", _SYNC_PAGE)
    V = PipeSpec("V", "vector unit", Ordering.AUTO_SYNC, "vec", _SYNC_PAGE)
    MTE2 = PipeSpec("MTE2", "memory transfer engine: GM -> UB", Ordering.NEVER, "mte2", _SYNC_PAGE)
    MTE3 = PipeSpec("MTE3", "memory transfer engine: UB -> GM", Ordering.NEVER, "mte3", _SYNC_PAGE)


# the table, in the order of the happens-before clocks' components and the timing model's tracks
PIPES: tuple[PipeSpec, ...] = (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3)


def pipe_named(name: str) -> PipeSpec:
    """The row of pipe ``name`` (``"MTE2"``).

    Raises:
        KeyError: no such pipe.
    """
    for pipe in PIPES:
        if pipe.name == name:
            return pipe
    raise KeyError(f"no pipe {name!r}: the pipes are {', '.join(p.name for p in PIPES)}")


def pipe_ids() -> list[tuple[str, object]]:
    """``PipeID`` members (AD-API PipeBarrier(ISASI).md): ``PIPE_<name>`` per pipe, then ``PIPE_ALL``."""
    return [(f"PIPE_{p.name}", p) for p in PIPES] + [("PIPE_ALL", "ALL")]


def hard_events() -> list[tuple[str, tuple[PipeSpec, PipeSpec]]]:
    """``HardEvent`` members (AD-API SetFlag/WaitFlag.md): ``SRC_DST`` for every ordered pair of distinct pipes,
    a flag set by SRC and waited on by DST."""
    return [(f"{a.name}_{b.name}", (a, b)) for a, b in itertools.permutations(PIPES, 2)]
