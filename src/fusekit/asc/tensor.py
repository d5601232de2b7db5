"""GlobalTensor (a bounded view of a GM buffer) and LocalTensor (a range of one core's UB).

Bounds are the simulator's: on the NPU an access past a view silently reads or corrupts
neighbouring memory; here it raises :class:`KernelError` naming core, tensor, element range and
the kernel's file:line (msSanitizer memcheck reports the same class of error, SAN).
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .runtime import GlobalAddress, GmArray, KernelError, current
from .trace import Access, Mem, Pipe


def _offset(key, op: str) -> int:
    """``t[i:]`` or ``t[i]`` -> i (pyasc sub-tensors take a start only)."""
    if isinstance(key, slice):
        if key.stop is not None or key.step is not None:
            raise current(op).error(op, f"sub-tensor [{key.start}:{key.stop}:{key.step}] is not supported: "
                                        "Ascend C sub-tensors take an offset only, write t[offset:]")
        key = key.start or 0
    if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
        raise current(op).error(op, f"tensor offset must be an integer, got {key!r}")
    return int(key)


class GlobalTensor:
    """``AscendC::GlobalTensor<T>``: a typed view of a GM buffer set by :meth:`set_global_buffer`."""

    __slots__ = ("gm", "base", "size", "offset")

    def __init__(self):
        self.gm: GmArray | None = None
        self.base = self.size = self.offset = 0

    def set_global_buffer(self, addr: GlobalAddress, size: int | None = None) -> None:
        """View ``size`` elements from ``addr`` (to the end of the buffer if size is None)."""
        if not isinstance(addr, GlobalAddress):
            raise current("set_global_buffer").error(
                "set_global_buffer", f"expected a GM address kernel argument (x + offset), got {addr!r}")
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0):
            raise current("set_global_buffer").error(
                "set_global_buffer", f"size must be a non-negative element count, got {size!r}")
        self.gm, self.base, self.offset = addr.gm, addr.offset, addr.offset
        self.size = addr.gm.length - addr.offset if size is None else int(size)

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
        sub.gm, sub.base, sub.size = self.gm, self.base, self.size
        sub.offset = self.offset + _offset(key, "GlobalTensor[]")
        return sub

    def get_value(self, index: int):
        """Scalar read of element ``index`` on PIPE_S; returns a Python number."""
        core = current("get_value")
        start, stop = self.span(core, "get_value", 1, first=_offset(index, "get_value"))
        return _scalar_read(core, self.access(start, stop), self.gm.data, self.gm.dtype)

    def set_value(self, index: int, value) -> None:
        """Scalar write of element ``index`` on PIPE_S; ``value`` is converted to the dtype."""
        core = current("set_value")
        start, stop = self.span(core, "set_value", 1, first=_offset(index, "set_value"))
        element = dtypes.to_scalar(value, self.gm.dtype)

        def effect():
            self.gm.data[start:stop].view(self.gm.dtype.np)[0] = element

        core.record("set_value", Pipe.S, writes=(self.access(start, stop),), count=1, nbytes=stop - start,
                    dtype=self.gm.dtype.name, effect=effect)

    def span(self, core, op: str, count: int, first: int = 0) -> tuple[int, int]:
        """Byte range of elements ``[offset + first, offset + first + count)``, bounds-checked."""
        self._check_set(op)
        lo = self.offset + first
        hi = lo + count
        name, view_hi = self.gm.name, self.base + self.size
        size = self.gm.dtype.sizeof()
        where = dict(tensor=name, start=lo, stop=hi, mem="GM", buffer=name, byte_range=(lo * size, hi * size))
        if lo < self.base or hi > view_hi:
            raise core.error(op, f"accesses {name} elements [{lo}, {hi}) outside its GlobalTensor view "
                                 f"[{self.base}, {view_hi}); check the offset and count against the size given to "
                                 "set_global_buffer", **where, kind="out-of-bounds")
        if lo < 0 or hi > self.gm.length:
            raise core.error(op, f"accesses {name} elements [{lo}, {hi}) outside the GM buffer {name} of "
                                 f"{self.gm.length} elements; check the view set by set_global_buffer", **where, kind="out-of-bounds")
        return lo * size, hi * size

    def access(self, start: int, stop: int) -> Access:
        return Access(Mem.GM, self.gm.name, start, stop, self.gm.name)

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
    """``AscendC::LocalTensor<T>``: ``length`` elements of ``dtype`` at byte ``addr`` of a core's UB.

    Kernels get one from a queue or TBuf, or, as pyasc allows, place one at a UB address themselves:
    ``asc.LocalTensor(dtype, asc.TPosition.VECIN, addr, tile_size)`` (no TPipe manages it, so its
    synchronisation is the kernel's own). ``owner`` is the queue buffer (slot) or TBuf it came from;
    ``name`` is how messages call it.
    """

    __slots__ = ("core", "addr", "length", "dtype", "name", "owner")

    def __init__(self, dtype, pos=None, addr: int = 0, tile_size: int = 0):
        core, op = current("LocalTensor"), "LocalTensor"
        dtype = dtypes.as_dtype(dtype)
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 for v in (addr, tile_size)):
            raise core.error(op, f"LocalTensor(dtype, pos, addr, tile_size) needs a byte address >= 0 and a length >= 0, "
                                 f"got addr={addr!r}, tile_size={tile_size!r}")
        if addr + tile_size * dtype.sizeof() > core.soc.ub_bytes:
            raise core.error(op, f"LocalTensor at UB byte {addr} with {tile_size} x {dtype.name} ends past the "
                                 f"{core.soc.ub_bytes} B of UB", kind="ub-overflow")
        self.core, self.addr, self.length, self.dtype = core, int(addr), int(tile_size), dtype
        self.name, self.owner = f"UB@{addr}", None

    @classmethod
    def at(cls, core, addr: int, length: int, dtype: dtypes.DataType, name: str, owner=None) -> "LocalTensor":
        """A tensor over ``length`` elements at UB byte ``addr`` of ``core`` (how queues and buffers make them)."""
        tensor = cls.__new__(cls)
        tensor.core, tensor.addr, tensor.length, tensor.dtype, tensor.name, tensor.owner = \
            core, addr, length, dtype, name, owner
        return tensor

    def __getitem__(self, key) -> "LocalTensor":
        off = _offset(key, "LocalTensor[]")
        if off < 0:
            raise current("LocalTensor[]").error("LocalTensor[]", f"{self.name}[{off}:]: a sub-tensor offset must be "
                                                                  ">= 0; it would reach into the UB before the tensor", kind="out-of-bounds")
        return LocalTensor.at(self.core, self.addr + off * self.dtype.sizeof(), self.length - off, self.dtype,
                           f"{self.name}[{off}:]" if off else self.name, self.owner)

    def get_length(self) -> int:
        """Length in elements."""
        return self.length

    def reinterpret_cast(self, dtype) -> "LocalTensor":
        """The same bytes seen as ``dtype``."""
        dtype = dtypes.as_dtype(dtype)
        return LocalTensor.at(self.core, self.addr, self.length * self.dtype.sizeof() // dtype.sizeof(), dtype,
                           self.name, self.owner)

    def get_value(self, index: int):
        """Scalar read of element ``index`` on PIPE_S; returns a Python number."""
        core = current("get_value")
        start, stop = self.span(core, "get_value", 1, first=_offset(index, "get_value"))
        return _scalar_read(core, self.access(start, stop), core.ub, self.dtype)

    def set_value(self, index: int, value) -> None:
        """Scalar write of element ``index`` on PIPE_S; ``value`` is converted to the dtype."""
        core = current("set_value")
        start, stop = self.span(core, "set_value", 1, first=_offset(index, "set_value"))
        element = dtypes.to_scalar(value, self.dtype)

        def effect():
            core.ub[start:stop].view(self.dtype.np)[0] = element

        core.record("set_value", Pipe.S, writes=(self.access(start, stop),), count=1, nbytes=stop - start,
                    dtype=self.dtype.name, effect=effect)

    def span(self, core, op: str, count: int, first: int = 0) -> tuple[int, int]:
        """UB byte range of elements ``[first, first + count)``, checked against the tensor's length."""
        if core is not self.core:
            raise core.error(op, f"{self.name} belongs to aiv({self.core.idx})'s UB, not this core's", kind="out-of-bounds")
        size = self.dtype.sizeof()
        if first < 0 or count < 0 or first + count > self.length:
            raise core.error(op, f"accesses {self.name} elements [{first}, {first + count}) but the tensor has "
                                 f"{max(self.length, 0)} elements; lower the count or allocate a larger buffer",
                             kind="out-of-bounds", **self.describe(count, first))
        return self.addr + first * size, self.addr + (first + count) * size

    def access(self, start: int, stop: int) -> Access:
        return Access(Mem.UB, "UB", start, stop, self.name)

    def describe(self, count: int, first: int = 0) -> dict:
        """KernelError location fields for elements ``[first, first + count)`` of this tensor."""
        size = self.dtype.sizeof()
        return dict(tensor=self.name, start=first, stop=first + count, mem="UB", buffer="UB",
                    byte_range=(self.addr + first * size, self.addr + (first + count) * size))

    def array(self, count: int) -> np.ndarray:
        """numpy view of the first ``count`` elements (no checks: call :meth:`span` first)."""
        return self.core.ub[self.addr:self.addr + count * self.dtype.sizeof()].view(self.dtype.np)

    def __repr__(self) -> str:
        return f"LocalTensor({self.name}: {self.length} x {self.dtype.name} at UB+{self.addr})"


def _scalar_read(core, access: Access, memory: np.ndarray, dtype: dtypes.DataType):
    """A get_value on PIPE_S: the read is the instruction's effect, so an executor applies it in its
    order (race replay), and the value comes back as a Python number."""
    value = []

    def effect():
        value.append(memory[access.start:access.stop].view(dtype.np)[0].item())

    core.record("get_value", Pipe.S, reads=(access,), count=1, nbytes=access.nbytes, dtype=dtype.name, effect=effect)
    return value[0] if value else memory[access.start:access.stop].view(dtype.np)[0].item()


def check_ub_aligned(core, op: str, tensor: LocalTensor) -> None:
    """UB operand addresses must be 32-byte aligned (AD-API DataCopy and 通用说明和约束.md)."""
    if tensor.addr % 32:
        raise core.error(op, f"{tensor.name} starts at UB byte {tensor.addr}, not 32-byte aligned: UB operands "
                             "must start on a 32 B boundary; use an offset that is a multiple of "
                             f"{32 // tensor.dtype.sizeof()} elements", tensor=tensor.name, kind="misaligned")


def expect_kind(core, op: str, what: str, value, kind) -> None:
    if not isinstance(value, kind):
        raise core.error(op, f"{what} must be a {kind.__name__}, got {type(value).__name__}")


__all__ = ["GlobalTensor", "LocalTensor", "KernelError"]
