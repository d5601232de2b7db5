"""Core kinds, as a table: which memory spaces and pipes a core of each kind has.

Every core fusekit simulates today is an AIV (vector) core: its local space is the UB and its
pipes are S, V, MTE2 and MTE3 (AD-G 编程模型/抽象硬件架构.md; AD-API 核内同步能力概述.md). The cube
core (AIC: L1, L0A, L0B, L0C, BT, FB; pipes S, MTE1, MTE2, M, FIX) and the mix groups of one AIC with
two AIVs are rows of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pipes import PIPES, PipeSpec
from .spaces import MemSpace, local_spaces


@dataclass(frozen=True)
class CoreKind:
    """One kind of core: its name (as msprof's ``aiv`` / ``aic`` prefixes say it), pipes and source."""

    name: str
    pipes: tuple[PipeSpec, ...]
    source: str

    @property
    def spaces(self) -> list[MemSpace]:
        """The local spaces a core of this kind holds an arena of (``fusekit.machine.spaces``)."""
        return local_spaces(self.name)


AIV = CoreKind("AIV", PIPES, "AD-G 抽象硬件架构.md; AD-API 核内同步能力概述.md (the vector core's pipes)")

CORE_KINDS: dict[str, CoreKind] = {AIV.name: AIV}
