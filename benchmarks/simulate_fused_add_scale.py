"""Simulated elements per second of FusedAddScale at n = 2**24 float16 on default settings.

Measures wall time of ``fusekit.ops.fused_add_scale.run`` (tiling, launch on the simulator,
Trace recording) and reports the best and median of several repetitions. Not a test: nothing
is asserted about time.

    python benchmarks/simulate_fused_add_scale.py [--size N] [--repeat R]
"""

import statistics

from _common import arguments, float16_inputs

from fusekit.ops.fused_add_scale import run


def main() -> None:
    args = arguments(__doc__, size=2**24, repeat=5)
    x1, x2 = float16_inputs(args.size)
    times = []
    for _ in range(args.repeat):
        result = run(x1, x2, 1.5)
        times.append(result.wall_s)
    plan = result.tilings[0]
    instructions = sum(len(launch.trace) for launch in result.launches)
    print(f"FusedAddScale n={args.size} float16, block_dim {plan.block_dim}, tile_length {plan.tile_length}, "
          f"{instructions} instructions")
    for label, t in (("best", min(times)), ("median", statistics.median(times))):
        print(f"  {label:6} {t:.3f} s  {args.size / t / 1e6:.1f} M simulated elements/s")


if __name__ == "__main__":
    main()
