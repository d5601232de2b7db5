"""Kernel launch on the simulator: ``@jit``, ``kernel[core_num](*args)``, cores, KernelError.

A launch runs the kernel function once per core (block), in block-index order. Each core has
its own UB arena and records its own instruction list; GM buffers are shared. Cores run one at a
time; ``sync_all`` hands the turn to the next core, so a kernel that synchronises cores sees the
other cores' writes as it would on the NPU.
"""

from __future__ import annotations

import functools
import gc
import inspect
import os
import sys
import threading
import time
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from fusekit.machine import AIC, AIV, CoreKind, CoreState, space_named
from fusekit.soc import SoC, get_soc

from . import dtypes
from . import overflow as overflow_modes
from .effect import Effect, run as run_effect
from .errorkind import ErrorKind
from .lockstep.values import plain_offset
from .loops import as_loops
from .scalar import int32
from .trace import Access, GmBuffer, Instr, Pipe, Sync, Trace

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_CORE_NUM = 65535  # blockDim is a uint16 launch parameter (AD-G 核函数/调用核函数)
ASC_DIR = os.path.dirname(os.path.abspath(__file__))


class KernelError(RuntimeError):
    """A kernel broke a rule of the hardware or of the Ascend C API.

    Attributes:
        kind: what went wrong, for tools: an :class:`~fusekit.asc.errorkind.ErrorKind` (``out-of-bounds``,
            ``misaligned``, ``partial-overlap``, ``deadlock``, ``unsupported``, ``api`` ...), which compares
            equal to its string and names the sanitizer tool that reports it; the constructor takes either.
        core: the failing core (its index in ``Trace.cores``: its block index unless the launch is a mix one), or
            None for launch-time errors.
        op: the API call that failed.
        file, line: where the kernel source made the call.
        tensor: the tensor involved, if one is.
        start, stop: element range ``[start, stop)`` involved, if any.
        mem, buffer, byte_range: the memory (``GM``/``UB``), buffer name and byte range involved, if any.
        pipes: the pipes a deadlock is between (waiting on, waiting), if it is one.
    """

    def __init__(self, op: str, detail: str, *, core: int | None = None, file: str = "", line: int = 0,
                 tensor: str = "", start: int | None = None, stop: int | None = None, kind: str = "api",
                 mem: str = "", buffer: str = "", byte_range: tuple[int, int] | None = None,
                 pipes: tuple[str, ...] = (), label: str = ""):
        self.op, self.detail, self.core, self.kind = op, detail, core, ErrorKind(kind)
        self.mem, self.buffer, self.byte_range, self.pipes = mem, buffer, byte_range, pipes
        self.trace: Trace | None = None  # what the launch executed before the error
        self.file, self.line, self.tensor, self.start, self.stop = file, line, tensor, start, stop
        where = f" on {label or f'aiv({core})'}" if core is not None else ""
        at = f" at {file}:{line}" if file else ""
        super().__init__(f"{op}{where}{at}: {detail}")

    def __reduce__(self):  # pickled with its fields (a host program's launch reports from its child process)
        return _restore_error, (type(self), self.args, self.__dict__)


def _restore_error(cls, args: tuple, state: dict) -> KernelError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class ForeignSite:
    """A call site in kernel code that is not Python (a C++ kernel's ``file:line``, :mod:`fusekit.cpp`), with the
    attributes of a frame that fusekit reads where it names a call site (``f_code.co_filename``, ``f_lineno``;
    no ``f_locals``, so objects go by their fallback names)."""

    __slots__ = ("f_code", "f_lineno", "f_locals", "f_back")

    def __init__(self, file: str, line: int):
        self.f_code = types.SimpleNamespace(co_filename=file)
        self.f_lineno, self.f_locals, self.f_back = line, {}, None


def set_foreign_site(site: "ForeignSite | None") -> None:
    """Name ``site`` as the kernel's call site of this thread's next calls (None: Python frames again)."""
    _running.site = site


def kernel_frame():
    """The innermost frame that belongs to kernel code (not to ``fusekit.asc``), or the :class:`ForeignSite` a
    compiled kernel's call set."""
    site = getattr(_running, "site", None)
    if site is not None:
        return site
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(ASC_DIR):
        frame = frame.f_back
    return frame


# kinds of KernelError that are one access gone wrong: under the sanitizer (``launch(faults=)``) they
# become findings and the run goes on with the access clipped or skipped (msSanitizer reports each)
ACCESS_FAULTS = frozenset({"out-of-bounds", "misaligned"})


