"""Vector instructions, count form: ``add(dst, src0, src1, count)``, ``muls(dst, src, scalar, count)``, ...

Rules (AD-API 基础算术/*.md, 通用说明和约束.md; ``docs/ascendc-model.md`` "Vector instructions"):
- destination first; every operand is a LocalTensor in UB starting on a 32 B boundary;
- ``count`` elements, at most the length of every operand; ``count = 0`` does nothing;
- dtypes per SoC (``fusekit.soc``): e.g. no bfloat16 arithmetic on arch 2201, cast to float32;
- a source may overlap the destination only completely (same start); partial overlap is an error;
- each instruction rounds its result to the tensor dtype, round-to-nearest-even; a scalar operand
  is first converted to the tensor dtype (pyasc emits ``static_cast<half>(scale)``).

numpy's float16 and ml_dtypes' bfloat16 arithmetic computes in float32 and rounds once. For
+, -, *, / and sqrt that equals the correctly rounded result because float32 has at least
2p + 2 significand bits for p = 11 and p = 8 (Figueroa, "When is double rounding innocuous?",
SIGNUM 1995).
"""

from __future__ import annotations

import enum

import numpy as np

from . import dtypes
from .runtime import current
from .tensor import LocalTensor, check_ub_aligned
from .trace import Pipe


class RoundMode(enum.Enum):
    """Rounding of ``cast`` (AD-API Cast.md). CAST_NONE rounds to nearest even when precision is lost."""

    CAST_NONE = "none"
    CAST_RINT = "rint"    # to nearest, ties to even
    CAST_FLOOR = "floor"  # toward -inf
    CAST_CEIL = "ceil"    # toward +inf
    CAST_ROUND = "round"  # to nearest, ties away from zero
    CAST_TRUNC = "trunc"  # toward zero
    CAST_ODD = "odd"      # to odd (von Neumann)


def _operands(op: str, dst, srcs: tuple, count):
    """Check a vector instruction's operands; returns (core, count, dst span, src spans)."""
    core = current(op)
    for t in (dst, *srcs):
        if not isinstance(t, LocalTensor):
            raise core.error(op, f"operands must be LocalTensors in UB, got {type(t).__name__}: copy GM data into UB "
                                 "with data_copy first (and check the argument order: destination first)")
        check_ub_aligned(core, op, t)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise core.error(op, f"count must be a non-negative element count, got {count!r}")
    count = int(count)
    d_span = dst.span(core, op, count)
    s_spans = [s.span(core, op, count) for s in srcs]
    for src, (s0, s1) in zip(srcs, s_spans):
        if count and s0 < d_span[1] and d_span[0] < s1 and (s0, s1) != d_span:
            raise core.error(op, f"{src.name} (UB [{s0}, {s1})) partially overlaps the destination {dst.name} (UB "
                                 f"[{d_span[0]}, {d_span[1]})): operands may overlap only completely", tensor=dst.name, kind="partial-overlap")
    return core, count, d_span, s_spans


def _check_dtype(core, op: str, dst: LocalTensor) -> None:
    dtype = dst.dtype
    if not core.soc.supports(op, dtype.name):
        ok = ", ".join(sorted(core.soc.vector_dtypes.get(op, ())))
        hint = "; cast to float32 first" if dtype.is_float else ""
        raise core.error(op, f"{op} does not support {dtype.name} ({dst.name}) on {core.soc.name} (supported: {ok})"
                             f"{hint}", tensor=dst.name, kind="unsupported")


def _same_dtypes(core, op: str, tensors) -> dtypes.DataType:
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dtype:
            raise core.error(op, f"dtype mismatch: {tensors[0].name} is {dtype.name} but {t.name} is {t.dtype.name}; "
                                 "convert with asc.cast first", tensor=t.name)
    _check_dtype(core, op, tensors[0])
    return dtype


def _issue(core, op: str, dst: LocalTensor, d_span, srcs, s_spans, count: int, compute) -> None:
    """Record a vector instruction whose effect is ``compute(out)`` into dst's first ``count`` elements."""
    def effect():
        with np.errstate(all="ignore"):  # the hardware does not warn about inf or NaN results
            compute(dst.array(count))

    core.record(op, Pipe.V, reads=tuple(s.access(*sp) for s, sp in zip(srcs, s_spans)),
                writes=(dst.access(*d_span),), count=count, nbytes=d_span[1] - d_span[0], dtype=dst.dtype.name,
                effect=effect)


