"""The C extension fusekit.asc._native (float16 arithmetic, the cube's accumulation); everything else is in
pyproject.toml.

``optional=True``: where it cannot be compiled (no C compiler), the install goes on without it and
fusekit computes the same bits with numpy (fusekit/asc/native.py). No ``-march`` flag: the SIMD
loops are chosen at run time from the CPU, so one build runs on any CPU of its architecture. ``-pthread`` on POSIX:
mmad's column halves run on two threads.
"""

import os

from setuptools import Extension, setup

threads = ["-pthread"] if os.name == "posix" else []
setup(ext_modules=[Extension("fusekit.asc._native", ["src/fusekit/asc/_native.c"], optional=True,
                             extra_compile_args=threads, extra_link_args=threads)])
