"""The TPipe / TQue / TBuf framework: UB allocation and the queues' implicit synchronisation.

Rules (AD-API TPipe/InitBuffer.md, AD ``kernel_tpipe_impl.h``, AD-G TPipe-TQue框架编程原理.md):
- ``init_buffer`` rounds each buffer up to 32 B; buffers are laid out one after another in UB;
  more than the SoC's UB, more than 64 buffers per TPipe, or more than 8 buffers in one queue fail.
- A queue of ``num`` buffers hands them out with ``alloc_tensor``; a buffer returns with
  ``free_tensor``. ``enque`` passes a filled buffer from the producer pipe to the consumer pipe,
  ``deque`` takes the oldest. On the NPU, allocating from a queue with no free buffer or dequeuing
  an empty queue waits forever: here both raise KernelError.
"""

from __future__ import annotations

import enum
import numbers
from collections import deque as _fifo

from . import dtypes
from .names import unknown
from .runtime import KernelError, current, kernel_frame, running_core
from .scalar import int32
from .tensor import LocalTensor
from .trace import Pipe, Sync, SyncKind

MAX_BUFFERS_PER_PIPE = 64
MAX_BUFFERS_PER_QUEUE = 8
QUE_MAX_EVENT = 8  # event ids per HardEvent (asc-devkit impl/basic_api/kernel_macros.h)


class TPosition(enum.Enum):
    """Logical memory positions (AD-API TPosition). The vector side uses GM, VECIN, VECOUT, VECCALC."""

    GM = "GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"
    A1 = "A1"
    A2 = "A2"
    B1 = "B1"
    B2 = "B2"
    C1 = "C1"
    C2 = "C2"
    CO1 = "CO1"
    CO2 = "CO2"


# (producer pipe, consumer pipe) of a queue at each position: data enters VECIN by MTE2 and is
# read by V; VECOUT is written by V and drained by MTE3 (AD-G TPipe-TQue框架编程原理.md).
_QUEUE_PIPES = {
    TPosition.VECIN: (Pipe.MTE2, Pipe.V),
    TPosition.VECOUT: (Pipe.V, Pipe.MTE3),
    TPosition.VECCALC: (Pipe.V, Pipe.V),
}


def _local_name(obj, fallback: str) -> str:
    """The kernel's variable name for ``obj`` (for messages), found in the calling kernel frame."""
    frame = kernel_frame()
    if frame is not None:
        for name, value in frame.f_locals.items():
            if value is obj:
                return name
    return fallback


class _Named:
    """Turns a missing attribute (a C++ spelling, a call Ascend C lacks) into a clear KernelError."""

    def __getattr__(self, name: str):
        message = unknown(type(self).__name__, name, dir(type(self)))
        core = running_core()
        if name.startswith("__") or core is None:
            raise AttributeError(message)
        raise core.error(name, message)


