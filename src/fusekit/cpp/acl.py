"""The device side of a host program's ACL calls (``include/acl/acl.h``): device memory and copies to and from it.

``aclrtMalloc`` gives a region of simulated device memory (a numpy byte array) at a device address of
:func:`fusekit.cpp.memory.allocate` (no host memory is there, so the host dereferencing it faults, as on the
NPU's host); ``aclrtMemcpy`` copies between host memory and regions, checking the copy kind against where each
pointer is (ACL API reference, aclrtMemcpy: ``count`` at most ``destMax``, host and device pointers as the kind
says). A kernel launch gives each pointer argument the region's bytes from that pointer on
(:func:`Device.view`). A call used wrongly returns ACL's error code and prints why, naming the call's file:line,
as a failing ACL call does (the program goes on, and a later check of the code stops it).
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from .memory import Pointer, allocate

ACL_SUCCESS, ACL_ERROR_INVALID_PARAM, ACL_ERROR_UNINITIALIZE, ACL_ERROR_BAD_ALLOC = 0, 100000, 100001, 200000
HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT = range(5)
KINDS = ("ACL_MEMCPY_HOST_TO_HOST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACL_MEMCPY_DEVICE_TO_HOST",
         "ACL_MEMCPY_DEVICE_TO_DEVICE", "ACL_MEMCPY_DEFAULT")
MAX_ALLOCATION = 64 << 30  # bytes: the HBM of an Atlas A2 card; more is ACL_ERROR_BAD_ALLOC


class Device:
    """The simulated device memory of one host program: regions by base address."""

    def __init__(self, site):
        self.regions: dict[int, np.ndarray] = {}
        self._freed_sizes: dict[int, int] = {}  # what aclrtFree gave back: a later use is named as a use after free
        self.failures = 0  # ACL calls that returned an error (counted by answer())
        self.site = site  # () -> "file:line" of the ACL call being answered

    def warn(self, call: str, text: str, code):
        """Say why ``call`` failed (on stderr, naming its file:line); returns ``code``."""
        sys.stdout.flush()
        print(f"fusekit: {call} at {self.site()}: {text}", file=sys.stderr, flush=True)
        return code

    def region(self, address: int) -> tuple[int, np.ndarray] | None:
        """The region holding ``address`` (its base and bytes; one past the end counts), or None."""
        for base, data in self.regions.items():
            if base <= address <= base + data.size:
                return base, data
        return None

    def view(self, pointer: Pointer) -> np.ndarray | None:
        """The bytes of device memory from ``pointer`` to the end of its region (None: not device memory)."""
        found = self.region(pointer.address)
        return None if found is None else found[1][pointer.address - found[0]:]

    # ---- the calls of acl.h, by their ACL names
    def aclrtMalloc(self, size: int) -> int:
        if size == 0 or size > MAX_ALLOCATION:
            self.warn("aclrtMalloc", f"cannot allocate {size} bytes (1 to {MAX_ALLOCATION})", 0)
            return 0
        base = allocate(size)
        self.regions[base] = np.zeros(size, np.uint8)  # zeroed, so a run does not depend on what memory held
        return base

    def was_freed(self, address: int) -> bool:
        """Whether ``address`` is in memory aclrtFree gave back (and no later aclrtMalloc took again)."""
        return any(base <= address < base + size for base, size in self._freed_sizes.items())

    def aclrtFree(self, pointer: Pointer) -> int:
        region = self.regions.pop(pointer.address, None)
        if region is not None:
            self._freed_sizes[pointer.address] = region.size
        if region is None:
            return self.warn("aclrtFree", f"{pointer.address:#x} is not the start of memory from aclrtMalloc "
                                          "(freed twice, or a host pointer)", ACL_ERROR_INVALID_PARAM)
        return ACL_SUCCESS

    def aclrtMemcpy(self, dst: Pointer, dest_max: int, src: Pointer, count: int, kind: int) -> int:
        call = "aclrtMemcpy"
        if count > dest_max:
            return self.warn(call, f"count {count} is more than destMax {dest_max}", ACL_ERROR_INVALID_PARAM)
        if not 0 <= kind < len(KINDS):
            return self.warn(call, f"kind {kind} is no aclrtMemcpyKind", ACL_ERROR_INVALID_PARAM)
        if count == 0:
            return ACL_SUCCESS
        if kind == DEFAULT:  # the runtime tells from the addresses where each side is
            to_device, from_device = self.region(dst.address) is not None, self.region(src.address) is not None
        else:
            to_device, from_device = kind in (HOST_TO_DEVICE, DEVICE_TO_DEVICE), kind in (DEVICE_TO_HOST, DEVICE_TO_DEVICE)
        to = self._end(call, dst, count, to_device, "dst", kind)
        source = self._end(call, src, count, from_device, "src", kind)
        if to is None or source is None:
            return ACL_ERROR_INVALID_PARAM
        ctypes.memmove(to, source, count)
        return ACL_SUCCESS

    def aclrtMemset(self, pointer: Pointer, max_count: int, value: int, count: int) -> int:
        call = "aclrtMemset"
        if count > max_count:
            return self.warn(call, f"count {count} is more than maxCount {max_count}", ACL_ERROR_INVALID_PARAM)
        to = self._end(call, pointer, count, True, "devPtr", None)
        if to is None:
            return ACL_ERROR_INVALID_PARAM
        ctypes.memset(to, value & 0xFF, count)
        return ACL_SUCCESS

    def _end(self, call: str, pointer: Pointer, count: int, device: bool, name: str, kind: int | None):
        """The host address to copy ``count`` bytes at ``pointer`` from or to; None (after saying why): not as
        the kind says."""
        found = self.region(pointer.address)
        where = f" ({KINDS[kind]})" if kind is not None else ""
        if not device:
            if found is not None:
                return self.warn(call, f"{name} {pointer.address:#x} is device memory but the kind{where} says host "
                                       "memory", None)
            if pointer.address == 0:
                return self.warn(call, f"{name} is a null pointer", None)
            return pointer.address
        if found is None:
            if self.was_freed(pointer.address):
                return self.warn(call, f"{name} {pointer.address:#x} is device memory that aclrtFree gave back "
                                       "(a use after free)", None)
            return self.warn(call, f"{name} {pointer.address:#x} is not device memory from aclrtMalloc but the "
                                   f"kind{where} says device memory", None)
        base, data = found
        if pointer.address - base + count > data.size:
            return self.warn(call, f"{count} bytes at {name} run {pointer.address - base + count - data.size} bytes "
                                   f"past the end of its {data.size}-byte aclrtMalloc region", None)
        return data.ctypes.data + (pointer.address - base)


def answer(device: Device, call: str, values: list) -> int:
    """The result of ``fusekit.acl.<call>`` (acl.h), for ``device``; a failed call is counted."""
    if call in ("aclInit", "aclFinalize"):
        return ACL_SUCCESS
    if call in ("aclrtSetDevice", "aclrtResetDevice"):
        result = ACL_SUCCESS
        if values[0] != 0:
            result = device.warn(call, f"device {values[0]} does not exist: fusekit simulates one device, 0",
                                 ACL_ERROR_INVALID_PARAM)
    else:
        result = getattr(device, call)(*values)
    device.failures += (result == 0) if call == "aclrtMalloc" else (result != ACL_SUCCESS)
    return result