def _binary(op: str, ufunc):
    def instr(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
        core, count, d_span, s_spans = _operands(op, dst, (src0, src1), count)
        _same_dtypes(core, op, (dst, src0, src1))
        _issue(core, op, dst, d_span, (src0, src1), s_spans, count,
               lambda out: ufunc(src0.array(count), src1.array(count), out=out))

    instr.__name__ = op
    instr.__doc__ = f"``dst[i] = {op}(src0[i], src1[i])`` for i < count, on PIPE_V."
    return instr


def _with_scalar(op: str, ufunc):
    def instr(dst: LocalTensor, src: LocalTensor, scalar, count: int) -> None:
        if isinstance(scalar, LocalTensor) and not isinstance(src, LocalTensor):
            raise current(op).error(op, f"{op}(dst, src, scalar, count) got a scalar as src and the tensor "
                                        f"{scalar.name} as scalar: the source tensor comes second, the scalar third",
                                    tensor=scalar.name)
        core, count, d_span, s_spans = _operands(op, dst, (src,), count)
        value = dtypes.to_scalar(scalar, _same_dtypes(core, op, (dst, src)))
        _issue(core, op, dst, d_span, (src,), s_spans, count, lambda out: ufunc(src.array(count), value, out=out))

    instr.__name__ = op
    instr.__doc__ = f"``dst[i] = {op[:-1]}(src[i], scalar)`` for i < count; scalar converted to the dtype first."
    return instr


def _unary(op: str, fn):
    def instr(dst: LocalTensor, src: LocalTensor, count: int) -> None:
        core, count, d_span, s_spans = _operands(op, dst, (src,), count)
        _same_dtypes(core, op, (dst, src))
        _issue(core, op, dst, d_span, (src,), s_spans, count, lambda out: np.copyto(out, fn(src.array(count))))

    instr.__name__ = op
    instr.__doc__ = f"``dst[i] = {op}(src[i])`` for i < count, on PIPE_V."
    return instr


add = _binary("add", np.add)
sub = _binary("sub", np.subtract)
mul = _binary("mul", np.multiply)
div = _binary("div", np.divide)
max = _binary("max", np.maximum)  # noqa: A001 - pyasc's name
min = _binary("min", np.minimum)  # noqa: A001
adds = _with_scalar("adds", np.add)
muls = _with_scalar("muls", np.multiply)
maxs = _with_scalar("maxs", np.maximum)
mins = _with_scalar("mins", np.minimum)
exp = _unary("exp", np.exp)
ln = _unary("ln", np.log)
sqrt = _unary("sqrt", np.sqrt)
abs = _unary("abs", np.abs)  # noqa: A001
relu = _unary("relu", lambda x: np.maximum(x, np.zeros((), x.dtype)))
rsqrt = _unary("rsqrt", lambda x: (1 / np.sqrt(x.astype(np.float64))).astype(x.dtype))
reciprocal = _unary("reciprocal", lambda x: (1 / x.astype(np.float64)).astype(x.dtype))


def duplicate(dst: LocalTensor, scalar, count: int) -> None:
    """``dst[i] = scalar`` for i < count (scalar converted to the dtype), on PIPE_V."""
    core, count, d_span, _ = _operands("duplicate", dst, (), count)
    _check_dtype(core, "duplicate", dst)
    value = dtypes.to_scalar(scalar, dst.dtype)
    _issue(core, "duplicate", dst, d_span, (), (), count, lambda out: out.fill(value))


# Conversions Cast supports on arch 2201 (AD-API 精度转换/Cast.md); on 2002 without bfloat16.
_FLOATS = ("float16", "float32", "bfloat16")
_CASTS = {
    ("float16", "float32"), ("float32", "float16"), ("bfloat16", "float32"), ("float32", "bfloat16"),
    ("float16", "int32"), ("float16", "int16"), ("float16", "int8"), ("float16", "uint8"),
    ("float32", "int32"), ("float32", "int16"), ("float32", "int64"), ("bfloat16", "int32"),
    ("int32", "float32"), ("int16", "float16"), ("int8", "float16"), ("uint8", "float16"),
    ("int32", "float16"), ("int16", "float32"), ("int64", "float32"),
}


def cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, count: int) -> None:
    """Convert ``count`` elements of ``src`` into ``dst``'s dtype with ``round_mode``, on PIPE_V.

    Float -> narrower float honours all RoundModes (CAST_NONE = CAST_RINT); float -> integer rounds
    by the mode then saturates to the integer range (NaN -> 0; the saturation is this simulator's
    assumption); integer -> float rounds to nearest even.

    Raises:
        KernelError: a conversion the SoC's Cast does not provide, a bad mode, or the operand rules.
    """
    op = "cast"
    core, count, d_span, s_spans = _operands(op, dst, (src,), count)
    pair = (src.dtype.name, dst.dtype.name)
    if pair[0] == pair[1]:
        raise core.error(op, f"cast from {pair[0]} to itself: copy within UB with data_copy instead")
    if pair not in _CASTS or (core.soc.arch == "2002" and "bfloat16" in pair):
        raise core.error(op, f"Cast {pair[0]} -> {pair[1]} is not available on {core.soc.name}; go through float32 or "
                             "float16", kind="unsupported")
    if not isinstance(round_mode, RoundMode):
        raise core.error(op, f"round_mode must be an asc.RoundMode, got {round_mode!r} (argument order: dst, src, "
                             "round_mode, count)")
    if round_mode is RoundMode.CAST_ODD and not dst.dtype.is_float:
        raise core.error(op, "CAST_ODD rounds float conversions only; use CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND "
                             "or CAST_TRUNC for an integer destination")
    _issue(core, op, dst, d_span, (src,), s_spans, count,
           lambda out: np.copyto(out, convert(src.array(count), dst.dtype, round_mode)))


