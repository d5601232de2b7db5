"""The vector mask register of a core, and pyasc's calls that set it.

Facts (AD-API SIMD计算说明/掩码.md; 掩码操作/SetVectorMask.md, SetMaskCount.md, SetMaskNorm.md,
ResetMask.md; AD ``impl/basic_api/kernel_utils_base.h`` ``AscendCUtils::SetMask``):

- The register holds 128 bits (``mask_high``, ``mask_low``) and a mode. **Normal** mode (the
  default): the bits select the lanes of every repeat, lane i <-> bit i (bits 0-63 in
  ``mask_low``); 16-bit types use all 128 bits, 32-bit types the low 64. **Counter** mode: the
  low 64 bits are the number of elements the whole instruction processes; ``repeat_times`` is
  ignored.
- A continuous mask ``len`` is written as the low ``len`` bits set (``len`` past the lanes of a
  repeat sets all of them; 0 sets none, and the instruction is a NOP).
- ``reset_mask`` sets all 128 bits; ``set_mask_count`` / ``set_mask_norm`` switch the mode.
- A vector instruction with ``is_set_mask=True`` writes its ``mask`` argument into the register
  before it runs; with ``is_set_mask=False`` it uses what the register holds.
- The count form ("first n elements") switches to Counter mode, sets n, runs, then restores
  Normal mode with all bits set (dav_c220 / dav_m200 ``kernel_operator_vec_*_impl.h``).
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

import numpy as np

from .. import corestate, dtypes
from ..runtime import current
from ..trace import Pipe

FULL = (1 << 64) - 1


class MaskMode(enum.IntEnum):
    """pyasc's ``asc.MaskMode`` (core/enums.py)."""

    NORMAL = 0
    COUNTER = 1


@dataclass
class MaskRegister:
    """One core's vector mask register: the mode and the 128 mask bits."""

    mode: MaskMode = MaskMode.NORMAL
    high: int = FULL
    low: int = FULL

    def reset_after_count_form(self) -> None:
        """What a count-form instruction leaves behind: Normal mode, all bits set."""
        self.mode, self.high, self.low = MaskMode.NORMAL, FULL, FULL


# What every count-form call leaves behind (Normal mode, all bits set), shared by the cores so that the
# hot path allocates nothing; register_of() replaces it with a core's own register before any change.
AFTER_COUNT_FORM = MaskRegister()


def register_of(core) -> MaskRegister:
    """The mask register of ``core``, its own to change (created in the reset state on first use)."""
    reg = core.vector_mask
    if reg is None or reg is AFTER_COUNT_FORM:
        reg = core.vector_mask = MaskRegister()
    return reg


def write(core, *, mode: "MaskMode | None" = None, high: "int | None" = None, low: "int | None" = None) -> None:
    """The one way the mask register of ``core`` changes: the given fields are written, and
    ``fusekit.asc.corestate.written`` notes it ("mask_mode" for ``mode``, "mask" for the bits), so a value
    this kernel inherited (``launch(initial_state=)``) stops being one. Every writer calls this: the mask
    calls below, the split forms with is_set_mask=True (``AscendCUtils::SetMask``), the count forms
    (SetMaskCount, SetVectorMask, then SetMaskNorm and ResetMask, 掩码.md 接口内设置Mask), whole_reduce_*
    and the ReduceSum mask form, Copy, GatherMask, init_soc_state.
    """
    reg = core.vector_mask
    if mode is MaskMode.NORMAL and high == FULL and low == FULL and (reg is None or reg is AFTER_COUNT_FORM):
        core.vector_mask = AFTER_COUNT_FORM  # the reset state, shared: the hot count forms allocate nothing
    else:
        reg = register_of(core)
        if mode is not None:
            reg.mode = mode
        if high is not None:
            reg.high = high
        if low is not None:
            reg.low = low
    corestate.written(core, *(("mask_mode",) if mode is not None else ()) +
                      (("mask",) if high is not None or low is not None else ()))


def continuous_bits(length: int, lanes: int) -> tuple[int, int]:
    """(high, low) that a continuous mask ``length`` writes, as ``AscendCUtils::SetMask(int32_t len)`` does:
    the low ``length`` bits set; ``length`` equal to the lanes of a repeat or >= 128 sets all 128 bits."""
    if length == 64:
        return 0, FULL
    if length == lanes or length >= 128:
        return FULL, FULL
    if length > 64:
        return (1 << (length - 64)) - 1, FULL
    return 0, (1 << length) - 1


@functools.lru_cache(maxsize=1024)
def lane_bits(high: int, low: int, lanes: int) -> np.ndarray:
    """bool[lanes], read-only (one array per mask, shared): which lanes of a repeat the register's bits select
    (lane i <-> bit i)."""
    value = (high << 64) | low
    bits = np.unpackbits(np.frombuffer(value.to_bytes(16, "little"), np.uint8), bitorder="little")[:lanes].astype(bool)
    bits.flags.writeable = False
    return bits


