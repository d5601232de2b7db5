"""GlobalTensor (a bounded view of a GM buffer) and LocalTensor (a range of one core's local memory, the UB on
an AIV core).

Each tensor reads and writes the memory of its space (``fusekit.machine.spaces``): a GlobalTensor the GM buffer
of a kernel argument, a LocalTensor the arena its space has on its core (``Core.arenas``).

Bounds are the simulator's: on the NPU an access past a view silently reads or corrupts
neighbouring memory; here it raises :class:`KernelError` naming core, tensor, element range and
the kernel's file:line (msSanitizer memcheck reports the same class of error, SAN).
"""

from __future__ import annotations

import enum

import numpy as np

from . import dtypes
from .cache import cache_of
from .runtime import GlobalAddress, GmArray, KernelError, current, kernel_frame
from .lockstep.values import LaneInt, element_lanes
from .scalar import is_integer_dtype, typed
from fusekit.machine import MemSpace, position_space, space_at

from .trace import Access, Pipe


def space_of(core, op: str, pos) -> "MemSpace":
    """The space a local tensor at TPosition ``pos`` lives in on ``core`` (``fusekit.machine.space_at``).

    Raises:
        KernelError: the position is another core kind's (A1 on an AIV core: the message names the kernel type
            that runs the kernel on the AIC).
    """
    try:
        return space_at(core.kind.name, getattr(pos, "name", None))
    except LookupError as exc:
        fix = ("declare the kernel @asc.jit(kernel_type=config.KernelType.AIC_ONLY) (config: asc.runtime.config) to "
               "run it on AIC cores" if core.kind.name == "AIV" else "the AIC reads and writes GM, L1, L0A, L0B, L0C and "
               "the bias table; vector work runs on AIV cores")
        raise core.error(op, f"{exc}: {fix}", kind="unsupported") from None


def _offset(key, op: str, lanes: bool = False) -> int:
    """``t[i:]`` or ``t[i]`` -> i (pyasc sub-tensors take a start only). ``lanes``: a GM offset that differs between
    the cores of a lockstep group stays one per core (``fusekit.asc.lockstep``); a UB offset must be one for all."""
    if isinstance(key, slice):
        if key.stop is not None or key.step is not None:
            raise current(op).error(op, f"sub-tensor [{key.start}:{key.stop}:{key.step}] is not supported: "
                                        "Ascend C sub-tensors take an offset only, write t[offset:]")
        key = key.start if isinstance(key.start, LaneInt) else (key.start or 0)
    if lanes and isinstance(key, LaneInt):
        return key.plain()
    if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
        raise current(op).error(op, f"tensor offset must be an integer, got {key!r}")
    return int(key)


class CacheMode(enum.IntEnum):
    """pyasc ``asc.CacheMode`` (python/asc/language/core/enums.py): the L2 cache mode of a GlobalTensor."""

    CACHE_MODE_NORMAL = 0
    CACHE_MODE_DISABLE = 1
    CACHE_MODE_LAST = 2
    CACHE_MODE_PERSISTENT = 4


class CacheRwMode(enum.IntEnum):
    """pyasc ``asc.CacheRwMode``: which accesses an L2 cache hint applies to."""

    READ = 1
    WRITE = 2
    RW = 3


