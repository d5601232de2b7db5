"""Axpy: ``dst = scalar * src + dst`` (pyasc basic/vec_ternary_scalar.py; AD-API 复合计算/Axpy.md).

Forms: ``axpy(dst, src, scalar, count)`` (pyasc's count form takes no is_set_mask),
``axpy(dst, src, scalar, mask: int | List[int], repeat_times, repeat_params: UnaryRepeatParams, is_set_mask=True)``.
The scalar is converted to src's dtype (pyasc materialises it as ``src.dtype``). dtypes (A2/A3 and
310P AI Core): half -> half, float -> float, half -> float (a repeat then holds 64 lanes: PAR 64).
The product and the sum are rounded once: the page gives only the formula, so fusekit assumes a
fused multiply-add (an assumption).
"""

from __future__ import annotations

from .. import checks, dtypes
from ..runtime import current
from .arith import fused_multiply_add
from .execute import execute
from .iteration import MISSING, UNARY_FORMS, bind, iteration
from .spec import Spec, destinations, export, register, same_on_all

_PAIRS = same_on_all({("float16", "float16"), ("float32", "float32"), ("float16", "float32")})


def _axpy(x, d, scalar):
    """``scalar * x + d`` rounded once (the fused multiply-add this module assumes): src lanes, dst lanes, scalar."""
    return fused_multiply_add(x, scalar, d)


SPEC = register(Spec("axpy", "Axpy", "vec_ternary_scalar", destinations(_PAIRS), _axpy, pairs=_PAIRS, reads_dst=True,
                     source="AD-API Memory矢量计算/复合计算/Axpy.md", doc="dst = scalar * src + dst"))


@export
def axpy(dst=MISSING, src=MISSING, scalar=MISSING, *args, **kwargs) -> None:
    """``dst = scalar * src + dst`` for each active lane, on PIPE_V (see the module docstring).

    Raises:
        KernelError: a call form, dtype pair, bounds, alignment or overlap rule is broken.
    """
    core = current("axpy")
    form, values = bind(core, "axpy", "dst, src, scalar", UNARY_FORMS, args, kwargs, (dst, src, scalar))
    checks.scalar_not_tensor(core, "axpy", src, scalar)
    checks.local_operands(core, "axpy", dst, src)
    checks.dtype_pair(core, SPEC, src, dst)
    value = dtypes.to_scalar(scalar, src.dtype)
    width = dst.dtype.sizeof() if dst.dtype.sizeof() >= src.dtype.sizeof() else src.dtype.sizeof()
    execute(core, SPEC, iteration(core, "axpy", form, values, width), dst, {"src": src}, scalars=(value,))
