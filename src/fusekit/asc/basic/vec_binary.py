"""Binary vector instructions: ``op(dst, src0, src1, ...)`` elementwise on two tensors (pyasc basic/vec_binary.py).

Call forms (AD-API 基础算术/Add.md and siblings; :mod:`.iteration`):
``op(dst, src0, src1, count, is_set_mask=True)``,
``op(dst, src0, src1, mask: int | List[int], repeat_times, repeat_params: BinaryRepeatParams, is_set_mask=True)``.
The sources share one dtype; the destination has it too unless the spec has a pair table
(MulCast, MulAddDst). Each result is rounded once to the destination dtype (numpy's float16
arithmetic computes in float32 and rounds once, which equals the correctly rounded result for
+ - * /: float32 has >= 2p + 2 significand bits for p = 11; Figueroa, SIGNUM 1995).

Multiply-add instructions (MulAddDst, FusedMulAdd, MulAddRelu) round once: the pages give only the
formula, so fusekit assumes a fused multiply-add (an assumption, not a documented fact).
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..runtime import current
from . import deq
from .arith import fused_multiply_add, relu
from .execute import execute
from .iteration import BINARY_FORMS, MISSING, bind, iteration
from .rounding import RoundMode
from .spec import ARITH, F16_F32, INT16, NO_FIGURE, Spec, destinations, export, register, same_on_all

_PAGE = "AD-API Memory矢量计算/{}.md"


def _wider(a, b) -> int:
    """Bytes of the wider dtype of two operands (a repeat holds 256 B of it)."""
    x, y = a.dtype.sizeof(), b.dtype.sizeof()
    return x if x >= y else y


def binary(spec: Spec, operands: str = "dst, src0, src1", forms=BINARY_FORMS, prepare=None):
    """The pyasc function of a binary spec: checks, binder, then :func:`.execute.execute`.

    Specs with a pair table convert the result to the destination dtype with CAST_RINT (integer
    destinations saturate: precision_conversion.md). ``prepare(core)``, if given, returns the
    scalar operands read from a register at issue time (DEQSCALE's scale); the spec's compute then
    ends in its own conversion and the store rounds its result once.
    """
    def instr(dst=MISSING, src0=MISSING, src1=MISSING, *args, **kwargs) -> None:
        core = current(spec.name)
        form, values = bind(core, spec.name, operands, forms, args, kwargs, (dst, src0, src1))
        checks.local_operands(core, spec.name, dst, src0, src1)
        rounding, scalars = None, ()
        if spec.pairs is None:
            checks.same_dtype(core, spec.name, dst, src0, src1)
            checks.dtype_supported(core, spec, dst)
        else:
            checks.same_dtype(core, spec.name, src0, src1)
            checks.dtype_pair(core, spec, src0, dst)
            rounding = RoundMode.CAST_RINT
        if prepare is not None:  # an instruction that reads a register reads it when it issues
            rounding, scalars = None, prepare(core)
        execute(core, spec, iteration(core, spec.name, form, values, _wider(dst, src0)), dst,
                {"src0": src0, "src1": src1}, scalars=scalars, rounding=rounding)

    instr.__name__ = instr.__qualname__ = spec.name
    table = spec.pairs if spec.pairs is not None else spec.dtypes
    instr.__doc__ = (f"``{spec.doc}`` for each active lane ({spec.cpp}, {spec.source}), on PIPE_V.\n\n"
                     f"Forms: ({operands}, count, is_set_mask=True) or ({operands}, mask, repeat_times, "
                     "repeat_params: BinaryRepeatParams, is_set_mask=True). dtypes per SoC arch: "
                     f"{ {a: sorted(d) for a, d in table.items()} }.\n\nRaises:\n    KernelError: a call "
                     "form, dtype, bounds, alignment or overlap rule is broken.")
    return export(instr)


def _spec(name: str, cpp: str, page: str, compute, dtypes, doc: str, **kw) -> Spec:
    return register(Spec(name, cpp, "vec_binary", dtypes, compute, source=_PAGE.format(page), doc=doc, **kw))


def _add_relu(a, b):
    return relu(np.add(a, b))


def _sub_relu(a, b):
    return relu(np.subtract(a, b))


def _mul_add_dst(a, b, d):
    return fused_multiply_add(a, b, d)


def _fused_mul_add(a, b, d):
    return fused_multiply_add(a, d, b)


def _fused_mul_add_relu(a, b, d):
    return np.maximum(fused_multiply_add(a, d, b), 0.0)


def _deq_relu(a, b, scale):
    """AddDeqRelu.md: Relu(Cast(x * scale)), x = src0 + src1 (int32, wrapping as Add does), ``scale`` DEQSCALE's
    half scale; x * scale is exact in float64 (31 + 11 bits) and the store rounds it once to half (CAST_RINT)."""
    return np.maximum(np.add(a, b).astype(np.float64) * np.float64(scale), 0.0)


_RELU = same_on_all({"int16", "float16", "float32"})  # AddRelu.md / SubRelu.md: A2/A3 and 310P AI Core
_MUL_ADD_DST = same_on_all({("float16", "float16"), ("float32", "float32"), ("float16", "float32")})
_MUL_CAST = same_on_all({("float16", "int8"), ("float16", "uint8")})

# 通用地址重叠约束 lists Add, Sub, Mul, Max, Min, AddRelu, SubRelu as taking src1 == an earlier dst.
add = binary(_spec("add", "Add", "基础算术/Add", np.add, same_on_all(ARITH), "dst = src0 + src1", in_place_src1=True))
sub = binary(_spec("sub", "Sub", "基础算术/Sub", np.subtract, same_on_all(ARITH), "dst = src0 - src1",
                   in_place_src1=True))
mul = binary(_spec("mul", "Mul", "基础算术/Mul", np.multiply, same_on_all(ARITH), "dst = src0 * src1",
                   in_place_src1=True))
div = binary(_spec("div", "Div", "基础算术/Div", np.divide, same_on_all(F16_F32), "dst = src0 / src1"))
max = binary(_spec("max", "Max", "基础算术/Max", np.maximum, same_on_all(ARITH), "dst = max(src0, src1)",  # noqa: A001
                   in_place_src1=True))
min = binary(_spec("min", "Min", "基础算术/Min", np.minimum, same_on_all(ARITH), "dst = min(src0, src1)",  # noqa: A001
                   in_place_src1=True))
add_relu = binary(_spec("add_relu", "AddRelu", "复合计算/AddRelu", _add_relu, _RELU, "dst = max(src0 + src1, 0)",
                        in_place_src1=True))
sub_relu = binary(_spec("sub_relu", "SubRelu", "复合计算/SubRelu", _sub_relu, _RELU, "dst = max(src0 - src1, 0)",
                        in_place_src1=True))
mul_add_dst = binary(_spec("mul_add_dst", "MulAddDst", "复合计算/MulAddDst", _mul_add_dst, destinations(_MUL_ADD_DST),
                           "dst = src0 * src1 + dst", pairs=_MUL_ADD_DST, reads_dst=True))
fused_mul_add = binary(_spec("fused_mul_add", "FusedMulAdd", "复合计算/FusedMulAdd", _fused_mul_add,
                             same_on_all(F16_F32), "dst = src0 * dst + src1", reads_dst=True))
fused_mul_add_relu = binary(_spec("fused_mul_add_relu", "MulAddRelu", "复合计算/MulAddRelu", _fused_mul_add_relu,
                                  same_on_all(F16_F32), "dst = max(src0 * dst + src1, 0)", reads_dst=True))
mul_cast = binary(_spec("mul_cast", "MulCast", "复合计算/MulCast", np.multiply, destinations(_MUL_CAST),
                        "dst = cast(src0 * src1)", pairs=_MUL_CAST))
bitwise_and = binary(_spec("bitwise_and", "And", "逻辑计算/And", np.bitwise_and, same_on_all(INT16),
                           "dst = src0 & src1"))
bitwise_or = binary(_spec("bitwise_or", "Or", "逻辑计算/Or", np.bitwise_or, same_on_all(INT16), "dst = src0 | src1"))
_ADD_DEQ_RELU = _spec("add_deq_relu", "AddDeqRelu", "复合计算/AddDeqRelu", _deq_relu, same_on_all({"float16"}),
                      "dst = max(cast(DEQSCALE * (src0 + src1)), 0)", pairs=same_on_all({("int32", "float16")}),
                      cost=NO_FIGURE)
add_deq_relu = binary(_ADD_DEQ_RELU, prepare=lambda core: (deq.scale_of(core, "add_deq_relu"),))
