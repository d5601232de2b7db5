"""Generated operators (fusekit.gen): throughput, generation time and GM roofline per catalogue op.

1. Simulated elements per second at --size elements float16 on Ascend910B1, 48 cores, for SwiGLU,
   AddRmsNorm (rows of 4096) and the generated FusedAddScale: the timing model's prediction for the
   NPU (n / predicted kernel time) and the simulator's own wall-clock rate (values computed; best of
   --repeat runs). Beside it, the time of the op's ``hardware`` model: the same instructions in numpy
   over the whole arrays at once, i.e. the arithmetic the simulator cannot avoid (numpy's float16
   ufuncs run ~3.5 ns per element here, no SIMD), without any per-tile or per-instruction cost.
2. Time to generate an operator (trace, lower, plan, write and import the kernel), cold, per op.
3. Predicted fraction of the GM roofline (bytes moved / peak HBM bandwidth over the predicted
   time, with and without the launch head) at 16M elements on Ascend910B1, and the fused-vs-unfused
   ratio, per catalogue op.

    python benchmarks/generated_ops.py [--size 16777216] [--repeat 3]
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import arguments  # noqa: E402

from fusekit.gen import catalogue as cat  # noqa: E402
from fusekit.gen import perf  # noqa: E402
from fusekit.cli.generated import inputs  # noqa: E402
from fusekit.gen.op import GeneratedOp  # noqa: E402
from fusekit.timing import predict  # noqa: E402

ROW = 4096
ATTRS = {"fused_add_scale": {"scale": 1.5}, "axpby": {"a": 0.5, "b": 2.0}, "clamp": {"lo": -1.0, "hi": 1.0},
         "quantize": {"scale": 20.0}, "dequantize": {"scale": 0.01}, "dequantize_int8": {"scale": 0.01}}
# the vector operators: their elementwise shapes and GeneratedOp.variant (the vector lowering) do not apply to a
# matmul / conv2d one, whose fused-vs-unfused figures are docs/guide/generator.md's second table
VECTOR = {name: op for name, op in cat.CATALOGUE.items() if op.cube is None}
ROWS = {"add_rms_norm", "layer_norm", "scaled_masked_softmax", "bias_gelu", "bias_gelu_erf", "quantize_per_channel"}


def shape_of(name: str, n: int) -> tuple:
    return (n // ROW, ROW) if name in ROWS else (n,)


def throughput(name: str, n: int, repeat: int) -> tuple[float, float, float]:
    """(predicted NPU elements/s, simulator elements/s, hardware-model seconds) of ``name`` at n float16."""
    op = cat.get(name)
    arrays = inputs(op, shape_of(name, n), "float16")
    attrs = ATTRS.get(name, {})
    result = op.run(*arrays, **attrs)  # values computed: the simulator's own speed
    wall = result.wall_s
    for _ in range(repeat - 1):
        wall = min(wall, op.run(*arrays, **attrs).wall_s)
    predicted_us = predict([r.trace for r in result.launches]).kernel_time_us
    started = time.perf_counter()
    op.reference("hardware", *arrays, **attrs)
    return n / (predicted_us * 1e-6), n / wall, time.perf_counter() - started


def generation_s(name: str) -> float:
    op = cat.get(name)
    started = time.perf_counter()
    fresh = GeneratedOp(op.fn, op.dtypes, op.graph.output_names, name=f"{name}_bench")
    fresh.variant(op.dtypes[0], "fp32" if op.dtypes[0] == "bfloat16" else "native")
    return time.perf_counter() - started


def main() -> None:
    args = arguments(__doc__, 2**24, 3)
    n = args.size
    print(f"1. simulated elements/s at n = {n:,} float16, Ascend910B1, 48 cores (simulator: best of {args.repeat})")
    base = sim_base = None
    for name in ("fused_add_scale", "swiglu", "add_rms_norm"):
        npu, sim, arithmetic_s = throughput(name, n, args.repeat)
        base, sim_base = base or npu, sim_base or sim
        print(f"   {name:<22} predicted NPU {npu / 1e9:7.2f} G elements/s ({npu / base:4.0%} of FusedAddScale); "
              f"simulator {sim / 1e6:6.2f} M elements/s ({sim / sim_base:4.0%}), {n / sim:.3f} s of which the "
              f"arithmetic alone (hardware model) {arithmetic_s:.3f} s")
    print("2. time to generate an operator (cold: trace, lower, plan, write and import the kernel)")
    times = {name: generation_s(name) for name in VECTOR}
    for name, s in times.items():
        print(f"   {name:<22} {s * 1e3:7.1f} ms")
    print(f"   max {max(times.values()) * 1e3:.1f} ms (target < 1000 ms)")
    print(f"3. predicted GM roofline fraction at {n:,} elements, Ascend910B1, float16 (rows of {ROW} where a row op)")
    for name, op in VECTOR.items():
        dtype = "float32" if name.startswith("dequantize") else "float16"
        shapes = {k.name: x.shape for k, x in zip(op.graph.inputs, inputs(op, shape_of(name, n), dtype))}
        r = perf.compare(op, dtype=dtype, attrs=ATTRS.get(name, {}), shapes=shapes)
        kernel = r.roofline_us / (r.fused_us - r.launch_us)
        print(f"   {name:<22} {r.roofline_fraction:5.1%} of the roofline ({kernel:5.1%} without the {r.launch_us:.1f} us "
              f"launch head); fused {r.fused_us:8.2f} us vs unfused {r.unfused_us:8.2f} us ({r.speedup:4.2f}x)")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
