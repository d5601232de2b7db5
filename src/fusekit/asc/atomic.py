"""Atomic accumulation of stores to GM: ``set_atomic_add`` / ``set_atomic_max`` / ``set_atomic_min`` /
``set_atomic_type`` / ``set_atomic_none`` (pyasc basic/set_atomic.py; AD-API 原子操作/SetAtomicAdd.md,
SetAtomicMax(ISASI).md, SetAtomicMin(ISASI).md, SetAtomicType.md, DisableDmaAtomic.md).

While a core's atomic mode is on, every transfer it makes from UB to GM (``data_copy`` /
``data_copy_pad`` UB -> GM, PIPE_MTE3) combines each element with the value already in GM instead
of overwriting it: the sum (add), the larger (max) or the smaller (min) is written
(SetAtomicAdd.md: "将待拷贝的内容和GM已有内容进行求和，然后将求和结果写入GM"). GM is not cleared
first. Each element's read-modify-write is atomic, so cores that accumulate into the same GM
need no synchronisation between them: the sanitizer does not report two atomic stores of the
same kind as a race (their order does not change an exact result), and the Trace marks their
writes (``Access.atomic``). The store's read of GM is recorded too (:func:`gm_reads`: the same bytes,
the same mark), so the sanitizer sees a plain write racing with it and the timing model sees the read.

Dtypes (each page's 数据类型): A2/A3 (arch 2201) int8, int16, half, bfloat16, int32, float for add,
max and min; 310P AI Core (arch 2002) int16, half, float for add and set_atomic_type, no max/min.
The stored tensor's dtype must be the atomic dtype. Assumptions (the pages do not say): a float
sum is rounded once to the dtype, to nearest even (IEEE addition); an integer sum wraps around
(two's complement); NaN follows numpy's add / maximum / minimum (NaN propagates).
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from . import corestate, dtypes
from .runtime import current
from .trace import Access, Pipe

_ALL = frozenset({"int8", "int16", "float16", "bfloat16", "int32", "float32"})
DTYPES = {  # (arch, operation) -> dtype names; the pages' 数据类型 sections
    ("2201", "add"): _ALL, ("2201", "max"): _ALL, ("2201", "min"): _ALL, ("2201", "type"): _ALL,
    ("2002", "add"): frozenset({"int16", "float16", "float32"}),
    ("2002", "type"): frozenset({"int16", "float16", "float32"}),
}
_PAGES = {"add": "SetAtomicAdd.md", "max": "SetAtomicMax(ISASI).md", "min": "SetAtomicMin(ISASI).md",
          "type": "SetAtomicType.md"}


@dataclasses.dataclass
class AtomicMode:
    """A core's store-atomic state: ``op`` "add" / "max" / "min" or None (off), ``dtype`` its dtype."""

    op: str | None = None
    dtype: dtypes.DataType | None = None


def mode_of(core) -> AtomicMode:
    mode = core.atomic
    if mode is None:
        mode = core.atomic = AtomicMode()
    return mode


def _set(name: str, op: str, dtype) -> None:
    core = current(name)
    kind = op if op != "type" else "type"
    if dtype is None and op != "type":
        dtype = mode_of(core).dtype  # pyasc's set_atomic_add() form: the type set by set_atomic_type
    if dtype is not None:
        if not isinstance(dtype, dtypes.DataType):
            raise core.error(name, f"dtype must be an asc dtype (asc.float32, asc.half, ...), got {dtype!r}")
        allowed = DTYPES.get((core.soc.arch, kind))
        if allowed is None:
            raise core.error(name, f"{name} does not exist on {core.soc.name} ({_PAGES[kind]} 产品支持情况)",
                             kind="unsupported")
        if dtype.name not in allowed:
            raise core.error(name, f"{name} does not take {dtype.name} on {core.soc.name}; it takes "
                                   f"{', '.join(sorted(allowed))} ({_PAGES[kind]} 数据类型)", kind="unsupported")
    elif (core.soc.arch, kind) not in DTYPES:
        raise core.error(name, f"{name} does not exist on {core.soc.name} ({_PAGES[kind]} 产品支持情况)",
                         kind="unsupported")
    mode = mode_of(core)
    if op == "type":
        mode.dtype = dtype
    else:
        mode.op, mode.dtype = op, dtype
    core.record(name, Pipe.S)
    if op != "type":  # set_atomic_type alone leaves the atomic operation on or off as it was
        corestate.written(core, "atomic")
    if op != "type":  # the page asks for set_atomic_none before the kernel ends (corestate.OBLIGATIONS)
        corestate.set_by(core, "atomic")


