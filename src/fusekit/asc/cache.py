"""The scalar unit's data cache over GM, and ``data_cache_clean_and_invalid``.

Facts (AD-API 缓存控制/DataCacheCleanAndInvalid.md, "功能说明", "参数说明", "调用示例"):

- the DMA units (DataCopy: MTE2 / MTE3) read and write GM directly; the scalar unit's GM accesses
  (``GlobalTensor.get_value`` / ``set_value``) go through the core's own Data Cache, which the
  DMA units and other cores do not update: "Scalar单元访问GM，首先会访问每个核内的Data Cache，
  因此存在Data Cache与GM的Cache一致性问题";
- the cache works on 64-byte lines: ``SINGLE_CACHE_LINE`` cleans and invalidates the line holding
  the address ("如果该地址非64B对齐，只会操作传入地址到64B对齐的部分"; example 2: a uint64 tensor at
  0x20 needs a second call at ``global[4]`` for the next line);
- clean writes a dirty line back to GM, invalid drops it so the next scalar access reloads it
  from GM. Lines are written back whole: cores storing to different words of one line overwrite
  each other at random (example 3, "多核操作虽然不在同一个地址，但在同一个Cache Line，会出现数据的随机
  覆盖");
- ``GlobalTensor.GetValue``'s constraint (pyasc ``core/utils.py``, get_value docstring): if the GM
  may have been written by others, call data_cache_clean_and_invalid before reading.

The model: each core has a write-back, write-allocate cache of 64 B lines keyed by GM buffer and
``byte // 64`` (GM buffers are taken to start on a 64 B boundary, as the sanitizer's 32 B blocks
are). A scalar access loads the whole line on a miss; ``set_value`` changes only the cached copy;
``data_cache_clean_and_invalid`` writes a dirty line back whole and drops it; lines still dirty
are written back when the core is done (a write-back may happen at any time before the kernel
ends; the simulator takes the latest it can): cores run one after another write back as each
ends, and cores of a kernel that calls sync_all, which run concurrently, at the end of the launch in block
order. So the simulator returns what the NPU can return: a scalar read after another agent's write
to a line the core holds gives the stale value; an MTE read (on this core, or on another after
sync_all) of bytes a scalar store has not written back gives the old GM bytes; and after sync_all,
cores storing into one line lose all but the last core's bytes. Cores that do not synchronise run
one after another, each writing its lines back as it ends, so their stores into one line do not
lose each other in the simulated values: that case is only flagged. The sanitizer
(``fusekit.sanitizer.cachecheck``) flags every one of these from the Trace.
"""

from __future__ import annotations

import enum

import numpy as np

from .runtime import Core, GmArray, current
from .trace import Access, Pipe

LINE = 64  # bytes per data-cache line (AD-API DataCacheCleanAndInvalid.md, SINGLE_CACHE_LINE)


class CacheLine(enum.IntEnum):
    """pyasc ``asc.CacheLine`` (``core/enums.py``): which lines ``data_cache_clean_and_invalid`` handles."""

    SINGLE_CACHE_LINE = 0  # the 64 B line holding dst's address
    ENTIRE_DATA_CACHE = 1  # every line of the core's data cache (slow on the NPU)


class DcciDst(enum.IntEnum):
    """pyasc ``asc.DcciDst`` (``core/enums.py``): which memory the cache is made coherent with."""

    CACHELINE_ALL = 0      # same as CACHELINE_OUT
    CACHELINE_UB = 1       # reserved, not supported
    CACHELINE_OUT = 2      # GM
    CACHELINE_ATOMIC = 3   # not supported on A2/A3/310P


class _Line:
    __slots__ = ("gm", "start", "data", "dirty")

    def __init__(self, gm: GmArray, start: int):
        self.gm, self.start = gm, start
        self.data = gm.data[start:start + LINE].copy()  # a miss loads the whole line
        self.dirty = False


