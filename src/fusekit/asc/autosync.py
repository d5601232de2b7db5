"""``asc.LocalTensorAuto``: UB tensors whose synchronisation pyasc's compiler inserts.

What pyasc builds (its MLIR passes, read in github hicann/pyasc at cecba26, ``lib/Dialect/Asc/Transforms/``):

- One allocation per traced ``local_tensor_auto`` op: ``LocalTensorAuto(...)`` creates one op each time
  pyasc's tracer executes the call (``python/asc/language/core/tensor.py``). The tracer visits the body
  of a ``range`` / ``asc.range`` loop (and ``while``) once, as one ``scf.for`` (``codegen/function_visitor.py``
  ``visit_For``), and unrolls ``asc.static_range`` (``handle_static_range``: the body traced once per
  index); a plain Python helper is executed by Python, loops and all; ``@asc.jit`` helpers are inlined
  at each call (``runtime/compiler.py``: ``add_inliner`` before the passes below). ``HoistUBAllocation.cpp``
  hoists an op out of the loops around it and ``MaterializeTensor.cpp`` gives each op its own TBuf or
  one-slot TQue, so the iterations of a traced loop reuse one buffer, and distinct ops never share one.
  Here (:func:`allocation`): one buffer per (core, traced call): the call stack of kernel frames, each
  frame's code and bytecode offset (``f_lasti``: two calls on one line are two ops), plus the indices of
  the ``static_range`` loops around it, plus, for a call made inside a plain (not ``@asc.jit``) helper,
  its position among that helper invocation's calls (Python loops there unroll). Buffers are placed from
  the top of UB downwards (TPipe hands out UB from the bottom; the two must not meet).
- ``MaterializeTensor.cpp`` + ``InsertSync.cpp``: each auto tensor becomes a one-slot queue whose
  enque is placed after every instruction writing it and whose deque before the first later user;
  a queue's enque/deque is a set_flag/wait_flag from the producer's pipe to the consumer's, and
  alloc/free the reverse pair (AD-G TPipe-TQue框架编程原理.md). ``get_value`` / ``set_value`` get
  a V_S / S_V flag pair around them (``syncGetValueOp`` / ``syncSetValueOp``), and the kernel ends
  with ``pipe_barrier(PIPE_ALL)`` (``canonicalizeBarriers``).

fusekit derives the same ordering from the data dependences the instructions actually have: before
an instruction on pipe P that reads an auto buffer last written on pipe W != P (RAW), or writes one
last written on W != P (WAW) or read since on R != P (WAR), it records a set on W (R) and a wait on
P. Same-pipe pairs need nothing (PIPE_V is kept in order by automatic synchronisation; MTE2/MTE3
copies into one buffer are in pipe order for the sanitizer's purposes, as the queue's would be).
Each inserted sync is an ordinary :class:`Sync` in the Trace (so happens-before and the timing model
use it) with the event ``("auto", "MTE2_V", n, producer file:line, producer index)`` and the op
``auto_set_flag`` / ``auto_wait_flag``: :func:`inserted` lists them with the two source lines each orders.
Both are recorded before the consumer, but the set means what pyasc's enque (free) right after the
producer (last reader) means: ``fusekit.hb`` and the timing model take it as placed after the
instruction at ``producer index``, so later instructions of the producer's pipe are not ordered by it, and
the timing model issues it in the slot right after that instruction. No pair is dropped because a stall orders
its two instructions already (an MTE2_V after an MTE2_S wait, an S_MTE2 after a ``get_value``): InsertSync.cpp
is a fixed scheme that emits its enque/deque after every write and its V_S / S_V pairs around every scalar
access whether or not they add order, so the code pyasc builds pays for them too. (Its pair for a scalar read of
a copied-in tensor is the deque on V then V_S; fusekit's is the direct MTE2_S, the same order.)
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass, field

from fusekit.machine import space_named

from . import dtypes
from .runtime import ASC_DIR, KernelFunction, current, kernel_frame, running_core
from .tensor import LocalTensor
from .trace import Instr, Pipe, Sync, SyncKind, Trace

AUTO_EVENT = "auto"


@dataclass
class _Buffer:
    start: int
    stop: int
    name: str
    writer: "tuple[Pipe, str, int] | None" = None         # pipe, file:line and trace index of the last write
    readers: dict = field(default_factory=dict)           # pipe -> (file:line, index) of its last read since
    synced: set = field(default_factory=set)              # pipes already ordered after the last write


class AutoState:
    """One core's auto tensors and the syncs derived so far."""

    def __init__(self, core):
        self.core = core
        self.space = space_named("UB")  # LocalTensorAuto tensors are UB tensors (module docstring; pyasc's page)
        self.buffers: dict[tuple, _Buffer] = {}  # allocation (:func:`allocation`) -> its buffer
        self.low = core.soc.ub_bytes  # auto buffers occupy [low, ub_bytes)
        self.events = 0
        self.unrolled: list[int] = []  # the iteration of each static_range loop running now, outermost first
        self.helper = None             # the plain helper invocation (its frame) the last call was made in
        self.calls: dict[tuple, int] = {}  # calls seen so far in that invocation, per call stack
        self.names: dict[str, int] = {}    # buffers named after each file:line

    def place(self, key: tuple, nbytes: int, name: str) -> _Buffer:
        buf = self.buffers.get(key)
        if buf is not None and buf.stop - buf.start >= nbytes:
            return buf
        line, n = name, self.names.get(name, 0) + 1
        if buf is not None:
            name = buf.name
        elif n > 1:  # a new allocation on a line that has one already gets a number: auto@k.py:14#2
            name = f"{name}#{n}"
        start = (self.low - nbytes) // 32 * 32  # UB operands are 32 B aligned (AD-API 通用说明和约束.md)
        used = self.core.pipe.ub_used() if self.core.pipe is not None else 0
        if start < used:
            raise self.core.error(
                "LocalTensorAuto", f"{name} needs {nbytes} B of UB but only {max(0, self.low - used)} B are left below "
                f"the {len(self.buffers)} auto tensors and above TPipe's {used} B (each LocalTensorAuto call pyasc "
                f"traces is a buffer of its own: a call in asc.static_range or in a plain helper's loop is one per "
                f"iteration; one in a range / asc.range loop is one for all iterations)", kind="ub-overflow")
        self.low = start
        if buf is None:
            self.names[line] = n
        buf = self.buffers[key] = _Buffer(start, start + nbytes, name)
        return buf

    def _touched(self, accesses) -> list[_Buffer]:
        return [b for b in self.buffers.values()
                if any(a.mem is self.space and a.start < b.stop and b.start < a.stop for a in accesses)]

    def before(self, op: str, pipe: Pipe, reads, writes, where: str) -> None:
        """Record the syncs the instruction about to be recorded needs, then note its accesses."""
        for buf in self._touched(reads):
            if buf.writer and buf.writer[0] is not pipe and pipe not in buf.synced:
                self._pair(buf.writer[0], pipe, *buf.writer[1:])
                buf.synced.add(pipe)
        written = self._touched(writes)
        for buf in written:
            if buf.writer and buf.writer[0] is not pipe and pipe not in buf.synced:
                self._pair(buf.writer[0], pipe, *buf.writer[1:])
            for reader, (at, index) in buf.readers.items():
                if reader is not pipe:
                    self._pair(reader, pipe, at, index)
        me = len(self.core.instrs)  # the index the instruction gets once its syncs are recorded
        for buf in self._touched(reads):
            buf.readers[pipe] = (where, me)  # the free after the last read (the queue's free_tensor)
        for buf in written:
            buf.writer, buf.readers, buf.synced = (pipe, where, me), {}, set()

    def _pair(self, src: Pipe, dst: Pipe, producer: str, index: int) -> None:
        # the set stands right after the producer, as pyasc's enque after the writer (fusekit.hb reads the index)
        self.events += 1
        event = (AUTO_EVENT, f"{src.value}_{dst.value}", self.events, producer, index)
        self.core.record("auto_set_flag", src, sync=Sync(SyncKind.SET, src, dst, event))
        self.core.record("auto_wait_flag", dst, sync=Sync(SyncKind.WAIT, src, dst, event))


