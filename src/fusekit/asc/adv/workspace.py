"""Temporary space shared by the composite ``asc.adv`` APIs (softmax, rmsnorm, the math functions).

Temporary space (SoftMax.md / RmsNorm.md, 函数原型): either the kernel passes ``sharedTmpBuffer``
(``temp_buffer``, a uint8 LocalTensor), or the API takes the "stack": ``PopStackBuffer<float, LCM>``
(asc-devkit ``impl/basic_api/kernel_pop_stack_buffer.h``) hands out the UB from the end of TPipe's queues and
buffers (``GetQueueEndAddress``) to the end of UB. fusekit's stack is [TPipe's used bytes rounded up to 32 B,
the lowest ``LocalTensorAuto`` buffer or the end of UB); tensors a kernel places by address are not seen by
PopStackBuffer on the NPU either, so a stack that runs over them is the kernel's bug (the sanitizer then sees
the API's writes there).

What an API computes in that space, and the Trace records it leaves, is its decomposition (:mod:`.decompose`);
the part of the space the API used is left undefined by its last record.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusekit.machine import space_named

from ..basic.overlap import intersects
from ..tensor import LocalTensor
from ..trace import Access, Pipe

# the temporary space is UB: sharedTmpBuffer is a UB tensor and PopStackBuffer hands out UB (module docstring)
UB = space_named("UB")


@dataclass
class Work:
    """The temporary space an API works in: UB bytes [start, stop) and how messages call it."""

    start: int
    stop: int
    name: str
    given: bool  # a temp_buffer passed by the kernel (else the stack)

    @property
    def nbytes(self) -> int:
        return self.stop - self.start

    def access(self, first: int, nbytes: int) -> Access:
        """Bytes [first, first + nbytes) of the space (relative offsets)."""
        return Access(UB, UB.name, self.start + first, self.start + first + nbytes, self.name)


def work_space(core, op: str, page: str, temp_buffer, operands) -> Work:
    """The temporary space of this call: ``temp_buffer`` (checked: uint8 UB LocalTensor, no overlap with
    ``operands``) or the stack (see the module docstring).

    Raises:
        KernelError: temp_buffer not a uint8 LocalTensor, overlapping an operand (page: 不支持sharedTmpBuffer与源操作数和
        目的操作数地址重叠), or no UB left for the stack.
    """
    if temp_buffer is not None:
        if not isinstance(temp_buffer, LocalTensor) or temp_buffer.dtype.name != "uint8":
            what = temp_buffer.dtype.name if isinstance(temp_buffer, LocalTensor) else type(temp_buffer).__name__
            raise core.error(op, f"temp_buffer is {what}; sharedTmpBuffer is a LocalTensor<uint8_t> ({page}): "
                                 "allocate it with asc.uint8", kind="unsupported")
        from .. import checks
        checks.local_operands(core, op, temp_buffer)
        span = temp_buffer.span(core, op, temp_buffer.length)
        for t, r in operands:
            if span[1] > span[0] and r[1] > r[0] and intersects(span, r):
                raise core.error(op, f"temp_buffer {temp_buffer.name} overlaps {t.name} ({page}, 约束说明: 不支持"
                                     "sharedTmpBuffer与源操作数和目的操作数地址重叠): use a separate buffer",
                                 kind="partial-overlap", **temp_buffer.describe(temp_buffer.length))
        return Work(span[0], span[1], temp_buffer.name, True)
    used = core.pipe.ub_used() if core.pipe is not None else 0
    start = -(-used // 32) * 32
    auto = core.auto
    stop = auto.low if auto is not None else core.soc.ub_bytes
    if stop <= start:
        raise core.error(op, f"no temp_buffer was passed and no UB is left for the API's own temporary space "
                             f"(PopStackBuffer: TPipe ends at UB byte {start}, kernel_pop_stack_buffer.h): pass "
                             "temp_buffer or allocate less", kind="ub-overflow")
    return Work(start, stop, f"{op} stack (UB {start}..{stop})", False)

