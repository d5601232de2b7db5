"""Host-side tiling for elementwise operators: split n elements over cores, then over UB tiles.

The plan, as a :class:`TilingData`:

- **cores**: every core but the last gets ``block_length`` elements, a multiple of 512 bytes, so
  no two cores write the same 32-byte block (DataCopy moves whole 32 B blocks: AD-API DataCopy)
  and every core's transfers start 512 B-aligned in GM, which gets full bandwidth where a merely
  32 B-aligned address gets about 70 % (AD-G GM地址尽量512B对齐.md). The last core gets the rest,
  ``last_block_length``, which may be shorter and unaligned.
- **small inputs use fewer cores**: a core is given at least ``MIN_BYTES_PER_CORE`` of each
  operand, one 512-byte GM block: a smaller share would break the 512 B alignment above, and below
  it a core's transfers are pure latency. The seed article (section 5.2) asks for such a threshold.
  Why not more: the timing model (``fusekit tune``) finds extra cores worth their cost down to
  that size, because one launch costs the same whatever block_dim and the cores run in parallel.
- **tiles**: a core walks its range in ``tile_length`` elements; ``tile_num`` full tiles then a
  ``tail_length`` tail (the tail of the last core may be unaligned: the kernel moves it with
  DataCopyPad). ``tile_length`` is a multiple of 512 B (so tiles stay 512 B-aligned; it is also
  two vector repeats of 256 B: AD-API 高维切分.md), the largest for which ``BUFFER_NUM`` buffers
  of every queue plus any per-element scratch fit the SoC's ``ub_tiling_bytes``
  (TOTAL_VEC_LOCAL_SIZE), and no longer than the core's range needs. On the timing model this
  default is within 5 % of the best tiling ``fusekit tune`` finds for float16 inputs of 2^16 to
  2^26 elements (tested).
- **32-bit lengths**: kernels take lengths and offsets as int32 (pyasc converts Python ints to
  int32); a total past ``MAX_LAUNCH_ELEMENTS`` is refused here and split by :func:`split_launches`.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass

from fusekit.asc import dtypes
from fusekit.asc.runtime import MAX_CORE_NUM
from fusekit.soc import SoC, get_soc

BLOCK_BYTES = 32
GM_ALIGN_BYTES = 512
MIN_BYTES_PER_CORE = 512
MAX_LAUNCH_ELEMENTS = 2**31 - 1


@dataclass(frozen=True)
class TilingData:
    """Tiling of one launch of an elementwise kernel (all lengths in elements).

    Attributes:
        total_length: elements of the launch.
        block_dim: cores launched (0 when total_length is 0: nothing is launched).
        block_length: elements per core except the last; multiple of 512 bytes.
        tile_length: elements per UB tile; multiple of 512 bytes.
        tile_num, tail_length: full tiles and tail elements of a core with ``block_length``.
        last_block_length, last_tile_num, last_tail_length: the same for the last core.
        buffer_num: BUFFER_NUM, buffers per queue (2 = double buffering).
        ub_bytes: UB bytes the kernel's buffers take (all queues, all buffers, scratch).
    """

    total_length: int
    block_dim: int
    block_length: int
    tile_length: int
    tile_num: int
    tail_length: int
    last_block_length: int
    last_tile_num: int
    last_tail_length: int
    buffer_num: int
    ub_bytes: int

    def core_range(self, block_idx: int) -> tuple[int, int]:
        """(first element, element count) of core ``block_idx``."""
        if not 0 <= block_idx < self.block_dim:
            raise IndexError(f"block_idx {block_idx} outside [0, {self.block_dim})")
        last = block_idx == self.block_dim - 1
        return block_idx * self.block_length, self.last_block_length if last else self.block_length

    def tiles(self, block_idx: int) -> list[tuple[int, int]]:
        """(first element, element count) of each tile of core ``block_idx``, tail included."""
        start, length = self.core_range(block_idx)
        full = [(start + i * self.tile_length, self.tile_length) for i in range(length // self.tile_length)]
        tail = length % self.tile_length
        return full + ([(start + length - tail, tail)] if tail else [])

    def kernel_args(self) -> dict[str, int]:
        """The fields a kernel takes as scalar arguments."""
        fields = asdict(self)
        for host_only in ("total_length", "block_dim", "tile_length", "buffer_num", "ub_bytes"):
            fields.pop(host_only)
        return fields


def compute_tiling(total_length: int, dtype, *, num_queues: int = 3, buffer_num: int = 2,
                   soc: "str | SoC | None" = None, core_num: int | None = None,
                   scratch_bytes_per_element: int = 0, tile_length: int | None = None) -> TilingData:
    """Plan cores and tiles for ``total_length`` elements of ``dtype`` (see module doc).

    Args:
        total_length: elements, 0 <= n <= MAX_LAUNCH_ELEMENTS.
        dtype: element type (asc DataType, numpy dtype or name).
        num_queues: TQues with ``buffer_num`` buffers of one tile each (FusedAddScale: x1, x2, y).
        buffer_num: BUFFER_NUM, 1 to 8.
        soc: SoC name (default Ascend910B1); gives the core count and UB budget.
        core_num: most cores to use (default: all of the SoC's vector cores), 1 to 65535.
        scratch_bytes_per_element: UB bytes per tile element outside the queues (TBuf scratch,
            e.g. 8 for two float32 buffers of the fp32 precision mode).
        tile_length: force a tile length (elements, multiple of 512 B); default: the largest that fits.

    Raises:
        ValueError: a parameter out of range, a total too large for 32-bit kernel lengths, or a
            forced tile length that does not fit UB.
    """
    dt = dtypes.as_dtype(dtype)
    spec = get_soc(soc)
    size = dt.sizeof()
    _check_int("total_length", total_length, 0, MAX_LAUNCH_ELEMENTS,
               "split larger inputs into several launches (fusekit.tiling.split_launches)")
    _check_int("buffer_num", buffer_num, 1, 8)
    _check_int("num_queues", num_queues, 1, 64)
    cores = spec.vector_cores if core_num is None else core_num
    _check_int("core_num", cores, 1, MAX_CORE_NUM)
    per_elem = num_queues * buffer_num * size + scratch_bytes_per_element
    if total_length == 0:
        return TilingData(0, 0, 0, 0, 0, 0, 0, 0, 0, buffer_num, 0)

    align = GM_ALIGN_BYTES // size
    wanted = min(cores, max(1, -(-total_length * size // MIN_BYTES_PER_CORE)))
    block_length = _round_up(-(-total_length // wanted), align)
    block_dim = -(-total_length // block_length)
    if block_dim == 1:
        block_length = total_length
    last_block_length = total_length - (block_dim - 1) * block_length

    repeat = GM_ALIGN_BYTES // size
    fit = spec.ub_tiling_bytes // per_elem // repeat * repeat
    if tile_length is None:
        tile_length = min(fit, _round_up(block_length, repeat))
    elif tile_length <= 0 or tile_length % repeat or tile_length > fit:
        raise ValueError(f"tile_length={tile_length} must be a positive multiple of {repeat} elements (512 B) and at "
                         f"most {fit}, the most that fits {spec.ub_tiling_bytes} B of UB with {num_queues} queues x "
                         f"{buffer_num} buffers")
    if tile_length == 0:
        raise ValueError(f"no tile of {repeat} x {dt.name} fits in {spec.ub_tiling_bytes} B of UB with {num_queues} "
                         f"queues x {buffer_num} buffers; lower buffer_num")
    ub = num_queues * buffer_num * _round_up(tile_length * size, BLOCK_BYTES) + scratch_bytes_per_element * tile_length
    return TilingData(
        total_length=total_length, block_dim=block_dim, block_length=block_length, tile_length=tile_length,
        tile_num=block_length // tile_length, tail_length=block_length % tile_length,
        last_block_length=last_block_length, last_tile_num=last_block_length // tile_length,
        last_tail_length=last_block_length % tile_length, buffer_num=buffer_num, ub_bytes=ub)


def split_launches(total_length: int, dtype, max_elements: int | None = None) -> list[tuple[int, int]]:
    """(first element, element count) of each launch needed so that every launch fits 32-bit lengths.

    ``max_elements`` defaults to :data:`MAX_LAUNCH_ELEMENTS`. Each launch but the last covers a
    whole number of 512-byte blocks, so every launch starts 512 B-aligned in GM (AD-G
    GM地址尽量512B对齐.md).
    """
    size = dtypes.as_dtype(dtype).sizeof()
    max_elements = MAX_LAUNCH_ELEMENTS if max_elements is None else max_elements
    _check_int("total_length", total_length, 0, None)
    step = max_elements // (512 // size) * (512 // size)
    if step <= 0:
        raise ValueError(f"max_elements={max_elements} is below one 512 B block of {size}-byte elements")
    return [(start, min(step, total_length - start)) for start in range(0, total_length, step)]


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _check_int(name: str, value, lo: int, hi: int | None, hint: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo or (hi is not None and value > hi):
        bound = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name}={value!r} must be an integer in {bound}" + (f"; {hint}" if hint else ""))
