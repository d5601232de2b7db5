"""Lane values: a value that differs between the cores of a lockstep group, one Python value per core.

The kernel's Python runs once for all the cores of a group (``fusekit.asc.lockstep``). What can differ between them
is what derives from ``get_block_idx()`` (GM offsets, a core's share) or from a core's own UB (``get_value``). Such a
value is held as one value per core, in the group's core order:

- :class:`LaneInt`: an integer per core, of a kernel scalar type (``cls``, a ``ScalarInt`` class of
  ``fusekit.asc.scalar``) or plain (``cls`` None: the simulator's own element and byte offsets are plain Python ints,
  ``GlobalAddress``, ``GlobalTensor``). Arithmetic follows ``fusekit.asc.scalar`` lane by lane: the result takes the
  type of the left operand if that is typed, else of the right one; a plain operand must fit it; ``+ - * & | ^ << >>``
  are exact and range-checked; ``//`` and ``%`` truncate toward zero as C does when a kernel wrote them, and floor as
  Python does when ``fusekit.asc`` did (``scalar._from_simulator``).
- :class:`LaneFloat`: a Python float per core (a ``get_value`` of a float tensor). Arithmetic is Python's, lane by lane
  (so a division by zero raises ZeroDivisionError as in the reference run); numpy sees it as a ``(cores, 1)`` column,
  which broadcasts against the group's ``(cores, n)`` lanes when a vector instruction takes it as its scalar.
- :class:`LaneBool`: a comparison of lane values.

A result that is the same on every core collapses back to the plain value (a ``ScalarInt``, int, float or bool; floats
compared by their bits, so -0.0 and 0.0 or two NaN payloads stay apart), so a lane value always differs between its
cores. Where Python needs one value (``if``, ``int()``, ``range()``, slicing, ``str``) a lane value raises
:class:`~.signals.Divergence`: the group reruns as the cores that agree with its first core and the rest. Wherever a
rule of ``fusekit.asc.scalar`` would raise a KernelError for some core, :class:`~.signals.Unsupported` hands the launch
to the reference executor, which raises it for the first such core in block order with its own message.

numpy never turns a lane value into an object array (``__array_ufunc__ = None``: numpy defers to these operators, or
raises TypeError, which also hands the launch to the reference executor).
"""

from __future__ import annotations

import itertools
import operator
import os
import struct
import sys

import numpy as np

from .. import dtypes
from ..scalar import ScalarInt, is_integer_dtype, typed
from .signals import Divergence, Unsupported

_ASC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # fusekit/asc, as runtime.ASC_DIR

_EXACT = {"+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_, "|": operator.or_,
          "^": operator.xor}
_PLAIN = {**_EXACT, "//": operator.floordiv, "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift}
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}
_FLOAT = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
          "%": operator.mod, "**": operator.pow}


def _refer(what: str):
    """A kernel error on some core: the reference executor raises it, for the first such core, with its message."""
    return Unsupported(f"a kernel error ({what}): rerun on the reference executor for its message")


def _split(keys: list) -> Divergence:
    first = keys[0]
    return Divergence(tuple(k == first for k in keys))


def _from_simulator(depth: int = 2) -> bool:
    """Whether the operator was written in ``fusekit.asc`` (not in a kernel): the frame of the expression."""
    return sys._getframe(depth).f_code.co_filename.startswith(_ASC_DIR)


# -- integers ------------------------------------------------------------------------------------------------------

def _int_side(x):
    """(per-lane ints, or one int; its class or None) of an integer operand, or None when ``x`` is not one that lane
    arithmetic reproduces exactly (bools and numpy integers take other paths in Python's own dispatch: they are left
    to the reference executor)."""
    if isinstance(x, LaneInt):
        return x.v, x.cls
    if isinstance(x, ScalarInt):
        return int(x), type(x)
    if type(x) is int:
        return x, None
    return None


def _fits(side, cls):
    """``side`` (per-lane ints or one int) converted to ``cls``: each value must fit (``scalar._plain``)."""
    for v in (side if isinstance(side, tuple) else (side,)):
        if not cls.lo <= v <= cls.hi:
            raise _refer(f"{v} does not fit {cls.dtype.name}")
    return side


def _lanes(side):
    return side if isinstance(side, tuple) else itertools.repeat(side)


