"""The binder: pyasc's call forms of a vector instruction -> one :class:`Iteration`.

Every vector instruction of pyasc 1.1.1 takes, after its tensors and scalars, one of these forms
(``python/asc/language/basic/utils.py`` ``op_impl``, ``vec_unary.py``, ``vec_duplicate.py``):

- count form: ``count`` [, ``is_set_mask``]: the first ``count`` elements of every operand
  (AD-API SIMD计算说明/连续计算.md);
- high-dimensional split form: ``mask: int`` (continuous) or ``mask: List[int]`` (bit mask:
  ``[low, high]``, two uint64 for 16-bit types, one for 32-bit), ``repeat_times`` in [0, 255],
  the strides (a ``BinaryRepeatParams`` / ``UnaryRepeatParams``, or plain ints) and
  ``is_set_mask`` (AD-API SIMD计算说明/高维切分.md, 掩码.md).

Arguments are matched by position and by name as pyasc's ``OverloadDispatcher`` does; a call no
form takes raises a KernelError listing what was passed and every accepted form. Families never
see raw arguments: they get an Iteration and hand it to :func:`.lanes.lanes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from .. import corestate
from . import mask as maskreg
from .mask import MaskMode

BLOCK = 32        # bytes in a DataBlock (高维切分.md)
REPEAT = 256      # bytes of one repeat: 8 DataBlocks
MAX_REPEAT = 255  # repeatTime is a uint8 (高维切分.md: "repeatTime不能超过255")
REQUIRED = object()


class RepeatParams:
    """Base of the repeat-parameter structs: named stride fields, each range-checked when used."""

    _FIELDS: tuple[tuple[str, int], ...] = ()  # (name, largest value)

    def __init__(self, *args, **kwargs):
        names = [name for name, _ in self._FIELDS]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} strides ({', '.join(names)}), "
                            f"got {len(args)}")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{type(self).__name__} has no stride {key!r} (fields: {', '.join(names)})")
            values[key] = value
        for name in names:
            setattr(self, name, values.get(name, self._default(name)))

    @staticmethod
    def _default(name: str) -> int:
        return 8 if "rep" in name else 1

    def checked(self, core, op: str) -> dict[str, int]:
        """The fields as ints, each within its type's range (KernelError otherwise)."""
        out = {}
        for name, top in self._FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
                raise core.error(op, f"{type(self).__name__}.{name} must be an integer in [0, {top}] (32 B blocks), "
                                     f"got {value!r}")
            out[name] = int(value)
        return out

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self._FIELDS)
        return f"asc.{type(self).__name__}({fields})"


class BinaryRepeatParams(RepeatParams):
    """pyasc ``asc.BinaryRepeatParams(dst_blk_stride=1, src0_blk_stride=1, src1_blk_stride=1,
    dst_rep_stride=8, src0_rep_stride=8, src1_rep_stride=8)``; strides in 32 B blocks, each a uint8
    (AD-API 辅助数据结构/BinaryRepeatParams.md)."""

    _FIELDS = (("dst_blk_stride", 255), ("src0_blk_stride", 255), ("src1_blk_stride", 255),
               ("dst_rep_stride", 255), ("src0_rep_stride", 255), ("src1_rep_stride", 255))

    def strides(self, core, op: str) -> dict[str, tuple[int, int]]:
        v = self.checked(core, op)
        return {role: (v[f"{role}_blk_stride"], v[f"{role}_rep_stride"]) for role in ("dst", "src0", "src1")}


class UnaryRepeatParams(RepeatParams):
    """pyasc ``asc.UnaryRepeatParams(dst_blk_stride=1, src_blk_stride=1, dst_rep_stride=8, src_rep_stride=8)``;
    strides in 32 B blocks: block strides uint16, repeat strides uint8 (AD-API 辅助数据结构/UnaryRepeatParams.md)."""

    _FIELDS = (("dst_blk_stride", 65535), ("src_blk_stride", 65535), ("dst_rep_stride", 255), ("src_rep_stride", 255))

    def strides(self, core, op: str) -> dict[str, tuple[int, int]]:
        v = self.checked(core, op)
        return {role: (v[f"{role}_blk_stride"], v[f"{role}_rep_stride"]) for role in ("dst", "src")}


# --------------------------------------------------------------------------------------------
# call forms
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """One parameter of a call form: its name, the Python types it takes, its default."""

    name: str
    types: tuple
    label: str
    default: object = REQUIRED

    def takes(self, value) -> bool:
        if isinstance(value, bool) and bool not in self.types:
            return False
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return f"{self.name}: {self.label}" + ("" if self.default is REQUIRED else f" = {self.default!r}")


def _int(name: str, default=REQUIRED) -> Param:
    return Param(name, (int, np.integer), "int", default)


IS_SET_MASK = Param("is_set_mask", (bool, np.bool_), "bool", True)
COUNT = _int("count")
MASK_INT = _int("mask")
MASK_LIST = Param("mask", (list, tuple), "List[int]")
REPEAT_TIMES = _int("repeat_times")