class DataCache:
    """One core's data cache: lines by (GM buffer name, line index)."""

    def __init__(self):
        self.lines: dict[tuple[str, int], _Line] = {}

    def line(self, gm: GmArray, byte: int) -> _Line:
        key = (gm.name, byte // LINE)
        line = self.lines.get(key)
        if line is None:
            line = self.lines[key] = _Line(gm, byte // LINE * LINE)
        return line

    def read(self, gm: GmArray, start: int, stop: int) -> np.ndarray:
        """Bytes ``[start, stop)`` of ``gm`` as this core sees them (one element: within one line)."""
        line = self.line(gm, start)
        return line.data[start - line.start:stop - line.start]

    def write(self, gm: GmArray, start: int, data: np.ndarray) -> None:
        line = self.line(gm, start)
        line.data[start - line.start:start - line.start + data.size] = data
        line.dirty = True

    def clean_invalidate(self, keys) -> None:
        """Write the given lines back if dirty, whole, and drop them."""
        for key in keys:
            line = self.lines.pop(key, None)
            if line is not None and line.dirty:
                line.gm.data[line.start:line.start + line.data.size] = line.data

    def flush(self) -> None:
        self.clean_invalidate(list(self.lines))


def cache_of(core: Core) -> DataCache:
    """The data cache of ``core`` (made on its first scalar GM access)."""
    cache = core.dcache
    if cache is None:
        cache = core.dcache = DataCache()
    return cache


def data_cache_clean_and_invalid(entire_type: CacheLine, dst: "GlobalTensor", dcci_dst: DcciDst = None) -> None:
    """``DataCacheCleanAndInvalid<T, entireType[, dcciDst]>(dst)`` with pyasc 1.1.1's signature.

    Writes the core's dirty data-cache lines back to GM (whole 64 B lines) and invalidates them,
    so that later scalar reads see GM and later MTE reads see the scalar stores. Runs on PIPE_S and
    is recorded in the Trace with the lines it handles (``Instr.lines``).

    Args:
        entire_type: ``CacheLine.SINGLE_CACHE_LINE`` (the 64 B line holding ``dst``'s first element)
            or ``CacheLine.ENTIRE_DATA_CACHE`` (every line; ``dst`` is ignored by the NPU).
        dst: a GlobalTensor (pyasc takes no LocalTensor here).
        dcci_dst: None, ``DcciDst.CACHELINE_OUT`` or ``CACHELINE_ALL`` (the same): coherence with GM.
            ``CACHELINE_UB`` is reserved and ``CACHELINE_ATOMIC`` unsupported on A2/A3/310P; 310P
            takes only the form without dcci_dst (AD-API DataCacheCleanAndInvalid.md, 参数说明).

    Raises:
        KernelError: wrong argument types, an unsupported dcci_dst, or an address outside dst's view.
    """
    from .tensor import GlobalTensor  # tensor.py reads GM through this module's cache

    core, op = current("data_cache_clean_and_invalid"), "data_cache_clean_and_invalid"
    if isinstance(dst, DcciDst) and isinstance(dcci_dst, GlobalTensor):
        raise core.error(op, "pyasc 1.1.1 binds positional arguments as (entire_type, dst, dcci_dst): pass "
                             "data_cache_clean_and_invalid(entire_type=..., dcci_dst=..., dst=...) by keyword, or "
                             "(entire_type, dst, dcci_dst)")
    if not isinstance(entire_type, CacheLine):
        raise core.error(op, f"entire_type must be asc.CacheLine.SINGLE_CACHE_LINE or ENTIRE_DATA_CACHE, got "
                             f"{entire_type!r}")
    if not isinstance(dst, GlobalTensor):
        raise core.error(op, f"dst must be an asc.GlobalTensor (pyasc 1.1.1 has no LocalTensor form), got "
                             f"{type(dst).__name__}")
    if dcci_dst is not None:
        if not isinstance(dcci_dst, DcciDst):
            raise core.error(op, f"dcci_dst must be an asc.DcciDst or None, got {dcci_dst!r}")
        if core.soc.arch == "2002":
            raise core.error(op, f"{core.soc.name} (arch 2002) takes only data_cache_clean_and_invalid(entire_type, "
                                 "dst), without dcci_dst (AD-API DataCacheCleanAndInvalid.md)", kind="unsupported")
        if dcci_dst in (DcciDst.CACHELINE_UB, DcciDst.CACHELINE_ATOMIC):
            raise core.error(op, f"DcciDst.{dcci_dst.name} is not supported on {core.soc.name} (reserved / "
                                 "unsupported on Atlas A2, A3 and 310P): use DcciDst.CACHELINE_OUT for GM",
                             kind="unsupported")
    dst._check_set(op)
    cache = cache_of(core)
    if entire_type is CacheLine.SINGLE_CACHE_LINE:
        start, _ = dst.span(core, op, 1)
        first = start // LINE * LINE
        keys = [(dst.gm.name, start // LINE)]
        lines = (Access(dst.space, dst.gm.name, first, min(first + LINE, dst.gm.data.size), dst.name),)
    else:
        keys = list(cache.lines)
        space = GlobalTensor.space  # every line the cache holds is of a GM buffer, the space GlobalTensors are in
        lines = tuple(Access(space, name, i * LINE, min((i + 1) * LINE, cache.lines[(name, i)].gm.data.size), name)
                      for name, i in keys)
    core.record(op, Pipe.S, lines=lines, nbytes=sum(a.nbytes for a in lines),
                effect=lambda: cache.clean_invalidate(keys))  # a closure: it acts on the data cache, not on lanes


__all__ = ["CacheLine", "DcciDst", "LINE", "data_cache_clean_and_invalid"]
