"""Kernel scalar integers with the C types pyasc gives them, checked for wrap-around like UBSan.

pyasc traces a kernel's scalar arithmetic into typed MLIR (``arith.addi`` ... on ``i32``); the NPU's
scalar unit then computes in that width, so an offset past 2**31 - 1 silently wraps. The types
come from pyasc 1.1.1 (``python/asc``):

- a Python ``int`` kernel argument is ``int32`` (``runtime/jit.py``: ``int -> KT.int_``, and
  ``core/dtype.py``: ``int_ = int32``); a ``float`` is float32; ConstExpr parameters stay Python ints;
- ``get_block_idx()`` and ``get_block_num()`` are ``int32`` (``basic/sys_var.py``: ``KnownTypes.int_``);
- ``asc.number(v, dtype)`` is a scalar of ``dtype`` (``core/ops.py``);
- ``get_value`` returns the tensor's element type; ``LocalTensor.get_length()`` is ``uint32``
  (``core/tensor.py``);
- the loop index of ``asc.range`` is ``int32`` (``codegen/function_visitor.py`` ``visit_For``
  materialises the bounds as ``KnownTypes.int_``);
- a binary operation takes the type of its left operand if that is typed, else of its right one;
  a Python int operand becomes that type (``core/ir_value.py`` ``infer_common_type``,
  ``apply_binary_op``). ``//`` is ``DivSI`` and ``%`` is ``RemSI``: C division, truncating toward
  zero, remainder with the dividend's sign. ``>>`` on a signed type is arithmetic (``ShRSI``).

:class:`ScalarInt` is an ``int`` subclass, so ``range()``, slicing, ``GlobalAddress + offset`` and
numpy keep working; each ``+ - * // % << >> & | ^`` and unary minus computes the exact result,
and raises :class:`KernelError` (kind ``overflow``) naming the kernel's file:line when it does not
fit the type (what UBSan's signed-integer-overflow and unsigned-integer-overflow checks report),
when an operand does not fit the type it is converted to, on division by zero, and on a shift
count outside ``[0, bits)``. ``//`` and ``%`` written in a kernel truncate as C does; the same
operators inside ``fusekit.asc`` (its own ``-(-a // b)`` arithmetic) keep Python's floor. ``/``
stays Python's true division (a float): pyasc would emit integer division there, so write ``//``
in kernels. Loop indices of Python's built-in ``range`` are plain ints (only ``asc.range``'s are
typed); ``static_range`` is unrolled by pyasc, so its index is a constant.
"""

from __future__ import annotations

import builtins
import sys

import numpy as np

from . import dtypes


class ScalarInt(int):
    """An integer of a C type (``dtype``) in a kernel; arithmetic keeps the type and is range-checked."""

    __slots__ = ()
    dtype: dtypes.DataType
    lo: int
    hi: int
    bits: int
    signed: bool

    def __repr__(self) -> str:
        return f"{self.dtype.name}({int(self)})"

    __str__ = int.__repr__
    __format__ = int.__format__

    def ceildiv(self, other):
        """pyasc's ``RuntimeInt.ceildiv``: ``(self + other - 1) // other`` in this type (``asc.ceildiv``)."""
        return (self + other - 1) // other

    # -- binary operations: left operand typed (self) --
    def __add__(self, other):
        return _binary(self, other, "+", False)

    def __sub__(self, other):
        return _binary(self, other, "-", False)

    def __mul__(self, other):
        return _binary(self, other, "*", False)

    def __floordiv__(self, other):
        return _binary(self, other, "//", False)

    def __mod__(self, other):
        return _binary(self, other, "%", False)

    def __lshift__(self, other):
        return _binary(self, other, "<<", False)

    def __rshift__(self, other):
        return _binary(self, other, ">>", False)

    def __and__(self, other):
        return _binary(self, other, "&", False)

    def __or__(self, other):
        return _binary(self, other, "|", False)

    def __xor__(self, other):
        return _binary(self, other, "^", False)

    # -- reflected: the left operand is a plain int, so the result takes self's type --
    def __radd__(self, other):
        return _binary(self, other, "+", True)

    def __rsub__(self, other):
        return _binary(self, other, "-", True)

    def __rmul__(self, other):
        return _binary(self, other, "*", True)

    def __rfloordiv__(self, other):
        return _binary(self, other, "//", True)

    def __rmod__(self, other):
        return _binary(self, other, "%", True)

    def __rlshift__(self, other):
        return _binary(self, other, "<<", True)

    def __rrshift__(self, other):
        return _binary(self, other, ">>", True)

    def __rand__(self, other):
        return _binary(self, other, "&", True)

    def __ror__(self, other):
        return _binary(self, other, "|", True)

    def __rxor__(self, other):
        return _binary(self, other, "^", True)

    def __pow__(self, other, modulo=None):
        raise _error(type(self), f"** on a kernel integer ({self!r} ** {other!r}): pyasc has no power operator for "
                                 "scalar values (PlainValue.__pow__ raises NotImplementedError, "
                                 "asc/language/core/ir_value.py); write the product out, e.g. x * x", kind="api")

    def __rpow__(self, other, modulo=None):
        raise _error(type(self), f"** on a kernel integer ({other!r} ** {self!r}): pyasc has no power operator for "
                                 "scalar values (PlainValue.__rpow__ raises NotImplementedError); write the "
                                 "product out, or use a ConstExpr", kind="api")

    # -- unary --
    def __neg__(self):
        return _result(type(self), -int(self), f"-({int(self)})")

    def __pos__(self):
        return self

    def __abs__(self):
        return _result(type(self), abs(int(self)), f"abs({int(self)})")

    def __invert__(self):
        value = ~int(self) if self.signed else self.hi ^ int(self)
        return type(self)(value)


