"""Ascend C in C++ on fusekit's simulator: kernels (``.cpp``), whole ``.asc`` programs, their headers.

``fusekit.cpp.load("add_custom.cpp").add_custom[8](x, y, z, n)`` compiles a C++ kernel file with the compiler
the machine has (g++ or clang++) against fusekit's own Ascend C headers (``include/``), and runs its
``__global__`` function on the simulator that runs pyasc kernels: every Ascend C call forwards to it
(:mod:`fusekit.cpp.bridge`), the scalar code runs natively. ``fusekit run FILE.asc`` runs a host program with
its ``main`` (:mod:`fusekit.cpp.program`).
"""

from .compiler import CompileError
from .kernel import CppKernel, Library, load

__all__ = ["CompileError", "CppKernel", "Library", "load"]
