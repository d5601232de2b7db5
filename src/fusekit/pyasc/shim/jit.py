"""Stand-in for pyasc's ``asc.runtime.jit`` (pyasc ``python/asc/runtime/jit.py``).

``MockTensor(dtype)`` and ``MockValue(dtype)`` are what pyasc defines: a dtype and nothing else, which pyasc's
code generator takes in place of a GM tensor or a scalar argument to compile a kernel without data (its unit
tests launch with them while ``asc.runtime.launcher.Launcher.run`` is mocked). A MockTensor holds no memory,
so the simulator cannot run a kernel on one: a launch with it is refused (pass a numpy array or a CPU torch
tensor). ``jit`` and ``JITFunction`` are fusekit's ``asc.jit`` and its kernel type.
"""

from __future__ import annotations

from fusekit.asc.runtime import KernelFunction as JITFunction  # noqa: F401 - pyasc's name for a jit kernel
from fusekit.asc.runtime import jit  # noqa: F401


class MockTensor:
    """A GM tensor of ``dtype`` with no data (pyasc ``MockTensor``: only ``.dtype``)."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"MockTensor({getattr(self.dtype, 'name', self.dtype)})"


class MockValue:
    """A scalar of ``dtype`` with no value (pyasc ``MockValue``: only ``.dtype``)."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"MockValue({getattr(self.dtype, 'name', self.dtype)})"


__all__ = ["JITFunction", "MockTensor", "MockValue", "jit"]
