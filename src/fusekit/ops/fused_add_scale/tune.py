"""``fusekit tune fused_add_scale``: search tile length, BUFFER_NUM and core count of FusedAddScale for the lowest
predicted time.

The search is the timing model's coordinate descent (:func:`fusekit.timing.tune.descend`, its candidates
:func:`fusekit.timing.tune.knob_candidates`); configurations that give the same TilingData are timed once, each on
the model from a values-free Trace of the first and last core (:func:`fusekit.ops.workloads.fused`).
"""

from __future__ import annotations

from fusekit import tiling
from fusekit.asc import dtypes
from fusekit.soc import get_soc
from fusekit.timing import predict
from fusekit.timing.tune import TuneResult, descend, knob_candidates

from .. import workloads
from .host import NUM_QUEUES, resolve_precision


def tune(n: int, dtype="float16", *, soc=None, precision: str | None = None, progress=None) -> TuneResult:
    """Tune FusedAddScale for ``n`` elements of ``dtype`` on ``soc`` (see module doc).

    Raises:
        ValueError: n < 1, or a dtype / precision the SoC cannot run.
    """
    if not 1 <= n <= tiling.MAX_LAUNCH_ELEMENTS:
        raise ValueError(f"size must be in [1, {tiling.MAX_LAUNCH_ELEMENTS}] to tune (one launch's int32 lengths), "
                         f"got {n}")
    spec = get_soc(soc)
    dt = dtypes.as_dtype(dtype)
    precision = resolve_precision(precision, dt, spec)
    scratch = 8 if precision == "fp32" and dt is not dtypes.float32 else 0
    tried: dict[tiling.TilingData, float] = {}

    def plan_of(cores: int, buffer_num: int, tile: int | None) -> tiling.TilingData | None:
        try:
            return tiling.compute_tiling(n, dt, num_queues=NUM_QUEUES, buffer_num=buffer_num, soc=spec,
                                         core_num=cores, scratch_bytes_per_element=scratch, tile_length=tile)
        except ValueError:  # a tile that does not fit this BUFFER_NUM
            return None

    def time_of(plan: tiling.TilingData) -> float:
        if plan not in tried:
            traces = workloads.fused(n, dt, soc=spec, core_num=plan.block_dim, buffer_num=plan.buffer_num,
                                     tile_length=plan.tile_length, precision=precision)
            tried[plan] = predict(traces, spec).kernel_time_us
            if progress is not None:
                progress()
        return tried[plan]

    return descend(plan_of, time_of, lambda config, plan: knob_candidates(spec, dt, config, plan), spec.vector_cores,
                   tried)
