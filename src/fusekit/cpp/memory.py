"""GM as a C++ kernel sees it: buffers at device addresses, and the element type ``SetGlobalBuffer<T>`` gives them.

A C++ kernel does pointer arithmetic on its ``GM_ADDR`` arguments (``(__gm__ half*)x + offset``) before it gives
the pointer to ``GlobalTensor::SetGlobalBuffer``. fusekit gives every GM buffer of a launch a device address that
no host memory uses (:data:`DEVICE_BASE` upwards, 1 MiB apart), and maps the pointer the kernel passes back to
(buffer, byte offset) here.

A buffer's bytes are host memory mapped at its device address (Linux: ``mmap`` with ``MAP_FIXED_NOREPLACE``), so
the kernel's compiled code may also read and write GM through the pointer itself, as asc-devkit's samples read their
tiling (``CopyTiling``: ``*(tiling32 + i)``); such native accesses are the kernel's own C++, which the Trace and the
sanitizer do not see (bytes written so are copied back to the host all the same:
:meth:`DeviceBuffer.natively_written`). The gaps between buffers stay unmapped: a pointer moved past its buffer
faults, and the fault is a KernelError (``fusekit.crash``). Where the address cannot be mapped the bytes are an
ordinary array and a native access faults the same way.

A buffer's element type: a numpy argument's dtype; device memory from ``aclrtMalloc`` (:mod:`fusekit.cpp.acl`)
is bytes until the kernel's first ``SetGlobalBuffer<T>`` of the launch types it. The simulator's GM buffers have
one element type per launch, so a second, different ``T`` on the same buffer is refused, naming both.
"""

from __future__ import annotations

import ctypes
import sys
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
        self.typed = self.dtype not in _RAW
        self.base = _allocate(source.nbytes) if base is None else base
        self.data = _mapped(self.base, source.nbytes)
        _LIVE[self.base] = self
        self.load()

    def load(self) -> None:
        self.data[:] = self.source.reshape(-1).view(np.uint8)

    def natively_written(self) -> bool:
        """Whether the kernel's compiled code changed the bytes through its pointer (module docstring), which no
        Trace write records: the launch then copies them back as it does the Trace's."""
        return not np.array_equal(self.data, self.source.reshape(-1).view(np.uint8))

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


# host memory at device addresses (module docstring): one block per base, unmapped when no array views it any more
_PAGE = 4096
_PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS, _MAP_FIXED_NOREPLACE = 0x3, 0x22, 0x100000
_BLOCKS: "weakref.WeakValueDictionary[int, ctypes.Array]" = weakref.WeakValueDictionary()


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return libc


_LIBC = _libc() if sys.platform.startswith("linux") else None


def _mapped(base: int, nbytes: int) -> np.ndarray:
    """``nbytes`` bytes of host memory at address ``base`` (a view of the block mapped there, mapped now if none
    is), or a plain array where the address cannot be mapped."""
    size = -(-max(nbytes, 1) // _PAGE) * _PAGE
    block = _BLOCKS.get(base)
    if block is None:
        block = _map(base, size)
    elif len(block) < size:  # a larger buffer at a base a smaller one still holds: not mapped natively
        block = None
    if block is None:
        return np.empty(nbytes, np.uint8)
    return np.frombuffer(block, np.uint8, count=nbytes)


def _map(base: int, size: int) -> "ctypes.Array | None":
    if _LIBC is None:
        return None
    got = _LIBC.mmap(base, size, _PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS | _MAP_FIXED_NOREPLACE, -1, 0)
    if got != base:  # taken, refused, or (a kernel before Linux 4.17) placed elsewhere as a hint
        if got not in (None, ctypes.c_void_p(-1).value):
            _LIBC.munmap(got, size)
        return None
    block = (ctypes.c_uint8 * size).from_address(base)
    weakref.finalize(block, _LIBC.munmap, base, size)
    _BLOCKS[base] = block
    return block


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
