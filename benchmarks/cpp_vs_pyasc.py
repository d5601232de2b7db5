"""FusedAddScale as a C++ kernel and as its pyasc twin: wall time and cost per recorded instruction.

Both kernels are tests/cpp's pair (sources/fused_add_scale.cpp, twins.py: the same instructions in the same
order). The C++ kernel runs on the reference executor (its scalar code is compiled, once per core); the twin is
timed on the reference executor too (the same per-instruction path: FUSEKIT_EXECUTOR=reference) and on its
default, the lockstep executor. Also: the compile time, cold and cached.

    python benchmarks/cpp_vs_pyasc.py --size 4194304 --repeat 3
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import arguments, float16_inputs

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cpp"))
import twins  # noqa: E402

from fusekit.cpp import load  # noqa: E402

TILE, CORES, SCALE = 4096, 48, 1.5


def best(run, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    args = arguments(__doc__, 1 << 22, 3)
    n = args.size // (CORES * TILE) * CORES * TILE
    x1, x2 = float16_inputs(n)
    cache = tempfile.mkdtemp(prefix="fusekit-cache-")
    os.environ["FUSEKIT_CACHE_DIR"] = cache
    started = time.perf_counter()
    library = load(ROOT / "tests" / "cpp" / "sources" / "fused_add_scale.cpp")
    cold = time.perf_counter() - started
    started = time.perf_counter()
    load(ROOT / "tests" / "cpp" / "sources" / "fused_add_scale.cpp")
    cached = time.perf_counter() - started
    shutil.rmtree(cache)
    print(f"compile: {cold:.2f} s cold, {cached:.3f} s cached")
    rows = [("C++ (reference executor)", lambda y: library.fused_add_scale[CORES](x1, x2, y, n, TILE, SCALE), None),
            ("pyasc twin (reference executor)", lambda y: twins.fused_add_scale[CORES](x1, x2, y, n, TILE, SCALE),
             "reference"),
            ("pyasc twin (lockstep, its default)", lambda y: twins.fused_add_scale[CORES](x1, x2, y, n, TILE, SCALE),
             None)]
    outputs = []
    for name, run, executor in rows:
        if executor:
            os.environ["FUSEKIT_EXECUTOR"] = executor
        y = np.zeros_like(x1)
        seconds, result = best(lambda: run(y), args.repeat)
        os.environ.pop("FUSEKIT_EXECUTOR", None)
        instructions = sum(len(core) for core in result.trace.cores)
        outputs.append(y)
        print(f"{name:36s} {seconds * 1e3:8.1f} ms  {instructions} instructions  "
              f"{seconds / instructions * 1e6:6.1f} us/instruction  {n / seconds / 1e6:6.1f} M elements/s")
    assert all(np.array_equal(outputs[0].view(np.uint16), y.view(np.uint16)) for y in outputs[1:])
    print(f"size {n} float16, {CORES} cores, tile {TILE}: outputs bit-identical")


if __name__ == "__main__":
    main()