class Core(CoreState):
    """One AIV core during a launch: its architectural state (registers and one arena per local memory space,
    declared in ``fusekit.machine.state.CoreState``), block index, recorded instructions, the launch's hooks.

    ``faults``: None (a plain launch: the first fault raises), or the list that collects access
    faults (:data:`ACCESS_FAULTS`) while the kernel goes on (see :meth:`fault`).
    """

    def __init__(self, idx: int, block_num: int, soc: SoC, strict: bool, log: list[str] | None = None,
                 executor: "Executor | None" = None, faults: "list | None" = None, kind: CoreKind = AIV,
                 place: "Place | None" = None):
        CoreState.__init__(self, kind=kind)
        self.make_arenas(soc)
        self.idx = idx
        self.place = place or Place(kind, idx, idx, 1, 0, int(kind is AIC), int(kind is AIV))
        self.faults = faults
        self.executor = executor
        self.log = [] if log is None else log  # device printf output, printed when the launch ends
        self.block_num = block_num
        self.soc = soc
        self.strict = strict
        # the UB arena by its short name: the vector instructions' operands and the raw addresses they take are UB
        # (AD-API 通用说明和约束.md); None on a core kind without a UB
        self.ub = self.arenas.get(space_named("UB"))
        self.instrs: list[Instr] = []
        self.pipe = None      # the core's TPipe, once constructed
        self.queues: list = []
        self.sync_all_hook: Callable[[], None] | None = None  # set by the scheduler
        # wait_hook(ready, why=None): block this core until ready() holds (cross-core flags, crosscore.py; GM flags,
        # blocksync.py); ``why`` explains a deadlock. Set by the runner
        self.wait_hook: Callable[..., None] | None = None
        self.launch_flags: dict = {}  # cross-core flag counters shared by the launch's cores
        self.progress: Callable[[], None] | None = None
        self.overflowed: list[int] = []  # indices of instructions whose float result overflowed (Trace.overflows)
        self.observers: list[Callable[..., None]] = []  # what record notifies, in order (see :meth:`observe`)

    def observe(self, observer: Callable[..., None], *, first: bool = False) -> None:
        """Have :meth:`record` call ``observer(core, op, pipe, reads, writes, sync)`` before it appends each
        instruction (``writes`` holds the record's writes, then its undefined ranges; ``reads`` and ``sync`` as
        given to record). An observer may raise a KernelError to refuse the instruction (``check_local_memory_ia``,
        ``fusekit.asc.iacheck``) or record instructions of its own ahead of it (``LocalTensorAuto``'s syncs,
        ``fusekit.asc.autosync``); the records it makes are observed too. Register outside record.

        ``first``: ahead of the observers registered so far, for an observer that refuses instructions: it runs
        before any other observer records for the instruction (check, then record: ``docs/design.md``). An
        observer registered already stays where it is.
        """
        if observer not in self.observers:
            self.observers.insert(0 if first else len(self.observers), observer)

    def record(self, op: str, pipe: Pipe, *, reads: tuple[Access, ...] = (), writes: tuple[Access, ...] = (),
               undefined: tuple[Access, ...] = (), sync: Sync | None = None, count: int = 0, nbytes: int = 0,
               dtype: str = "", effect: "Effect | Callable[[], None] | None" = None, repeats: int = 0,
               cost: str = "", lines: tuple[Access, ...] = (), frame=None) -> None:
        """Append an instruction to the Trace, then apply its memory ``effect`` (all checks are done by now).

        ``effect``: an :class:`~fusekit.asc.effect.Effect` record, which ``fusekit.asc.effect.apply`` interprets, or
        a closure for an instruction whose effect is not of that regular shape (``fusekit.asc.effect``).
        An executor (race replay) may instead hold the effect back and apply it later. ``count``,
        ``nbytes`` and ``repeats`` are stored as plain ints (kernel scalars are typed, ``scalar.py``).
        ``frame``: the caller's :func:`kernel_frame`, when it has it already (saves a second stack walk).
        """
        for observer in self.observers:  # the analyses that see instructions as they are made (observe)
            observer(self, op, pipe, reads, writes + undefined, sync)
        if frame is None:
            frame = kernel_frame()
        instr = Instr(self.idx, len(self.instrs), op, pipe, reads, writes, undefined, sync, int(count), int(nbytes),
                      dtype, frame.f_code.co_filename if frame else "", frame.f_lineno if frame else 0, int(repeats),
                      cost, lines)
        self.instrs.append(instr)
        if self.executor is not None:
            self.executor.run(instr, effect)
        elif effect is not None:
            run_effect(effect)

    # -- what a call made for several cores at once needs (a lockstep group overrides these: fusekit.asc.lockstep)

    def lanes(self, mode: int = 0) -> tuple:
        """(Trace index, Place) of each core this call runs for: this one (cross-core flags of ``mode``)."""
        return ((self.idx, self.place),)

    @staticmethod
    def per_lane(values: list):
        """The one value of ``values`` (one per lane) that this core records."""
        return values[0]

    def note_set(self) -> None:
        """The cross-core set just recorded (a lockstep group keeps what its cores knew then)."""

    def note_wait(self, sets: list) -> None:
        """The cross-core wait just recorded took ``sets`` ((core, instruction) per lane)."""

    def block_idx(self):
        """``get_block_idx()``: this core's block index, an int32 scalar (``scalar.py``): in a mix launch its
        position among the cores of its kind (an AIV of MIX_AIC_1_2: [0, 2 * block_dim), GetBlockIdx.md)."""
        return int32(self.place.block)

    @property
    def label(self) -> str:
        """How messages name this core: ``aiv(3)``, ``aic(1)``."""
        return f"{self.kind.msprof_prefix}({self.place.block})"

    def note_overflow(self, index: int, overflowed) -> None:
        """Instruction ``index``'s float result left its dtype's range if ``overflowed`` holds (``Trace.overflows``)."""
        if overflowed:
            self.overflowed.append(index)

    def fault(self, error: KernelError) -> None:
        """Report an access fault: raise it in a plain launch; under the sanitizer collect it and
        return, so that the caller goes on with the access clipped or skipped.

        Raises:
            KernelError: ``error``, unless faults are collected and it is an access fault.
        """
        if self.faults is None or error.kind not in ACCESS_FAULTS:
            raise error
        self.faults.append(error)

    @property
    def collecting(self) -> bool:
        """Whether access faults are collected (the sanitizer) rather than raised."""
        return self.faults is not None

    def error(self, op: str, detail: str, kind: str = "api", **where) -> KernelError:
        """A KernelError located at the kernel line that is executing now."""
        frame = kernel_frame()
        return KernelError(op, detail, core=self.idx, file=frame.f_code.co_filename if frame else "",
                           line=frame.f_lineno if frame else 0, kind=kind, label=self.label, **where)