def _typed(cls, a: int, b: int, op: str, from_sim: bool) -> int:
    """``a op b`` in ``cls`` as ``fusekit.asc.scalar._binary`` computes it (the operands fit ``cls``)."""
    if op in _EXACT:
        value = _EXACT[op](a, b)
    elif op in ("//", "%"):
        if b == 0:
            raise _refer(f"{cls.dtype.name} division by zero")
        if (a < 0 or b < 0) and from_sim:
            value = a // b if op == "//" else a % b
        else:
            quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # DivSI truncates toward zero
            value = quotient if op == "//" else a - b * quotient
    else:
        if not 0 <= b < cls.bits or (op == "<<" and a < 0):
            raise _refer(f"{cls.dtype.name} shift {a} {op} {b}")
        value = a << b if op == "<<" else a >> b
    if not cls.lo <= value <= cls.hi:
        raise _refer(f"{cls.dtype.name} arithmetic {a} {op} {b} = {value}")
    return value


def _int_binary(x, y, op: str, from_sim: bool):
    """``x op y`` (in expression order) lane by lane with ``fusekit.asc.scalar``'s typing; with a float operand,
    Python's int-float arithmetic."""
    if isinstance(x, (float, LaneFloat)) or isinstance(y, (float, LaneFloat)):
        return _float_binary(x, y, op) if op in _FLOAT else NotImplemented
    xs, ys = _int_side(x), _int_side(y)
    if xs is None or ys is None:
        return NotImplemented
    (xv, xc), (yv, yc) = xs, ys
    if xc is not None:    # the left operand is typed: the result takes its type, the right one must fit it
        cls = xc
        if yc is not cls:
            _fits(yv, cls)
    elif yc is not None:  # a plain int on the left: ScalarInt's reflected operator gives the typed side's type
        cls = yc
        _fits(xv, cls)
    else:
        cls = None
    pairs = zip(_lanes(xv), _lanes(yv))
    if cls is not None:
        return ints([_typed(cls, a, b, op, from_sim) for a, b in pairs], cls)
    try:
        return ints([_PLAIN[op](a, b) for a, b in pairs], None)
    except (ZeroDivisionError, ValueError) as exc:  # the reference run raises it from the kernel's line
        raise _refer(f"{type(exc).__name__} in integer arithmetic") from None


def ints(values: list[int], cls=None):
    """One integer per core: the plain value (``cls(v)``, or ``v`` for a plain int) when they are all equal."""
    first = values[0]
    if all(v == first for v in values):
        return first if cls is None else cls(first)
    return LaneInt(tuple(values), cls)


class _Compared:
    """The six comparisons of a per-core value, lane by lane: Python's (an int compares with an int or a float
    exactly), giving a :class:`LaneBool`."""

    __slots__ = ()

    def _compare(self, o, op: str):
        other = _compare_side(o)
        if other is None:
            return NotImplemented
        fn = _COMPARE[op]
        return bools([fn(a, b) for a, b in zip(self.v, other)])

    def __eq__(self, o): return self._compare(o, "==")
    def __ne__(self, o): return self._compare(o, "!=")
    def __lt__(self, o): return self._compare(o, "<")
    def __le__(self, o): return self._compare(o, "<=")
    def __gt__(self, o): return self._compare(o, ">")
    def __ge__(self, o): return self._compare(o, ">=")


