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
from .datamove import (BlockMode, DataCopyEnhancedParams, DataCopyParams, DeqScale, InitConstValueParams, pad_t,
                       set_pad_value)
from .datamove import DataCopyPadParams, SliceInfo
from .atomic import (AtomicDtype, AtomicOp, get_store_atomic_config, set_atomic_add, set_atomic_max, set_atomic_min,
                     set_atomic_none, set_atomic_type, set_store_atomic_config)
import inspect as _inspect

from .cache import CacheLine, DcciDst, data_cache_clean_and_invalid
from .dtypes import (DataType, bfloat16, float16, float32, float_, half, int8, int16, int32, int64,
                     uint8, uint16, uint32, uint64)
from .fwk import Hardware, LocalMemAllocator, TBuf, TBufPool, TPipe, TPosition, TQue, TQueBind, get_tpipe_ptr
from .runtime import ConstExpr, GlobalAddress, KernelError, KernelFunction, LaunchResult, jit, launch
from .runtime import recoverable as _recoverable
from .sync import (HardEvent, PipeID, dump_tensor, get_block_idx, get_block_num, pipe_barrier, printf, set_flag,
                   sync_all, wait_flag)
from .tensor import CacheMode, CacheRwMode, GlobalTensor, LocalTensor
from .autosync import LocalTensorAuto, static_range  # static_range: unrolled by pyasc; its index is a Python int
from .shapeinfo import DataFormat, ShapeInfo, array, get_shape_size  # tensor shapes (asc.adv.softmax reads them)
from .crosscore import cross_core_set_flag, cross_core_wait_flag
from .blocksync import MemDsbT, data_sync_barrier, ib_set, ib_wait, notify_next_block, wait_pre_block
from .sysvar import (DEFAULT_C0_SIZE, ONE_BLK_SIZE, TOTAL_L0C_SIZE, TOTAL_L1_SIZE, ascend_is_aic, property, ascend_is_aiv, get_sys_workspace, get_task_ratio, init_soc_state,
                     set_sys_workspace)
from .dtypes import double, float64, int_, void
from .iacheck import CheckLocalMemoryIAParam, check_local_memory_ia
from .sysvar import (count_bits_cnt_same_as_sign_bit, get_arch_version, get_data_block_size_in_bytes,
                     get_sub_block_idx, get_sub_block_num, get_system_cycle, print_time_stamp, scalar_cast,
                     scalar_count_leading_zero, scalar_get_count_of_value, scalar_get_sff_value, static_assert, trap)
from .scalar import number, range  # noqa: A004 - pyasc's asc.range: its index is int32
from .trace import Access, Instr, Mem, Pipe, Sync, SyncKind, Trace
from .basic import API as _VECTOR_API
from . import adv  # pyasc's asc.adv: the vector-side math functions (issue 11 item 2)
from .cube import API as _CUBE_API

globals().update(_VECTOR_API)  # the vector instructions and their types, from their specs' registry
globals().update(_CUBE_API)  # the cube unit's instructions and parameter structs (fusekit.asc.cube)
# under the sanitizer an instruction whose access faults is skipped and the kernel goes on (runtime.recoverable)
globals().update({_name: _recoverable(_fn) for _name, _fn in
                  [*_VECTOR_API.items(), *_CUBE_API.items(), ("data_copy", data_copy), ("data_copy_pad", data_copy_pad),
                   ("dump_tensor", dump_tensor), ("data_cache_clean_and_invalid", data_cache_clean_and_invalid)]
                  if _inspect.isfunction(_fn)})


def ceildiv(x: int, y: int) -> int:
    """pyasc's ``asc.ceildiv``: ``(x + y - 1) // y`` as pyasc computes it (``core/utils.py``), so on
    int32 scalars the sum is checked for wrap-around like any kernel arithmetic."""
    return (x + y - 1) // y


def __getattr__(name: str):
    """``asc.DataCopy`` and friends: point at pyasc's spelling instead of a bare AttributeError."""
    from .names import unknown
    from .runtime import kernel_frame, running_core

    message = unknown("asc", name, __all__)
    frame = kernel_frame() if running_core() is not None else None
    if frame is not None:  # inside a kernel: say where (an AttributeError still, so hasattr() keeps working)
        message = f"asc.{name} at {frame.f_code.co_filename}:{frame.f_lineno}: {message}"
    raise AttributeError(message)


__all__ = sorted([  # plus every vector instruction and its types (fusekit.asc.basic.API)
    "Access", "adv", "CacheLine", "ConstExpr", "DataCopyExtParams", "DataCopyPadExtParams", "DataType", "DcciDst",
    "CacheMode", "CacheRwMode", "GlobalAddress", "GlobalTensor", "HardEvent", "Instr", "KernelError", "KernelFunction", "LaunchResult",
    "LocalTensor", "LocalTensorAuto", "Mem", "Pipe", "PipeID", "Sync", "SyncKind", "TBuf", "TPipe", "TPosition", "TQue", "Trace",
    "bfloat16", "ceildiv", "data_cache_clean_and_invalid", "data_copy", "data_copy_pad", "dump_tensor", "float16",
    "float32", "float_", "get_block_idx", "get_block_num", "half", "int8", "int16", "int32", "int64", "jit",
    "launch", "number", "pipe_barrier", "printf", "range", "set_flag", "static_range", "sync_all", "uint8",
    "uint16", "uint32", "uint64", "wait_flag",
    "BlockMode", "DataCopyEnhancedParams", "DataCopyParams", "DeqScale", "InitConstValueParams", "init_const_value",
    "pad_t", "AtomicDtype", "AtomicOp", "get_store_atomic_config", "set_store_atomic_config", "set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_none", "set_atomic_type",
    "set_pad_value",
    "count_bits_cnt_same_as_sign_bit", "cross_core_set_flag", "cross_core_wait_flag", "get_arch_version",
    "get_data_block_size_in_bytes", "get_tpipe_ptr", "get_sub_block_idx", "get_sub_block_num", "get_system_cycle", "print_time_stamp",
    "scalar_cast", "scalar_count_leading_zero", "scalar_get_count_of_value", "scalar_get_sff_value", "static_assert",
    "trap",
    "DataFormat", "ShapeInfo", "array", "get_shape_size",
    "MemDsbT", "data_sync_barrier", "ib_set", "ib_wait", "notify_next_block", "wait_pre_block", "ONE_BLK_SIZE",
    "DEFAULT_C0_SIZE", "TOTAL_L0C_SIZE", "TOTAL_L1_SIZE", "property",
    "ascend_is_aic", "ascend_is_aiv", "get_sys_workspace", "get_task_ratio", "init_soc_state", "set_sys_workspace", "double",
    "float64", "int_", "void", "Hardware", "LocalMemAllocator", "TBufPool", "TQueBind", "CheckLocalMemoryIAParam",
    "check_local_memory_ia", "DataCopyPadParams", "SliceInfo",
    *_VECTOR_API, *_CUBE_API,
])
