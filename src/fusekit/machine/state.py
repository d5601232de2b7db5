"""The architectural state of one core, declared in one place: every register the instructions read or set,
and one arena per local memory space.

``fusekit.asc.runtime.Core`` is a :class:`CoreState` (plus the launch's bookkeeping: Trace, scheduler hooks),
so every register exists, reset, from the core's start, and a module that sets one writes the attribute
declared here. A register whose value is an object of the instruction family that owns it (the mask
register of ``fusekit.asc.basic.mask``, the atomic mode of ``fusekit.asc.atomic``) is None until that family
first touches it: the family makes its reset value (``register_of``, ``mode_of``), so this layer needs no
import of the families. ``persistent`` marks what the NPU keeps from one kernel to the next (InitSocState.md,
约束说明; ``fusekit.asc.corestate``, which snapshots them in this order).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields

import numpy as np

from .cores import AIV, CoreKind

POISON = 0xFF  # fresh local memory: all-ones bytes read as NaN in every float type and -1 in signed integers


def _register(doc: str, *, persistent: bool = False, default=None, factory=None):
    """A declared register: ``doc`` says what it holds and its page; ``persistent``: kept across kernels."""
    meta = {"doc": doc, "persistent": persistent}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(eq=False, repr=False)  # a core compares and prints as itself (its arenas are large)
class CoreState:
    """Every register of one core, then its local memories (see the module docstring).

    The persistent registers come first, in the order ``fusekit.asc.corestate`` snapshots them.
    """

    # -- kept across kernels (persistent), in snapshot order --
    atomic: object = _register("store atomics of UB -> GM copies (atomic.AtomicMode; SetAtomicAdd.md, "
                               "SetAtomicType.md)", persistent=True)
    vector_mask: object = _register("vector mask bits and mask mode (basic.mask.MaskRegister; SetVectorMask.md, "
                                    "SetMaskCount.md)", persistent=True)
    deqscale: object = _register("DEQSCALE of the int -> half conversions (basic.deq; SetDeqScale.md)", persistent=True)
    pad_value: object = _register("pad value of data_copy_pad with is_pad=False (SetPadValue(ISASI).md)",
                                  persistent=True)
    cmp_mask: object = _register("CmpMask register of select and compare_scalar (basic.vec_cmpsel.CmpMaskRegister; "
                                 "SetCmpMask(ISASI).md)", persistent=True)
    # -- per kernel --
    overflow: "str | None" = _register("float overflow mode of the vector unit, CTRL[48] (fusekit.asc.overflow; "
                                       "SetCtrlSpr(ISASI).md 表5); set by the launch, None: the SoC's default")
    hf32: bool = _register("the cube's HF32 mode: float Mmad inputs rounded to HF32 (fusekit.asc.cube.mmad; "
                           "SetHF32Mode.md)", default=False)
    hf32_round_away: bool = _register("HF32 ties away from zero instead of to even (SetHF32TransMode.md)", default=False)
    load3d: object = _register("img2col's registers: FMATRIX, padding, L3D_RPT, L1 boundary (fusekit.asc.cube.load3d; "
                               "SetFmatrix.md, SetLoadDataPaddingValue.md, SetLoadDataRepeat.md, SetLoadDataBoundary.md)")
    gather_mask_remain: "int | None" = _register("elements the last gather_mask kept (GetGatherMaskRemainCount.md)")
    mrg_sort_result: "list | None" = _register("elements per queue the last mrg_sort took (GetMrgSortResult.md)")
    dcache: object = _register("the scalar unit's data cache over GM (fusekit.asc.cache.DataCache; "
                               "DataCacheCleanAndInvalid.md)")
    sys_workspace: object = _register("the system workspace GM address (SetSysWorkspace.md)")
    ia_checks: dict = _register("UB ranges check_local_memory_ia watches: register bit -> range (fusekit.asc.iacheck; "
                                "CheckLocalMemoryIA.md)", factory=dict)
    cross_waits: Counter = _register("cross-core flag waits done per flag id (fusekit.asc.crosscore; "
                                     "CrossCoreWaitFlag.md)", factory=Counter)
    phy_addr_dtypes: dict = _register("UB address -> dtype of the tensor whose get_phy_addr gave it "
                                      "(trans_data_to_5hd's address lists, basic.vec_5hd)", factory=dict)
    state_setters: dict = _register("persistent-state key -> the instruction that last set it and was not undone "
                                    "(fusekit.asc.corestate.set_by)", factory=dict)
    state_inherited: dict = _register("persistent-state key -> what it holds, for each register the kernel started "
                                      "with from launch(initial_state=) not at its reset value and has not written "
                                      "since (fusekit.asc.corestate.written)", factory=dict)
    inherited_reads: list = _register("(key, what, op, file:line) of each instruction that read a register still in "
                                      "state_inherited (fusekit.asc.corestate.read)", factory=list)
    # -- the framework's and the compiler's, per kernel --
    allocator: object = _register("the LocalMemAllocator placing static tensors (fusekit.asc.fwk)")
    tbufs: list = _register("TBufs of the core, detached by TPipe.destroy / reset (fusekit.asc.fwk)", factory=list)
    bufpools: list = _register("TBufPools of the core (fusekit.asc.fwk)", factory=list)
    auto: object = _register("automatic synchronisation of LocalTensorAuto (fusekit.asc.autosync.AutoState)")
    # -- memory --
    kind: CoreKind = field(default=AIV, metadata={"doc": "the core's kind (fusekit.machine.cores)"})
    arenas: dict = field(default_factory=dict, metadata={"doc": "local space -> its bytes on this core"})

    def make_arenas(self, soc) -> None:
        """One poisoned arena per local space of the core's kind, sized for ``soc`` (fresh memory is garbage)."""
        self.arenas = {space: np.full(space.size(soc), POISON, dtype=np.uint8) for space in self.kind.spaces}


PERSISTENT: tuple[str, ...] = tuple(f.name for f in fields(CoreState) if f.metadata.get("persistent"))
