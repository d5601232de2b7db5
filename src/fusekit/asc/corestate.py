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
- Also kept, but asked of no kernel to restore: the mask a vector instruction writes itself (a split form
  with is_set_mask=True, whole_reduce_*, Copy, GatherMask: 掩码.md 接口内设置Mask; its note "ResetMask无需在
  每次计算接口调用后调用"), DEQSCALE (SetDeqScale.md), the pad value (SetPadValue(ISASI).md), the CmpMask
  register (SetCmpMask(ISASI).md) and the atomic dtype alone (SetAtomicType.md). They are carried by
  ``launch(initial_state=)``, and not reported at kernel end: the hazard is reported where it bites.
- Where it bites: a kernel that reads a register it did not set, nor had reset (TPipe / init_soc_state),
  computes with whatever the previous kernel left (InitSocState.md 约束说明). :func:`restore` marks each
  register that starts from a non-reset value inherited; :func:`written`, the one note every writer makes
  (``basic.mask.write`` for the mask register), clears it; :func:`read`, called by each reader
  (:data:`REGISTERS`), notes a read while it is inherited, which ``fusekit.sanitizer.statecheck`` reports
  ("state inherited") at the reader's line with the fix.
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

from fusekit.machine import PERSISTENT  # the registers the NPU keeps across kernels, declared with every register

from .trace import Instr


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
class EndState:
    """One core's persistent registers at the end of its kernel (``Trace.end_state[i]``).

    Attributes:
        registers: Core attribute name (:data:`PERSISTENT`) -> a copy of its value, for those the kernel set.
        setters: obligation key -> the instruction that last set that state and was not undone by its
            restoring call (set_atomic_none, set_mask_norm, reset_mask, init_soc_state).
        soc: the SoC whose core this is (a state is a core's registers: another SoC's cores cannot start from it).
        reads: (key, what, op, file:line) of each instruction that read a register the kernel inherited
            (:func:`read`), for ``fusekit.sanitizer.statecheck``.
    """

    registers: dict = field(default_factory=dict)
    setters: dict[str, Instr] = field(default_factory=dict)
    soc: str = ""
    reads: list = field(default_factory=list)

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
    core.state_setters[key] = core.instrs[-1]


def restored(core, *keys: str) -> None:
    """Note that the kernel restored states ``keys`` (their setters no longer owe a reset)."""
    setters = core.state_setters
    for key in keys if setters else ():
        setters.pop(key, None)


def snapshot(core) -> EndState:
    """``core``'s persistent registers and their setters, copied so that the Trace keeps them as the kernel left them."""
    registers = {name: copy.deepcopy(getattr(core, name)) for name in PERSISTENT if getattr(core, name) is not None}
    return EndState(registers, dict(core.state_setters), core.soc.name, list(core.inherited_reads))


def _deq(registers: dict) -> "str | None":
    reg = registers.get("deqscale")
    return None if reg is None else f"DEQSCALE ({reg.form} form, {reg.value!r})"


def _pad(registers: dict) -> "str | None":
    value = registers.get("pad_value")
    return None if value is None else f"pad value {value!r}"


def _cmp(registers: dict) -> "str | None":
    reg = registers.get("cmp_mask")
    return None if reg is None or not reg.loaded else f"CmpMask 0x{bytes(reg.value[::-1]).hex()}"


@dataclass(frozen=True)
class Register:
    """A persistent register (or the part of one that one call writes), as a reader of it sees it.

    ``key``: the name :func:`written` and :func:`read` use (the :data:`OBLIGATIONS` keys for those with an
    undo); ``held(registers)``: what it holds if that is not its reset value (else None); ``name``: said in a
    finding; ``fix(arch)``: how a kernel sets it itself; ``page``: the source.
    """

    key: str
    held: Callable[[dict], "str | None"]
    name: str
    fix: Callable[[str], str]
    page: str


_INIT = "or call asc.init_soc_state() at kernel entry, as InitSocState.md 约束说明 asks of every static-tensor kernel"
REGISTERS = (
    Register("atomic", _atomic, "the store-atomic mode",
             lambda arch: f"call asc.set_atomic_none() before the store {_INIT}",
             "DisableDmaAtomic.md; InitSocState.md"),
    Register("mask_mode", _mask_mode, "the mask mode",
             lambda arch: "call asc.set_mask_norm() before it" + (f", {_INIT}" if arch == "2201" else
                                                                   " (InitSocState does not reset it on this SoC, 表4)"),
             "SetMaskNorm.md; InitSocState.md 约束说明 (its example is this case)"),
    Register("mask", _mask_bits, "the vector mask",
             lambda arch: "set it in this kernel (asc.set_vector_mask(...) or asc.reset_mask() before it, or the "
                          "instruction's own mask with is_set_mask=True)" +
                          (f", {_INIT}" if arch == "2201" else " (InitSocState does not reset it on this SoC, 表4)"),
             "SetVectorMask.md; 掩码.md 接口外设置Mask"),
    Register("deqscale", _deq, "DEQSCALE",
             lambda arch: "call asc.set_deq_scale(...) in this kernel before it (InitSocState resets DEQSCALE on "
                          "Ascend 950 only, InitSocState.md 表1-表4)", "SetDeqScale.md"),
    Register("pad_value", _pad, "the pad value",
             lambda arch: "call asc.set_pad_value(...) in this kernel before it, or pass is_pad=True with a "
                          "padding_value (InitSocState does not reset it)", "SetPadValue(ISASI).md"),
    Register("cmp_mask", _cmp, "the CmpMask register",
             lambda arch: "fill it in this kernel (asc.compare(...) or asc.set_cmp_mask(...)) before it (InitSocState "
                          "does not reset it)", "SetCmpMask(ISASI).md"),
)
_BY_KEY = {r.key: r for r in REGISTERS}


def restore(core, state: "EndState | None") -> None:
    """Start ``core`` from ``state``'s registers (copies: the earlier launch's record stays as it was). The
    setters are not carried: a finding of this kernel names a call this kernel made. Each register that
    holds something other than its reset value is marked inherited (``core.state_inherited``) until this
    kernel writes it (:func:`written`); an instruction that reads it before then is noted (:func:`read`)."""
    registers = state.registers if state is not None else {}
    for name, value in registers.items():
        setattr(core, name, copy.deepcopy(value))
    core.state_inherited = {r.key: what for r in REGISTERS if (what := r.held(registers)) is not None}


def written(core, *keys: str) -> None:
    """The one note of a write to a persistent register (``keys``: :data:`REGISTERS` keys): every call that
    changes one (the setters, the instructions that write the mask register themselves, init_soc_state)
    calls this, so from here on the kernel reads its own value, not the previous kernel's."""
    inherited = core.state_inherited
    for key in keys if inherited else ():
        inherited.pop(key, None)


def write(core, name: str, value) -> None:
    """Set the persistent register held in core attribute ``name`` (DEQSCALE, the pad value: those a call
    replaces whole) to ``value``, noting the write (:func:`written`)."""
    setattr(core, name, value)
    written(core, name)


def read(core, key: str, op: str) -> None:
    """Note that instruction ``op`` (being issued now) reads persistent register ``key``: if the kernel
    inherited a non-reset value there and has not written it, that is a finding of
    ``fusekit.sanitizer.statecheck`` at the kernel's ``file:line`` (one per register and line)."""
    what = core.state_inherited.get(key) if core.state_inherited else None
    if what is None:
        return
    from .runtime import kernel_frame  # runtime imports this module

    frame = kernel_frame()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?:0"
    if not any(r[0] == key and r[3] == where for r in core.inherited_reads):
        core.inherited_reads.append((key, what, op, where))


def register(key: str) -> Register:
    """The :data:`REGISTERS` entry of ``key``."""
    return _BY_KEY[key]


def init_soc_state(core) -> None:
    """What ``InitSocState`` resets on ``core``'s SoC (InitSocState.md 表3 / 表4; ``InitSocStateImpl``):
    atomics off everywhere; on arch 2201 also mask mode Normal and all 128 mask bits set."""
    from .atomic import mode_of
    from .basic.mask import FULL, MaskMode, write

    atomic = mode_of(core)
    atomic.op, atomic.dtype = None, None
    written(core, "atomic")
    restored(core, "atomic")
    if core.soc.arch == "2201":
        write(core, mode=MaskMode.NORMAL, high=FULL, low=FULL)
        restored(core, "mask_mode", "mask")


def states_of(previous, soc: "str | None" = None) -> "list[EndState]":
    """The per-core end states of ``previous``: a LaunchResult, a Trace, a sanitizer Report, or their
    ``end_state`` list itself (a launch has at least one core, so an empty list is none of these).

    Args:
        soc: the SoC name of the launch that starts from them; None: not checked.

    Raises:
        TypeError: ``previous`` is none of these.
        ValueError: ``previous`` ran on another SoC than ``soc`` (its registers are another chip's cores').
    """
    trace = getattr(previous, "trace", previous)
    states = getattr(trace, "end_state", trace)
    if not isinstance(states, list) or not states or not all(isinstance(s, EndState) for s in states):
        raise TypeError("initial_state must be what an earlier launch returned (its LaunchResult, Trace or sanitizer "
                        f"Report, or that Trace's end_state list), or None for fresh cores; got "
                        f"{type(previous).__name__}" + (" []" if isinstance(states, list) and not states else ""))
    ran = getattr(trace, "soc", None) or next((s.soc for s in states if s.soc), None)
    if soc is not None and ran is not None and ran != soc:
        raise ValueError(f"initial_state comes from a launch on {ran}, but this launch runs on {soc}: a core starts "
                         f"from the registers of the core that ran before it, so launch with soc={ran!r} (or without "
                         "initial_state)")
    return states
