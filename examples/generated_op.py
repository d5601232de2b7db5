"""A fused operator generated from an expression: SwiGLU, ``silu(a) * b``, with ``@fusekit.op``.

Run it:  python examples/generated_op.py [OUT_DIR]     (writes the generated kernel and its op_info.json to
                                                       OUT_DIR, default generated_swiglu/)

fusekit traces the function once with symbolic tensors, plans UB from its live temporaries and writes a pyasc
kernel in FusedAddScale's shape (copy-in / compute / copy-out, double-buffered queues). The script runs it on
the simulated NPU, checks it bit for bit against its instruction-by-instruction model and within the CANN
samples' tolerance of the exact result, sanitizes it, and predicts its time fused against the chain of one
kernel per primitive (``fusekit.gen.perf``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import fusekit
from fusekit.gen.perf import compare


@fusekit.op(dtypes=("float16", "float32"))
def swiglu(a, b):
    return fusekit.silu(a) * b


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("generated_swiglu")
    rng = np.random.default_rng(0)
    a = rng.uniform(-4, 4, (64, 512)).astype(np.float16)
    b = rng.uniform(-4, 4, (64, 512)).astype(np.float16)
    y = swiglu(a, b)                                   # numpy in, numpy out, on the simulated NPU
    checks = swiglu.check(a, b, precision="fp32")      # checks["y"]: (vs its own model, vs exact); checks["run"]
    own, exact = checks["y"]
    print(checks)                                      # one line: the verdict, max error and tolerance per output
    print(f"y {y.shape} {y.dtype}; vs fp32 model: {'PASS' if own.passed else 'FAIL'}; "
          f"vs exact: {'PASS' if exact.passed else 'FAIL'}")
    reports = swiglu.sanitize(a, b)
    print("sanitizer:", "clean" if all(r.ok for r in reports) else "\n".join(r.to_text() for r in reports))
    print(compare(swiglu, 2**20, "float16").table())
    written = swiglu.write(out, "float16")
    print("wrote", ", ".join(str(p) for p in written))
    return 0 if checks.passed and all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
