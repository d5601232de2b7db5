"""Data paths, as a table: (source space, destination space) -> the pipe that moves the bytes, the copy
forms the path takes, and its rules (tt-lang's ``copyhandlers.py`` keys its handlers the same way).

``fusekit.asc.datamove`` looks the path up from its two tensors' spaces, records the copy on the path's
pipe and moves the bytes. The count, DataCopyParams and slice forms move bytes as they are on every path
that lists them; a form whose meaning depends on the direction (``data_copy_pad``: padding in UB on the
way in, exact bytes on the way out) has one handler per path, registered with :func:`copy_handler`.
Facts: AD-API DataCopy（GM与UB连续数据搬运）.md ("GM -> UB runs on MTE2, UB -> GM on MTE3"; UB -> UB on V:
DataCopy（UBToUB高维切分数据搬运）.md), DataCopyPad（GMToUB非对齐数据搬运）.md / （UBToGM…）.md, DataCopy（GM与UB
切片数据搬运）.md, SetAtomicAdd.md (store atomics act on UB -> GM copies). The AIC's paths (``docs/cube.md``, "Data path and buffers":
HW/基本架构.md 表2, 矩阵计算的搬入/总体说明.md): GM -> L1 on MTE2 (the count and DataCopyParams forms move bytes as
they are; ``ND2NZ`` reorders), L1 -> L0A / L0B on MTE1 (``load_data``'s fractal copies, ``LOAD2D``), L1 -> BT on
MTE1 (the bias table; f16 widens to f32), L0C -> GM and L0C -> L1 on FIX (``fixpipe``, ``FIXPIPE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .pipes import Pipe, PipeSpec
from .spaces import Mem, MemSpace

# copy forms (which data_copy / data_copy_pad call forms a path takes)
COUNT = "count"    # data_copy(dst, src, count)
BLOCKS = "blocks"  # data_copy(dst, src, DataCopyParams[, DataCopyEnhancedParams])
SLICE = "slice"    # data_copy(dst, src, slice_list1, slice_list2, dim_value)
PAD = "pad"        # data_copy_pad(dst, src, DataCopyExtParams, ...): one handler per path
ND2NZ = "nd2nz"    # data_copy(dst, src, Nd2NzParams): ND rows into NZ fractals (fusekit.asc.cube.layout)
LOAD2D = "load2d"  # load_data(dst, src, LoadData2DParams): whole 512 B fractals
FIXPIPE = "fixpipe"  # fixpipe(dst, src, FixpipeParamsV220[, ...]): L0C out, NZ or ND, cast / quantise / ReLU


@dataclass(frozen=True)
class DataPath:
    """One data path.

    Attributes:
        src, dst: the spaces it joins.
        pipe: the pipe that moves the bytes (the copy's ``Instr.pipe``).
        forms: the copy forms it takes (:data:`COUNT`, :data:`BLOCKS`, :data:`SLICE`, :data:`PAD`).
        store_atomics: the copy combines with the destination under the store atomics
            (``fusekit.asc.atomic``: SetAtomicAdd / Max / Min act on UB -> GM copies).
        source: where the facts come from.
    """

    src: MemSpace
    dst: MemSpace
    pipe: PipeSpec
    forms: frozenset
    store_atomics: bool
    source: str


_COPY_PAGES = "AD-API DataCopy（GM与UB连续数据搬运）.md, DataCopyPad.md, DataCopy（GM与UB切片数据搬运）.md"

# the table by (source, destination); a new path is one more row (tests add rows to it)
PATHS: dict[tuple[MemSpace, MemSpace], DataPath] = {(p.src, p.dst): p for p in (
    DataPath(Mem.GM, Mem.UB, Pipe.MTE2, frozenset({COUNT, BLOCKS, SLICE, PAD}), False, _COPY_PAGES),
    DataPath(Mem.UB, Mem.GM, Pipe.MTE3, frozenset({COUNT, BLOCKS, SLICE, PAD}), True, _COPY_PAGES + "; SetAtomicAdd.md"),
    DataPath(Mem.UB, Mem.UB, Pipe.V, frozenset({COUNT, BLOCKS}), False, "AD-API DataCopy（UBToUB高维切分数据搬运）.md"),
    DataPath(Mem.GM, Mem.L1, Pipe.MTE2, frozenset({COUNT, BLOCKS, ND2NZ}), False,
             "AD-API 矩阵计算的搬入/总体说明.md; DataCopy（GMToL1随路转换-ND2NZ搬运）.md"),
    DataPath(Mem.L1, Mem.GM, Pipe.MTE3, frozenset({COUNT, BLOCKS}), False,
             "AD-API 数据搬运导览/GM与L1或L0数据搬运.md (A1 / B1 -> GM, count or DataCopyParams); 核内同步能力概述.md "
             "表2 (PIPE_MTE3 on the AIC)"),
    DataPath(Mem.L1, Mem.L0A, Pipe.MTE1, frozenset({LOAD2D}), False, "AD-API LoadData_2D.md (PIPE_MTE1 from L1)"),
    DataPath(Mem.L1, Mem.L0B, Pipe.MTE1, frozenset({LOAD2D}), False, "AD-API LoadData_2D.md (PIPE_MTE1 from L1)"),
    DataPath(Mem.L1, Mem.BT, Pipe.MTE1, frozenset({COUNT, BLOCKS}), False,
             "AD-API DataCopy（L1ToBiasTable-Buffer数据搬运）.md; HW/基本架构.md 表2 (MTE1: L1 -> BT)"),
    DataPath(Mem.L0C, Mem.GM, Pipe.FIX, frozenset({FIXPIPE}), False, "AD-API Fixpipe（L0C到GM数据搬运）.md"),
    DataPath(Mem.L0C, Mem.L1, Pipe.FIX, frozenset({FIXPIPE}), False, "AD-G 基本架构.md (L0C -> FixPipe -> L1)"),
)}

# (source, destination, form) -> the function that runs that form on that path (only direction-dependent forms)
HANDLERS: dict[tuple[MemSpace, MemSpace, str], Callable] = {}


def copy_handler(src: MemSpace, dst: MemSpace, form: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as the ``form`` handler of the path ``src -> dst``."""
    def register(fn: Callable) -> Callable:
        HANDLERS[(src, dst, form)] = fn
        return fn

    return register


def path_between(src: "MemSpace | None", dst: "MemSpace | None") -> "DataPath | None":
    """The path from ``src`` to ``dst``, or None where the machine has none (GM -> GM)."""
    return PATHS.get((src, dst))
