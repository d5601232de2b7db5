"""Traces of the shipped elementwise operators, recorded for timing only (no values computed).

Inputs are zeros (values do not change an elementwise kernel's instructions), effects are skipped
(``NO_VALUES``) and, with ``sample=True``, only the first and the last core run: every other
core of these kernels does the first core's work (``fusekit.tiling``), which ``fusekit.timing``
schedules from the first core's Trace.

These are the operators' Traces, so they live with the operators, a layer above the timing model: the
timing model's searches and studies that need them take them as arguments (``fusekit.timing.tune.descend``'s
``time_of``, ``fusekit.timing.studies.validate(workloads=...)``).
"""

from __future__ import annotations

import numpy as np

from fusekit.asc import dtypes
from fusekit.asc.trace import Trace
from fusekit.timing import NO_VALUES

from . import fused_add_scale, unfused_add_muls


def _inputs(n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    np_dtype = dtypes.as_dtype(dtype).np
    return np.zeros(n, np_dtype), np.zeros(n, np_dtype)


def fused(n: int, dtype="float16", *, sample: bool = True, **options) -> list[Trace]:
    """Trace(s) of FusedAddScale on n elements; options as ``fusekit.ops.fused_add_scale.run``."""
    result = fused_add_scale.run(*_inputs(n, dtype), 1.5, executor=NO_VALUES, sample_cores=sample, **options)
    return [launch.trace for launch in result.launches]


def unfused(n: int, dtype="float16", *, sample: bool = True, **options) -> list[Trace]:
    """Traces of the Add and Muls launches on n elements; options as ``fusekit.ops.unfused_add_muls.run``."""
    result = unfused_add_muls.run(*_inputs(n, dtype), 1.5, executor=NO_VALUES, sample_cores=sample, **options)
    return [launch.trace for launch in result.launches]


def add(n: int, dtype="float16", *, sample: bool = True, **options) -> list[Trace]:
    """Trace of the Add kernel alone (the calibration workload: the official Add tuning study)."""
    return unfused(n, dtype, sample=sample, **options)[:1] if n else []


__all__ = ["add", "fused", "unfused"]
