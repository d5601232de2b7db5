"""The memory spaces, as a table: ``Mem.GM`` (the chip's global memory), ``Mem.UB`` (each AIV core's
Unified Buffer) and the AIC's (cube core's) L1, L0A, L0B, L0C and BT (bias table).

A space's row says what the rest of fusekit needs to know about it, so that nothing branches on a
space's name: whether it is global (one buffer per kernel argument, shared by every core) or local
(one arena per core, ``fusekit.asc.runtime.Core.arenas``); its size, read from the SoC's sourced figure
(``fusekit.soc``); the address alignment of its operands; the ``TPosition``s a tensor there has; the core
kind that holds it; whether the scalar unit's data cache sits in front of it. The sanitizer keys its shadow
memory by scope (``fusekit.sanitizer.scan``), a ``LocalTensor`` reads and writes the arena of its space
(``fusekit.asc.tensor``), and the data paths (``fusekit.machine.paths``) join spaces. A rule that the
documents state for one space only (the UB's bank groups, the UB scratch of ``select``) names that space
through :func:`space_named`, with the rule's page beside it.

The AIC's spaces and their TPositions (AD-API 通用说明和约束.md 表1; ``docs/cube.md``, "Data path and buffers"): L1 holds A1 / B1 / C1,
L0A A2, L0B B2, L0C CO1 and the bias table C2; operands align to 32 B in L1, 512 B (one fractal) in L0A / L0B,
64 B in L0C and BT (NPU架构版本2201.md). Where the sources disagree on L0C (Mmad.md asks 1024 B of Mmad's dst),
fusekit takes the architecture page's 64 B, the alignment of every other L0C operand (Fixpipe's src); a Mmad
into an L0C tensor off a 1024 B boundary is accepted. The Fixpipe buffer (FB) has no TPosition in pyasc;
Fixpipe's quantisation vectors are read from L1 (``fusekit.asc.cube``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .rows import Row


class Scope(enum.Enum):
    GLOBAL = "global"  # one chip-wide memory; its buffers are the kernel's GM arguments, shared by every core
    LOCAL = "local"    # one arena per core that owns the space; no other core can address it


@dataclass(frozen=True, eq=False)
class MemSpace(Row):
    """One memory space. The rows compare by identity and stand where the former ``Mem`` enum's members did
    (``Access.mem``), with the same ``name``, ``value`` and repr.

    Attributes:
        name: as Ascend C names it (``"UB"``); a local space's arena is the ``Access.buffer`` ``name``.
        scope: :class:`Scope`.
        size_field: the ``SoC`` attribute holding the size in bytes, sourced in ``SoC.sources``; None for GM,
            which is as large as the buffers the host passes.
        alignment: bytes an instruction operand's address must be a multiple of (1: any element address).
        positions: the ``TPosition`` names of tensors that live here.
        owner: the core kind holding one arena per core (``fusekit.machine.cores``), None for a global space.
        source: where the facts come from.
        scalar_cached: the scalar unit's ``get_value`` / ``set_value`` of this space go through the core's data
            cache of 64 B lines, which neither the MTEs nor other cores keep coherent (AD-API 缓存控制/
            DataCacheCleanAndInvalid.md; ``fusekit.asc.cache``, ``fusekit.sanitizer.cachecheck``): GM.
    """

    name: str
    scope: Scope
    size_field: "str | None"
    alignment: int
    positions: tuple[str, ...]
    owner: "str | None"
    source: str
    scalar_cached: bool = False

    @property
    def is_global(self) -> bool:
        """One chip-wide memory holding the kernel's GM arguments, shared by every core (off-chip)."""
        return self.scope is Scope.GLOBAL

    @property
    def is_local(self) -> bool:
        """On-chip memory of one core: each core of the owning kind has an arena of its own."""
        return self.scope is Scope.LOCAL

    def size(self, soc) -> "int | None":
        """Bytes of one arena of this space on ``soc`` (None for a global space)."""
        return None if self.size_field is None else getattr(soc, self.size_field)

    def __repr__(self) -> str:
        return f"<Mem.{self.name}: {self.name!r}>"

    @classmethod
    def named(cls, name: str) -> "MemSpace":
        return space_named(name)