class Executor(Protocol):
    """Decides when instruction effects land (the default applies each at once, in program order); an executor lands
    one with ``fusekit.asc.effect.run``."""

    def run(self, instr: Instr, effect: "Effect | Callable[[], None] | None") -> None: ...

    def end_core(self, core: int) -> None: ...


_running = threading.local()  # .core: the core this thread is executing (launches in threads stay apart)


def _set_current(core: "Core | None") -> None:
    _running.core = core


def running_core() -> "Core | None":
    """The core this thread is executing, or None outside a kernel."""
    return getattr(_running, "core", None)


def current(op: str = "this call") -> Core:
    """The core executing now.

    Raises:
        KernelError: called outside a kernel launch.
    """
    core = running_core()
    if core is None:
        raise KernelError(op, "Ascend C device API called outside a kernel: launch the kernel with "
                              "kernel[core_num](*args)")
    return core


class GmArray:
    """One numpy array argument as a global buffer: its bytes, element type and name."""

    __slots__ = ("name", "dtype", "data", "source", "length")

    def __init__(self, name: str, array: np.ndarray):
        self.name = name
        self.dtype = dtypes.from_numpy(array.dtype)
        self.source = array
        self.length = array.size  # elements
        self.data = np.empty(array.size * self.dtype.sizeof(), np.uint8)
        self.load()

    def viewed_as(self, dtype: dtypes.DataType) -> "GmArray":
        """The same buffer (its name and bytes) seen as elements of ``dtype``: a kernel's typed view of a byte
        workspace (the Matmul API's GM workspace, ``fusekit.asc.adv.matmul``). Accesses through it are this
        buffer's; it is never copied in or back on its own."""
        alias = GmArray.__new__(GmArray)
        alias.name, alias.dtype, alias.data, alias.source = self.name, dtype, self.data, self.source
        alias.length = self.data.size // dtype.sizeof()
        return alias

    def load(self) -> None:
        """Copy the argument in, in the NPU's (native, little-endian) byte order."""
        self.data[:] = np.ascontiguousarray(self.source, dtype=self.dtype.np).reshape(-1).view(np.uint8)

    def store(self) -> None:
        """Copy the buffer back into the argument (numpy converts to its byte order).

        Raises:
            ValueError: the argument is read-only.
        """
        if not self.source.flags.writeable:
            raise ValueError(f"argument {self.name} is read-only but the kernel wrote to it")
        self.source[...] = self.data.view(self.dtype.np).reshape(self.source.shape)


class ConstExpr:
    """Marks a compile-time constant parameter: ``TILE: asc.ConstExpr[int]``."""

    def __class_getitem__(cls, item):
        return typing.Annotated[item, cls]


class GlobalAddress:
    """A ``__gm__`` pointer kernel argument; ``addr + k`` moves it by k elements."""

    __slots__ = ("gm", "offset")

    def __init__(self, gm: GmArray, offset: int = 0):
        self.gm, self.offset = gm, offset

    @property
    def dtype(self) -> dtypes.DataType:
        return self.gm.dtype

    def __add__(self, elements: int) -> "GlobalAddress":
        # plain_offset is int(elements), kept per core for a lockstep group's lane value (fusekit.asc.lockstep)
        return GlobalAddress(self.gm, self.offset + plain_offset(elements))

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"GlobalAddress({self.gm.name} + {self.offset})"


@dataclass
class LaunchResult:
    """What ``kernel[core_num](*args)`` returns: the Trace and the wall time in seconds."""

    trace: Trace
    wall_s: float


class KernelFunction:
    """A function decorated with ``@asc.jit``.

    ``kernel[core_num](*args, **kwargs)`` launches it on the simulator; inside a running kernel
    it is a plain call (helpers). Launch options ``soc=`` (SoC name, default Ascend910B1) and
    ``strict=`` (default True; False reproduces the NPU's silent DataCopy round-down instead of
    raising), ``overflow=`` ("inf_nan" or "saturation", where the SoC supports it), ``auto_sync=`` and
    ``initial_state=`` (see :func:`launch`) may be passed as keywords unless the kernel has parameters of
    those names; use :func:`launch` then.
    """

    def __init__(self, fn: Callable, options: dict | None = None):
        self.fn = as_loops(fn)  # pyasc's ``with matmul.iterate() as count:`` is a loop (fusekit.asc.loops)
        self.options = options or {}  # pyasc's jit options, kept for tools (e.g. insert_sync)
        functools.update_wrapper(self, fn)
        self.signature = inspect.signature(fn)

    def __call__(self, *args, **kwargs):
        if running_core() is None:
            raise TypeError(f"{self.fn.__name__} is an @asc.jit kernel: launch it with "
                            f"{self.fn.__name__}[core_num](*args), not {self.fn.__name__}(*args)")
        return self.fn(*args, **kwargs)

    def __getitem__(self, key) -> Callable[..., LaunchResult]:
        core_num = key[0] if isinstance(key, tuple) else key  # kernel[core_num, stream]

        def launcher(*args, **kwargs) -> LaunchResult:
            options = {k: kwargs.pop(k) for k in LAUNCH_OPTIONS if k in kwargs and k not in self.signature.parameters}
            return launch(self, core_num, args, kwargs, **options)

        return launcher

    def argument(self, name: str, value, kind: str = ""):
        """A launch argument as the kernel receives it (numpy arrays become GM buffers; :func:`_to_device`)."""
        return _to_device(name, value, kind)

    def __repr__(self) -> str:
        return f"<asc.jit kernel {self.fn.__name__}>"


