"""The DEQSCALE register, ``set_deq_scale`` and ``cast_deq`` (AD-API 类型转换辅助配置接口/SetDeqScale.md;
复合计算/CastDequant.md; pyasc basic/vec_vconv.py).

DEQSCALE is a 64-bit register of the vector unit; what it holds depends on the form that set it
(SetDeqScale.md 表1):
- ``set_deq_scale(scale)``: bits 0-15, one half ``scale``, read by AddDeqRelu, Cast and CastDequant
  in the int32 -> half (s322fp16) case;
- ``set_deq_scale(scale, offset, sign_mode)``: bits 0-31 a float scale the hardware reads as
  (1, 8, 10) (sign, 8 exponent bits, 10 mantissa bits: the low 13 mantissa bits are dropped),
  bits 37-45 a signed 9-bit ``offset`` (the low 9 bits of the int16), bit 46 ``sign_mode``
  (1: int8 result, 0: uint8); read by CastDequant int16 -> b8 with ``is_vec_deq=False``;
- ``set_deq_scale(vdeq, vdeq_info)``: the 16 (scale, offset, sign_mode) groups of ``vdeq_info``
  are written into ``vdeq`` (16 uint64 = 128 B of UB, with the layout above) and the register
  holds its UB address; CastDequant int16 -> b8 with ``is_vec_deq=True`` reads them when it runs
  (AD vec_vconv impl: ``MakeDeqScaleConfig`` / ``SetDeqScaleImpl``).

An instruction that reads the register before the matching form has set it on the core is a
KernelError (the NPU would compute with whatever the register holds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusekit.machine import space_named

from .. import checks, corestate, dtypes
from ..runtime import current
from ..tensor import LocalTensor
from ..trace import Access, Pipe
from .execute import execute
from .iteration import BLOCK, COUNT, IS_SET_MASK, MASK_INT, MASK_LIST, MISSING, REPEAT_TIMES, Form, Param, \
    UnaryRepeatParams, bind, iteration
from .lanes import lanes, merged_ranges
from .rounding import RoundMode
from .spec import Spec, destinations, export, register

VDEQ_GROUPS = 16  # VdeqInfo: 16 (scale, offset, sign_mode) groups, 16 x uint64 = 128 B (SetDeqScale.md 表4)
_SIGN_BIT, _OFFSET_BIT, _OFFSET_MASK = 46, 37, 0x1FF


@dataclass(frozen=True)
class _Deq:
    """What the register holds: ``form`` "half" (``value`` the half scale), "float" (``value`` the
    64-bit config) or "vdeq" (``value`` the UB byte address of the 16 configs)."""

    form: str
    value: object


def _register(core, op: str) -> _Deq | None:
    corestate.read(core, "deqscale", op)  # its readers: AddDeqRelu, Cast / CastDequant
    return core.deqscale


def scale_of(core, op: str) -> np.float16:
    """The half scale in ``core``'s DEQSCALE register (AddDeqRelu, Cast / CastDequant int32 -> half).

    Raises:
        KernelError: no ``set_deq_scale(scale)`` has run on this core, or the register holds
            another form's parameters.
    """
    reg = _register(core, op)
    if reg is None:
        raise core.error(op, f"{op} multiplies by the DEQSCALE register, which no asc.set_deq_scale(scale) has set "
                             "on this core (SetDeqScale.md: AddDeqRelu / Cast s322fp16 use SetDeqScale(half scale)); "
                             "call asc.set_deq_scale(scale) first")
    if reg.form != "half":
        raise core.error(op, f"{op} reads a half scale from DEQSCALE bits 0-15, but the register holds the CastDequant "
                             f"int16 -> 8-bit parameters of set_deq_scale({_FORM_ARGS[reg.form]}) (SetDeqScale.md 表1); "
                             "call asc.set_deq_scale(scale) with one number first")
    return reg.value


_FORM_ARGS = {"half": "scale", "float": "scale, offset, sign_mode", "vdeq": "vdeq, vdeq_info"}


class VdeqInfo:
    """pyasc ``asc.VdeqInfo(scale, offset, sign_mode)``: 16 float scales, 16 int16 offsets (low 9 bits
    used), 16 bools (SetDeqScale.md 表4).

    Raises:
        ValueError: a list that is missing or does not hold 16 values (as pyasc does).
    """

    __slots__ = ("scale", "offset", "sign_mode")

    def __init__(self, scale=None, offset=None, sign_mode=None):
        if scale is None or offset is None or sign_mode is None:
            raise ValueError("VdeqInfo requires scale / offset / sign_mode")
        if not len(scale) == len(offset) == len(sign_mode) == VDEQ_GROUPS:
            raise ValueError(f"VdeqInfo takes {VDEQ_GROUPS} scales, offsets and sign modes, got {len(scale)}, "
                             f"{len(offset)} and {len(sign_mode)}")
        self.scale, self.offset, self.sign_mode = list(scale), list(offset), [bool(s) for s in sign_mode]


export(VdeqInfo)


def config(scale: float, offset: int, sign_mode: bool) -> int:
    """The 64-bit DEQSCALE word of one (scale, offset, sign_mode) group (SetDeqScale.md 表1)."""
    bits = int(np.array(scale, np.float32).view(np.uint32))
    return (int(bool(sign_mode)) << _SIGN_BIT) | ((int(offset) & _OFFSET_MASK) << _OFFSET_BIT) | bits


def decode(words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """uint64 DEQSCALE words -> (scale as float64 in (1, 8, 10), 9-bit signed offset, sign_mode bool)."""
    words = np.asarray(words, np.uint64)
    scale = (words & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32).astype(np.float64)
    raw = ((words >> np.uint64(_OFFSET_BIT)) & np.uint64(_OFFSET_MASK)).astype(np.int64)
    offset = np.where(raw >= 256, raw - 512, raw)
    sign = ((words >> np.uint64(_SIGN_BIT)) & np.uint64(1)).astype(bool)
    return scale, offset, sign


def _number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


@export
def set_deq_scale(*args, **kwargs) -> None:
    """pyasc ``set_deq_scale``: set DEQSCALE on PIPE_S, in one of three forms (module doc):
    ``(scale: float)``, ``(scale: float, offset: int, sign_mode: bool)``, ``(vdeq: LocalTensor[uint64],
    vdeq_info: VdeqInfo)``.

    Raises:
        KernelError: arguments that fit none of the forms, an offset outside int16, or a ``vdeq``
            that is not a 32 B aligned uint64 LocalTensor of at least 16 elements.
    """
    op = "set_deq_scale"
    core = current(op)
    names = ("vdeq", "vdeq_info") if "vdeq" in kwargs or (args and isinstance(args[0], LocalTensor)) else \
        ("scale", "offset", "sign_mode")
    values = dict(zip(names, args))
    if len(args) > len(names) or any(k not in names or k in values for k in kwargs):
        raise core.error(op, _forms_text(args, kwargs))
    values.update(kwargs)
    if names[0] == "vdeq":
        return _set_vdeq(core, op, values.get("vdeq"), values.get("vdeq_info"), args, kwargs)
    if set(values) == {"scale"} and _number(values["scale"]):
        corestate.write(core, "deqscale", _Deq("half", dtypes.to_scalar(values["scale"], dtypes.float16)))
    elif set(values) == set(names) and _number(values["scale"]) and isinstance(values["offset"], (int, np.integer)) \
            and not isinstance(values["offset"], bool) and isinstance(values["sign_mode"], (bool, np.bool_)):
        if not -2**15 <= values["offset"] < 2**15:
            raise core.error(op, f"offset is an int16 (only its low 9 bits are used, SetDeqScale.md), got "
                                 f"{values['offset']}")
        corestate.write(core, "deqscale", _Deq("float", config(values["scale"], values["offset"], values["sign_mode"])))
    else:
        raise core.error(op, _forms_text(args, kwargs))
    core.record(op, Pipe.S)


def _forms_text(args, kwargs) -> str:
    given = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return (f"set_deq_scale({given}) fits none of its forms: set_deq_scale(scale: float) (AddDeqRelu, Cast / "
            "cast_deq int32 -> half); set_deq_scale(scale: float, offset: int, sign_mode: bool) (cast_deq int16 -> "
            "int8/uint8, is_vec_deq=False); set_deq_scale(vdeq: LocalTensor[uint64], vdeq_info: asc.VdeqInfo) "
            "(cast_deq, is_vec_deq=True)")


def _set_vdeq(core, op: str, vdeq, info, args, kwargs) -> None:
    if not isinstance(vdeq, LocalTensor) or not isinstance(info, VdeqInfo):
        raise core.error(op, _forms_text(args, kwargs))
    checks.local_operands(core, op, vdeq)
    if vdeq.dtype is not dtypes.uint64 or vdeq.length < VDEQ_GROUPS:
        raise core.error(op, f"vdeq must be a uint64 LocalTensor of at least {VDEQ_GROUPS} elements (128 B, "
                             f"SetDeqScale.md), got {vdeq.length} x {vdeq.dtype.name}", tensor=vdeq.name)
    for offset in info.offset:
        if not -2**15 <= int(offset) < 2**15:
            raise core.error(op, f"VdeqInfo offsets are int16 (low 9 bits used), got {offset}")
    words = np.array([config(s, o, m) for s, o, m in zip(info.scale, info.offset, info.sign_mode)], np.uint64)
    start, stop = vdeq.span(core, op, VDEQ_GROUPS)
    corestate.write(core, "deqscale", _Deq("vdeq", start))

    # a closure, not an Effect: SetDeqScaleImpl fills vdeq with SetValue, scalar stores on PIPE_S, not a vector effect
    def effect():
        core.ub[start:stop] = words.view(np.uint8)

    core.record(op, Pipe.S, writes=(vdeq.access(start, stop),), count=VDEQ_GROUPS, nbytes=stop - start,
                dtype="uint64", effect=effect)


# CastDequant.md 数据类型组合: A2/A3 take int32 -> half and int16 -> int8/uint8; 310P AI Core the int16 ones.
_PAIRS = {"2201": frozenset({("int32", "float16"), ("int16", "int8"), ("int16", "uint8")}),
          "2002": frozenset({("int16", "int8"), ("int16", "uint8")})}
SPEC = register(Spec("cast_deq", "CastDequant", "vec_vconv", destinations(_PAIRS), pairs=_PAIRS,
                     source="AD-API Memory矢量计算/复合计算/CastDequant.md",
                     doc="dst = saturate(rint(src * scale + offset)) with DEQSCALE's parameters"))

_VEC_DEQ = Param("is_vec_deq", (bool, np.bool_), "bool", True)
_HALF_BLOCK = Param("half_block", (bool, np.bool_), "bool", True)
_RP = Param("repeat_params", (UnaryRepeatParams,), "UnaryRepeatParams")
_STRIDES = lambda v, core, op: v["repeat_params"].strides(core, op)  # noqa: E731
FORMS = (Form("count", (COUNT, _VEC_DEQ, _HALF_BLOCK)),
         Form("split", (MASK_INT, REPEAT_TIMES, _RP, IS_SET_MASK, _VEC_DEQ, _HALF_BLOCK), _STRIDES),
         Form("split", (MASK_LIST, REPEAT_TIMES, _RP, IS_SET_MASK, _VEC_DEQ, _HALF_BLOCK), _STRIDES))


@export
def cast_deq(dst=MISSING, src=MISSING, *args, **kwargs) -> None:
    """pyasc ``cast_deq`` (Ascend C CastDequant), on PIPE_V; forms as ``cast`` plus ``is_vec_deq`` and
    ``half_block`` (both default True).

    - int32 -> half: ``dst = half(src * scale)``, RINT, with DEQSCALE's half scale (CastDequant.md;
      the same instruction as Cast int32 -> half).
    - int16 -> int8 / uint8: ``dst = Cast(src * scale + offset)`` saturated to the 8-bit range
      (CastDequant.md: "对输出结果的溢出采用饱和处理"); rounding to nearest even is this simulator's
      assumption (the page does not name it). The 128 lanes of a repeat are its 8 source blocks
      of 16 int16; block j's 16 results go to destination block j (32 B, the destination's strides),
      in bytes 16-31 with ``half_block=True`` and 0-15 with False (CastDequant.md halfBlock; its
      example puts the results after 16 untouched bytes); the other half is not written. With
      ``is_vec_deq`` lane k uses group ``k % 16`` of the 128 B ``vdeq`` tensor, read when the
      instruction runs.

    Raises:
        KernelError: a pair the SoC lacks, DEQSCALE not set by the matching ``set_deq_scale`` form
            (``is_vec_deq`` must match it), ``sign_mode`` that does not match dst (int8 needs True,
            uint8 False), or the operand rules.
    """
    op = "cast_deq"
    core = current(op)
    form, values = bind(core, op, "dst, src", FORMS, args, kwargs, (dst, src))
    checks.local_operands(core, op, dst, src)
    checks.dtype_pair(core, SPEC, src, dst)
    if src.dtype is dtypes.int32:
        scale = float(scale_of(core, op))
        return execute(core, SPEC, iteration(core, op, form, values, 4), dst, {"src": src}, scaled, (scale,),
                       RoundMode.CAST_RINT)
    _quantise(core, op, form, values, dst, src)


def scaled(x: np.ndarray, scale: float) -> np.ndarray:
    """int32 lanes times DEQSCALE's half ``scale``, exactly, in float64 (31 + 11 significand bits): what Cast and
    CastDequant int32 -> half round once to half, CAST_RINT (SetDeqScale.md 表1; precision_conversion.md)."""
    return x.astype(np.float64) * scale


def _quantise(core, op: str, form, values: dict, dst, src) -> None:
    """CastDequant int16 -> int8 / uint8 (see cast_deq)."""
    reg, vec = _register(core, op), bool(values.get("is_vec_deq", True))  # bind's fast path omits defaults
    want = "vdeq" if vec else "float"
    if reg is None or reg.form != want:
        held = "nothing" if reg is None else f"the parameters of set_deq_scale({_FORM_ARGS[reg.form]})"
        raise core.error(op, f"cast_deq int16 -> {dst.dtype.name} with is_vec_deq={vec} reads DEQSCALE as set by "
                             f"set_deq_scale({_FORM_ARGS[want]}), but it holds {held} on this core (CastDequant.md "
                             "使用关系映射表); call that form first or pass the matching is_vec_deq")
    signed = dst.dtype is dtypes.int8
    if not vec and decode(np.array([reg.value], np.uint64))[2][0] != signed:
        raise _sign_error(core, op, dst, signed)
    it = iteration(core, op, form, values, 2)
    s = lanes(core, op, src, it, "src")
    k, rep = _lane_ids(it)
    blk_d, rep_d = (1, 8) if it.contiguous else it.stride("dst")
    d_index = rep * rep_d * BLOCK + (k // 16) * blk_d * BLOCK + k % 16 + (16 if values.get("half_block", True) else 0)
    if d_index.size and int(d_index.max()) >= dst.length:
        last = int(d_index.max())
        raise core.error(op, f"dst {dst.name} (block stride {blk_d}, repeat stride {rep_d} blocks of 32 B) reaches "
                             f"element {last} but the tensor has {max(dst.length, 0)} elements; each 16 int16 source "
                             "values fill half of a 32 B destination block", kind="out-of-bounds",
                         **dst.describe(last + 1))
    reads = s.accesses(src)
    if vec:
        vstart = reg.value
        ub = space_named("UB")  # the register holds vdeq's UB address (SetDeqScale.md; module docstring)
        reads += (Access(ub, ub.name, vstart, vstart + 8 * VDEQ_GROUPS, f"vdeq@{vstart}"),)
    s_index = s.index
    group = k % 16

    # a closure, not an Effect: with is_vec_deq each lane's scale and offset come from the vdeq table in UB, read
    # when the instruction runs, and the results fill half of each 32 B destination block
    def effect():
        if vec:
            scale, offset, sign = decode(core.ub[vstart:vstart + 8 * VDEQ_GROUPS].view(np.uint64))
            scale, offset = scale[group], offset[group]
        else:
            scale, offset, _ = decode(np.array([reg.value], np.uint64))
        x = src.array(src.length)[s_index].astype(np.float64)
        info = np.iinfo(dst.dtype.np)
        out = np.clip(np.rint(x * scale + offset), info.min, info.max).astype(dst.dtype.np)
        dst.array(dst.length)[d_index] = out

    if vec:
        _, _, signs = decode(core.ub[vstart:vstart + 8 * VDEQ_GROUPS].view(np.uint64))
        if np.any(signs[np.unique(group)] != signed):
            raise _sign_error(core, op, dst, signed)
    core.record(op, Pipe.V, reads=reads, writes=tuple(dst.access(a, b) for a, b in merged_ranges(d_index, 1, dst.addr)),
                count=it.elements, nbytes=it.elements, dtype=dst.dtype.name, effect=effect, repeats=it.repeats,
                cost=SPEC.cpp)


def _lane_ids(it) -> tuple[np.ndarray, np.ndarray]:
    """(lane within its repeat, repeat) of every active lane, repeat-major (lanes.py's order)."""
    if it.contiguous:
        return np.arange(it.count), np.zeros(it.count, np.int64)  # one run of consecutive blocks
    r, k = np.nonzero(it.active())
    return k.astype(np.int64), r.astype(np.int64)


def _sign_error(core, op: str, dst, signed: bool):
    return core.error(op, f"dst {dst.name} is {dst.dtype.name} but DEQSCALE's sign_mode is {not signed}: sign_mode=True "
                          "gives int8, False uint8 (CastDequant.md 约束说明); make them agree", tensor=dst.name)