class Mem:
    """The memory spaces (the table's rows by name)."""

    GM = MemSpace("GM", Scope.GLOBAL, None, 1, ("GM",), None,
                  "AD-G 编程模型/抽象硬件架构.md (Global Memory, shared by every core); any element address; "
                  "AD-API DataCacheCleanAndInvalid.md (scalar accesses are cached)", scalar_cached=True)
    UB = MemSpace("UB", Scope.LOCAL, "ub_bytes", 32, ("VECIN", "VECOUT", "VECCALC"), "AIV",
                  "AD-API 通用说明和约束.md (UB operands start on a 32 B boundary); AD-API TPosition "
                  "(VECIN / VECOUT / VECCALC are UB); size: fusekit.soc SoC.ub_bytes")
    L1 = MemSpace("L1", Scope.LOCAL, "l1_bytes", 32, ("A1", "B1", "C1"), "AIC",
                  "AD-API TPosition (A1 / B1 / C1 are L1); 32 B: NPU架构版本2201.md; size: fusekit.soc SoC.l1_bytes")
    L0A = MemSpace("L0A", Scope.LOCAL, "l0a_bytes", 512, ("A2",), "AIC",
                   "AD-API TPosition (A2 is L0A); 512 B fractal alignment: NPU架构版本2201.md, Mmad.md 表3")
    L0B = MemSpace("L0B", Scope.LOCAL, "l0b_bytes", 512, ("B2",), "AIC",
                   "AD-API TPosition (B2 is L0B); 512 B fractal alignment: NPU架构版本2201.md, Mmad.md 表3")
    L0C = MemSpace("L0C", Scope.LOCAL, "l0c_bytes", 64, ("CO1",), "AIC",
                   "AD-API TPosition (CO1 is L0C); 64 B: NPU架构版本2201.md (Mmad.md's 1024 B for Mmad's dst is not "
                   "enforced, module docstring)")
    BT = MemSpace("BT", Scope.LOCAL, "bt_bytes", 64, ("C2",), "AIC",
                  "AD-API TPosition (C2 is the bias table on arch 2201); 64 B: NPU架构版本2201.md, Mmad.md 表3")


# the table by name; a new space is one more row (tests add rows to it)
SPACES: dict[str, MemSpace] = {space.name: space for space in (Mem.GM, Mem.UB, Mem.L1, Mem.L0A, Mem.L0B, Mem.L0C,
                                                                Mem.BT)}


def space_named(name: str) -> MemSpace:
    """The row of space ``name`` (``"UB"``).

    Raises:
        KeyError: no such space.
    """
    try:
        return SPACES[name]
    except KeyError:
        raise KeyError(f"no memory space {name!r}: the spaces are {', '.join(SPACES)}") from None


def local_spaces(kind: str) -> list[MemSpace]:
    """The spaces a core of ``kind`` holds an arena of, in table order."""
    return [space for space in SPACES.values() if space.owner == kind]


def position_space(position: str) -> MemSpace:
    """The space whose row lists TPosition ``position`` (its name), of either scope: ``"GM"`` is GM, ``"VECIN"``
    the UB.

    Raises:
        KeyError: no space lists the position.
    """
    for space in SPACES.values():
        if position in space.positions:
            return space
    raise KeyError(f"no memory space lists TPosition {position!r}")


def space_at(kind: str, position: "str | None") -> MemSpace:
    """The space a tensor at TPosition ``position`` (its name) lives in on a core of ``kind``.

    No position, or one no space lists (``TPosition.MAX``), gives the core's first local space (the UB on an AIV
    core, L1 on an AIC).

    Raises:
        LookupError: the position is in a space another core kind owns (A1 on an AIV core, VECIN on an AIC); the
            message names both kinds.
    """
    spaces = local_spaces(kind)
    for space in spaces:
        if position in space.positions:
            return space
    for space in SPACES.values():
        if position in space.positions and space.is_local:
            raise LookupError(f"TPosition.{position} is the {space.owner}'s {space.name}, which an {kind} core does "
                              "not have")
    return spaces[0]