# keywords of kernel[n](...) that are launch options
LAUNCH_OPTIONS = ("soc", "strict", "overflow", "auto_sync", "initial_state")


def recoverable(fn: Callable) -> Callable:
    """Wrap an instruction so that, under the sanitizer, an access fault it raises skips it.

    The instruction records nothing and changes no memory, the fault is collected, and the kernel
    goes on (msSanitizer reports every illegal access of a run, SAN memcheck). In a plain launch
    the KernelError propagates.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KernelError as exc:
            core = running_core()
            if core is None or not core.collecting or exc.kind not in ACCESS_FAULTS or exc.core != core.idx:
                raise
            core.faults.append(exc)
            return None

    return wrapper


def _auto_sync(kernel: "KernelFunction", auto_sync) -> bool:
    """The launch's auto_sync: given, else the kernel's ``@asc.jit(auto_sync=...)``, else True (pyasc's default)."""
    value = kernel.options.get("auto_sync", True) if auto_sync is None else auto_sync
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"auto_sync must be True or False, got {value!r}")
    return bool(value)


# pyasc's kernel types (``asc.runtime.config.KernelType``): the cores of each logical AI Core (block) of the launch,
# AIVs first (GetTaskRatio.md 表1; GetSubBlockNum(ISASI).md 表2; AD-G 基本架构.md: an AI Core on A2/A3 is one
# AIC and two AIVs)
KERNEL_TYPES: dict[str, tuple[tuple[CoreKind, int], ...]] = {
    "AIV_ONLY": ((AIV, 1),), "AIC_ONLY": ((AIC, 1),), "MIX_AIC_1_2": ((AIV, 2), (AIC, 1)),
    "MIX_AIC_1_1": ((AIV, 1), (AIC, 1)), "MIX_AIC_1_0": ((AIC, 1),), "MIX_AIV_1_0": ((AIV, 1),),
}
_HARD_SYNC = {"MIX_AIV_HARD_SYNC", "MIX_AIC_HARD_SYNC"}


@dataclass(frozen=True)
class Place:
    """Where a core sits in its launch: its kind, its GetBlockIdx (its position among the cores of its kind), its
    logical AI Core (block), how many cores of its kind each AI Core has (GetTaskRatio), its GetSubBlockIdx, and
    how many AICs and AIVs each AI Core of the launch has."""

    kind: CoreKind
    block: int
    ai_core: int
    ratio: int
    sub_block: int
    aics: int = 0
    aivs: int = 1


def kernel_type(kernel: "KernelFunction") -> str:
    """The kernel's type as pyasc compiles it: ``matmul_cube_only=True`` is AIC_ONLY, else ``kernel_type=`` (a
    ``KernelType`` member or its name), else AIV_ONLY (pyasc compiler.py; a kernel with ``register_matmul`` pyasc
    types MIX_AIC_1_2 itself, ``fusekit.asc.adv.matmul``)."""
    if kernel.options.get("matmul_cube_only"):
        return "AIC_ONLY"
    given = kernel.options.get("kernel_type")
    if given is None and _refers_to(kernel.fn, frozenset({"register_matmul"})):
        return "MIX_AIC_1_2"  # pyasc's DetectKernelTypePass: a kernel with a RegistMatmulObjOp
    return getattr(given, "name", given) or "AIV_ONLY"


def core_plan(kernel: "KernelFunction", soc: SoC, block_dim: int) -> list[Place]:
    """The cores a launch of ``kernel`` with ``block_dim`` blocks runs, in ``Trace.cores`` order: for each kind of
    its kernel type (AIVs first), every core of that kind in GetBlockIdx order (:data:`KERNEL_TYPES`).

    Raises:
        KernelError: an unknown or HARD_SYNC kernel type, or a kernel with AIC cores on a coupled SoC (arch 2002,
            whose cube shares the AI Core with the vector unit and the UB: AD-G 架构规格/NPU架构版本2002.md), which
            fusekit does not simulate.
    """
    name = kernel_type(kernel)
    # where the kernel says its type: a C++ kernel (fusekit.cpp.kernel.CppKernel) names its declaration instead
    where = getattr(kernel, "kernel_type_source", None) or f"@asc.jit(kernel_type={name}) of {kernel.fn.__name__}"
    if name in _HARD_SYNC:
        raise KernelError("launch", f"{where}: the HARD_SYNC mix types are not simulated; fusekit runs "
                                    f"{', '.join(KERNEL_TYPES)}", kind="unsupported")
    if name not in KERNEL_TYPES:
        raise KernelError("launch", f"{where}: unknown kernel type; pyasc's are {', '.join(KERNEL_TYPES)}, "
                                    + ", ".join(sorted(_HARD_SYNC)))
    kinds = KERNEL_TYPES[name]
    if not soc.separated and any(kind is AIC for kind, _ in kinds):
        raise KernelError("launch", f"{where} on {soc.name}: arch {soc.arch} couples the cube unit with the vector "
                                    "unit in one AI Core (C1 and CO2 are the UB, no bias table, no Fixpipe; "
                                    "NPU架构版本2002.md); fusekit simulates the cube on the separated arch 2201 "
                                    "(Ascend910B*)", kind="unsupported")
    per = dict((kind.name, ratio) for kind, ratio in kinds)
    return [Place(kind, block * ratio + sub, block, ratio, sub, per.get("AIC", 0), per.get("AIV", 0))
            for kind, ratio in kinds for block in range(block_dim) for sub in range(ratio)]