class GlobalTensor:
    """``AscendC::GlobalTensor<T>``: a typed view of a GM buffer set by :meth:`set_global_buffer`."""

    __slots__ = ("gm", "base", "size", "offset", "l2_hint", "sized", "shape_info")
    space = position_space("GM")  # a GlobalTensor's data is at TPosition::GM (AD-API TPosition)

    def __init__(self):
        self.gm: GmArray | None = None
        self.base = self.size = self.offset = 0
        self.l2_hint = ""

    def set_global_buffer(self, buffer: GlobalAddress, buffer_size: int | None = None) -> None:
        """View ``buffer_size`` elements from ``buffer`` (to the end of the buffer if buffer_size is None)."""
        if not isinstance(buffer, GlobalAddress):
            raise current("set_global_buffer").error(
                "set_global_buffer", f"expected a GM address kernel argument (x + offset), got {buffer!r}")
        if buffer_size is not None and (isinstance(buffer_size, bool) or not isinstance(buffer_size, (int, np.integer))
                                        or buffer_size < 0):
            raise current("set_global_buffer").error(
                "set_global_buffer", f"buffer_size must be a non-negative element count, got {buffer_size!r}")
        self.gm, self.base, self.offset = buffer.gm, buffer.offset, buffer.offset
        self.sized = buffer_size is not None  # GetSize is 0 after the pointer-only form (GlobalTensor.get_size page)
        self.size = buffer.gm.length - buffer.offset if buffer_size is None else int(buffer_size)

    @property
    def dtype(self) -> dtypes.DataType:
        self._check_set("dtype")
        return self.gm.dtype

    @property
    def name(self) -> str:
        return self.gm.name if self.gm else "<unset GlobalTensor>"

    def __getitem__(self, key) -> "GlobalTensor":
        self._check_set("GlobalTensor[]")
        sub = GlobalTensor()
        sub.gm, sub.base, sub.size, sub.l2_hint = self.gm, self.base, self.size, self.l2_hint
        sub.sized = getattr(self, "sized", True)
        sub.offset = self.offset + _offset(key, "GlobalTensor[]", lanes=True)
        return sub

    def set_l2_cache_hint(self, mode: CacheMode = CacheMode.CACHE_MODE_NORMAL,
                          rw_mode: CacheRwMode = CacheRwMode.RW) -> None:
        """``SetL2CacheHint<rwMode>(mode)``: how this tensor's (and its sub-tensors') GM transfers use L2.

        pyasc docs/python-api/language/generated/asc.language.core.GlobalTensor.set_l2_cache_hint.md
        (default NORMAL, RW). Values are unchanged; each later GM access records the hint
        (``Access.l2``) for the timing model: CACHE_MODE_DISABLE bypasses L2.

        Raises:
            KernelError: ``mode`` or ``rw_mode`` is not a CacheMode / CacheRwMode value.
        """
        op = "set_l2_cache_hint"
        self._check_set(op)
        try:
            mode, rw_mode = CacheMode(int(mode)), CacheRwMode(int(rw_mode))
        except (TypeError, ValueError):
            raise current(op).error(op, f"expected asc.CacheMode and asc.CacheRwMode values, got mode={mode!r}, "
                                        f"rw_mode={rw_mode!r}") from None
        self.l2_hint = "" if mode is CacheMode.CACHE_MODE_NORMAL else f"{mode.name}/{rw_mode.name}"

    def get_size(self) -> int:
        """``GetSize``: elements of the view given to ``set_global_buffer(addr, size)``; 0 after the pointer-only
        form ``set_global_buffer(addr)`` (pyasc GlobalTensor.get_size page, 约束说明). A uint64 scalar."""
        self._check_set("get_size")
        return typed(self.size if getattr(self, "sized", True) else 0, dtypes.uint64)

    def set_shape_info(self, shape_info) -> None:
        """``SetShapeInfo``: attach an ``asc.ShapeInfo`` to this GlobalTensor."""
        from .shapeinfo import ShapeInfo
        expect_kind(current("set_shape_info"), "set_shape_info", "shape_info", shape_info, ShapeInfo)
        self.shape_info = shape_info

    def get_shape_info(self):
        """``GetShapeInfo``: the ShapeInfo set by :meth:`set_shape_info` ("没有默认值": KernelError before one is set)."""
        info = getattr(self, "shape_info", None)
        if info is None:
            raise current("get_shape_info").error("get_shape_info", "this GlobalTensor has no ShapeInfo: call "
                                                  "set_shape_info first (GlobalTensor.get_shape_info page)")
        return info

    def get_phy_addr(self, offset: int = 0) -> GlobalAddress:
        """``GetPhyAddr(offset)``: the GM address of element ``offset`` of this view, a GlobalAddress that
        ``set_global_buffer`` takes again (pyasc core/tensor.py; GlobalTensor/GetPhyAddr.md)."""
        self._check_set("get_phy_addr")
        return GlobalAddress(self.gm, self.offset + int(offset))

    def get_value(self, offset: int):
        """Scalar read of element ``offset`` on PIPE_S, through the core's data cache (``cache.py``).

        Returns a Python float, or for an integer dtype a typed scalar (``scalar.py``). A line the
        core cached before another agent wrote GM gives the stale value, as on the NPU.
        """
        core = current("get_value")
        where = _element(core, self, "get_value", offset)
        if where is None:  # out of bounds under the sanitizer: the fault is collected, the value is garbage
            return _garbage(self.dtype)
        start, stop = where
        cache, gm = cache_of(core), self.gm
        return _scalar_read(core, self.access(start, stop), lambda: cache.read(gm, start, stop), gm.dtype)

    def set_value(self, offset: int, value) -> None:
        """Scalar write of element ``offset`` on PIPE_S; ``value`` is converted to the dtype.

        The store changes the core's cached line only; GM gets the whole 64 B line when
        ``data_cache_clean_and_invalid`` cleans it or when the launch ends (``cache.py``).
        """
        core = current("set_value")
        where = _element(core, self, "set_value", offset)
        if where is None:  # out of bounds under the sanitizer: the fault is collected, the store skipped
            return
        start, stop = where
        element = np.frombuffer(dtypes.to_scalar(value, self.gm.dtype).tobytes(), np.uint8)
        cache, gm = cache_of(core), self.gm

        # a closure, not an Effect: a scalar store goes into the core's data cache, not straight to GM
        def effect():
            cache.write(gm, start, element)

        core.record("set_value", Pipe.S, writes=(self.access(start, stop),), count=1, nbytes=stop - start,
                    dtype=self.gm.dtype.name, effect=effect)

    def span(self, core, op: str, count: int, first: int = 0, hint: str = "") -> tuple[int, int]:
        """Byte range of elements ``[offset + first, offset + first + count)``, bounds-checked.

        ``hint`` is added to an out-of-bounds message (e.g. a stride's unit).
        """
        self._check_set(op)
        lo = self.offset + int(first)  # plain ints: byte offsets may pass 2**31 legitimately
        hi = lo + int(count)
        name, view_hi = self.gm.name, self.base + self.size
        size = self.gm.dtype.sizeof()
        where = dict(tensor=name, start=lo, stop=hi, mem="GM", buffer=name, byte_range=(lo * size, hi * size))
        if lo < self.base or hi > view_hi:
            raise core.error(op, f"accesses {name} elements [{lo}, {hi}) outside its GlobalTensor view "
                                 f"[{self.base}, {view_hi}); check the offset and count against the size given to "
                                 f"set_global_buffer{hint}", **where, kind="out-of-bounds")
        if lo < 0 or hi > self.gm.length:
            raise core.error(op, f"accesses {name} elements [{lo}, {hi}) outside the GM buffer {name} of "
                                 f"{self.gm.length} elements; check the view set by set_global_buffer", **where, kind="out-of-bounds")
        return lo * size, hi * size

    def access(self, start: int, stop: int) -> Access:
        return Access(self.space, self.gm.name, start, stop, self.gm.name, l2=self.l2_hint)

    @property
    def length(self) -> int:
        """Elements from this tensor's first one to the end of its view (a LocalTensor's ``length``, for effects)."""
        return self.base + self.size - self.offset

    def array(self, count: int) -> np.ndarray:
        """numpy view of ``count`` elements of GM from this tensor's first one (no checks: call :meth:`span` first);
        what a data move's :class:`~fusekit.asc.effect.Effect` reads and writes (the DMA, not the data cache)."""
        size = self.gm.dtype.sizeof()
        return self.gm.data[self.offset * size:(self.offset + count) * size].view(self.gm.dtype.np)

    def describe(self, count: int) -> dict:
        """KernelError location fields for ``count`` elements from here."""
        size = self.gm.dtype.sizeof()
        return dict(tensor=self.name, start=self.offset, stop=self.offset + count, mem="GM", buffer=self.name,
                    byte_range=(self.offset * size, (self.offset + count) * size))

    def _check_set(self, op: str) -> None:
        if self.gm is None:
            raise current(op).error(op, "GlobalTensor used before set_global_buffer(addr, size)")

    def __repr__(self) -> str:
        return f"GlobalTensor({self.name}[{self.offset}:], view [{self.base}, {self.base + self.size}))"


