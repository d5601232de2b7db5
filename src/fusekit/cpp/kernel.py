"""A compiled C++ source and its ``__global__`` kernels, launched like ``@asc.jit`` kernels.

``fusekit.cpp.load("add.asc")`` compiles the file (:mod:`fusekit.cpp.compiler`) and returns a :class:`Library`;
``library.add_custom[8](x, y, z, n)`` runs its kernel ``add_custom`` on 8 simulated cores with numpy (or CPU torch)
arguments, and ``fusekit.sanitize`` / ``fusekit.profile`` take it as they take a pyasc kernel. Each core runs the
compiled function once (the kernel's scalar code is native); every Ascend C call goes to the simulator
(:mod:`fusekit.cpp.bridge`). A C++ kernel runs on the reference executor, one core after another in block order.
"""

from __future__ import annotations

import ctypes
import inspect
from pathlib import Path

import numpy as np

from fusekit.asc.runtime import GlobalAddress, KernelFunction

from . import bridge, compiler, glue
from .memory import DeviceBuffer, device_address

_INT_RANGES = {f"{sign}{bits}": ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if sign == "i" else (0, (1 << bits) - 1))
               for sign in "iu" for bits in (8, 16, 32, 64)}


class CppKernel(KernelFunction):
    """One ``__global__`` function of a compiled library, as a launchable kernel.

    Parameters are named as in the C++ source; pointer parameters (``GM_ADDR``, ``__gm__ T*``) take numpy arrays
    (C-contiguous, native byte order) or device pointers of a host program, integer and float parameters Python
    numbers (checked against the C++ type's range).
    """

    runs_natively = True  # the lockstep executor cannot run compiled scalar code (fusekit.asc.lockstep.launcher)

    def __init__(self, library: "Library", decl: glue.KernelDecl, types: list[str]):
        self.library, self.decl, self.types = library, decl, dict(zip(decl.params, types))
        self._entry = getattr(library.dll, f"fusekit_entry_{decl.name}")
        self._entry.argtypes, self._entry.restype = [ctypes.POINTER(bridge.Arg)], ctypes.c_int

        def body(**bound):
            self._run(bound)

        body.__name__ = body.__qualname__ = decl.name
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               annotation="GM_ADDR" if t == "gm" else t) for p, t in self.types.items()])
        body.__module__ = __name__
        super().__init__(body)

    def argument(self, name: str, value, kind: str = ""):
        """A launch argument for parameter ``name`` (see the class docstring).

        Raises:
            TypeError: an array for a scalar parameter, a scalar for a pointer, a non-contiguous array.
            ValueError: an integer outside the parameter's C++ type.
        """
        code = self.types[name]
        if code == "gm":
            if isinstance(value, GlobalAddress):
                return value
            if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "numpy"):
                value = value.detach().numpy()
            if not isinstance(value, np.ndarray):
                raise TypeError(f"argument {name}: a GM pointer parameter takes a numpy array, got {type(value).__name__}")
            return GlobalAddress(DeviceBuffer(name, value))
        if isinstance(value, np.ndarray):
            raise TypeError(f"argument {name}: parameter of C++ type {code} takes a number, got an array")
        if code in _INT_RANGES or code == "b":
            low, high = _INT_RANGES.get(code, (0, 1))
            if isinstance(value, (float, np.floating)) or not low <= int(value) <= high:
                raise ValueError(f"argument {name}={value!r} does not fit the kernel's {code} parameter "
                                 f"([{low}, {high}])")
            return int(value)
        return float(value)

    def _run(self, bound: dict) -> None:
        args = (bridge.Arg * max(1, len(self.decl.params)))()
        for k, name in enumerate(self.decl.params):
            value, out = bound[name], args[k]
            if isinstance(value, GlobalAddress):
                out.kind, out.i = bridge.ARG_ADDRESS, device_address(value)
            elif isinstance(value, float):
                out.kind, out.f = bridge.ARG_FLOAT, value
            else:
                out.kind, out.i = bridge.ARG_INT, int(value)
        bridge.reset()  # each core starts with no objects: its handles end with it
        if self._entry(args):
            bridge.reraise()

    def __repr__(self) -> str:
        return f"<C++ kernel {self.decl.name} of {self.library.path}>"


class Library:
    """A compiled C++ source: its kernels by name (attributes and ``library["name"]``), its host ``main`` if any.

    Args:
        path: the ``.cpp`` / ``.asc`` file (read as UTF-8).
        defines: compiler definitions (``{"SCENARIO_NUM": "1"}``, as ``-D SCENARIO_NUM=1``).

    Raises:
        CompileError: no compiler, or the source does not compile (the compiler's messages, with a note naming
            each Ascend C call fusekit does not simulate).
        OSError: the file cannot be read.
    """

    def __init__(self, path: "str | Path", defines: dict[str, str] | None = None, *, source: str | None = None):
        self.path = Path(path)
        text = self.path.read_text(encoding="utf-8") if source is None else source
        unit = glue.translation_unit(text, str(self.path.resolve()))
        self.so = compiler.build(unit, self.path.resolve().parent, defines)
        self.dll = ctypes.CDLL(str(self.so))
        self.dll.fusekit_set_dispatch.argtypes = [bridge.DISPATCH]
        self.dll.fusekit_set_dispatch(bridge.callback())
        self.kernels: dict[str, CppKernel] = {}
        for decl in glue.kernels(text):
            describe = getattr(self.dll, f"fusekit_types_{decl.name}")
            describe.restype = ctypes.c_char_p
            types = describe().decode().split(",") if decl.params else []
            self.kernels[decl.name] = CppKernel(self, decl, types)
        self.has_main = hasattr(self.dll, "fusekit_main")

    def __getitem__(self, name: str) -> CppKernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"{self.path.name} has no __global__ kernel {name!r}; it has "
                           f"{', '.join(self.kernels) or 'none'}") from None

    def __getattr__(self, name: str) -> CppKernel:
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"{self.__dict__.get('path', '?')} has no __global__ kernel {name!r}")


def load(path: "str | Path", defines: dict[str, str] | None = None, *, source: str | None = None) -> Library:
    """Compile a C++ kernel file (or ``source``, reported as ``path``) for the simulator; see :class:`Library`."""
    return Library(path, defines, source=source)
