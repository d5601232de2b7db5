"""The catalogue: fused operators shipped as generated ops (each an expression the generator expands).

``CATALOGUE`` maps a snake_case name to its :class:`~fusekit.gen.op.GeneratedOp`. The ones with
last-axis reductions (add_rms_norm, layer_norm, scaled_masked_softmax) or (C,) inputs (bias_gelu,
quantize_per_channel) generate row-tiled kernels (:mod:`fusekit.gen.device`).
"""

from __future__ import annotations

from .graph import cast, clamp as _clamp, exp, gelu, max as _max, mean, relu, rsqrt, silu, sum as _sum
from .op import GeneratedOp, op

FLOAT = ("float16", "float32", "bfloat16")


@op(dtypes=FLOAT)
def fused_add_scale(x1, x2, *, scale):
    """The seed article's operator: ``(x1 + x2) * scale``."""
    return (x1 + x2) * scale


@op(dtypes=FLOAT)
def add_relu(x1, x2):
    """``relu(x1 + x2)``."""
    return relu(x1 + x2)


@op(dtypes=FLOAT)
def bias_gelu(x, bias):
    """``gelu(x + bias)``, tanh form."""
    return gelu(x + bias)


@op(dtypes=FLOAT)
def bias_gelu_erf(x, bias):
    """``gelu(x + bias)``, erf form (Abramowitz and Stegun 7.1.26 erf, see fusekit.gen.lower)."""
    return gelu(x + bias, approximate="none")


@op(dtypes=FLOAT)
def swiglu(a, b):
    """``silu(a) * b``."""
    return silu(a) * b


@op(dtypes=FLOAT)
def geglu(a, b):
    """``gelu(a) * b`` (tanh form)."""
    return gelu(a) * b


@op(dtypes=FLOAT)
def axpby(x, y, *, a, b):
    """``a * x + b * y``."""
    return a * x + b * y


@op(dtypes=FLOAT)
def clamp(x, *, lo, hi):
    """``min(max(x, lo), hi)``."""
    return _clamp(x, lo, hi)


@op(dtypes=("float16", "float32"))
def quantize(x, *, scale, offset=0.0):
    """Per-tensor int8 quantisation: ``int8(rint(x * scale + offset))``, saturating (Cast's rule)."""
    return cast(x * scale + offset, "int8", "rint")


@op(dtypes=("float16", "float32"))
def quantize_per_channel(x, scale, offset):
    """Per-channel int8 quantisation: ``scale`` and ``offset`` of shape (C,) along the last axis."""
    return cast(x * scale + offset, "int8", "rint")


def quantize_with(rounding: str = "rint", per_channel: bool = False) -> GeneratedOp:
    """A Quantize with another rounding (rint, floor, ceil, round, trunc); saturation is Cast's.

    Raises:
        GraphError: an unknown rounding.
    """
    if per_channel:
        def fn(x, scale, offset):
            return cast(x * scale + offset, "int8", rounding)
    else:
        def fn(x, *, scale, offset=0.0):
            return cast(x * scale + offset, "int8", rounding)
    name = f"quantize{'_per_channel' if per_channel else ''}_{rounding}"
    return GeneratedOp(fn, ("float16", "float32"), name=name)


@op(dtypes=("float32",))
def dequantize(x: "int32", *, scale):
    """int32 -> float16: ``float16(float32(x) * scale)``."""
    return cast(cast(x, "float32") * scale, "float16")


@op(dtypes=("float32",))
def dequantize_int8(x: "int8", *, scale):
    """int8 -> float16: ``float16(float32(x) * scale)``."""
    return cast(cast(x, "float32") * scale, "float16")


@op(dtypes=FLOAT, outputs=("y", "x_sum"))
def add_rms_norm(x, residual, gamma, *, eps=1e-6):
    """Residual add then RMSNorm: ``s = x + residual``, ``y = s * rsqrt(mean(s * s) + eps) * gamma``."""
    s = x + residual
    return s * rsqrt(mean(s * s, axis=-1, keepdims=True) + eps) * gamma, s


@op(dtypes=FLOAT)
def layer_norm(x, gamma, beta, *, eps=1e-5):
    """LayerNorm along the last axis with gamma and beta."""
    mu = mean(x, axis=-1, keepdims=True)
    d = x - mu
    return d * rsqrt(mean(d * d, axis=-1, keepdims=True) + eps) * gamma + beta


@op(dtypes=FLOAT)
def scaled_masked_softmax(x, mask, *, scale=1.0):
    """``softmax(x * scale + mask)`` along the last axis (mask broadcast over rows)."""
    z = x * scale + mask
    e = exp(z - _max(z, axis=-1, keepdims=True))
    return e / _sum(e, axis=-1, keepdims=True)


CATALOGUE: dict[str, GeneratedOp] = {o.name: o for o in (
    fused_add_scale, add_relu, bias_gelu, bias_gelu_erf, swiglu, geglu, axpby, clamp, quantize, quantize_per_channel,
    dequantize, dequantize_int8, add_rms_norm, layer_norm, scaled_masked_softmax)}


def get(name: str) -> GeneratedOp:
    """The catalogue operator ``name`` (snake_case, or its OpType such as ``Swiglu``; case is ignored)."""
    key = name.lower().replace("-", "_")
    for o in CATALOGUE.values():
        if key in (o.name, o.op_type.lower()):
            return o
    raise KeyError(f"no generated operator {name!r}; the catalogue has {', '.join(CATALOGUE)}")