class LaneInt(_Compared):
    """One integer per core (module docstring). ``v``: the values in the group's core order; ``cls``: a ``ScalarInt``
    class of ``fusekit.asc.scalar``, or None for a plain Python int."""

    __slots__ = ("v", "cls", "_np")
    __array_ufunc__ = None  # numpy defers to the reflected operators below instead of building object arrays
    __hash__ = None

    def __init__(self, v: tuple[int, ...], cls=None):
        self.v, self.cls, self._np = v, cls, None

    @property
    def dtype(self):
        """The C type of the values (``ScalarInt.dtype``); AttributeError for plain Python ints, as ``int`` has none."""
        if self.cls is None:
            raise AttributeError("'int' object has no attribute 'dtype'")
        return self.cls.dtype

    @property
    def array(self) -> np.ndarray:
        """The values as int64 (cached; plain offsets and int32 scalars fit)."""
        if self._np is None:
            self._np = np.array(self.v, np.int64)
        return self._np

    def plain(self) -> "LaneInt":
        """The same values as plain Python ints (what ``int(x)`` gives each core)."""
        return self if self.cls is None else LaneInt(self.v, None)

    # arithmetic, in expression order (the frame of the expression decides // and %, module docstring)
    def __add__(self, o): return _int_binary(self, o, "+", False)
    def __radd__(self, o): return _int_binary(o, self, "+", False)
    def __sub__(self, o): return _int_binary(self, o, "-", False)
    def __rsub__(self, o): return _int_binary(o, self, "-", False)
    def __mul__(self, o): return _int_binary(self, o, "*", False)
    def __rmul__(self, o): return _int_binary(o, self, "*", False)
    def __and__(self, o): return _int_binary(self, o, "&", False)
    def __rand__(self, o): return _int_binary(o, self, "&", False)
    def __or__(self, o): return _int_binary(self, o, "|", False)
    def __ror__(self, o): return _int_binary(o, self, "|", False)
    def __xor__(self, o): return _int_binary(self, o, "^", False)
    def __rxor__(self, o): return _int_binary(o, self, "^", False)
    def __lshift__(self, o): return _int_binary(self, o, "<<", False)
    def __rlshift__(self, o): return _int_binary(o, self, "<<", False)
    def __rshift__(self, o): return _int_binary(self, o, ">>", False)
    def __rrshift__(self, o): return _int_binary(o, self, ">>", False)
    def __floordiv__(self, o): return _int_binary(self, o, "//", _from_simulator())
    def __rfloordiv__(self, o): return _int_binary(o, self, "//", _from_simulator())
    def __mod__(self, o): return _int_binary(self, o, "%", _from_simulator())
    def __rmod__(self, o): return _int_binary(o, self, "%", _from_simulator())

    def __truediv__(self, o):  # int / int is a float in Python, lane by lane
        return _float_binary(self, o, "/")

    def __rtruediv__(self, o):
        return _float_binary(o, self, "/")

    def __pos__(self):
        return self

    def __neg__(self):
        return self._unary(operator.neg)

    def __abs__(self):
        return self._unary(abs)

    def __invert__(self):
        cls = self.cls
        if cls is None or cls.signed:
            return ints([~v for v in self.v], cls)
        return ints([cls.hi ^ v for v in self.v], cls)

    def _unary(self, fn):
        values = tuple(fn(v) for v in self.v)
        if self.cls is not None:
            _fits(values, self.cls)
        return ints(list(values), self.cls)

    # where Python needs one value, the cores part ways
    def __bool__(self):
        return _one_truth([v != 0 for v in self.v])

    def _one(self, *_, **__):  # Python or numpy would make one value of it: the cores part ways instead
        raise _split(list(self.v))

    __index__ = __int__ = __float__ = __array__ = __str__ = __format__ = _one

    def __repr__(self) -> str:
        return f"LaneInt({self.cls.dtype.name if self.cls else 'int'}: {list(self.v)})"


def _compare_side(o):
    """Per-lane operands for a comparison, or None."""
    if isinstance(o, (LaneInt, LaneFloat, LaneBool)):
        return o.v
    if isinstance(o, (int, float)) and not isinstance(o, bool):
        return itertools.repeat(o)
    return None


def _one_truth(truths: list[bool]) -> bool:
    first = truths[0]
    if all(t == first for t in truths):
        return first
    raise _split(truths)


# -- booleans ------------------------------------------------------------------------------------------------------

def bools(values: list[bool]):
    """One bool per core: the plain bool when they are all equal."""
    first = values[0]
    if all(v == first for v in values):
        return bool(first)
    return LaneBool(tuple(bool(v) for v in values))


class LaneBool:
    """One bool per core: a comparison of lane values (``if`` on it makes the cores part ways)."""

    __slots__ = ("v",)
    __array_ufunc__ = None
    __hash__ = None

    def __init__(self, v: tuple[bool, ...]):
        self.v = v

    def _logic(self, o, fn):
        if isinstance(o, LaneBool):
            other = o.v
        elif isinstance(o, bool):
            other = itertools.repeat(o)
        else:
            return NotImplemented
        return bools([fn(a, b) for a, b in zip(self.v, other)])

    def __and__(self, o): return self._logic(o, operator.and_)
    __rand__ = __and__
    def __or__(self, o): return self._logic(o, operator.or_)
    __ror__ = __or__
    def __xor__(self, o): return self._logic(o, operator.xor)
    __rxor__ = __xor__

    def __eq__(self, o):
        return self._logic(o, operator.eq)

    def __ne__(self, o):
        return self._logic(o, operator.ne)

    def __bool__(self):
        return _one_truth(list(self.v))

    def _one(self, *_, **__):  # Python or numpy would make one value of it: the cores part ways instead
        raise _split(list(self.v))

    __index__ = __int__ = __float__ = __array__ = __str__ = __format__ = _one

    def __repr__(self) -> str:
        return f"LaneBool({list(self.v)})"


