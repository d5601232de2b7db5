"""Simulated elements per second of FusedAddScale at n = 2**24 float16 on default settings.

Measures wall time of ``fusekit.ops.fused_add_scale.run`` (tiling, launch on the simulator,
Trace recording) and reports the best and median of several repetitions. Not a test: nothing
is asserted about time.

    python benchmarks/simulate_fused_add_scale.py [--size N] [--repeat R]
"""

import argparse
import statistics

import numpy as np

from fusekit.ops.fused_add_scale import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2**24)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal(args.size, dtype=np.float32).astype(np.float16)
    x2 = rng.standard_normal(args.size, dtype=np.float32).astype(np.float16)
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
