"""pyasc's high-level Matmul (``asc.adv.Matmul``, ``MatmulType``, ``register_matmul``, ``TCubeTiling``) as the basic
cube instructions it issues (AD-API 高阶API/矩阵计算/Matmul; ``docs/cube.md``, "The high-level Matmul").

C = A x B (+ bias) over one core's share of the problem (``single_core_m`` x ``single_core_n``, K of
``single_core_k``, or the shape ``set_tail`` gives), in base blocks of ``base_m`` x ``base_n``, M first
(``iterate_order`` 0, the order pyasc's tests read the blocks in; N first with 1). One block: for each ``base_k`` step, A's and B's
tiles GM -> L1 (ND2NZ, MTE2), L1 -> L0A / L0B (load_data, MTE1; B in ND is transposed into Zn fractals: half /
bfloat16 with ``load_data(if_transpose=True)``, float and int8 with ``load_data_with_transpose``), a Mmad that
starts from 0 (or from the bias row, copied GM -> C1 -> C2, on the first step) and accumulates after; then Fixpipe
L0C -> the output (GM, or the Matmul GM workspace when C is a local tensor), with the cast C's dtype needs. The
stages are ordered by set_flag / wait_flag pairs (MTE2 -> MTE1 -> M -> FIX and back), single-buffered: the Norm
template's data path without its L1 caching (``depth_a1``, ``step_ka`` ... change no value).

Where the kernel runs:

- AIC_ONLY (``@asc.jit(matmul_cube_only=True)``): every call runs on the AIC that makes it.
- MIX (a kernel with ``register_matmul`` and no kernel type, as pyasc types it: MIX_AIC_1_2): the kernel's code
  runs on every core; on the AIC ``register_matmul`` serves the requests of the AI Core's AIVs until each has
  called ``end()`` or finished, then the AIC leaves the kernel (Ascend C's REGISTER_MATMUL_OBJ, "MIX模式...通过消息
  机制驱动AIC运行"); on an AIV each call is a message to its AIC and a wait for the answer. ``get_tensor_c`` into a
  local (UB) tensor goes through the GM workspace on A2 (L0C -> UB does not exist there: Fixpipe（L0C到UB数据搬运）
  .md): the AIC writes the block into the AIV's share of the workspace, the AIV copies it into UB (MTE2). In the
  Trace each message is a set on its sender and a wait naming it on the receiver (``fusekit.hb`` rule 6).

Not simulated yet (a KernelError names the call): A transposed, batch, quantised and sparse matmuls, partial sums,
asynchronous calls (``sync=False``), TSCM outputs.
"""

from __future__ import annotations

import collections
import enum
from dataclasses import dataclass, field

from fusekit.machine import space_named

from .. import cube, dtypes
from ..runtime import GlobalAddress, KernelExit, current
from ..struct import Field, Struct
from ..sync import HardEvent, set_flag, wait_flag
from ..tensor import GlobalTensor, LocalTensor
from ..trace import Pipe, Sync, SyncKind

_PAGE = "高阶API/矩阵计算/Matmul"