class LocalTensor:
    """``AscendC::LocalTensor<T>``: ``length`` elements of ``dtype`` at byte ``addr`` of a core's local memory
    ``space`` (the UB on an AIV core).

    Kernels get one from a queue or TBuf, or, as pyasc allows, place one at an address themselves:
    ``asc.LocalTensor(dtype, asc.TPosition.VECIN, addr, tile_size)`` (no TPipe manages it, so its
    synchronisation is the kernel's own); the position gives the space (``fusekit.machine.space_at``).
    ``owner`` is the queue buffer (slot) or TBuf it came from; ``name`` is how messages call it.
    """

    __slots__ = ("core", "addr", "length", "dtype", "name", "owner", "site", "tag", "shape_info", "position", "space")

    def __init__(self, dtype, pos=None, addr: int = 0, tile_size: int = 0):
        core, op = current("LocalTensor"), "LocalTensor"
        dtype = dtypes.as_dtype(dtype)
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 for v in (addr, tile_size)):
            raise core.error(op, f"LocalTensor(dtype, pos, addr, tile_size) needs a byte address >= 0 and a length >= 0, "
                                 f"got addr={addr!r}, tile_size={tile_size!r}")
        space = space_of(core, op, pos)
        if addr + tile_size * dtype.sizeof() > space.size(core.soc):
            raise core.error(op, f"LocalTensor at {space.name} byte {addr} with {tile_size} x {dtype.name} ends past the "
                                 f"{space.size(core.soc)} B of {space.name}", kind="ub-overflow")
        self.core, self.addr, self.length, self.dtype, self.space = core, int(addr), int(tile_size), dtype, space
        self.name, self.owner = f"{space.name}@{addr}", None
        self.site = _site(self.addr, f"LocalTensor at {space.name} byte {addr}", space.alignment)
        self.position = pos

    @classmethod
    def at(cls, core, addr: int, length: int, dtype: dtypes.DataType, name: str, owner=None,
           space=None) -> "LocalTensor":
        """A tensor over ``length`` elements at byte ``addr`` of ``core``'s ``space`` (how queues and buffers make
        them); no ``space``: the core's first local space, as a tensor with no position gets (``space_at``: the UB
        on an AIV core)."""
        if space is None:
            space = space_at(core.kind.name, None)
        tensor = cls.__new__(cls)
        tensor.core, tensor.addr, tensor.length, tensor.dtype, tensor.name, tensor.owner, tensor.site, tensor.space = \
            core, addr, length, dtype, name, owner, None, space
        return tensor

    def __getitem__(self, key) -> "LocalTensor":
        """``t[offset:]``: the tensor ``offset`` elements further (AD-API LocalTensor/operator[]).

        The offset must lie in ``[0, length]`` ("offset不能超过原有LocalTensor的size大小"): checked here.
        Ascend C allows any element offset, so a sub-tensor that does not start on a 32 B boundary
        is legal for scalar get_value / set_value; it is refused when an instruction takes it as an
        operand (UB operands are 32 B aligned, AD-API 通用说明和约束.md), and that KernelError names
        this line, where the sub-tensor was made, as well as the instruction's.
        """
        off = _offset(key, "LocalTensor[]")
        if not 0 <= off <= self.length:
            core = current("LocalTensor[]")
            core.fault(core.error(
                "LocalTensor[]", f"{self.name}[{off}:]: a sub-tensor offset must be in [0, {self.length}] (the "
                                 f"tensor's length); it would start {'before' if off < 0 else 'past the end of'} the "
                                 "tensor", kind="out-of-bounds", **self.describe(1, off)))
            off = min(max(off, 0), self.length)  # under the sanitizer: clipped, and the kernel goes on
        name = f"{self.name}[{off}:]" if off else self.name
        sub = LocalTensor.at(self.core, self.addr + off * self.dtype.sizeof(), self.length - off, self.dtype, name,
                             self.owner, self.space)
        align = self.space.alignment
        sub.site = self.site if off * self.dtype.sizeof() % align == 0 else \
            _site(sub.addr, f"{name} ({self.space.name} byte {sub.addr})", align)
        return sub

    def get_length(self) -> int:
        """Length in elements, a ``uint32`` scalar as pyasc types it (``core/tensor.py``)."""
        return typed(self.length, dtypes.uint32)

    def get_size(self) -> int:
        """``GetSize``: number of elements, a uint32 scalar."""
        return typed(self.length, dtypes.uint32)

    def set_size(self, size: int) -> None:
        """``SetSize(size)``: the tensor now has ``size`` elements, at most what its buffer holds.

        Raises:
            KernelError (out-of-bounds): ``size`` past the end of the queue buffer / TBuf / UB.
        """
        core = current("set_size")
        capacity = self._buffer_bytes() // self.dtype.sizeof()
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 0 <= size <= capacity:
            raise core.error("set_size", f"{self.name}.set_size({size!r}): the buffer under it holds {capacity} x "
                                         f"{self.dtype.name}", kind="out-of-bounds", tensor=self.name)
        self.length = int(size)

    def _buffer_bytes(self) -> int:
        """Bytes from this tensor's address to the end of its buffer (queue slot, TBuf, or its whole space)."""
        owner = self.owner
        in_queue = "queue" in getattr(type(owner), "__slots__", ())  # a queue's buffer (fwk._Slot); a TBuf has nbytes
        base, nbytes = ((owner.addr, owner.queue.nbytes) if in_queue else
                        (owner.addr, owner.nbytes) if owner is not None else (0, self.space.size(self.core.soc)))
        return base + nbytes - self.addr

    def get_phy_addr(self, offset: int = 0) -> int:
        """``GetPhyAddr(offset)``: byte address of element ``offset`` in the tensor's space (uint64 scalar)."""
        addr = self.addr + int(offset) * self.dtype.sizeof()
        # pyasc types an address list by the tensor its get_phy_addr came from (trans_data_to_5hd, basic/vec_5hd.py)
        self.core.phy_addr_dtypes[addr] = self.dtype
        return typed(addr, dtypes.uint64)

    def get_position(self):
        """``GetPosition``: the tensor's logical position (an asc.TPosition): its queue's or TBuf's, or the one given
        to ``asc.LocalTensor(dtype, pos, ...)`` (VECCALC when none was)."""
        from .fwk import TPosition
        owner = self.owner
        queue = getattr(owner, "queue", None)
        pos = getattr(queue if queue is not None else owner, "position", None) if owner is not None else \
            getattr(self, "position", None)
        return pos if pos is not None else TPosition.VECCALC

    def set_buffer_len(self, data_len: int) -> None:
        """``SetBufferLen(dataLen)``: the tensor now spans ``data_len`` bytes (``data_len // sizeof`` elements;
        kernel_tensor_impl.h keeps dataLen in bytes, as the pyasc page says).

        A length past the end of the buffer under the tensor is not an error by itself (SetBufferLen.md gives no
        check and the hardware makes none): the length is clipped to the buffer, so an instruction that really
        reaches past it is the KernelError (out-of-bounds), at its own line.

        Raises:
            KernelError: ``data_len`` is not a number of bytes >= 0.
        """
        core = current("set_buffer_len")
        if isinstance(data_len, bool) or not isinstance(data_len, (int, np.integer)) or data_len < 0:
            raise core.error("set_buffer_len", f"data_len must be a number of bytes >= 0, got {data_len!r}")
        self.length = min(int(data_len), self._buffer_bytes()) // self.dtype.sizeof()

    def set_addr_with_offset(self, src: "LocalTensor", offset: int) -> None:
        """``SetAddrWithOffset(src, offset)``: this tensor moves to ``src``'s address plus ``offset`` elements of
        *src's* type, keeping its own dtype (kernel_tensor_impl.h: bufferAddr += offset * sizeof(U)). Its length is
        src's byte length in this dtype (the copied dataLen), clipped to the bytes left in src's buffer.

        Raises:
            KernelError (out-of-bounds): the new address passes the end of src's buffer.
        """
        core = current("set_addr_with_offset")
        expect_kind(core, "set_addr_with_offset", "src", src, LocalTensor)
        shift = int(offset) * src.dtype.sizeof()
        room = src._buffer_bytes() - shift
        if int(offset) < 0 or room < 0:
            raise core.error("set_addr_with_offset", f"offset {offset} x {src.dtype.name} from {src.name} passes the "
                                                     "end of its buffer", kind="out-of-bounds", tensor=src.name)
        self.core, self.addr, self.owner, self.space = src.core, src.addr + shift, src.owner, src.space
        self.length = min(src.length * src.dtype.sizeof(), room) // self.dtype.sizeof()
        self.name = f"{src.name}+{offset}"
        self.site = None

    def print(self, data_len: int | None = None) -> None:
        """``Print(len)``: the first ``data_len`` elements (all by default) into the device output, one 32 B data
        block per line, each line prefixed with its first element's index (LocalTensor/Print.md: CPU debugging).
        Recorded as a PIPE_S read of those bytes.

        Raises:
            KernelError (out-of-bounds): more elements than the tensor has.
        """
        core = current("print")
        count = self.length if data_len is None else int(data_len)
        start, stop = self.span(core, "print", count)
        per_line = max(32 // self.dtype.sizeof(), 1)
        tensor = self

        # a closure, not an Effect: it writes no memory; it prints the values into the launch's log
        def effect():
            values = tensor.array(count)
            lines = [f"{k:04d}: " + " ".join(str(v) for v in values[k:k + per_line]) for k in range(0, count, per_line)]
            core.log.append("".join(f"[aiv({core.idx})] {line}\n" for line in lines))

        core.record("print", Pipe.S, reads=(self.access(start, stop),), count=count, nbytes=stop - start,
                    dtype=self.dtype.name, effect=effect)

    def to_file(self, file_name: str) -> int:
        """``ToFile(fileName)``: the tensor's bytes, raw, into ``file_name`` (relative to the working directory, "文件
        保存在执行目录"; LocalTensor/ToFile.md: CPU debugging). Returns 0 (int32) once written, as the page says.
        Recorded as a PIPE_S read of the tensor."""
        core = current("to_file")
        start, stop = self.span(core, "to_file", self.length)

        # a closure, not an Effect: it writes no memory; it writes the bytes to a host file
        def effect():
            core.arenas[self.space][start:stop].tofile(str(file_name))

        core.record("to_file", Pipe.S, reads=(self.access(start, stop),), count=self.length, nbytes=stop - start,
                    dtype=self.dtype.name, effect=effect)
        return typed(0, dtypes.int32)

    def set_user_tag(self, tag: int) -> None:
        """``SetUserTag(tag)``: an int32 label the kernel attaches to the tensor (no effect on memory)."""
        self.tag = int(tag)

    def get_user_tag(self) -> int:
        """``GetUserTag``: the tag set by :meth:`set_user_tag` (0 before), an int32 scalar."""
        return typed(getattr(self, "tag", 0), dtypes.int32)

    def set_shape_info(self, shape_info) -> None:
        """``SetShapeInfo``: attach an ``asc.ShapeInfo`` (read by high-level APIs such as ``asc.adv.softmax``)."""
        from .shapeinfo import ShapeInfo
        expect_kind(current("set_shape_info"), "set_shape_info", "shape_info", shape_info, ShapeInfo)
        self.shape_info = shape_info

    def get_shape_info(self):
        """``GetShapeInfo``: the ShapeInfo set on this tensor, or the empty ``ShapeInfo()`` if none was."""
        from .shapeinfo import ShapeInfo
        return getattr(self, "shape_info", None) or ShapeInfo()

    def reinterpret_cast(self, dtype) -> "LocalTensor":
        """The same bytes seen as ``dtype``."""
        dtype = dtypes.as_dtype(dtype)
        cast = LocalTensor.at(self.core, self.addr, self.length * self.dtype.sizeof() // dtype.sizeof(), dtype,
                              self.name, self.owner, self.space)
        cast.site = self.site
        return cast

    def get_value(self, index: int):
        """Scalar read of element ``index`` on PIPE_S: a Python float, or a typed integer scalar."""
        core = current("get_value")
        where = _element(core, self, "get_value", index)
        if where is None:  # out of bounds under the sanitizer: the fault is collected, the value is garbage
            return _garbage(self.dtype)
        start, stop = where
        memory = core.arenas[self.space]
        return _scalar_read(core, self.access(start, stop), lambda: memory[start:stop], self.dtype)

    def set_value(self, index: int, value) -> None:
        """Scalar write of element ``index`` on PIPE_S; ``value`` is converted to the dtype."""
        core = current("set_value")
        where = _element(core, self, "set_value", index)
        if where is None:  # out of bounds under the sanitizer: the fault is collected, the store skipped
            return
        start, stop = where
        element = dtypes.to_scalar(value, self.dtype)
        memory = core.arenas[self.space]

        # a closure, not an Effect: one scalar store of the scalar unit (PIPE_S), not a vector instruction's lanes
        def effect():  # [..., :1]: the element of every core of a lockstep group (one row each)
            memory[start:stop].view(self.dtype.np)[..., :1] = element

        core.record("set_value", Pipe.S, writes=(self.access(start, stop),), count=1, nbytes=stop - start,
                    dtype=self.dtype.name, effect=effect)

    def span(self, core, op: str, count: int, first: int = 0, hint: str = "") -> tuple[int, int]:
        """Byte range (in the tensor's space) of elements ``[first, first + count)``, checked against its length.

        ``hint`` replaces the default advice in an out-of-bounds message (e.g. a stride's unit).
        """
        first, count = int(first), int(count)
        if core is not self.core:
            raise core.error(op, f"{self.name} belongs to aiv({self.core.idx})'s {self.space.name}, not this core's",
                             kind="out-of-bounds")
        size = self.dtype.sizeof()
        if first < 0 or count < 0 or first + count > self.length:
            raise core.error(op, f"accesses {self.name} elements [{first}, {first + count}) but the tensor has "
                                 f"{max(self.length, 0)} elements; "
                                 f"{hint or 'lower the count or allocate a larger buffer'}",
                             kind="out-of-bounds", **self.describe(count, first))
        return self.addr + first * size, self.addr + (first + count) * size

    def access(self, start: int, stop: int) -> Access:
        return Access(self.space, self.space.name, start, stop, self.name)

    def describe(self, count: int, first: int = 0) -> dict:
        """KernelError location fields for elements ``[first, first + count)`` of this tensor."""
        size = self.dtype.sizeof()
        return dict(tensor=self.name, start=first, stop=first + count, mem=self.space.name, buffer=self.space.name,
                    byte_range=(self.addr + first * size, self.addr + (first + count) * size))

    def array(self, count: int) -> np.ndarray:
        """numpy view of the first ``count`` elements (no checks: call :meth:`span` first)."""
        return self.core.arenas[self.space][self.addr:self.addr + count * self.dtype.sizeof()].view(self.dtype.np)

    def __repr__(self) -> str:
        return f"LocalTensor({self.name}: {self.length} x {self.dtype.name} at {self.space.name}+{self.addr})"


def _scalar_read(core, access: Access, load, dtype: dtypes.DataType):
    """A get_value on PIPE_S: the read is the instruction's effect, so an executor applies it in its
    order (race replay). ``load()`` gives the element's bytes. The value comes back as a Python
    float, or a typed integer scalar for integer dtypes (pyasc: the tensor's element type)."""
    value = []

    # a closure, not an Effect: it writes no memory; it reads the value the kernel gets back
    def effect():
        value.append(_value_of(load(), dtype))

    core.record("get_value", Pipe.S, reads=(access,), count=1, nbytes=access.nbytes, dtype=dtype.name, effect=effect)
    return value[0] if value else _value_of(load(), dtype)


def _value_of(raw: np.ndarray, dtype: dtypes.DataType):
    """The element whose bytes ``raw`` holds, as a kernel gets it: a Python float, or a typed integer scalar (pyasc:
    the tensor's element type). In a lockstep group ``raw`` has a row per core, and the value is one per core
    (``fusekit.asc.lockstep.values.element_lanes``)."""
    values = raw.view(dtype.np)
    if values.ndim > 1:
        return element_lanes(values[:, 0], dtype)
    value = values[0].item()
    return typed(value, dtype) if is_integer_dtype(dtype) else value


def _element(core, tensor, op: str, index) -> "tuple[int, int] | None":
    """Byte range of element ``index`` for a scalar access; None when it is out of bounds and the
    sanitizer collected the fault (``Core.fault``: a plain launch raises)."""
    first = _offset(index, op)
    try:
        return tensor.span(core, op, 1, first=first)
    except KernelError as exc:
        core.fault(exc)
        return None


def _garbage(dtype: dtypes.DataType):
    """What a scalar read past a tensor gives here: the poison bytes (NaN, or -1 for signed integers)."""
    value = np.full(dtype.sizeof(), 0xFF, np.uint8).view(dtype.np)[0].item()
    return typed(value, dtype) if is_integer_dtype(dtype) else value


def _site(addr: int, what: str, alignment: int):
    """Where a local tensor not on its space's operand boundary was made: (file, line, what), or None if aligned."""
    if addr % alignment == 0:
        return None
    frame = kernel_frame()
    return (frame.f_code.co_filename, frame.f_lineno, what) if frame else ("", 0, what)


def check_ub_aligned(core, op: str, tensor: LocalTensor) -> None:
    """Local operand addresses must be aligned to their space's boundary: 32 B in UB (AD-API DataCopy and
    通用说明和约束.md; ``MemSpace.alignment``).

    Under the sanitizer (``Core.fault``) the error is collected instead and the access goes on at
    the given address, so that later faults are reported too.

    Raises:
        KernelError (kind ``misaligned``) located at the kernel line that made the unaligned
        sub-tensor or placement, naming the instruction that used it.
    """
    space = tensor.space
    if tensor.addr % space.alignment:
        step = max(space.alignment // tensor.dtype.sizeof(), 1)
        detail = (f"{tensor.name} starts at {space.name} byte {tensor.addr}, not {space.alignment}-byte aligned: "
                  f"{space.name} operands must start on a {space.alignment} B boundary; use an offset that is a "
                  f"multiple of {step} elements")
        site = getattr(tensor, "site", None)
        if site is None or not site[0]:
            core.fault(core.error(op, detail, tensor=tensor.name, kind="misaligned"))
            return  # under the sanitizer: collected, and the access goes on at the given address
        use = kernel_frame()
        used = f" (used by {op} at {use.f_code.co_filename}:{use.f_lineno})" if use else ""
        core.fault(KernelError(op, f"{detail}. It was made here, at {site[0]}:{site[1]}{used}; a sub-tensor at any "
                              "offset is fine for get_value / set_value only",
                          core=core.idx, file=site[0], line=site[1], tensor=tensor.name, kind="misaligned",
                          mem=space.name, buffer=space.name,
                          byte_range=(tensor.addr, tensor.addr + tensor.dtype.sizeof())))


def expect_kind(core, op: str, what: str, value, kind) -> None:
    if not isinstance(value, kind):
        raise core.error(op, f"{what} must be a {kind.__name__}, got {type(value).__name__}")


__all__ = ["GlobalTensor", "LocalTensor", "KernelError"]
