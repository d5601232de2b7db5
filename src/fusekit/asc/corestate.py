"""Per-core state that outlives a kernel: what the NPU keeps, what resets it, and what a kernel must restore.

Facts (asc-devkit ``docs/zh/api/SIMD-API/基础API/``; AD ``impl/basic_api/kernel_utils_base.h``
``InitSocStateImpl``, ``impl/basic_api/kernel_tpipe_impl.h``):

- An AI Core's control registers keep their values from one kernel to the next: "在实际运行中，这些值可能被
  前序执行的算子修改，若不调用该接口进行初始化，非预期的值可能导致计算结果出现精度错误" (工具接口/系统初始化/
  InitSocState.md, 约束说明; its example: a previous operator left Counter mask mode on).
- ``InitSocState`` resets, on arch 2201 (A2/A3, InitSocState.md 表2/表3): DMA atomics off, mask mode Normal,
  (AIV) mask all ones; on arch 2002 (310P, 表4): DMA atomics off only. DEQSCALE and the CTRL register are
  reset on Ascend 950 only, so on A2/A3 and 310P they are not. The ``TPipe`` constructor and
  ``TPipe::Reset`` call it, so a TPipe kernel starts from that state; a kernel written with static tensors
  must call it itself (约束说明).
- The pages of three calls ask the kernel to undo them before it ends (约束说明 of each), because the next
  kernel on the core inherits them: SetAtomicAdd / SetAtomicMax / SetAtomicMin (原子操作/SetAtomicAdd.md,
  DisableDmaAtomic.md: "使用完成后，通过DisableDmaAtomic清空原子操作的状态，以免影响后续相关指令功能"),
  SetMaskCount (掩码操作/SetMaskCount.md: "需要在矢量计算使用完之后调用SetMaskNorm将Mask模式恢复为Normal模式"),
  SetVectorMask (SetVectorMask.md: "使用完成后需要使用ResetMask将mask恢复为默认值"). These are
  :data:`OBLIGATIONS`; the sanitizer reports each still set when a core's kernel ends
  (``fusekit.sanitizer.statecheck``).
- Also kept, but asked of no kernel to restore: DEQSCALE (SetDeqScale.md), the pad value (SetPadValue(ISASI).md),
  the CmpMask register (SetCmpMask(ISASI).md) and the atomic dtype alone (SetAtomicType.md). Each documented
  reader needs the kernel to set them first (in a fresh launch fusekit raises for DEQSCALE and CmpMask and
  leaves pad bytes undefined, which initcheck reports when they are read), so a value left behind harms
  only a kernel that is wrong already. They are carried by ``launch(initial_state=)``.
- The overflow (saturation) mode is CTRL[48] (特殊寄存器访问/SetCtrlSpr(ISASI).md 表5), kept too, but pyasc
  has no call that sets it: in fusekit it is the launch option ``overflow=``, not kernel state.

A launch normally starts every core from the reset state. ``launch(..., initial_state=previous)`` starts
core ``i`` from the registers core ``i`` of ``previous`` ended with (:data:`PERSISTENT`), as when the
same physical core runs the next kernel; that reproduces on the CPU what a state left set does on the
device.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

from .trace import Instr

# Core attributes that hold registers the NPU keeps across kernels (see the module docstring)
PERSISTENT = ("atomic", "vector_mask", "deqscale", "pad_value", "cmp_mask")


@dataclass(frozen=True)
class Obligation:
    """A state whose setting call's page asks the kernel to restore it before it ends.

    ``still_set(registers)`` describes the state if it is not the default (else None); ``fix`` is the call
    that restores it; ``harm`` what the next kernel on the core gets; ``reset`` which SoCs' InitSocState
    (and so TPipe) clears it; ``page`` the source.
    """

    key: str
    still_set: Callable[[dict], "str | None"]
    fix: str
    harm: str
    reset: str
    page: str


def _atomic(registers: dict) -> "str | None":
    mode = registers.get("atomic")
    if mode is None or mode.op is None:
        return None
    return f"atomic {mode.op}" + (f" ({mode.dtype.name})" if mode.dtype is not None else "")


def _mask_mode(registers: dict) -> "str | None":
    from .basic.mask import MaskMode  # basic/ imports this module's callers: import when used

    reg = registers.get("vector_mask")
    return "Counter mask mode" if reg is not None and reg.mode is MaskMode.COUNTER else None


def _mask_bits(registers: dict) -> "str | None":
    from .basic.mask import FULL

    reg = registers.get("vector_mask")
    if reg is None or (reg.high, reg.low) == (FULL, FULL):
        return None
    return f"vector mask [{reg.low:#x}, {reg.high:#x}] (low, high)"


OBLIGATIONS = (
    Obligation("atomic", _atomic, "asc.set_atomic_none()",
               "the next kernel's UB -> GM copies on this core combine with GM instead of overwriting it",
               "on every SoC", "DisableDmaAtomic.md / SetAtomicAdd.md 约束说明"),
    Obligation("mask_mode", _mask_mode, "asc.set_mask_norm()",
               "a next kernel that writes a Normal-mode mask gets an element count instead of a lane mask",
               "on A2/A3, not on 310P", "SetMaskCount.md 约束说明; InitSocState.md 约束说明"),
    Obligation("mask", _mask_bits, "asc.reset_mask()",
               "the next kernel's instructions with is_set_mask=False process only these lanes",
               "on A2/A3, not on 310P", "SetVectorMask.md 约束说明"),
)


@dataclass
class CoreState:
    """One core's persistent registers at the end of its kernel (``Trace.end_state[i]``).

    Attributes:
        registers: Core attribute name (:data:`PERSISTENT`) -> a copy of its value, for those the kernel set.
        setters: obligation key -> the instruction that last set that state and was not undone by its
            restoring call (set_atomic_none, set_mask_norm, reset_mask, init_soc_state).
    """

    registers: dict = field(default_factory=dict)
    setters: dict[str, Instr] = field(default_factory=dict)

    def left_set(self) -> list[tuple[Obligation, str, Instr]]:
        """(obligation, what is set, the instruction that set it) for each state the kernel set and left set."""
        found = []
        for duty in OBLIGATIONS:
            what = duty.still_set(self.registers)
            if what is not None and duty.key in self.setters:
                found.append((duty, what, self.setters[duty.key]))
        return found


def set_by(core, key: str) -> None:
    """Note that the instruction just recorded on ``core`` set state ``key`` (an :data:`OBLIGATIONS` key)."""
    core.__dict__.setdefault("state_setters", {})[key] = core.instrs[-1]


def restored(core, *keys: str) -> None:
    """Note that the kernel restored states ``keys`` (their setters no longer owe a reset)."""
    setters = core.__dict__.get("state_setters")
    for key in keys if setters else ():
        setters.pop(key, None)


def snapshot(core) -> CoreState:
    """``core``'s persistent registers and their setters, copied so that the Trace keeps them as the kernel left them."""
    registers = {name: copy.deepcopy(core.__dict__[name]) for name in PERSISTENT if name in core.__dict__}
    return CoreState(registers, dict(core.__dict__.get("state_setters", {})))