class TCubeTiling(Struct):
    """``asc.adv.TCubeTiling`` (Ascend C ``TCubeTiling``): pyasc's fields (python/asc/language/adv/tiling.py)."""

    used_core_num = Field(dtype=dtypes.int32, default=0, name="usedCoreNum")
    m = Field(dtype=dtypes.int32, default=0, name="M")
    n = Field(dtype=dtypes.int32, default=0, name="N")
    k_a = Field(dtype=dtypes.int32, default=0, name="Ka")
    k_b = Field(dtype=dtypes.int32, default=0, name="Kb")
    single_core_m = Field(dtype=dtypes.int32, default=0, name="singleCoreM")
    single_core_n = Field(dtype=dtypes.int32, default=0, name="singleCoreN")
    single_core_k = Field(dtype=dtypes.int32, default=0, name="singleCoreK")
    base_m = Field(dtype=dtypes.int32, default=0, name="baseM")
    base_n = Field(dtype=dtypes.int32, default=0, name="baseN")
    base_k = Field(dtype=dtypes.int32, default=0, name="baseK")
    depth_a1 = Field(dtype=dtypes.int32, default=0, name="depthA1")
    depth_b1 = Field(dtype=dtypes.int32, default=0, name="depthB1")
    step_m = Field(dtype=dtypes.int32, default=0, name="stepM")
    step_n = Field(dtype=dtypes.int32, default=0, name="stepN")
    is_bias = Field(dtype=dtypes.int32, default=0, name="isBias")
    trans_length = Field(dtype=dtypes.int32, default=0, name="transLength")
    iterate_order = Field(dtype=dtypes.int32, default=0, name="iterateOrder")
    share_mode = Field(dtype=dtypes.int32, default=0, name="shareMode")
    share_l1_size = Field(dtype=dtypes.int32, default=0, name="shareL1Size")
    share_l0c_size = Field(dtype=dtypes.int32, default=0, name="shareL0CSize")
    share_ub_size = Field(dtype=dtypes.int32, default=0, name="shareUbSize")
    batch_m = Field(dtype=dtypes.int32, default=0, name="batchM")
    batch_n = Field(dtype=dtypes.int32, default=0, name="batchN")
    single_batch_m = Field(dtype=dtypes.int32, default=0, name="singleBatchM")
    single_batch_n = Field(dtype=dtypes.int32, default=0, name="singleBatchN")
    step_k_a = Field(dtype=dtypes.int32, default=0, name="stepKa")
    step_k_b = Field(dtype=dtypes.int32, default=0, name="stepKb")
    depth_a_l1_cache_ub = Field(dtype=dtypes.int32, default=0, name="depthAL1CacheUB")
    depth_b_l1_cache_ub = Field(dtype=dtypes.int32, default=0, name="depthBL1CacheUB")
    db_l0a = Field(dtype=dtypes.int32, default=0, name="dbL0A")
    db_l0b = Field(dtype=dtypes.int32, default=0, name="dbL0B")
    db_l0c = Field(dtype=dtypes.int32, default=0, name="dbL0C")
    batch_num = Field(dtype=dtypes.int32, default=0, name="BatchNum")


class LayoutMode(enum.IntEnum):
    """pyasc ``asc.adv.LayoutMode``: the batch layouts of BatchMatmul (not simulated)."""

    NONE = 0
    BSNGD = 1
    SBNGD = 2
    BNGS1S2 = 3
    NORMAL = 4


@dataclass
class MatmulType:
    """``asc.adv.MatmulType(position, format, dtype, is_trans=False, layout=LayoutMode.NONE)``: where a matrix is,
    how it is laid out, its dtype."""

    position: object
    format: object
    dtype: object
    is_trans: bool = False
    layout: object = LayoutMode.NONE


class MatmulConfig:
    """``asc.adv.MatmulConfig(...)``: the template's options. They choose how the API caches and schedules, not
    what it computes; fusekit keeps them and runs the Norm data path (module docstring)."""

    def __init__(self, *args, **kwargs):
        self.args, self.options = args, kwargs


@dataclass
class _Request:
    """One message of an AIV to its AIC: what to do, with what, and its answer."""

    what: str
    state: dict
    args: dict
    sent: tuple
    done: bool = False
    answer: object = None
    answered: tuple = ()