def _make(dtype: dtypes.DataType) -> type:
    bits = dtype.sizeof() * 8
    signed = np.issubdtype(dtype.np, np.signedinteger)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    name = dtype.name.capitalize() if signed else "UInt" + dtype.name[4:]
    return type(name, (ScalarInt,), {"__slots__": (), "dtype": dtype, "lo": lo, "hi": hi, "bits": bits,
                                     "signed": signed, "__module__": __name__})


_TYPES = {dt.name: _make(dt) for dt in (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
                                         dtypes.uint16, dtypes.uint32, dtypes.uint64)}
globals().update({cls.__name__: cls for cls in _TYPES.values()})  # Int8 ... UInt64, importable (pickle)
Int32 = _TYPES["int32"]


def is_integer_dtype(dtype: dtypes.DataType) -> bool:
    return dtype.name in _TYPES


def typed(value, dtype: dtypes.DataType, what: str = "value") -> ScalarInt:
    """``value`` as a scalar of integer ``dtype``.

    Raises:
        KernelError: ``value`` does not fit ``dtype`` (pyasc's materialisation would change it).
    """
    cls = _TYPES[dtype.name]
    value = _plain(value, cls, what)
    return cls(value)


def int32(value: int) -> ScalarInt:
    """A kernel ``int32`` scalar (how pyasc types Python int arguments and block indices)."""
    return Int32(value) if -(1 << 31) <= value < (1 << 31) else typed(value, dtypes.int32)


