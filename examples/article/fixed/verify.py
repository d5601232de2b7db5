"""Compare build/output/output.bin with the golden output bit for bit: python3 ../verify.py (exit 1 on a mismatch)."""
import sys

import numpy as np

output = np.fromfile("output/output.bin", np.float16)
golden = np.fromfile("output/golden.bin", np.float16)
if output.shape != golden.shape:
    sys.exit(f"output has {output.size} elements, golden {golden.size}")
wrong = np.flatnonzero(output.view(np.uint16) != golden.view(np.uint16))
if wrong.size:
    i = wrong[0]
    sys.exit(f"{wrong.size} of {golden.size} elements differ; first at {i}: {output[i]} instead of {golden[i]}")
print(f"test pass: {golden.size} elements bit-exact")
