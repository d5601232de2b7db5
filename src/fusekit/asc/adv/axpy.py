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

The half paths are one decomposition (:func:`describe`, :mod:`.decompose`) that gives the values.

Trace: one PIPE_V record, cost "Axpy", reading src and dst, writing dst, the temp_buffer bytes the API uses (at most
the helper's max) written with undefined contents; ``repeats`` = 4 (half dst) or 3 (float dst: the decomposition's
steps) passes of 256 B float repeats (ASSUMPTION: from the sequence above; no page gives a figure; the half dst's
sequence has 5 instructions, the Trace keeps the 4 it has always counted).
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.rounding import RoundMode
from ..basic.vec_ternary_scalar import axpy as _basic_axpy
from ..runtime import current
from ..trace import Pipe
from .decompose import Step, cast_to, step, walk
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
    steps = describe(dst.dtype.name, n, np.float32(np.float16(scalar)))  # the scalar is a half (U), float for Muls

    # a closure, not an Effect: it walks the decomposition, several instructions rounding in between
    def effect():
        v = walk(steps, {"src": src.array(n).copy(), "dst": dst.array(n).copy()}, mode)
        dst.array(n)[:] = v["dst"]

    # repeats: passes of 256 B float repeats, one per step -- but 4 for a half dst, where the sequence runs 5
    # instructions (two source Casts): the count fusekit's Trace has always given, kept
    traced = 4 if dst.dtype.name == "float16" else len(steps)
    core.record(op, Pipe.V, reads=(src.access(*s), dst.access(*d)) if n else (),
                writes=(dst.access(*d),) if n else (), undefined=undefined,
                count=n, nbytes=n * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect,
                repeats=traced * -(-n * 4 // 256), cost="Axpy")


def describe(dst_dtype: str, n: int, factor: np.float32) -> list[Step]:
    """AxpyIntrinsicsImpl for a half source (axpy_common_impl.h) as a decomposition (:mod:`.decompose`): the values
    "src" ([n] half) and "dst" ([n] of ``dst_dtype``) in, "dst" out; ``factor``: the half scalar as a float.

    Half dst: Cast src and dst to float, Muls, Add, Cast back (CAST_NONE: to nearest even); float dst: Cast src,
    Muls, Add into dst. Only the step that stores dst is put under the overflow mode: the values fusekit has
    always given. The float intermediates of half data cannot overflow, so this differs from saturating every
    instruction only for +-inf or NaN data in saturation mode (e.g. a NaN src gives 0 here, dst there)."""
    f32 = "float32"
    widen = cast_to(f32, RoundMode.CAST_NONE)
    if dst_dtype == "float32":
        return [step("cast", "s", ("src",), n, f32, compute=widen, overflow=False),
                step("muls", "s", ("s",), n, f32, scalars=(factor,), overflow=False),
                step("add", "dst", ("s", "dst"), n, f32)]
    return [step("cast", "s", ("src",), n, f32, compute=widen, overflow=False),
            step("cast", "d", ("dst",), n, f32, compute=widen, overflow=False),
            step("muls", "s", ("s",), n, f32, scalars=(factor,), overflow=False),
            step("add", "d", ("s", "d"), n, f32, overflow=False),
            step("cast", "dst", ("d",), n, "float16", compute=cast_to("float16", RoundMode.CAST_NONE))]
