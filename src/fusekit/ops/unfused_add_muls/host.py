"""Host side of the unfused pair: tiling and the two launches (Add, then Muls on its GM output)."""

from __future__ import annotations

import time

import numpy as np

from fusekit import tiling
from fusekit.asc import launch
from fusekit.ops.fused_add_scale.host import (FusedAddScaleRun, check_inputs, overflow_warning, resolve_precision,
                                              scale_warning)
from fusekit.soc import get_soc
from fusekit.verify import warn

from .kernel import add, muls


def add_then_muls(x1: np.ndarray, x2: np.ndarray, scale: float, **options) -> np.ndarray:
    """``(x1 + x2) * scale`` as two kernels, the way stringing a framework's Add and Mul computes it.

    Same inputs, options and errors as ``fusekit.fused_add_scale`` (precision is always native:
    float16 or float32). The intermediate ``x1 + x2`` goes through GM.
    """
    result = run(x1, x2, scale, **options)
    message = overflow_warning(x1, x2, scale, result.y, "native")
    if message:
        warn(message)
    return result.y


def run(x1: np.ndarray, x2: np.ndarray, scale: float, *, soc=None, core_num: int | None = None, buffer_num: int = 2,
        tile_length: int | None = None, executor=None, sample_cores: bool = False) -> FusedAddScaleRun:
    """Run Add then Muls on the simulator; returns the output, both tilings and both launches' Traces.

    ``executor`` and ``sample_cores`` are passed to ``fusekit.asc.launch`` (``fusekit.timing.NO_VALUES``
    and ``sample_cores`` skip work when only the Traces' timing matters).
    """
    spec = get_soc(soc)
    dtype = check_inputs(x1, x2, scale)
    resolve_precision("native", dtype, spec)
    message = scale_warning(scale, dtype, "native")
    if message:
        warn(message)
    n = x1.size
    native = x1.dtype.newbyteorder("=")
    a = np.ascontiguousarray(x1, dtype=native).reshape(-1)
    b = np.ascontiguousarray(x2, dtype=native).reshape(-1)
    if not spec.data_copy_pad and n * dtype.sizeof() % 32:
        raise ValueError(f"{spec.name} has no DataCopyPad: the unfused pair needs n * sizeof to be a multiple of 32 B")
    t, y = np.empty(n, native), np.empty(n, native)
    started = time.perf_counter()
    plans, launches = [], []
    for kernel, num_queues, gm_args, extra in ((add, 3, (a, b, t), {}), (muls, 2, (t, y), {"scale": float(scale)})):
        plan = tiling.compute_tiling(n, dtype, num_queues=num_queues, buffer_num=buffer_num, soc=spec,
                                     core_num=core_num, tile_length=tile_length)
        plans.append(plan)
        if plan.block_dim:
            launches.append(launch(kernel, plan.block_dim, gm_args, dict(plan.kernel_args(), **extra,
                                   TILE_LENGTH=plan.tile_length, BUFFER_NUM=buffer_num), soc=spec, executor=executor,
                                   sample_cores=sample_cores))
    return FusedAddScaleRun(y.reshape(x1.shape), "native", spec, plans, launches, time.perf_counter() - started)


__all__ = ["add_then_muls", "run"]
