"""Issue one vector instruction: overlap rules, Trace record, and its effect as an :class:`~fusekit.asc.effect.Effect`.

Check, then record, then effect (``docs/design.md``): everything here that can fail runs before
``Core.record``; the effect only moves numbers. The record's Effect names the active lanes of every
operand, the spec's numpy function, the scalars, the rounding and the core's overflow mode;
``fusekit.asc.effect.apply`` gathers the source lanes, computes them in one vectorised call (one call
per repeat when a later repeat reads what an earlier one wrote), rounds once to the destination dtype,
applies the mode, and writes the active lanes of the destination only: masked lanes keep their values
(掩码.md: "mask为0时，目的操作数保持原值").

Overlap rules (AD-API 通用说明和约束.md, 通用地址重叠约束):
- count form: a source overlaps the destination completely (same start) or not at all;
- split form, within a repeat: a source's bytes equal the destination's or are disjoint;
- split form, across repeats: no repeat may read what an earlier repeat wrote, except src1 of the
  instructions the page lists (``Spec.in_place_src1``) with half/int32/float when src1's or dst's
  repeat stride is 0, and the destination of instructions that read it (``Spec.reads_dst``);
  these run repeat by repeat, in order.
"""

from __future__ import annotations

import numpy as np

from .. import overflow
from ..effect import Effect, Operand
from . import overlap
from .iteration import Iteration
from .lanes import Lanes, lanes
from .memo import Memo
from .spec import Spec

_IN_PLACE_DTYPES = frozenset({"float16", "int32", "float32"})


def execute(core, spec: Spec, it: Iteration, dst, srcs: dict, compute=None, scalars: tuple = (),
            rounding=None) -> None:
    """Check overlaps, record and apply ``spec`` on ``dst`` from ``srcs`` (role -> LocalTensor).

    ``compute(*lanes, *scalars)`` gets the source lanes in ``srcs`` order (then the destination's
    lanes when ``spec.reads_dst``), then ``scalars`` (already in the dtype the instruction takes them
    in), and returns the result lanes; default ``spec.compute``. ``rounding``: the ``RoundMode`` the
    result is converted to the destination dtype with (Cast's rounding; :class:`~fusekit.asc.effect.Effect`),
    None: the store rounds it.

    Raises:
        KernelError: an operand out of bounds or an overlap the page forbids.
    """
    op, compute = spec.name, compute or spec.compute
    if it.contiguous:
        return _execute_count(core, spec, it.count, it.repeats, dst, srcs, compute, scalars, rounding)
    d = lanes(core, op, dst, it, "dst")
    s = {role: lanes(core, op, t, it, role) for role, t in srcs.items()}
    sequential = _check_overlaps(core, spec, it, dst, d, srcs, s)
    reads = tuple(a for role, t in srcs.items() for a in s[role].accesses(t))
    if spec.reads_dst:
        reads += d.accesses(dst)
    mode = overflow.mode_of(core) if spec.arithmetic else overflow.INF_NAN
    # a later repeat reads what an earlier one wrote: the Effect runs the repeats one at a time, each its active lanes
    in_order = tuple(int(k) for k in it.active().sum(axis=1)) if sequential else ()
    effect = Effect(spec, Operand(dst, d.index), {role: Operand(t, s[role].index) for role, t in srcs.items()}, compute,
                    scalars, spec.reads_dst, in_order, rounding, mode)
    core.record(op, spec.pipe, reads=reads, writes=d.accesses(dst), count=it.elements,
                nbytes=it.elements * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect, repeats=it.repeats,
                cost=spec.cpp)


def _execute_count(core, spec: Spec, n: int, repeats: int, dst, srcs: dict, compute, scalars: tuple,
                   rounding) -> None:
    """The count form: the first ``n`` elements of every operand, one Access each (the hot path)."""
    op = spec.name
    d0, d1 = dst.span(core, op, n)
    reads = []
    for src in srcs.values():
        s0, s1 = src.span(core, op, n)
        if n:
            overlap.whole_or_none(core, op, src.name, (s0, s1), f"the destination {dst.name}", (d0, d1), dst.name)
        reads.append(src.access(s0, s1))
    write = dst.access(d0, d1)
    if spec.reads_dst:
        reads.append(write)
    mode = overflow.mode_of(core) if spec.arithmetic else overflow.INF_NAN
    effect = Effect(spec, Operand(dst, n), {role: Operand(t, n) for role, t in srcs.items()}, compute, scalars,
                    spec.reads_dst, (), rounding, mode)
    core.record(op, spec.pipe, reads=tuple(reads), writes=(write,), count=n, nbytes=d1 - d0, dtype=dst.dtype.name,
                effect=effect, repeats=repeats, cost=spec.cpp)


def _check_overlaps(core, spec: Spec, it: Iteration, dst, d: Lanes, srcs: dict, s: dict) -> bool:
    """Apply the overlap rules (:mod:`.overlap`); True when the repeats must run one after another. The verdict
    depends only on the operands' places and the Iteration, so a verdict found once is kept (a kernel's loop repeats
    its instructions); a broken rule raises and keeps nothing."""
    places = tuple((role, t.addr, t.length, t.dtype.name) for role, t in (("dst", dst), *srcs.items()))
    return _VERDICTS.get((spec.name, spec.reads_dst, spec.in_place_src1, it.key(), places),
                         lambda: _overlap_verdict(core, spec, it, dst, d, srcs, s))


_VERDICTS = Memo()


def _overlap_verdict(core, spec: Spec, it: Iteration, dst, d: Lanes, srcs: dict, s: dict) -> bool:
    """:func:`_check_overlaps`, worked out."""
    if it.elements == 0:
        return False
    active = it.active()
    d_at = overlap.lane_bytes(dst, d.grid, active)
    sequential = np.unique(d.index).size != d.index.size  # the destination rewrites itself across repeats
    if spec.reads_dst:
        sequential |= bool(overlap.late_reads(*d_at, *d_at).size)
    for role, src in srcs.items():
        if not (src.addr < d.ranges[-1][1] and d.ranges[0][0] < src.addr + src.length * src.dtype.sizeof()):
            continue  # disjoint hulls: nothing to check
        if not sequential and src.addr == dst.addr and src.dtype.sizeof() == dst.dtype.sizeof() \
                and np.array_equal(s[role].grid, d.grid):
            continue  # in place, lane for lane: each repeat's bytes are the same set, none written by an earlier one
        s_at = overlap.lane_bytes(src, s[role].grid, active)
        overlap.within_repeat(core, spec.name, dst.name, *d_at, role, src.name, *s_at, exact_ok=True)
        if overlap.late_reads(*d_at, *s_at).size:
            rep_stride_zero = it.stride(role)[1] == 0 or it.stride("dst")[1] == 0
            if not (spec.in_place_src1 and role == "src1" and rep_stride_zero and dst.dtype.name in _IN_PLACE_DTYPES):
                raise overlap.late_read_error(core, spec.name, dst.name, role, src.name)
            sequential = True
    return sequential
