"""The TPipe / TQue / TBuf framework: UB allocation and the queues' implicit synchronisation.

Rules (AD-API TPipe/InitBuffer.md, AD ``kernel_tpipe_impl.h``, AD-G TPipe-TQue框架编程原理.md):
- ``init_buffer`` rounds each buffer up to 32 B; buffers are laid out one after another in UB;
  more than the SoC's UB, more than 64 buffers per TPipe, or more than 8 buffers in one queue fail.
- A queue of ``num`` buffers hands them out with ``alloc_tensor``; a buffer returns with
  ``free_tensor``. ``enque`` passes a filled buffer from the producer pipe to the consumer pipe,
  ``deque`` takes the oldest. On the NPU, allocating from a queue with no free buffer or dequeuing
  an empty queue waits forever: here both raise KernelError.
- ``TQueBind<src, dst, depth>`` is the general queue (``TQue<pos>`` = ``TQueBind<pos, pos>``); its pipes come
  from the two positions (TQueBind简介.md, 表1). ``TBufPool`` divides a UB region by hand and lets stages reuse it
  (TBufPool简介.md); ``LocalMemAllocator`` places tensors without a TPipe (LocalMemAllocator简介.md).
"""

from __future__ import annotations

import enum
import math
import numbers
from collections import deque as _fifo

from fusekit.machine import PIPES, POSITIONS, position_space, queue_pipes, space_named

from . import corestate, dtypes
from .names import unknown
from .runtime import KernelError, current, kernel_frame, running_core
from .scalar import int32
from .tensor import LocalTensor, space_of
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


# (producer pipe, consumer pipe) of a queue at each position, from the machine's position rows and data paths
# (fusekit.machine.positions): data enters VECIN by MTE2 and is read by V; VECOUT is written by V and drained by MTE3
# (AD-G TPipe-TQue框架编程原理.md); A1 is filled by MTE2 and drained by MTE1, CO1 written by M and drained by FIX.
# TPipe lays each queue out in its position's space (the UB, L1, L0A ...)
_QUEUE_PIPES = {TPosition[name]: queue_pipes(name) for name in POSITIONS}
# the UB's positions: what TBufPool and LocalMemAllocator divide (fusekit pools the UB only)
_UB_POSITIONS = frozenset(p for p in _QUEUE_PIPES if position_space(p.value) is space_named("UB"))


def _bound_to_gm(position: TPosition, end: str) -> bool:
    """Whether a queue at ``position`` is filled from (``end`` "fed_from") or drained to ("drains_to") GM."""
    return getattr(POSITIONS[position.value], end) is position_space(TPosition.GM.value)


