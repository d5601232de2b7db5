"""Inputs and the golden output of the article's FusedAddScale, run from build/: python3 ../gen_data.py.

The golden output is numpy's evaluation of the NPU's float16 arithmetic (docs/ascendc-model.md): Add rounds
x1 + x2 to float16, Muls multiplies by the scalar rounded to float16 and rounds again.
"""
import os
import sys

import numpy as np

length = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 20
rng = np.random.default_rng(0)
x1 = rng.uniform(-4, 4, length).astype(np.float16)
x2 = rng.uniform(-4, 4, length).astype(np.float16)
total = (x1.astype(np.float32) + x2.astype(np.float32)).astype(np.float16)
golden = (total.astype(np.float32) * np.float32(np.float16(1.5))).astype(np.float16)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x1.tofile("input/input_x1.bin")
x2.tofile("input/input_x2.bin")
golden.tofile("output/golden.bin")
