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
from .tensor import LocalTensor
from .trace import Pipe, Sync, SyncKind

MAX_BUFFERS_PER_PIPE = 64
MAX_BUFFERS_PER_QUEUE = 8


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
        self.used = 0          # UB bytes handed out
        self.buffers = 0       # buffers handed out
        self.layout: list[str] = []

    def init_buffer(self, que: "TQue | None" = None, num: int | None = None, len: int | None = None,
                    buf: "TBuf | None" = None) -> None:
        """Give a queue ``num`` buffers of ``len`` bytes (``init_buffer(que=q, num=2, len=4096)``), or a
        TBuf ``num`` bytes (``init_buffer(buf=b, num=4096)``), as pyasc spells both forms.

        Raises:
            KernelError: UB capacity or buffer count exceeded (message: bytes asked, bytes left), or
                the arguments do not form either call.
        """
        core, op = self.core, "init_buffer"
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
