"""Cross-core flags: ``cross_core_set_flag`` / ``cross_core_wait_flag``.

Rules (asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核间同步/CrossCoreSetFlag(ISASI).md`` and
``CrossCoreWaitFlag(ISASI).md``): each flag id (0..15 in modes 0, 1, 2; "取值范围为0-15") is a counter.

- Mode 0 synchronises all the launch's cores of the caller's kind (every AIV, or every AIC): the wait blocks the
  core's later instructions until every such core has executed the set.
- Mode 1 synchronises the AIVs of one logical AI Core (the two of a MIX_AIC_1_2 kernel) the same way.
- Mode 2 is between an AIC and its AIVs: an AIC's set releases one wait of each of its AIVs; the AIC's wait needs
  the sets of all its AIVs (its k-th wait, the k-th set of each, however the AIVs' sets interleave). It needs a mix launch (an AI Core with both kinds).

A set runs on ``pipe`` once that pipe's earlier instructions are done: PIPE_V, PIPE_MTE2 or PIPE_MTE3 on an AIV,
PIPE_MTE1, PIPE_MTE2, PIPE_M or PIPE_FIX on an AIC ("不支持PIPE_S和PIPE_ALL"). A counter holds at most 15 sets
no wait has taken ("超出15次需要做一次反向同步，否则会出现卡死", AD-G 硬件约束/NPU架构版本2201.md): a 16th is a
deadlock KernelError, as is a wait no running core will release (at the wait's file:line); the launch runs the
cores under the scheduler (runtime.py).

On Atlas A2/A3 a wait's ``modeId`` and ``pipe`` do not take effect ("模板参数modeId和pipe不生效", CrossCoreWaitFlag
(ISASI).md): the wait blocks every pipe until its core's counter of the flag id is non-zero, whichever mode's sets
fed it (C++'s ``CrossCoreWaitFlag(0)`` with the defaults mode 0 and PIPE_S waits for an AIC's mode-2 sets). So a
wait accepts any pipe and takes from the first counter of this core that holds a set for it: its own mode's, then
the other modes'.

In the Trace a set is ``Sync(SET, pipe, pipe, ("cross_core", f))``. A mode-0 wait is ``Sync(WAIT, pipe, PIPE_S,
("cross_core", f))`` on PIPE_S (it blocks issue): happens-before (hb.py rule 5) orders every core's accesses before
a wait before the other cores' accesses after their matching wait. A mode 1 or 2 wait names the sets that released
it, ``("inter_block", ("cross_core", mode, f), ((core, instr), ...))``, so that hb.py rule 6 orders what each
releasing core's pipe had finished at its set before what the waiting core does after the wait, and nothing else.
"""

from __future__ import annotations

from .runtime import current
from .sync import PipeID
from .trace import Pipe, Sync, SyncKind

FLAG_IDS = 16
MAX_PENDING = 15  # sets of one counter no wait has taken yet (硬件约束/NPU架构版本2201.md)
_PAGE = "CrossCoreSetFlag(ISASI).md"


def _check(op: str, flag_id, mode_id, pipe, waiting: bool = False):
    core = current(op)
    if mode_id not in (0, 1, 2):
        raise core.error(op, f"mode_id={mode_id!r}: modes 0 (all cores of a kind), 1 (the AIVs of one AI Core) and 2 "
                             f"(an AIC with its AIVs) exist on Atlas A2/A3; mode 4 is Ascend 950's ({_PAGE})")
    if mode_id == 1 and core.kind.name != "AIV":
        raise core.error(op, f"mode 1 synchronises the AIVs of one AI Core; this is an {core.kind.name} ({_PAGE})")
    if mode_id == 2 and not (core.place.aics and core.place.aivs):
        raise core.error(op, "mode 2 synchronises an AIC with its AIVs, and this launch's AI Cores have only "
                             f"{core.kind.name}s: launch a mix kernel (@asc.jit(kernel_type=config.KernelType."
                             f"MIX_AIC_1_2) or MIX_AIC_1_1) ({_PAGE})", kind="unsupported")
    allowed = tuple(p for p in core.kind.pipes if p is not Pipe.S)
    if not isinstance(pipe, PipeID) or not (waiting or pipe.value in allowed):  # a wait's pipe: no effect
        raise core.error(op, f"pipe={pipe!r}: an {core.kind.name}'s cross-core flag is issued on PipeID."
                             f"{', '.join(f'PIPE_{p.name}' for p in allowed)}; PIPE_S and PIPE_ALL are not allowed "
                             f"({_PAGE})")
    if not isinstance(flag_id, int) or not 0 <= flag_id < FLAG_IDS:
        raise core.error(op, f"flag_id={flag_id!r}: flag ids are 0..{FLAG_IDS - 1} ({_PAGE}, flagId取值范围说明)")
    return core, int(flag_id), pipe.value


def _counter(place, mode: int, flag: int, waiter: str) -> tuple:
    """The counter that the waits of the ``waiter`` kind take from: one per kind in mode 0, one per AI Core (and,
    in mode 2, per direction) otherwise; ``place``: the core's (``runtime.Place``)."""
    return ("cross_core", 0, waiter, flag) if mode == 0 else ("cross_core", mode, place.ai_core, waiter, flag)


def _per_wait(core, place, mode: int) -> int:
    """Sets one wait of ``core`` takes: every core of its kind (mode 0), every AIV of its AI Core (mode 1, and an
    AIC's wait in mode 2), its AIC's one set (an AIV's wait in mode 2)."""
    if mode == 0:
        return core.block_num * place.ratio
    return place.aivs if mode == 1 or core.kind.name == "AIC" else 1