class TPipe(_Named):
    """``AscendC::TPipe``: owns the core's UB and hands it to queues and buffers."""

    def __init__(self):
        core = current("TPipe")
        if core.pipe is not None:
            raise core.error("TPipe", "a second TPipe in one kernel: an Ascend C kernel has exactly one TPipe; "
                                      "pass the first one to the code that needs it")
        core.pipe = self
        self.core = core
        self._fresh()

    def _fresh(self) -> None:
        """The state the constructor's Init leaves: no UB handed out, every event id free."""
        self.used = 0          # UB bytes handed out
        self.buffers = 0       # buffers handed out
        self.layout: list[str] = []
        self.live = True       # False between destroy() and init()
        self.events: dict = {}  # HardEvent -> event ids taken by alloc_event_id

    # -- lifetime (AD-API 资源管理/TPipe/Init.md, Destroy.md, Reset.md) --
    def init(self) -> None:
        """``Init``: (re)initialise memory and event ids; the constructor already did it, so only needed after
        :meth:`destroy` ("每次复用需要先Destroy释放资源，再调用init重新初始化")."""
        if self.live:
            raise self.core.error("init", "this TPipe is already initialised (its constructor calls Init); call "
                                          "pipe.destroy() first to reuse it")
        self._fresh()

    def destroy(self) -> None:
        """``Destroy``: release every buffer and event id. The queues' buffers must all be free; Destroy waits for
        every pipe first (a ``PipeBarrier<PIPE_ALL>``: DestroyWithoutPipeAll.md is the variant without it)."""
        self._release("destroy")
        self.live = False

    def reset(self) -> None:
        """``Reset``: release everything and return to the state after construction (Reset.md)."""
        self._release("reset")
        self._fresh()

    def _release(self, op: str) -> None:
        core = current(op)
        for que in core.queues:
            held = [slot for slot in que.slots if slot.state != "free"]
            if held and que.pipe is self:
                raise core.error(op, f"{que.name}[{held[0].index}] is still {held[0].state} (at {held[0].where}); "
                                     f"free_tensor every buffer before pipe.{op}()", tensor=que.name, kind="illegal-free")
        for p in (Pipe.V, Pipe.MTE2, Pipe.MTE3):  # later buffers reuse the UB: earlier accesses must be done
            core.record(op, p, sync=Sync(SyncKind.BARRIER, p, p, ("PIPE_ALL",)))
        for que in core.queues:
            if que.pipe is self:
                que.detach()
        for buf in core.__dict__.get("tbufs", ()):
            if buf.pipe is self:
                buf.pipe = None

    # -- event ids (AD-API 资源管理/TPipe/AllocEventID.md, FetchEventID.md, ReleaseEventID.md) --
    def alloc_event_id(self, event=None) -> int:
        """``AllocEventID<event>``: the lowest free id of ``event`` (default HardEvent.V_S, as pyasc), now taken
        until :meth:`release_event_id`. int32.

        Raises:
            KernelError: all ``QUE_MAX_EVENT`` (8) ids of the event are taken (kernel_tpipe_impl: ``sff0`` of the
                occupancy bits, asserted below QUE_MAX_EVENT).
        """
        event, taken = self._event_pool("alloc_event_id", event)
        free = self._first_free("alloc_event_id", event, taken)
        taken.add(free)
        return int32(free)

    def fetch_event_id(self, event=None) -> int:
        """``FetchEventID<event>``: the id :meth:`alloc_event_id` would return, without taking it. int32."""
        event, taken = self._event_pool("fetch_event_id", event)
        return int32(self._first_free("fetch_event_id", event, taken))

    def release_event_id(self, id: int, event=None) -> None:  # noqa: A002 - pyasc's parameter name
        """``ReleaseEventID<event>(id)``: give back an id taken by :meth:`alloc_event_id`."""
        event, taken = self._event_pool("release_event_id", event)
        if id not in taken:
            raise self.core.error("release_event_id", f"event id {id!r} of HardEvent.{event.name} is not allocated "
                                                      "(alloc_event_id returns the ids to release)")
        taken.discard(int(id))

    def _event_pool(self, op: str, event):
        from .sync import HardEvent

        event = HardEvent.V_S if event is None else event
        if not isinstance(event, HardEvent):
            raise self.core.error(op, f"expected an asc.HardEvent (e.g. HardEvent.V_S), got {event!r}")
        return event, self.events.setdefault(event, set())

    def _first_free(self, op: str, event, taken: set) -> int:
        free = next((i for i in range(QUE_MAX_EVENT) if i not in taken), None)
        if free is None:
            raise self.core.error(op, f"all {QUE_MAX_EVENT} event ids of HardEvent.{event.name} are allocated; "
                                      "release_event_id each one after its wait_flag")
        return free

    def init_buffer(self, que: "TQue | None" = None, num: int | None = None, len: int | None = None,
                    buf: "TBuf | None" = None) -> None:
        """Give a queue ``num`` buffers of ``len`` bytes (``init_buffer(que=q, num=2, len=4096)``), or a
        TBuf ``num`` bytes (``init_buffer(buf=b, num=4096)``), as pyasc spells both forms.

        Raises:
            KernelError: UB capacity or buffer count exceeded (message: bytes asked, bytes left), or
                the arguments do not form either call.
        """
        core, op = self.core, "init_buffer"
        if not self.live:
            raise core.error(op, "this TPipe was destroyed: call pipe.init() before giving out buffers again")
        if (que is None) == (buf is None):
            raise core.error(op, "pass either que=<TQue>, num=<buffers>, len=<bytes> or buf=<TBuf>, num=<bytes>")
        target = que if que is not None else buf
        if target.pipe is not None:
            raise core.error(op, f"{target.name} already has its buffers")
        if que is not None:
            count, length = num, len
            if not isinstance(count, numbers.Integral) or not 1 <= count <= MAX_BUFFERS_PER_QUEUE:
                raise core.error(op, f"num={count!r}: a queue takes 1 to {MAX_BUFFERS_PER_QUEUE} buffers", kind="ub-overflow")
        else:
            if len is not None:
                raise core.error(op, "a TBuf's size is given as num=<bytes>: init_buffer(buf=b, num=4096), as pyasc "
                                     "1.1.1 spells it (it rejects len= for a TBuf)")
            count, length = 1, num
        if not isinstance(length, numbers.Integral) or length <= 0:
            raise core.error(op, f"buffer length must be a positive number of bytes, got {length!r}")
        target.name = _local_name(target, target.name)
        rounded = -(-length // 32) * 32
        asked = rounded * count
        left = core.soc.ub_bytes - self.used
        if asked > left:
            raise core.error(op, f"{target.name}: {count} x {rounded} B = {asked} B of UB asked but only {left} B "
                                 f"left of {core.soc.ub_bytes} B on {core.soc.name} (already: "
                                 f"{', '.join(self.layout) or 'nothing'}); shrink the tile length or BUFFER_NUM", kind="ub-overflow")
        if self.buffers + count > MAX_BUFFERS_PER_PIPE:
            raise core.error(op, f"{target.name}: {self.buffers + count} buffers in one TPipe; at most "
                                 f"{MAX_BUFFERS_PER_PIPE} are allowed", kind="ub-overflow")
        count, rounded = int(count), int(rounded)
        target.attach(self, [self.used + i * rounded for i in range(count)], rounded)
        self.used += asked
        self.buffers += count
        self.layout.append(f"{target.name} {count} x {rounded} B")


class _Slot:
    """One buffer of a queue and where it is in its life: free, allocated, enqueued, dequeued."""

    __slots__ = ("queue", "index", "addr", "state", "file", "line")

    def __init__(self, queue: "TQue", index: int, addr: int):
        self.queue, self.index, self.addr, self.state, self.file, self.line = queue, index, addr, "free", "", 0

    @property
    def where(self) -> str:
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"


class TQue(_Named):
    """``AscendC::TQue<pos, depth>``: buffers passed between pipes with implicit synchronisation."""

    def __init__(self, position: TPosition, depth: int = 1):
        core = current("TQue")
        if position not in _QUEUE_PIPES:
            raise core.error("TQue", f"position {position} is not a vector UB position: use TPosition.VECIN, "
                                     "VECOUT or VECCALC (fusekit simulates the vector core)")
        self.core, self.position, self.depth = core, position, depth
        self.producer, self.consumer = _QUEUE_PIPES[position]
        self.qid = len(core.queues)
        self.name = f"TQue#{self.qid}"
        self.pipe = None
        self.slots: list[_Slot] = []
        self.nbytes = 0
        self.free: _fifo[_Slot] = _fifo()
        self.queued: _fifo[_Slot] = _fifo()
        core.queues.append(self)

    def attach(self, pipe: TPipe, addrs: list[int], nbytes: int) -> None:
        self.pipe, self.nbytes = pipe, nbytes
        self.slots = [_Slot(self, i, a) for i, a in enumerate(addrs)]
        self.free.extend(self.slots)

    def detach(self) -> None:
        """The TPipe was destroyed or reset: the queue has no buffers until init_buffer again."""
        self.pipe, self.slots, self.nbytes = None, [], 0
        self.free.clear()
        self.queued.clear()

    # -- queries (scalar state of the queue; AD-API TQue/HasIdleBuffer.md and friends) --
    def has_idle_buffer(self) -> bool:
        """``HasIdleBuffer``: whether alloc_tensor would find a free buffer."""
        return bool(self._ready("has_idle_buffer") and self.free)

    def has_tensor_in_que(self) -> bool:
        """``HasTensorInQue``: whether a deque would find an enqueued tensor."""
        return bool(self._ready("has_tensor_in_que") and self.queued)

    def get_tensor_count_in_que(self) -> int:
        """``GetTensorCountInQue``: tensors enqueued and not yet dequeued (int32)."""
        self._ready("get_tensor_count_in_que")
        return int32(len(self.queued))

    def vacant_in_que(self) -> bool:
        """``VacantInQue``: whether the queue can take another enque (fewer than ``depth`` queued)."""
        self._ready("vacant_in_que")
        return len(self.queued) < self.depth

    def free_all_event(self) -> None:
        """``FreeAllEvent``: the queue's pending events are released; queues here hold no event ids of their own."""
        self._ready("free_all_event")

    def alloc_tensor(self, dtype) -> LocalTensor:
        """Take a free buffer (waits on the NPU until its previous readers are done)."""
        core, op = self._ready("alloc_tensor")
        if not self.free:
            held = ", ".join(f"[{s.index}] {s.state} at {s.where}" for s in self.slots)
            raise core.error(op, f"{self.name}: all {len(self.slots)} buffers are in use ({held}); on the NPU this "
                                 "alloc waits forever. free_tensor each buffer after its last use", tensor=self.name,
                             pipes=(self.consumer.value, self.producer.value), kind="deadlock")
        slot = self.free.popleft()
        self._move(core, slot, "allocated")
        core.record(op, self.producer, sync=Sync(SyncKind.WAIT, self.consumer, self.producer, ("free", self.qid, slot.index)))
        return self._tensor(slot, dtype)

    def enque(self, tensor: LocalTensor) -> None:
        """Hand a filled buffer to the consumer pipe (a set from producer to consumer)."""
        core, op = self._ready("enque")
        slot = self._slot_of(core, op, tensor)
        if slot.state != "allocated":
            raise core.error(op, f"{tensor.name} is {slot.state} (at {slot.where}); only a tensor from alloc_tensor "
                                 "can be enqueued, once", tensor=tensor.name, kind="illegal-enque")
        if len(self.queued) >= self.depth:
            raise core.error(op, f"{self.name} already holds {len(self.queued)} tensor(s), its depth; deque before "
                                 "enqueuing more or declare a deeper TQue", tensor=tensor.name,
                             pipes=(self.consumer.value, self.producer.value), kind="deadlock")
        self._move(core, slot, "enqueued")
        self.queued.append(slot)
        core.record(op, self.producer, sync=Sync(SyncKind.SET, self.producer, self.consumer, ("data", self.qid, slot.index)))

    def deque(self, dtype) -> LocalTensor:
        """Take the oldest enqueued buffer (a wait for the producer pipe)."""
        core, op = self._ready("deque")
        if not self.queued:
            raise core.error(op, f"{self.name} is empty: nothing was enqueued (deadlock: on the NPU this deque waits "
                                 "forever). Every deque needs an earlier enque", tensor=self.name,
                             pipes=(self.producer.value, self.consumer.value), kind="deadlock")
        slot = self.queued.popleft()
        self._move(core, slot, "dequeued")
        core.record(op, self.consumer, sync=Sync(SyncKind.WAIT, self.producer, self.consumer, ("data", self.qid, slot.index)))
        return self._tensor(slot, dtype)

    def free_tensor(self, tensor: LocalTensor) -> None:
        """Return a buffer to the queue once its last reader is issued (a set back to the producer)."""
        core, op = self._ready("free_tensor")
        slot = self._slot_of(core, op, tensor)
        if slot.state == "free":
            raise core.error(op, f"double free: {tensor.name} was already freed at {slot.where}", tensor=tensor.name, kind="double-free")
        if slot.state == "enqueued":
            raise core.error(op, f"{tensor.name} is still enqueued (at {slot.where}): deque it before freeing",
                             tensor=tensor.name, kind="illegal-free")
        self._move(core, slot, "free")
        self.free.append(slot)
        core.record(op, self.consumer, sync=Sync(SyncKind.SET, self.consumer, self.producer, ("free", self.qid, slot.index)))

    def check_released(self) -> None:
        """At kernel end every buffer must be free (a held tensor is a leak; msSanitizer memcheck)."""
        held = [s for s in self.slots if s.state != "free"]
        if held:
            s = held[0]
            raise KernelError("kernel end", f"{self.name}[{s.index}] is still {s.state} (it was {s.state} here and never "
                                            "freed): every alloc_tensor needs a free_tensor", core=self.core.idx,
                              file=s.file, line=s.line, tensor=f"{self.name}[{s.index}]", kind="leak")

    # -- helpers --
    def _ready(self, op: str):
        core = current(op)
        if self.pipe is None:
            self.name = _local_name(self, self.name)
            raise core.error(op, f"{self.name} has no buffers: call pipe.init_buffer(que={self.name}, num=..., len=...) first",
                             tensor=self.name)
        return core, op

    def _slot_of(self, core, op: str, tensor: LocalTensor) -> _Slot:
        if not isinstance(tensor, LocalTensor):
            raise core.error(op, f"expected a LocalTensor, got {type(tensor).__name__}")
        owner = tensor.owner
        if isinstance(owner, _Slot) and owner.queue is not self:
            raise core.error(op, f"{tensor.name} belongs to {owner.queue.name}, not {self.name}", tensor=tensor.name, kind="foreign-tensor")
        if isinstance(owner, _Slot) and owner.addr == tensor.addr:
            return owner
        raise core.error(op, f"{tensor.name} is not a buffer of {self.name}: pass the tensor alloc_tensor/deque returned, "
                             "not a sub-tensor", tensor=tensor.name, kind="foreign-tensor")

    def _move(self, core, slot: _Slot, state: str) -> None:
        frame = kernel_frame()
        slot.state = state
        slot.file, slot.line = (frame.f_code.co_filename, frame.f_lineno) if frame else ("?", 0)

    def _tensor(self, slot: _Slot, dtype) -> LocalTensor:
        dtype = dtypes.as_dtype(dtype)
        return LocalTensor.at(self.core, slot.addr, self.nbytes // dtype.sizeof(), dtype, f"{self.name}[{slot.index}]", slot)


class TBuf(_Named):
    """``AscendC::TBuf<pos>``: a raw UB buffer; never enqueued or freed, so it carries no implicit sync."""

    def __init__(self, position: TPosition = TPosition.VECCALC):
        core = current("TBuf")
        core.__dict__.setdefault("tbufs", []).append(self)  # so TPipe.destroy / reset can detach it
        self.core, self.position = core, position
        self.name = "TBuf"
        self.pipe = None
        self.addr = self.nbytes = 0

    def attach(self, pipe: TPipe, addrs: list[int], nbytes: int) -> None:
        self.pipe, self.addr, self.nbytes = pipe, addrs[0], nbytes

    def get(self, dtype, len: int | None = None) -> LocalTensor:
        """The buffer as a LocalTensor of ``len`` elements (all of it by default)."""
        core = current("get")
        if self.pipe is None:
            raise core.error("get", f"{self.name} has no memory: call pipe.init_buffer(buf={self.name}, num=<bytes>) first")
        dtype = dtypes.as_dtype(dtype)
        capacity = self.nbytes // dtype.sizeof()
        length = capacity if len is None else len
        if not 0 <= length <= capacity:
            raise core.error("get", f"{self.name}.get(len={length}) but the buffer holds {capacity} x {dtype.name}", kind="out-of-bounds")
        return LocalTensor.at(core, self.addr, length, dtype, self.name, self)


def get_tpipe_ptr() -> TPipe:
    """``GetTPipePtr``: the core's TPipe (set when the kernel constructs it; GetTPipePtr.md).

    Raises:
        KernelError: the kernel has not constructed a TPipe yet.
    """
    core = current("get_tpipe_ptr")
    if core.pipe is None:
        raise core.error("get_tpipe_ptr", "no TPipe yet: construct one (pipe = asc.TPipe()) before get_tpipe_ptr()")
    return core.pipe