@dataclass(frozen=True)
class Form:
    """A call form: ``kind`` is "count" or "split"; ``params`` follow the instruction's operands.

    ``strides(values, core, op)`` turns a split form's values into role -> (block stride, repeat
    stride), in 32 B blocks.
    """

    kind: str
    params: tuple[Param, ...]
    strides: Callable | None = None

    def match(self, args: tuple, kwargs: dict) -> dict | None:
        """The values by name if ``args``/``kwargs`` fit this form (pyasc's OverloadDispatcher rules), else None."""
        if len(args) > len(self.params):
            return None
        values = {}
        for param, value in zip(self.params, args):
            if not param.takes(value):
                return None
            values[param.name] = value
        names = {p.name: p for p in self.params}
        for key, value in kwargs.items():
            if key not in names or key in values or not names[key].takes(value):
                return None
            values[key] = value
        for param in self.params:
            if param.name not in values:
                if param.default is REQUIRED:
                    return None
                values[param.name] = param.default
        return values


def count_form(is_set_mask: bool = True) -> Form:
    """``count`` [, ``is_set_mask``] (unary and ternary-scalar instructions take no is_set_mask)."""
    return Form("count", (COUNT, IS_SET_MASK) if is_set_mask else (COUNT,))


def split_forms(params_type: type) -> tuple[Form, Form]:
    """``mask: int`` and ``mask: List[int]``, then ``repeat_times``, ``repeat_params``, ``is_set_mask``."""
    rp = Param("repeat_params", (params_type,), params_type.__name__)
    strides = lambda v, core, op: v["repeat_params"].strides(core, op)  # noqa: E731
    return (Form("split", (MASK_INT, REPEAT_TIMES, rp, IS_SET_MASK), strides),
            Form("split", (MASK_LIST, REPEAT_TIMES, rp, IS_SET_MASK), strides))


BINARY_FORMS = (count_form(), *split_forms(BinaryRepeatParams))
BINARY_SCALAR_FORMS = (count_form(), *split_forms(UnaryRepeatParams))
UNARY_FORMS = (count_form(is_set_mask=False), *split_forms(UnaryRepeatParams))


def describe(value) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


MISSING = object()  # default of an instruction's leading operands: a short call gets a KernelError, not a TypeError


def bind(core, op: str, operands: str, forms, args: tuple, kwargs: dict, given: tuple = ()) -> tuple[Form, dict]:
    """The form ``args``/``kwargs`` match, with their values by name.

    Args:
        operands: how the call's leading arguments read in messages (``"dst, src0, src1"``).
        given: the values of those leading arguments (:data:`MISSING` where the call left one out).

    Raises:
        KernelError: an operand is missing or no form matches; the message lists what was passed
            and every accepted form.
    """
    if MISSING in given:
        missing = [name for name, value in zip(operands.split(", "), given) if value is MISSING]
        raise core.error(op, f"asc.{op} is missing {', '.join(missing)}. "
                             f"Accepted forms:\n{_forms(op, operands, forms)}")
    if not kwargs and len(args) == 1 and type(args[0]) is int and forms[0].kind == "count":
        return forms[0], {"count": args[0], "is_set_mask": True}  # the common call, without the matching
    for form in forms:
        values = form.match(args, kwargs)
        if values is not None:
            return form, values
    passed = ", ".join([describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()])
    raise core.error(op, f"asc.{op}({operands}, {passed}) matches no call form of pyasc's asc.{op}. "
                         f"Accepted forms:\n{_forms(op, operands, forms)}")


def _forms(op: str, operands: str, forms) -> str:
    return "\n".join(f"  asc.{op}({operands}, {', '.join(map(str, f.params))})" for f in forms)


# --------------------------------------------------------------------------------------------
# the iteration
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class Iteration:
    """What one vector instruction processes, in repeats of 256 B.

    Attributes:
        form: "count" (first n elements), "split" (mask and repeat_times from the call) or
            "register" (``is_set_mask=False``: the mask register decides).
        lanes: elements of one repeat, 256 B / the size of the widest operand's dtype.
        repeats: repeats issued (0: a NOP).
        count: Counter mode (the count form is one): elements processed in all, filling the lanes
            of each repeat in order; None in Normal mode.
        bits: Normal mode: bool[lanes], the lanes every repeat processes; None in Counter mode.
        contiguous: the count form: lane k of the whole instruction is element k of every operand.
        strides: operand role ("dst", "src0", "src1", "src") -> (block stride, repeat stride) in
            32 B blocks; roles that are missing use (1, 8), consecutive blocks.
    """

    form: str
    lanes: int
    repeats: int
    count: int | None = None
    bits: np.ndarray | None = None
    contiguous: bool = False
    strides: Mapping[str, tuple[int, int]] | None = None
    _key: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def elements(self) -> int:
        """Lanes processed in all (the Trace's ``count``)."""
        if self.count is not None:
            return self.count
        return int(self.bits.sum()) * self.repeats

    def active(self) -> np.ndarray:
        """bool[repeats, lanes]: the lanes each repeat processes."""
        if self.count is not None:
            return (np.arange(self.repeats * self.lanes) < self.count).reshape(self.repeats, self.lanes)
        return np.broadcast_to(self.bits, (self.repeats, self.lanes))

    def stride(self, role: str) -> tuple[int, int]:
        return (self.strides or {}).get(role, (1, 8))

    def key(self) -> tuple:
        """What the lanes of every operand depend on, hashable (the walks cached in :mod:`.lanes` and
        :mod:`.execute`, :mod:`.vec_reduce`); worked out once, as every operand's walk asks for it."""
        if self._key is None:
            self._key = (self.lanes, self.repeats, self.count, None if self.bits is None else self.bits.tobytes(),
                         self.contiguous, tuple(sorted(self.strides.items())) if self.strides else ())
        return self._key