# -- floats --------------------------------------------------------------------------------------------------------

def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def floats(values: list[float]):
    """One Python float per core: the plain float when all have the same bits."""
    first = _bits(values[0])
    if all(_bits(v) == first for v in values):
        return values[0]
    return LaneFloat(tuple(values))


def _float_side(x):
    """Per-lane Python operands for float arithmetic, or None."""
    if isinstance(x, (LaneFloat, LaneInt)):
        return x.v
    if isinstance(x, (int, float)) and not isinstance(x, bool):  # a ScalarInt is an int: Python converts it as one
        return itertools.repeat(x)
    return None


def _float_binary(x, y, op: str):
    """``x op y`` lane by lane with Python's float semantics (its exceptions included)."""
    xs, ys = _float_side(x), _float_side(y)
    if xs is None or ys is None:
        return NotImplemented
    fn = _FLOAT[op]
    values = [fn(a, b) for a, b in zip(xs, ys)]
    if not all(isinstance(v, float) for v in values):  # a complex power or the like: not a float lane
        raise Unsupported(f"{op} of lane floats gives {type(values[0]).__name__}")
    return floats(values)


class LaneFloat(_Compared):
    """One Python float per core (module docstring): ``v`` in the group's core order."""

    __slots__ = ("v",)
    __array_ufunc__ = None
    __hash__ = None

    def __init__(self, v: tuple[float, ...]):
        self.v = v

    def __array__(self, dtype=None, copy=None):
        """A ``(cores, 1)`` float64 column: a vector instruction's scalar then broadcasts over each core's lanes."""
        column = np.array(self.v, np.float64).reshape(-1, 1)
        return column if dtype is None else column.astype(dtype)

    def __add__(self, o): return _float_binary(self, o, "+")
    def __radd__(self, o): return _float_binary(o, self, "+")
    def __sub__(self, o): return _float_binary(self, o, "-")
    def __rsub__(self, o): return _float_binary(o, self, "-")
    def __mul__(self, o): return _float_binary(self, o, "*")
    def __rmul__(self, o): return _float_binary(o, self, "*")
    def __truediv__(self, o): return _float_binary(self, o, "/")
    def __rtruediv__(self, o): return _float_binary(o, self, "/")
    def __floordiv__(self, o): return _float_binary(self, o, "//")
    def __rfloordiv__(self, o): return _float_binary(o, self, "//")
    def __mod__(self, o): return _float_binary(self, o, "%")
    def __rmod__(self, o): return _float_binary(o, self, "%")
    def __pow__(self, o): return _float_binary(self, o, "**")
    def __rpow__(self, o): return _float_binary(o, self, "**")

    def __neg__(self):
        return floats([-v for v in self.v])

    def __pos__(self):
        return self

    def __abs__(self):
        return floats([abs(v) for v in self.v])

    def __bool__(self):
        return _one_truth([v != 0.0 for v in self.v])

    def _one(self, *_):
        raise Divergence(tuple(_bits(v) == _bits(self.v[0]) for v in self.v))

    __float__ = __int__ = __index__ = __round__ = __str__ = __format__ = _one

    def __repr__(self) -> str:
        return f"LaneFloat({list(self.v)})"


LANE_TYPES = (LaneInt, LaneFloat, LaneBool)


def element_lanes(values: np.ndarray, dtype: dtypes.DataType):
    """The elements ``values`` (one per core) as a kernel sees a ``get_value`` of them: typed integers of ``dtype``
    or Python floats, one lane value (or the plain value when every core read the same)."""
    items = values.tolist()
    if is_integer_dtype(dtype):
        return ints(items, type(typed(0, dtype)))
    return floats(items)


def plain_offset(x):
    """``int(x)`` of an element count, kept per core for a :class:`LaneInt` (``GlobalAddress + offset``)."""
    return x.plain() if isinstance(x, LaneInt) else int(x)
