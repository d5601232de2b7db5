"""Inter-block synchronisation through a GM workspace: ``ib_set`` / ``ib_wait``, ``notify_next_block`` /
``wait_pre_block``, and the in-core ``data_sync_barrier``.

Rules (asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核间同步/IBSet.md``, ``IBWait.md``,
``NotifyNextBlock.md``, ``WaitPreBlock.md``; implementation ``impl/basic_api/kernel_operator_block_sync_intf_impl.h``
and ``dav_c220/kernel_operator_determine_compute_sync_impl.h``):

- ``IBSet(gm, ub, blockIdx, eventID)``: the flag is the int32 at ``gm[blockNum * 8 * eventID + blockIdx * 8]``
  (one 32 B block per (event, block)). After a ``PipeBarrier<PIPE_ALL>`` the core polls it until it reads 0,
  then writes 1; ``IBWait`` polls until it reads 1, then writes 0; both end with a ``PipeBarrier<PIPE_ALL>``.
  The workspace holds at least ``blockNum * 32 B * eventID_max + blockIdx_max * 32 B + 32 B`` and starts as zeros;
  ub_workspace at least 32 B. Set and wait must pass the same gm, blockIdx and eventID or the wait hangs.
- ``NotifyNextBlock`` / ``WaitPreBlock`` make the cores run a section in block order. GM holds one 32 B slot per
  core, UB ``blockNum * 8 + 1`` int32 whose last element is the round counter k (Ascend C's
  ``InitDetermineComputeWorkspace`` sets it to 1; pyasc has no such call, so the kernel sets it). Core i waits
  until slots ``0..i-1`` hold k and slots ``i..`` hold 0; its notify writes k into slot i, or, on the last
  core, zeros every slot; either then increments k. gm at least ``blockNum * 32 B``, ub ``blockNum * 32 + 32 B``.

Here the flags are real values in the GM buffer (a workspace that does not start as zeros hangs, as on the NPU);
a wait nobody will release is a deadlock KernelError at the wait. In the Trace each call is a
``PipeBarrier<PIPE_ALL>`` (as the implementation), one PIPE_S instruction with the UB bytes it writes, then
another barrier. A set's sync is ``Sync(SET, S, S, ("inter_block_set", flag))``; a wait's
``Sync(WAIT, S, S, ("inter_block", flag, releasers))`` where ``releasers`` are the (core, instruction) of the
sets whose values it read: ``fusekit.hb`` orders every instruction before those sets before every instruction
after the wait (rule 6), and transitively so. The flag bytes themselves are sync memory and are not recorded as
data accesses (they are written by several cores by design).
"""

from __future__ import annotations

import enum

import numpy as np

from . import dtypes
from .runtime import current
from .tensor import GlobalTensor, LocalTensor
from .trace import Pipe, Sync, SyncKind

SLOT = 8  # int32 per 32 B flag block (B32_DATA_NUM_PER_BLOCK)


class MemDsbT(enum.IntEnum):
    """Memory a ``data_sync_barrier`` waits for (pyasc core/enums.py; DataSyncBarrier(ISASI).md)."""

    ALL = 0
    DDR = 1
    UB = 2
    SEQ = 3


# pipes whose earlier accesses each kind waits for: GM moves on MTE2 (read) / MTE3 (write) and the scalar unit;
# UB is also written and read by V
_DSB_PIPES = {MemDsbT.ALL: (Pipe.V, Pipe.MTE2, Pipe.MTE3), MemDsbT.DDR: (Pipe.MTE2, Pipe.MTE3),
              MemDsbT.UB: (Pipe.V, Pipe.MTE2, Pipe.MTE3)}


