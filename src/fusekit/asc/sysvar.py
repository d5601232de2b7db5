"""System variables, scalar bit helpers, trap and static_assert (pyasc ``basic/sys_var.py``, ``basic/scalar.py``).

Pages (asc-devkit ``docs/zh/api/SIMD-API/基础API/``): 工具接口/系统资源与变量/GetSubBlockNum(ISASI).md,
GetSystemCycle(ISASI).md, GetArchVersion.md; 标量计算/CountLeadingZero.md, GetBitCount.md,
GetSFFValue.md, CountBitsCntSameAsSignBit.md, Cast（float转half-int32_t）.md; 调试接口/异常检测/Trap.md.
Scalar helpers run on PIPE_S; they are recorded in the Trace with no memory access.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .runtime import current
from .scalar import number
from .trace import Pipe

DATA_BLOCK_BYTES = 32  # one UB data block (AD-G 基本架构.md; GetDataBlockSizeInBytes)
_U64 = (1 << 64) - 1


def _scalar(op: str):
    core = current(op)
    core.record(op, Pipe.S)
    return core


def get_sub_block_idx() -> int:
    """``GetSubBlockIdx``: index of this core among the cores of its kind in its logical AI Core: 0 or 1 for the
    two AIVs of a MIX_AIC_1_2 kernel, else 0 (GetSubBlockIdx(ISASI).md). int64."""
    return number(_scalar("get_sub_block_idx").place.sub_block, dtypes.int64)


def get_sub_block_num() -> int:
    """``GetSubBlockNum``: cores of this core's kind per logical AI Core: 2 on an AIV of MIX_AIC_1_2, else 1
    (GetSubBlockNum(ISASI).md, 表2). uint64 as pyasc types it."""
    return number(_scalar("get_sub_block_num").place.ratio, dtypes.uint64)


def get_data_block_size_in_bytes() -> int:
    """``GetDataBlockSizeInBytes``: 32 (bytes of one data block)."""
    _scalar("get_data_block_size_in_bytes")
    return number(DATA_BLOCK_BYTES, dtypes.int32)


def get_system_cycle() -> int:
    """``GetSystemCycle``: the simulator has no clock while it runs (the timing model schedules the
    Trace afterwards), so this is the core's count of instructions issued so far: monotonic per core,
    as the NPU's counter, but not cycles. int64."""
    core = _scalar("get_system_cycle")
    return number(len(core.instrs), dtypes.int64)


def get_arch_version(core_version: int) -> None:
    """``GetArchVersion(coreVersion)``: pyasc passes the value in and returns nothing (sys_var.py), so the
    kernel cannot read the result; recorded only. ``core_version`` must be an integer."""
    core = current("get_arch_version")
    if not isinstance(core_version, (int, np.integer)):
        raise core.error("get_arch_version", f"core_version must be an integer, got {type(core_version).__name__}")
    core.record("get_arch_version", Pipe.S)


def print_time_stamp(desc_id: int) -> None:
    """``PrintTimeStamp(descId)``: logs the core's instruction count (see :func:`get_system_cycle`) with ``desc_id``."""
    core = _scalar("print_time_stamp")
    core.log.append(f"[aiv({core.idx})] time stamp {int(desc_id)}: instruction {len(core.instrs)}\n")


def trap() -> None:
    """``Trap``: the kernel stops with an exception (Trap.md). Here a KernelError of kind ``trap``."""
    core = current("trap")
    raise core.error("trap", "the kernel called trap(): on the NPU the core stops with an exception here", kind="trap")


def static_assert(test, message: str = "") -> None:
    """pyasc's ``static_assert(test, message)``: checked when the kernel is traced; a false ``test`` is a KernelError."""
    core = current("static_assert")
    if not bool(test):
        raise core.error("static_assert", f"static_assert failed{': ' + message if message else ''}")


def _u64(op: str, value) -> int:
    return int(value) & _U64  # pyasc materialises value_in as uint64 (scalar.py)


def scalar_count_leading_zero(value_in: int) -> int:
    """``CountLeadingZero``: leading 0 bits of ``value_in`` as uint64; 64 for 0. int64."""
    _scalar("scalar_count_leading_zero")
    return number(64 - _u64("scalar_count_leading_zero", value_in).bit_length(), dtypes.int64)


def scalar_get_count_of_value(value_in: int, count_value: int) -> int:
    """``GetBitCount<countValue>``: number of bits equal to ``count_value`` (0 or 1) in uint64 ``value_in``."""
    core = _scalar("scalar_get_count_of_value")
    if count_value not in (0, 1):
        raise core.error("scalar_get_count_of_value", f"count_value must be 0 or 1, got {count_value!r}")
    ones = bin(_u64("scalar_get_count_of_value", value_in)).count("1")
    return number(ones if count_value else 64 - ones, dtypes.int64)


def scalar_get_sff_value(value_in: int, count_value: int) -> int:
    """``GetSFFValue<countValue>``: position of the first bit equal to ``count_value``, from the least
    significant bit, in uint64 ``value_in``; -1 when there is none (GetSFFValue.md). int64."""
    core = _scalar("scalar_get_sff_value")
    if count_value not in (0, 1):
        raise core.error("scalar_get_sff_value", f"count_value must be the constant 0 or 1, got {count_value!r}")
    v = _u64("scalar_get_sff_value", value_in)
    v = v if count_value else ~v & _U64
    return number((v & -v).bit_length() - 1, dtypes.int64)