def number(value, dtype):
    """pyasc's ``asc.number(v, dtype)``: a scalar of ``dtype``.

    Integer dtypes give a :class:`ScalarInt` of that type (a value that does not fit raises
    KernelError); float dtypes a Python float rounded to the dtype.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype.name in _TYPES:
        if isinstance(value, (float, np.floating)):
            value = int(value)  # static_cast<int>: truncates toward zero
        return typed(value, dtype, f"asc.number({value}, asc.{dtype.name})")
    return dtypes.to_scalar(value, dtype).item()


def range(*args):  # noqa: A001 - pyasc's asc.range
    """pyasc's ``asc.range(stop)`` / ``(start, stop[, step])``: a runtime loop whose index is int32.

    pyasc converts the bounds to int32 (``visit_For``); a bound that does not fit raises KernelError.
    """
    bounds = [_plain(a, Int32, "asc.range bound") for a in args]
    return map(Int32, builtins.range(*bounds))


# -- checking --
_OPS = {
    "+": int.__add__, "-": int.__sub__, "*": int.__mul__, "&": int.__and__, "|": int.__or__, "^": int.__xor__,
}


def _binary(typed_operand: ScalarInt, other, op: str, reflected: bool):
    if isinstance(other, ScalarInt):
        if reflected:  # only reached when the left operand's type did not handle it; it is typed too
            return _binary(other, typed_operand, op, False)
        cls = type(typed_operand)
        b = _plain(other, cls, f"the right operand of {op}") if type(other) is not cls else int(other)
    elif isinstance(other, (int, np.integer)) and not isinstance(other, (bool, np.bool_)):
        cls = type(typed_operand)
        b = int(other)
        if not cls.lo <= b <= cls.hi:
            b = _plain(b, cls, f"the constant {b} in {op}")
    elif isinstance(other, bool):
        cls, b = type(typed_operand), int(other)
    else:
        return NotImplemented
    a = int(typed_operand)
    if reflected:
        a, b = b, a
    fast = _OPS.get(op)
    if fast is not None:
        value = fast(a, b)
        if cls.lo <= value <= cls.hi:
            return cls(value)
        return _result(cls, value, f"{a} {op} {b}")
    return _result(cls, _slow(cls, a, b, op), f"{a} {op} {b}")


def _slow(cls, a: int, b: int, op: str) -> int:
    """``//``, ``%``, ``<<``, ``>>`` with C semantics (truncating division; shifts need 0 <= b < bits)."""
    if op in ("//", "%"):
        if b == 0:
            raise _error(cls, f"{cls.dtype.name} division by zero in {a} {op} {b}: undefined on the NPU "
                              "(the scalar unit returns garbage); guard the divisor")
        if (a < 0 or b < 0) and _from_simulator():  # fusekit's own arithmetic (e.g. -(-a // b)) stays Python's
            return a // b if op == "//" else a % b
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # DivSI truncates toward zero
        return quotient if op == "//" else a - b * quotient             # RemSI: sign of the dividend
    if not 0 <= b < cls.bits:
        raise _error(cls, f"shift by {b} in {a} {op} {b}: a {cls.dtype.name} shift count must be in "
                          f"[0, {cls.bits}); larger or negative counts are undefined in C")
    if op == "<<":
        if a < 0:
            raise _error(cls, f"left shift of the negative value {a} in {a} << {b} is undefined in C; shift an "
                              "unsigned or non-negative value")
        return a << b
    return a >> b  # Python's >> on ints is arithmetic, as ShRSI; on an unsigned value it is logical


def _from_simulator() -> bool:
    """Whether the operation was written in fusekit.asc (not in a kernel): the caller of the operator."""
    from .runtime import ASC_DIR

    frame = sys._getframe(4)  # _from_simulator <- _slow <- _binary <- ScalarInt.__op__ <- the expression
    return frame.f_code.co_filename.startswith(ASC_DIR)


def _result(cls, value: int, expr: str) -> ScalarInt:
    if cls.lo <= value <= cls.hi:
        return cls(value)
    wrapped = (value - cls.lo) % (1 << cls.bits) + cls.lo
    kind = "overflows" if value > cls.hi else "underflows"
    raise _error(cls, f"{cls.dtype.name} arithmetic {kind}: {expr} = {value} is outside [{cls.lo}, {cls.hi}], so "
                      f"the NPU's scalar unit computes {wrapped}. pyasc types int kernel arguments, "
                      "get_block_idx() and get_block_num() as int32 and gives an operation the type of its left "
                      "operand: make the left operand wider, e.g. asc.number(x, asc.int64) * y, or split the work")


def _plain(value, cls, what: str) -> int:
    """``value`` as a Python int that fits ``cls`` (pyasc converts operands to the result type)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _error(cls, f"{what} must be an integer, got {value!r}")
    value = int(value)
    if not cls.lo <= value <= cls.hi:
        raise _error(cls, f"{what}: {value} does not fit {cls.dtype.name} [{cls.lo}, {cls.hi}]; pyasc converts it "
                          f"to {cls.dtype.name}, which changes its value")
    return value


def _error(cls, detail: str, kind: str = "overflow"):
    from .runtime import KernelError, running_core  # runtime converts arguments with this module

    op = f"{cls.dtype.name} arithmetic"
    core = running_core()
    if core is None:
        return KernelError(op, detail, kind=kind)
    return core.error(op, detail, kind=kind)