def restore(core, state: "CoreState | None") -> None:
    """Start ``core`` from ``state``'s registers (copies: the earlier launch's record stays as it was). The
    setters are not carried: a finding of this kernel names a call this kernel made."""
    for name, value in (state.registers if state is not None else {}).items():
        setattr(core, name, copy.deepcopy(value))


def init_soc_state(core) -> None:
    """What ``InitSocState`` resets on ``core``'s SoC (InitSocState.md 表3 / 表4; ``InitSocStateImpl``):
    atomics off everywhere; on arch 2201 also mask mode Normal and all 128 mask bits set."""
    from .atomic import mode_of
    from .basic.mask import FULL, MaskMode, register_of

    atomic = mode_of(core)
    atomic.op, atomic.dtype = None, None
    restored(core, "atomic")
    if core.soc.arch == "2201":
        reg = register_of(core)
        reg.mode, reg.high, reg.low = MaskMode.NORMAL, FULL, FULL
        restored(core, "mask_mode", "mask")


def states_of(previous) -> "list[CoreState]":
    """The per-core end states of ``previous``: a LaunchResult, a Trace, a sanitizer Report, or their
    ``end_state`` list itself.

    Raises:
        TypeError: ``previous`` is none of these.
    """
    trace = getattr(previous, "trace", previous)
    states = getattr(trace, "end_state", trace)
    if not isinstance(states, list) or not all(isinstance(s, CoreState) for s in states):
        raise TypeError("initial_state must be what an earlier launch returned (its LaunchResult, Trace or sanitizer "
                        f"Report), got {type(previous).__name__}")
    return states
