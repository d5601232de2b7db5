"""The instruction pipes of the cores, as a table: ``Pipe.S``, ``Pipe.V``, ``Pipe.MTE2``, ``Pipe.MTE3`` (the AIV's,
with S and MTE2 shared by name with the AIC) and ``Pipe.MTE1``, ``Pipe.M``, ``Pipe.FIX`` (the AIC's).

A pipe is an in-order instruction queue with its own execution unit; the pipes of a core run
concurrently, and the scalar unit issues every instruction into its pipe (AD-API
核内同步能力概述.md; AD-G 编程指南/高级编程/硬件实现/基本架构.md, "典型的指令流"). Everything that
iterates over pipes (the happens-before clocks of ``fusekit.hb``, the timing model's tracks,
``PipeID`` and ``HardEvent`` of ``fusekit.asc.sync``) reads :data:`PIPES`; which of them a core has is its
kind's row (``fusekit.machine.cores``).
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
    """The pipes (the table's rows by name)."""

    S = PipeSpec("S", "scalar unit: address arithmetic, get_value / set_value; issues every instruction",
                 Ordering.ALWAYS, "scalar", _SYNC_PAGE)
    V = PipeSpec("V", "vector unit", Ordering.AUTO_SYNC, "vec", _SYNC_PAGE)
    MTE2 = PipeSpec("MTE2", "memory transfer engine: GM -> UB", Ordering.NEVER, "mte2", _SYNC_PAGE)
    MTE3 = PipeSpec("MTE3", "memory transfer engine: UB -> GM", Ordering.NEVER, "mte3", _SYNC_PAGE)
    # the AIC's (cube core's) pipes: 核内同步能力概述.md 表1 (PIPE_M "矩阵计算流水", PIPE_MTE1 "L1 -> L0A/L0B",
    # PIPE_FIX "L0C -> GM / L1"); their msprof stems are the aic_mac / aic_mte1 / aic_fixpipe columns (AD
    # examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_high_performance/README.md)
    MTE1 = PipeSpec("MTE1", "memory transfer engine: L1 -> L0A / L0B / BT", Ordering.NEVER, "mte1", _SYNC_PAGE)
    M = PipeSpec("M", "cube unit: Mmad into L0C", Ordering.NEVER, "mac", _SYNC_PAGE)
    FIX = PipeSpec("FIX", "fixpipe: L0C -> GM / L1, with casts, quantisation and ReLU", Ordering.NEVER, "fixpipe",
                   _SYNC_PAGE)


# the table, in the order of the happens-before clocks' components and the timing model's tracks
PIPES: tuple[PipeSpec, ...] = (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3, Pipe.MTE1, Pipe.M, Pipe.FIX)


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
