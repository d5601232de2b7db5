"""State left set: a core's kernel ends with a state on that the next kernel on the core inherits.

The NPU keeps an AI Core's control registers from one kernel to the next (InitSocState.md 约束说明), and
three calls' pages ask the kernel to undo them before it ends: set_atomic_add / max / min and
set_store_atomic_config (DisableDmaAtomic.md), set_mask_count (SetMaskCount.md), set_vector_mask
(SetVectorMask.md); ``fusekit.asc.corestate.OBLIGATIONS`` lists them. Each one still set when a core's
kernel ends is a finding at the call that set it, with the call that restores it.

Reported under synccheck, beside "set_flag never waited": both are per-core state a kernel leaves behind
at its end (an event flag, a control register) that a later instruction or kernel then misreads. To see
what the next kernel gets, launch it with ``initial_state=`` this launch's result (``fusekit.asc.launch``).
"""

from __future__ import annotations

from fusekit.asc.trace import Trace

from .findings import Finding


def statecheck(trace: Trace) -> list[Finding]:
    """One synccheck finding (kind ``state left set``) per core and state it set and left set at kernel end.

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
    return findings
