"""A compiled C++ source and its ``__global__`` kernels, launched like ``@asc.jit`` kernels.

``fusekit.cpp.load("add.asc")`` compiles the file (:mod:`fusekit.cpp.compiler`) and returns a :class:`Library`;
``library.add_custom[8](x, y, z, n)`` runs its kernel ``add_custom`` on 8 simulated cores with numpy (or CPU torch)
arguments, and ``fusekit.sanitize`` / ``fusekit.profile`` take it as they take a pyasc kernel. Each core runs the
compiled function once (the kernel's scalar code is native); every Ascend C call goes to the simulator
(:mod:`fusekit.cpp.bridge`). A C++ kernel runs on the reference executor, one core after another in block order.
"""

from __future__ import annotations

import ctypes
import dataclasses
import inspect
from pathlib import Path

import numpy as np

from fusekit.asc.runtime import GlobalAddress, KernelFunction, torch_view
from fusekit.soc import SoC, get_soc

from . import bridge, compiler, glue
from .memory import DeviceBuffer, device_address

_INT_RANGES = {f"{sign}{bits}": ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if sign == "i" else (0, (1 << bits) - 1))
               for sign in "iu" for bits in (8, 16, 32, 64)}


_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(bridge.Arg))


class CppKernel(KernelFunction):
    """One ``__global__`` function of a compiled library, as a launchable kernel.

    Parameters are named as in the C++ source; pointer parameters (``GM_ADDR``, ``__gm__ T*``) take numpy arrays
    (C-contiguous, native byte order) or device pointers of a host program, integer and float parameters Python
    numbers (checked against the C++ type's range).
    """

    runs_natively = True  # the lockstep executor cannot run compiled scalar code (fusekit.asc.lockstep.launcher)

    def __init__(self, library: "Library", decl: glue.KernelDecl, types: list[str], entry=None):
        self.library, self.decl, self.types = library, decl, dict(zip(decl.params, types))
        if entry is None:
            entry = getattr(library.dll, f"fusekit_entry_{decl.name}")
            entry.argtypes, entry.restype = [ctypes.POINTER(bridge.Arg)], ctypes.c_int
        self._entry = entry

        def body(**bound):
            self._run(bound)

        body.__name__ = body.__qualname__ = decl.name
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               annotation="GM_ADDR" if t == "gm" else t) for p, t in self.types.items()])
        body.__module__ = __name__
        # the kernel type the source declares (glue.py: __cube__, __mix__(c, v), KERNEL_TASK_TYPE_DEFAULT), under
        # the option a pyasc kernel gives it (@asc.jit(kernel_type=...)), which fusekit.asc.runtime plans the
        # launch's cores by: the same AIC, AIV or mix launch, and the same refusals, as a pyasc kernel's
        super().__init__(body, {"kernel_type": decl.kernel_type})
        if decl.declared:  # how the launch's messages name it (fusekit.asc.runtime.core_plan)
            self.kernel_type_source = f"{decl.declared} kernel {decl.name} ({library.path.name}:{decl.line})"

    def argument(self, name: str, value, kind: str = ""):
        """A launch argument for parameter ``name`` (see the class docstring).

        Raises:
            TypeError: an array for a scalar parameter, a scalar for a pointer, a non-contiguous array.
            ValueError: an integer outside the parameter's C++ type.
        """
        code = self.types[name]
        if code == "gm":
            if value is None or isinstance(value, GlobalAddress):  # None: nullptr (an unused workspace)
                return value
            if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "numpy"):
                value = torch_view(name, value)
            if not isinstance(value, np.ndarray):
                raise TypeError(f"argument {name}: a GM pointer parameter takes a numpy array, got {type(value).__name__}")
            return GlobalAddress(DeviceBuffer(name, value))
        if code.startswith("struct"):
            return _struct_bytes(name, value, int(code[len("struct"):]))
        if isinstance(value, np.ndarray):
            raise TypeError(f"argument {name}: parameter of C++ type {code} takes a number, got an array")
        if code in _INT_RANGES or code == "b":
            low, high = _INT_RANGES.get(code, (0, 1))
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise TypeError(f"argument {name}={value!r}: the kernel's {code} parameter takes an integer")
            if not low <= int(value) <= high:
                raise ValueError(f"argument {name}={value!r} does not fit the kernel's {code} parameter "
                                 f"([{low}, {high}])")
            return int(value)
        return float(value)

    def _run(self, bound: dict) -> None:
        args = (bridge.Arg * max(1, len(self.decl.params)))()
        structs = []  # the by-value structs' bytes, alive until the entry returns
        for k, name in enumerate(self.decl.params):
            value, out = bound[name], args[k]
            if isinstance(value, bytes):
                structs.append(ctypes.create_string_buffer(value, len(value)))
                out.kind, out.size, out.i = bridge.ARG_ADDRESS, len(value), ctypes.addressof(structs[-1])
            elif value is None:
                out.kind, out.i = bridge.ARG_ADDRESS, 0
            elif isinstance(value, GlobalAddress):
                out.kind, out.i = bridge.ARG_ADDRESS, device_address(value)
            elif isinstance(value, float):
                out.kind, out.f = bridge.ARG_FLOAT, value
            else:
                out.kind, out.i = bridge.ARG_INT, int(value)
        bridge.reset()  # each core starts with no objects: its handles end with it
        workspace = bound.get("workspace")  # GetSysWorkSpacePtr's answer until SetSysWorkspace (bridge.py)
        bridge.set_sys_workspace(workspace if isinstance(workspace, GlobalAddress) else None)
        if self._entry(args):
            bridge.reraise()

    def __repr__(self) -> str:
        return f"<C++ kernel {self.decl.name} of {self.library.path}>"


