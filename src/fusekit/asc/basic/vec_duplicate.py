"""Duplicate: fill a tensor's lanes with one scalar (pyasc basic/vec_duplicate.py; AD-API 数据填充/Duplicate.md).

Forms: ``duplicate(dst, scalar, count, is_set_mask=True)``,
``duplicate(dst, scalar, mask: int | List[int], repeat_times, dst_block_stride, dst_repeat_stride, is_set_mask=True)``
(block stride a uint16, repeat stride a uint8, in 32 B blocks). The scalar is converted to dst's dtype.
"""

from __future__ import annotations

import numpy as np

from .. import checks, dtypes
from ..runtime import current
from .execute import execute
from .iteration import (IS_SET_MASK, MASK_INT, MASK_LIST, MISSING, REPEAT_TIMES, Form, Param, bind, count_form,
                        iteration)
from .spec import Spec, export, register


def _strides(values, core, op) -> dict:
    blk, rep = values["dst_block_stride"], values["dst_repeat_stride"]
    for name, value, top in (("dst_block_stride", blk, 65535), ("dst_repeat_stride", rep, 255)):
        if not 0 <= value <= top:
            raise core.error(op, f"{name} must be in [0, {top}] (32 B blocks), got {value}")
    return {"dst": (int(blk), int(rep))}


_STRIDES = (Param("dst_block_stride", (int, np.integer), "int"), Param("dst_repeat_stride", (int, np.integer), "int"))
FORMS = (count_form(), Form("split", (MASK_INT, REPEAT_TIMES, *_STRIDES, IS_SET_MASK), _strides),
         Form("split", (MASK_LIST, REPEAT_TIMES, *_STRIDES, IS_SET_MASK), _strides))

_DTYPES_2201 = frozenset({"float16", "bfloat16", "float32", "int16", "uint16", "int32", "uint32"})
SPEC = register(Spec("duplicate", "Duplicate", "vec_duplicate",
                     {"2201": _DTYPES_2201, "2002": _DTYPES_2201 - {"bfloat16"}},
                     arithmetic=False, source="AD-API Memory矢量计算/数据填充/Duplicate.md",
                     doc="dst = scalar"))


@export
def duplicate(dst=MISSING, scalar=MISSING, *args, **kwargs) -> None:
    """``dst[i] = scalar`` for each active lane (scalar converted to dst's dtype), on PIPE_V.

    Forms: (dst, scalar, count, is_set_mask=True) or (dst, scalar, mask, repeat_times, dst_block_stride,
    dst_repeat_stride, is_set_mask=True). dtypes: Duplicate.md (bfloat16 on A2/A3 only).

    Raises:
        KernelError: a call form, dtype, bounds or alignment rule is broken.
    """
    core = current("duplicate")
    form, values = bind(core, "duplicate", "dst, scalar", FORMS, args, kwargs, (dst, scalar))
    checks.local_operands(core, "duplicate", dst)
    checks.dtype_supported(core, SPEC, dst)
    value = dtypes.to_scalar(scalar, dst.dtype)
    execute(core, SPEC, iteration(core, "duplicate", form, values, dst.dtype.sizeof()), dst, {}, np.asarray, (value,))
