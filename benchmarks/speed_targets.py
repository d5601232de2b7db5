"""The simulator against the numpy evaluation of the same arithmetic: the speed targets of issue 20.

For each workload, in one run on this machine: the simulator's time (values computed, the default
executor; best of --repeat) over the time of the op's own hardware model, i.e. the same instructions
evaluated over the whole arrays with numpy (``fusekit.asc.native.numpy_only``: numpy's own float16 loops,
as the target defines it; best of --repeat). Beside it, the model with fusekit's C float16 loops, and the
executor the launches took (``Trace.executor``).

    python benchmarks/speed_targets.py [--repeat 3] [--llama-repeat 5] [--no-llama]

Workloads (Ascend910B1, 48 cores, BUFFER_NUM 2): FusedAddScale 2^22 float16 (``fusekit.ops``); the generated
SwiGLU 2^22 float16, AddRmsNorm (1024, 4096) float16, scaled masked softmax (8192, 128) float16 and
(1024, 128) float32 (the LLaMA layer's), scale 0.125; then the LLaMA decoder layer of
``benchmarks/torch_llama_layer.py``, compiled forward over eager forward (medians), with the backend's default
replay (``fusekit.gen.replay``: each group simulated at its first call, later forwards by its hardware model) and
with every forward simulated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import float16_inputs  # noqa: E402

from fusekit.asc import native  # noqa: E402
from fusekit.cli.generated import inputs  # noqa: E402
from fusekit.gen import catalogue  # noqa: E402
from fusekit.ops import fused_add_scale  # noqa: E402
from fusekit.ops.fused_add_scale import host  # noqa: E402

TARGETS = {"FusedAddScale 2^22 float16": 1.0, "SwiGLU 2^22 float16": 1.0, "AddRmsNorm (1024, 4096) float16": 1.5,
           "softmax (8192, 128) float16": 2.0, "softmax (1024, 128) float32": 3.0}


def best(fn, repeat: int) -> float:
    """The shortest wall time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def workloads():
    """(name, simulate, model, executors) per workload; ``executors()`` names what the last run took."""
    x1, x2 = float16_inputs(1 << 22)
    last = {}

    def fas():
        last["fas"] = fused_add_scale.run(x1, x2, 1.5)

    yield ("FusedAddScale 2^22 float16", fas, lambda: host.reference(x1, x2, 1.5, "hardware"),
           lambda: {r.trace.executor for r in last["fas"].launches})
    for name, label, shape, dtype, attrs in (
            ("swiglu", "SwiGLU 2^22 float16", (1 << 22,), "float16", {}),
            ("add_rms_norm", "AddRmsNorm (1024, 4096) float16", (1024, 4096), "float16", {}),
            ("scaled_masked_softmax", "softmax (8192, 128) float16", (8192, 128), "float16", {"scale": 0.125}),
            ("scaled_masked_softmax", "softmax (1024, 128) float32", (1024, 128), "float32", {"scale": 0.125})):
        op = catalogue.get(name)
        arrays = inputs(op, shape, dtype)

        def simulate(op=op, arrays=arrays, attrs=attrs, key=label):
            last[key] = op.run(*arrays, **attrs)

        yield (label, simulate, lambda op=op, arrays=arrays, attrs=attrs: op.reference("hardware", *arrays, **attrs),
               lambda key=label: {r.trace.executor for r in last[key].launches})


def llama(repeat: int, replay: bool) -> tuple[float, float]:
    """(compiled forward ms, eager forward ms) of the LLaMA layer, medians of ``repeat``; ``replay``: the backend's
    default (later calls of a shape answered by the generated operators' hardware models, fusekit.gen.replay), else
    every forward simulated."""
    import torch

    import fusekit.torch
    from torch_llama_layer import build

    torch._dynamo.reset()
    layer, x, forward = build(512, 128, torch.float32)
    compiled = fusekit.torch.compile(layer, predict=False, progress=False, replay=replay)
    with torch.no_grad():
        forward(compiled, x)  # compile
        eager, fused = [], []
        for _ in range(repeat):
            eager.append(best(lambda: forward(layer, x), 1))
            fused.append(best(lambda: forward(compiled, x), 1))
    return statistics.median(fused) * 1e3, statistics.median(eager) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--llama-repeat", type=int, default=5)
    ap.add_argument("--no-llama", action="store_true")
    args = ap.parse_args(argv)
    print(f"float16 arithmetic: {native.STATUS}")
    print(f"{'workload':<34} {'simulator':>10} {'model':>9} {'ratio':>7} {'target':>7} {'model C':>8}  executor")
    for label, simulate, model, executors in workloads():
        sim = best(simulate, args.repeat)
        with native.numpy_only():
            numpy_model = best(model, args.repeat)
        c_model = best(model, args.repeat)
        ratio = sim / numpy_model
        verdict = "ok" if ratio <= TARGETS[label] else "MISS"
        print(f"{label:<34} {sim * 1e3:8.1f}ms {numpy_model * 1e3:7.1f}ms {ratio:6.2f}x {TARGETS[label]:5.1f}x "
              f"{c_model * 1e3:6.1f}ms  {','.join(sorted(executors()))} {verdict}")
    for replay in () if args.no_llama else (True, False):
        fused, eager = llama(args.llama_repeat, replay)
        ratio = fused / eager
        label = "LLaMA forward, compiled/eager" + ("" if replay else " (no replay)")
        print(f"{label:<34} {fused:8.1f}ms {eager:7.2f}ms {ratio:6.1f}x {10.0:5.1f}x"
              f"{'':>9}  {'replay' if replay else 'simulated'} {'ok' if ratio <= 10 else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