class Library:
    """A compiled C++ source: its kernels by name (attributes and ``library["name"]``), its host ``main`` if any.

    Args:
        path: the ``.cpp`` / ``.asc`` file (read as UTF-8).
        defines: compiler definitions (``{"SCENARIO_NUM": "1"}``, as ``-D SCENARIO_NUM=1``).
        soc: the SoC whose architecture the source is compiled for (``__NPU_ARCH__``, ``__CCE_AICORE__``;
            :func:`arch_defines`); default Ascend910B1. Launches choose their SoC themselves.
        prelude: C++ put before the source (an operator project's tiling header), outside its line numbering.

    Raises:
        CompileError: no compiler, or the source does not compile (the compiler's messages, with a note naming
            each Ascend C call fusekit does not simulate).
        OSError: the file cannot be read.
    """

    def __init__(self, path: "str | Path", defines: dict[str, str] | None = None, *, soc=None,
                 source: str | None = None, prelude: str = ""):
        self.path, self.defines = Path(path), dict(defines or {})
        text = _read(self.path) if source is None else source
        self.soc = get_soc(soc)
        defines = {**arch_defines(self.soc), **self.defines, **glue.DEFINES}
        self.build = compiler.build(glue.unit(text, str(self.path.resolve()), prelude), self.path.resolve().parent,
                                    defines, finish=glue.finish)
        self.dll = ctypes.CDLL(str(self.build.path))
        self.dll.fusekit_set_dispatch.argtypes = [bridge.DISPATCH]
        self.dll.fusekit_set_dispatch(bridge.callback())
        self.dll.fusekit_kernels.restype = ctypes.c_char_p
        decls = [_decl(item) for item in self.dll.fusekit_kernels().decode().split(";") if item]
        self.kernels: dict[str, CppKernel] = {}
        self.templates = {decl.name: decl for decl in decls if decl.template}
        self._instances: dict[int, CppKernel] = {}
        for decl in (decl for decl in decls if not decl.template):
            describe = getattr(self.dll, f"fusekit_types_{decl.name}")
            describe.restype = ctypes.c_char_p
            types = describe().decode().split(",") if decl.params else []
            self.kernels[decl.name] = CppKernel(self, decl, types)
        self.has_main = hasattr(self.dll, "fusekit_main")

    def instance(self, name: str, kernel: int, entry: int, types: str) -> CppKernel:
        """The kernel a host program launched as ``name`` (``add_custom<256>``, a template's instantiation too),
        from the addresses of its function and of its signature's entry (``fusekit::entry_of``)."""
        if name in self.kernels:
            return self.kernels[name]
        if kernel not in self._instances:  # by address: the same text can name two instances
            base = self.templates.get(name.split("<")[0].strip())  # its parameters name the instance's
            if base is None:
                raise KeyError(f"{self.path.name} launches {name}, a __global__ function fusekit did not find in "
                               "it or in the files it includes from its folder")
            run = _ENTRY(entry)
            self._instances[kernel] = CppKernel(self, dataclasses.replace(base, name=name, template=False),
                                                types.split(",") if types else [], lambda args: run(kernel, args))
        return self._instances[kernel]

    def __getitem__(self, name: str) -> CppKernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(self._missing(name)) from None

    def __getattr__(self, name: str) -> CppKernel:
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        if "kernels" not in self.__dict__:
            raise AttributeError(name)
        raise AttributeError(self._missing(name))

    def _missing(self, name: str) -> str:
        if name in self.templates:
            return (f"{name} in {self.path.name} is a function template: Python launches compiled functions only; "
                    f"launch an instance from a host program ({name}<...><<<blocks, nullptr, stream>>>(...)), or add "
                    f"a __global__ function that calls {name}<...>")
        return f"{self.path.name} has no __global__ kernel {name!r}; it has {', '.join(self.kernels) or 'none'}"


