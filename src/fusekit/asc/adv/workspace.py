"""Temporary space and Trace steps shared by the composite ``asc.adv`` APIs (softmax, rmsnorm).

Temporary space (SoftMax.md / RmsNorm.md, 函数原型): either the kernel passes ``sharedTmpBuffer``
(``temp_buffer``, a uint8 LocalTensor), or the API takes the "stack": ``PopStackBuffer<float, LCM>``
(asc-devkit ``impl/basic_api/kernel_pop_stack_buffer.h``) hands out the UB from the end of TPipe's queues and
buffers (``GetQueueEndAddress``) to the end of UB. fusekit's stack is [TPipe's used bytes rounded up to 32 B,
the lowest ``LocalTensorAuto`` buffer or the end of UB); tensors a kernel places by address are not seen by
PopStackBuffer on the NPU either, so a stack that runs over them is the kernel's bug (the sanitizer then sees
the API's writes there).

Trace steps: a composite API records one PIPE_V instruction per basic instruction class of its documented
decomposition and row chunk (``Step``), each with the UB byte ranges it reads and writes, ``cost`` = the
basic instruction's Ascend C name; the values are computed once, by the last step's effect, and the part of
the temporary space the API used is left undefined.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..basic.overlap import intersects
from ..tensor import LocalTensor
from ..trace import Access, Mem, Pipe


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
        return Access(Mem.UB, "UB", self.start + first, self.start + first + nbytes, self.name)


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
    used = getattr(core.pipe, "used", 0) if core.pipe is not None else 0
    start = -(-used // 32) * 32
    auto = core.auto
    stop = auto.low if auto is not None else core.soc.ub_bytes
    if stop <= start:
        raise core.error(op, f"no temp_buffer was passed and no UB is left for the API's own temporary space "
                             f"(PopStackBuffer: TPipe ends at UB byte {start}, kernel_pop_stack_buffer.h): pass "
                             "temp_buffer or allocate less", kind="ub-overflow")
    return Work(start, stop, f"{op} stack (UB {start}..{stop})", False)


@dataclass
class Step:
    """One basic instruction class of a decomposition (see the module docstring)."""

    cost: str
    reads: tuple
    writes: tuple
    count: int
    dtype: str


def record(core, op: str, steps: list[Step], work: Work, used: int, effect) -> None:
    """Record ``steps`` on PIPE_V; the last carries ``effect`` and leaves work bytes [0, used) undefined."""
    for i, s in enumerate(steps):
        last = i == len(steps) - 1
        size = 2 if s.dtype == "float16" else 4
        core.record(op, Pipe.V, reads=tuple(a for a in s.reads if a.stop > a.start),
                    writes=tuple(a for a in s.writes if a.stop > a.start),
                    undefined=(work.access(0, used),) if last and used else (), count=s.count,
                    nbytes=s.count * size, dtype=s.dtype, effect=effect if last else None,
                    repeats=-(-s.count * size // 256), cost=s.cost)
    if not steps and effect is not None:
        effect()
