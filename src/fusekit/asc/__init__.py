"""``fusekit.asc``: the Ascend C programming model on the CPU, with pyasc 1.1.1's names.

Write ``from fusekit import asc`` and use it as pyasc's ``import asc``::

    @asc.jit
    def kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int): ...

    result = kernel[8](x_array, y_array, n)   # runs 8 simulated AIV cores, returns the Trace

Everything a kernel does is checked against the hardware's rules and recorded in
``result.trace`` (see :mod:`fusekit.asc.trace`). Simulator-only extensions: ``bfloat16`` (pyasc
1.1.1 has none), NaN-poisoned UB, and the launch options ``soc=`` and ``strict=``.
"""

from .datamove import DataCopyExtParams, DataCopyPadExtParams, data_copy, data_copy_pad
from .dtypes import (DataType, bfloat16, float16, float32, float_, half, int8, int16, int32, int64, number,
                     uint8, uint16, uint32, uint64)
from .fwk import TBuf, TPipe, TPosition, TQue
from .runtime import ConstExpr, GlobalAddress, KernelError, KernelFunction, LaunchResult, jit, launch
from .sync import (HardEvent, PipeID, dump_tensor, get_block_idx, get_block_num, pipe_barrier, printf, set_flag,
                   sync_all, wait_flag)
from .tensor import GlobalTensor, LocalTensor
from .trace import Access, Instr, Mem, Pipe, Sync, SyncKind, Trace
from .vector import (RoundMode, abs, add, adds, cast, div, duplicate, exp, ln, max, maxs, min, mins, mul, muls,
                     reciprocal, relu, rsqrt, sqrt, sub)



range = range  # noqa: A001 - pyasc's asc.range: a runtime loop (the simulator runs it as Python's)
static_range = range  # pyasc unrolls it at trace time; the simulator runs it as a loop


def ceildiv(a: int, b: int) -> int:
    """pyasc's ``asc.ceildiv``: ceil(a / b) for integers."""
    return -(-a // b)


def __getattr__(name: str):
    """``asc.DataCopy`` and friends: point at pyasc's spelling instead of a bare AttributeError."""
    from .names import unknown

    raise AttributeError(unknown("asc", name, __all__))


__all__ = [
    "Access", "ConstExpr", "DataCopyExtParams", "DataCopyPadExtParams", "DataType", "GlobalAddress", "GlobalTensor",
    "HardEvent", "Instr", "KernelError", "KernelFunction", "LaunchResult", "LocalTensor", "Mem", "Pipe", "PipeID",
    "RoundMode", "Sync", "SyncKind", "TBuf", "TPipe", "TPosition", "TQue", "Trace",
    "abs", "add", "adds", "bfloat16", "cast", "ceildiv", "data_copy", "data_copy_pad", "div", "dump_tensor", "duplicate", "exp",
    "float16", "float32", "float_", "get_block_idx", "get_block_num", "half", "int8", "int16", "int32", "int64", "jit",
    "launch", "ln", "max", "maxs", "min", "mins", "mul", "muls", "number", "pipe_barrier", "printf", "reciprocal",
    "range", "relu", "rsqrt", "set_flag", "sqrt", "static_range", "sub", "sync_all", "uint8", "uint16", "uint32", "uint64", "wait_flag",
]
