"""PNG of a Profile: the pipe timeline of a few cores (top) and every core's pipe utilisation (bottom)."""

from __future__ import annotations

import io

from fusekit.files import write_atomic
from fusekit.machine import PIPES

from . import pipe_columns

COLORS = {"S": "#8c8c8c", "V": "#2ca02c", "MTE2": "#1f77b4", "MTE3": "#ff7f0e"}
OTHER_COLOR = "#9467bd"  # a pipe of the table with no colour of its own here


def plot_profile(profile, path, cores: int = 4) -> None:
    """Draw ``profile`` to ``path`` (PNG, written atomically).

    Raises:
        ImportError: matplotlib is missing; the message says how to install it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'ascend-fusekit[plot]'") from None
    fig, (timeline, bars) = plt.subplots(2, 1, figsize=(12, 7), gridspec_kw={"height_ratios": [3, 2]})
    _timeline(timeline, profile, cores)
    _utilization(bars, profile)
    kernels = " + ".join(launch.trace.kernel for launch in profile.launches)
    fig.suptitle(f"{kernels} on {profile.params.soc}: {profile.kernel_time_us:.2f} us predicted")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    write_atomic(path, lambda f: f.write(buffer.getvalue()))


def _timeline(ax, profile, cores: int) -> None:
    shown = list(range(min(cores, profile.launches[0].trace.block_dim)))
    labels = [f"{profile.launches[0].trace.core_label(core)} {pipe.value}" for core in shown for pipe in PIPES]
    offset = 0.0
    for launch in profile.launches:
        offset += launch.overhead_us
        for slot, core in enumerate(shown):
            if core >= len(launch.cores):
                continue
            sched = launch.cores[core]
            issue = profile.params.cycles_us(profile.params.scalar_cycles_per_call)
            for index, pipe in enumerate(PIPES):
                spans = [(offset + s, e - s) for p, s, e in zip(sched.pipes, sched.start, sched.free or sched.end)
                         if p == index and e > s]
                if pipe.value == "S":  # the scalar unit also spends an issue slot on every call
                    spans += [(offset + t - issue, issue) for t in sched.issue]
                row = slot * len(PIPES) + index
                ax.broken_barh(spans, (row - 0.4, 0.8), color=COLORS.get(pipe.value, OTHER_COLOR))
        offset += launch.makespan_us
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    ax.set_title("pipe timeline")


def _utilization(ax, profile) -> None:
    rows = profile.utilization()
    x = range(len(rows))
    width = 0.2
    columns = pipe_columns(profile.kind)  # msprof's per-pipe ratio columns, in its order
    for k, (pipe, _, column) in enumerate(columns):
        ax.bar([i + (k - (len(columns) - 1) / 2) * width for i in x], [r[column] for r in rows], width,
               label=pipe.value, color=COLORS.get(pipe.value, OTHER_COLOR))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("core (launches one after another)" if len(profile.launches) > 1 else "core")
    ax.set_ylabel("busy ratio")
    ax.set_title("pipe utilisation (PipeUtilization.csv)")
    ax.legend(ncol=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25))