def jit(fn: Callable | None = None, **options):
    """Decorator making a kernel or helper (pyasc's ``@asc.jit``; pyasc's compile options are kept on the
    kernel but do not change the simulation)."""
    if fn is None:
        return lambda f: KernelFunction(f, options)
    return KernelFunction(fn, options)


def launch(kernel: KernelFunction, core_num: int, args: tuple = (), kwargs: dict | None = None, *,
           soc: "str | SoC | None" = None, strict: bool = True, executor: Executor | None = None,
           progress: Callable[[], None] | None = None, sample_cores: bool = False,
           reverse_cores: bool = False, device_output="stdout", overflow: str | None = None,
           auto_sync: "bool | None" = None, faults: "list | None" = None, initial_state=None) -> LaunchResult:
    """Run ``kernel`` on ``core_num`` simulated cores.

    The cores run on the lockstep executor (``fusekit.asc.lockstep``: the cores that follow one instruction stream run
    as one group, the kernel's Python once per group), unless the launch needs the reference executor, which runs
    them one after another in block order: an executor, faults, sample_cores, reverse_cores, initial_state, sync_all,
    GM flags or cross-core flags other than mode 2, an instruction the groups do not run, a KernelError, a core reading
    GM another core writes (with no cross-core flag between them).
    Both give the same outputs, Trace and errors; ``Trace.executor`` and ``Trace.fallback`` say which ran and why.
    The environment variable ``FUSEKIT_EXECUTOR=reference`` forces the reference executor.

    Args:
        kernel: an ``@asc.jit`` function.
        core_num: block_dim, in [1, 65535].
        args, kwargs: kernel arguments. numpy arrays become global buffers (copied in, and copied
            back if the kernel wrote them, as pyasc does); Python ints become int32 and floats
            float32, as pyasc converts them (int32 arithmetic that wraps raises KernelError,
            ``fusekit.asc.scalar``); ConstExpr parameters pass through.
        soc: SoC name (default Ascend910B1).
        strict: raise on DataCopy lengths the NPU would silently round down (default).
        executor: decides when instruction effects land (race replay; the reference executor runs it); default: at
            once.
        progress: called each time a core finishes (progress bars): once per core; in lockstep once the launch has run.
        sample_cores: run only the first and the last core; the Trace lets core 0 stand in for the
            others (``Trace.stand_ins``). For timing kernels whose cores but the last do the same
            work (the tuner); the outputs are incomplete. Ignored for kernels that call sync_all.
        reverse_cores: run the cores last block first (a legal order too: cores run concurrently).
        device_output: where device printf output goes once the kernel has run: a text stream,
            "stdout" (the default), or None to drop it.
        auto_sync: the kernel is built with automatic synchronisation (pyasc's ``@asc.jit(auto_sync=)``,
            bisheng's ``--cce-auto-sync``): the compiler inserts ``pipe_barrier(PIPE_V)`` between
            dependent vector instructions (AD-API PipeBarrier(ISASI).md; ``fusekit.hb`` rule 2).
            None (default): the kernel's jit option, else True. Recorded as ``Trace.auto_sync``;
            it changes no value, only what the analyses consider ordered.
        faults: None (default): the first access fault raises KernelError. A list (the
            sanitizer): out-of-bounds and misaligned accesses (:data:`ACCESS_FAULTS`) are appended
            to it as KernelErrors and the kernel goes on, the access clipped or skipped. Other
            KernelErrors (an unaligned DataCopy length included) still stop the kernel.
        overflow: float overflow mode of the vector unit, "inf_nan" or "saturation"
            (``fusekit.asc.overflow``); default the SoC's (``SoC.overflow_default``).
        initial_state: None (default): every core starts from the reset state. An earlier launch's
            LaunchResult, Trace or sanitizer Report: core ``i`` starts with the registers the NPU keeps
            across kernels (atomic mode, vector mask and mask mode, DEQSCALE, pad value, CmpMask) as
            core ``i`` of that launch left them, as when the same physical core runs the next kernel
            (``fusekit.asc.corestate``); cores past that launch's block_dim start reset. A TPipe or
            ``init_soc_state()`` resets what InitSocState resets (InitSocState.md). The earlier launch
            must have run on the same SoC (ValueError otherwise); anything else, an empty list included,
            is a TypeError. An instruction that reads a register still holding the earlier kernel's
            value is a sanitizer finding ("state inherited", ``fusekit.sanitizer.statecheck``).

    Returns:
        LaunchResult with the Trace of every core.

    Raises:
        KernelError: the kernel broke a hardware or API rule (names core, tensor, offsets, file:line);
            its ``trace`` holds what ran before the error.
        ValueError, TypeError: bad launch parameters or arguments (``FUSEKIT_EXECUTOR`` naming no executor).
    """
    if not isinstance(kernel, KernelFunction):
        raise TypeError(f"expected an @asc.jit kernel, got {kernel!r}")
    if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or not 1 <= core_num <= MAX_CORE_NUM:
        raise ValueError(f"core_num must be an integer in [1, {MAX_CORE_NUM}] (the NPU's block_dim range), got {core_num!r}")
    spec = get_soc(soc)
    places = core_plan(kernel, spec, int(core_num))
    mixed = len({place.kind for place in places}) > 1
    overflow_mode = overflow_modes.choose(spec, overflow)
    auto_sync = _auto_sync(kernel, auto_sync)
    from . import corestate  # imports the vector package, which imports this module

    start_states = corestate.states_of(initial_state, spec.name) if initial_state is not None else []
    bound = _bind(kernel, args, kwargs or {})
    gm = {v.gm.name: v.gm for v in bound.values() if isinstance(v, GlobalAddress)}
    trace = Trace(kernel.fn.__name__, spec.name, int(core_num), spec.ub_bytes,
                  gm={name: GmBuffer(name, a.dtype.name, a.data.size) for name, a in gm.items()}, auto_sync=auto_sync,
                  core_kind=places[0].kind.name, kinds=tuple(p.kind.name for p in places) if mixed else ())
    started = time.perf_counter()
    from .lockstep import launcher as lockstep  # the default executor; it imports this module
    fallback = lockstep.refusal(kernel, int(core_num), bound, executor=executor, faults=faults,
                                sample_cores=sample_cores, reverse_cores=reverse_cores, initial_state=initial_state)
    if fallback is None:
        outcome = lockstep.run(kernel, int(core_num), places, bound, gm, trace, spec, strict, overflow_mode, progress)
        if not isinstance(outcome, lockstep.Refused):
            return LaunchResult(outcome, time.perf_counter() - started)
        fallback = outcome.reason
        for array in gm.values():
            array.load()  # the reference run starts from the original GM contents
    trace.executor, trace.fallback = "reference", fallback
    log: list[str] = []
    cores: dict[int, Core] = {}

    def make_core(i: int) -> Core:
        cores[i] = Core(i, int(core_num), spec, strict, log, executor, faults, places[i].kind, places[i])
        cores[i].progress = progress
        cores[i].overflow = overflow_mode
        corestate.restore(cores[i], start_states[i] if i < len(start_states) else None)
        return cores[i]

    count = len(places)  # cores in the Trace: block_dim, or every AIC and AIV of a mix launch
    sampled = sample_cores and count > 2 and not mixed and not _calls_sync_all(kernel.fn)
    if sampled:
        trace.stand_ins = {i: 0 for i in range(1, count - 1)}
    indices = (0, count - 1) if sampled else range(count)
    # the cores only add to the Trace (no garbage cycles to speak of), and each automatic full collection
    # would rescan all of it (~15 % of a long launch): pause the collector while they run
    collector_was_on = gc.isenabled()
    gc.disable()
    try:
        _run_cores(kernel, int(core_num), make_core, bound, gm.values(), cores, log,
                   list(reversed(indices)) if reverse_cores else indices)
    except KernelError as exc:
        exc.trace = trace
        raise
    finally:  # like the NPU, device printf output appears once the kernel has run
        if collector_was_on:
            gc.enable()
        _print_device_output(log, device_output)
        trace.cores = [cores[i].instrs if i in cores else [] for i in range(count)]
        trace.workspaces = frozenset(name for c in list(cores.values())[:1] for name in c.launch_flags.get("workspaces", ()))
        trace.overflows = [c.instrs[k] for c in cores.values() for k in c.overflowed]
        ran = [trace.stand_ins.get(i, i) for i in range(count)]  # an unsimulated core ends as its stand-in
        trace.end_state = [corestate.snapshot(cores[j]) if j in cores else corestate.EndState() for j in ran]
    _copy_back(gm.values(), trace)
    return LaunchResult(trace, time.perf_counter() - started)


