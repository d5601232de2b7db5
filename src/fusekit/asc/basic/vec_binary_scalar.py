"""Vector-scalar instructions: ``op(dst, src, scalar, ...)`` (pyasc basic/vec_binary_scalar.py).

Call forms (AD-API 基础算术/Adds.md and siblings): ``op(dst, src, scalar, count, is_set_mask=True)``,
``op(dst, src, scalar, mask: int | List[int], repeat_times, repeat_params: UnaryRepeatParams, is_set_mask=True)``.
The scalar is first converted to the tensor dtype (pyasc materialises it as ``src.dtype``; the
generated C++ has ``static_cast<half>(scale)``), then each result is rounded once.
"""

from __future__ import annotations

import numpy as np

from .. import checks, dtypes
from ..runtime import current
from .execute import execute
from .iteration import BINARY_SCALAR_FORMS, MISSING, bind, iteration
from .arith import shift_left as _shl, shift_right as _shr
from .spec import ARITH, F16_F32, Spec, export, register, same_on_all

_PAGE = "AD-API Memory矢量计算/{}.md"


def _with_scalar(spec: Spec, check_scalar=None):
    def instr(dst=MISSING, src=MISSING, scalar=MISSING, *args, **kwargs) -> None:
        core = current(spec.name)
        form, values = bind(core, spec.name, "dst, src, scalar", BINARY_SCALAR_FORMS, args, kwargs, (dst, src, scalar))
        checks.scalar_not_tensor(core, spec.name, src, scalar)
        checks.local_operands(core, spec.name, dst, src)
        checks.same_dtype(core, spec.name, dst, src)
        checks.dtype_supported(core, spec, dst)
        value = dtypes.to_scalar(scalar, dst.dtype)
        if check_scalar is not None:
            check_scalar(core, spec, dst, scalar)
        execute(core, spec, iteration(core, spec.name, form, values, dst.dtype.sizeof()), dst, {"src": src},
                scalars=(value,))

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` for each active lane, the scalar converted to the dtype first ({spec.cpp}, "
                     f"{spec.source}), on PIPE_V.\n\nForms: (dst, src, scalar, count, is_set_mask=True) or (dst, src, "
                     "scalar, mask, repeat_times, repeat_params: UnaryRepeatParams, is_set_mask=True). dtypes per SoC: "
                     f"{ {a: sorted(d) for a, d in spec.dtypes.items()} }.\n\nRaises:\n    KernelError: a call form, "
                     "dtype, bounds, alignment or overlap rule is broken.")
    return export(instr)


def _spec(name: str, cpp: str, compute, dtypes_, doc: str, page: str = "", **kw) -> Spec:
    source = _PAGE.format(page or f"基础算术/{cpp}")
    return register(Spec(name, cpp, "vec_binary_scalar", dtypes_, compute, source=source, doc=doc, **kw))


adds = _with_scalar(_spec("adds", "Adds", np.add, same_on_all(ARITH), "dst = src + scalar"))
muls = _with_scalar(_spec("muls", "Muls", np.multiply, same_on_all(ARITH), "dst = src * scalar"))
maxs = _with_scalar(_spec("maxs", "Maxs", np.maximum, same_on_all(ARITH), "dst = max(src, scalar)"))
mins = _with_scalar(_spec("mins", "Mins", np.minimum, same_on_all(ARITH), "dst = min(src, scalar)"))


def _leaky_relu(x, alpha):
    return np.where(x >= 0, x, x * alpha)


def _shift_amount(core, spec, dst, scalar) -> None:
    """ShiftLeft.md / ShiftRight.md "scalarValue取值说明": [0, 16] for 16-bit types, [0, 32] for 32-bit."""
    bits = dst.dtype.sizeof() * 8
    if isinstance(scalar, bool) or not isinstance(scalar, (int, np.integer)) or not 0 <= scalar <= bits:
        raise core.error(spec.name, f"the shift amount must be an integer in [0, {bits}] for {dst.dtype.name} "
                                    f"({spec.source}, scalarValue取值说明), got {scalar!r}")


_SHIFT = {"2201": frozenset({"int16", "uint16", "int32", "uint32"})}  # not on 310P AI Core (ShiftLeft.md)

leaky_relu = _with_scalar(_spec("leaky_relu", "LeakyRelu", _leaky_relu, same_on_all(F16_F32),
                                "dst = src if src >= 0 else scalar * src"))
shift_left = _with_scalar(_spec("shift_left", "ShiftLeft", lambda x, n: _shl(x, int(n)), _SHIFT, "dst = src << scalar",
                                page="逻辑计算/ShiftLeft"), _shift_amount)
shift_right = _with_scalar(_spec("shift_right", "ShiftRight", lambda x, n: _shr(x, int(n)), _SHIFT,
                                 "dst = src >> scalar", page="逻辑计算/ShiftRight"), _shift_amount)
