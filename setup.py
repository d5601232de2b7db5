"""The C extension fusekit.asc._native (float16 arithmetic); everything else is in pyproject.toml.

``optional=True``: where it cannot be compiled (no C compiler), the install goes on without it and
fusekit computes the same bits with numpy (fusekit/asc/native.py). No ``-march`` flag: the SIMD
loops are chosen at run time from the CPU, so one build runs on any CPU of its architecture.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("fusekit.asc._native", ["src/fusekit/asc/_native.c"], optional=True)])
