"""Cast: convert a tensor's lanes to another dtype (pyasc basic/vec_vconv.py; AD-API 类型转换/Cast.md).

Forms: ``cast(dst, src, round_mode, count)``, ``cast(dst, src, round_mode, mask: int | List[int],
repeat_times, repeat_params: UnaryRepeatParams, is_set_mask=True)``. A repeat holds 256 B of the
wider of the two dtypes ("计算输入参数以数据类型的字节较大的为准"), so the narrower operand's strides
count its own 32 B blocks.
"""

from __future__ import annotations

from .. import checks
from ..effect import copy
from ..runtime import current
from .execute import execute
from .iteration import MISSING, UNARY_FORMS, bind, iteration
from . import deq
from .arith import relu
from .rounding import RoundMode, integral
from .spec import Spec, destinations, export, register, same_on_all
from .vec_binary import binary

export(RoundMode)


_R = frozenset({RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL, RoundMode.CAST_ROUND,
                RoundMode.CAST_TRUNC})
_NONE = frozenset({RoundMode.CAST_NONE})
_ANY = frozenset(RoundMode)  # int32 -> half: the mode is ignored, DEQSCALE's half scale is used (Cast.md)

# (src, dst) -> the RoundModes Cast takes, per arch: Cast.md 数据类型, "Atlas A2 训练系列产品/Atlas A2 推理系列产品
# 支持的数据类型组合情况" (the A3 table is the same) and "Atlas 推理系列产品AI Core支持的数据类型组合情况" (310P).
# int4b_t rows are left out: fusekit has no int4b_t dtype.
MODES = {
    "2201": {
        ("int8", "float16"): _NONE, ("uint8", "float16"): _NONE, ("int16", "float16"): _R | _NONE,
        ("int16", "float32"): _NONE, ("float16", "int8"): _R | _NONE, ("float16", "uint8"): _R | _NONE,
        ("float16", "int16"): _R, ("float16", "int32"): _R, ("float16", "float32"): _NONE,
        ("bfloat16", "int32"): _R, ("bfloat16", "float32"): _NONE, ("int32", "int16"): _NONE,
        ("int32", "float16"): _ANY, ("int32", "float32"): _R | _NONE, ("int32", "int64"): _NONE,
        ("float32", "int16"): _R, ("float32", "float16"): _R | {RoundMode.CAST_ODD, RoundMode.CAST_NONE},
        ("float32", "bfloat16"): _R, ("float32", "int32"): _R, ("float32", "float32"): _R, ("float32", "int64"): _R,
        ("int64", "int32"): _NONE, ("int64", "float32"): _R,
    },
    "2002": {
        ("int8", "float16"): _NONE, ("uint8", "float16"): _NONE, ("int16", "float16"): _NONE,
        ("float16", "int8"): (_R - {RoundMode.CAST_RINT}) | _NONE, ("float16", "uint8"): (_R - {RoundMode.CAST_RINT}) | _NONE,
        ("float16", "int16"): frozenset({RoundMode.CAST_RINT}), ("float16", "int32"): _R, ("float16", "float32"): _NONE,
        ("int32", "int16"): _NONE, ("int32", "float16"): _ANY, ("int32", "float32"): _NONE,
        ("float32", "float16"): frozenset({RoundMode.CAST_ODD, RoundMode.CAST_NONE}), ("float32", "int64"): _R,
    },
}
CASTS = frozenset(MODES["2201"])  # the A2/A3 pairs (kept for the generator and fusekit.asc.vector)
_PAIRS = {arch: frozenset(table) for arch, table in MODES.items()}
SPEC = register(Spec("cast", "Cast", "vec_vconv", destinations(_PAIRS), pairs=_PAIRS,
                     source="AD-API Memory矢量计算/类型转换/Cast.md", doc="dst = convert(src, round_mode)"))


