"""Copy: UB -> UB vector copy with a mask and block / repeat strides
(pyasc basic/data_copy.py ``copy``; AD-API Memory矢量计算/数据搬运/Copy（UBToUB掩码式高维数据搬运）.md).

Forms: ``copy(dst, src, mask: int | List[int], repeat_time, repeat_params: CopyRepeatParams, is_set_mask=True)``.
The lanes and strides follow 高维切分.md like any vector instruction, with CopyRepeatParams's
fields: ``dst_stride`` / ``src_stride`` (block strides, uint16, [0, 65535]) and ``dst_repeat_size`` /
``src_repeat_size`` (repeat strides, [0, 4095]), all in 32 B blocks (表3, 表4).

Counter mode differs from the other vector instructions (Copy.md 约束说明): the mask is the number
of elements of *each* repeat and ``repeat_time`` counts, instead of the mask being the total.
Available on Atlas A2/A3, not on Atlas inference (310P) AI Core (产品支持情况).
"""

from __future__ import annotations

import numpy as np

from .. import checks, corestate
from ..runtime import current
from .execute import execute
from .iteration import (IS_SET_MASK, MASK_INT, MASK_LIST, MAX_REPEAT, MISSING, Form, Iteration, Param, RepeatParams,
                        bind, iteration)
from .mask import FULL, MaskMode, register_of, write
from .spec import NO_FIGURE, Spec, export, register

SPEC = register(Spec("copy", "Copy", "vec_copy",
                     {"2201": frozenset({"int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32"})},
                     compute=lambda x: x, cost=NO_FIGURE, arithmetic=False,
                     source="AD-API Memory矢量计算/数据搬运/Copy（UBToUB掩码式高维数据搬运）.md", doc="dst = src"))


class CopyRepeatParams(RepeatParams):
    """pyasc ``asc.CopyRepeatParams(dst_stride=0, src_stride=0, dst_repeat_size=0, src_repeat_size=0)``: block
    strides (uint16, [0, 65535]) and repeat strides ([0, 4095]) in 32 B blocks (Copy.md 表3 / 表4)."""

    _FIELDS = (("dst_stride", 65535), ("src_stride", 65535), ("dst_repeat_size", 4095), ("src_repeat_size", 4095))

    @staticmethod
    def _default(name: str) -> int:
        return 0  # pyasc's defaults (core/types.py)

    def strides(self, core, op: str) -> dict[str, tuple[int, int]]:
        v = self.checked(core, op)
        return {"dst": (v["dst_stride"], v["dst_repeat_size"]), "src": (v["src_stride"], v["src_repeat_size"])}


export(CopyRepeatParams)

_RT = Param("repeat_time", (int, np.integer), "int")
_RP = Param("repeat_params", (CopyRepeatParams,), "CopyRepeatParams")
_strides = lambda v, core, op: v["repeat_params"].strides(core, op)  # noqa: E731
FORMS = (Form("split", (MASK_INT, _RT, _RP, IS_SET_MASK), _strides),
         Form("split", (MASK_LIST, _RT, _RP, IS_SET_MASK), _strides))


def _counter_iteration(core, op: str, form: Form, values: dict, lanes: int) -> Iteration:
    """Counter mode: ``mask`` elements in each of ``repeat_time`` repeats (Copy.md 约束说明, 图1)."""
    mask = values["mask"]
    if values["is_set_mask"]:
        per = int(mask[0]) if isinstance(mask, (list, tuple)) else int(mask)
        write(core, high=0, low=per & FULL)
    else:
        corestate.read(core, "mask", op)
        per = register_of(core).low
    if not 0 <= per <= lanes:
        raise core.error(op, f"in Counter mode Copy's mask is the element count of each repeat; it must be in "
                             f"[0, {lanes}] for {256 // lanes}-byte elements, got {per} (Copy.md 约束说明)")
    strides = form.strides(values, core, op)
    if strides["dst"][0] == 0:
        raise core.error(op, "CopyRepeatParams.dst_stride is 0: every block of a repeat would land on one block, which "
                             "the NPU leaves undefined (高维切分.md); use 1 for consecutive blocks")
    repeats = int(values["repeat_time"]) if per else 0
    return Iteration("split" if values["is_set_mask"] else "register", lanes, repeats, bits=np.arange(lanes) < per,
                     strides=strides)


@export
def copy(dst=MISSING, src=MISSING, *args, **kwargs) -> None:
    """``dst = src`` on the active lanes of each repeat, with CopyRepeatParams strides, on PIPE_V.

    Forms (pyasc data_copy.py): ``(dst, src, mask: int | List[int], repeat_time, repeat_params, is_set_mask=True)``.
    ``repeat_time`` in [0, 255]. dtypes (Copy.md 数据类型, A2/A3): int16, uint16, half, bfloat16, int32,
    uint32, float; not available on 310P.

    Raises:
        KernelError: a call form, dtype / SoC, stride range, bounds or overlap rule is broken.
    """
    op = "copy"
    core = current(op)
    form, values = bind(core, op, "dst, src", FORMS, args, kwargs, (dst, src))
    checks.local_operands(core, op, dst, src)
    checks.same_dtype(core, op, dst, src)
    checks.dtype_supported(core, SPEC, dst)
    rt = values["repeat_time"]
    if not 0 <= rt <= MAX_REPEAT:
        raise core.error(op, f"repeat_time must be in [0, {MAX_REPEAT}] (a uint8; Copy.md), got {rt}")
    width = dst.dtype.sizeof()
    corestate.read(core, "mask_mode", op)
    if register_of(core).mode is MaskMode.COUNTER:
        it = _counter_iteration(core, op, form, values, 256 // width)
    else:
        it = iteration(core, op, form, dict(values, repeat_times=rt), width)
    execute(core, SPEC, it, dst, {"src": src})
