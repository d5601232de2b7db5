"""Core kinds, as a table: which memory spaces and pipes a core of each kind has.

Every core fusekit simulates today is an AIV (vector) core: its local space is the UB and its
pipes are S, V, MTE2 and MTE3 (AD-G 编程模型/抽象硬件架构.md; AD-API 核内同步能力概述.md). The cube
core (AIC: L1, L0A, L0B, L0C, BT, FB; pipes S, MTE1, MTE2, M, FIX) and the mix groups of one AIC with
two AIVs are rows of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pipes import PIPES, Pipe, PipeSpec
from .spaces import MemSpace, local_spaces


@dataclass(frozen=True)
class CoreKind:
    """One kind of core.

    Attributes:
        name: as msprof's column prefixes say it, upper case (``"AIV"``: ``aiv_time(us)``, ``aiv_vec_ratio``).
        pipes: the pipes a core of this kind has.
        source: where the facts come from.
        profiled: the pipes msprof's ``PipeUtilization.csv`` has a time and a ratio column for, in its column
            order (PROF: ``aiv_vec``, ``aiv_scalar``, ``aiv_mte2``, ``aiv_mte3``; ``docs/ascendc-model.md``, "Tools
            we mirror"), each column named by the pipe's ``msprof`` stem.
    """

    name: str
    pipes: tuple[PipeSpec, ...]
    source: str
    profiled: tuple[PipeSpec, ...]

    @property
    def msprof_prefix(self) -> str:
        """The prefix of this kind's msprof columns (``"aiv"``)."""
        return self.name.lower()

    @property
    def spaces(self) -> list[MemSpace]:
        """The local spaces a core of this kind holds an arena of (``fusekit.machine.spaces``)."""
        return local_spaces(self.name)


AIV = CoreKind("AIV", PIPES, "AD-G 抽象硬件架构.md; AD-API 核内同步能力概述.md (the vector core's pipes); PROF "
               "PipeUtilization.csv (its column order)", (Pipe.V, Pipe.S, Pipe.MTE2, Pipe.MTE3))

CORE_KINDS: dict[str, CoreKind] = {AIV.name: AIV}