def state(core) -> AutoState:
    if core.auto is None:
        core.auto = AutoState(core)
        core.observe(hook)  # from now on every instruction may need syncs
    return core.auto


class LocalTensorAuto:
    """``asc.LocalTensorAuto(dtype, shape)``: a UB tensor of ``prod(shape)`` elements whose
    synchronisation is inserted automatically (see the module docstring for where and why).

    The result is a plain :class:`LocalTensor` (every instruction takes it as one); its ``owner`` is
    the auto buffer, so sub-tensors (``t[64:]``) stay auto-synced.

    Args:
        dtype: element type (``asc.float32``, or a GM argument's ``.dtype``).
        shape: an element count or a list of dimensions.

    Raises:
        KernelError: outside a kernel; a non-positive or non-integer shape; UB exhausted (kind ``ub-overflow``).
    """

    def __new__(cls, dtype, shape) -> LocalTensor:
        core, op = current("LocalTensorAuto"), "LocalTensorAuto"
        dtype = dtypes.as_dtype(dtype)
        dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if not dims or any(isinstance(d, bool) or not hasattr(d, "__index__") or int(d) <= 0 for d in dims):
            raise core.error(op, f"LocalTensorAuto(dtype, shape) needs positive integer dimensions, got {shape!r}")
        length = math.prod(int(d) for d in dims)
        frame = kernel_frame()
        name = f"auto@{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}" if frame else "auto"
        auto = state(core)
        buf = auto.place(allocation(auto, frame), length * dtype.sizeof(), name)
        return LocalTensor.at(core, buf.start, length, dtype, name, owner=buf, space=auto.space)