def set_atomic_add(dtype=None) -> None:
    """Turn on atomic add for the core's later UB -> GM stores, in ``dtype`` (default: the type of
    ``set_atomic_type``). PIPE_S. Raises KernelError for a dtype the SoC's page does not list."""
    _set("set_atomic_add", "add", dtype)


def set_atomic_max(dtype=None) -> None:
    """Atomic max for later UB -> GM stores (A2/A3 only, SetAtomicMax(ISASI).md)."""
    _set("set_atomic_max", "max", dtype)


def set_atomic_min(dtype=None) -> None:
    """Atomic min for later UB -> GM stores (A2/A3 only, SetAtomicMin(ISASI).md)."""
    _set("set_atomic_min", "min", dtype)


def set_atomic_type(dtype) -> None:
    """Set the dtype of the atomic operation without changing which one is on (SetAtomicType.md)."""
    _set("set_atomic_type", "type", dtype)


def set_atomic_none() -> None:
    """Turn atomic stores off (DisableDmaAtomic.md: 清空原子操作的状态). PIPE_S."""
    core = current("set_atomic_none")
    mode = mode_of(core)
    mode.op, mode.dtype = None, None
    core.record("set_atomic_none", Pipe.S)
    corestate.written(core, "atomic")
    corestate.restored(core, "atomic")


def store_mode(core, op: str, tensor) -> AtomicMode | None:
    """The atomic mode a UB -> GM store of ``tensor`` runs under, or None when atomics are off.

    Raises:
        KernelError: atomics are on without a dtype, or in a dtype other than the tensor's.
    """
    corestate.read(core, "atomic", op)
    mode = core.atomic
    if mode is None or mode.op is None:
        return None
    if mode.dtype is None:
        raise core.error(op, f"atomic {mode.op} is on but has no dtype: pass it (asc.set_atomic_{mode.op}(asc.float32)) "
                             "or call asc.set_atomic_type(dtype) first", tensor=tensor.name)
    if mode.dtype is not tensor.dtype:
        raise core.error(op, f"atomic {mode.op} is set for {mode.dtype.name} but {tensor.name} is "
                             f"{tensor.dtype.name}: the NPU would combine these bytes as {mode.dtype.name}. Call "
                             f"asc.set_atomic_{mode.op}(asc.{tensor.dtype.name}) (or set_atomic_none) before this copy",
                         tensor=tensor.name)
    return dataclasses.replace(mode)


def mark(access: Access, mode: AtomicMode | None) -> Access:
    """``access`` marked as an atomic write of ``mode`` (the Trace's ``Access.atomic``: "add.float32")."""
    return access if mode is None else dataclasses.replace(access, atomic=f"{mode.op}.{mode.dtype.name}")


def gm_reads(writes) -> tuple[Access, ...]:
    """The GM reads of a store: an atomic write reads the bytes it combines with (SetAtomicAdd.md: "将待
    拷贝的内容和GM已有内容进行求和"), so each atomic write Access is also a read of the same bytes, marked
    with the same kind (the sanitizer treats reads and writes of one atomic kind as commuting). A plain
    store reads no GM: ``()``."""
    return tuple(w for w in writes if w.atomic)


def combiner(mode: AtomicMode | None):
    """The ``compute`` of a store under ``mode`` (``fusekit.asc.effect.Effect``, with ``reads_dst``): ``f(new, old)``
    of the stored lanes and the lanes GM holds, in the atomic dtype (the tensor's, :func:`store_mode`); None when
    atomics are off (the store overwrites)."""
    if mode is None:
        return None
    if mode.op == "add":
        return _add_float if mode.dtype.is_float else _add_integer
    return _max if mode.op == "max" else _min


