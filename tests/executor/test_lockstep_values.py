"""Lane values: one kernel scalar per core of a lockstep group (``fusekit.asc.lockstep.values``).

A lane value must compute, on each core, what that core's own scalar computes on the reference executor: pyasc's
int32 typing (the result takes the left operand's type if typed, else the right one's: pyasc core/ir_value.py
``infer_common_type``), C's truncating ``//`` and ``%`` in a kernel (``DivSI`` / ``RemSI``), Python's floats; and it
must never let one value stand for cores that differ (``if``, ``int()``, ``str`` make the group split). The expected
values are worked out here in plain Python from those rules.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fusekit.asc.lockstep.signals import Divergence, Unsupported
from fusekit.asc.lockstep.values import LaneFloat, LaneInt, floats, ints
from fusekit.asc.scalar import Int16, Int32, int32


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_int32_lanes_follow_c_division_and_keep_their_type():
    a = LaneInt((-7, -1, 0, 5, 9), Int32)
    q, r = a // 2, a % -3
    assert q.v == tuple(_c_div(v, 2) for v in a.v) and q.cls is Int32
    assert r.v == tuple(v - -3 * _c_div(v, -3) for v in a.v)
    assert (a * 3 + 1).v == tuple(3 * v + 1 for v in a.v)
    assert (int32(100) - a).cls is Int32  # a typed left operand keeps its type
    assert (Int16(3) * a).cls is Int16


def test_a_uniform_result_is_the_plain_scalar():
    a = LaneInt((0, 1, 2), Int32)
    zero = a * 0
    assert type(zero) is Int32 and zero == 0
    assert (a - a) == 0 and not isinstance(a - a, LaneInt)
    assert floats([1.5, 1.5]) == 1.5 and isinstance(floats([1.5, 1.5]), float)
    assert isinstance(floats([0.0, -0.0]), LaneFloat)  # equal values, different bits: -0.0 + -0.0 stays -0.0


def test_where_one_value_is_needed_the_cores_part_ways():
    a = LaneInt((4, 5, 4, 6), Int32)
    with pytest.raises(Divergence) as split:
        bool(a == 4)
    assert split.value.keep == (True, False, True, False)
    for convert in (int, range, str, lambda v: [0, 1][v], lambda v: f"{v}"):
        with pytest.raises(Divergence):
            convert(a)
    assert bool(a > 0) is True  # the same truth on every core: no split


def test_overflow_on_any_core_goes_to_the_reference():
    a = LaneInt((1, 2**30), Int32)
    with pytest.raises(Unsupported, match="kernel error"):
        a * 4  # 2**32 does not fit int32 on the second core: the reference names its KernelError
    with pytest.raises(Unsupported):
        a // LaneInt((1, 0), Int32)


def test_floats_are_python_floats_per_core_and_a_column_for_numpy():
    f = LaneFloat((1.0, 3.0, -0.5))
    g = (f * 2 + 1) / 4
    assert g.v == tuple((v * 2 + 1) / 4 for v in f.v)
    assert np.array(f, np.float64).shape == (3, 1)
    with pytest.raises(ZeroDivisionError):
        1.0 / LaneFloat((1.0, 0.0))
    with pytest.raises(Divergence):
        math.sqrt(f)


def test_plain_offsets_are_unbounded_and_floor_divide():
    a = LaneInt((2**40, -3), None)
    assert (a + 2**40).v == (2**41, 2**40 - 3) and (a + 1).cls is None
    assert (a // 2).v == (2**39, -2)  # a plain int (a GM offset) divides as Python does
    assert ints([5, 5], None) == 5 and type(ints([5, 5], None)) is int
