"""Elementwise math functions of pyasc's ``asc.adv`` (``python/asc/language/adv/math.py``).

Call forms (pyasc 1.1.1 API pages ``asc.language.adv.<name>.md``):
``op(dst, src, count=None, temp_buffer=None, is_reuse_source=False)``; ``power`` / ``xor(dst, src0, src1, count=None,
temp_buffer=None, is_reuse_source=False)``; ``exp(dst, src, count, taylor_expand_level, temp_buffer=None,
is_reuse_source=False)``. ``count=None`` means the whole of ``src`` (the prototypes without calCount).

Rules (asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/<Name>接口/<Name>.md, 产品支持情况, 模板参数, 约束说明):
- dst, src (and temp_buffer) are UB LocalTensors starting on 32 B; T is half or float (xor: int16 / uint16), on
  Atlas A2/A3 (arch 2201) and Atlas inference AI Core (arch 2002); Exp is not offered on the latter (Exp-81.md:
  Atlas 推理系列产品AI Core：不支持);
- src and dst have the same dtype and must not overlap; temp_buffer is uint8 and must not overlap them;
- temp_buffer holds at least the minimum of Get<Name>MaxMinTmpSize (:func:`fusekit.asc.adv.tmpsize.max_min_tmp_size`,
  for the core's arch, the dtype and is_reuse_source): one byte less is a KernelError. Without temp_buffer the API
  pops its scratch from the UB after TPipe's buffers (PopStackBuffer; :mod:`fusekit.asc.adv.workspace`), which must
  hold the minimum as well; the bytes it uses are recorded like a temp_buffer's.
- is_reuse_source=True with float data lets cos, sin, exp, digamma and lgamma use src as scratch (their tiling
  files have a smaller "REUSE" factor): src is recorded as left undefined.

Values: each function is the real function of the inputs correctly rounded once to dst's dtype, the same bits on
every host (:mod:`fusekit.asc.basic.transcendental`: numpy's CPU-dependent float64 paths never decide a rounding);
ceil, floor, frac, round, sign and trunc are exact; the launch's overflow mode is then applied. xor is exact. The
NPU computes with a polynomial / iterative decomposition in float (impl/adv_api/detail/math/<name>/) whose error
is not documented: expect a few ulp of the dtype (half ~1e-3, float ~1e-6 relative) on ordinary inputs, larger near zeros of the function, for
|x| > 65504 in sin / cos (the pages restrict the input to [-65504, 65504]), near the poles of lgamma / digamma
(relative error ~1e-3 for float is plausible there) and for huge arguments of tan. Not modelled: on Atlas
inference AI Core, Ceil / Floor / Frac / Trunc take inputs in [-2147483647, 2147483647] only (约束说明); fusekit
returns the exact value outside that range too. ``taylor_expand_level`` of exp
is checked (uint8) but the value is the correctly rounded exponential, not the truncated series.
So these functions are not described as their decomposition into basic instructions (:mod:`.decompose`): its
constants and iteration counts are the implementation's, not documented on the pages, and fusekit gives the
correctly rounded value rather than the polynomial's; each keeps its numpy function. xor is the exception: its
And / Or / Not sequence is exact and is its decomposition (:func:`xor_steps`).

Trace: one PIPE_V record per call, ``cost`` = the Ascend C name (e.g. "Tanh"): reads the sources' ``count``
elements, writes dst's, marks the temp buffer bytes the API uses (at most the helper's max) as written with
undefined contents. ``repeats`` = the decomposition's vector instructions x the 256 B repeats of one pass over
``count`` float temporaries (xor: int16 ones). ASSUMPTION: the instruction count (``_OPS``; xor: its
decomposition's steps) is the number of vector-instruction call sites in asc-devkit impl/adv_api/detail/math/<name>/
(common and v220 headers, both dtype branches); no page gives a figure. The timing model costs the record at one
repeat per cycle.
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.transcendental import elementwise
from ..effect import Effect, Operand
from ..runtime import current
from ..trace import Pipe
from ..tensor import LocalTensor
from .decompose import Step, step, walk
from .tmpsize import max_min_tmp_size as _tmp_size
from .workspace import work_space

_FLOATS = ("float16", "float32")
_PAGE = "asc-devkit docs/zh/api/SIMD-API/高阶API/数学计算/{0}接口/{0}{1}.md"
_PAGE_SUFFIX = {"Exp": "-81", "Log": "-79", "Xor": "-82", "Axpy": "-80"}  # the docs' file names
_REPEAT_BYTES = 256
# vector-instruction call sites per pass (ASSUMPTION, module docstring); acos = asin's 58 + its own 5
_OPS = {"acos": 63, "acosh": 16, "asin": 58, "asinh": 21, "atan": 30, "atanh": 14, "ceil": 3, "cos": 35, "cosh": 12,
        "digamma": 101, "erf": 27, "erfc": 42, "exp": 16, "floor": 5, "frac": 5, "lgamma": 142, "log": 9, "round": 7,
        "sign": 8, "sin": 28, "sinh": 14, "tan": 35, "tanh": 9, "trunc": 3, "power": 62}  # xor: its decomposition
_REUSES_SRC = frozenset({"cos", "sin", "exp", "digamma", "lgamma"})
_ARCHS = {"exp": ("2201",)}  # Exp-81.md 产品支持情况
_DTYPES = {"xor": ("int16", "uint16"), "power": ("float16", "float32", "int32")}  # Xor-82.md T; Power.md 支持的数据类型


def max_min_tmp_size(op: str, count: int, type_size: int, is_reuse_source: bool = False, arch: str = "2201",
                     is_int: bool = False) -> tuple[int, int]:
    """(max, min) bytes of sharedTmpBuffer for ``asc.adv.<op>``: :func:`fusekit.asc.adv.tmpsize.max_min_tmp_size`."""
    return _tmp_size(op, count, type_size, is_reuse_source, arch, is_int)


def _page(cpp: str) -> str:
    return _PAGE.format(cpp, _PAGE_SUFFIX.get(cpp, ""))


def _check_dtype(core, op: str, cpp: str, t) -> None:
    allowed = _DTYPES.get(op, _FLOATS)
    if t.dtype.name not in allowed:
        names = " or ".join("half" if d == "float16" else "float" if d == "float32" else d for d in allowed)
        raise core.error(op, f"{t.name} is {t.dtype.name}; asc.adv.{op} takes {names} only "
                             f"({_page(cpp)}, 模板参数 T){': cast to float first' if allowed == _FLOATS else ''}",
                         kind="unsupported", **t.describe(0))
    archs = _ARCHS.get(op)
    if archs and core.soc.arch not in archs:
        raise core.error(op, f"asc.adv.{op} is not offered on {core.soc.name} ({_page(cpp)}, 产品支持情况: "
                             "Atlas 推理系列产品AI Core：不支持): use the basic instruction (asc.exp) instead",
                         kind="unsupported", **t.describe(0))


def element_count(core, op: str, src, count) -> int:
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


def temp_buffer_bytes(core, op: str, cpp: str, temp_buffer, n: int, type_size: int, is_reuse_source: bool = False,
                      operands=(), is_int: bool = False, page: str = "") -> tuple:
    """Check ``temp_buffer`` (uint8, >= the helper's minimum, apart from ``operands``: ((tensor, (start, stop)), ...))
    and return the ``undefined`` accesses: the bytes the API may use, at most the helper's maximum.

    Without temp_buffer the API pops its scratch from the UB after TPipe's buffers (PopStackBuffer,
    :func:`fusekit.asc.adv.workspace.work_space`); that space must hold the minimum too ("开发者需要预留临时空间")."""
    page = page or _page(cpp)
    if temp_buffer is None:
        if not n:
            return ()
        most, need = _tmp_size(op, n, type_size, is_reuse_source, core.soc.arch, is_int)
        if not need:
            return ()
        stack = work_space(core, op, page, None, ())
        if stack.nbytes < need:
            raise core.error(op, f"no temp_buffer was passed and the UB left after TPipe's buffers ({stack.name}, "
                                 f"{stack.nbytes} bytes) is below the {need} bytes {cpp} needs (Get{cpp}MaxMinTmpSize "
                                 "minValue; the page: 开发者需要预留临时空间): pass temp_buffer or allocate less",
                             kind="ub-overflow")
        return (stack.access(0, min(stack.nbytes, most)),)
    checks.local_operands(core, op, temp_buffer)
    if temp_buffer.dtype.name != "uint8":
        raise core.error(op, f"temp_buffer {temp_buffer.name} is {temp_buffer.dtype.name}; sharedTmpBuffer is "
                             f"LocalTensor<uint8_t> ({page}): allocate it with asc.uint8",
                         kind="unsupported", **temp_buffer.describe(0))
    tr = temp_buffer.span(core, op, temp_buffer.length)
    if not n:
        return ()
    for t, r in operands:
        if tr[1] > tr[0] and intersects(tr, r):
            raise core.error(op, f"temp_buffer {temp_buffer.name} overlaps {t.name} ({page}, 约束说明: "
                                 "不支持sharedTmpBuffer与源操作数和目的操作数地址重叠)", kind="partial-overlap",
                             **temp_buffer.describe(temp_buffer.length))
    most, need = _tmp_size(op, n, type_size, is_reuse_source, core.soc.arch, is_int)
    if temp_buffer.length < need:
        raise core.error(op, f"temp_buffer {temp_buffer.name} has {temp_buffer.length} bytes but {cpp} needs at least "
                             f"{need} for {n} x {type_size} B (Get{cpp}MaxMinTmpSize minValue, asc-devkit "
                             f"impl/adv_api/tiling/; fusekit.asc.adv.max_min_tmp_size): allocate {need} bytes or more",
                         kind="out-of-bounds", **temp_buffer.describe(need))
    used = min(temp_buffer.length, most) if most else 0
    return (temp_buffer.access(tr[0], tr[0] + used),) if used else ()


def _run(op: str, cpp: str, fn, dst, srcs: tuple, count, temp_buffer, is_reuse_source=False,
         describe=None) -> None:
    """Check, record and compute ``asc.adv.<op>``: ``fn`` of the sources, or, given ``describe(dtype, n)``, the
    decomposition it returns (:mod:`.decompose`: the values "src0", "src1" in, "dst" out), whose steps the
    record's ``repeats`` count."""
    core = current(op)
    checks.local_operands(core, op, dst, *srcs)
    checks.same_dtype(core, op, dst, *srcs)
    _check_dtype(core, op, cpp, dst)
    if not isinstance(is_reuse_source, (bool, np.bool_)):
        raise core.error(op, f"is_reuse_source must be a bool, got {is_reuse_source!r}")
    n = element_count(core, op, srcs[0], count)
    d = dst.span(core, op, n)
    s = [t.span(core, op, n) for t in srcs]
    for t, r in zip(srcs, s):
        if n and intersects(d, r):
            raise core.error(op, f"dst {dst.name} and source {t.name} overlap ({_page(cpp)}, 约束说明: "
                                 "不支持源操作数与目的操作数地址重叠): use separate buffers", kind="partial-overlap",
                             **dst.describe(n))
    size = dst.dtype.sizeof()
    integer = not dst.dtype.is_float
    undefined = temp_buffer_bytes(core, op, cpp, temp_buffer, n, size, bool(is_reuse_source),
                                  [(dst, d), *zip(srcs, s)], is_int=integer and op == "power")
    reused = bool(is_reuse_source) and op in _REUSES_SRC and size == 4 and n
    if reused:  # the float path with isReuseSource keeps temporaries in src
        undefined += (srcs[0].access(*s[0]),)
    mode = overflow.mode_of(core)

    steps = describe(dst.dtype.name, n) if describe is not None else None
    if steps is None:  # fn of the sources' lanes, rounded once; int32 power is exact in the dtype: no overflow mode
        roles = ("src",) if len(srcs) == 1 else tuple(f"src{i}" for i in range(len(srcs)))
        effect = Effect(None, Operand(dst, n), {role: Operand(t, n) for role, t in zip(roles, srcs)}, fn,
                        mode=overflow.INF_NAN if integer else mode)
    else:
        # a closure, not an Effect: xor walks its decomposition, several instructions with exact integer steps
        def effect():
            with np.errstate(all="ignore"):
                dst.array(n)[:] = walk(steps, {f"src{i}": t.array(n) for i, t in enumerate(srcs)}, mode)["dst"]

    passes = -(-n * (size if integer else max(size, 4)) // _REPEAT_BYTES)  # one pass over n float (xor: int16)
    core.record(op, Pipe.V, reads=tuple(t.access(*r) for t, r in zip(srcs, s)) if n else (),
                writes=(dst.access(*d),) if n else (), undefined=undefined, count=n, nbytes=n * size,
                dtype=dst.dtype.name, effect=effect, repeats=(_OPS[op] if steps is None else len(steps)) * passes,
                cost=cpp)


def _exact(fn):
    """fn of the lanes in float64: an exact result (ceil, floor ...), which the store keeps."""
    return lambda x: fn(x.astype(np.float64))


def _frac(x):
    return x - np.trunc(x)


def _unary(name: str, cpp: str, fn, what: str):
    def instr(dst, src, count=None, temp_buffer=None, is_reuse_source=False) -> None:
        _run(name, cpp, fn, dst, (src,), count, temp_buffer, is_reuse_source)

    instr.__name__ = instr.__qualname__ = name
    instr.__doc__ = (f"asc.adv.{name}: dst[i] = {what} for i < count ({cpp}, {_page(cpp)}), "
                     "on PIPE_V.\n\n"
                     "dst, src: UB LocalTensors of half or float (same dtype, no overlap); count: elements (None: "
                     "all of src); temp_buffer: uint8 UB LocalTensor (sharedTmpBuffer) or None; is_reuse_source: "
                     "a bool (float data: cos, sin, digamma, lgamma may use src as scratch, recorded as undefined). "
                     "Value: correctly rounded to the dtype (tolerance: a few ulp, see the module docstring); "
                     "the Trace record is one instruction whose repeats count the decomposition (an assumption)."
                     "\n\nRaises:\n    KernelError: non-UB operand, dtype other than half/float, count past a tensor, "
                     "src/dst or temp_buffer overlap, temp_buffer below Get<Name>MaxMinTmpSize's minimum.")
    return instr


acos = _unary("acos", "Acos", elementwise("acos"), "acos(src[i])")
acosh = _unary("acosh", "Acosh", elementwise("acosh"), "acosh(src[i])")
asin = _unary("asin", "Asin", elementwise("asin"), "asin(src[i])")
asinh = _unary("asinh", "Asinh", elementwise("asinh"), "asinh(src[i])")
atan = _unary("atan", "Atan", elementwise("atan"), "atan(src[i])")
atanh = _unary("atanh", "Atanh", elementwise("atanh"), "atanh(src[i])")
ceil = _unary("ceil", "Ceil", _exact(np.ceil), "ceil(src[i]) (toward +inf)")
cos = _unary("cos", "Cos", elementwise("cos"), "cos(src[i])")
cosh = _unary("cosh", "Cosh", elementwise("cosh"), "cosh(src[i])")
erf = _unary("erf", "Erf", elementwise("erf"), "erf(src[i])")
erfc = _unary("erfc", "Erfc", elementwise("erfc"), "erfc(src[i]) = 1 - erf(src[i])")
floor = _unary("floor", "Floor", _exact(np.floor), "floor(src[i]) (toward -inf)")
frac = _unary("frac", "Frac", _exact(_frac), "src[i] - trunc(src[i]) (ASSUMPTION: sign of src; inf gives NaN)")
log = _unary("log", "Log", elementwise("log"), "ln(src[i])")
round = _unary("round", "Round", _exact(np.rint),  # noqa: A001 - pyasc's name
               "src[i] rounded to the nearest integer (ASSUMPTION: ties to even, as the vector Cast's CAST_RINT)")
sign = _unary("sign", "Sign", _exact(np.sign), "sign(src[i]): 1, -1 or 0 (ASSUMPTION: -0 gives 0, NaN gives NaN)")
sin = _unary("sin", "Sin", elementwise("sin"), "sin(src[i])")
sinh = _unary("sinh", "Sinh", elementwise("sinh"), "sinh(src[i])")
tan = _unary("tan", "Tan", elementwise("tan"), "tan(src[i])")
tanh = _unary("tanh", "Tanh", elementwise("tanh"), "tanh(src[i])")
trunc = _unary("trunc", "Trunc", _exact(np.trunc), "trunc(src[i]) (toward 0)")


_WRAP = 2 ** 32


def _int_power(base: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """int32 Power as power_int_impl.h computes it: square-and-multiply of |exp| with int32 Mul (wrapping modulo
    2**32); exp 0 gives 1 (0 ** 0 too); a negative exp gives trunc(1.0f / x**|exp|) (HandleNegativeExpPowerI: 1 or -1
    for x**|exp| = +-1, else 0) and 0 where x**|exp| is 0."""
    def wrap(v):
        return (v + 2 ** 31) % _WRAP - 2 ** 31

    b, e = base.astype(np.int64), np.abs(exp.astype(np.int64))
    result = np.ones_like(b)
    while (e > 0).any():
        result = np.where(e & 1, wrap(result * b), result)
        b, e = wrap(b * b), e >> 1
    inverse = np.trunc(1.0 / np.where(result == 0, 1, result).astype(np.float32))
    result = np.where(exp < 0, np.where(result == 0, 0, inverse), result)
    return result.astype(np.int32)


_float_power = elementwise("pow")


def _power(a, b):
    return _int_power(a, b) if a.dtype.kind == "i" else _float_power(a, b)


def power(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.power: dst[i] = src0[i] ** src1[i] for i < count (Power, asc.language.adv.power.md), on PIPE_V.

    dst, src0, src1: UB LocalTensors of half, float or int32 (Power.md 支持的数据类型; same dtype, dst overlapping
    neither); count: elements (None: all of src0); temp_buffer: uint8 UB LocalTensor or None. Value: pow correctly
    rounded (IEEE pow special cases; :mod:`fusekit.asc.basic.transcendental`), tolerance a few ulp against the
    device (module docstring); int32: exact, as
    :func:`_int_power`. One Trace record, cost "Power".

    Raises:
        KernelError: as the unary functions.
    """
    _run("power", "Power", _power, dst, (src0, src1), count, temp_buffer, is_reuse_source)


def exp(dst, src, count, taylor_expand_level, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.exp: dst[i] = e ** src[i] for i < count (Exp, asc.language.adv.exp.md), on PIPE_V.

    count: elements (required, uint32); taylor_expand_level: 0..255 (uint8; 0 = no Taylor series). The value is
    the exponential correctly rounded whatever the level: a small level on the NPU is less accurate than
    this (page: 项数太少时，精度会有一定误差). Other rules as the unary functions.

    Raises:
        KernelError: taylor_expand_level outside uint8, and as the unary functions.
    """
    core = current("exp")
    if not isinstance(taylor_expand_level, (int, np.integer)) or not 0 <= int(taylor_expand_level) <= 255:
        raise core.error("exp", f"taylor_expand_level is {taylor_expand_level!r}; it is a uint8 (0..255, 0 = no "
                                "Taylor expansion) (asc.language.adv.exp.md)")
    _run("exp", "Exp", elementwise("exp"), dst, (src,), count, temp_buffer, is_reuse_source)


lgamma = _unary("lgamma", "Lgamma", elementwise("lgamma"), "ln|Gamma(src[i])| (poles 0, -1, -2 ... give +inf)")
digamma = _unary("digamma", "Digamma", elementwise("digamma"),
                 "psi(src[i]) = d/dx ln Gamma (ASSUMPTION: +-0 gives -+inf, negative integers NaN)")


def xor(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """asc.adv.xor: dst[i] = src0[i] ^ src1[i] for i < count (Xor, asc.language.adv.xor.md; Xor-82.md), on PIPE_V.

    dst, src0, src1: UB LocalTensors of int16 or uint16 (same dtype, dst overlapping neither); count: elements
    (None: all of src0, whose length must then equal src1's: 约束说明); temp_buffer: uint8 UB LocalTensor >= 256 B
    (GetXorMaxMinTmpSize) or None. Exact (the NPU computes (a | b) & ~(a & b) with And / Or / Not: 4 instructions
    per pass, impl/adv_api/detail/math/xor/xor_membase_impl.h: :func:`xor_steps`). One Trace record, cost "Xor".

    Raises:
        KernelError: another dtype, src lengths differing without count, overlap, count past a tensor, temp_buffer
            below 256 B.
    """
    if count is None and src0.length != getattr(src1, "length", src0.length):
        core = current("xor")
        raise core.error("xor", f"without count src0 ({src0.length} elements) and src1 ({src1.length}) must have the "
                                "same size (Xor-82.md 约束说明): pass count")
    _run("xor", "Xor", None, dst, (src0, src1), count, temp_buffer, is_reuse_source, describe=xor_steps)


def xor_steps(dtype: str, n: int) -> list[Step]:
    """XorCalcSimplified (impl/adv_api/detail/math/xor/xor_membase_impl.h) as a decomposition (:mod:`.decompose`):
    ``And`` of the sources into dst, ``Or`` of them into the temporary buffer, ``Not`` of dst, then ``And`` of the
    two: (x | y) & ~(x & y), the values "src0", "src1" ([n] of ``dtype``) in, "dst" out."""
    return [step("bitwise_and", "dst", ("src0", "src1"), n, dtype),
            step("bitwise_or", "tmp", ("src0", "src1"), n, dtype),
            step("bitwise_not", "dst", ("dst",), n, dtype),
            step("bitwise_and", "dst", ("tmp", "dst"), n, dtype)]
