"""Cross-core flags between AIV cores: ``cross_core_set_flag`` / ``cross_core_wait_flag``.

Rules (asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核间同步/CrossCoreSetFlag(ISASI).md`` and
``CrossCoreWaitFlag(ISASI).md``): each flag id (0..15 in modes 0, 1, 2; "取值范围为0-15") is a counter.
Mode 0 synchronises all AIV cores of the launch: the wait blocks the core's later instructions until
every AIV core has executed the set. The set runs on ``pipe`` (PIPE_V, PIPE_MTE2, PIPE_MTE3 for a vector
core; "不支持PIPE_S和PIPE_ALL") once that pipe's earlier instructions are done. Modes 1 (the two AIVs of
one AI Core) and 2 (AIC with its AIVs) need a mixed launch (KERNEL_TYPE_MIX_AIC_1_2), which fusekit
does not simulate: a vector-only launch has one AIV per AI Core (GetSubBlockNum(ISASI).md, 表2).

Here the k-th wait of a core on flag f returns once flag f has been set ``k * block_num`` times; the
launch runs the cores under the scheduler (runtime.py), and a wait nobody will release is a deadlock
KernelError at the wait's file:line. In the Trace a set is ``Sync(SET, pipe, pipe, ("cross_core", f))``
and a wait ``Sync(WAIT, pipe, PIPE_S, ("cross_core", f))`` on PIPE_S (it blocks issue); happens-before (hb.py) orders every
core's accesses before a wait before the other cores' accesses after their matching wait.
"""

from __future__ import annotations


from .runtime import current
from .sync import PipeID
from .trace import Pipe, Sync, SyncKind

FLAG_IDS = 16
VECTOR_PIPES = (PipeID.PIPE_V, PipeID.PIPE_MTE2, PipeID.PIPE_MTE3)


def _check(op: str, flag_id, mode_id, pipe):
    core = current(op)
    if mode_id != 0:
        raise core.error(op, f"mode_id={mode_id!r}: fusekit simulates mode 0 (all AIV cores of the launch); modes 1 "
                             "and 2 synchronise the AIVs of one AI Core with each other or with the AIC and need a mixed "
                             "AIC/AIV launch, which fusekit does not simulate (CrossCoreSetFlag(ISASI).md)",
                         kind="unsupported")
    if pipe not in VECTOR_PIPES:
        raise core.error(op, f"pipe={pipe!r}: an AIV's cross-core flag is issued on PipeID.PIPE_V, PIPE_MTE2 or "
                             "PIPE_MTE3; PIPE_S and PIPE_ALL are not allowed (CrossCoreSetFlag(ISASI).md)")
    if not isinstance(flag_id, int) or not 0 <= flag_id < FLAG_IDS:
        raise core.error(op, f"flag_id={flag_id!r}: flag ids are 0..{FLAG_IDS - 1} in mode 0 "
                             "(CrossCoreSetFlag(ISASI).md, flagId取值范围说明)")
    return core, int(flag_id), pipe.value


def cross_core_set_flag(flag_id: int, mode_id: int, pipe: PipeID) -> None:
    """``CrossCoreSetFlag<modeId, pipe>(flagId)``: report this core's ``pipe`` work as done on flag ``flag_id``.

    Raises:
        KernelError: mode other than 0, a pipe other than V/MTE2/MTE3, a flag id outside 0..15.
    """
    core, flag, p = _check("cross_core_set_flag", flag_id, mode_id, pipe)
    core.record("cross_core_set_flag", p, sync=Sync(SyncKind.SET, p, p, ("cross_core", flag)))
    core.launch_flags[flag] = core.launch_flags.get(flag, 0) + 1


def cross_core_wait_flag(flag_id: int, mode_id: int, pipe: PipeID) -> None:
    """``CrossCoreWaitFlag<modeId, pipe>(flagId)``: block until every AIV core has set ``flag_id`` (once more
    than for this core's previous wait on it).

    Raises:
        KernelError: as :func:`cross_core_set_flag`; kind ``deadlock`` when no core will set the flag.
    """
    core, flag, p = _check("cross_core_wait_flag", flag_id, mode_id, pipe)
    waits = core.cross_waits
    waits[flag] += 1
    needed = waits[flag] * core.block_num
    # the wait stops the issue of every later instruction ("阻塞本核后续指令的下发"): recorded on PIPE_S
    core.record("cross_core_wait_flag", Pipe.S, sync=Sync(SyncKind.WAIT, p, Pipe.S, ("cross_core", flag)))
    flags = core.launch_flags
    core.wait_hook(lambda: flags.get(flag, 0) >= needed)
