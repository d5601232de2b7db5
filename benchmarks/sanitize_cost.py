"""Cost of the sanitizer: sanitizing FusedAddScale at n = 2**20 float16 against a plain simulated run.

Reports the best of several repetitions of (a) ``fusekit.ops.fused_add_scale.run`` (tiling + launch
on the simulator) and (b) the same run followed by ``fusekit.sanitizer.analyze`` of every launch's
Trace, and their ratio. Not a test: nothing is asserted about time.

    python benchmarks/sanitize_cost.py [--size N] [--repeat R]
"""

import time

from _common import arguments, float16_inputs

from fusekit.ops.fused_add_scale import run
from fusekit.sanitizer import analyze


def main() -> None:
    args = arguments(__doc__, size=2**20, repeat=7)
    x1, x2 = float16_inputs(args.size)
    plain, sanitized, findings = [], [], None
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = run(x1, x2, 1.5)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = run(x1, x2, 1.5)
        findings = [f for launch in result.launches for f in analyze(launch.trace, outputs={"y"})]
        sanitized.append(time.perf_counter() - started)
    instructions = sum(len(launch.trace) for launch in result.launches)
    print(f"FusedAddScale n={args.size} float16, {instructions} instructions, {len(findings)} findings")
    print(f"  plain run      {min(plain) * 1e3:8.1f} ms (best of {args.repeat})")
    print(f"  run + sanitize {min(sanitized) * 1e3:8.1f} ms (best of {args.repeat})")
    print(f"  ratio          {min(sanitized) / min(plain):8.2f}x")


if __name__ == "__main__":
    main()
