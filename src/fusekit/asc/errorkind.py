"""The kinds of :class:`fusekit.asc.KernelError`, each with the sanitizer tool that reports it.

A kind is a closed set: a misspelt kind fails where the error is made instead of landing silently in
memcheck. msSanitizer's tools (SAN): memcheck (illegal accesses, frees and leaks), synccheck (hangs),
and ``api`` for calls Ascend C does not offer as written.
"""

from __future__ import annotations

import enum


class ErrorKind(str, enum.Enum):
    """A KernelError kind. It is its string everywhere (equality, hashing, formatting, repr, JSON), so
    code and reports that compare or print ``KernelError.kind`` see the string they always saw.

    ``tool``: the sanitizer tool whose finding the error becomes (``fusekit.sanitizer.memcheck.from_error``).
    """

    tool: str

    def __new__(cls, value: str, tool: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.tool = tool
        return member

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    OUT_OF_BOUNDS = "out-of-bounds", "memcheck"
    MISALIGNED = "misaligned", "memcheck"
    UNALIGNED_LENGTH = "unaligned-length", "memcheck"      # a DataCopy length the NPU rounds down
    PARTIAL_OVERLAP = "partial-overlap", "memcheck"        # 通用地址重叠约束 and the pages' overlap rules
    UB_OVERFLOW = "ub-overflow", "memcheck"
    LEAK = "leak", "memcheck"
    DOUBLE_FREE = "double-free", "memcheck"
    ILLEGAL_FREE = "illegal-free", "memcheck"
    FOREIGN_TENSOR = "foreign-tensor", "memcheck"
    ILLEGAL_ENQUE = "illegal-enque", "memcheck"
    MASK_RANGE = "mask-range", "memcheck"                  # a mask with bits past the repeat's lanes
    TRAP = "trap", "memcheck"                              # asc.trap(): the kernel stops the core
    IA_EXCEPTION = "ia-exception", "memcheck"              # an illegal-address check the kernel asked for
    OVERFLOW = "overflow", "memcheck"                      # kernel int32 arithmetic that wraps (scalar.py)
    TILING = "tiling", "memcheck"                          # an adv tiling helper refused its arguments in a kernel
    DEADLOCK = "deadlock", "synccheck"
    UNSUPPORTED = "unsupported", "api"                     # a dtype, SoC or form the instruction lacks
    API = "api", "api"                                     # any other misuse of the API