class Matmul:
    """``asc.adv.Matmul(a, b, c, bias=None, matmul_config=None, matmul_policy=0)`` (module docstring)."""

    def __init__(self, a: MatmulType, b: MatmulType, c: MatmulType, bias: "MatmulType | None" = None,
                 matmul_config=None, matmul_policy: int = 0):
        core = current("Matmul")
        for name, t in (("a", a), ("b", b), ("c", c)):
            if not isinstance(t, MatmulType):
                raise core.error("Matmul", f"{name} must be an asc.adv.MatmulType, got {type(t).__name__}")
        if a.is_trans:
            raise core.error("Matmul", "a transposed A (MatmulType(..., is_trans=True)) is not simulated yet",
                             kind="unsupported")
        for name, t in (("a", a), ("b", b), ("c", c)):  # the data path reads and writes ND matrices only
            if getattr(t.format, "name", "ND") != "ND":
                raise core.error("Matmul", f"{name} in format {t.format.name} is not simulated yet: the Matmul reads "
                                           "and writes ND matrices (CubeFormat.ND)", kind="unsupported")
        self.types = {"a": a, "b": b, "c": c, "bias": bias}
        self.core, self.registered = core, False
        self.state = {"tiling": None, "bias": None, "tail": None, "org": None}

    # -- set-up (each is a message in a mix kernel) --
    def init(self, tiling: TCubeTiling, *args) -> None:
        """``Init(tiling)``: the tiling the calls work with."""
        self._set("tiling", tiling)

    def set_tensor_a(self, tensor, transpose: bool = False) -> None:
        """``SetTensorA(gm, isTransposeA)``: A in GM (ND)."""
        if transpose:
            raise current("set_tensor_a").error("set_tensor_a", "a transposed A is not simulated yet", kind="unsupported")
        self._set("a", tensor)

    def set_tensor_b(self, tensor, transpose: bool = False) -> None:
        """``SetTensorB(gm, isTransposeB)``: B in GM, K x N ND, or N x K with ``transpose``."""
        self._set("b", tensor)
        self._set("b_trans", bool(transpose) or bool(self.types["b"].is_trans))

    def set_bias(self, tensor) -> None:
        """``SetBias(gm)``: a bias row of N (float or int32), added once."""
        self._set("bias", tensor)

    def disable_bias(self) -> None:
        """``DisableBias``."""
        self._set("bias", None)

    def set_tail(self, tail_m: int = -1, tail_n: int = -1, tail_k: int = -1) -> None:
        """``SetTail(tailM, tailN, tailK)``: this core's shape when it is smaller than the tiling's single-core one
        (-1: keep it)."""
        self._set("tail", (int(tail_m), int(tail_n), int(tail_k)))

    def set_org_shape(self, org_m: int, org_n: int, org_ka: int, org_kb: "int | None" = None,
                      org_kc: int = 0) -> None:
        """``SetOrgShape(orgM, orgN, orgKa[, orgKb, orgKc])``: the whole matrices' M, N and K (A's Ka, B's Kb), the
        row strides of A, B and C in GM, in place of the tiling's M, N, Ka, Kb (Matmul-Kernel侧接口/SetOrgShape.md).
        ``org_kc`` (C's row length when it differs from N) is not simulated: KernelError unless 0 or N."""
        if org_kc and int(org_kc) != int(org_n):
            raise current("set_org_shape").error("set_org_shape", f"orgKc = {org_kc} (a C row of other than orgN = "
                                                                  f"{org_n} elements) is not simulated yet",
                                                 kind="unsupported")
        self._set("org", (int(org_m), int(org_n), int(org_ka), int(org_ka if org_kb is None else org_kb)))

    def set_single_shape(self, single_m: int, single_n: int, single_k: int) -> None:
        """``SetSingleShape``: this core's shape."""
        self.set_tail(single_m, single_n, single_k)

    def set_local_workspace(self, tensor) -> None:
        """``SetLocalWorkspace(ubTensor)`` (Matmul-Kernel侧接口/SetLocalWorkspace.md): UB the API may stage data in.
        fusekit's data path turns ND into Nz on the way into L1 (DataCopy ND2NZ) and never stages in UB: kept, unused."""
        self._set("local_workspace", tensor)

    def _set(self, key: str, value) -> None:
        self.state[key] = value

    # -- computing --
    def iterate_all(self, tensor, en_atomic: int = 0, sync: bool = True, en_sequential_write=None,
                    wait_iterate_all=None, fake_msg=None) -> None:
        """``IterateAll(gm)``: every block of this core's share into ``tensor`` (GM, ND)."""
        self._sync_only("iterate_all", sync, en_atomic)
        if not isinstance(tensor, GlobalTensor):
            raise current("iterate_all").error("iterate_all", "iterate_all into a local tensor (TSCM) is not "
                                                              "simulated yet: pass a GlobalTensor", kind="unsupported")
        self._run("iterate_all", tensor=tensor)

    def iterate(self, en_partial_sum: bool = False, sync: bool = True, local_c_matrix=None) -> "Iterator":
        """``Iterate()``: ``with matmul.iterate() as count:`` runs its body once per block (``count`` 0, 1, ...), the
        block computed first (pyasc builds the same while loop: ``MatmulIterator``)."""
        self._sync_only("iterate", sync, 0)
        if en_partial_sum:
            raise current("iterate").error("iterate", "en_partial_sum is not simulated yet", kind="unsupported")
        return Iterator(self)

    def iterate_next(self, sync: bool = True) -> bool:
        """C++'s ``Iterate<sync>()`` (Matmul-Kernel侧接口/Iterate.md): compute the next base block of this core's
        share (into L0C); False when every block was computed. ``with matmul.iterate()`` is pyasc's loop over it."""
        self._sync_only("iterate", sync, 0)
        return bool(self._run("iterate"))

    def get_tensor_c(self, tensor=None, en_atomic: int = 0, en_sequential_write: bool = False, sync: bool = True,
                     **kwargs):
        """``GetTensorC(dst)``: the block the last ``iterate`` computed, into ``tensor``: a local tensor (rows of
        base_n, ``en_sequential_write``) or a GlobalTensor (at the block's place in C)."""
        self._sync_only("get_tensor_c", sync, en_atomic)
        if tensor is None:
            raise current("get_tensor_c").error("get_tensor_c", "get_tensor_c() returning a tensor is not "
                                                                "simulated yet: pass the destination", kind="unsupported")
        self._run("get_tensor_c", tensor=tensor, sequential=bool(en_sequential_write))

    def end(self) -> None:
        """``End()``: this Matmul is done (in a mix kernel, the AIC's server may stop serving this AIV)."""
        self._run("end")

    def _sync_only(self, op: str, sync, en_atomic) -> None:
        if not sync or en_atomic:
            raise current(op).error(op, "asynchronous calls (sync=False) and atomic outputs are not simulated yet",
                                    kind="unsupported")

    def _run(self, what: str, **args):
        """Do ``what`` here (an AIC) or ask this AI Core's AIC (an AIV of a mix kernel)."""
        core = current(what)
        if not self.registered:
            raise core.error(what, f"matmul.{what} before asc.adv.register_matmul(pipe, workspace, matmul, tiling) "
                                   f"({_PAGE}: REGISTER_MATMUL_OBJ comes first)")
        if core.kind.name == "AIC":
            return _Engine.of(core, self).do(what, dict(self.state), args)
        return _ask(core, self, what, args)


