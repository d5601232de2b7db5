"""``asc.adv.quant`` and ``asc.adv.QuantConfig``: per-tensor quantisation to int8 (Ascend C AscendQuant).

pyasc 1.1.1 ``python/asc/language/adv/quantization.py`` / ``types.py``: ``quant(dst, src, scale, offset, count=None,
temp_buffer=None, reuse_source=False, config=None)`` builds AscendQuant's PER_TENSOR form (scale and offset scalars,
materialised in src's dtype); ``QuantConfig(calc_count=0, offset_count=0, scale_count=0, work_local_size=0)`` is
Ascend C's ``AscendQuantConfig``.

Rules (asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/AscendQuant.md):
- dst int8, src half or float (模板参数 T), UB, 32 B aligned; Atlas A2/A3 and Atlas inference AI Core;
- "输入输出操作数参与计算的数据长度要求32B对齐": count x sizeof(src) and count x 1 B are multiples of 32 B, i.e. count is a
  multiple of 32;
- "源操作数与目的操作数可以复用": dst may start at src's address; any other overlap is refused;
- temp_buffer: uint8, at least GetAscendQuantMaxMinTmpSize's minimum 2 x 256 B (ascend_quant_tiling_impl.cpp), apart
  from src and dst;
- config (表1 config): when calc_count and work_local_size are both non-zero the constant path runs and processes
  ``calc_count`` elements (not ``count``); calc_count <= src's size and work_local_size <= temp_buffer's size
  (impl/adv_api/detail/quantization/quant/ascend_quant_pre_impl.h IsQuantValid); offset_count / scale_count belong to
  the per-channel forms pyasc does not expose and must be 0 here.

Values (功能说明 and 实现原理, steps 1-5; AscendQuantIntrinsicsImpl): a float src is cast to half (round to nearest
even), ``Muls`` by half(scale) and ``Adds`` half(offset) in half (each rounded once), then cast to int8 rounding
half to even ("round表示四舍六入五成双取整"), saturating to [-128, 127]; NaN gives 0 (the vector Cast, fusekit
rounding.convert). The scale and offset are first materialised in src's dtype (pyasc) then converted to half
(Ascend C: static_cast<half>; "当Scale为float类型时，其取值范围仍为half类型的取值范围"). Bit-exact with that sequence.
The launch's overflow mode is applied to each half intermediate.

The sequence is one decomposition (:func:`describe`, :mod:`.decompose`) that gives the values.

Trace: one PIPE_V record, cost "AscendQuant", reading src, writing dst, temp_buffer bytes used (at most the helper's
max) written-undefined; repeats = 4 (float src: Cast, Muls, Adds, Cast) or 3 (half): one pass of 256 B half repeats
per step of the decomposition (ASSUMPTION from the sequence above; no page gives a figure).
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.rounding import RoundMode
from ..runtime import current
from ..trace import Pipe
from .decompose import Step, cast_to, step, walk
from .math import element_count, temp_buffer_bytes

_PAGE = "asc-devkit docs/zh/api/SIMD-API/高阶API/量化操作/AscendQuant.md"
_UINT32 = 2 ** 32 - 1


class QuantConfig:
    """pyasc ``asc.adv.QuantConfig(calc_count=0, offset_count=0, scale_count=0, work_local_size=0)``: Ascend C's
    AscendQuantConfig (four uint32 fields; AscendQuant.md 表1 config). A compile-time constant on the NPU.

    Raises:
        ValueError: a field that is not an int in [0, 2**32 - 1].
    """

    _FIELDS = ("calc_count", "offset_count", "scale_count", "work_local_size")

    def __init__(self, calc_count: int = 0, offset_count: int = 0, scale_count: int = 0, work_local_size: int = 0):
        for name, value in zip(self._FIELDS, (calc_count, offset_count, scale_count, work_local_size)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= _UINT32:
                raise ValueError(f"QuantConfig.{name} must be a uint32 (an int in [0, 2**32 - 1]), got {value!r}")
            setattr(self, name, int(value))

    def __repr__(self) -> str:
        return "QuantConfig(" + ", ".join(f"{n}={getattr(self, n)}" for n in self._FIELDS) + ")"


def _scalar(core, name: str, value, src_dtype) -> np.float16:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise core.error("quant", f"{name} must be a Python number (pyasc materialises it in src's dtype), got "
                                  f"{type(value).__name__}: a tensor scale is the per-channel form, which pyasc's "
                                  "asc.adv.quant does not expose")
    with np.errstate(over="ignore"):
        return np.float16(np.asarray(value, dtype=src_dtype.np))  # src's dtype, then static_cast<half>


def quant(dst, src, scale, offset, count=None, temp_buffer=None, reuse_source=False, config=None) -> None:
    """asc.adv.quant: dst[i] = int8(round(half(src[i]) * half(scale) + half(offset))) for i < count, on PIPE_V.

    dst: int8 UB LocalTensor; src: half or float UB LocalTensor; scale, offset: Python numbers; count: elements, a
    multiple of 32 (None: all of src); temp_buffer: uint8 UB LocalTensor of >= 512 B, or None; reuse_source: bool
    (reserved: "该参数预留"); config: a QuantConfig or None. Module docstring for the order of operations.

    Raises:
        KernelError: dtypes, a count that is not a multiple of 32 or runs past a tensor, dst overlapping src other
            than at the same address, a too small / overlapping / non-uint8 temp_buffer, config fields out of range.
    """
    op, cpp = "quant", "AscendQuant"
    core = current(op)
    checks.local_operands(core, op, dst, src)
    if dst.dtype.name != "int8" or src.dtype.name not in ("float16", "float32"):
        raise core.error(op, f"asc.adv.quant takes an int8 dst and a half or float src, got dst {dst.dtype.name}, src "
                             f"{src.dtype.name} ({_PAGE}, 模板参数 T and 函数原型)", kind="unsupported", **dst.describe(0))
    if not isinstance(reuse_source, (bool, np.bool_)):
        raise core.error(op, f"reuse_source must be a bool, got {reuse_source!r}")
    if config is not None and not isinstance(config, QuantConfig):
        raise core.error(op, f"config must be an asc.adv.QuantConfig, got {type(config).__name__}")
    n = element_count(core, op, src, count)
    src.span(core, op, n)  # calCount <= srcTensor.GetSize() (IsQuantValid), whichever count then runs
    if config is not None:
        if config.offset_count or config.scale_count:
            raise core.error(op, f"{config}: offset_count and scale_count belong to the per-channel forms; the "
                                 f"per-tensor quant takes 0 ({_PAGE}, 表1 config: 若调用的接口不含scaleCount入参，取值为0即可)")
        if config.calc_count > src.length:
            raise core.error(op, f"{config}: calc_count {config.calc_count} is larger than src {src.name} "
                                 f"({src.length} elements) (ascend_quant_pre_impl.h IsQuantValid)",
                             kind="out-of-bounds", **src.describe(config.calc_count))
        if config.work_local_size and (temp_buffer is None or config.work_local_size > temp_buffer.length):
            have = "no temp_buffer" if temp_buffer is None else f"temp_buffer has {temp_buffer.length} bytes"
            raise core.error(op, f"{config}: work_local_size {config.work_local_size} exceeds the temp buffer ({have}; "
                                 f"{_PAGE}, 表1 config: 该参数取值不能大于sharedTmpBuffer的大小)", kind="out-of-bounds")
        if config.calc_count and config.work_local_size:
            n = config.calc_count  # the constant path (AscendQuantCalc: config.calcCount replaces calCount)
    if n % 32:
        raise core.error(op, f"count {n}: the data of src and dst must be 32 B aligned ({_PAGE}, 约束说明: "
                             "输入输出操作数参与计算的数据长度要求32B对齐), so count must be a multiple of 32",
                         kind="misaligned", **src.describe(n))
    s, d = src.span(core, op, n), dst.span(core, op, n)
    if n and intersects(s, d) and s[0] != d[0]:
        raise core.error(op, f"dst {dst.name} partially overlaps src {src.name}: they may share one buffer from the "
                             f"same address ({_PAGE}, 约束说明: 源操作数与目的操作数可以复用) but not overlap otherwise",
                         kind="partial-overlap", **dst.describe(n))
    undefined = temp_buffer_bytes(core, op, cpp, temp_buffer, n, src.dtype.sizeof(), operands=[(dst, d), (src, s)],
                                  page=_PAGE)
    if config is not None and config.work_local_size and config.work_local_size // 2 // 32 * 32 == 0:
        raise core.error(op, f"{config}: work_local_size {config.work_local_size} B holds no 32-element block of half "
                             "(ascend_quant_pre_impl.h: splitSize should not be 0)")
    h_scale, h_offset = _scalar(core, "scale", scale, src.dtype), _scalar(core, "offset", offset, src.dtype)
    mode = overflow.mode_of(core)
    steps = describe(src.dtype.name, n, h_scale, h_offset)

    # a closure, not an Effect: it walks the decomposition, several instructions rounding in between
    def effect():
        x = src.array(n).copy()
        if src.dtype.name == "float16":
            # fusekit has always put a half source under the overflow mode before Muls, as if it were cast to half
            # too: the same values as the plain Muls, Adds, Cast but for +-inf in saturation mode (+-65504 x scale
            # here, +-inf x scale saturated there)
            x = overflow.apply(x, np.float16, mode)
        dst.array(n)[:] = walk(steps, {"src": x}, mode)["dst"]

    core.record(op, Pipe.V, reads=(src.access(*s),) if n else (), writes=(dst.access(*d),) if n else (),
                undefined=undefined, count=n, nbytes=n, dtype="int8", effect=effect,
                repeats=len(steps) * -(-n * 2 // 256), cost=cpp)


def describe(src_dtype: str, n: int, scale: np.float16, offset: np.float16) -> list[Step]:
    """AscendQuantIntrinsicsImpl (AscendQuant.md 实现原理 steps 1-5) as a decomposition (:mod:`.decompose`): the value
    "src" ([n] of ``src_dtype``) in, "dst" ([n] int8) out; ``scale``, ``offset``: the half scalars.

    A float src is cast to half (to nearest even), ``Muls`` by scale and ``Adds`` offset in half, then the Cast to
    int8 with CAST_NONE (half to even, saturating; NaN gives 0: :func:`fusekit.asc.basic.rounding.convert`)."""
    half = "float16"
    first = [step("cast", "x", ("src",), n, half, compute=cast_to(half, RoundMode.CAST_NONE))] \
        if src_dtype == "float32" else []
    x = "x" if first else "src"
    return first + [step("muls", "x", (x,), n, half, scalars=(scale,)),
                    step("adds", "x", ("x",), n, half, scalars=(offset,)),
                    step("cast", "dst", ("x",), n, "int8", compute=cast_to("int8", RoundMode.CAST_NONE))]
