"""GM as a C++ kernel sees it: buffers at device addresses, and the element type ``SetGlobalBuffer<T>`` gives them.

A C++ kernel does pointer arithmetic on its ``GM_ADDR`` arguments (``(__gm__ half*)x + offset``) before it gives
the pointer to ``GlobalTensor::SetGlobalBuffer``. fusekit gives every GM buffer of a launch a device address that
no host memory uses (:data:`DEVICE_BASE` upwards, 1 MiB apart, so a stray dereference faults instead of touching
host data), and maps the pointer the kernel passes back to (buffer, byte offset) here.

A buffer's element type: a numpy argument's dtype; device memory from ``aclrtMalloc`` (:mod:`fusekit.cpp.acl`)
is bytes until the kernel's first ``SetGlobalBuffer<T>`` of the launch types it. The simulator's GM buffers have
one element type per launch, so a second, different ``T`` on the same buffer is refused, naming both.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from fusekit.asc import dtypes
from fusekit.asc.runtime import GlobalAddress, GmArray

DEVICE_BASE = 0x1000_0000_0000  # 2^44: above what a Linux process maps for itself, below the 2^47 user limit
_SPACING = 1 << 20
_RAW = (dtypes.uint8, dtypes.int8)


class DeviceBuffer(GmArray):
    """A GM buffer at a device address: ``data`` is its bytes, ``source`` the bytes it is copied from and back to.

    Args:
        name: the kernel parameter's name (the Trace's buffer name).
        source: a C-contiguous numpy array (its bytes are the buffer's; results are written back into it).
        base: the device address, or None to take the next free one.
    """

    __slots__ = ("base", "typed", "__weakref__")

    def __init__(self, name: str, source: np.ndarray, base: int | None = None):
        if not source.flags.c_contiguous:
            raise TypeError(f"argument {name}: a C++ kernel sees GM as bytes: pass a C-contiguous array "
                            "(numpy.ascontiguousarray)")
        self.name, self.dtype, self.source = name, dtypes.from_numpy(source.dtype), source
        self.length = source.size
        self.data = np.empty(source.nbytes, np.uint8)
        self.typed = self.dtype not in _RAW
        self.base = _allocate(source.nbytes) if base is None else base
        _LIVE[self.base] = self
        self.load()

    def load(self) -> None:
        self.data[:] = self.source.reshape(-1).view(np.uint8)

    def store(self) -> None:
        if not self.source.flags.writeable:
            raise ValueError(f"argument {self.name} is read-only but the kernel wrote to it")
        self.source.reshape(-1).view(np.uint8)[:] = self.data

    def view_as(self, dtype: dtypes.DataType) -> str | None:
        """Give the buffer ``dtype`` elements; the reason it cannot (it has another type), or None."""
        if dtype is self.dtype:
            return None
        if self.typed:
            return (f"{self.name} holds {self.dtype.name} elements and the kernel views it as {dtype.name}; the "
                    f"simulator keeps one element type per GM buffer: pass {self.name} as {dtype.name} data")
        if self.data.size % dtype.sizeof():
            return f"{self.name} has {self.data.size} bytes, not a whole number of {dtype.name} elements"
        self.dtype, self.length, self.typed = dtype, self.data.size // dtype.sizeof(), True
        return None


_LIVE: "weakref.WeakValueDictionary[int, DeviceBuffer]" = weakref.WeakValueDictionary()
_cursor = [DEVICE_BASE]


def _allocate(nbytes: int) -> int:
    base = _cursor[0]
    _cursor[0] += (nbytes + 2 * _SPACING - 1) // _SPACING * _SPACING  # a gap of at least 1 MiB after each
    return base


def allocate(nbytes: int) -> int:
    """A fresh device address for ``nbytes`` (aclrtMalloc's)."""
    return _allocate(nbytes)


@dataclass(frozen=True)
class Pointer:
    """A ``__gm__ T*`` value a C++ kernel passed: its address and the C++ element type's name (None: void)."""

    address: int
    dtype: str | None


def buffer_at(address: int) -> tuple[DeviceBuffer, int] | None:
    """The live buffer holding ``address`` and the byte offset into it (one past the end counts), or None."""
    for base, buffer in list(_LIVE.items()):
        if base <= address <= base + buffer.data.size:
            return buffer, address - base
    return None


def device_address(address: GlobalAddress) -> int:
    """The device address of a GlobalAddress (its buffer's base plus the offset in bytes)."""
    gm = address.gm
    if not isinstance(gm, DeviceBuffer):
        raise TypeError(f"{gm.name} has no device address: a C++ kernel's GM arguments are DeviceBuffers")
    return gm.base + int(address.offset) * gm.dtype.sizeof()


def pointer_at(pointer: Pointer, error) -> GlobalAddress:
    """The GlobalAddress a kernel's ``__gm__ T*`` points at, typing its buffer as T.

    Raises (through ``error(op, detail, kind)``):
        KernelError: the address is in no buffer of the launch, is not on a T boundary, or the buffer has
            another element type.
    """
    op = "SetGlobalBuffer"
    found = buffer_at(pointer.address)
    if found is None:
        raise error(op, f"address {pointer.address:#x} is in no GM buffer of this launch (a pointer moved past its "
                        "buffer, or one the kernel made itself)", "out-of-bounds")
    buffer, offset = found
    dtype = dtypes.DataType(pointer.dtype) if pointer.dtype else buffer.dtype
    problem = buffer.view_as(dtype)
    if problem:
        raise error(op, f"not simulated: {problem}", "unsupported")
    if offset % dtype.sizeof():
        raise error(op, f"{buffer.name} + {offset} bytes is not on a {dtype.name} element boundary", "misaligned")
    return GlobalAddress(buffer, offset // dtype.sizeof())
