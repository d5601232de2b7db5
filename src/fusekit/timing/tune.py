"""Autotuning: search tile length, BUFFER_NUM and core count of an elementwise kernel for the lowest predicted time.

A coordinate descent from the default tiling: try every candidate of one knob with the others
fixed, keep the best, move to the next knob, and repeat until a full round improves nothing.
Candidates: tile lengths of 1 to 16 KiB in powers of two and 24 KiB, the default rule's, and a
core's range cut in two or three; core counts 1, 2, 4, 8 and multiples of 8 up to the SoC's cores;
BUFFER_NUM 1 to 4. The operator is passed in as two functions (its tiling of a configuration, the
predicted time of a tiling), so the search knows no operator: FusedAddScale's is
:func:`fusekit.ops.fused_add_scale.tune.tune`, a generated operator's :func:`fusekit.gen.tune.tune`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fusekit import tiling


@dataclass
class TuneResult:
    """The best configuration found and the default's, with predicted times in microseconds."""

    best: tiling.TilingData
    best_us: float
    default: tiling.TilingData
    default_us: float
    tried: dict = field(default_factory=dict)  # TilingData -> predicted us

    @property
    def default_gap(self) -> float:
        """How much slower the default is than the best (0.03 = 3 %)."""
        return self.default_us / self.best_us - 1 if self.best_us else 0.0


def descend(plan_of, time_of, candidates, cores: int, tried: dict) -> TuneResult:
    """The coordinate descent of the module doc from the default (``cores``, BUFFER_NUM 2, the default tile).

    ``plan_of(cores, buffer_num, tile)`` gives a TilingData (None: does not fit), ``time_of(plan)`` its
    predicted us (recorded in ``tried``), ``candidates(config, plan)`` {knob: values}. Also used by
    ``fusekit.gen.tune`` for generated operators."""
    default = plan_of(cores, 2, None)
    config = {"cores": cores, "buffer_num": 2, "tile": default.tile_length}
    best, best_us = default, time_of(default)
    improved = True
    while improved:
        improved = False
        for knob, values in candidates(config, best).items():
            for value in values:
                trial = dict(config, **{knob: value})
                plan = plan_of(trial["cores"], trial["buffer_num"], trial["tile"])
                if plan is not None and time_of(plan) < best_us * 0.999:
                    best, best_us, config, improved = plan, time_of(plan), trial, True
    return TuneResult(best, best_us, default, tried[default], tried)


def knob_candidates(spec, dt, config: dict, plan: tiling.TilingData) -> dict[str, list[int]]:
    """{knob: values} to try from ``plan`` (the module doc's candidates) for elements of ``dt`` on ``spec``;
    also the search space of ``fusekit.gen.tune``."""
    unit = tiling.GM_ALIGN_BYTES // dt.sizeof()
    tiles = {unit * 2**k for k in range(1, 6)} | {24 * 1024 // dt.sizeof()}
    tiles |= {-(-plan.block_length // parts) // unit * unit or unit for parts in (2, 3)}
    tiles.add(None)  # the default rule: the largest that fits UB
    cores = sorted({1, 2, 4, *range(8, spec.vector_cores + 1, 8), spec.vector_cores})
    return {"tile": sorted(tiles, key=lambda t: t or 1 << 40), "cores": cores, "buffer_num": [1, 2, 3, 4]}