def data_sync_barrier(arg0: MemDsbT) -> None:
    """``DataSyncBarrier<arg0>``: later instructions wait until every earlier GM and/or UB access has finished
    (DataSyncBarrier(ISASI).md; Atlas A2/A3 only). Recorded as a set on each waited pipe and a wait on PIPE_S,
    which blocks the issue of everything after it (``fusekit.hb`` rules 3 and 4).

    Raises:
        KernelError: ``arg0`` is not an asc.MemDsbT, is SEQ (no SEQ accesses on a vector core), or the SoC is
            not Atlas A2/A3 (arch 2201).
    """
    core, op = current("data_sync_barrier"), "data_sync_barrier"
    if not isinstance(arg0, MemDsbT):
        raise core.error(op, f"expected an asc.MemDsbT (ALL, DDR, UB), got {arg0!r}")
    if arg0 is MemDsbT.SEQ:
        raise core.error(op, "MemDsbT.SEQ waits for SEQ accesses, which a vector kernel does not make; use ALL, DDR "
                             "or UB (DataSyncBarrier(ISASI).md)", kind="unsupported")
    if core.soc.arch != "2201":
        raise core.error(op, f"{core.soc.name} (arch {core.soc.arch}) has no DataSyncBarrier: the page lists Atlas "
                             "A2/A3 only (DataSyncBarrier(ISASI).md, 产品支持情况)", kind="unsupported")
    key = ("dsb", len(core.instrs))
    for p in _DSB_PIPES[arg0]:
        core.record(op, p, sync=Sync(SyncKind.SET, p, Pipe.S, key + (p.value,)))
    for p in _DSB_PIPES[arg0]:
        core.record(op, Pipe.S, sync=Sync(SyncKind.WAIT, p, Pipe.S, key + (p.value,)))


# -- IBSet / IBWait ----------------------------------------------------------------------------------------

def ib_set(gm_workspace: GlobalTensor, ub_workspace: LocalTensor, block_idx: int, event_id: int,
           is_aiv_only: bool = True) -> None:
    """``IBSet<isAIVOnly>(gm, ub, blockIdx, eventID)``: write 1 into the (block_idx, event_id) flag of the GM
    workspace once it reads 0, after every earlier instruction of this core has finished.

    Args:
        gm_workspace: int32 GlobalTensor, zeros at launch, ``block_num * 8 * event_id + block_idx * 8 + 8``
            elements at least. ub_workspace: int32 LocalTensor, 8 elements (32 B) at least (overwritten).
        block_idx: in [0, block_num). event_id: >= 0.

    Raises:
        KernelError: wrong types, sizes or ranges; ``is_aiv_only=False`` (a mixed AIC/AIV launch); deadlock
            when the flag is still 1 (an earlier set was never waited for) and no core will clear it.
    """
    _ib("ib_set", gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only, expect=0, write=1)


def ib_wait(gm_workspace: GlobalTensor, ub_workspace: LocalTensor, block_idx: int, event_id: int,
            is_aiv_only: bool = True) -> None:
    """``IBWait<isAIVOnly>(gm, ub, blockIdx, eventID)``: block until the (block_idx, event_id) flag reads 1,
    then write 0. Every later instruction of this core starts after everything the setting core did before
    its ``ib_set``. Arguments and errors as :func:`ib_set`; deadlock when no core will set the flag."""
    _ib("ib_wait", gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only, expect=1, write=0)


