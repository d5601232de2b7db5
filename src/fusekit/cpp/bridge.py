"""The Python end of ``fusekit/bridge.h``: a C++ kernel's Ascend C calls run on fusekit's simulator.

A compiled kernel calls one function, :func:`dispatch`, for every Ascend C call: its C++ name, the object it is a
method of (a handle, 0 for a free function), the kernel source's ``file:line``, and its arguments as ``Arg``
records. The call is mapped onto the pyasc API the simulator implements (``AscendC::Add(dst, a, b, n)`` is
``asc.add(dst, a, b, n)``, ``que.AllocTensor<half>()`` is ``que.alloc_tensor(asc.float16)``), so a C++ kernel and
its pyasc twin run the same instruction code and record the same Trace. While it runs, the call site is the C++
one (:class:`fusekit.asc.runtime.ForeignSite`): a KernelError names the ``.cpp`` or ``.asc`` file and line.

A Python exception cannot cross the C++ frames: :func:`dispatch` keeps it, returns 1, the kernel unwinds to its
entry (``fusekit::Abort``) and :func:`reraise` raises it in Python.
"""

from __future__ import annotations

import ctypes
import functools
import re
import signal
import struct
import threading
from typing import Any, Callable, Protocol

import numpy as np

from fusekit import asc
from fusekit.asc import dtypes
from fusekit.asc.runtime import ForeignSite, GlobalAddress, KernelError, running_core, set_foreign_site

from .memory import Pointer, buffer_at, device_address, pointer_at

ARG_NONE, ARG_INT, ARG_FLOAT, ARG_OBJECT, ARG_ADDRESS, ARG_DTYPE, ARG_ENUM, ARG_STRUCT, ARG_STRING, ARG_ARRAY = range(10)


class Arg(ctypes.Structure):
    """``fusekit::Arg`` (bridge.h): one argument or result of a call."""

    _fields_ = [("kind", ctypes.c_int32), ("size", ctypes.c_int32), ("i", ctypes.c_int64), ("f", ctypes.c_double),
                ("s", ctypes.c_char_p), ("p", ctypes.c_void_p)]


# the callback takes the Args as addresses and reads them with one struct unpack (a ctypes Structure per field
# read costs more than the instruction's bookkeeping)
DISPATCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int32,
                            ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
_ARG = struct.Struct("=iiqdQQ")  # Arg's layout: kind, size, i, f, s, p (40 bytes, no padding)
assert _ARG.size == ctypes.sizeof(Arg)

# C++ spellings that are not the CamelCase of the pyasc name (Ascend C's And/Or/Not are pyasc's bitwise_*)
CPP_NAMES = {"bitwise_and": "And", "bitwise_or": "Or", "bitwise_not": "Not", "compare_scalar": "Compares",
             "ib_set": "IBSet", "ib_wait": "IBWait"}