def cross_core_set_flag(flag_id: int, mode_id: int, pipe: PipeID) -> None:
    """``CrossCoreSetFlag<modeId, pipe>(flagId)``: report this core's ``pipe`` work as done on flag ``flag_id``
    (module docstring).

    Raises:
        KernelError: a mode other than 0, 1, 2 (1 on an AIC, 2 without a mix launch), a pipe the core kind has no
            flag on, a flag id outside 0..15, or a 16th set no wait has taken (kind ``deadlock``).
    """
    core, flag, p = _check("cross_core_set_flag", flag_id, mode_id, pipe)
    waiter = ("AIV" if core.kind.name == "AIC" else "AIC") if mode_id == 2 else core.kind.name
    flags = core.launch_flags
    lanes = core.lanes(mode_id)  # (Trace index, place) of each core this call runs for: one, or a lockstep group's
    keys = [_counter(place, mode_id, flag, waiter) for _, place in lanes]
    for (_, place), key in zip(lanes, keys):
        setters = _per_wait(core, place, mode_id) if mode_id != 2 else (1 if waiter == "AIV" else place.aivs)
        if len(flags.get(key, ())) - flags.get(("taken",) + key, 0) >= MAX_PENDING * setters:
            raise core.error("cross_core_set_flag", f"flag {flag} already holds {MAX_PENDING} sets no wait has taken: "
                                                    "on the NPU this set hangs (超出15次需要做一次反向同步); wait for "
                                                    "the flag in between", kind="deadlock")
    core.record("cross_core_set_flag", p, sync=Sync(SyncKind.SET, p, p, ("cross_core", flag)))
    for (idx, _), key in zip(lanes, keys):
        flags[key] = flags.get(key, ()) + ((idx, len(core.instrs) - 1),)
    core.note_set()


def _wait_modes(core, mode_id: int) -> tuple:
    """The modes whose sets can release a wait of ``core`` given ``mode_id``: its own first, then those of the
    other modes this launch has (module docstring: a wait's modeId does not take effect on A2/A3)."""
    mix = bool(core.place.aics and core.place.aivs)
    others = (0, 1, 2) if core.kind.name == "AIV" else (0, 2)
    return (mode_id,) + tuple(m for m in others if m != mode_id and (m != 2 or mix))


def cross_core_wait_flag(flag_id: int, mode_id: int, pipe: PipeID) -> None:
    """``CrossCoreWaitFlag<modeId, pipe>(flagId)``: block until the sets that release this wait have run (module
    docstring).

    Raises:
        KernelError: as :func:`cross_core_set_flag` (any pipe is accepted: it has no effect on A2/A3); kind
            ``deadlock`` when no core will set the flag.
    """
    core, flag, p = _check("cross_core_wait_flag", flag_id, mode_id, pipe, waiting=True)
    flags, waits = core.launch_flags, core.cross_waits
    lanes = core.lanes(mode_id)
    chosen: list = [None] * len(lanes)

    def released() -> bool:  # every lane's wait (a lockstep group's cores go on together)
        for k, (_, place) in enumerate(lanes):
            if chosen[k] is None:
                chosen[k] = _released(core, place, mode_id, flag, flags, waits)
        return all(c is not None for c in chosen)

    why = (f"{'its AIC' if mode_id == 2 and core.kind.name == 'AIV' else 'the AIVs of its AI Core'} set flag {flag} "
           f"in mode {mode_id} fewer times than it is waited for")
    core.wait_hook(released, None if mode_id == 0 else why)
    mode = chosen[0][0]
    waits[(mode, flag)] += 1
    for _, key, per, needed, _ in chosen:
        flags[("taken",) + key] = max(flags.get(("taken",) + key, 0), needed)  # an AIC's set releases both AIVs
    if mode == 0:  # the wait stops the issue of every later instruction ("阻塞本核后续指令的下发"): PIPE_S
        core.record("cross_core_wait_flag", Pipe.S, sync=Sync(SyncKind.WAIT, p, Pipe.S, ("cross_core", flag)))
        return
    sets = [released_by for *_, released_by in chosen]
    core.record("cross_core_wait_flag", Pipe.S, sync=core.per_lane(
        [Sync(SyncKind.WAIT, p, Pipe.S, ("inter_block", ("cross_core", mode, flag), released_by))
         for released_by in sets]))
    core.note_wait(sets)


def _released(core, place, mode_id: int, flag: int, flags: dict, waits) -> "tuple | None":
    """(mode, counter, sets per wait, sets needed, the releasing sets) of the first counter holding the sets that
    release the next wait of the core at ``place`` on ``flag``, or None while none does.

    The k-th wait of a core takes the k-th set of each core it waits for (the ``per`` cores of :func:`_per_wait`: all
    its AIVs for an AIC in mode 2, every core of the kind in mode 0), named in core order: which of those cores ran
    first does not change which sets release it.
    """
    for mode in _wait_modes(core, mode_id):
        key, per = _counter(place, mode, flag, core.kind.name), _per_wait(core, place, mode)
        k = waits[(mode, flag)] + 1
        by_setter: dict = {}
        for setter, instr in flags.get(key, ()):
            by_setter.setdefault(setter, []).append((setter, instr))
        ready = sorted(sets[k - 1] for sets in by_setter.values() if len(sets) >= k)
        if len(ready) >= per:
            return mode, key, per, k * per, tuple(ready)
    return None
