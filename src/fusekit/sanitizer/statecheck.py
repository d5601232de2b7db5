"""State left set: a core's kernel ends with a state on that the next kernel on the core inherits.

The NPU keeps an AI Core's control registers from one kernel to the next (InitSocState.md 约束说明), and
three calls' pages ask the kernel to undo them before it ends: set_atomic_add / max / min and
set_store_atomic_config (DisableDmaAtomic.md), set_mask_count (SetMaskCount.md), set_vector_mask
(SetVectorMask.md); ``fusekit.asc.corestate.OBLIGATIONS`` lists them. Each one still set when a core's
kernel ends is a finding at the call that set it, with the call that restores it.

State inherited: the other side of the same fact, reported where it bites. A kernel started with
``launch(initial_state=)`` holds the previous kernel's registers; an instruction that reads one (the
mask mode: every split form; the mask bits: is_set_mask=False; the store-atomic mode: a UB -> GM copy;
DEQSCALE: AddDeqRelu / Cast / CastDequant; the pad value: data_copy_pad with is_pad=False; CmpMask:
select / compare_scalar) while it still holds a non-reset value that this kernel did not write (nor a
TPipe / init_soc_state reset) computes with that kernel's value: a finding at the instruction, naming the
register and how to set it (``fusekit.asc.corestate.REGISTERS``; InitSocState.md 约束说明: "非预期的值
可能导致计算结果出现精度错误"). A mask a split form wrote, DEQSCALE, the pad value and CmpMask are not
reported at kernel end (no page asks a kernel to undo them), only here.

Reported under synccheck, beside "set_flag never waited": both are per-core state a kernel leaves behind
at its end (an event flag, a control register) that a later instruction or kernel then misreads. To see
what the next kernel gets, launch it with ``initial_state=`` this launch's result (``fusekit.asc.launch``).
"""

from __future__ import annotations

from fusekit.asc.corestate import register
from fusekit.asc.trace import Trace
from fusekit.soc import get_soc

from .findings import Finding


def statecheck(trace: Trace) -> list[Finding]:
    """One synccheck finding (kind ``state left set``) per core and state it set and left set at kernel end,
    and one (kind ``state inherited``) per core, register and kernel line that read a register still
    holding the previous kernel's value.

    Args:
        trace: a launch's Trace; its ``end_state`` holds each core's registers and their setters.
    """
    findings = []
    for core, state in enumerate(trace.end_state):
        for duty, what, setter in state.left_set():
            findings.append(Finding(
                "synccheck", "state left set",
                f"{what}, set by {setter.op} here, is still on when the kernel ends; the core keeps it, so "
                f"{duty.harm} (a TPipe or init_soc_state() in that kernel resets it {duty.reset}). Call {duty.fix} "
                f"before the kernel returns ({duty.page})",
                cores=(core,), pipes=(setter.pipe.value,), locations=(setter.where,), ops=(setter.op,)))
    arch = get_soc(trace.soc).arch
    for core, state in enumerate(trace.end_state):
        for key, what, op, where in state.reads:
            reg = register(key)
            findings.append(Finding(
                "synccheck", "state inherited",
                f"{op} here reads {reg.name}, which this kernel has not set: it holds {what}, as the previous "
                f"kernel on this core left it (launch(initial_state=)), so it computes with that kernel's value. "
                f"{reg.fix(arch)[0].upper()}{reg.fix(arch)[1:]} ({reg.page})",
                cores=(core,), locations=(where,), ops=(op,)))
    return findings
