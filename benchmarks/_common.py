"""What the benchmark scripts share: their command line and their FusedAddScale inputs."""

import argparse

import numpy as np


def arguments(doc: str, size: int, repeat: int) -> argparse.Namespace:
    """--size N (elements) and --repeat R, with the script's docstring as help."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--size", type=int, default=size)
    parser.add_argument("--repeat", type=int, default=repeat)
    return parser.parse_args()


def float16_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two seeded standard-normal float16 arrays of n elements."""
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(n, dtype=np.float32).astype(np.float16) for _ in range(2))