def _add_float(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """The float sum, exact in float64; the store rounds it once to the dtype, to nearest even (module docstring)."""
    return old.astype(np.float64) + new.astype(np.float64)


def _add_integer(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """The integer sum in the dtype, wrapping around (two's complement)."""
    return old + new


def _max(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    return np.maximum(old, new)


def _min(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    return np.minimum(old, new)


class AtomicDtype(enum.IntEnum):
    """pyasc ``asc.AtomicDtype`` (SetStoreAtomicConfig(ISASI).md: the enable field and its dtype)."""

    ATOMIC_NONE = 0
    ATOMIC_F32 = 1
    ATOMIC_F16 = 2
    ATOMIC_S16 = 3
    ATOMIC_S32 = 4
    ATOMIC_S8 = 5
    ATOMIC_BF16 = 6


class AtomicOp(enum.IntEnum):
    """pyasc ``asc.AtomicOp``: only the sum is documented (SetStoreAtomicConfig(ISASI).md)."""

    ATOMIC_SUM = 0


_CODE_DTYPE = {AtomicDtype.ATOMIC_F32: dtypes.float32, AtomicDtype.ATOMIC_F16: dtypes.float16,
               AtomicDtype.ATOMIC_S16: dtypes.int16, AtomicDtype.ATOMIC_S32: dtypes.int32,
               AtomicDtype.ATOMIC_S8: dtypes.int8, AtomicDtype.ATOMIC_BF16: dtypes.bfloat16}


def _isasi(core, op: str) -> None:
    if core.soc.arch != "2201":
        raise core.error(op, f"{op} does not exist on {core.soc.name} (SetStoreAtomicConfig(ISASI).md 产品支持情况: "
                             "A2/A3); use set_atomic_add / set_atomic_none", kind="unsupported")


def set_store_atomic_config(atomic_type, atomic_op=AtomicOp.ATOMIC_SUM) -> None:
    """``SetStoreAtomicConfig<type, op>()``: ATOMIC_NONE turns store atomics off, another type turns
    atomic add on in that dtype (the only documented op is the sum). PIPE_S; A2/A3 only."""
    core = current("set_store_atomic_config")
    _isasi(core, "set_store_atomic_config")
    if not isinstance(atomic_type, AtomicDtype) or not isinstance(atomic_op, AtomicOp):
        raise core.error("set_store_atomic_config", "pass asc.AtomicDtype and asc.AtomicOp values, got "
                                                    f"{atomic_type!r}, {atomic_op!r}")
    mode = mode_of(core)
    mode.op, mode.dtype = (None, None) if atomic_type is AtomicDtype.ATOMIC_NONE else ("add", _CODE_DTYPE[atomic_type])
    core.record("set_store_atomic_config", Pipe.S)
    corestate.written(core, "atomic")
    if mode.op is None:
        corestate.restored(core, "atomic")
    else:
        corestate.set_by(core, "atomic")


def get_store_atomic_config() -> tuple[int, int]:
    """``GetStoreAtomicConfig``: (atomic_type, atomic_op) as GetStoreAtomicConfig(ISASI).md numbers them.

    Raises:
        KernelError: on 310P, or while atomic max / min is on (the page documents op 0, sum, only).
    """
    core = current("get_store_atomic_config")
    _isasi(core, "get_store_atomic_config")
    mode = mode_of(core)
    if mode.op in ("max", "min"):
        raise core.error("get_store_atomic_config", f"atomic {mode.op} is on; GetStoreAtomicConfig(ISASI).md documents "
                                                    "atomic_op 0 (sum) only, so fusekit does not know its code")
    core.record("get_store_atomic_config", Pipe.S)
    if mode.op is None or mode.dtype is None:
        return int(AtomicDtype.ATOMIC_NONE), int(AtomicOp.ATOMIC_SUM)
    code = next(c for c, d in _CODE_DTYPE.items() if d is mode.dtype)
    return int(code), int(AtomicOp.ATOMIC_SUM)