_PYTHON_NAMES = {cpp: py for py, cpp in CPP_NAMES.items()} | {"EnQue": "enque", "DeQue": "deque"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.lru_cache(maxsize=None)
def python_name(cpp: str) -> str:
    """pyasc's snake_case name for an Ascend C call (``DataCopyPad`` -> ``data_copy_pad``, ``And`` -> ``bitwise_and``)."""
    return _PYTHON_NAMES.get(cpp) or _CAMEL.sub("_", cpp).lower()


class Session(threading.local):
    """The simulator objects the C++ side holds handles to, and the exception a call raised; one per thread (the
    cores of a kernel that calls SyncAll run in threads of their own, fusekit.asc.runtime._Scheduler)."""

    def __init__(self):
        self.objects: dict[int, Any] = {}
        self.pending: BaseException | None = None
        self.site = ForeignSite("", 0)
        self.sys_workspace: GlobalAddress | None = None  # GetSysWorkSpacePtr's answer (set_sys_workspace)

    def handle(self, obj) -> int:
        key = len(self.objects) + 1
        self.objects[key] = obj
        return key


_session = Session()
# the one C callback every compiled library calls (kept alive here: ctypes frees a callback nobody holds)
CALLBACK = None


def callback():
    """The ctypes function pointer of :func:`dispatch` (made once)."""
    global CALLBACK
    if CALLBACK is None:
        CALLBACK = DISPATCH(dispatch)
    return CALLBACK


def reset() -> None:
    """Drop the handles of the last launch (a new launch starts with none)."""
    _session.objects.clear()
    _session.pending = None


def set_sys_workspace(workspace: "GlobalAddress | None") -> None:
    """The system workspace of the core about to run (GetSysWorkSpacePtr's answer until the kernel calls
    SetSysWorkspace): fusekit's choice, the kernel's GM parameter named ``workspace``, the name asc-devkit's
    kernels and CANN's operator projects give the workspace the host sized with GetLibApiWorkSpaceSize
    (workspace/GetSysWorkSpacePtr.md, SetSysWorkSpace.md); None (nullptr) when the kernel has none."""
    _session.sys_workspace = workspace


def reraise() -> None:
    """Raise the exception a call kept (after the kernel unwound), if one did."""
    exc, _session.pending = _session.pending, None
    if exc is not None:
        raise exc


def dispatch(name: bytes, self: int, file: bytes, line: int, n: int, args, result) -> int:
    """Run one Ascend C call of a compiled kernel (the C callback; never raises)."""
    try:
        if file:  # a call with no site of its own (operator[]) keeps the last one
            _session.site = _site(file, line)
        set_foreign_site(_session.site)
        values = [_decode(*a) for a in _ARG.iter_unpack(ctypes.string_at(args, n * 40))] if n else []
        ctypes.memmove(result, _encode(_call(name.decode(), self, values)), 40)
        return 0
    except BaseException as exc:  # noqa: BLE001 - every exception goes back to Python through reraise()
        _session.pending = _in_cpp_terms(exc, name.decode())
        return 1
    finally:
        set_foreign_site(None)


@functools.lru_cache(maxsize=4096)
def _site(file: bytes, line: int) -> ForeignSite:
    return ForeignSite(file.decode(), line)


# fusekit.asc.tensor's check of a GlobalTensor with no buffer, and what it means in a C++ kernel
_UNSET = "GlobalTensor used before set_global_buffer(addr, size)"
_UNSET_CPP = ("a GlobalTensor without a buffer: SetGlobalBuffer was not called on it, or was given nullptr (a launch "
              "argument left out); set it to GM the launch passes before this call")


def _in_cpp_terms(exc: BaseException, cpp: str) -> BaseException:
    """A KernelError of call ``cpp`` names it as the C++ source wrote it (``Muls``, not pyasc's ``muls``)."""
    cpp = cpp.partition("@")[0]
    if not isinstance(exc, KernelError) or cpp.startswith("fusekit."):
        return exc
    if exc.detail == _UNSET:  # raised by the tensor (op "dtype", "GlobalTensor[]" ...): the call is the C++ one
        exc.args = (cpp + exc.args[0][len(exc.op):].replace(_UNSET, _UNSET_CPP),) + exc.args[1:]
        exc.op, exc.detail = cpp, _UNSET_CPP
    elif exc.op == python_name(cpp):
        exc.op = cpp
        exc.args = (cpp + exc.args[0][len(python_name(cpp)):],) + exc.args[1:]
    return exc


@functools.lru_cache(maxsize=None)
def _name(address: int) -> str | None:
    """The text of a static C string the headers pass (a dtype, enum or struct name): stable per address."""
    return ctypes.string_at(address).decode() if address else None


def _decode(kind: int, size: int, i: int, f: float, s: int, p: int):
    if kind == ARG_OBJECT:
        return _object(i)
    if kind == ARG_INT:  # size: the C++ type's bytes, negative for a signed one (a uint64 past 2^63 as it is)
        return bool(i) if _name(s) == "bool" else i & (2 ** 64 - 1) if size == 8 else i
    if kind == ARG_FLOAT:
        return f
    if kind == ARG_ADDRESS:
        return Pointer(i & (2 ** 64 - 1), _name(s))
    if kind == ARG_DTYPE:
        return dtypes.DataType(_name(s))
    if kind == ARG_ENUM:
        return _members(_name(s))[i]
    if kind == ARG_STRUCT:
        return getattr(asc, _name(s))(*_decode_all(p, size))
    if kind == ARG_STRING:
        return ctypes.string_at(s).decode(errors="replace")  # formatted text in a buffer: read each time
    if kind == ARG_ARRAY:
        return _decode_all(p, size)
    return None


def _decode_all(address: int, n: int) -> list:
    return [_decode(*a) for a in _ARG.iter_unpack(ctypes.string_at(address, n * 40))] if n else []


@functools.lru_cache(maxsize=None)
def _members(enum: str) -> list:
    return list(getattr(asc, enum))


def _object(handle: int):
    try:
        return _session.objects[handle]
    except KeyError:
        raise _error("argument", "an object the simulator does not know (handle %d): a GlobalTensor used before "
                                 "SetGlobalBuffer, or a tensor from an earlier launch" % handle) from None


def _encode(value) -> bytes:
    """A call's result as an Arg's bytes."""
    if value is None:
        return _NONE
    if isinstance(value, (bool, np.bool_)):
        return _ARG.pack(ARG_INT, 0, int(value), 0.0, 0, 0)
    if isinstance(value, (float, np.floating)):
        return _ARG.pack(ARG_FLOAT, 0, 0, float(value), 0, 0)
    if isinstance(value, GlobalAddress):
        return _ARG.pack(ARG_ADDRESS, 0, device_address(value), 0.0, 0, 0)
    if hasattr(type(value), "__index__"):  # int, numpy integers, fusekit's int32 scalars (not the objects'
        # __getattr__, which explains a missing name at length)
        return _ARG.pack(ARG_INT, 0, int(value), 0.0, 0, 0)
    return _ARG.pack(ARG_OBJECT, 0, _session.handle(value), 0.0, 0, 0)


_NONE = _ARG.pack(ARG_NONE, 0, 0, 0.0, 0, 0)


def _error(op: str, detail: str, kind: str = "api") -> KernelError:
    core = running_core()
    if core is None:
        return KernelError(op, detail, file=_session.site.f_code.co_filename, line=_session.site.f_lineno, kind=kind)
    return core.error(op, detail, kind)


def launch_error(op: str, detail: str) -> KernelError:
    """A KernelError of the host program's call being answered (a launch): names its file:line."""
    return _error(op, detail)


def _not_simulated(what: str) -> KernelError:
    return _error(what, f"{what} is not simulated by fusekit (no pyasc counterpart in fusekit.asc); see the README's "
                        "instruction table for what is", kind="unsupported")


# ---- constructors and calls whose pyasc form differs from the C++ one

def _set_global_buffer(tensor, pointer: Pointer, size: int | None = None):
    tensor = asc.GlobalTensor() if tensor is None else tensor
    if pointer.address == 0:  # nullptr, an input the launch leaves out (asc-devkit's data_copy_gm2l1 sets its unused
        return tensor         # bias so): legal on the NPU until read; the tensor stays unset, and a use is refused
    tensor.set_global_buffer(pointer_at(pointer, _error), size)
    return tensor


def _printf(text: str) -> None:
    """Device printf, formatted by the C++ side: into the core's log, or, called by host code, printed now."""
    if running_core() is not None:
        return asc.printf(text)
    ctypes.CDLL(None).fflush(None)
    print(text, end="", flush=True)


def _set_vector_mask(dtype, *rest):
    *values, mode = rest
    asc.set_vector_mask(*values, dtype=dtype, mode=mode)


# ---- the high-level Matmul (include/lib/matmul_intf.h, include/tiling/matmul_tiling.h): the C++ template API on
# fusekit.asc.adv.matmul, pyasc's asc.adv.Matmul, and the host tiling on fusekit.pyasc.shim.host

# CubeFormat's members in the order of Ascend C's enum (matmul_intf.h); the Matmul simulates ND only
_CUBE_FORMATS = ("ND", "NZ", "ZN", "ZZ", "NN", "ND_ALIGN", "SCALAR", "VECTOR", "ROW_MAJOR", "COLUMN_MAJOR")


def _matmul_type(position, cube_format: int, dtype, is_trans: bool):
    """``MatmulType<POSITION, FORMAT, TYPE, ISTRANS>`` as pyasc's ``asc.adv.MatmulType``."""
    name = _CUBE_FORMATS[cube_format] if 0 <= cube_format < len(_CUBE_FORMATS) else str(cube_format)
    if name not in ("ND", "NZ"):  # no pyasc member: named here (asc.adv.Matmul refuses NZ itself)
        raise _error("Matmul", f"MatmulType with CubeFormat::{name} is not simulated yet: the Matmul reads and writes "
                               "ND matrices (CubeFormat::ND)", kind="unsupported")
    return asc.adv.MatmulType(position, getattr(asc.CubeFormat, name), dtype, bool(is_trans))


def _matmul(*fields):
    """``Matmul<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG>`` (Matmul-Kernel侧接口/Matmul模板参数.md): four MatmulTypes,
    four fields each."""
    a, b, c, bias = (_matmul_type(*fields[k:k + 4]) for k in range(0, 16, 4))
    return asc.adv.Matmul(a, b, c, bias)


def _cube_tiling(words) -> "asc.adv.TCubeTiling":
    """A TCubeTiling from the int32 fields of the C++ struct (include/kernel_tiling/kernel_tiling.h: pyasc's order)."""
    names = list(asc.adv.TCubeTiling.struct_fields)
    if len(words) != len(names):
        raise _error("Matmul", f"a TCubeTiling of {len(words)} fields, {len(names)} expected (fusekit's headers)")
    return asc.adv.TCubeTiling(**{name: int(np.int32(np.uint32(w & 0xFFFFFFFF))) for name, w in zip(names, words)})


def _register_matmul(pipe, workspace, matmul, words=None):
    """``REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling)`` (REGIST_MATMUL_OBJ.md) as asc.adv.register_matmul."""
    if not isinstance(workspace, Pointer) or workspace.address == 0:
        raise _error("REGIST_MATMUL_OBJ", "the system workspace is nullptr: GetSysWorkSpacePtr() answers the kernel's "
                                          "GM parameter named workspace (or what SetSysWorkspace set); give the kernel "
                                          "one, sized on the host with GetLibApiWorkSpaceSize (GetSysWorkSpacePtr.md)")
    tiling = _cube_tiling(words) if words is not None else None
    return asc.adv.register_matmul(pipe, pointer_at(workspace, _error), matmul, tiling)


def _set_sys_workspace(workspace: Pointer) -> None:
    """``SetSysWorkspace(workspace)`` (SetSysWorkSpace.md): what GetSysWorkSpacePtr answers from now on."""
    _session.sys_workspace = pointer_at(workspace, _error) if workspace.address else None


def _matmul_tiling(multi_core: bool, dim: int, types, shape, org, bias: bool, fixed, traverse: int,
                   tiling: Pointer) -> int:
    """``GetTiling(tiling)`` of the C++ MatmulApiTiling / MultiCoreMatmulTiling (matmul_tiling.h keeps the settings and
    sends them here): fusekit.pyasc.shim.host's tiling of them, written into the C++ TCubeTiling at ``tiling``.
    Returns 0, or -1 as CANN's GetTiling does (Matmul-Tiling类/GetTiling.md)."""
    from fusekit.pyasc.shim import host as host_tiling

    api = host_tiling.MultiCoreMatmulTiling() if multi_core else host_tiling.MatmulApiTiling()
    if dim > 0:
        api.set_dim(dim)
    setters = {"a": api.set_a_type, "b": api.set_b_type, "c": api.set_c_type, "bias": api.set_bias_type}
    for key, (set_, position, fmt, dtype, trans) in zip(("a", "b", "c", "bias"), zip(*[iter(types)] * 5)):
        if set_:
            setters[key](host_tiling.TPosition(position), host_tiling.CubeFormat(fmt), host_tiling.DataType(dtype), trans)
    if shape[0] > 0:
        api.set_shape(*shape)
    if org[0] > 0:
        api.set_org_shape(*org)
    api.enable_bias(bias)
    api.set_fix_split(*fixed)
    api.set_traverse(host_tiling.MatrixTraverse(traverse))
    result = asc.adv.TCubeTiling()
    status = api.get_tiling(result)
    if status == 0:
        words = [int(object.__getattribute__(result, name)) for name in asc.adv.TCubeTiling.struct_fields]
        ctypes.memmove(tiling.address, np.array(words, np.int32).ctypes.data, 4 * len(words))
    return status


CONSTRUCTORS: dict[str, Callable] = {
    "TPipe": lambda: asc.TPipe(),
    "TQue": lambda position, depth: asc.TQue(position, depth),
    "TQueBind": lambda src, dst, depth: asc.TQueBind(src, dst, depth),
    "TBuf": lambda position: asc.TBuf(position),
    "LocalMemAllocator": lambda hardware: asc.LocalMemAllocator(hardware),
    "LocalTensor": lambda dtype, position, addr, tile_size: asc.LocalTensor(dtype, position, addr, tile_size),
    "Matmul": _matmul,
}
FUNCTIONS: dict[str, Callable] = {
    "printf": _printf,
    "SetVectorMask": _set_vector_mask,
    "RegistMatmulObj": _register_matmul,
    "GetSysWorkSpacePtr": lambda: _session.sys_workspace,
    "SetSysWorkspace": _set_sys_workspace,
    "MatmulTiling": _matmul_tiling,
}
METHODS: dict[str, Callable] = {
    "operator[]": lambda obj, offset: obj[offset],
    "SetGlobalBuffer": _set_global_buffer,
    "ReleaseEventID": lambda pipe, event_id, event: pipe.release_event_id(event_id, event),
    # Matmul's C++ calls whose pyasc form differs (Init takes the struct's fields; Iterate<sync>() answers a bool)
    "MatmulInit": lambda matmul, words: matmul.init(_cube_tiling(words)),
    "MatmulIterate": lambda matmul, sync: matmul.iterate_next(sync),
}


class Host(Protocol):
    """What answers a host program's launches and ACL calls (:class:`fusekit.cpp.program.HostRun`)."""

    def launch(self, kernel: str, blocks: int, args: list) -> None: ...

    def acl(self, call: str, values: list) -> int: ...


# the host program being run (fusekit.cpp.program sets it while its main runs)
host: Host | None = None


def call_site() -> str:
    """``file:line`` of the C++ call being answered."""
    return f"{_session.site.f_code.co_filename}:{_session.site.f_lineno}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _read_gm(source: Pointer, destination: Pointer, nbytes: int) -> None:
    """GET_TILING_DATA: ``nbytes`` of GM at ``source`` into the kernel's struct at host address ``destination``."""
    found = buffer_at(source.address)
    if found is None or found[1] + nbytes > found[0].data.size:
        raise _error("GET_TILING_DATA", f"the tiling pointer {source.address:#x} does not hold {nbytes} bytes of a GM "
                                        "buffer of this launch (the struct the host saved is smaller than the "
                                        "kernel's?)", "out-of-bounds")
    buffer, offset = found
    ctypes.memmove(destination.address, buffer.data.ctypes.data + offset, nbytes)


def _host_call(name: str, values: list):
    if name == "fusekit.exception":
        who = "the host program" if running_core() is None else "the kernel"
        raise _error("C++ exception", f"{who} threw an exception it did not catch: {values[0]}")
    if name == "fusekit.read_gm":
        return _read_gm(*values)
    if name == "fusekit.crash":
        raise _error("the kernel's compiled code", f"crashed ({_signal_name(values[0])}) in its own C++ after the "
                     "Ascend C call at this line: a null or wild pointer, a division by zero, or a GM pointer moved past "
                     "its buffer (the bytes of each GM buffer are readable through its GM_ADDR, the gaps between "
                     "them are not); fusekit's process goes on")
    if name == "fusekit.assert":
        raise _error("ASSERT", f"the kernel's assertion {values[0]} is false")
    if name == "fusekit.unsupported":  # a documented option the headers take but the simulator does not run
        call, why = values
        raise _error(call, why, kind="unsupported")
    if host is None:
        what = "a kernel launch" if name == "fusekit.launch" else name.removeprefix("fusekit.acl.")
        raise _error(what, f"{what} outside a host program run by fusekit: run the program with fusekit run FILE.asc")
    if name == "fusekit.launch":
        kernel, blocks, *args = values
        return host.launch(kernel, blocks, args)
    return host.acl(name.removeprefix("fusekit.acl."), values)


def _call(name: str, self: int, values: list):
    if name.startswith("fusekit."):
        return _host_call(name, values)
    if name in CONSTRUCTORS and self == 0:
        return CONSTRUCTORS[name](*values)
    if name == "SetGlobalBuffer":  # a GlobalTensor gets its simulator object here
        return METHODS[name](_session.objects.get(self), *values)
    if self:
        obj = _object(self)
        if name in METHODS:
            return METHODS[name](obj, *values)
        method = _method(type(obj), name)
        if method is None:
            raise _not_simulated(f"{type(obj).__name__}::{name}")
        return method(obj, *values)
    function, keywords = _function(name)
    if function is None:
        raise _not_simulated(f"AscendC::{name.partition('@')[0]}")
    return function(*values, **keywords)


@functools.lru_cache(maxsize=None)
def _method(cls: type, cpp: str):
    """The simulator's method for ``cls::cpp``, or None."""
    return getattr(cls, python_name(cpp), None)


@functools.lru_cache(maxsize=None)
def _function(cpp: str) -> tuple[Callable | None, dict]:
    """The simulator's function for ``AscendC::cpp`` and its keywords (``Name@is_set_mask``: Name<T, false>, the
    call leaves the mask as set; each ``@keyword`` is one that is False: LoadData's IsResetLoad3dConfig), or
    (None, {})."""
    if cpp in FUNCTIONS:
        return FUNCTIONS[cpp], {}
    name, *unset = cpp.split("@")
    function = getattr(asc, python_name(name), None)
    if function is None or not callable(function):
        return None, {}
    return function, dict.fromkeys(unset, False)