def _print_device_output(log: list[str], stream) -> None:
    text = "".join(log)
    if text and stream is not None:
        stream = sys.stdout if stream == "stdout" else stream
        stream.write(text if text.endswith("\n") else text + "\n")


def _bind(kernel: KernelFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
    try:
        bound = kernel.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{kernel.fn.__name__}: {exc}") from None
    bound.apply_defaults()
    params = kernel.signature.parameters
    return {name: kernel.argument(name, value, _annotation(params[name])) for name, value in bound.arguments.items()}


def check_arguments(kernel: KernelFunction, kwargs: dict) -> None:
    """Convert ``kwargs`` as ``kernel[n](**kwargs)`` would, running nothing (a front end's early check).

    Raises:
        TypeError, ValueError: as the launch would (a GM parameter that is no array, a scalar that is no number, an
            int that does not fit int32, a missing or unknown parameter).
    """
    _bind(kernel, (), kwargs)


def annotation_text(param: inspect.Parameter) -> str:
    """A parameter's annotation as text (``from __future__ import annotations`` makes them strings anyway)."""
    return param.annotation if isinstance(param.annotation, str) else repr(param.annotation)


def _annotation(param: inspect.Parameter) -> str:
    """'ConstExpr', 'GlobalAddress' or '' for a kernel parameter."""
    text = annotation_text(param)
    return next((kind for kind in ("ConstExpr", "GlobalAddress") if kind in text), "")


def _to_device(name: str, value, kind: str = ""):
    """Convert one launch argument as pyasc does (docs/pyasc-api.md, "Launch")."""
    if kind == "ConstExpr":
        return value
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "numpy"):
        value = torch_view(name, value)  # pyasc takes torch.Tensor GM arguments too
    if isinstance(value, np.ndarray):
        return GlobalAddress(GmArray(name, value))
    if type(value).__name__ in ("MockTensor", "MockValue"):  # pyasc's compile-only stand-ins (fusekit.pyasc.shim.jit)
        raise TypeError(f"argument {name}: a {type(value).__name__} has a dtype and no data: pyasc compiles with it "
                        "(its unit tests mock Launcher.run), the simulator needs the data: pass a numpy array")
    if kind == "GlobalAddress" or isinstance(value, (list, tuple, dict, set)):
        raise TypeError(f"argument {name}: a GM buffer must be a numpy array, got {type(value).__name__}; "
                        "wrap it with numpy.asarray(..., dtype=...)")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"argument {name}={value} does not fit the kernel's int32 scalar; split the work "
                             "into launches whose lengths fit in 32 bits")
        return int32(int(value))  # arithmetic on it is checked for int32 wrap-around (fusekit.asc.scalar)
    if isinstance(value, (float, np.floating)):
        return float(np.float32(value))
    if isinstance(value, (str, bytes)):
        raise TypeError(f"argument {name}: a kernel scalar is a number (int, float or bool), got the string "
                        f"{value!r}")
    return value