def _ib(op: str, gm: GlobalTensor, ub: LocalTensor, block_idx, event_id, is_aiv_only, expect: int, write: int):
    core = current(op)
    _int32_tensors(core, op, gm, ub)
    if not is_aiv_only:
        raise core.error(op, "is_aiv_only=False synchronises the AIC and AIV cores of a mixed launch, which fusekit "
                             "does not simulate (IBSet.md: MIX mode counts GetBlockNum() * 2 cores)", kind="unsupported")
    for name, value, hi in (("block_idx", block_idx, core.block_num), ("event_id", event_id, None)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0 or \
                (hi is not None and value >= hi):
            raise core.error(op, f"{name}={value!r}: must be an integer in [0, {hi if hi is not None else 'inf'})"
                                 " (IBSet.md, 参数说明)")
    first = core.block_num * SLOT * int(event_id) + int(block_idx) * SLOT
    need = first + SLOT
    if gm.size - (gm.offset - gm.base) < need:
        raise core.error(op, f"gm_workspace has {gm.size - (gm.offset - gm.base)} int32 but flag (block_idx="
                             f"{block_idx}, event_id={event_id}) sits at element {first}: the workspace needs "
                             f"block_num * 32 B * event_id_max + block_idx_max * 32 B + 32 B = {need * 4} B at least "
                             "(IBSet.md, 约束说明)", kind="out-of-bounds", **gm.describe(need))
    ub_span = ub.span(core, op, SLOT, hint="ub_workspace needs 32 B (8 x int32) at least (IBSet.md, 约束说明)")
    start, _ = gm.span(core, op, SLOT, first)
    flag = ("ib", gm.gm.name, start)
    data = gm.gm.data
    value = lambda: int(data[start:start + 4].view(np.int32)[0])  # noqa: E731
    _barrier(core, op)
    core.wait_hook(lambda: value() == expect,
                   f"{op} waits for flag (block_idx={block_idx}, event_id={event_id}) of {gm.gm.name} to read "
                   f"{expect}; no running core will {'clear it with ib_wait' if expect == 0 else 'set it with ib_set'} "
                   "(set and wait need the same gm_workspace, block_idx and event_id; the workspace must start as "
                   "zeros)")
    writers = core.launch_flags.setdefault("inter_block_writers", {})
    released = (writers[flag],) if flag in writers else ()
    word = np.array([write] * SLOT, np.int32)

    # a closure, not an Effect: part of a synchronisation (the flag's UB copy), whose GM side changed at issue
    def effect():  # the UB copy of the flag block, as the implementation's DataCopy / SetValue leave it
        core.ub[ub_span[0]:ub_span[1]] = word.view(np.uint8)

    sync = (Sync(SyncKind.SET, Pipe.S, Pipe.S, ("inter_block_set", flag)) if write else
            Sync(SyncKind.WAIT, Pipe.S, Pipe.S, ("inter_block", flag, released)))
    data[start:start + 4] = np.array([write], np.int32).view(np.uint8)  # GM flag: visible to the other cores now
    writers[flag] = (core.idx, len(core.instrs))
    core.record(op, Pipe.S, writes=(ub.access(*ub_span),), sync=sync, count=SLOT, nbytes=32, dtype="int32",
                effect=effect)
    _barrier(core, op)


# -- NotifyNextBlock / WaitPreBlock ------------------------------------------------------------------------

def wait_pre_block(gm_workspace: GlobalTensor, ub_workspace: LocalTensor) -> None:
    """``WaitPreBlock(gm, ub)``: block until every lower block has notified in this round (slots ``0..i-1`` of
    the GM workspace hold the round counter k, the others 0). k is ``ub_workspace[block_num * 8]``.

    Args:
        gm_workspace: int32 GlobalTensor of ``block_num * 8`` elements at least (``block_num * 32 B``), zeros at
            launch. ub_workspace: int32 LocalTensor of ``block_num * 8 + 1`` elements at least, element
            ``block_num * 8`` set to 1 before the first call (InitDetermineComputeWorkspace's job in Ascend C).

    Raises:
        KernelError: wrong types or sizes; deadlock when the lower blocks will never notify (a missing
            notify_next_block, an uninitialised counter or workspace).
    """
    core, op = current("wait_pre_block"), "wait_pre_block"
    n, i, gm_lo, ub_span, counter = _determine(core, op, gm_workspace, ub_workspace)
    data = gm_workspace.gm.data
    slots = lambda: data[gm_lo:gm_lo + n * 32].view(np.int32)[::SLOT]  # noqa: E731
    want = np.array([counter] * i + [0] * (n - i), np.int32)
    _barrier(core, op)
    core.wait_hook(lambda: bool(np.array_equal(slots(), want)),
                   f"wait_pre_block on aiv({i}) waits for slots 0..{i - 1} of {gm_workspace.gm.name} to hold the round "
                   f"counter {counter} (ub_workspace[{n * SLOT}]) and the rest 0; the lower blocks will not get there: "
                   "every core must call notify_next_block as often as wait_pre_block, the GM workspace must start "
                   "as zeros and the counter at 1 (Ascend C's InitDetermineComputeWorkspace sets it; pyasc has no "
                   "such call: ub_workspace.set_value(block_num * 8, 1))")
    writers = core.launch_flags.setdefault("inter_block_writers", {})
    keys = [("blk", gm_workspace.gm.name, gm_lo + 32 * j) for j in range(n)]
    released = tuple(writers[k] for k in keys if k in writers)
    copy = data[gm_lo:gm_lo + n * 32].copy()

    # a closure, not an Effect: part of a synchronisation, it lands the GM bytes the wait read when it was released
    def effect():  # DataCopy(ub, gm, blockNum * 8): the workspace as the wait last read it
        core.ub[ub_span[0]:ub_span[0] + n * 32] = copy

    core.record(op, Pipe.S, reads=(ub_workspace.access(ub_span[1] - 4, ub_span[1]),),
                writes=(ub_workspace.access(ub_span[0], ub_span[0] + n * 32),), count=n * SLOT, nbytes=n * 32,
                dtype="int32", effect=effect,
                sync=Sync(SyncKind.WAIT, Pipe.S, Pipe.S, ("inter_block", ("blk", gm_workspace.gm.name), released)))
    _barrier(core, op)


def notify_next_block(gm_workspace: GlobalTensor, ub_workspace: LocalTensor) -> None:
    """``NotifyNextBlock(gm, ub)``: after every earlier instruction of this core, write the round counter k into
    this block's GM slot (the last block instead clears every slot, starting the next round), then k += 1 in
    ``ub_workspace[block_num * 8]``. Arguments and errors as :func:`wait_pre_block` (no deadlock: it never waits)."""
    core, op = current("notify_next_block"), "notify_next_block"
    n, i, gm_lo, ub_span, counter = _determine(core, op, gm_workspace, ub_workspace)
    data = gm_workspace.gm.data
    last = i + 1 == n
    lo = gm_lo if last else gm_lo + 32 * i
    hi = gm_lo + n * 32 if last else lo + 32
    block = np.zeros((hi - lo) // 4, np.int32) if last else np.full(SLOT, counter, np.int32)
    _barrier(core, op)
    data[lo:hi] = block.view(np.uint8)
    writers = core.launch_flags.setdefault("inter_block_writers", {})
    for j in (range(n) if last else (i,)):
        writers[("blk", gm_workspace.gm.name, gm_lo + 32 * j)] = (core.idx, len(core.instrs))
    ub_lo = ub_span[0] + (lo - gm_lo)
    next_round = np.array([counter + 1], np.int32)

    # a closure, not an Effect: part of a synchronisation, two writes (the staged block and the counter)
    def effect():  # the UB staging copy (Duplicate) and the incremented counter (SetValue)
        core.ub[ub_lo:ub_lo + (hi - lo)] = block.view(np.uint8)
        core.ub[ub_span[1] - 4:ub_span[1]] = next_round.view(np.uint8)

    core.record(op, Pipe.S, reads=(ub_workspace.access(ub_span[1] - 4, ub_span[1]),),
                writes=(ub_workspace.access(ub_lo, ub_lo + (hi - lo)), ub_workspace.access(ub_span[1] - 4, ub_span[1])),
                count=(hi - lo) // 4, nbytes=hi - lo, dtype="int32", effect=effect,
                sync=Sync(SyncKind.SET, Pipe.S, Pipe.S, ("inter_block_set", ("blk", gm_workspace.gm.name))))
    _barrier(core, op)


def _determine(core, op: str, gm: GlobalTensor, ub: LocalTensor):
    """(block_num, block index, GM byte of slot 0, UB byte span of the ub workspace, round counter k)."""
    _int32_tensors(core, op, gm, ub)
    n = core.block_num
    page = "NotifyNextBlock.md / WaitPreBlock.md, 约束说明"
    gm_lo, _ = gm.span(core, op, n * SLOT, hint=f": gm_workspace needs block_num * 32 B = {n * 32} B ({page})")
    ub_span = ub.span(core, op, n * SLOT + 1,
                      hint=f"ub_workspace needs block_num * 32 + 32 B (block_num * 8 + 1 int32 = {n * SLOT + 1}; {page})")
    counter = int(core.ub[ub_span[1] - 4:ub_span[1]].view(np.int32)[0])
    return n, core.idx, gm_lo, ub_span, counter


def _int32_tensors(core, op: str, gm, ub) -> None:
    if not isinstance(gm, GlobalTensor) or not isinstance(ub, LocalTensor):
        raise core.error(op, f"{op}(gm_workspace, ub_workspace, ...) takes an asc.GlobalTensor and an asc.LocalTensor, "
                             f"got {type(gm).__name__} and {type(ub).__name__}")
    gm._check_set(op)
    if gm.dtype is not dtypes.int32 or ub.dtype is not dtypes.int32:
        raise core.error(op, f"the workspaces are int32 (GlobalTensor<int32_t>, LocalTensor<int32_t>), got "
                             f"{gm.dtype.name} and {ub.dtype.name}")


def _barrier(core, op: str) -> None:
    """``PipeBarrier<PIPE_ALL>`` as the implementation issues around each call."""
    for p in (Pipe.V, Pipe.MTE2, Pipe.MTE3):
        core.record(op, p, sync=Sync(SyncKind.BARRIER, p, p, ("PIPE_ALL",)))
