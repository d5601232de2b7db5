"""The catalogue: fused operators shipped as generated ops (each an expression the generator expands).

``CATALOGUE`` maps a snake_case name to its :class:`~fusekit.gen.op.GeneratedOp`, vector and cube operators
alike. The vector ones (``op.cube is None``) generate AIV kernels; those with last-axis reductions (add_rms_norm,
layer_norm, scaled_masked_softmax) or (C,) inputs (bias_gelu, quantize_per_channel) row-tiled ones
(:mod:`fusekit.gen.device`). The ones holding a matmul or a conv2d (``op.cube``, a
:class:`~fusekit.gen.cube.CubeOp`: matmul_bias, attention_score, conv2d_bias_relu_quant, ...) generate AIC_ONLY
or MIX_AIC_1_2 kernels (:mod:`fusekit.gen.cube`); code that takes vector kernels only (the lockstep executor,
autodiff, ``emit --project``) filters on ``op.cube``.
"""

from __future__ import annotations

from .graph import cast, clamp as _clamp, conv2d, exp, gelu, matmul, max as _max, mean, relu, rsqrt, silu, sum as _sum
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


@op(dtypes=("float16", "bfloat16", "float32"))
def matmul_bias(x, w, bias):
    """``x @ w + bias``: x (..., M, K), w (K, N), bias (N,); a (N,) float16 / float32 bias is added by Mmad from the bias
    table (an AIC_ONLY kernel), another on the AIVs of a mix kernel (fusekit.gen.cube.peel_bias)."""
    return matmul(x, w) + bias


@op(dtypes=("float16", "bfloat16", "float32"))
def matmul_bias_gelu(x, w, bias):
    """``gelu(x @ w + bias)``, tanh form."""
    return gelu(matmul(x, w) + bias)


@op(dtypes=("float16", "bfloat16", "float32"))
def matmul_bias_gelu_erf(x, w, bias):
    """``gelu(x @ w + bias)``, erf form (Abramowitz and Stegun 7.1.26 erf, see fusekit.gen.lower)."""
    return gelu(matmul(x, w) + bias, approximate="none")


@op(dtypes=("float16", "bfloat16", "float32"))
def attention_score(q, k, mask, *, scale=1.0):
    """``softmax(q @ k^T * scale + mask)`` along the last axis: q (..., M, D), k (..., S, D) (transpose_b), mask
    (S,) or (..., M, S)."""
    z = matmul(q, k, transpose_b=True) * scale + mask
    e = exp(z - _max(z, axis=-1, keepdims=True))
    return e / _sum(e, axis=-1, keepdims=True)


@op(dtypes=("float16",))
def quant_matmul_dequant(x: "int8", w: "int8", scale: "float32"):
    """``float16(float32(x @ w^T) * scale)``: x (..., M, K) int8, w (N, K) int8 (a Linear's weight), the product
    exact in int32, scale (N,) per output channel or 0-d; the dequantisation in Fixpipe (VDEQF16 / DEQF16)."""
    return cast(cast(matmul(x, w, transpose_b=True), "float32") * scale, "float16")


@op(dtypes=("float16", "float32"))
def matmul_bias_relu_quant(x, w, bias, *, scale):
    """``int8(rint(relu(x @ w + bias) * scale))``, saturating: the bias in Mmad, ReLU and the per-tensor int8
    quantisation in Fixpipe (QF322B8_PRE with relu_en)."""
    return cast(relu(matmul(x, w) + bias) * scale, "int8", "rint")


@op(dtypes=("float16", "bfloat16", "float32"))
def matmul_swiglu(x, w_gate, w_up):
    """``silu(x @ w_gate) * (x @ w_up)``: x (..., M, K), w_gate and w_up (K, N); both products in one mix kernel (the
    AIC computes each tile of the gate and of the up into two workspaces, the AIVs the SwiGLU)."""
    return silu(matmul(x, w_gate)) * matmul(x, w_up)


def conv2d_bias_relu_quant_with(stride=1, padding=1, dilation=1) -> GeneratedOp:
    """The seed article's Conv2dBiasReluQuant for other strides / paddings / dilations (ints or (h, w) pairs)."""
    def fn(x, w, bias, *, scale):
        return cast(relu(conv2d(x, w, stride, padding, dilation) + bias) * scale, "int8", "rint")
    return GeneratedOp(fn, ("float16",), name="conv2d_bias_relu_quant", op_type="Conv2dBiasReluQuant")


conv2d_bias_relu_quant = conv2d_bias_relu_quant_with()
conv2d_bias_relu_quant.__doc__ = """The seed article's conv + bias + ReLU + int8 quantisation: ``int8(rint(relu(conv2d(x, w,
stride 1, padding 1) + bias) * scale))``, x (N, Cin, H, W), w (Cout, Cin, kh, kw) float16, bias (Cout,), the result
NHWC (N, Ho, Wo, Cout); img2col by LoadData 3Dv2, the bias in Mmad, ReLU and the quantisation in Fixpipe (one
AIC_ONLY kernel). Other geometries: :func:`conv2d_bias_relu_quant_with`."""


# the vector operators first, then those on the cube (AIC_ONLY or MIX_AIC_1_2 kernels: op.cube is not None)
CATALOGUE: dict[str, GeneratedOp] = {o.name: o for o in (
    fused_add_scale, add_relu, bias_gelu, bias_gelu_erf, swiglu, geglu, axpby, clamp, quantize, quantize_per_channel,
    dequantize, dequantize_int8, add_rms_norm, layer_norm, scaled_masked_softmax,
    matmul_bias, matmul_bias_gelu, matmul_bias_gelu_erf, attention_score, quant_matmul_dequant,
    matmul_bias_relu_quant, matmul_swiglu, conv2d_bias_relu_quant)}


def get(name: str) -> GeneratedOp:
    """The catalogue operator ``name`` (snake_case, or its OpType such as ``Swiglu``; case is ignored).

    Raises:
        KeyError: no such operator; the message lists the catalogue.
    """
    key = name.lower().replace("-", "_")
    for o in CATALOGUE.values():
        if key in (o.name, o.op_type.lower()):
            return o
    raise KeyError(f"no generated operator {name!r}; the catalogue has {', '.join(CATALOGUE)}")