def load(path: "str | Path", defines: dict[str, str] | None = None, *, soc=None, source: str | None = None) -> Library:
    """Compile a C++ kernel file (or ``source``, reported as ``path``) for the simulator; see :class:`Library`."""
    return Library(path, defines, soc=soc, source=source)


def _decl(item: str) -> glue.KernelDecl:
    """A kernel as the glue's fusekit_kernels() lists it: name:param,param:template:line:kernel type:declared."""
    name, params, template, line, kernel_type, declared = item.split(":")
    return glue.KernelDecl(name, tuple(p for p in params.split(",") if p), int(line), template == "1", kernel_type,
                           declared)


def _struct_bytes(name: str, value, size: int) -> bytes:
    """The bytes of a by-value struct parameter of ``size`` bytes: ``bytes`` as they are, or a tiling struct
    (``fusekit.asc.struct.Struct``, asc.adv.TCubeTiling) as its fields in order at their dtypes (the C++ struct of
    fusekit's headers declares the same fields in the same order).

    Raises:
        TypeError: another value, or one of another size than the C++ struct.
    """
    from fusekit.asc.struct import Field, Struct

    if isinstance(value, Struct):
        specs = type(value).struct_fields
        if not all(isinstance(spec, Field) for spec in specs.values()):
            raise TypeError(f"argument {name}: {type(value).__name__} nests structs; pass its bytes")
        value = b"".join(np.array(object.__getattribute__(value, field), spec.dtype.np).tobytes()
                         for field, spec in specs.items())
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"argument {name}: a struct parameter of {size} bytes takes a tiling struct "
                        f"(asc.adv.TCubeTiling) or bytes, got {type(value).__name__}")
    if len(value) != size:
        raise TypeError(f"argument {name}: {len(value)} bytes for a C++ struct of {size} bytes (a struct of other "
                        "fields than the kernel's)")
    return bytes(value)


def _read(path: Path) -> str:
    """The source's text (UTF-8, as the compiler reads it).

    Raises:
        CompileError: not UTF-8 text, naming the line.
    """
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise compiler.CompileError(f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x}); save the file as "
                                    "UTF-8 (iconv -f GBK -t UTF-8 in.cpp > out.cpp)") from None


def arch_defines(soc: SoC) -> dict[str, str]:
    """The macros Ascend C's compiler defines for ``soc``'s architecture: ``__NPU_ARCH__`` (2201 on Atlas A2/A3,
    2002 on 310P; AD-G 架构规格) and ``__CCE_AICORE__`` (220, 200; AD kernel_utils_constants.h)."""
    return {"__NPU_ARCH__": soc.arch, "__CCE_AICORE__": {"2201": "220", "2002": "200"}[soc.arch]}
