"""The decomposition of a composite ``asc.adv`` API into the basic vector instructions its implementation runs:
one description that gives both the API's values and its Trace records.

A description is a list of :class:`Step` in the implementation's order (each API names its source). A step
names the basic instruction by its Spec (:data:`fusekit.asc.basic.spec.REGISTRY`: its Ascend C name is the Trace
record's ``cost``, its ``compute`` the numerics), the values it reads and the value it writes (names in the API's
own namespace: its operands and its temporaries, as the implementation names its buffers, so an instruction that
works in place overwrites the value it read), its scalar operands, the element count and dtype the record gives,
and the UB bytes it reads and writes.

- :func:`walk` computes the values: each step applies its Spec's ``compute`` to the values it reads, rounds the
  result once to the step's dtype and applies the launch's overflow mode, as one basic instruction does
  (:mod:`fusekit.asc.basic.execute`). A step whose instruction the Spec's ``compute`` does not describe alone --
  a reduction over rows in the implementation's order, a Cast with its round mode -- carries its own ``compute``.
  Values are numpy arrays; a per-row value (a row max, a row sum) is ``[rows, 1]``, so the instructions that
  combine it with a ``[rows, columns]`` value broadcast it as the implementation's row-wise scalars do.
- :func:`record` puts one PIPE_V record per step in the Trace (the per-instruction records of SoftMax and
  RmsNorm); an API whose Trace record is one instruction (Axpy, AscendQuant, Xor) records itself and counts the
  description's steps in its ``repeats``.

The effect that walks the description runs once, with the last record (``docs/design.md``, "Check, then record,
then effect"): the values never depend on the Trace, and an executor that holds effects back holds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import dtypes, overflow
from ..basic.rounding import RoundMode, convert
from ..basic.spec import REGISTRY, Spec
from ..trace import Access, Pipe


@dataclass(frozen=True)
class Step:
    """One basic instruction of a decomposition (module docstring).

    Attributes:
        spec: the basic instruction (``REGISTRY[name]``); ``spec.cpp`` is the record's ``cost``.
        dst: the name of the value it writes.
        srcs: the names of the values it reads, in the instruction's operand order.
        count: elements of the record (a reduction: the elements it reduces).
        dtype: the dtype its result is rounded to and the record's dtype (``"float32"``, ``"float16"``, ...).
        reads / writes: the UB bytes of the record.
        scalars: scalar operands after the values (Muls, Adds), already in the dtype the instruction takes them in.
        compute: ``compute(mode, *values, *scalars)`` where the Spec's ``compute`` alone does not give the
            instruction's result (None: the Spec's); it gets the overflow ``mode`` for the steps inside it.
        overflow: whether the launch's overflow mode is applied to the result (False: a reduction that applies it
            inside ``compute``, or a step whose API keeps the values it has always given; the API says why).
    """

    spec: Spec
    dst: str
    srcs: tuple[str, ...]
    count: int
    dtype: str
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    scalars: tuple = ()
    compute: Callable | None = None
    overflow: bool = True

    @property
    def cost(self) -> str:
        return self.spec.cpp

    def result(self, values: list, mode: str) -> np.ndarray:
        """The value this step writes, from the ``values`` it reads, under overflow ``mode``."""
        dtype = np.dtype(dtypes.as_dtype(self.dtype).np)
        if self.compute is not None:
            raw = self.compute(mode, *values, *self.scalars)
        else:
            raw = self.spec.compute(*values, *self.scalars)
        out = np.asarray(raw).astype(dtype, copy=False)  # one rounding to the destination dtype
        return overflow.apply(out, dtype, mode) if self.overflow and self.spec.arithmetic else out


def step(name: str, dst: str, srcs: tuple[str, ...], count: int, dtype: str, **fields) -> Step:
    """The :class:`Step` of basic instruction ``name`` (its pyasc name, a key of ``REGISTRY``).

    Raises:
        KeyError: no basic instruction of that name.
    """
    return Step(REGISTRY[name], dst, srcs, count, dtype, **fields)


def cast_to(dtype: str, round_mode: RoundMode) -> Callable:
    """The ``compute`` of a Cast to ``dtype`` with ``round_mode`` (the Cast Spec takes the mode as an argument,
    so its numerics are :func:`fusekit.asc.basic.rounding.convert` with that mode)."""
    target = dtypes.as_dtype(dtype)
    return lambda mode, x: convert(np.asarray(x), target, round_mode)


def walk(steps: list[Step], values: dict[str, np.ndarray], mode: str) -> dict[str, np.ndarray]:
    """Run ``steps`` on ``values`` (name -> numpy array: the API's inputs) under overflow ``mode``; returns
    ``values`` with every value the steps wrote (module docstring)."""
    with np.errstate(all="ignore"):  # the hardware does not warn about inf or NaN results
        for s in steps:
            values[s.dst] = s.result([values[name] for name in s.srcs], mode)
    return values


def record(core, op: str, steps: list[Step], work, used: int, effect) -> None:
    """Record ``steps`` on PIPE_V, one record each; the last carries ``effect`` and leaves bytes [0, used) of the
    temporary space ``work`` (:class:`fusekit.asc.adv.workspace.Work`) undefined. ``repeats`` = the 256 B
    repeats of ``count`` elements of the step's dtype. ``effect`` is the API's closure that walks the steps, not
    an :class:`fusekit.asc.effect.Effect`: the steps round in between, so no single record describes them."""
    for i, s in enumerate(steps):
        last = i == len(steps) - 1
        size = 2 if s.dtype == "float16" else 4
        core.record(op, Pipe.V, reads=tuple(a for a in s.reads if a.stop > a.start),
                    writes=tuple(a for a in s.writes if a.stop > a.start),
                    undefined=(work.access(0, used),) if last and used else (), count=s.count,
                    nbytes=s.count * size, dtype=s.dtype, effect=effect if last else None,
                    repeats=-(-s.count * size // 256), cost=s.cost)
    if not steps and effect is not None:
        effect()
