"""The Trace: every instruction a simulated kernel executed, per core.

The Trace is what the analyses read (``docs/design.md``): the sanitizer builds happens-before
from the sync records, the timing model schedules the instructions on their pipes. So an
instruction records only facts: which pipe issued it, which bytes it read, wrote or left
undefined, which sync it performs, and where in the kernel source it came from.

Sync records follow the Ascend C framework (AD-G TPipe-TQue框架编程原理.md, AD-API 核内同步):
``enque`` is a set and ``deque`` a wait from the queue's producer pipe to its consumer pipe;
``free_tensor`` is a set and ``alloc_tensor`` a wait from the consumer back to the producer
(the buffer may be refilled once its readers are done); ``set_flag``/``wait_flag`` are the
explicit form; ``pipe_barrier`` orders one pipe; ``sync_all`` orders all cores.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Iterator

from fusekit.machine import Mem, MemSpace, Pipe, PipeSpec  # noqa: F401 - Mem, Pipe: re-exported, as before


# The pipes and memory spaces are the machine's tables (``fusekit.machine``); the Trace names their rows.
# Access and Sync are made for almost every simulated instruction: their __init__ sets the slots directly
# (a frozen dataclass's generated __init__ goes through object.__setattr__, twice as slow); fields,
# defaults, equality, hashing, repr and immutability are the dataclass's own.


@dataclass(frozen=True, slots=True, init=False)
class Access:
    """A byte range ``[start, stop)`` of one memory space: a GM buffer (by kernel argument name) or a local space's
    arena (``buffer`` is the space's name, ``"UB"``).

    ``tensor`` names what the kernel called it (``"x1"``, ``"q_x1[1]"``) for messages.
    ``atomic``: for a GM write made while store atomics are on (``fusekit.asc.atomic``), the
    operation and dtype (``"add.float32"``); two such writes of the same kind need no ordering.
    ``l2``: for a GM access, the L2 cache hint of the GlobalTensor it went through
    (``set_l2_cache_hint``), as ``"<CacheMode name>/<CacheRwMode name>"``; "" = the default
    (CACHE_MODE_NORMAL). Only the timing model reads it.
    """

    mem: MemSpace
    buffer: str
    start: int
    stop: int
    tensor: str = ""
    atomic: str = ""
    l2: str = ""

    def __init__(self, mem: MemSpace, buffer: str, start: int, stop: int, tensor: str = "", atomic: str = "",
                 l2: str = ""):
        _A_MEM(self, mem)
        _A_BUFFER(self, buffer)
        _A_START(self, start)
        _A_STOP(self, stop)
        _A_TENSOR(self, tensor)
        _A_ATOMIC(self, atomic)
        _A_L2(self, l2)

    @property
    def nbytes(self) -> int:
        return self.stop - self.start


_A_MEM, _A_BUFFER, _A_START, _A_STOP, _A_TENSOR, _A_ATOMIC, _A_L2 = (
    Access.__dict__[name].__set__ for name in ("mem", "buffer", "start", "stop", "tensor", "atomic", "l2"))


class SyncKind(enum.Enum):
    SET = "set"
    WAIT = "wait"
    BARRIER = "barrier"
    ALL = "sync_all"


@dataclass(frozen=True, slots=True, init=False)
class Sync:
    """One synchronisation: a set or wait of ``event`` from pipe ``src`` to pipe ``dst``.

    ``event`` identifies the flag: ``("flag", "MTE2_V", id)`` for ``set_flag``/``wait_flag``;
    ``("data", queue, slot)`` for enque/deque; ``("free", queue, slot)`` for free/alloc.
    A barrier has ``src == dst``; ``sync_all`` has no event.
    """

    kind: SyncKind
    src: PipeSpec
    dst: PipeSpec
    event: tuple = ()

    def __init__(self, kind: SyncKind, src: PipeSpec, dst: PipeSpec, event: tuple = ()):
        _S_KIND(self, kind)
        _S_SRC(self, src)
        _S_DST(self, dst)
        _S_EVENT(self, event)


_S_KIND, _S_SRC, _S_DST, _S_EVENT = (Sync.__dict__[name].__set__ for name in ("kind", "src", "dst", "event"))


@dataclass(slots=True)
class Instr:
    """One executed instruction.

    Attributes:
        core: block index of the core that ran it.
        seq: position in that core's program order.
        op: pyasc API name (``"data_copy"``, ``"add"``, ``"enque"``, ...).
        pipe: pipe that executes it.
        reads / writes: byte ranges read and written.
        undefined: byte ranges the instruction leaves undefined (``data_copy_pad`` pad bytes with
            ``is_pad=False``); they count as written-with-garbage, not as initialised.
        sync: the synchronisation it performs, if any.
        count: elements processed (vector ops, copies); 0 for sync instructions.
        nbytes: bytes moved or processed.
        dtype: element type name, "" when not applicable.
        file / line: where the kernel source issued it.
        repeats: vector repeats issued (one repeat = one 256 B beat, AD-API 高维切分.md); 0 when
            not a vector instruction.
        cost: the instruction's cost class for the timing model (a key of the SoC params'
            vector cost table, e.g. ``"binary"``, ``"transcendental"``); "" = the default class.
        lines: GM bytes whose 64 B data-cache lines the instruction cleans and invalidates
            (``data_cache_clean_and_invalid``; ``fusekit.asc.cache``); not reads or writes.
    """

    core: int
    seq: int
    op: str
    pipe: PipeSpec
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    undefined: tuple[Access, ...] = ()
    sync: Sync | None = None
    count: int = 0
    nbytes: int = 0
    dtype: str = ""
    file: str = ""
    line: int = 0
    repeats: int = 0
    cost: str = ""
    lines: tuple[Access, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class GmBuffer:
    """A kernel argument that became a global buffer: name, element dtype name, size in bytes."""

    name: str
    dtype: str
    nbytes: int


@dataclass
class Trace:
    """Instructions of one launch, ``cores[i]`` in program order of core ``i`` (block ``i``; in a mix launch the AIVs
    come first, then the AICs: :meth:`kind_of`, :meth:`block_of`).

    Attributes:
        kernel: kernel function name.
        soc: SoC name.
        block_dim: the launch's block_dim: cores launched, or logical AI Cores of a mix launch (each an AIC and
            ``ratio`` AIVs: ``len(cores)`` counts them all).
        ub_bytes: UB size of each core.
        gm: global buffers by argument name.
        cores: per-core instruction lists.
        stand_ins: cores that were not simulated -> the core whose instructions stand in for
            theirs (a launch with ``sample_cores``: every core but the last does the same work).
        auto_sync: the kernel is built with automatic synchronisation (``launch(auto_sync=)``):
            the compiler orders dependent PIPE_V instructions (``fusekit.hb``, rule 2).
        overflows: instructions whose float result left the dtype's range (inf or NaN) although their
            operands were finite. fusekit watches the ReduceSum count and split forms (a float16 row sum
            overflows long before its elements do); an elementwise overflow shows in the output itself.
        end_state: per core, the registers the NPU keeps for the next kernel as the kernel left them, and
            the calls that set them (``fusekit.asc.corestate.EndState``); a later launch may start from
            them (``launch(initial_state=)``).
        executor: which executor ran the launch: ``"lockstep"`` (the default: cores that follow one instruction
            stream run as one group, ``fusekit.asc.lockstep``) or ``"reference"`` (one core after another in block
            order). Not compared: both give the same Trace. ``"replay"``: a generated operator's later call of one
            input signature, answered by its hardware model with the first call's Trace (``fusekit.gen.replay``).
        core_kind: the kind of the launch's cores (``"AIV"``; ``"AIC"`` for a kernel of kernel type AIC_ONLY,
            ``fusekit.machine.cores``); the first kind of a mix launch.
        kinds: per core, its kind, in a mix launch (empty otherwise: every core is ``core_kind``).
        workspaces: GM buffers the kernel gave an API as its scratch (the Matmul's workspace): not outputs, so the
            sanitizer does not ask that all their bytes be written.
        fallback: why the launch ran on the reference executor ("" when it did not), e.g.
            ``"FUSEKIT_EXECUTOR=reference"`` or the instruction the lockstep executor does not run.
    """

    kernel: str
    soc: str
    block_dim: int
    ub_bytes: int
    gm: dict[str, GmBuffer] = field(default_factory=dict)
    cores: list[list[Instr]] = field(default_factory=list)
    stand_ins: dict[int, int] = field(default_factory=dict)
    auto_sync: bool = True
    overflows: list[Instr] = field(default_factory=list)
    end_state: list = field(default_factory=list)
    executor: str = field(default="reference", compare=False)
    fallback: str = field(default="", compare=False)
    core_kind: str = "AIV"
    kinds: tuple[str, ...] = ()
    workspaces: frozenset = frozenset()

    def kind_of(self, core: int) -> str:
        """The kind of core ``core`` (``"AIV"``, ``"AIC"``)."""
        return self.kinds[core] if self.kinds else self.core_kind

    def block_of(self, core: int) -> int:
        """Core ``core``'s GetBlockIdx: its position among the cores of its kind (AIV_ONLY, AIC_ONLY: ``core``)."""
        kind = self.kind_of(core)
        return sum(1 for k in self.kinds[:core] if k == kind) if self.kinds else core

    def core_label(self, core: int) -> str:
        """How msprof and the messages name core ``core``: ``aiv(3)``, ``aic(3)`` (its kind and GetBlockIdx,
        ``fusekit.machine.cores``)."""
        return f"{self.kind_of(core).lower()}({self.block_of(core)})"

    def cores_later(self, build: Callable[[], list[list[Instr]]]) -> None:
        """Have :attr:`cores` made by ``build()`` when it is first read (the lockstep executor builds every core's
        lists from its groups' templates: a launch whose Trace nobody reads per core never pays for them)."""
        self.__dict__["_cores"], self.__dict__["_build"] = None, build

    def relabelled(self, executor: str) -> "Trace":
        """This Trace as ``executor`` gave it (``"replay"``: the same instructions answered by a model), sharing its
        per-core lists, which are built once, on the first read of either."""
        other = object.__new__(Trace)
        other.__dict__.update(self.__dict__)
        other.executor, other.fallback = executor, ""
        if self.__dict__.get("_build") is not None:
            other.__dict__["_build"] = lambda: self.cores
        return other

    def __getstate__(self) -> dict:  # pickle and copy take the lists, built, not the function that builds them
        state = dict(self.__dict__)
        state["_cores"], state["_build"] = self.cores, None
        return state

    def __iter__(self) -> Iterator[Instr]:
        for core in self.cores:
            yield from core

    def __len__(self) -> int:
        return sum(len(core) for core in self.cores)

    def ops(self) -> dict[str, int]:
        """Instruction counts by op name (for summaries and tests)."""
        counts: dict[str, int] = {}
        for instr in self:
            counts[instr.op] = counts.get(instr.op, 0) + 1
        return counts


def _read_cores(trace: Trace) -> list[list[Instr]]:
    build = trace.__dict__.get("_build")
    if build is not None:  # first read of a lockstep Trace: make the lists now (Trace.cores_later)
        trace.__dict__["_cores"], trace.__dict__["_build"] = build(), None
    return trace.__dict__["_cores"]


def _write_cores(trace: Trace, cores: list[list[Instr]]) -> None:
    trace.__dict__["_cores"], trace.__dict__["_build"] = cores, None


# ``cores`` stays a dataclass field (init, repr, ==, fields() see it) held by a property, so that its lists can be
# made on first read (Trace.cores_later)
Trace.cores = property(_read_cores, _write_cores, doc="per-core instruction lists (``cores[i]``: block i's)")