def torch_view(name: str, tensor) -> np.ndarray:
    """A CPU ``torch.Tensor`` argument as the numpy array sharing its memory (results land in the tensor).

    Raises:
        TypeError: the tensor is not on the CPU, not contiguous, or of a dtype numpy lacks (bfloat16).
    """
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise TypeError(f"argument {name}: the simulator takes contiguous CPU torch tensors, got one on "
                        f"{tensor.device} (contiguous: {tensor.is_contiguous()}); use tensor.cpu().contiguous()")
    try:
        return tensor.detach().numpy()
    except TypeError as exc:
        raise TypeError(f"argument {name}: torch {tensor.dtype} has no numpy dtype ({exc}); pass a numpy array") from None


def _copy_back(buffers, trace: Trace) -> None:
    written = {a.buffer for instr in trace for a in instr.writes}
    for gm in buffers:  # natively_written: a C++ kernel's own stores through its GM pointer (fusekit.cpp.memory)
        if gm.name in written or getattr(gm, "natively_written", bool)():
            gm.store()


def _run_cores(kernel: KernelFunction, block_dim: int, make_core: Callable[[int], Core], bound: dict,
               buffers, cores: dict, log: list[str], indices) -> None:
    """Run the cores; plainly one after another unless the kernel synchronises cores."""
    body = lambda: kernel.fn(**bound)  # noqa: E731
    if not _calls_sync_all(kernel.fn):
        try:
            return _run_sequentially(indices, make_core, body)
        except _NeedsScheduler:  # sync_all reached through a call we could not see: start over
            log.clear()
            cores.clear()
            for gm in buffers:
                gm.load()
    _Scheduler(list(indices), make_core, body).run()


def _run_sequentially(indices, make_core: Callable[[int], Core], body: Callable[[], None]) -> None:
    flags: dict = {}
    try:
        for i in indices:
            core = make_core(i)
            core.sync_all_hook = _needs_scheduler
            core.launch_flags, core.wait_hook = flags, _wait_sequential
            _set_current(core)
            _body(body)
            _finish(core)
            _write_back(core)  # the next core starts after this one has ended: a legal order on the NPU
    finally:
        _set_current(None)


def _write_back(core: Core) -> None:
    """A core's dirty data-cache lines reach GM (``cache.py``): when a sequentially run core ends,
    or, for cores that synchronise with sync_all (run concurrently), when the launch ends."""
    if core.dcache is not None:
        core.dcache.flush()


class _NeedsScheduler(BaseException):
    """sync_all was reached in a sequential run."""


def _needs_scheduler() -> None:
    raise _NeedsScheduler


def _wait_sequential(ready: Callable[[], bool], why: str | None = None) -> None:
    if not ready():  # another core must run first: rerun the launch with the scheduler
        raise _NeedsScheduler


_CROSS_CORE_SYNC = frozenset({"sync_all", "cross_core_wait_flag", "ib_set", "ib_wait",  # calls that wait for
                              "wait_pre_block", "register_matmul"})                      # other cores


def _calls_sync_all(fn: Callable) -> bool:
    """Whether ``fn`` or a jit helper it names refers to a call that waits for other cores (decides how cores are
    run)."""
    return _refers_to(fn, _CROSS_CORE_SYNC)


def _refers_to(fn: Callable, names: frozenset, seen: set | None = None) -> bool:
    """Whether ``fn`` or a jit helper it names (transitively) names one of ``names``."""
    seen = set() if seen is None else seen
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    used = set(code.co_names)
    for const in code.co_consts:  # nested code (comprehensions, lambdas)
        if inspect.iscode(const):
            used |= set(const.co_names)
    if used & names:
        return True
    return any(_refers_to(helper.fn, names, seen) for name in used
               if isinstance(helper := fn.__globals__.get(name), KernelFunction))


class _Aborted(BaseException):
    """Raised inside waiting core threads when another core failed."""


