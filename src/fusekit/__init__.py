"""fusekit: build fused Ascend C operators in Python and run them on a CPU simulator of the NPU."""

from fusekit import asc
from fusekit.asc import KernelError
from fusekit.pyasc.bridge import simulate
from fusekit.ops.fused_add_scale import fused_add_scale
from fusekit.sanitizer import sanitize
from fusekit.timing import profile
from fusekit.verify import PrecisionWarning
from fusekit import gen
from fusekit.gen import (abs, absolute, cast, clamp, conv2d, define_op, exp, gelu, leaky_relu, log, matmul, max, maximum,  # noqa: A004
                         mean, min, minimum, op, reciprocal, relu, rsqrt, sigmoid, silu, sqrt, sum, tanh, where)

__all__ = ["asc", "KernelError", "PrecisionWarning", "fused_add_scale", "profile", "sanitize", "simulate",
           # fusekit.gen: operators from expressions, and the primitives they are written with
           # (fusekit.sum / max / min / abs exist too; they stay out of __all__ so `import *` keeps the builtins)
           "gen", "op", "define_op", "absolute", "cast", "clamp", "exp", "gelu", "leaky_relu", "log", "matmul", "conv2d",
           "maximum", "mean", "minimum", "reciprocal", "relu", "rsqrt", "sigmoid", "silu", "sqrt", "tanh", "where"]
