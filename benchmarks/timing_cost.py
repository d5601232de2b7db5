"""Cost of the timing model: scheduling the Trace of FusedAddScale at n = 2**24 float16 against the
simulated run that recorded it.

Reports the best of several repetitions of (a) the simulated run (``fusekit.ops.fused_add_scale.run``)
and (b) ``fusekit.timing.predict`` of its Trace, and their ratio. Not a test: nothing is asserted
about time.

    python benchmarks/timing_cost.py [--size N] [--repeat R]
"""

import time

from _common import arguments, float16_inputs

from fusekit.ops.fused_add_scale import run
from fusekit.timing import predict


def main() -> None:
    args = arguments(__doc__, size=2**24, repeat=5)
    x1, x2 = float16_inputs(args.size)
    simulate, schedule = [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = run(x1, x2, 1.5)
        simulate.append(time.perf_counter() - started)
        started = time.perf_counter()
        profile = predict([launch.trace for launch in result.launches])
        schedule.append(time.perf_counter() - started)
    instructions = sum(len(launch.trace) for launch in result.launches)
    print(f"FusedAddScale n={args.size} float16, {instructions} instructions, predicted {profile.kernel_time_us:.2f} us")
    print(f"  simulated run   {min(simulate) * 1e3:8.1f} ms (best of {args.repeat})")
    print(f"  schedule Trace  {min(schedule) * 1e3:8.1f} ms (best of {args.repeat})")
    print(f"  ratio           {min(schedule) / min(simulate):8.3f}")


if __name__ == "__main__":
    main()