class Iterator:
    """The block loop of ``with matmul.iterate() as count:`` (``fusekit.asc.loops`` runs the body once per block)."""

    def __init__(self, matmul: Matmul):
        self.matmul = matmul

    def blocks(self):
        count = 0
        while self.matmul._run("iterate"):
            yield dtypes.number(count, dtypes.int32)
            count += 1

    def __enter__(self):
        raise current("iterate").error("iterate", "with matmul.iterate() as count: runs through fusekit's jit, "
                                                  "which turns it into a loop; call it in an @asc.jit kernel")

    def __exit__(self, *exc) -> None:
        return None


def register_matmul(pipe, workspace, matmul: Matmul, tiling: "TCubeTiling | None" = None) -> None:
    """``asc.adv.register_matmul(pipe, workspace, matmul, tiling=None)`` (REGISTER_MATMUL_OBJ): ties ``matmul`` to the
    TPipe and the GM workspace (16 MiB in pyasc's tutorials); with ``tiling`` it is also ``matmul.init(tiling)``. On
    the AIC of a mix kernel this serves the AI Core's AIVs and then leaves the kernel (module docstring).

    Raises:
        KernelError: ``matmul`` is not an asc.adv.Matmul, or ``workspace`` is not a GM address.
    """
    core, op = current("register_matmul"), "register_matmul"
    if not isinstance(matmul, Matmul):
        raise core.error(op, f"expected an asc.adv.Matmul, got {type(matmul).__name__}")
    if not isinstance(workspace, GlobalAddress):
        raise core.error(op, f"workspace must be a GM address (a kernel argument), got {type(workspace).__name__}")
    matmul.registered, matmul.workspace, matmul.pipe = True, workspace, pipe
    core.launch_flags.setdefault("workspaces", set()).add(workspace.gm.name)  # scratch, not an output
    if tiling is not None:
        matmul.init(tiling)
    core.record(op, Pipe.S)
    if core.kind.name == "AIC" and core.place.aivs and core.place.aics:
        _serve(core, matmul)
        raise KernelExit


# ---- messages between the AIVs and their AIC -----------------------------------------------------------------

def _mailbox(core) -> collections.deque:
    return core.launch_flags.setdefault(("matmul", core.place.ai_core), collections.deque())


def _ask(core, matmul: Matmul, what: str, args: dict):
    """Send ``what`` to this AI Core's AIC and wait for the answer (an AIV of a mix kernel)."""
    core.record(f"matmul.{what}", Pipe.S, sync=Sync(SyncKind.SET, Pipe.S, Pipe.S, ("cross_core", "matmul")))
    request = _Request(what, dict(matmul.state) | {"workspace": matmul.workspace, "aiv": core.place.block}, args,
                       (core.idx, len(core.instrs) - 1))
    _mailbox(core).append(request)
    if what == "end":
        return None
    core.wait_hook(lambda: request.done, f"its AIC never answered matmul.{what}")
    core.record(f"matmul.{what}", Pipe.S, sync=Sync(SyncKind.WAIT, Pipe.S, Pipe.S,
                                                    ("inter_block", ("matmul", what), (request.answered,))))
    if what == "get_tensor_c" and isinstance(args["tensor"], LocalTensor):
        _workspace_to_local(core, request.answer, args["tensor"])
    return request.answer