def count_bits_cnt_same_as_sign_bit(value_in: int) -> int:
    """``CountBitsCntSameAsSignBit``: consecutive bits after the sign bit of int64 ``value_in`` equal to it;
    -1 for 0 and -1 (CountBitsCntSameAsSignBit.md, 约束说明)."""
    _scalar("count_bits_cnt_same_as_sign_bit")
    v = int(value_in) & _U64
    if v in (0, _U64):
        return number(-1, dtypes.int64)
    if v >> 63:
        v = ~v & _U64
    return number(63 - v.bit_length(), dtypes.int64)


def scalar_cast(value_in: float, dtype, round_mode) -> "int | float":
    """``ScalarCast``: float32 ``value_in`` to int32 or half with ``round_mode`` (pyasc takes int32, float16
    and half only; 标量计算/Cast（float转half-int32_t）.md). Returns an int32 scalar or a Python float."""
    from .basic.rounding import convert

    core = _scalar("scalar_cast")
    target = dtypes.as_dtype(dtype)
    if target.name not in ("int32", "float16"):
        raise core.error("scalar_cast", f"scalar_cast converts to int32 or half (pyasc 1.1.1), got {target.name}",
                         kind="unsupported")
    x = np.array([value_in], dtype=np.float32)
    with np.errstate(over="ignore"):  # beyond half's range rounds to inf, as the page's IEEE rounding says
        out = convert(x, target, round_mode)[0]
    return number(int(out), dtypes.int32) if target.name == "int32" else float(out)


# -- AI Core state, kernel type, system workspace ---------------------------------------------------------

ONE_BLK_SIZE = DATA_BLOCK_BYTES  # pyasc core/properties.py: ``::AscendC::ONE_BLK_SIZE``, one 32 B block


class Property:
    """A constant of Ascend C's headers that pyasc reads with ``asc.property(...)`` (core/properties.py): its name
    and its value on the running core's SoC."""

    def __init__(self, name: str, value):
        self.name, self.value = name, value

    def __repr__(self) -> str:
        return f"asc.{self.name}"


DEFAULT_C0_SIZE = Property("DEFAULT_C0_SIZE", lambda soc: 32)  # bytes of one fractal row (kernel_utils_constants.h)
TOTAL_L1_SIZE = Property("TOTAL_L1_SIZE", lambda soc: soc.l1_bytes)      # fusekit.soc SoC.l1_bytes
TOTAL_L0C_SIZE = Property("TOTAL_L0C_SIZE", lambda soc: soc.l0c_bytes)   # fusekit.soc SoC.l0c_bytes


def property(prop) -> int:  # noqa: A001 - pyasc's name
    """``asc.property(asc.TOTAL_L1_SIZE)``: the constant's value on this core's SoC, an int32 scalar (pyasc emits
    the C++ constant). A plain number (``asc.ONE_BLK_SIZE``) is itself."""
    core = current("property")
    value = prop.value(core.soc) if isinstance(prop, Property) else prop
    return number(int(value), dtypes.int32)


def ascend_is_aiv() -> bool:
    """``ASCEND_IS_AIV``: whether this code runs on a vector core (AIV): True in an AIV_ONLY kernel, False in an
    AIC_ONLY one (the launch's core kind, ``fusekit.asc.runtime.core_kind``)."""
    return _scalar("ascend_is_aiv").kind.name == "AIV"


def ascend_is_aic() -> bool:
    """``ASCEND_IS_AIC``: whether this code runs on a cube core (AIC), the branch of a kernel's cube work."""
    return _scalar("ascend_is_aic").kind.name == "AIC"


def get_task_ratio() -> int:
    """``GetTaskRatio``: cores of this core's kind per logical AI Core: 2 on an AIV of MIX_AIC_1_2, else 1
    (GetTaskRatio.md, 表1; the coupled architecture (310P) always 1). int64."""
    return number(_scalar("get_task_ratio").place.ratio, dtypes.int64)


def init_soc_state() -> None:
    """``InitSocState``: reset the core's global state a previous kernel may have left (InitSocState.md 表3 / 表4):
    DMA atomics off; on A2/A3 also mask mode Normal and the mask all ones. DEQSCALE is left as it is (the page
    resets it on Ascend 950 only). Recorded on PIPE_S; see :mod:`fusekit.asc.corestate`."""
    from .corestate import init_soc_state as reset

    reset(_scalar("init_soc_state"))


def set_sys_workspace(workspace) -> None:
    """``SetSysWorkspace(workspace)``: the GM address the framework's system workspace starts at
    (资源管理/workspace/SetSysWorkSpace.md: a kernel launched directly must set it before a high-level API or
    :func:`get_sys_workspace` uses it). ``workspace``: a GlobalAddress kernel argument (its size is the host's
    affair: GetLibApiWorkSpaceSize plus the user's part).

    Raises:
        KernelError: ``workspace`` is not a GlobalAddress.
    """
    from .runtime import GlobalAddress

    core = _scalar("set_sys_workspace")
    if not isinstance(workspace, GlobalAddress):
        raise core.error("set_sys_workspace", f"set_sys_workspace takes a GM address (a kernel argument annotated "
                                              f"asc.GlobalAddress), got {type(workspace).__name__}")
    core.sys_workspace = workspace


def get_sys_workspace():
    """``GetSysWorkSpacePtr``: the system workspace's GM address, as :func:`set_sys_workspace` set it on this core
    (GetSysWorkSpacePtr.md). pyasc types it as a uint8 address; here it keeps the buffer's own dtype.

    Raises:
        KernelError: no workspace was set: on the NPU the pointer would be null.
    """
    core = _scalar("get_sys_workspace")
    workspace = core.sys_workspace
    if workspace is None:
        raise core.error("get_sys_workspace", "no system workspace: pass a GM buffer to the kernel and call "
                                              "asc.set_sys_workspace(workspace) first (SetSysWorkSpace.md: only "
                                              "projects built with HAVE_WORKSPACE set it automatically)")
    return workspace
