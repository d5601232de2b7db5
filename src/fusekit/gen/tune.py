"""``fusekit tune OP`` for a generated operator: the coordinate descent of ``fusekit.timing.tune``
(tile, BUFFER_NUM, cores; the lowest predicted time) over the generated kernel's own tiling.

Knobs: an elementwise kernel's TILE_LENGTH (``fusekit.timing.tune``'s candidates, in elements of the
narrowest GM dtype), a row-tiled kernel's TILE_ROWS (1 to 64 in powers of two, the most that fit UB,
a core's rows cut in two or three); BUFFER_NUM 1 to 4; core counts as FusedAddScale's. Each
configuration runs values-free (``fusekit.timing.NO_VALUES``, first and last core) and is timed on
the model (``fusekit.timing.predict``).
"""

from __future__ import annotations

import numpy as np

from fusekit.asc import dtypes
from fusekit.soc import get_soc
from fusekit.timing import NO_VALUES, predict
from fusekit.timing.tune import TuneResult, descend, knob_candidates

from .op import GeneratedOp


def tune(op: GeneratedOp, arrays: list, *, soc=None, precision: str | None = None, progress=None,
         **attrs) -> TuneResult:
    """Tune ``op`` on inputs shaped like ``arrays`` (their values are not read); ``attrs`` its float attributes.

    Returns a ``fusekit.timing.tune.TuneResult`` (TilingData in rows for a row-tiled kernel).

    Raises:
        TypeError, ValueError, GraphError: as ``GeneratedOp.run`` for these inputs.
    """
    spec = get_soc(soc)
    arrays = [np.zeros(x.shape, x.dtype) for x in arrays]  # no values are read: zeros are cheap and safe
    configs: dict = {}
    tried: dict = {}

    def options(cores, buffer_num, tile):
        return dict(soc=spec, precision=precision, core_num=cores, buffer_num=buffer_num, tile_length=tile, **attrs)

    def plan_of(cores: int, buffer_num: int, tile):
        seen = []
        try:
            result = op.run(*arrays, launcher=lambda *a: seen.append(a), **options(cores, buffer_num, tile))
        except ValueError:  # a tile that does not fit UB with this BUFFER_NUM
            return None
        plan = result.tilings[0]
        configs.setdefault(plan, (cores, buffer_num, tile))
        return plan

    def time_of(plan) -> float:
        if plan not in tried:
            result = op.run(*arrays, executor=NO_VALUES, sample_cores=True, **options(*configs[plan]))
            tried[plan] = predict([r.trace for r in result.launches], spec).kernel_time_us
            if progress is not None:
                progress()
        return tried[plan]

    probe = op.run(*arrays, launcher=lambda *a: None, soc=spec, precision=precision, **attrs)
    program = probe.variant.program
    if program.rows:
        def candidates(config, plan):
            most = plan_of(config["cores"], config["buffer_num"], None)
            tiles = {1, 2, 4, 8, 16, 32, 64, None} | {max(1, -(-plan.block_length // parts)) for parts in (2, 3)}
            if most is not None:
                tiles.add(most.tile_length)
            return {"tile": sorted(tiles, key=lambda t: t or 1 << 40), "cores": _cores(spec),
                    "buffer_num": [1, 2, 3, 4]}
    else:
        gm = program.gm_dtypes
        narrow = min((dtypes.as_dtype(gm[k]) for k in list(program.inputs) + list(program.outputs)),
                     key=lambda d: d.sizeof())

        def candidates(config, plan):
            return knob_candidates(spec, narrow, config, plan)
    return descend(plan_of, time_of, candidates, spec.vector_cores, tried)


def _cores(spec) -> list[int]:
    return sorted({1, 2, 4, *range(8, spec.vector_cores + 1, 8), spec.vector_cores})
