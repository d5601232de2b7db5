"""``check_local_memory_ia``: UB access watch ranges that stop the kernel (an "illegal access" exception).

Rules (asc-devkit ``docs/zh/api/SIMD-API/基础API/调试接口/异常检测/CheckLocalMemoryIA(ISASI).md``; pyasc
``asc.language.basic.check_local_memory_ia`` page): four exception registers (``enable_bit`` 0..3); each watches
the UB addresses in ``(start_addr, end_addr]``, given in 32 B units (0..65535), for the kinds of access it enables:
scalar, vector and MTE reads and writes. A watched access raises an exception (ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
a call with ``is_enable=False`` resets the register. Supported on Atlas A2/A3 and the inference AI Core.

Here the range is read in bytes, ``start_addr * 32 < byte <= end_addr * 32`` (the page's example watches a
tensor with start = its address / 32 and end = its end / 32), and a watched access is a KernelError of kind
``ia-exception`` at the instruction that made it: PIPE_S accesses are scalar, PIPE_V vector, PIPE_MTE2 / MTE3 MTE.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusekit.machine import space_named

from .runtime import current
from .trace import Pipe

UB = space_named("UB")  # the exception registers watch UB addresses (CheckLocalMemoryIA(ISASI).md)
REGISTERS = 4
MAX_ADDR = 65535
_KIND = {Pipe.S: "scalar", Pipe.V: "vector", Pipe.MTE2: "mte", Pipe.MTE3: "mte"}


@dataclass
class CheckLocalMemoryIAParam:
    """pyasc ``asc.CheckLocalMemoryIAParam`` (core/types.py): one exception register's configuration."""

    enable_bit: int = 0
    start_addr: int = 0
    end_addr: int = 0
    is_scalar_read: bool = False
    is_scalar_write: bool = False
    is_vector_read: bool = False
    is_vector_write: bool = False
    is_mte_read: bool = False
    is_mte_write: bool = False
    is_enable: bool = False


def check_local_memory_ia(check_params: CheckLocalMemoryIAParam) -> None:
    """``CheckLocalMemoryIA(checkParams)``: arm (or, with ``is_enable=False``, reset) exception register
    ``enable_bit``. Later UB accesses of the enabled kinds inside the range raise KernelError (``ia-exception``).

    Raises:
        KernelError: not a CheckLocalMemoryIAParam; enable_bit outside 0..3; addresses outside 0..65535; the SoC
            lacks the check (the page's 产品支持情况).
    """
    core, op = current("check_local_memory_ia"), "check_local_memory_ia"
    p = check_params
    if not isinstance(p, CheckLocalMemoryIAParam):
        raise core.error(op, f"expected an asc.CheckLocalMemoryIAParam, got {type(p).__name__}")
    if core.soc.arch not in ("2201", "2002"):
        raise core.error(op, f"{core.soc.name} has no CheckLocalMemoryIA (CheckLocalMemoryIA(ISASI).md)",
                         kind="unsupported")
    if not 0 <= int(p.enable_bit) < REGISTERS:
        raise core.error(op, f"enable_bit={p.enable_bit!r}: exception registers 0..{REGISTERS - 1}")
    for name in ("start_addr", "end_addr"):
        if not 0 <= int(getattr(p, name)) <= MAX_ADDR:
            raise core.error(op, f"{name}={getattr(p, name)!r}: in 32 B units, 0..{MAX_ADDR} (CheckLocalMemoryIA(ISASI).md)")
    registers = core.ia_checks
    if p.is_enable:
        registers[int(p.enable_bit)] = p
        core.observe(watch, first=True)  # a watched access stops before any other observer records for it
    else:
        registers.pop(int(p.enable_bit), None)
    core.record(op, Pipe.S)


def watch(core, op: str, pipe: Pipe, reads, writes, sync=None) -> None:
    """Raise the exception an enabled register takes for these UB accesses (a ``Core.observe`` observer, registered
    when a register is first armed; nothing to do once every register is reset)."""
    kind = _KIND.get(pipe)
    for bit, p in sorted(core.ia_checks.items()):
        lo, hi = int(p.start_addr) * 32, int(p.end_addr) * 32
        for what, accesses in (("read", reads), ("write", writes)):
            if not getattr(p, f"is_{kind}_{what}", False):
                continue
            for acc in accesses:
                if acc.mem is UB and acc.stop - 1 > lo and acc.start <= hi:
                    raise core.error(op, f"{kind} {what} of UB bytes [{acc.start}, {acc.stop}) ({acc.tensor}) inside the "
                                         f"range ({p.start_addr} x 32, {p.end_addr} x 32] watched by exception register "
                                         f"{bit} (check_local_memory_ia): on the NPU the core stops with "
                                         "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", kind="ia-exception",
                                     tensor=acc.tensor, mem="UB", buffer="UB", byte_range=(acc.start, acc.stop))
