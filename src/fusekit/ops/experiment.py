"""The seed article's experiment (section 5.3 and 1.1), predicted with the timing model.

For FusedAddScale on float16 it compares a single core with BUFFER_NUM 1 (the naive kernel), all
cores with BUFFER_NUM 1 (multi-core, aligned blocks), all cores with BUFFER_NUM 2 (double
buffering), and the fused kernel against the unfused pair (an Add kernel writing ``x1 + x2`` to
GM, then a Muls kernel reading it back: two launches). The article reports the order
single core > multi-core > multi-core double-buffered in time, and unfused ~1.8x fused at 256K.
The configurations are the shipped operators' (:mod:`fusekit.ops.workloads`), so the experiment sits
with them, above the timing model it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusekit.soc import get_soc
from fusekit.timing import Profile, predict
from fusekit.timing.schedule import is_transfer

from . import workloads

ARTICLE_RATIO = 1.8


@dataclass
class Row:
    label: str
    profile: Profile

    @property
    def time_us(self) -> float:
        return self.profile.kernel_time_us


def rows(n: int, soc=None) -> list[Row]:
    """The experiment's configurations at ``n`` float16 elements.

    Raises:
        ValueError: n < 1.
    """
    if n < 1:
        raise ValueError(f"the experiment needs at least one element, got {n}")
    cores = get_soc(soc).vector_cores
    run = lambda traces: predict(traces, soc)  # noqa: E731
    return [
        Row("single core, BUFFER_NUM 1", run(workloads.fused(n, soc=soc, core_num=1, buffer_num=1))),
        Row(f"multi-core (<= {cores}), BUFFER_NUM 1", run(workloads.fused(n, soc=soc, core_num=cores, buffer_num=1))),
        Row(f"multi-core (<= {cores}), BUFFER_NUM 2", run(workloads.fused(n, soc=soc, core_num=cores, buffer_num=2))),
        Row("unfused Add + Muls (2 launches)", run(workloads.unfused(n, soc=soc))),
    ]


def report(n: int, soc=None) -> str:
    """A text table of :func:`rows` with the fused / unfused ratio next to the article's."""
    table = rows(n, soc)
    single, fused, unfused = table[0].time_us, table[2].time_us, table[3].time_us
    lines = [f"FusedAddScale, {n:,} float16 elements on {get_soc(soc).name} (predicted by the timing model)",
             f"  {'configuration':<34} {'block_dim':>9} {'tile':>6} {'time (us)':>10} {'vs single':>9} "
             f"{'GM GB/s':>8}"]
    for row in table:
        plan = row.profile.launches[0].trace
        tile = _tile_length(row.profile)
        lines.append(f"  {row.label:<34} {plan.block_dim:>9} {tile:>6} {row.time_us:>10.2f} "
                     f"{single / row.time_us:>8.1f}x {row.profile.bandwidth_gbps:>8.0f}")
    lines.append(f"  fused vs unfused: {fused:.2f} us against {unfused:.2f} us, the pair takes {unfused / fused:.2f}x "
                 f"(article: about {ARTICLE_RATIO}x at 256K)")
    return "\n".join(lines)


def _tile_length(profile: Profile) -> int:
    """The largest transfer of the first core, in elements (its tile length)."""
    core = profile.launches[0].cores[0]
    sizes = [i.count for i in core.instrs if is_transfer(i) and i.pipe.value == "MTE2"]
    return max(sizes, default=0)