def _serve(core, proto: Matmul) -> None:
    """The AIC's server: answer the AI Core's AIVs until each has ended or finished."""
    box = _mailbox(core)
    aivs = [core.place.ai_core * core.place.aivs + sub for sub in range(core.place.aivs)]  # their Trace indices
    ended: set[int] = set()
    flags = core.launch_flags

    def pending() -> bool:
        return bool(box) or all(i in ended or flags.get(("finished", i)) for i in aivs)

    while True:
        core.wait_hook(pending, "an AIV that uses this AI Core's Matmul never ended it")
        if not box:
            return
        request = box.popleft()
        core.record(f"matmul.{request.what}", Pipe.S,
                    sync=Sync(SyncKind.WAIT, Pipe.S, Pipe.S, ("inter_block", ("matmul", request.what), (request.sent,))))
        if request.what == "end":
            ended.add(request.sent[0])
            continue
        engine = _Engine.of(core, proto, key=request.state["aiv"])
        engine.workspace = request.state["workspace"]
        request.answer = engine.do(request.what, request.state, request.args, for_aiv=True)
        core.record(f"matmul.{request.what}", Pipe.FIX, sync=Sync(SyncKind.SET, Pipe.FIX, Pipe.FIX,
                                                                  ("cross_core", "matmul")))
        request.answered, request.done = (core.idx, len(core.instrs) - 1), True


def _workspace_to_local(core, block: "tuple | None", tensor: LocalTensor) -> None:
    """An AIV's copy of the block its AIC wrote into the workspace (GM -> UB, MTE2), as ``get_tensor_c`` into UB."""
    if block is None:
        raise core.error("get_tensor_c", "get_tensor_c before an iterate that computed a block")
    source, rows, cols = block
    from ..datamove import data_copy

    for event in (HardEvent.V_MTE2, HardEvent.MTE3_MTE2):  # the UB tensor's earlier vector work and copy-out first
        set_flag(event, 0)
        wait_flag(event, 0)
    data_copy(tensor, source, rows * cols)
    # the scalar unit waits for the copy: the vector code after it reads the block, and the next message lets the AIC
    # overwrite the workspace (a wait on S orders everything after it: fusekit.hb rule 4)
    set_flag(HardEvent.MTE2_S, 0)
    wait_flag(HardEvent.MTE2_S, 0)


# ---- the AIC's part: the basic instructions ---------------------------------------------------------------------