def check_bits(core, op: str, high: int, low: int, lanes: int) -> None:
    """A Normal-mode bit mask within its documented range (掩码.md 表5 and SetVectorMask.md: for 32-bit
    operands maskHigh = 0; for 64-bit operands maskHigh = 0 and maskLow in [0, 2**32 - 1]). The NPU's
    lanes stop at 64 (32): set high bits select lanes that do not exist, so the kernel means something
    else than it runs. Counter mode takes no lane mask and is not checked here.

    Raises:
        KernelError (kind "mask-range"): high bits set, or low past 32 bits for 64-bit operands.
    """
    if lanes > 64:
        return
    top = (1 << 32) - 1 if lanes == 32 else FULL
    if high or low > top:
        raise core.error(op, f"bit mask [{low:#x}, {high:#x}] sets bits past the {lanes} lanes of a repeat of "
                             f"{256 // lanes}-byte elements: maskHigh must be 0" +
                         (" and maskLow in [0, 2**32 - 1]" if lanes == 32 else "") +
                         " (掩码.md 表5 / SetVectorMask.md: 当操作数为32位时，maskHigh为0); pass [low] or [low, 0]",
                         kind="mask-range")


def _int(core, op: str, what: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise core.error(op, f"{what} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def _lanes_of(core, op: str, dtype) -> int:
    try:
        dt = dtypes.as_dtype(dtype)
    except (TypeError, KeyError):
        raise core.error(op, f"dtype must be an asc dtype such as asc.float16, got {dtype!r}") from None
    return 256 // dt.sizeof()


def _mode(core, op: str, mode) -> MaskMode:
    try:
        return MaskMode(mode)
    except ValueError:
        raise core.error(op, f"mode must be asc.MaskMode.NORMAL or asc.MaskMode.COUNTER, got {mode!r}") from None


def set_vector_mask(*args, dtype, mode=MaskMode.NORMAL, length=None, mask_high=None, mask_low=None) -> None:
    """pyasc ``set_vector_mask(length, dtype=, mode=)`` or ``set_vector_mask(mask_high, mask_low, dtype=, mode=)``.

    Normal mode: ``length`` in [0, lanes] is a continuous mask (0: the instructions are NOPs; a larger
    value runs as ``lanes``, 掩码.md 表5 "mask超出范围按照对应数据类型下mask最大值计算"), (high, low) a bit
    mask (32-bit types: high must be 0; 64-bit: high 0 and low < 2**32; SetVectorMask.md). Counter
    mode: ``length`` (or ``mask_low``; ``mask_high`` must be 0) is the element count of the next
    instructions that take ``is_set_mask=False``. Runs on PIPE_S (a register write).

    Raises:
        KernelError: another argument count, a negative length, a bit mask past the lanes of ``dtype``,
            or the mode does not match the
            register's mode set by set_mask_count / set_mask_norm.
    """
    op = "set_vector_mask"
    core = current(op)
    args += tuple(v for v in ((length,) if mask_high is None and mask_low is None else (mask_high, mask_low))
                  if v is not None)  # pyasc's keyword spellings of the same two forms
    lanes, mode = _lanes_of(core, op, dtype), _mode(core, op, mode)
    reg = register_of(core)
    corestate.read(core, "mask_mode", op)  # the mode argument must match the register's (checked below)
    if mode is not reg.mode:
        switch = "set_mask_count()" if mode is MaskMode.COUNTER else "set_mask_norm()"
        raise core.error(op, f"mode={mode.name} but the mask register is in {reg.mode.name} mode: call {switch} first "
                             "(SetVectorMask.md: set the mode with SetMaskCount / SetMaskNorm before SetVectorMask)")
    if len(args) == 1:
        length = _int(core, op, "length", args[0], 0, 2**32 - 1 if mode is MaskMode.COUNTER else 2**31 - 1)
        high, low = (0, length) if mode is MaskMode.COUNTER else continuous_bits(length, lanes)
    elif len(args) == 2:
        high = _int(core, op, "mask_high", args[0], 0, FULL)
        low = _int(core, op, "mask_low", args[1], 0, FULL)
        if mode is MaskMode.COUNTER and high:
            raise core.error(op, f"Counter mode takes the element count in mask_low; mask_high must be 0, got {high}")
        if mode is MaskMode.NORMAL:
            check_bits(core, op, high, low, lanes)
    else:
        raise core.error(op, f"set_vector_mask takes (length, dtype=, mode=) or (mask_high, mask_low, dtype=, mode=); "
                             f"got {len(args)} positional arguments")
    write(core, high=high, low=low)
    core.record(op, Pipe.S)
    corestate.set_by(core, "mask")  # SetVectorMask.md: reset_mask() once done (corestate.OBLIGATIONS)


def reset_mask() -> None:
    """pyasc ``reset_mask()``: all 128 mask bits set (ResetMask.md)."""
    core = current("reset_mask")
    write(core, high=FULL, low=FULL)
    core.record("reset_mask", Pipe.S)
    corestate.restored(core, "mask")


def set_mask_count() -> None:
    """pyasc ``set_mask_count()``: the mask register switches to Counter mode (SetMaskCount.md)."""
    core = current("set_mask_count")
    write(core, mode=MaskMode.COUNTER)
    core.record("set_mask_count", Pipe.S)
    corestate.set_by(core, "mask_mode")  # SetMaskCount.md: set_mask_norm() once done (corestate.OBLIGATIONS)


def set_mask_norm() -> None:
    """pyasc ``set_mask_norm()``: the mask register switches to Normal mode, the default (SetMaskNorm.md)."""
    core = current("set_mask_norm")
    write(core, mode=MaskMode.NORMAL)
    core.record("set_mask_norm", Pipe.S)
    corestate.restored(core, "mask_mode")
