"""What the analyses may know about an instruction beyond its recorded facts: its kind and its properties.

The happens-before model, the sanitizer and the timing model ask "is it a transfer?", "does the scalar
unit wait for its value?", never "is its name data_copy?" (tinygrad's ``GroupOp`` property sets).
Instructions whose properties follow from their record (a Sync record, PIPE_S, a vector pipe) need no
entry; the few that do not are declared in :data:`DECLARED`, in one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .trace import Instr, Pipe


class Kind(enum.Enum):
    """What an instruction does, as the analyses cost and order it."""

    COMPUTE = "compute"    # a vector (or other engine) instruction on its pipe
    TRANSFER = "transfer"  # DataCopy / DataCopyPad: an MTE moves bytes (UB -> UB copies run on PIPE_V)
    SYNC = "sync"          # a flag, queue, barrier or sync_all record
    SCALAR = "scalar"      # the scalar unit: register writes, scalar loads and stores


@dataclass(frozen=True)
class Properties:
    """Properties of one instruction.

    Attributes:
        kind: see :class:`Kind`.
        blocks_scalar: the kernel's scalar code needs the value it reads before it goes on
            (``GetValue`` returns it), so no later instruction can be issued ahead of it.
        auto_synced: automatic synchronisation orders this scalar access against the other pipes
            (关键特性说明.md, cce-auto-sync 使用约束: LocalTensor GetValue / SetValue and GlobalTensor
            GetValue; ``fusekit.hb`` rule 2 leaves out the GlobalTensor SetValue itself).
        moves_padding: it copies whole fractals, padding rows and columns included, that no instruction interprets
            ("无效数据 ... 在计算中会被忽略", Mmad.md 约束说明; the Mmad reads only its m x k and k x n elements), so
            its reads of bytes nothing wrote are no initcheck finding.
    """

    kind: Kind
    blocks_scalar: bool = False
    auto_synced: bool = False
    moves_padding: bool = False


DECLARED: dict[str, Properties] = {
    "data_copy": Properties(Kind.TRANSFER),
    "data_copy_pad": Properties(Kind.TRANSFER),
    "load_data": Properties(Kind.TRANSFER, moves_padding=True),  # MTE1: L1 -> L0A / L0B, whole fractals
    "load_data_with_transpose": Properties(Kind.TRANSFER, moves_padding=True),
    "fixpipe": Properties(Kind.TRANSFER),    # FIX: L0C -> GM / L1
    "get_value": Properties(Kind.SCALAR, blocks_scalar=True, auto_synced=True),
    "set_value": Properties(Kind.SCALAR, auto_synced=True),
}

_SYNC, _SCALAR, _COMPUTE = Properties(Kind.SYNC), Properties(Kind.SCALAR), Properties(Kind.COMPUTE)


def properties(instr: Instr) -> Properties:
    """The properties of ``instr``: declared for its op, else from its record."""
    declared = DECLARED.get(instr.op)
    if declared is not None:
        return declared
    if instr.sync is not None:
        return _SYNC
    return _SCALAR if instr.pipe is Pipe.S else _COMPUTE
