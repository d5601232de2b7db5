"""Checks shared by the vector instructions. Each raises a KernelError saying what was given, the
rule (with its page), and the fix; none touches memory (``docs/developer-guide.md``, "Design rules").
"""

from __future__ import annotations

from .tensor import LocalTensor, check_ub_aligned


def local_operands(core, op: str, *tensors) -> None:
    """Every operand is a LocalTensor in UB starting on a 32 B boundary (AD-API 通用说明和约束.md,
    通用地址对齐约束: Unified Buffer 32Byte对齐)."""
    for t in tensors:
        if not isinstance(t, LocalTensor):
            raise core.error(op, f"operands must be LocalTensors in UB, got {type(t).__name__}: copy GM data into UB "
                                 "with data_copy first (and check the argument order: destination first)")
        check_ub_aligned(core, op, t)


def same_dtype(core, op: str, *tensors) -> None:
    """All operands share one dtype (the instruction's template parameter T)."""
    first = tensors[0]
    for t in tensors[1:]:
        if t.dtype is not first.dtype:
            raise core.error(op, f"dtype mismatch: {first.name} is {first.dtype.name} but {t.name} is {t.dtype.name}; "
                                 "convert with asc.cast first", tensor=t.name)


def dtype_supported(core, spec, tensor) -> None:
    """``tensor``'s dtype is in the spec's table for the core's SoC (the page's "数据类型" section)."""
    name = tensor.dtype.name
    if spec.accepts(core.soc.arch, name):
        return
    ok = ", ".join(sorted(spec.dtypes.get(core.soc.arch, ()))) or "none"
    takes_float32 = "float32" in spec.dtypes.get(core.soc.arch, ())
    hint = "; cast to float32 first" if tensor.dtype.is_float and takes_float32 else ""
    raise core.error(spec.name, f"{spec.name} does not support {name} ({tensor.name}) on {core.soc.name} (supported: "
                                f"{ok}){hint}", tensor=tensor.name, kind="unsupported")


def scalar_not_tensor(core, op: str, src, scalar) -> None:
    """A tensor passed where the scalar goes (``muls(dst, 2.0, src, n)``) gets the argument order."""
    if isinstance(scalar, LocalTensor) and not isinstance(src, LocalTensor):
        raise core.error(op, f"{op}(dst, src, scalar, ...) got a scalar as src and the tensor {scalar.name} as scalar: "
                             "the source tensor comes second, the scalar third", tensor=scalar.name)
    if isinstance(scalar, LocalTensor):
        raise core.error(op, f"{op} takes a scalar, got the tensor {scalar.name}: pass a number (or read one with "
                             "get_value)", tensor=scalar.name)


def dtype_pair(core, spec, src, dst) -> None:
    """(src dtype, dst dtype) is in the spec's pair table for the core's SoC (the page's 数据类型组合 table)."""
    pair = (src.dtype.name, dst.dtype.name)
    table = spec.pairs.get(core.soc.arch, frozenset())
    if pair in table:
        return
    ok = ", ".join(f"{s} -> {d}" for s, d in sorted(table)) or "none"
    raise core.error(spec.name, f"{spec.name} does not support {pair[0]} -> {pair[1]} ({src.name} -> {dst.name}) on "
                                f"{core.soc.name} (supported: {ok}; {spec.source})", tensor=dst.name,
                     kind="unsupported")
