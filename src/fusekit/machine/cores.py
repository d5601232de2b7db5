"""Core kinds, as a table: which memory spaces and pipes a core of each kind has.

The AIV (vector core): local space the UB, pipes S, V, MTE2 and MTE3 (AD-G 编程模型/抽象硬件架构.md; AD-API
核内同步能力概述.md). The AIC (cube core) of the separated architecture (arch 2201): L1, L0A, L0B, L0C and the bias
table, pipes S, MTE1, MTE2, M, FIX and MTE3 (L1 -> GM; 核内同步能力概述.md 表2); it has no UB, and AIC and AIV exchange data through GM (AD-G 架构规格/
NPU架构版本2201.md). One AI Core on Atlas A2/A3 is one AIC and two AIVs (AD-G 基本架构.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from .pipes import Pipe, PipeSpec
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


AIV = CoreKind("AIV", (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3), "AD-G 抽象硬件架构.md; AD-API 核内同步能力概述.md (the "
               "vector core's pipes); PROF PipeUtilization.csv (its column order)",
               (Pipe.V, Pipe.S, Pipe.MTE2, Pipe.MTE3))
AIC = CoreKind("AIC", (Pipe.S, Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3), "AD-G 基本架构.md (the AIC holds "
               "Cube, Scalar, MTE1, MTE2, FixPipe); AD-API 核内同步能力概述.md 表2 (the AIC's flags and barriers include "
               "PIPE_MTE3: L1 -> GM copies, 数据搬运导览/GM与L1或L0数据搬运.md); AD matmul_high_performance/README.md "
               "(the aic_mac, aic_scalar, aic_mte1, aic_mte2, aic_fixpipe columns, in that order)",
               (Pipe.M, Pipe.S, Pipe.MTE1, Pipe.MTE2, Pipe.FIX))

CORE_KINDS: dict[str, CoreKind] = {kind.name: kind for kind in (AIV, AIC)}