@export
def cast(dst=MISSING, src=MISSING, round_mode=MISSING, *args, **kwargs) -> None:
    """Convert the active lanes of ``src`` into ``dst``'s dtype with ``round_mode``, on PIPE_V.

    Forms: ``cast(dst, src, round_mode, count)`` and ``cast(dst, src, round_mode, mask (int or
    [low, high]), repeat_times, UnaryRepeatParams, is_set_mask=True)``; a repeat is 256 B of the
    wider dtype. The (src, dst) pairs and the RoundModes each takes are :data:`MODES` (Cast.md 数据类型,
    per SoC). Rounding: precision_conversion.md 表1 (CAST_NONE = CAST_RINT when precision is lost);
    float -> float32 rounds to an integral value (precision_conversion.md "float → float"); a value
    beyond an integer destination's range saturates ("溢出默认按照饱和模式处理"); NaN -> 0 is this
    simulator's assumption (the pages do not say). int32 -> half ignores ``round_mode`` and computes
    ``half(src * scale)`` (RINT) with the half scale of the DEQSCALE register (SetDeqScale.md 表1;
    precision_conversion.md "int32_t → half").

    Raises:
        KernelError: a pair or mode the SoC's Cast does not provide, int32 -> half with no
            ``set_deq_scale(scale)`` before it, or the operand rules (bounds, overlap, mask, repeat).
    """
    op = "cast"
    core = current(op)
    if round_mode is not MISSING and not isinstance(round_mode, RoundMode):  # before bind: it would blame the form
        raise core.error(op, f"round_mode must be an asc.RoundMode (e.g. asc.RoundMode.CAST_RINT), got "
                             f"{type(round_mode).__name__} {round_mode!r}: the argument order is dst, src, round_mode, "
                             "count")
    form, values = bind(core, op, "dst, src, round_mode", UNARY_FORMS, args, kwargs, (dst, src, round_mode))
    checks.local_operands(core, op, dst, src)
    pair = (src.dtype.name, dst.dtype.name)
    table = MODES.get(core.soc.arch, {})
    if pair not in table:
        if pair[0] == pair[1] and not any(pair in t for t in MODES.values()):
            raise core.error(op, f"cast from {pair[0]} to itself: copy within UB with data_copy instead",
                             kind="unsupported")
        takes = ", ".join(d for s, d in sorted(table) if s == pair[0]) or "nothing"
        raise core.error(op, f"Cast {pair[0]} -> {pair[1]} is not available on {core.soc.name} (Cast.md 数据类型: "
                             f"{pair[0]} converts to {takes} there); go through float32 or float16",
                         kind="unsupported", tensor=dst.name)
    if round_mode not in table[pair]:
        modes = "/".join(m.name for m in RoundMode if m in table[pair])
        raise core.error(op, f"Cast {pair[0]} -> {pair[1]} does not take {round_mode.name} on {core.soc.name}; it "
                             f"takes {modes} (Cast.md 数据类型; the NPU's debug build asserts \"illegal input cast "
                             "mode\")", kind="unsupported", tensor=dst.name)
    if pair == ("int32", "float16"):  # round_mode is ignored: half(src * scale), RINT (see the docstring)
        compute, scalars, rounding = deq.scaled, (float(deq.scale_of(core, op)),), RoundMode.CAST_RINT
    elif pair[0] == pair[1]:  # float -> float: rounding to an integral value is the whole computation
        compute, scalars, rounding = integral, (round_mode,), None
    else:
        compute, scalars, rounding = copy, (), round_mode
    execute(core, SPEC, iteration(core, op, form, values, _wider(dst, src)), dst, {"src": src}, compute, scalars,
            rounding)


def _wider(dst, src) -> int:
    return dst.dtype.sizeof() if dst.dtype.sizeof() >= src.dtype.sizeof() else src.dtype.sizeof()


def _add_relu(a, b):
    return relu(a + b)


def _sub_relu(a, b):
    return relu(a - b)


# AddReluCast.md / SubReluCast.md 数据类型组合: the same on A2/A3 and 310P AI Core. The sum is rounded
# to the source dtype, then ReLU, then Cast (CAST_RINT; integers saturate).
_RELU_CAST = same_on_all({("float16", "int8"), ("int16", "int8"), ("float32", "float16")})
add_relu_cast = binary(register(Spec("add_relu_cast", "AddReluCast", "vec_vconv", destinations(_RELU_CAST), _add_relu,
                                     pairs=_RELU_CAST, source="AD-API Memory矢量计算/复合计算/AddReluCast.md",
                                     doc="dst = cast(max(src0 + src1, 0))")))
sub_relu_cast = binary(register(Spec("sub_relu_cast", "SubReluCast", "vec_vconv", destinations(_RELU_CAST), _sub_relu,
                                     pairs=_RELU_CAST, source="AD-API Memory矢量计算/复合计算/SubReluCast.md",
                                     doc="dst = cast(max(src0 - src1, 0))")))
