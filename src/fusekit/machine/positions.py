"""The queue positions (``TPosition``s) of a core, as a table: where a queue's buffers are filled from, where they
are drained to, and which unit works on them in between.

A queue's producer pipe is the pipe of the data path that fills its buffers (``fusekit.machine.paths``), or the
unit's pipe where the unit writes them; its consumer pipe is the path's pipe that drains them, or the unit's where
the unit reads them. ``fusekit.asc.fwk`` derives every queue's (producer, consumer) from these rows and the data
paths: the cube's A1 / B1 are filled from GM by MTE2 and drained to L0A / L0B by MTE1, A2 / B2 filled by MTE1
and read by M, C1 filled from GM and drained to the bias table (C2) by MTE1, CO1 written by M and drained by FIX
(the TQue events of AD impl kernel_event.h ``GetQueEvt``: MTE2_MTE1, MTE1_M, M_FIX; ``docs/cube.md``, "Data path and buffers"). Which
space a position is in is its space's row (``MemSpace.positions``).

Facts: AD-G TPipe-TQue框架编程原理.md (VECIN: data moved in from GM by MTE2 and read by the vector unit; VECOUT:
written by the vector unit and moved out to GM by MTE3; VECCALC: the vector unit's temporary buffers); AD-API
TPosition.
"""

from __future__ import annotations

from dataclasses import dataclass

from .paths import PATHS
from .pipes import Pipe, PipeSpec
from .spaces import Mem, MemSpace, position_space


@dataclass(frozen=True)
class Position:
    """One queue position.

    Attributes:
        name: the ``TPosition`` member's name (``"VECIN"``).
        fed_from: the space a data path fills its buffers from (GM for VECIN); None: the unit writes them.
        drains_to: the space a data path drains its buffers to (GM for VECOUT); None: the unit reads them.
        unit: the pipe of the unit that works on its buffers (V on the vector side).
        source: where the facts come from.
    """

    name: str
    fed_from: "MemSpace | None"
    drains_to: "MemSpace | None"
    unit: PipeSpec
    source: str


_TQUE_PAGE = "AD-G TPipe-TQue框架编程原理.md; AD-API TPosition"
_CUBE_PAGE = "AD-G 矩阵编程（基础API）/耦合模式.md (CopyIn, Split, Compute, CopyOut queues); AD impl kernel_event.h"

# the table by name; a new position is one more row (and its name in its space's ``positions``)
POSITIONS: dict[str, Position] = {p.name: p for p in (
    Position("VECIN", Mem.GM, None, Pipe.V, _TQUE_PAGE),
    Position("VECOUT", None, Mem.GM, Pipe.V, _TQUE_PAGE),
    Position("VECCALC", None, None, Pipe.V, _TQUE_PAGE),
    Position("A1", Mem.GM, Mem.L0A, Pipe.MTE1, _CUBE_PAGE),
    Position("B1", Mem.GM, Mem.L0B, Pipe.MTE1, _CUBE_PAGE),
    Position("C1", Mem.GM, Mem.BT, Pipe.MTE1, _CUBE_PAGE),
    Position("A2", Mem.L1, None, Pipe.M, _CUBE_PAGE),
    Position("B2", Mem.L1, None, Pipe.M, _CUBE_PAGE),
    Position("C2", Mem.L1, None, Pipe.M, _CUBE_PAGE),
    Position("CO1", None, Mem.GM, Pipe.M, _CUBE_PAGE),
)}


def queue_pipes(name: str) -> "tuple[PipeSpec, PipeSpec] | None":
    """(producer pipe, consumer pipe) of a queue at TPosition ``name``, from its row and the data paths of its
    space: VECIN (MTE2, V), VECOUT (V, MTE3), VECCALC (V, V). None: no row for the position.

    Raises:
        KeyError: the row names a space no data path joins to the position's space, or no space lists it.
    """
    position = POSITIONS.get(name)
    if position is None:
        return None
    space = position_space(name)
    producer = position.unit if position.fed_from is None else _path_pipe(position.fed_from, space)
    consumer = position.unit if position.drains_to is None else _path_pipe(space, position.drains_to)
    return producer, consumer


def _path_pipe(src: MemSpace, dst: MemSpace) -> PipeSpec:
    try:
        return PATHS[(src, dst)].pipe
    except KeyError:
        raise KeyError(f"no data path {src.name} -> {dst.name} for a queue position's row") from None