# TQueBind<src, dst> (TQueBind简介.md, 表1): GM->VECIN is TQue<VECIN>, VECOUT->GM is TQue<VECOUT> (a position bound
# to the GM it is filled from or drained to); VECIN->VECOUT binds input and output to one buffer: filled as VECIN is
# (MTE2) and drained as VECOUT is (MTE3), with no vector work in between
_BIND_PIPES = {
    **{(p, p): pipes for p, pipes in _QUEUE_PIPES.items()},
    **{(TPosition.GM, p): pipes for p, pipes in _QUEUE_PIPES.items() if _bound_to_gm(p, "fed_from")},
    **{(p, TPosition.GM): pipes for p, pipes in _QUEUE_PIPES.items() if _bound_to_gm(p, "drains_to")},
    (TPosition.VECIN, TPosition.VECOUT): (_QUEUE_PIPES[TPosition.VECIN][0], _QUEUE_PIPES[TPosition.VECOUT][1]),
}
# the pipes that read or write the queues' buffers (V, MTE2, MTE3), in pipe-table order
_BUFFER_PIPES = tuple(p for p in PIPES if any(p in pipes for pipes in _QUEUE_PIPES.values()))


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
        if core.allocator is not None:
            raise core.error("TPipe", "this kernel places UB tensors with a LocalMemAllocator, which cannot be mixed "
                                      "with a TPipe (LocalMemAllocator简介.md): use one or the other")
        if core.pipe is not None and core.pipe.live:  # after Destroy a new TPipe may take the UB (asc-devkit
            # examples/01_simd_cpp_api/03_basic_api/07_tpipe_tque/tpipe_reuse: "重复申请需要前一个对象先Destroy")
            raise core.error("TPipe", "a second TPipe while the first is live: a core has one TPipe at a time; pass "
                                      "the first one to the code that needs it, or Destroy it before making another")
        core.pipe = self
        self.core = core
        corestate.init_soc_state(core)  # the constructor calls InitSocState (AD kernel_tpipe_impl.h)
        self._fresh()

    def _fresh(self) -> None:
        """The state the constructor's Init leaves: no UB handed out, every event id free."""
        self.used: dict = {}   # local space -> bytes handed out
        self.buffers = 0       # buffers handed out
        self.layout: list = []  # (space, "name count x bytes") per hand-out
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
        corestate.init_soc_state(self.core)  # TPipe::Reset calls InitSocState too (AD kernel_tpipe_impl.h)
        self._fresh()

    def _release(self, op: str) -> None:
        core = current(op)
        for que in core.queues:
            held = [slot for slot in que.slots if slot.state != "free"]
            if held and que.pipe is self:
                raise core.error(op, f"{que.name}[{held[0].index}] is still {held[0].state} (at {held[0].where}); "
                                     f"free_tensor every buffer before pipe.{op}()", tensor=que.name, kind="illegal-free")
        for p in (p for p in _BUFFER_PIPES if p in core.kind.pipes):  # later buffers reuse the memory: earlier
            # accesses must be done
            core.record(op, p, sync=Sync(SyncKind.BARRIER, p, p, ("PIPE_ALL",)))
        for que in core.queues:
            if que.pipe is self:
                que.detach()
        for buf in core.tbufs:
            if buf.pipe is self:
                buf.pipe = None
        for pool in core.bufpools:
            if pool.pipe is self:
                pool.detach()

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

    def get_base_addr(self, logic_pos: TPosition | None = None) -> int:
        """``GetBaseAddr(logicPos)``: base address of the position's memory, for offsets of tensors in it
        (TPipe/GetBaseAddr.md; CPU debug only on the NPU). Every vector position is in UB, whose addresses
        here start at 0 (``LocalTensor.get_phy_addr``): 0 (int32)."""
        core = current("get_base_addr")
        if logic_pos is not None and logic_pos not in _UB_POSITIONS:
            raise core.error("get_base_addr", f"logic_pos {logic_pos}: fusekit's positions are VECIN, VECOUT and "
                                              "VECCALC (UB)", kind="unsupported")
        return int32(0)

    def init_buf_pool(self, buf_pool: "TBufPool", len: int = 0, share_buf: "TBufPool | None" = None) -> None:  # noqa: A002
        """``InitBufPool(bufPool, len[, shareBuf])``: carve a TBufPool of ``len`` bytes (rounded up to 32 B) out of
        the TPipe's UB, or, with ``share_buf``, give it ``share_buf``'s start address (TPipe/InitBufPool.md).

        Raises:
            KernelError: UB exceeded; ``len`` larger than ``share_buf``'s; positions of different memories.
        """
        _init_pool(self.core, self, buf_pool, len, share_buf)

    def _carve(self, core, op: str, name: str, nbytes: int) -> int:
        """Take ``nbytes`` of the TPipe's UB for ``name``; the start address."""
        return self.take(core, op, space_named("UB"), name, nbytes)

    def ub_used(self) -> int:
        """UB bytes handed out (the first byte after the TPipe's buffers in the UB)."""
        return self.used.get(space_named("UB"), 0)

    def take(self, core, op: str, space, name: str, nbytes: int, shape: str = "", advice: str = "") -> int:
        """Take ``nbytes`` of ``space`` for ``name``; the start address. ``shape``: the layout entry's "count x
        bytes" (queues), said before the total.

        Raises:
            KernelError (ub-overflow): fewer than ``nbytes`` left in the space on this SoC.
        """
        size, used = space.size(core.soc), self.used.get(space, 0)
        if nbytes > size - used:
            mine = [text for where, text in self.layout if where is space]
            raise core.error(op, f"{name}: {shape + ' = ' if shape else ''}{nbytes} B of {space.name} asked but only "
                                 f"{size - used} B left of {size} B on {core.soc.name} (already: "
                                 f"{', '.join(mine) or 'nothing'}){advice}", kind="ub-overflow")
        self.used[space] = used + nbytes
        self.layout.append((space, f"{name} {shape or f'{nbytes} B'}"))
        return used

    def init_buffer(self, que: "TQue | None" = None, num: int | None = None, len: int | None = None,
                    buf: "TBuf | None" = None) -> None:
        """Give a queue ``num`` buffers of ``len`` bytes (``init_buffer(que=q, num=2, len=4096)``), or a
        TBuf ``len`` bytes: ``init_buffer(buf=b, len=4096)`` as pyasc after 1.1.1 and TBufPool spell it,
        ``init_buffer(buf=b, num=4096)`` as pyasc 1.1.1's TPipe does, or ``init_buffer(b, 4096)``
        (pyasc's dispatcher picks the form by the first argument's type).

        Raises:
            KernelError: UB capacity or buffer count exceeded (message: bytes asked, bytes left), or
                the arguments do not form either call.
        """
        core, op = self.core, "init_buffer"
        if not self.live:
            raise core.error(op, "this TPipe was destroyed: call pipe.init() before giving out buffers again")
        que, buf = _by_type(que, buf)
        if (que is None) == (buf is None):
            raise core.error(op, "pass either que=<TQue>, num=<buffers>, len=<bytes> or buf=<TBuf>, len=<bytes>")
        target = que if que is not None else buf
        if target.pipe is not None:
            raise core.error(op, f"{target.name} already has its buffers")
        if que is not None:
            count, length = num, len
            if not isinstance(count, numbers.Integral) or not 1 <= count <= MAX_BUFFERS_PER_QUEUE:
                raise core.error(op, f"num={count!r}: a queue takes 1 to {MAX_BUFFERS_PER_QUEUE} buffers", kind="ub-overflow")
        else:
            count, length = 1, _tbuf_bytes(core, op, num, len)
        if not isinstance(length, numbers.Integral) or length <= 0:
            raise core.error(op, f"buffer length must be a positive number of bytes, got {length!r}")
        target.name = _local_name(target, target.name)
        space = target.space
        if space is None:  # a queue of the other core kind's memory in a mix kernel: it takes no memory here
            target.attach(self, [], 0)
            return
        rounded = -(-length // space.alignment) * space.alignment  # each buffer starts on its space's boundary
        if self.buffers + count > MAX_BUFFERS_PER_PIPE:
            raise core.error(op, f"{target.name}: {self.buffers + count} buffers in one TPipe; at most "
                                 f"{MAX_BUFFERS_PER_PIPE} are allowed", kind="ub-overflow")
        count, rounded = int(count), int(rounded)  # plain ints from here: addresses are not kernel scalars
        start = self.take(core, op, space, target.name, count * rounded, f"{count} x {rounded} B",
                           "; shrink the tile length or BUFFER_NUM")
        target.attach(self, [start + i * rounded for i in range(count)], rounded)
        self.buffers += count


def _by_type(que, buf):
    """(queue, TBuf) of an init_buffer call: a TBuf given first (positionally) is the TBuf form, as pyasc's
    OverloadDispatcher matches ``init_buffer(b, 4096)`` by type."""
    if isinstance(que, TBuf) and buf is None:
        return None, que
    return que, buf


def _tbuf_bytes(core, op: str, num, length):
    """A TBuf's bytes from ``init_buffer(buf=b, len=...)`` (pyasc after 1.1.1, TBufPool) or ``num=...``
    (pyasc 1.1.1's TPipe); both given must agree."""
    if num is not None and length is not None and num != length:
        raise core.error(op, f"a TBuf takes one size: len={length!r} and num={num!r} were both given; pass "
                             "init_buffer(buf=b, len=<bytes>)")
    return length if length is not None else num


class _Slot:
    """One buffer of a queue and where it is in its life: free, allocated, enqueued, dequeued."""

    __slots__ = ("queue", "index", "addr", "state", "file", "line", "freed")

    def __init__(self, queue: "TQue", index: int, addr: int):
        self.queue, self.index, self.addr, self.state, self.file, self.line = queue, index, addr, "free", "", 0
        self.freed = False  # a free_tensor set no alloc_tensor (or TBufPool.reset) has waited for yet

    @property
    def where(self) -> str:
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"


class TQueBind(_Named):
    """``AscendC::TQueBind<src, dst, depth>``: a queue between two logical positions (TQueBind简介.md, 表1). The
    vector paths: GM->VECIN (as TQue<VECIN>), VECOUT->GM (as TQue<VECOUT>), VECIN->VECOUT (MTE2 fills the buffer,
    MTE3 drains it, no vector work: input and output share one buffer), and X->X (as TQue<X>). ``depth`` 0 is for
    the in-place calls (alloc_tensor(tensor), deque(tensor)); the others need a depth >= 1 (TQueBind.alloc_tensor
    page, 约束说明). The cube's positions (A1, B1, C1, A2, B2, C2, CO1) take queues on an AIC core, in L1, L0A,
    L0B, the bias table and L0C, with the pipes their position rows give.
    """

    def __init__(self, src: TPosition = TPosition.VECIN, dst: TPosition = TPosition.VECIN, depth: int = 0,
                 mask: int = 0):
        core = current(type(self).__name__)
        pipes = _BIND_PIPES.get((src, dst))
        if pipes is None:
            raise core.error(type(self).__name__, f"{type(self).__name__}({src}, {dst}): fusekit simulates the paths "
                                                  "GM->VECIN, VECOUT->GM, VECIN->VECOUT and every position to itself "
                                                  "(TQueBind简介.md, 表1)", kind="unsupported")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise core.error(type(self).__name__, f"depth={depth!r}: a queue depth is an integer >= 0")
        position = src if dst is TPosition.GM else dst if src is TPosition.GM else src
        self.space, self.foreign = _space_or_later(core, type(self).__name__, position)
        self.core, self.position, self.depth, self.src, self.dst = core, position, depth, src, dst
        self.producer, self.consumer = pipes
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
        return bool(self._queued_ready("has_tensor_in_que") and self.queued)

    def get_tensor_count_in_que(self) -> int:
        """``GetTensorCountInQue``: tensors enqueued and not yet dequeued (int32)."""
        self._queued_ready("get_tensor_count_in_que")
        return int32(len(self.queued))

    def vacant_in_que(self) -> bool:
        """``VacantInQue``: whether the queue can take another enque (fewer than ``depth`` queued)."""
        self._queued_ready("vacant_in_que")
        return len(self.queued) < self.depth

    def free_all_event(self) -> None:
        """``FreeAllEvent``: the queue's pending events are released; queues here hold no event ids of their own."""
        self._queued_ready("free_all_event")

    def alloc_tensor(self, dtype=None, *, tensor: LocalTensor | None = None, _in_place: bool = False) -> LocalTensor:
        """Take a free buffer (waits on the NPU until its previous readers are done). ``alloc_tensor(tensor)`` (the
        in-place form, depth 0) points ``tensor`` at the buffer instead of returning one."""
        core, op = self._ready("alloc_tensor")
        dtype = tensor if tensor is not None else dtype
        if isinstance(dtype, LocalTensor):
            return self._in_place(core, op, dtype, self.alloc_tensor)
        if self.depth == 0 and type(self) is TQueBind and not _in_place:
            raise core.error(op, f"{self.name} has depth 0: alloc_tensor(dtype) needs a depth >= 1; with depth 0 use "
                                 "the in-place form alloc_tensor(tensor) (TQueBind alloc_tensor page, 约束说明)")
        if not self.free:
            held = ", ".join(f"[{s.index}] {s.state} at {s.where}" for s in self.slots)
            raise core.error(op, f"{self.name}: all {len(self.slots)} buffers are in use ({held}); on the NPU this "
                                 "alloc waits forever. free_tensor each buffer after its last use", tensor=self.name,
                             pipes=(self.consumer.value, self.producer.value), kind="deadlock")
        slot = self.free.popleft()
        frame = self._move(core, slot, "allocated")
        slot.freed = False
        core.record(op, self.producer, frame=frame,
                    sync=Sync(SyncKind.WAIT, self.consumer, self.producer, ("free", self.qid, slot.index)))
        return self._tensor(slot, dtype)

    def enque(self, tensor: LocalTensor, src_user_pos: TPosition | None = None,
              dst_user_pos: TPosition | None = None) -> None:
        """Hand a filled buffer to the consumer pipe (a set from producer to consumer). The user positions of
        pyasc's three-argument form only label the transfer."""
        core, op = self._ready("enque")
        _user_positions(core, op, src_user_pos, dst_user_pos)
        slot = self._slot_of(core, op, tensor)
        # EnQue takes a buffer from AllocTensor or from DeQue (a consumer may hand it on again): asc-devkit
        # impl/basic_api/kernel_tquebind_impl.h EnQue asserts state OCCUPIED or DEQUE; EnQue.md 约束说明: 无
        if slot.state not in ("allocated", "dequeued"):
            raise core.error(op, f"{tensor.name} is {slot.state} (at {slot.where}); only a tensor from alloc_tensor "
                                 "or deque can be enqueued, once", tensor=tensor.name, kind="illegal-enque")
        if len(self.queued) >= self.depth and not (self.depth == 0 and type(self) is TQueBind):  # depth 0: no FIFO
            raise core.error(op, f"{self.name} already holds {len(self.queued)} tensor(s), its depth; deque before "
                                 "enqueuing more or declare a deeper TQue", tensor=tensor.name,
                             pipes=(self.consumer.value, self.producer.value), kind="deadlock")
        frame = self._move(core, slot, "enqueued")
        self.queued.append(slot)
        core.record(op, self.producer, frame=frame,
                    sync=Sync(SyncKind.SET, self.producer, self.consumer, ("data", self.qid, slot.index)))

    def deque(self, dtype=None, src_user_pos: TPosition | None = None, dst_user_pos: TPosition | None = None, *,
              tensor: LocalTensor | None = None, _in_place: bool = False) -> LocalTensor:
        """Take the oldest enqueued buffer (a wait for the producer pipe). ``deque(tensor)`` (in place) points
        ``tensor`` at it; the user positions of the three-argument form only label the transfer."""
        core, op = self._ready("deque")
        dtype = tensor if tensor is not None else dtype
        _user_positions(core, op, src_user_pos, dst_user_pos)
        if isinstance(dtype, LocalTensor):
            return self._deque_in_place(core, op, dtype)
        if not self.queued:
            raise core.error(op, f"{self.name} is empty: nothing was enqueued (deadlock: on the NPU this deque waits "
                                 "forever). Every deque needs an earlier enque", tensor=self.name,
                             pipes=(self.producer.value, self.consumer.value), kind="deadlock")
        slot = self.queued.popleft()
        frame = self._move(core, slot, "dequeued")
        core.record(op, self.consumer, frame=frame,
                    sync=Sync(SyncKind.WAIT, self.producer, self.consumer, ("data", self.qid, slot.index)))
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
        frame = self._move(core, slot, "free")
        slot.freed = True
        self.free.append(slot)
        core.record(op, self.consumer, frame=frame,
                    sync=Sync(SyncKind.SET, self.consumer, self.producer, ("free", self.qid, slot.index)))

    def check_released(self) -> None:
        """At kernel end every buffer must be free (a held tensor is a leak; msSanitizer memcheck)."""
        held = [s for s in self.slots if s.state != "free"]
        if held:
            s = held[0]
            raise KernelError("kernel end", f"{self.name}[{s.index}] is still {s.state} (it was {s.state} here and never "
                                            "freed): every alloc_tensor needs a free_tensor", core=self.core.idx,
                              file=s.file, line=s.line, tensor=f"{self.name}[{s.index}]", kind="leak")

    # -- helpers --
    def _in_place(self, core, op: str, tensor: LocalTensor, take) -> None:
        """The in-place forms: ``tensor`` (any LocalTensor, e.g. ``asc.LocalTensor(asc.float32)``) now views the buffer."""
        if self.depth != 0:
            raise core.error(op, f"{self.name} has depth {self.depth}: the in-place {op}(tensor) needs a TQueBind of "
                                 f"depth 0; use {op}(dtype) (TQueBind alloc_tensor page, 约束说明)")
        got = take(tensor.dtype, _in_place=True)
        for field in ("core", "addr", "length", "dtype", "name", "owner"):
            setattr(tensor, field, getattr(got, field))
        tensor.site = None
        return None

    def _deque_in_place(self, core, op: str, tensor: LocalTensor) -> None:
        """``DeQue(tensor)`` of a depth-0 queue: wait for the enque of the buffer ``tensor`` already views (there is
        no FIFO at depth 0: kernel_tquebind_impl.h takes the tensor's own buffer)."""
        if self.depth != 0:
            raise core.error(op, f"{self.name} has depth {self.depth}: the in-place deque(tensor) needs a TQueBind of "
                                 "depth 0; use deque(dtype) (TQueBind deque page)")
        slot = self._slot_of(core, op, tensor)
        if slot.state != "enqueued":
            raise core.error(op, f"{tensor.name} is {slot.state} (at {slot.where}), not enqueued: on the NPU this deque "
                                 "waits forever. enque it first", tensor=tensor.name, kind="deadlock",
                             pipes=(self.producer.value, self.consumer.value))
        self.queued.remove(slot)
        frame = self._move(core, slot, "dequeued")
        core.record(op, self.consumer, frame=frame,
                    sync=Sync(SyncKind.WAIT, self.producer, self.consumer, ("data", self.qid, slot.index)))

    def _queued_ready(self, op: str):
        """:meth:`_ready` for the calls a depth-0 TQueBind lacks (kernel_tquebind_impl.h static_asserts)."""
        core, op = self._ready(op)
        if self.depth == 0 and type(self) is TQueBind:
            raise core.error(op, f"{self.name} has depth 0: {op} is not supported while the depth is zero "
                                 "(kernel_tquebind_impl.h)")
        return core, op

    def _ready(self, op: str):
        core = current(op)
        if self.foreign is not None:
            raise self.foreign
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

    def _move(self, core, slot: _Slot, state: str):
        """Set ``slot``'s state and where it changed; returns the kernel frame (for ``core.record``)."""
        frame = kernel_frame()
        slot.state = state
        slot.file, slot.line = (frame.f_code.co_filename, frame.f_lineno) if frame else ("?", 0)
        return frame

    def _tensor(self, slot: _Slot, dtype) -> LocalTensor:
        dtype = _element_type(self.core, dtype)
        return LocalTensor.at(self.core, slot.addr, self.nbytes // dtype.sizeof(), dtype, f"{self.name}[{slot.index}]", slot,
                              self.space)


class TQue(TQueBind):
    """``AscendC::TQue<pos, depth>``: buffers passed between pipes with implicit synchronisation (a TQueBind from
    ``pos`` to itself)."""

    def __init__(self, pos: TPosition = TPosition.VECIN, depth: int = 1):  # pyasc's parameter names
        core = current("TQue")
        if pos not in _QUEUE_PIPES:
            raise core.error("TQue", f"position {pos} takes no queue: use TPosition.VECIN, VECOUT or VECCALC on an AIV "
                                     "core, A1, B1, C1, A2, B2, C2 or CO1 on an AIC core")
        super().__init__(pos, pos, depth)


def _space_or_later(core, op: str, position):
    """(space, None) for a queue or buffer at ``position`` on ``core``, or, on a core of a mix kernel that lacks the
    position's memory (a VECOUT queue the AIC also constructs: the kernel's code runs on both kinds), (None, the
    KernelError its first use raises).

    Raises:
        KernelError: the position is another kind's in a launch of one kind (``fusekit.asc.tensor.space_of``).
    """
    try:
        return space_of(core, op, position), None
    except KernelError as exc:
        if core.place.aics and core.place.aivs:
            return None, exc
        raise


def _user_positions(core, op: str, *positions) -> None:
    if any(p is not None and not isinstance(p, TPosition) for p in positions):
        raise core.error(op, f"src_user_pos / dst_user_pos are asc.TPosition values, got {positions!r}")


def _element_type(core, dtype) -> dtypes.DataType:
    dtype = dtypes.as_dtype(dtype)
    if dtype.sizeof() == 0:
        raise core.error("alloc_tensor", f"asc.{dtype.name} has no size: a tensor needs an element type such as "
                                         "asc.float16")
    return dtype


class TBuf(_Named):
    """``AscendC::TBuf<pos>``: a raw UB buffer; never enqueued or freed, so it carries no implicit sync."""

    def __init__(self, pos: TPosition = TPosition.VECCALC):  # pyasc's parameter name
        core = current("TBuf")
        core.tbufs.append(self)  # so TPipe.destroy / reset can detach it
        self.space, self.foreign = _space_or_later(core, "TBuf", pos)
        self.core, self.position = core, pos
        self.name = "TBuf"
        self.pipe = None
        self.addr = self.nbytes = 0

    def attach(self, pipe: TPipe, addrs: list[int], nbytes: int) -> None:
        self.pipe, self.addr, self.nbytes = pipe, addrs[0], nbytes

    def get(self, dtype, len: int | None = None, shape=None) -> LocalTensor:
        """The buffer as a LocalTensor of ``len`` elements (all of it by default; pyasc's ``shape``, a sequence
        of dimensions, gives their product)."""
        core = current("get")
        if self.foreign is not None:
            raise self.foreign
        if shape is not None:
            len = math.prod(int(d) for d in shape)
        if self.pipe is None:
            raise core.error("get", f"{self.name} has no memory: call pipe.init_buffer(buf={self.name}, len=<bytes>) first")
        dtype = _element_type(core, dtype)
        capacity = self.nbytes // dtype.sizeof()
        length = capacity if len is None else len
        if not 0 <= length <= capacity:
            raise core.error("get", f"{self.name}.get(len={length}) but the buffer holds {capacity} x {dtype.name}", kind="out-of-bounds")
        return LocalTensor.at(core, self.addr, length, dtype, self.name, self, self.space)

    def get_with_offset(self, size: int, buf_offset: int, dtype) -> LocalTensor:
        """``GetWithOffset<T>(size, bufOffset)``: ``size`` elements from byte ``buf_offset`` of the buffer.

        Raises:
            KernelError: ``buf_offset`` not a multiple of 32 B, or ``size * sizeof(dtype) + buf_offset`` past the
                buffer's length (TBuf/GetWithOffset.md, 约束说明).
        """
        core, op = current("get_with_offset"), "get_with_offset"
        if isinstance(size, dtypes.DataType):  # the page's example passes the dtype first
            dtype, size, buf_offset = size, buf_offset, dtype
        if self.pipe is None:
            raise core.error(op, f"{self.name} has no memory: call pipe.init_buffer(buf={self.name}, len=<bytes>) first")
        dtype = _element_type(core, dtype)
        if isinstance(buf_offset, bool) or not isinstance(buf_offset, numbers.Integral) or buf_offset < 0 \
                or buf_offset % 32:
            raise core.error(op, f"buf_offset={buf_offset!r}: a byte offset that is a multiple of 32 "
                                 "(TBuf/GetWithOffset.md, 约束说明)", kind="misaligned")
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0 or \
                size * dtype.sizeof() + buf_offset > self.nbytes:
            raise core.error(op, f"{self.name}.get_with_offset({size!r}, {buf_offset}, {dtype.name}): size * "
                                 f"sizeof + buf_offset must not pass the buffer's {self.nbytes} B "
                                 "(TBuf/GetWithOffset.md, 约束说明)", kind="out-of-bounds")
        return LocalTensor.at(core, self.addr + int(buf_offset), int(size), dtype, f"{self.name}[{buf_offset} B:]", self,
                              self.space)

    def alloc_tensor(self, dtype) -> LocalTensor:
        """``AllocTensor<T>`` on a TBuf (a TQueBind in pyasc and Ascend C): the whole buffer, as :meth:`get`. A TBuf
        holds one buffer and no events, so it never waits."""
        return self.get(dtype)

    def free_tensor(self, tensor: LocalTensor) -> None:
        """``FreeTensor`` on a TBuf: nothing to release (the buffer stays the TBuf's); the tensor must be its own."""
        core = current("free_tensor")
        if not isinstance(tensor, LocalTensor) or tensor.owner is not self:
            raise core.error("free_tensor", f"{getattr(tensor, 'name', tensor)!r} is not a tensor of {self.name}",
                             kind="foreign-tensor")


def get_tpipe_ptr() -> TPipe:
    """``GetTPipePtr``: the core's TPipe (set when the kernel constructs it; GetTPipePtr.md).

    Raises:
        KernelError: the kernel has not constructed a TPipe yet.
    """
    core = current("get_tpipe_ptr")
    if core.pipe is None:
        raise core.error("get_tpipe_ptr", "no TPipe yet: construct one (pipe = asc.TPipe()) before get_tpipe_ptr()")
    return core.pipe


# -- TBufPool (资源管理/TBufPool/*.md, TPipe/InitBufPool.md) ------------------------------------------------

MAX_POOL_BUFFERS = 16  # buf_id_size: default 4, at most 16 (TBufPool构造函数.md)


class TBufPool(_Named):
    """``AscendC::TBufPool<pos, bufIDSize>``: a UB region the kernel divides by hand and reuses between stages.

    A pool gets its region from ``pipe.init_buf_pool`` or a parent's ``init_buf_pool``; with ``share_buf`` two
    pools start at the same address (stages that never overlap in time). Queues and TBufs get their buffers
    from it with ``init_buffer``, at most ``buf_id_size`` of them. ``reset()`` ends a stage: every queue buffer
    of the pool must be free, and each buffer's consumer is done with it before its producer pipe goes on
    (TBufPool简介.md, 约束说明 2-4). The queues keep their buffers and can be used again without init_buffer.
    A TBuf from a pool carries no events: its reuse by the next stage is the kernel's to synchronise.
    """

    def __init__(self, pos: TPosition = TPosition.VECCALC, buf_id_size: int = 4):
        core = current("TBufPool")
        if pos not in _UB_POSITIONS:
            raise core.error("TBufPool", f"pos {pos}: fusekit pools UB positions (VECIN, VECOUT, VECCALC); A1 / B1 / C1 "
                                         "are the cube's L1, not simulated", kind="unsupported")
        if isinstance(buf_id_size, bool) or not isinstance(buf_id_size, numbers.Integral) or \
                not 1 <= buf_id_size <= MAX_POOL_BUFFERS:
            raise core.error("TBufPool", f"buf_id_size={buf_id_size!r}: 1 to {MAX_POOL_BUFFERS} buffers "
                                         "(TBufPool构造函数.md)")
        core.bufpools.append(self)
        self.core, self.position, self.buf_id_size = core, pos, int(buf_id_size)
        self.name = f"TBufPool#{len(core.bufpools) - 1}"
        self.pipe = None
        self.start = self.nbytes = self.used = self.buffers = 0
        self.layout: list[str] = []
        self.targets: list = []

    def attach(self, pipe: TPipe, start: int, nbytes: int) -> None:
        self.pipe, self.start, self.nbytes = pipe, start, nbytes

    def detach(self) -> None:
        self.pipe, self.used, self.buffers, self.layout, self.targets = None, 0, 0, [], []

    def init_buf_pool(self, buf_pool: "TBufPool", len: int = 0, share_buf: "TBufPool | None" = None) -> None:  # noqa: A002
        """``TBufPool::InitBufPool``: a sub-pool of ``len`` bytes (32 B rounded) inside this pool, or sharing
        ``share_buf``'s start (TBufPool/InitBufPool-55.md). Errors as :meth:`TPipe.init_buf_pool`, and a
        sub-pool's buf_id_size over this pool's remaining buffers (shared: over this pool's buf_id_size)."""
        self._ready("init_buf_pool")
        _init_pool(self.core, self, buf_pool, len, share_buf)

    def init_buffer(self, que: "TQueBind | None" = None, num: int = 0, len: int = 0,  # noqa: A002
                    buf: "TBuf | None" = None) -> None:
        """``TBufPool::InitBuffer``: ``num`` buffers of ``len`` bytes for a queue, or ``len`` (or ``num``, as pyasc
        1.1.1's TPipe spells it) bytes for a TBuf, from this pool (TBufPool/InitBuffer-56.md; 32 B rounding).

        Raises:
            KernelError: the pool's bytes or its buf_id_size buffers exceeded; a target with buffers already.
        """
        core, op = self.core, "init_buffer"
        self._ready(op)
        que, buf = _by_type(que, buf)
        if (que is None) == (buf is None):
            raise core.error(op, "pass either que=<TQue>, num=<buffers>, len=<bytes> or buf=<TBuf>, len=<bytes>")
        target = que if que is not None else buf
        target.name = _local_name(target, target.name)
        if target.pipe is not None:
            raise core.error(op, f"{target.name} already has its buffers")
        count, length = (num, len) if que is not None else (1, _tbuf_bytes(core, op, num or None, len or None))
        if not isinstance(count, numbers.Integral) or not 1 <= count <= MAX_BUFFERS_PER_QUEUE:
            raise core.error(op, f"num={count!r}: a queue takes 1 to {MAX_BUFFERS_PER_QUEUE} buffers", kind="ub-overflow")
        if not isinstance(length, numbers.Integral) or length <= 0:
            raise core.error(op, f"buffer length must be a positive number of bytes, got {length!r}")
        if self.buffers + count > self.buf_id_size:
            raise core.error(op, f"{self.name}: {self.buffers + count} buffers but its buf_id_size is "
                                 f"{self.buf_id_size} (TBufPool/InitBuffer-56.md, 约束说明)", kind="ub-overflow")
        rounded = -(-int(length) // 32) * 32
        start = self._carve(core, op, target.name, rounded * int(count))
        target.attach(self.pipe, [start + i * rounded for i in range(int(count))], rounded)
        self.buffers += int(count)
        self.targets.append(target)

    def reset(self) -> None:
        """``TBufPool::Reset``: end this pool's stage before another pool reuses its memory (TBufPool/Reset-57.md).
        Every queue buffer from the pool must be free. As kernel_tbufpool_impl.h, the reset waits for each
        buffer's pending free event (its consumer pipe is done with it) on the buffer's producer pipe, then
        releases the region (ResetPool zeroes the pool's start and length: no init_buffer on it afterwards;
        its queues keep their buffers)."""
        core, op = self.core, "reset"
        self._ready(op)
        for target in self.targets:
            held = [slot for slot in getattr(target, "slots", ()) if slot.state != "free"]
            if held:
                raise core.error(op, f"{target.name}[{held[0].index}] is still {held[0].state} (at {held[0].where}); "
                                     f"free_tensor every buffer of {self.name} before its reset() (TBufPool简介.md, "
                                     "约束说明 4: AllocTensor/FreeTensor and EnQue/DeQue in pairs)",
                                 tensor=target.name, kind="illegal-free")
        for target in self.targets:
            for slot in getattr(target, "slots", ()):
                if slot.freed:  # WaitFlag(freeBufEvt, freeBufEvtID): the free's set, waited on the producer pipe
                    slot.freed = False
                    core.record(op, target.producer, sync=Sync(SyncKind.WAIT, target.consumer, target.producer,
                                                                ("free", target.qid, slot.index)))
        self.was_reset = True

    def _carve(self, core, op: str, name: str, nbytes: int) -> int:
        if self.__dict__.get("was_reset"):
            raise core.error(op, f"{self.name} was reset: TBufPool::Reset releases the pool's region (ResetPool zeroes "
                                 "its start and length, kernel_tbufpool_impl.h); give out its buffers before the reset",
                             kind="ub-overflow")
        left = self.nbytes - self.used
        if nbytes > left:
            raise core.error(op, f"{name}: {nbytes} B asked of {self.name} but only {left} B of its {self.nbytes} B "
                                 f"are left (already: {', '.join(self.layout) or 'nothing'})", kind="ub-overflow")
        start = self.start + self.used
        self.used += nbytes
        self.layout.append(f"{name} {nbytes} B")
        return start

    def _ready(self, op: str) -> None:
        if self.pipe is None:
            self.name = _local_name(self, self.name)
            raise self.core.error(op, f"{self.name} has no memory: it gets it from pipe.init_buf_pool({self.name}, "
                                      "len) or a parent pool's init_buf_pool (TBufPool简介.md, 约束说明 1)")


def _init_pool(core, parent, pool, length, share_buf) -> None:
    """Give ``pool`` its region from ``parent`` (a TPipe or a TBufPool), or ``share_buf``'s start."""
    op = "init_buf_pool"
    if not isinstance(pool, TBufPool) or (share_buf is not None and not isinstance(share_buf, TBufPool)):
        raise core.error(op, f"init_buf_pool(buf_pool, len, share_buf) takes asc.TBufPool objects, got "
                             f"{type(pool).__name__} and {type(share_buf).__name__}")
    pool.name = _local_name(pool, pool.name)
    if pool.pipe is not None:
        raise core.error(op, f"{pool.name} already has its memory")
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length <= 0:
        raise core.error(op, f"len must be a positive number of bytes, got {length!r}")
    rounded = -(-int(length) // 32) * 32
    pipe = parent if isinstance(parent, TPipe) else parent.pipe
    if not pipe.live:
        raise core.error(op, "this TPipe was destroyed: call pipe.init() first")
    if share_buf is not None:
        share_buf.name = _local_name(share_buf, share_buf.name)
        if share_buf.pipe is None:
            raise core.error(op, f"share_buf {share_buf.name} has no memory yet: initialise it first")
        if rounded > share_buf.nbytes:
            raise core.error(op, f"{pool.name}: {rounded} B but the shared pool {share_buf.name} has {share_buf.nbytes} B; "
                                 "the length must not exceed the reused pool's (TPipe/InitBufPool.md, 约束说明)",
                             kind="ub-overflow")
        limit = parent.buf_id_size if isinstance(parent, TBufPool) else MAX_POOL_BUFFERS
        if pool.buf_id_size > limit:
            raise core.error(op, f"{pool.name}: buf_id_size {pool.buf_id_size} exceeds {parent.name}'s {limit} "
                                 "(TBufPool构造函数.md: shared mode)")
        pool.attach(pipe, share_buf.start, rounded)
        return
    if isinstance(parent, TBufPool):
        left = parent.buf_id_size - parent.buffers
        if pool.buf_id_size > left:
            raise core.error(op, f"{pool.name}: buf_id_size {pool.buf_id_size} but {parent.name} has {left} buffer(s) "
                                 "left (TBufPool构造函数.md)", kind="ub-overflow")
    pool.attach(pipe, parent._carve(core, op, pool.name, rounded), rounded)


# -- LocalMemAllocator (资源管理/LocalMemAllocator/*.md) ---------------------------------------------------

class Hardware(enum.IntEnum):
    """Physical memories (pyasc core/enums.py; LocalMemAllocator简介.md). A LocalMemAllocator takes UB, L1, L0A,
    L0B, L0C and BIAS (fusekit's BT); FIXBUF, which fusekit does not simulate as a space, is refused."""

    GM = 0
    UB = 1
    L1 = 2
    L0A = 3
    L0B = 4
    L0C = 5
    BIAS = 6
    FIXBUF = 7
    MAX = 8


# the spaces a LocalMemAllocator hands out (LocalMemAllocator简介.md 表1: UB, L1, L0A, L0B, L0C, BIAS, FIXBUF)
_ALLOCATOR_SPACES = {Hardware.UB: "UB", Hardware.L1: "L1", Hardware.L0A: "L0A", Hardware.L0B: "L0B",
                     Hardware.L0C: "L0C", Hardware.BIAS: "BT"}


class LocalMemAllocator(_Named):
    """``AscendC::LocalMemAllocator<hard>``: hands out tensors of one physical memory (UB by default; L1, L0A, L0B,
    L0C or the bias table on an AIC) one after another from address 0, for kernels written without a TPipe (static
    tensor programming). ``alloc`` advances the head by exactly ``tile_size * sizeof(dtype)`` bytes, with no
    rounding (kernel_tensor_impl.h), so a size that is not a multiple of the space's alignment leaves the next tensor
    unaligned, which an instruction using it then refuses. Cannot be mixed with a TPipe (LocalMemAllocator简介.md).

    Raises:
        KernelError: ``hard`` GM or FIXBUF (unsupported), or a kernel with a TPipe; an alloc in a memory the
            core's kind does not hold (L1 on an AIV core, UB on an AIC) is refused by the tensor's position.
    """

    def __init__(self, hard: Hardware = Hardware.UB):
        core = current("LocalMemAllocator")
        hard = Hardware(int(hard))
        if hard not in _ALLOCATOR_SPACES:
            raise core.error("LocalMemAllocator", f"hard={hard!r}: fusekit's LocalMemAllocator takes UB, L1, L0A, L0B, "
                                                  "L0C and BIAS (the Fixpipe buffer is not a simulated space; GM is "
                                                  "no local memory)", kind="unsupported")
        # a memory the core's kind lacks (L1 on an AIV) is refused at the first alloc, not here: a mix kernel's
        # code, allocators included, runs on both kinds of core
        self.space = space_named(_ALLOCATOR_SPACES[hard])
        if core.pipe is not None:
            raise core.error("LocalMemAllocator", "this kernel has a TPipe; LocalMemAllocator cannot be mixed with "
                                                  "TPipe (LocalMemAllocator简介.md): use one or the other")
        core.allocator = self
        self.core, self.head = core, 0

    def get_cur_addr(self) -> int:
        """``GetCurAddr``: the first free UB byte (0 before any alloc), a uint32 scalar (GetCurAddr-72.md)."""
        current("get_cur_addr").record("get_cur_addr", Pipe.S)
        return dtypes.number(self.head, dtypes.uint32)

    def alloc(self, pos: TPosition, data_type, tile_size: int) -> LocalTensor:
        """``Alloc<pos, T>(tileSize)``: a LocalTensor of ``tile_size`` elements of ``data_type`` at the head.

        Raises:
            KernelError (ub-overflow): more than the allocator's memory has left (its size minus get_cur_addr();
                Alloc.md, 约束说明); a position outside that memory; a negative or non-integer tile_size.
        """
        core, op = current("alloc"), "alloc"
        if getattr(pos, "name", None) not in self.space.positions:
            raise core.error(op, f"pos {pos}: this allocator's memory is {self.space.name}, whose positions are "
                                 f"{', '.join(self.space.positions)} (Alloc.md: pos must match the allocator's "
                                 "Hardware)")
        dtype = _element_type(core, data_type)
        if isinstance(tile_size, bool) or not isinstance(tile_size, numbers.Integral) or tile_size < 0:
            raise core.error(op, f"tile_size={tile_size!r}: a number of elements >= 0")
        nbytes = int(tile_size) * dtype.sizeof()
        size = self.space.size(core.soc)
        left = size - self.head
        if nbytes > left:
            raise core.error(op, f"alloc({pos.name}, {dtype.name}, {tile_size}) needs {nbytes} B but only {left} B of "
                                 f"the {size} B {self.space.name} are left after get_cur_addr()={self.head} "
                                 "(Alloc.md, 约束说明)", kind="ub-overflow")
        tensor = LocalTensor(dtype, pos, self.head, int(tile_size))
        self.head += nbytes
        return tensor