def convert(x: np.ndarray, dtype: dtypes.DataType, mode: RoundMode = RoundMode.CAST_RINT) -> np.ndarray:
    """Convert array ``x`` to ``dtype`` with rounding ``mode``, as the Cast instruction does."""
    if dtype.is_float:
        return _to_float(x, dtype.np, mode)
    rounded = {
        RoundMode.CAST_FLOOR: np.floor, RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
        RoundMode.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
    }.get(mode, np.rint)(x.astype(np.float64))
    info = np.iinfo(dtype.np)
    # float64(info.max) may round up past the range (2**63 for int64): saturate by comparison
    out = np.where(np.isnan(rounded) | (rounded >= float(info.max)) | (rounded <= float(info.min)), 0, rounded)
    out = out.astype(dtype.np)
    out[rounded >= float(info.max)] = info.max
    out[rounded <= float(info.min)] = info.min
    return out


def _to_float(x: np.ndarray, target: np.dtype, mode: RoundMode) -> np.ndarray:
    nearest = x.astype(target)  # round to nearest even
    if mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT) or x.dtype.itemsize <= target.itemsize and x.dtype.kind == "f":
        return nearest
    exact = x.astype(np.float64)
    back = nearest.astype(np.float64)
    inexact = (back != exact) & ~np.isnan(exact)
    toward = np.where(exact > back, np.inf, -np.inf).astype(target)
    other = np.nextafter(nearest, toward)  # the representable neighbour on x's side
    if mode is RoundMode.CAST_FLOOR:
        pick = inexact & (back > exact)
    elif mode is RoundMode.CAST_CEIL:
        pick = inexact & (back < exact)
    elif mode is RoundMode.CAST_TRUNC:
        pick = inexact & (np.abs(back) > np.abs(exact))
    elif mode is RoundMode.CAST_ROUND:  # a tie resolved to even that should go away from zero
        tie = inexact & (np.abs(exact - back) == np.abs(other.astype(np.float64) - exact))
        pick = tie & (np.abs(other.astype(np.float64)) > np.abs(back))
    else:  # CAST_ODD: inexact results take the candidate whose last significand bit is 1
        bits = nearest.view(np.uint16 if target.itemsize == 2 else np.uint32)
        pick = inexact & (bits & 1 == 0)
    return np.where(pick, other, nearest)
