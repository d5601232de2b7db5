"""``asc.adv.axpy``: dst = scalar * src + dst through Muls and Add.

pyasc adv/math.py; page asc.language.adv.axpy.md.

The page: "通过Muls和Add组合计算，从而提供更优的精度" and the dtype combinations (src, scalar, dst) = half/half/half,
float/float/float, half/half/float. Order of operations (asc-devkit impl/adv_api/detail/math/axpy/
axpy_common_impl.h, AxpyImpl / AxpyIntrinsicsImpl):
- float src: the basic ``Axpy`` instruction (fusekit: :func:`fusekit.asc.basic.vec_ternary_scalar.axpy`);
- half src, half dst: src and dst cast to float (exact), ``Muls`` in float (one rounding), ``Add`` in float (one
  rounding), cast back to half (round to nearest even);
- half src, float dst: src cast to float, ``Muls`` in float, ``Add`` into dst in float.
The half paths stage float copies in sharedTmpBuffer; it must hold at least GetAxpyMaxMinTmpSize's minimum for a
half source, 4 x 256 B (asc-devkit impl/adv_api/tiling/math/axpy_tiling_impl.cpp, AXPY_HALF_CALC_PROC 4). These
values are bit-exact with that sequence (no tolerance), apart from the overflow mode.

Trace: one PIPE_V record, cost "Axpy", reading src and dst, writing dst, the temp_buffer bytes the API uses (at most
the helper's max) written with undefined contents; ``repeats`` = 4 (half dst: Cast, Muls, Add, Cast) or 3 (float
dst) passes of 256 B float repeats (ASSUMPTION: from the sequence above; no page gives a figure).
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.vec_ternary_scalar import axpy as _basic_axpy
from ..runtime import current
from ..trace import Pipe
from .math import element_count, temp_buffer_bytes

_PAGE = "asc.language.adv.axpy.md / asc-devkit axpy_common_impl.h"
_PAIRS = {("float16", "float16"), ("float32", "float32"), ("float16", "float32")}


def axpy(dst, src, scalar, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.axpy: dst[i] = scalar * src[i] + dst[i] for i < count, on PIPE_V (module docstring for the order).

    dst, src: UB LocalTensors, (src, dst) in {(half, half), (float, float), (half, float)}, not overlapping;
    scalar: a Python number, converted to src's dtype; count: elements (None: all of src); temp_buffer: uint8 UB
    LocalTensor (required for a half src: >= 1024 B, GetAxpyMaxMinTmpSize's minimum).

    Raises:
        KernelError: another dtype pair, a missing or too small temp_buffer, overlap, count past a tensor.
    """
    op = "axpy"
    core = current(op)
    checks.local_operands(core, op, dst, src)
    checks.scalar_not_tensor(core, op, src, scalar)
    pair = (src.dtype.name, dst.dtype.name)
    if pair not in _PAIRS:
        raise core.error(op, f"(src, dst) dtypes {pair} are not a combination of asc.adv.axpy ({_PAGE}: half/half, "
                             "float/float, half -> float)", kind="unsupported", **dst.describe(0))
    n = element_count(core, op, src, count)
    if pair == ("float32", "float32"):  # AxpyImpl: a float source goes straight to the basic Axpy
        _basic_axpy(dst, src, scalar, n)
        return
    d, s = dst.span(core, op, n), src.span(core, op, n)
    if n and intersects(d, s):
        raise core.error(op, f"dst {dst.name} and src {src.name} overlap ({_PAGE}, 约束说明)", kind="partial-overlap",
                         **dst.describe(n))
    if temp_buffer is None:
        raise core.error(op, f"a half source needs a uint8 temp_buffer (AxpySub stages float copies there, {_PAGE}; "
                             "size: fusekit.asc.adv.max_min_tmp_size('axpy', count, 2)); got none",
                         kind="out-of-bounds")
    undefined = temp_buffer_bytes(core, op, "Axpy", temp_buffer, n, src.dtype.sizeof(),
                                  operands=[(dst, d), (src, s)], page=_PAGE)
    mode = overflow.mode_of(core)
    factor = np.float32(np.float16(scalar))  # the scalar is a half (U), cast to float for Muls

    def effect():
        with np.errstate(all="ignore"):
            product = src.array(n).astype(np.float32) * factor          # Muls (float)
            total = product + dst.array(n).astype(np.float32)            # Add (float)
            dst.array(n)[:] = overflow.apply(total, dst.dtype.np, mode)  # Cast to half (rint) / store float

    core.record(op, Pipe.V, reads=(src.access(*s), dst.access(*d)) if n else (),
                writes=(dst.access(*d),) if n else (), undefined=undefined,
                count=n, nbytes=n * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect,
                repeats=(4 if dst.dtype.name == "float16" else 3) * -(-n * 4 // 256), cost="Axpy")
