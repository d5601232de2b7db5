"""Elementwise math functions of pyasc's ``asc.adv`` (``python/asc/language/adv/math.py``).

Call forms (pyasc 1.1.1 API pages ``asc.language.adv.<name>.md``):
``op(dst, src, count=None, temp_buffer=None, is_reuse_source=False)``; ``power(dst, src0, src1, count=None,
temp_buffer=None, is_reuse_source=False)``; ``exp(dst, src, count, taylor_expand_level, temp_buffer=None,
is_reuse_source=False)``. ``count=None`` means the whole of ``src`` (the prototypes without calCount).

Rules (asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/<Name>接口/<Name>.md, 约束说明 and 模板参数):
- dst, src (and temp_buffer) are UB LocalTensors; T is half or float (Tanh.md 模板参数: "half、float"; the
  same set is assumed for every function here, on Atlas A2/A3 (2201) and Atlas inference AI Core (2002));
- src and dst have the same dtype and must not overlap; temp_buffer is uint8 and must not overlap them.
- temp_buffer's minimum size (Get<Name>MaxMinTmpSize) is enforced for tanh and erf (:func:`max_min_tmp_size`);
  for the other functions it is NOT checked yet.

Values: each function is evaluated in float64 on the inputs (exact for half and float inputs) and
rounded once to dst's dtype; the launch's overflow mode is then applied. The NPU computes with a
polynomial / iterative decomposition whose error is not documented: expect agreement to a few ulp of
the dtype (half: ~1e-3 relative, float: ~1e-6 relative) on ordinary inputs, and possibly larger near
zeros of the function and for huge arguments of sin / cos / tan. ``taylor_expand_level`` of exp is accepted
and checked (uint8) but the value is the exact exponential, not the truncated series.

Trace: one PIPE_V instruction per call, ``cost`` = the Ascend C name (e.g. "Tanh"): reads src's
``count`` elements (and src1's for power), writes dst's, and, when temp_buffer is given, marks the whole
temp buffer as written with undefined contents. ASSUMPTION: the real API issues a sequence of basic
vector instructions; the timing model costs this one record with its default class for the name.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .. import checks, overflow
from ..runtime import current
from ..trace import Pipe
from ..tensor import LocalTensor

_FLOATS = ("float16", "float32")
_PAGE = "asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/{0}接口/{0}.md"


# live float temporaries per element for half / float inputs (asc-devkit impl/adv_api/tiling/math/
# tanh_tiling_impl.cpp TANH_*_CALC_PROC, erf_tiling_impl.cpp ERF_*_CALC_PROC); sizes are in units of one repeat (256 B)
_TMP_FACTORS = {"tanh": (4, 1), "erf": (8, 3)}
_REPEAT_BYTES = 256


def max_min_tmp_size(op: str, count: int, type_size: int) -> tuple[int, int]:
    """(max, min) bytes of sharedTmpBuffer for ``asc.adv.<op>`` on ``count`` elements of ``type_size`` bytes.

    As Ascend C's host helpers GetTanhMaxMinTmpSize / GetErfMaxMinTmpSize compute them (asc-devkit
    impl/adv_api/tiling/math/<op>_tiling_impl.cpp): min = factor x 256 B, max = factor x max(count x type_size,
    256 B), factor = live temporaries (half: tanh 4, erf 8; float: tanh 1, erf 3). A fusekit helper (pyasc 1.1.1
    has no get_*_tmp_size). Raises ValueError for another op, a type_size other than 2 or 4, or count <= 0
    (the host helper asserts "Input Shape size must be greater than 0").
    """
    if op not in _TMP_FACTORS:
        raise ValueError(f"max_min_tmp_size knows {sorted(_TMP_FACTORS)} only, not {op!r}")
    if type_size not in (2, 4) or count <= 0:
        raise ValueError(f"type_size must be 2 (half) or 4 (float) and count > 0; got {type_size}, {count}")
    factor = _TMP_FACTORS[op][type_size == 4]
    return factor * max(count * type_size, _REPEAT_BYTES), factor * _REPEAT_BYTES


def _check_dtype(core, op: str, cpp: str, t) -> None:
    if t.dtype.name not in _FLOATS:
        raise core.error(op, f"{t.name} is {t.dtype.name}; asc.adv.{op} takes half or float only "
                             f"({_PAGE.format(cpp)}, 模板参数 T): cast to float first", kind="unsupported",
                         **t.describe(0))


def _overlaps(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _count(core, op: str, src, count) -> int:
    if count is None:
        return int(src.length)
    if isinstance(count, LocalTensor) or isinstance(count, bool) or not isinstance(count, (int, np.integer)) \
            and not hasattr(count, "__index__"):
        raise core.error(op, f"count must be an int (elements), got {type(count).__name__}: pass "
                             "count=<elements> or temp_buffer=<LocalTensor> by keyword")
    count = int(count)
    if count < 0:
        raise core.error(op, f"count is {count}; it counts elements and must be >= 0")
    return count


def _run(op: str, cpp: str, fn, dst, srcs: tuple, count, temp_buffer) -> None:
    core = current(op)
    checks.local_operands(core, op, dst, *srcs)
    checks.same_dtype(core, op, dst, *srcs)
    _check_dtype(core, op, cpp, dst)
    n = _count(core, op, srcs[0], count)
    d = dst.span(core, op, n)
    s = [t.span(core, op, n) for t in srcs]
    for t, r in zip(srcs, s):
        if n and _overlaps(d, r):
            raise core.error(op, f"dst {dst.name} and source {t.name} overlap ({_PAGE.format(cpp)}, 约束说明: "
                                 "不支持源操作数与目的操作数地址重叠): use separate buffers", kind="partial-overlap",
                             **dst.describe(n))
    undefined = ()
    if temp_buffer is not None:
        checks.local_operands(core, op, temp_buffer)
        if temp_buffer.dtype.name != "uint8":
            raise core.error(op, f"temp_buffer {temp_buffer.name} is {temp_buffer.dtype.name}; sharedTmpBuffer is "
                                 f"LocalTensor<uint8_t> ({_PAGE.format(cpp)}): allocate it with asc.uint8",
                             kind="unsupported", **temp_buffer.describe(0))
        tr = temp_buffer.span(core, op, temp_buffer.length)
        if op in _TMP_FACTORS and n:
            need = max_min_tmp_size(op, n, dst.dtype.sizeof())[1]
            if temp_buffer.length < need:
                raise core.error(op, f"temp_buffer {temp_buffer.name} has {temp_buffer.length} bytes but {cpp} "
                                     f"needs at least {need} for {dst.dtype.name} (Get{cpp}MaxMinTmpSize minValue, "
                                     f"asc-devkit impl/adv_api/tiling/math/{op}_tiling_impl.cpp): allocate {need} "
                                     "bytes or more",
                                 kind="out-of-bounds", **temp_buffer.describe(need))
        for t, r in [(dst, d), *zip(srcs, s)]:
            if n and tr[1] > tr[0] and _overlaps(tr, r):
                raise core.error(op, f"temp_buffer {temp_buffer.name} overlaps {t.name} ({_PAGE.format(cpp)}, "
                                     "约束说明: 不支持sharedTmpBuffer与源操作数和目的操作数地址重叠)", kind="partial-overlap",
                                 **temp_buffer.describe(temp_buffer.length))
        if tr[1] > tr[0]:
            undefined = (temp_buffer.access(*tr),)
    mode = overflow.mode_of(core)
    size = dst.dtype.sizeof()
    np_dtype = dst.dtype.np

    def effect():
        with np.errstate(all="ignore"):
            xs = [t.array(n).astype(np.float64) for t in srcs]
            dst.array(n)[:] = overflow.apply(fn(*xs), np_dtype, mode)

    core.record(op, Pipe.V, reads=tuple(t.access(*r) for t, r in zip(srcs, s)) if n else (),
                writes=(dst.access(*d),) if n else (), undefined=undefined, count=n, nbytes=n * size,
                dtype=dst.dtype.name, effect=effect, repeats=-(-n * size // 256), cost=cpp)


_erf = np.vectorize(_math.erf, otypes=[np.float64])  # float64 erf (numpy has none); one Python call per element
_erfc = np.vectorize(_math.erfc, otypes=[np.float64])


def _frac(x):
    return x - np.trunc(x)


def _unary(name: str, cpp: str, fn, what: str):
    def instr(dst, src, count=None, temp_buffer=None, is_reuse_source=False) -> None:
        _run(name, cpp, fn, dst, (src,), count, temp_buffer)

    instr.__name__ = instr.__qualname__ = name
    instr.__doc__ = (f"asc.adv.{name}: dst[i] = {what} for i < count ({cpp}, {_PAGE.format(cpp)}), "
                     "on PIPE_V.\n\n"
                     "dst, src: UB LocalTensors of half or float (same dtype, no overlap); count: elements (None: "
                     "all of src); temp_buffer: uint8 UB LocalTensor (sharedTmpBuffer) or None; is_reuse_source is "
                     "accepted and has no effect here. Value: float64 then one rounding to the dtype (tolerance: a "
                     "few ulp, see the module docstring); the Trace record is one instruction (decomposition not "
                     "modelled: an assumption).\n\nRaises:\n    KernelError: non-UB operand, dtype other than "
                     "half/float, count past a tensor, src/dst or temp_buffer overlap.")
    return instr


acos = _unary("acos", "Acos", np.arccos, "acos(src[i])")
acosh = _unary("acosh", "Acosh", np.arccosh, "acosh(src[i])")
asin = _unary("asin", "Asin", np.arcsin, "asin(src[i])")
asinh = _unary("asinh", "Asinh", np.arcsinh, "asinh(src[i])")
atan = _unary("atan", "Atan", np.arctan, "atan(src[i])")
atanh = _unary("atanh", "Atanh", np.arctanh, "atanh(src[i])")
ceil = _unary("ceil", "Ceil", np.ceil, "ceil(src[i]) (toward +inf)")
cos = _unary("cos", "Cos", np.cos, "cos(src[i])")
cosh = _unary("cosh", "Cosh", np.cosh, "cosh(src[i])")
erf = _unary("erf", "Erf", _erf, "erf(src[i])")
erfc = _unary("erfc", "Erfc", _erfc, "erfc(src[i]) = 1 - erf(src[i])")
floor = _unary("floor", "Floor", np.floor, "floor(src[i]) (toward -inf)")
frac = _unary("frac", "Frac", _frac, "src[i] - trunc(src[i]) (ASSUMPTION: sign of src; inf gives NaN)")
log = _unary("log", "Log", np.log, "ln(src[i])")
round = _unary("round", "Round", np.rint,  # noqa: A001 - pyasc's name
               "src[i] rounded to the nearest integer (ASSUMPTION: ties to even, as the vector Cast's CAST_RINT)")
sign = _unary("sign", "Sign", np.sign, "sign(src[i]): 1, -1 or 0 (ASSUMPTION: -0 gives 0, NaN gives NaN)")
sin = _unary("sin", "Sin", np.sin, "sin(src[i])")
sinh = _unary("sinh", "Sinh", np.sinh, "sinh(src[i])")
tan = _unary("tan", "Tan", np.tan, "tan(src[i])")
tanh = _unary("tanh", "Tanh", np.tanh, "tanh(src[i])")
trunc = _unary("trunc", "Trunc", np.trunc, "trunc(src[i]) (toward 0)")


def power(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.power: dst[i] = src0[i] ** src1[i] for i < count (Power, asc.language.adv.power.md), on PIPE_V.

    dst, src0, src1: UB LocalTensors of half or float (same dtype, dst overlapping neither); count: elements
    (None: all of src0); temp_buffer: uint8 UB LocalTensor or None. Value: float64 pow (IEEE pow special cases)
    then one rounding; tolerance a few ulp (module docstring). One Trace record, cost "Power" (assumption).

    Raises:
        KernelError: as the unary functions.
    """
    _run("power", "Power", np.power, dst, (src0, src1), count, temp_buffer)


def exp(dst, src, count, taylor_expand_level, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.exp: dst[i] = e ** src[i] for i < count (Exp, asc.language.adv.exp.md), on PIPE_V.

    count: elements (required, uint32); taylor_expand_level: 0..255 (uint8; 0 = no Taylor series). The value is
    the float64 exponential rounded once whatever the level: a small level on the NPU is less accurate than
    this (page: 项数太少时，精度会有一定误差). Other rules as the unary functions.

    Raises:
        KernelError: taylor_expand_level outside uint8, and as the unary functions.
    """
    core = current("exp")
    if not isinstance(taylor_expand_level, (int, np.integer)) or not 0 <= int(taylor_expand_level) <= 255:
        raise core.error("exp", f"taylor_expand_level is {taylor_expand_level!r}; it is a uint8 (0..255, 0 = no "
                                "Taylor expansion) (asc.language.adv.exp.md)")
    _run("exp", "Exp", np.exp, dst, (src,), count, temp_buffer)
