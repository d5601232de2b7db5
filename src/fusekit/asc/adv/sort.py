"""``asc.adv.concat`` and ``asc.adv.extract``: the data preparation around Sort (pyasc 1.1.1
``python/asc/language/adv/sort.py``; asc-devkit docs/zh/api/SIMD-API/高阶API/排序操作/Concat.md, Extract.md).

What they do on Atlas A2/A3 (arch 2201) is in asc-devkit ``impl/basic_api/kernel_operator_proposal_intf_impl.h``
(Concat, Extract, the ``__NPU_ARCH__ == 2201`` branches):

- ``concat(dst, src, tmp, repeat_time)``: ``concat = src``. No instruction runs: the dst LocalTensor becomes src
  (same UB bytes, length and buffer), because Sort on A2 reads the scores as they are. fusekit rebinds the dst object
  the same way, so a later ``asc.sort(sorted, dst, index, ...)`` reads src. tmp is not touched (GetConcatTmpSize
  returns 0 on arch 2201, sort_tiling_impl.cpp).
- ``extract(dst_value, dst_index, src, repeat_time)``: two GatherMask instructions over the sorted 8-byte elements
  (score in the low bytes, uint32 index in the high 4 B: Sort32.md): the scores with built-in pattern 1 (float:
  even 32-bit lanes) or 3 (half: lane 0 of every four 16-bit lanes), ``repeat_time`` repeats of 256 B; the indices
  with pattern 2 (odd 32-bit lanes) over ``repeat_time`` repeats for float and ``2 x repeat_time`` for half, as the
  implementation issues them. Each repeat of the value pass yields 32 elements; fusekit runs the two GatherMask
  instructions themselves (:func:`fusekit.asc.gather_mask`), so the Trace holds them with their reads and writes,
  and the mask register ends in Normal mode as after GatherMask. NOTE: for half, the index pass therefore reads
  512 B and writes 64 indices per repeat, twice the value pass; fusekit follows the implementation and reports the
  accesses that implies (not confirmed on an NPU).

Atlas inference AI Core (arch 2002) runs ProposalConcat / ProposalExtract on region proposals, which fusekit does
not simulate: both functions say so there. dtypes half and float (模板参数 T); every operand starts on 32 B (参数说明:
LocalTensor的起始地址需要32字节对齐); repeat_time is in [0, 255] (ASCENDC_CHECK_VALUE_RANGE).
"""

from __future__ import annotations

import numpy as np

from .. import checks, dtypes
from ..basic.vec_gather_mask import GatherMaskParams, gather_mask
from ..runtime import current

_PAGES = {"concat": "asc-devkit docs/zh/api/SIMD-API/高阶API/排序操作/Concat.md",
          "extract": "asc-devkit docs/zh/api/SIMD-API/高阶API/排序操作/Extract.md"}
_FLOATS = ("float16", "float32")


def _common(op: str, tensors, repeat_time) -> object:
    core = current(op)
    checks.local_operands(core, op, *tensors)
    for t in tensors:
        if t.dtype.name not in _FLOATS:
            raise core.error(op, f"{t.name} is {t.dtype.name}; asc.adv.{op} takes half or float ({_PAGES[op]}, 模板参数 T)",
                             kind="unsupported", **t.describe(0))
    checks.same_dtype(core, op, *tensors)
    if isinstance(repeat_time, bool) or not isinstance(repeat_time, (int, np.integer)) or not 0 <= repeat_time <= 255:
        raise core.error(op, f"repeat_time must be an int in [0, 255] ({_PAGES[op]}), got {repeat_time!r}")
    if core.soc.arch != "2201":
        raise core.error(op, f"asc.adv.{op} on {core.soc.name} runs ProposalConcat / ProposalExtract on region "
                             "proposals, which fusekit does not simulate yet; run on an Atlas A2 SoC",
                         kind="unsupported")
    return core


def concat(dst, src, tmp, repeat_time) -> None:
    """asc.adv.concat: make ``dst`` the sort input for ``src`` (Concat; module docstring): on Atlas A2/A3 the dst
    LocalTensor becomes src itself (Ascend C ``concat = src``). dst, src, tmp: half or float UB LocalTensors of one
    dtype, 32 B aligned; repeat_time: int in [0, 255] (16 elements each). Nothing is recorded in the Trace (no
    instruction runs).

    Raises:
        KernelError: dtypes, alignment, repeat_time out of range, an SoC other than Atlas A2/A3.
    """
    _common("concat", (dst, src, tmp), repeat_time)
    for slot in ("core", "addr", "length", "dtype", "name", "owner", "site"):
        setattr(dst, slot, getattr(src, slot))


def extract(dst_value, dst_index, src, repeat_time) -> None:
    """asc.adv.extract: the scores and uint32 indices of the sorted 8-byte elements of ``src`` (Extract), on PIPE_V.

    dst_value, src: half or float UB LocalTensors (same dtype); dst_index: uint32 UB LocalTensor; repeat_time: int
    in [0, 255]: 32 elements per repeat (module docstring for the half index pass). Runs two GatherMask instructions.

    Raises:
        KernelError: dtypes, alignment, repeat_time out of range, operands too short for the GatherMask passes, an
            SoC other than Atlas A2/A3.
    """
    op = "extract"
    core = _common(op, (dst_value, src), repeat_time)
    checks.local_operands(core, op, dst_index)
    if dst_index.dtype.name != "uint32":
        raise core.error(op, f"dst_index {dst_index.name} is {dst_index.dtype.name}; it is LocalTensor<uint32_t> "
                             f"({_PAGES[op]}, 参数说明)", kind="unsupported", **dst_index.describe(0))
    if not repeat_time:
        return
    half = src.dtype.name == "float16"
    gather_mask(dst_value, src, 3 if half else 1, False, 0, GatherMaskParams(1, int(repeat_time), 8, 0))
    gather_mask(dst_index, src.reinterpret_cast(dtypes.uint32), 2, False, 0,
                GatherMaskParams(1, int(repeat_time) * (2 if half else 1), 8, 0))