class _Scheduler:
    """Runs cores one at a time in ``order``; ``sync_all`` passes the turn to the next core.

    A core runs in a thread of its own so that it can stop in ``sync_all`` and resume later. Only
    the thread holding the turn runs (each waits on its own Event), so the thread-local current core
    is set by whichever runs and the shared lists below need no lock. Cores start in ``order``
    (block order, or reversed for race replay); when every started core waits in ``sync_all``,
    they resume in that order.
    """

    def __init__(self, order: list[int], make_core: Callable[[int], Core], body: Callable[[], None]):
        self.order, self.make_core, self.body = order, make_core, body
        self.position = {core: k for k, core in enumerate(order)}
        self.cores: dict[int, Core] = {}
        self.go: dict[int, threading.Event] = {}
        self.threads: list[threading.Thread] = []
        self.ready: list[int] = []    # released from a barrier, not yet resumed
        self.waiting: list[int] = []  # in sync_all
        self.blocked: dict[int, Callable[[], bool]] = {}  # in a cross-core wait: core -> released?
        self.why: dict[int, str | None] = {}  # blocked core -> what its wait needs (the deadlock message)
        self.sites: dict[int, tuple[str, int]] = {}  # blocked core -> the kernel's file:line of its wait
        self.flags: dict = {}
        self.done: list[int] = []
        self.error: BaseException | None = None
        self.finished = threading.Event()

    def run(self) -> None:
        self._hand_over()
        self.finished.wait()
        for thread in self.threads:
            thread.join()
        _set_current(None)
        if self.error is not None:
            raise self.error
        for i in sorted(self.cores):
            _write_back(self.cores[i])

    def _hand_over(self) -> None:
        """Give the turn to the next core to run, or end the launch."""
        for i, released in list(self.blocked.items()):
            if released():
                del self.blocked[i]
                self.ready.append(i)
        if self.ready:
            self.go[self.ready.pop(0)].set()
        elif len(self.go) < len(self.order):
            i = self.order[len(self.go)]
            self.go[i] = threading.Event()
            self.threads.append(threading.Thread(target=self._core_main, args=(i,), daemon=True))
            self.threads[-1].start()
            self.go[i].set()
        elif self.blocked:
            i = min(self.blocked, key=self.position.__getitem__)
            core = self.cores[i]
            op = core.instrs[-1].op if core.instrs and core.instrs[-1].sync is not None else "cross_core_wait_flag"
            why = self.why.get(i) or ("they wait for a cross-core flag that no running core will set. Every core "
                                      "of the kind must call cross_core_set_flag with that flag id before it can be "
                                      "waited on")
            labels = ", ".join(self.cores[j].label for j in sorted(self.blocked))
            file, line = self.sites.get(i, ("", 0))
            self._fail(KernelError(op, f"deadlock: {labels} wait and on the NPU they hang: {why}", core=i,
                                   kind="deadlock", file=file, line=line, label=core.label))
        elif self.waiting and self.done:
            stuck = self.cores[self.waiting[0]].instrs[-1]  # its sync_all
            self._fail(KernelError("sync_all", f"deadlock: aiv({', '.join(map(str, self.waiting))}) wait in sync_all "
                                   f"but aiv({', '.join(map(str, self.done))}) finished without calling it; on the "
                                   "NPU the waiting cores hang. Every core must reach every sync_all",
                                   core=self.waiting[0], kind="deadlock", file=stuck.file, line=stuck.line))
        elif self.waiting:
            self.ready, self.waiting = sorted(self.waiting, key=self.position.__getitem__), []
            self._hand_over()
        else:
            self.finished.set()

    def _core_main(self, i: int) -> None:
        self.go[i].wait()
        if self.error is not None:
            return
        try:
            core = self.cores[i] = self.make_core(i)
            core.sync_all_hook = lambda: self._arrive(i)
            core.launch_flags, core.wait_hook = self.flags, lambda ready, why=None: self._block(i, ready, why)
            _set_current(core)
            _body(self.body)
            _finish(core)
        except _Aborted:
            return
        except BaseException as exc:  # noqa: BLE001 - re-raised in the launching thread
            self._fail(exc)
            return
        self.done.append(i)
        self._hand_over()

    def _arrive(self, i: int) -> None:
        """Core i reached sync_all: let the others run, resume when all have arrived."""
        self.waiting.append(i)
        self._park(i)

    def _block(self, i: int, ready: Callable[[], bool], why: str | None = None) -> None:
        """Core i waits for other cores (a cross-core flag): let them run until ``ready()`` holds."""
        if ready():
            return
        self.blocked[i] = ready
        self.why[i] = why
        frame = kernel_frame()
        self.sites[i] = (frame.f_code.co_filename, frame.f_lineno) if frame else ("", 0)
        self._park(i)

    def _park(self, i: int) -> None:
        """Core i gives up the turn and sleeps until it is handed back (or the launch failed)."""
        self.go[i].clear()
        self._hand_over()
        self.go[i].wait()
        if self.error is not None:
            raise _Aborted
        _set_current(self.cores[i])

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        for event in self.go.values():
            event.set()
        self.finished.set()


class KernelExit(BaseException):
    """Ends the kernel function on this core, as a ``return`` from the kernel (the AIC of a mix kernel leaves it
    once its Matmul server is done: ``fusekit.asc.adv.matmul``)."""


def _body(body: Callable[[], None]) -> None:
    try:
        body()
    except KernelExit:
        pass


def _finish(core: Core) -> None:
    """End of a core's kernel: pending effects land, every queue buffer must be free, its local memories are dropped."""
    core.launch_flags[("finished", core.idx)] = True  # what a core waiting for this one's messages learns
    if core.executor is not None:
        core.executor.end_core(core.idx)
    for que in core.queues:
        que.check_released()
    core.ub, core.arenas = None, {}
    if core.progress is not None:
        core.progress()
