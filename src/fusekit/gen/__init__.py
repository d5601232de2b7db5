"""fusekit.gen: from an expression to a fused Ascend C operator (kernel source, tiling, references).

Layers: :mod:`.graph` (tracing with symbolic tensors), :mod:`.lower` (instructions and UB plan),
:mod:`.source` (the pyasc kernel file), :mod:`.reference` (hardware / fp32 / exact models),
:mod:`.op` (host: shapes, tiling, launch), :mod:`.cube` (a matmul and its epilogue: AIC and mix kernels), :mod:`.catalogue` (the shipped generated operators), :mod:`.lookup`
(an operator by name: catalogue, FILE.py:NAME or expression),
:mod:`.perf` (fused vs unfused chain), :mod:`.tune` (``fusekit tune`` for generated ops), :mod:`.project`
(pyasc tracing and the CANN custom-operator project: ``fusekit emit``; needs pyasc, imported on use).
"""

from .graph import (GraphError, absolute, cast, clamp, clip, conv2d, exp, gelu, leaky_relu, log, matmul, maximum, mean,
                    minimum, reciprocal, relu, rsqrt, sigmoid, silu, sqrt, tanh, where)
from .graph import abs, max, min, sum  # noqa: A004 - numpy's names (abs: numpy.abs, absolute's alias)
from .lookup import load
from .op import GeneratedOp, GenRun, define_op, op


def run(name: str, *arrays, **kwargs) -> GenRun:
    """Run the catalogue operator (or ``FILE.py:NAME``) ``name`` on numpy arrays; see ``GeneratedOp.run``."""
    return load(name).run(*arrays, **kwargs)


def profile(name: str, n: int = 2**20, dtype: str = "float16", **kwargs):
    """Fused vs unfused prediction of an operator (``fusekit.gen.perf.compare``); ``name`` as in :func:`run`."""
    from .perf import compare

    return compare(load(name), n, dtype, **kwargs)

__all__ = ["GeneratedOp", "GenRun", "GraphError", "profile", "run", "absolute", "cast", "clamp", "clip", "define_op", "exp", "gelu",
           "leaky_relu", "log", "matmul", "conv2d", "max", "maximum", "mean", "min", "minimum", "op", "reciprocal", "relu", "rsqrt",
           "sigmoid", "silu", "sqrt", "sum", "tanh", "where"]
