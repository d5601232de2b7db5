"""Unary vector instructions: ``op(dst, src, ...)`` elementwise (pyasc basic/vec_unary.py).

Call forms (AD-API 基础算术/Exp.md and siblings): ``op(dst, src, count)`` (pyasc's count form takes
no is_set_mask), ``op(dst, src, mask: int | List[int], repeat_times, repeat_params: UnaryRepeatParams,
is_set_mask=True)``. Results are rounded once to the dtype: sqrt like + - * /; exp and ln are
the real function correctly rounded to the dtype, the same bits on every host
(:mod:`.transcendental`; Exp.md / Ln.md document no accuracy: expect about one ulp against the
device); rsqrt and reciprocal in float64, then rounded.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..runtime import current
from .execute import execute
from .iteration import MISSING, UNARY_FORMS, bind, iteration
from .spec import F16_F32, INT16, Spec, export, register, same_on_all
from .transcendental import elementwise

_PAGE = "AD-API Memory矢量计算/{}.md"


def _unary(spec: Spec):
    def instr(dst=MISSING, src=MISSING, *args, **kwargs) -> None:
        core = current(spec.name)
        form, values = bind(core, spec.name, "dst, src", UNARY_FORMS, args, kwargs, (dst, src))
        checks.local_operands(core, spec.name, dst, src)
        checks.same_dtype(core, spec.name, dst, src)
        checks.dtype_supported(core, spec, dst)
        execute(core, spec, iteration(core, spec.name, form, values, dst.dtype.sizeof()), dst, {"src": src})

    instr.__name__ = instr.__qualname__ = spec.name
    instr.__doc__ = (f"``{spec.doc}`` for each active lane ({spec.cpp}, {spec.source}), on PIPE_V.\n\nForms: (dst, "
                     "src, count) or (dst, src, mask, repeat_times, repeat_params: UnaryRepeatParams, "
                     f"is_set_mask=True). dtypes per SoC: { {a: sorted(d) for a, d in spec.dtypes.items()} }."
                     "\n\nRaises:\n    KernelError: a call form, dtype, bounds, alignment or overlap rule is broken.")
    return export(instr)


def _spec(name: str, cpp: str, compute, dtypes_, doc: str, page: str = "") -> Spec:
    return register(Spec(name, cpp, "vec_unary", dtypes_, compute, source=_PAGE.format(page or f"基础算术/{cpp}"),
                         doc=doc))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.zeros((), x.dtype))


def _in_float64(fn):
    """fn evaluated in float64; the store rounds once to the dtype."""
    return lambda x: fn(x.astype(np.float64))


exp = _unary(_spec("exp", "Exp", elementwise("exp"), same_on_all(F16_F32), "dst = exp(src)"))
ln = _unary(_spec("ln", "Ln", elementwise("log"), same_on_all(F16_F32), "dst = ln(src)"))
sqrt = _unary(_spec("sqrt", "Sqrt", np.sqrt, same_on_all(F16_F32), "dst = sqrt(src)"))
abs = _unary(_spec("abs", "Abs", np.abs, same_on_all(F16_F32), "dst = |src|"))  # noqa: A001
relu = _unary(_spec("relu", "Relu", _relu, same_on_all({"float16", "float32", "int32"}), "dst = max(src, 0)"))
rsqrt = _unary(_spec("rsqrt", "Rsqrt", _in_float64(lambda x: 1 / np.sqrt(x)), same_on_all(F16_F32),
                     "dst = 1 / sqrt(src)"))
reciprocal = _unary(_spec("reciprocal", "Reciprocal", _in_float64(lambda x: 1 / x), same_on_all(F16_F32),
                          "dst = 1 / src"))
bitwise_not = _unary(_spec("bitwise_not", "Not", np.invert, same_on_all(INT16), "dst = ~src", page="逻辑计算/Not"))