@dataclass
class _Engine:
    """One Matmul's basic-instruction data path on an AIC, with its buffers and its position in the block loop."""

    core: object
    matmul: Matmul
    buffers: dict  # name -> LocalTensor: the AIC's Matmul buffers, shared by the engines of its AIVs
    blocks: "collections.deque | None" = None
    last: "tuple | None" = None
    workspace: "GlobalAddress | None" = None
    pending: object = None  # the block an AIV asked for, in the workspace: (tensor, rows, columns)
    flags: collections.Counter = field(default_factory=collections.Counter)  # event -> sets not waited for yet

    @classmethod
    def of(cls, core, matmul: Matmul, key=None) -> "_Engine":
        """The engine of ``matmul`` on ``core`` (per AIV it serves, ``key``); every call drains its flags, so the
        engines of one AIC can share its buffers."""
        engines = core.launch_flags.setdefault(("matmul_engines", core.idx), {})
        buffers = core.launch_flags.setdefault(("matmul_buffers", core.idx), {})
        return engines.setdefault((id(matmul), key), cls(core, matmul, buffers))

    def do(self, what: str, state: dict, args: dict, for_aiv: bool = False):
        """Run one call; every flag it sets is waited for before it returns, so calls chain in any order."""
        try:
            return self._do(what, state, args, for_aiv)
        finally:
            for event in [e for e, n in self.flags.items() if n]:
                for _ in range(self.flags[event]):
                    self._await(event)

    def _signal(self, event: HardEvent) -> None:
        set_flag(event, 0)
        self.flags[event] += 1

    def _await(self, event: HardEvent) -> None:
        """Wait for ``event`` when a set of it is outstanding (the stage it orders has run before)."""
        if self.flags[event]:
            wait_flag(event, 0)
            self.flags[event] -= 1

    def _do(self, what: str, state: dict, args: dict, for_aiv: bool):
        if what == "end":
            return None
        shape = self._shape(state)
        if what == "iterate_all":
            for block in self._all_blocks(shape):
                self._compute(state, shape, block, args["tensor"], direct=True)
            return None
        if what == "iterate":
            if self.blocks is None:
                self.blocks = collections.deque(self._all_blocks(shape))
            if not self.blocks:
                self.blocks = None
                return False
            self.last = self.blocks.popleft()
            if for_aiv:  # the AIC computes now and leaves the block in the AIV's share of the workspace
                self.pending = self._compute(state, shape, self.last, None, direct=False, aiv=state["aiv"])
            return True
        if what == "get_tensor_c":
            if self.last is None:
                raise self.core.error("get_tensor_c", "get_tensor_c before an iterate that computed a block")
            if for_aiv:
                return self.pending
            self._compute(state, shape, self.last, args["tensor"], direct=True, sequential=args["sequential"])
            return None
        raise self.core.error(what, f"matmul.{what} is not simulated", kind="unsupported")

    def _shape(self, state: dict) -> dict:
        tiling = state["tiling"]
        if tiling is None:
            raise self.core.error("matmul", "no tiling: pass it to register_matmul(..., tiling) or call init(tiling)")
        t = {name: int(object.__getattribute__(tiling, name)) for name in TCubeTiling.struct_fields}
        if state.get("org"):  # set_org_shape: the matrices' strides in GM
            t["m"], t["n"], t["k_a"], t["k_b"] = state["org"]
        tail = state["tail"] or (-1, -1, -1)
        t["tm"] = tail[0] if tail[0] > 0 else t["single_core_m"]
        t["tn"] = tail[1] if tail[1] > 0 else t["single_core_n"]
        t["tk"] = tail[2] if tail[2] > 0 else t["single_core_k"]
        for name in ("base_m", "base_n", "base_k", "tm", "tn", "tk"):
            if t[name] <= 0:
                raise self.core.error("matmul", f"TCubeTiling gives {name} = {t[name]}: the tiling is not filled in "
                                                "(host.MultiCoreMatmulTiling.get_tiling, or the fields by hand)")
        return t

    @staticmethod
    def _all_blocks(t: dict) -> list:
        """(m0, n0) of every base block of the core's share: M first (iterate_order 0, ORDER_M), or N first (1)."""
        ms, ns = range(0, t["tm"], t["base_m"]), range(0, t["tn"], t["base_n"])
        if t["iterate_order"] == 1:
            return [(m0, n0) for m0 in ms for n0 in ns]
        return [(m0, n0) for n0 in ns for m0 in ms]

    def _buffer(self, name: str, position, dtype, elements: int) -> LocalTensor:
        """The Matmul's own buffer ``name`` (carved once from the registered TPipe's memory of ``position``)."""
        have = self.buffers.get(name)
        if have is not None and have.length >= elements and have.dtype is dtype:
            return have
        pipe = self.matmul.pipe
        space = space_named({"A1": "L1", "B1": "L1", "C1": "L1", "A2": "L0A", "B2": "L0B", "CO1": "L0C",
                             "C2": "BT"}[position.name])
        nbytes = -(-elements * dtype.sizeof() // space.alignment) * space.alignment
        addr = pipe.take(self.core, "register_matmul", space, f"Matmul {name}", nbytes)
        self.buffers[name] = LocalTensor(dtype, position, addr, elements)
        return self.buffers[name]

    def _compute(self, state: dict, t: dict, block: tuple, out, direct: bool, sequential: bool = False,
                 aiv: int = 0):
        """One base block: K in base_k steps into L0C, then Fixpipe into ``out`` (GM C, or the workspace)."""
        from ..fwk import TPosition

        m0, n0 = block
        bm, bn = min(t["base_m"], t["tm"] - m0), min(t["base_n"], t["tn"] - n0)
        a, b, bias = state.get("a"), state.get("b"), state.get("bias")
        if a is None or b is None:
            raise self.core.error("matmul", "set_tensor_a and set_tensor_b before computing")
        ta, tb = a.dtype, b.dtype
        size = ta.sizeof()
        c0 = 32 // size
        acc = dtypes.int32 if size == 1 else dtypes.float32
        bm16, bn16 = -(-bm // 16) * 16, -(-bn // 16) * 16
        k_unit = 32 if size == 1 else 16  # B's Zn fractals in k: whole squares for the transposing loads
        bk_max = -(-t["base_k"] // k_unit) * k_unit
        a1 = self._buffer("A1", TPosition.A1, ta, bm16 * bk_max)
        b1 = self._buffer("B1", TPosition.B1, tb, bn16 * bk_max)
        a2 = self._buffer("A2", TPosition.A2, ta, bm16 * bk_max)
        b2 = self._buffer("B2", TPosition.B2, tb, bn16 * bk_max)
        c1 = self._buffer("CO1", TPosition.CO1, acc, bm16 * bn16)
        if size == 1 and not state.get("b_trans") and bn16 % 32:
            raise self.core.error("matmul", f"an int8 B in ND with a block of {bn} columns: its 32 x 32 transposing "
                                            "loads need multiples of 32 (base_n and the tail); pass B transposed",
                                  kind="unsupported")
        bt = self._bias(bias, n0, bn16, acc) if bias is not None else None
        first = True
        # m = 1 turns Mmad into GEMV, which reads A as one contiguous row (Mmad计算关键特性说明/GEMV.md), while A sits
        # in L0A as Zz fractals: a one-row block computes two rows (the second is the fractal's zero padding) and
        # the copy-out writes bm of them
        mm = max(bm, 2)
        for k0 in range(0, t["tk"], t["base_k"]):
            bk = min(t["base_k"], t["tk"] - k0)
            bkp = -(-bk // k_unit) * k_unit
            self._copy_in(a, b, state, t, m0, n0, k0, bm, bn, bk, a1, b1, bm16, bn16, bkp)
            self._load(a1, b1, a2, b2, bm16, bn16, bk, bkp, size, c0, state)
            self._await(HardEvent.MTE1_M)
            if first:
                self._await(HardEvent.FIX_M)  # the previous block's Fixpipe has read L0C
            if first and bt is not None:
                cube.mmad(c1, a2, b2, bt, cube.MmadParams(mm, bn, bk, 0, False, False))
            else:
                cube.mmad(c1, a2, b2, cube.MmadParams(mm, bn, bk, 0, False, first))
            self._signal(HardEvent.M_MTE1)  # L0A / L0B may be loaded again
            first = False
        self._signal(HardEvent.M_FIX)
        self._await(HardEvent.M_FIX)
        result = self._copy_out(c1, out, state, t, m0, n0, bm, bn, bm16, direct, sequential, aiv)
        self._signal(HardEvent.FIX_M)  # L0C may be written again
        return result

    def _copy_in(self, a, b, state, t, m0, n0, k0, bm, bn, bk, a1, b1, bm16, bn16, bkp) -> None:
        """A's and B's tiles GM -> L1 (ND2NZ, MTE2), after the previous step's loads read L1."""
        self._await(HardEvent.MTE1_MTE2)  # the previous step's loads have read L1
        ka, n = t["k_a"], t["n"]
        from ..datamove import data_copy

        data_copy(a1, a[m0 * ka + k0:], cube.Nd2NzParams(1, bm, bk, 0, ka, bm16, 1, 0))
        size = b.dtype.sizeof()
        if state.get("b_trans"):  # B^T (N x K): ND2NZ lands B in Zn fractals directly
            data_copy(b1, b[n0 * t["k_b"] + k0:], cube.Nd2NzParams(1, bn, bk, 0, t["k_b"], bn16, 1, 0))
        elif size == 4:  # float: slabs of 16 rows, so that two 16 x 8 fractals of a slab make a square
            slabs = bkp // 16
            rows = [min(16, bk - 16 * s) for s in range(slabs)]
            for s, r in enumerate(rows):
                if r > 0:
                    data_copy(b1[s * 16 * bn16:], b[(k0 + 16 * s) * n + n0:], cube.Nd2NzParams(1, r, bn, 0, n, 16, 1, 0))
        else:  # half, bfloat16, int8: K rows in column blocks of C0 (int8: rows padded to 32, pairs of fractals)
            data_copy(b1, b[k0 * n + n0:], cube.Nd2NzParams(1, bk, bn, 0, n, bkp, 1, 0))
        self._signal(HardEvent.MTE2_MTE1)

    def _load(self, a1, b1, a2, b2, bm16, bn16, bk, bkp, size, c0, state) -> None:
        """L1 -> L0A (Zz) and L0B (Zn), after the previous step's Mmad read L0A / L0B. A's Zz rows of fractals hold
        the Mmad's k (ceil(bk / C0) fractals: Zz offsets depend on it); B's Zn rows may run past it (whole squares)."""
        self._await(HardEvent.MTE2_MTE1)
        self._await(HardEvent.M_MTE1)  # the previous step's Mmad has read L0A / L0B
        fe = 512 // size
        k1, n1, m1s = bkp // c0, bn16 // 16, bm16 // 16
        k1a = -(-bk // c0)
        for m1 in range(m1s):  # A: Nz (k blocks of bm16 rows) -> Zz, one row of fractals per load
            cube.load_data(a2[m1 * k1a * fe:], a1[m1 * fe:], cube.LoadData2DParams(0, k1a, m1s, 0, 0, False, 0))
        if state.get("b_trans"):
            cube.load_data(b2, b1, cube.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
        elif size == 2:  # K x N Nz fractals transposed one by one into Zn, a row of k fractals per load
            for kk in range(k1):
                cube.load_data(b2[kk * n1 * fe:], b1[kk * fe:], cube.LoadData2DParams(0, n1, k1, 0, 0, True, 0))
        elif size == 4:  # a 16-row slab's 16 x 16 squares, transposed, split into the k halves (Zn, k0 = 8)
            for s in range(bkp // 16):
                cube.load_data_with_transpose(b2[2 * s * n1 * fe:], b1[s * 16 * bn16:],
                                              cube.LoadData2dTransposeParams(0, n1, 1, 0, n1 - 1, 0))
        else:  # int8: 32 x 32 squares (two fractals one above the other), transposed into two Zn fractals
            for kk in range(bkp // 32):
                cube.load_data_with_transpose(b2[kk * n1 * fe:], b1[kk * 2 * fe:],
                                              cube.LoadData2dTransposeParams(0, n1 // 2, bkp // 32, 1, 0, 0))
        self._signal(HardEvent.MTE1_MTE2)
        self._signal(HardEvent.MTE1_M)

    def _bias(self, bias, n0: int, bn16: int, acc) -> LocalTensor:
        """The bias row GM -> C1 (MTE2) -> C2 (MTE1), for the block's first Mmad."""
        from ..datamove import DataCopyParams, data_copy
        from ..fwk import TPosition

        c1 = self._buffer("C1", TPosition.C1, bias.dtype, bn16)
        c2 = self._buffer("C2", TPosition.C2, acc, bn16)
        data_copy(c1, bias[n0:], bn16)
        set_flag(HardEvent.MTE2_MTE1, 1)
        wait_flag(HardEvent.MTE2_MTE1, 1)
        data_copy(c2, c1, DataCopyParams(1, bn16 * 4 // 64, 0, 0))
        set_flag(HardEvent.MTE1_M, 1)
        wait_flag(HardEvent.MTE1_M, 1)
        return c2

    def _copy_out(self, c1, out, state, t, m0, n0, bm, bn, bm16, direct, sequential, aiv):
        """Fixpipe L0C -> C in GM (at the block's place, or its rows one after another), or -> the AIV's share of
        the GM workspace; returns (the workspace tensor, rows, columns) for the AIV to copy."""
        ctype = self.matmul.types["c"].dtype
        ctype = dtypes.as_dtype(ctype)
        mode = {"float32": cube.QuantModes.NoQuant, "int32": cube.QuantModes.NoQuant,
                "float16": cube.QuantModes.F322F16, "bfloat16": cube.QuantModes.F322BF16}.get(ctype.name)
        if mode is None:
            raise self.core.error("matmul", f"a C of {ctype.name} (quantised output) is not simulated yet",
                                  kind="unsupported")
        if direct and isinstance(out, GlobalTensor) and not sequential:
            cube.fixpipe(out[m0 * t["n"] + n0:], c1, cube.FixpipeParamsV220(bn, bm, bm16, t["n"], mode))
            return None
        if direct and isinstance(out, GlobalTensor):
            cube.fixpipe(out, c1, cube.FixpipeParamsV220(bn, bm, bm16, bn, mode))
            return None
        if direct:
            raise self.core.error("get_tensor_c", "get_tensor_c into a local tensor on an AIC (TSCM) is not "
                                                  "simulated yet", kind="unsupported")
        share = GlobalTensor()  # the AIV's share of the workspace, one base block of C
        view = self.workspace.gm.viewed_as(ctype)
        share.set_global_buffer(GlobalAddress(view, aiv * t["base_m"] * t["base_n"]))
        cube.fixpipe(share, c1, cube.FixpipeParamsV220(bn, bm, bm16, bn, mode))
        return share, bm, bn