_JIT_CALL = KernelFunction.__call__.__code__  # an @asc.jit helper called from a kernel


def allocation(auto: AutoState, frame) -> tuple:
    """Which pyasc allocation the ``LocalTensorAuto`` call made from ``frame`` is (module docstring): the same
    tuple for the iterations of a traced loop, a different one for every other call.

    The kernel's frames are ``frame`` and its callers up to the launch (fusekit frames but ``@asc.jit`` helper
    calls end the walk). A frame is ``@asc.jit`` code when fusekit called it (the launch, or a jit helper's
    ``__call__``); the first plain-helper frame below the innermost jit frame is one traced execution of the
    helper call, so calls with one stack made in one such invocation are told apart by their count."""
    sites, helper, below = [], None, None
    f = frame
    while f is not None and not f.f_code.co_filename.startswith(ASC_DIR):
        sites.append((f.f_code, f.f_lasti))
        caller = f.f_back
        if caller is not None and caller.f_code.co_filename.startswith(ASC_DIR):  # f is jit code
            if helper is None:
                helper = below if below is not None else False
            if caller.f_code is not _JIT_CALL:
                break  # the kernel itself: the launch called it
            caller = caller.f_back  # past KernelFunction.__call__ to the jit helper's caller
        below = f
        f = caller
    key = (tuple(sites), tuple(auto.unrolled))
    if not helper:  # made in jit code: a traced loop repeats the same op
        return key
    if helper is not auto.helper:  # a new traced execution of a plain helper
        auto.helper, auto.calls = helper, {}
    n = auto.calls[key] = auto.calls.get(key, 0) + 1
    return key + (n,)


def static_range(*args):
    """pyasc's ``asc.static_range(stop)`` / ``(start, stop[, step])``: unrolled at trace time
    (``codegen/function_visitor.py`` ``handle_static_range``), so its index is a Python int and each
    iteration's ``LocalTensorAuto`` calls are allocations of their own (:func:`allocation`)."""
    loop = builtins.range(*args)
    core = running_core()
    return iter(loop) if core is None else _unrolled(state(core).unrolled, loop)


def _unrolled(stack: list, loop):
    depth = len(stack)
    stack.append(0)
    try:
        for n, i in enumerate(loop):
            stack[depth] = n
            yield i
    finally:
        del stack[depth:]


def hook(core, op: str, pipe: Pipe, reads, writes, sync) -> None:
    """A ``Core.observe`` observer, registered with the core's first auto tensor: before an instruction is
    appended, insert the automatic syncs it needs."""
    auto = core.auto
    if auto is None or sync is not None or not auto.buffers:
        return
    frame = kernel_frame()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else "?"
    auto.before(op, pipe, reads, writes, where)


def is_auto(instr: Instr) -> bool:
    """Whether ``instr`` is a sync fusekit inserted for ``LocalTensorAuto``."""
    return instr.sync is not None and instr.sync.event[:1] == (AUTO_EVENT,)


def inserted(trace: Trace, core: int = 0) -> list[str]:
    """The automatic syncs of one core, one line each:
    ``set_flag(MTE2_V) after x.py:12 -> wait_flag before x.py:20``."""
    out = []
    for instr in trace.cores[core]:
        if is_auto(instr) and instr.sync.kind is SyncKind.WAIT:
            event, producer = instr.sync.event[1], instr.sync.event[3]
            out.append(f"set_flag/wait_flag({event}): after {producer} -> before {instr.where}")
    return out


def summary(trace: "Trace | None") -> list[str]:
    """The automatic syncs of a launch for a report, one line per distinct (event, producer line,
    consumer line) over all cores, with how often it was placed and the two source lines it orders."""
    import linecache
    import os

    def show(where: str) -> str:
        path, _, line = where.rpartition(":")
        text = linecache.getline(path, int(line)).strip() if line.isdigit() else ""
        return f"{os.path.basename(path)}:{line} ({text})" if text else f"{os.path.basename(path)}:{line}"

    counts: dict[tuple, int] = {}
    for instr in (trace or ()):
        if is_auto(instr) and instr.sync.kind is SyncKind.WAIT:
            key = (instr.sync.event[1], instr.sync.event[3], instr.where)
            counts[key] = counts.get(key, 0) + 1
    return [f"  set_flag/wait_flag {event}: after {show(producer)} -> before {show(consumer)}"
            + (f" (x{n})" if n > 1 else "") for (event, producer, consumer), n in counts.items()]
