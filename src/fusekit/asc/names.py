"""Helpful errors for names Ascend C C++ or pyasc does not have, or spells differently.

Kernels ported from C++ often keep ``AllocTensor`` or ``DataCopy``; pyasc spells them
``alloc_tensor`` and ``data_copy``. Calls that do not exist at all in Ascend C, such as the seed
article's ``pipe.SyncIO()`` / ``pipe.SyncCompute()``, get an explanation of how synchronisation
really works.
"""

from __future__ import annotations

import difflib
import re

# Calls that do not exist in Ascend C, with what to do instead
NONEXISTENT = {
    "SyncIO": "queues synchronise by themselves: enque sets and deque waits the MTE2 -> V (VECIN) and V -> MTE3 "
              "(VECOUT) flags. For raw TBuf data use asc.set_flag / asc.wait_flag (e.g. HardEvent.MTE2_V) or "
              "asc.pipe_barrier(PipeID.PIPE_ALL)",
    "SyncCompute": "queues synchronise by themselves: deque waits for the producer and enque signals the consumer. "
                   "For raw TBuf data use asc.set_flag / asc.wait_flag (e.g. HardEvent.V_MTE3) or "
                   "asc.pipe_barrier(PipeID.PIPE_V)",
}


def snake_case(name: str) -> str:
    """Ascend C's CamelCase as pyasc and msopgen spell it: DataCopy -> data_copy, FusedAddScale ->
    fused_add_scale; an acronym stays one word (ABCDef -> abc_def)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


NOT_SIMULATED = {
    "adv": "pyasc's advanced APIs (asc.adv: Tanh, RmsNorm, ...) are not simulated by fusekit; write the kernel with the "
           "basic vector instructions",
    "LocalTensorAuto": "automatic-sync tensors (insert_sync kernels) are not simulated by fusekit",
    "language": "fusekit simulates the asc API itself; import what you need from asc directly",
}


def unknown(owner: str, name: str, available) -> str:
    """Message for ``owner.name`` missing: what to do instead, or the closest existing name."""
    if owner == "asc" and name in NOT_SIMULATED:
        return NOT_SIMULATED[name]
    key = name.replace("_", "").lower()
    for missing, advice in NONEXISTENT.items():
        if key == missing.lower():
            return f"{owner} has no {name}(): Ascend C has no such call; {advice}"
    names = [n for n in available if not n.startswith("_")]
    snake = snake_case(name)
    if snake in names:
        return f"{owner} has no {name}: pyasc spells Ascend C's {name} as {snake}"
    close = difflib.get_close_matches(snake, names, n=1, cutoff=0.75)
    return f"{owner} has no {name}" + (f"; did you mean {close[0]}?" if close else "")