def iteration(core, op: str, form: Form, values: dict, width: int) -> Iteration:
    """Build the Iteration of a matched form; ``width`` = bytes of the widest operand's dtype.

    Updates the core's mask register as the instruction does (see :mod:`.mask`). The count form
    ignores ``is_set_mask`` (pyasc's count-form builders do not pass it on; the AscendC count form
    always sets its own Counter-mode mask).

    Raises:
        KernelError: count < 0, repeat_times outside [0, 255], a bad mask, a stride out of range,
            dst block stride 0 (undefined, 高维切分.md).
    """
    lanes = REPEAT // width
    if form.kind == "count":
        count = int(values["count"])
        if not 0 <= count <= 2**31 - 1:
            raise core.error(op, f"count must be a non-negative element count (int32), got {values['count']!r}")
        maskreg.write(core, mode=MaskMode.NORMAL, high=maskreg.FULL, low=maskreg.FULL)  # what the count form leaves
        return Iteration("count", lanes, -(-count // lanes), count, None, True)
    reg = maskreg.register_of(core)

    repeat_times = values["repeat_times"]
    if not 0 <= repeat_times <= MAX_REPEAT:
        raise core.error(op, f"repeat_times must be in [0, {MAX_REPEAT}] (a uint8; 高维切分.md), got {repeat_times}; "
                             "split the work into several calls")
    strides = form.strides(values, core, op)
    if strides["dst"][0] == 0:
        raise core.error(op, "the destination's block stride is 0, which the NPU leaves undefined (高维切分.md: "
                             "dstBlkStride不支持设置为0); use 1 for consecutive blocks")
    corestate.read(core, "mask_mode", op)  # every split form runs in the register's mode (掩码.md 表3)
    if values["is_set_mask"]:
        _write_mask(core, op, reg, values["mask"], lanes)
    else:  # the register's mask (or Counter-mode count): the kernel's own, or what it inherited
        corestate.read(core, "mask", op)
    if reg.mode is MaskMode.COUNTER:  # repeat_times is ignored; the low 64 bits count the elements
        count = reg.low
        if count > core.soc.ub_bytes:
            raise core.error(op, f"Counter mode processes mask_low = {count} elements, more than UB can hold; set "
                                 "the element count with set_vector_mask(n, ...) or the mask argument")
        form_name = "split" if values["is_set_mask"] else "register"
        return Iteration(form_name, lanes, -(-count // lanes), count=count, strides=strides)
    bits = maskreg.lane_bits(reg.high, reg.low, lanes)
    repeats = int(repeat_times) if bits.any() else 0  # mask 0: a NOP (掩码.md)
    return Iteration("split" if values["is_set_mask"] else "register", lanes, repeats, bits=bits, strides=strides)


def _write_mask(core, op: str, reg: maskreg.MaskRegister, mask, lanes: int) -> None:
    """The mask argument into the register (``AscendCUtils::SetMask``)."""
    if isinstance(mask, (list, tuple)):
        need = "two values [low, high]" if lanes > 64 else "one value [low] (or [low, high]; high is unused)"
        if not 1 <= len(mask) <= 2 or (lanes > 64 and len(mask) != 2):
            raise core.error(op, f"a bit mask for {lanes}-lane repeats takes {need}, got {len(mask)} values "
                                 "(掩码.md: two uint64 for 16-bit types, one for 32-bit)")
        for v in mask:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= maskreg.FULL:
                raise core.error(op, f"bit mask values must be uint64 integers, got {v!r}")
        low, high = int(mask[0]), int(mask[1]) if len(mask) == 2 else 0
        if reg.mode is MaskMode.NORMAL:
            maskreg.check_bits(core, op, high, low, lanes)
        maskreg.write(core, high=0 if reg.mode is MaskMode.COUNTER else high, low=low)
        return
    if mask < 0:
        raise core.error(op, f"a continuous mask must be >= 0 (a negative value is undefined, 掩码.md), got {mask}")
    if reg.mode is MaskMode.COUNTER:  # Counter mode: the mask argument is the element count (掩码.md)
        maskreg.write(core, high=0, low=int(mask))
        return
    high, low = maskreg.continuous_bits(int(mask), lanes)
    maskreg.write(core, high=high, low=low)
