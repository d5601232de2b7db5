"""``asc.adv.axpy``: dst = scalar * src + dst through Muls and Add.

pyasc adv/math.py; page asc.language.adv.axpy.md.

The page: "通过Muls和Add组合计算，从而提供更优的精度" and the dtype combinations (src, scalar, dst) = half/half/half,
float/float/float, half/half/float. Order of operations (asc-devkit impl/adv_api/detail/math/axpy/
axpy_common_impl.h, AxpyImpl / AxpyIntrinsicsImpl):
- float src: the basic ``Axpy`` instruction (fusekit: :func:`fusekit.asc.basic.vec_ternary_scalar.axpy`);
- half src, half dst: src and dst cast to float (exact), ``Muls`` in float (one rounding), ``Add`` in float (one
  rounding), cast back to half (round to nearest even);
- half src, float dst: src cast to float, ``Muls`` in float, ``Add`` into dst in float.
The half paths stage float copies in sharedTmpBuffer: ``stackSize`` = its float capacity (halved when dst is half)
floored to 32 B; it must not be 0 (CheckTmpBufferSize), so temp_buffer needs >= 64 B (half dst) or >= 32 B (float
dst). These values are bit-exact with that sequence (no tolerance), apart from the overflow mode.

Trace: one PIPE_V record, cost "Axpy" (ASSUMPTION: the Cast / Muls / Add sequence is costed as one Axpy), reading
src and dst, writing dst, temp_buffer written with undefined contents.
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.vec_ternary_scalar import axpy as _basic_axpy
from ..runtime import current
from ..trace import Pipe
from .math import _count, _overlaps

_PAGE = "asc.language.adv.axpy.md / asc-devkit axpy_common_impl.h"
_PAIRS = {("float16", "float16"), ("float32", "float32"), ("float16", "float32")}


def axpy(dst, src, scalar, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.axpy: dst[i] = scalar * src[i] + dst[i] for i < count, on PIPE_V (module docstring for the order).

    dst, src: UB LocalTensors, (src, dst) in {(half, half), (float, float), (half, float)}, not overlapping;
    scalar: a Python number, converted to src's dtype; count: elements (None: all of src); temp_buffer: uint8 UB
    LocalTensor (required for half src: >= 64 B with a half dst, >= 32 B with a float dst).

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
    n = _count(core, op, src, count)
    if pair == ("float32", "float32"):  # AxpyImpl: a float source goes straight to the basic Axpy
        _basic_axpy(dst, src, scalar, n)
        return
    d, s = dst.span(core, op, n), src.span(core, op, n)
    if n and _overlaps(d, s):
        raise core.error(op, f"dst {dst.name} and src {src.name} overlap ({_PAGE}, 约束说明)", kind="partial-overlap",
                         **dst.describe(n))
    need = 64 if dst.dtype.name == "float16" else 32
    if temp_buffer is None or temp_buffer.dtype.name != "uint8" or temp_buffer.length < need:
        got = "none" if temp_buffer is None else f"{temp_buffer.name}: {temp_buffer.length} x {temp_buffer.dtype.name}"
        raise core.error(op, f"a half source needs a uint8 temp_buffer of at least {need} bytes (AxpySub stages float "
                             f"copies there; stackSize 0 fails CheckTmpBufferSize, {_PAGE}); got {got}",
                         kind="out-of-bounds")
    checks.local_operands(core, op, temp_buffer)
    tr = temp_buffer.span(core, op, temp_buffer.length)
    if n and (_overlaps(tr, d) or _overlaps(tr, s)):
        raise core.error(op, f"temp_buffer {temp_buffer.name} overlaps dst or src ({_PAGE}, 约束说明)",
                         kind="partial-overlap", **temp_buffer.describe(temp_buffer.length))
    mode = overflow.mode_of(core)
    factor = np.float32(np.float16(scalar))  # the scalar is a half (U), cast to float for Muls

    def effect():
        with np.errstate(all="ignore"):
            product = src.array(n).astype(np.float32) * factor          # Muls (float)
            total = product + dst.array(n).astype(np.float32)            # Add (float)
            dst.array(n)[:] = overflow.apply(total, dst.dtype.np, mode)  # Cast to half (rint) / store float

    core.record(op, Pipe.V, reads=(src.access(*s), dst.access(*d)) if n else (),
                writes=(dst.access(*d),) if n else (), undefined=(temp_buffer.access(*tr),),
                count=n, nbytes=n * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect, repeats=-(-n * 4 // 256), cost="Axpy")
